# METADATA
# title: Suppression without a reason or with an unknown rule
# description: Reported by the suppression scanner, not by a Rego body.
# custom:
#   id: SUP001
#   slug: suppression-invalid
#   severity: warning
#   rationale: >-
#     A silenced finding is a decision someone will have to revisit; without
#     a reason nobody can tell whether it still holds. A suppression naming
#     a rule that does not exist silences nothing and hides a typo.
#   remediation: >-
#     Write the reason after the rule: `# gpulint:ignore fp32-where-bf16
#     V100 cluster`, and name an existing rule id or slug (`gpulint rules`).
#   kinds: ["*"]
#   since: 0.1.0
#   fixable: false
#   example: |
#     mixed_precision: 'no'  # gpulint:ignore fp32-where-bf16
package gpulint.rules.sup001
