# METADATA
# title: Suppression that silences nothing
# description: Reported by the suppression scanner, not by a Rego body.
# custom:
#   id: SUP002
#   slug: suppression-unused
#   severity: warning
#   rationale: >-
#     A suppression left behind after the problem was fixed (or written on
#     the wrong line) will silently hide the next real finding there.
#   remediation: Remove the suppression comment, or move it onto or above the line the finding reports.
#   kinds: ["*"]
#   since: 0.1.0
#   fixable: true
#   example: |
#     num_processes: 8  # gpulint:ignore vram-overcommit fits since the upgrade
package gpulint.rules.sup002
