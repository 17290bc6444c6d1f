# METADATA
# title: Environment value that Kubernetes passes literally
# custom:
#   id: K8S004
#   slug: env-not-expanded
#   severity: warning
#   rationale: >-
#     Kubernetes expands only $(NAME) references in a container's env
#     values, and only to variables defined earlier in the container or
#     service variables; shell syntax such as $HF_TOKEN or ${HF_TOKEN} is
#     passed through unchanged (Kubernetes API, EnvVar.value: "Variable
#     references $(VAR_NAME) are expanded ... If a variable cannot be
#     resolved, the reference in the input string will be unchanged"). A
#     token written that way reaches the server as the literal text
#     "$HF_TOKEN": the pod gets its GPUs, then the gated-model download
#     fails with 401. Only values that are nothing but such a reference are
#     reported: inside a longer value the reference may be meant for an
#     entrypoint that evals it. A manifest that is evidently a template - a
#     variable where Kubernetes needs a real value, such as a GPU quantity,
#     replicas or an image - is rendered (envsubst, sed) before it is
#     applied, which fills these values too, so the rule stays quiet there.
#   remediation: >-
#     Take secrets from a Secret (valueFrom.secretKeyRef), write references
#     to other container variables as $(NAME), or render the file (envsubst)
#     before applying it.
#   kinds: [kubernetes]
#   since: 0.1.0
#   fixable: false
#   example: |
#     env:
#       - name: HF_TOKEN
#         value: $HF_TOKEN
package gpulint.rules.k8s004

import data.gpulint.lib

# A value that is only $NAME or ${NAME}: an envsubst placeholder. A
# reference inside a longer value is left alone: an entrypoint may eval it
# (KServe's VLLM_ADDITIONAL_ARGS is spliced into a shell command line).
shell_ref := `^\s*\$(\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z_][A-Za-z0-9_]*)\s*$`

findings contains f if {
	not input.k8s.template # the renderer fills the variable before apply
	some pod in input.k8s.pods
	some c in pod.containers
	env := object.get(input.doc, array.concat(c.path, ["env"]), [])
	is_array(env)
	some i, e in env
	is_string(e.value)
	regex.match(shell_ref, e.value)
	f := lib.finding(array.concat(c.path, ["env", i, "value"]), sprintf("env %s in container %q is %s: Kubernetes expands only $(NAME) references, so the process sees that literal text, not a value from your shell", [e.name, c.name, trim_space(e.value)]))
}
