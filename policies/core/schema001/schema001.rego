# METADATA
# title: Config does not match its schema
# description: Reported by the CUE schemas in schemas/, not by a Rego body.
# custom:
#   id: SCHEMA001
#   slug: schema
#   severity: error
#   levels: [error, warning, info]
#   rationale: >-
#     DeepSpeed rejects unknown keys inside its pydantic blocks, Accelerate
#     rejects unknown top-level keys and vLLM exits on unrecognized
#     arguments - all at start-up. Keys a framework silently ignores are
#     worse: the setting you wrote never takes effect. Errors are what the
#     framework rejects; warnings are what it ignores.
#   remediation: Correct the key or value as the message says; see the framework's config reference.
#   kinds: ["*"]
#   since: 0.1.0
#   fixable: false
package gpulint.rules.schema001
