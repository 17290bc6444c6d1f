# METADATA
# title: "File not checked: a safety limit was reached"
# description: Reported by the reader and the pipeline, not by a Rego body.
# custom:
#   id: LIMIT001
#   slug: limit-exceeded
#   severity: error
#   rationale: >-
#     gpulint reads untrusted pull-request content, so it bounds what one
#     file may cost: its size, its nesting depth, its size after YAML alias
#     expansion, the time its evaluation takes, and the time of the whole
#     run. A file past a limit is not checked (or checked only in part),
#     and that is reported rather than passed silently.
#   remediation: >-
#     Split or simplify the file; if it is legitimate, raise the limit in
#     .gpulint.yaml (limits: max-file-bytes, max-depth, max-nodes, timeout,
#     run-timeout) or with the matching flag.
#   kinds: ["*"]
#   since: 0.1.0
#   fixable: false
package gpulint.rules.limit001
