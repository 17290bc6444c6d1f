package cmdline

// DroppedModel is a model architecture vLLM stopped serving: the
// checkpoint's model_type (config.json), its architecture class, the first
// release without it, and where that is recorded.
type DroppedModel struct {
	ModelType    string
	Architecture string
	In           Version // first release that refuses it
	Last         string  // the last release that served it, as vLLM names it
	Source       string
}

// droppedModels lists architectures vLLM removed. vLLM's registry keeps
// them in _PREVIOUSLY_SUPPORTED_MODELS with the last release that served
// them, and refuses them at start-up: _raise_for_unsupported raises
// "Model architecture ... was supported in vLLM until v0.10.2, and is not
// supported anymore" (vllm-project/vllm
// vllm/model_executor/models/registry.py @ bf8e7624,
// "MllamaForConditionalGeneration": "0.10.2"). Llama 3.2 Vision (mllama)
// went with the V0 engine's encoder-decoder runner (vllm-project/vllm#24907,
// merged 2025-09-15: "Whisper will be the only encoder-decoder model";
// #24961 recorded the removed models), so v0.11.0 is the first release
// without it.
var droppedModels = []DroppedModel{
	{ModelType: "mllama", Architecture: "MllamaForConditionalGeneration", In: Version{Minor: 11}, Last: "v0.10.2",
		Source: "vllm-project/vllm#24907; vllm/model_executor/models/registry.py _PREVIOUSLY_SUPPORTED_MODELS"},
}

// Dropped reports whether release v no longer serves a model of
// modelType: false when v is not stated or still serves it.
func Dropped(modelType string, v Version) (DroppedModel, bool) {
	if !v.Known() {
		return DroppedModel{}, false
	}
	for _, d := range droppedModels {
		if d.ModelType == modelType && !v.Less(d.In) {
			return d, true
		}
	}
	return DroppedModel{}, false
}
