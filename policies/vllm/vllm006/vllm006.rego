# METADATA
# title: The stated vLLM release no longer serves the model
# custom:
#   id: VLLM006
#   slug: model-dropped-by-release
#   levels: [error, info]
#   severity: error
#   rationale: >-
#     vLLM drops model architectures between releases and refuses them at
#     start-up with "Model architecture ... was supported in vLLM until
#     vX.Y.Z, and is not supported anymore", after the pod was scheduled,
#     the image pulled and the weights downloaded. Llama 3.2 Vision
#     (MllamaForConditionalGeneration) went with the V0 engine's
#     encoder-decoder runner (vllm-project/vllm#24907): v0.10.2 is the last
#     release that serves it (vllm/model_executor/models/registry.py
#     _PREVIOUSLY_SUPPORTED_MODELS). The release is read from the container's
#     vllm/vllm-openai image tag or a pip pin; with none stated the rule is
#     quiet.
#   remediation: >-
#     Pin the image to the last release that serves the model
#     (vllm/vllm-openai:v0.10.2 for Llama 3.2 Vision), or serve a model the
#     release supports.
#   kinds: [vllm]
#   inputs: [model, vllm_version]
#   since: 0.2.0
#   fixable: false
#   example: |
#     image: vllm/vllm-openai:v0.11.0
#     args: ["--model", "meta-llama/Llama-3.2-11B-Vision-Instruct"]
package gpulint.rules.vllm006

import data.gpulint.lib

findings contains f if {
	d := input.vllm.dropped
	f := lib.finding(lib.where("model"), sprintf(
		"vLLM %s, from %s, no longer serves %s, the %s architecture: %s was the last release to serve it, and later ones refuse it at start-up",
		[input.vllm.release, input.vllm.release_from, d.architecture, d.model_type, d.last],
	))
}
