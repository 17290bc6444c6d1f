# METADATA
# title: File does not parse
# description: Reported by the reader, not by a Rego body.
# custom:
#   id: PARSE001
#   slug: parse-error
#   severity: error
#   rationale: >-
#     A config that does not parse fails the job at start-up, after it got
#     its GPUs. gpulint also reports files it cannot read safely here: over
#     the size limit, binary, or too deeply nested.
#   remediation: Fix the syntax at the reported line and column.
#   kinds: ["*"]
#   since: 0.1.0
#   fixable: false
package gpulint.rules.parse001
