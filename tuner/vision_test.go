package tuner

import "testing"

// Multimodal config.json files as the checkpoints publish them, trimmed to
// the architecture: google/gemma-3-4b-it (text_config gemma3_text,
// vision_config siglip_vision_model at 896 px), llava-hf/llava-1.5-7b-hf
// (CLIP ViT-L/14 at 336 px over Llama) and Qwen/Qwen2.5-VL-7B-Instruct
// (language keys at the top level).
var vlmConfigs = map[string]string{
	"gemma-3-4b-it": `{"model_type": "gemma3", "mm_tokens_per_image": 256,
		"text_config": {"model_type": "gemma3_text", "hidden_size": 2560, "intermediate_size": 10240,
			"num_hidden_layers": 34, "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256,
			"max_position_embeddings": 131072, "sliding_window": 1024, "vocab_size": 262208},
		"vision_config": {"model_type": "siglip_vision_model", "hidden_size": 1152, "intermediate_size": 4304,
			"num_hidden_layers": 27, "num_attention_heads": 16, "image_size": 896, "patch_size": 14,
			"vision_use_head": false}, "torch_dtype": "bfloat16"}`,
	"llava-1.5-7b": `{"model_type": "llava", "projector_hidden_act": "gelu", "vision_feature_layer": -2,
		"text_config": {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 11008,
			"num_hidden_layers": 32, "num_attention_heads": 32, "max_position_embeddings": 4096, "vocab_size": 32064},
		"vision_config": {"model_type": "clip_vision_model", "hidden_size": 1024, "intermediate_size": 4096,
			"num_hidden_layers": 24, "num_attention_heads": 16, "image_size": 336, "patch_size": 14}}`,
	"qwen2.5-vl-7b": `{"model_type": "qwen2_5_vl", "hidden_size": 3584, "intermediate_size": 18944,
		"num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4,
		"max_position_embeddings": 128000, "vocab_size": 152064, "tie_word_embeddings": false,
		"torch_dtype": "bfloat16",
		"vision_config": {"depth": 32, "hidden_size": 1280, "intermediate_size": 3420, "num_heads": 16,
			"in_chans": 3, "out_hidden_size": 3584, "patch_size": 14, "spatial_merge_size": 2,
			"temporal_patch_size": 2}}`,
}

// TestVisionTowerParams holds the vision tower to published counts. Gemma 3's
// SigLIP encoder is 416,866,032 parameters at 896 px (the Gemma 3 technical
// report, arXiv:2503.19786 Table 1, gives 417M for every multimodal size),
// plus the projector's norm and 1152 × 2560 projection. LLaVA-1.5's CLIP
// ViT-L/14-336 is 303,507,456 (openai/clip-vit-large-patch14-336's vision
// model) plus the two-layer projector with biases. Qwen2.5-VL-7B's
// 32-block encoder and merger are written out from the module list.
func TestVisionTowerParams(t *testing.T) {
	for _, tc := range []struct {
		name string
		want int64
	}{
		{"gemma-3-4b-it", 416_866_032 + 1152 + 1152*2560},
		{"llava-1.5-7b", 303_507_456 + 1024*4096 + 4096 + 4096*4096 + 4096},
		{"qwen2.5-vl-7b", 32*(2*1280+(3*1280*1280+3*1280)+(1280*1280+1280)+2*(1280*3420+3420)+3420*1280+1280) +
			3*2*14*14*1280 + 1280 + (5120*5120 + 5120) + (5120*3584 + 3584)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := ModelFromHFConfig([]byte(vlmConfigs[tc.name]))
			if err != nil {
				t.Fatal(err)
			}
			if m.Vision == nil {
				t.Fatal("no vision tower read")
			}
			if m.Vision.Params != tc.want {
				t.Errorf("vision params %d, want %d", m.Vision.Params, tc.want)
			}
			text := *m
			text.Vision = nil
			if got := m.Params() - text.Params(); got != tc.want {
				t.Errorf("Params counts %d for the tower, want %d", got, tc.want)
			}
		})
	}
}

// TestVisionTowerServed: vLLM loads the tower with the language model, so
// the serving weights grow by its 16-bit bytes; a vision_config of a type
// the model does not know adds nothing (Llama 4 Maverick in hfConfigs).
func TestVisionTowerServed(t *testing.T) {
	m, err := ModelFromHFConfig([]byte(vlmConfigs["gemma-3-4b-it"]))
	if err != nil {
		t.Fatal(err)
	}
	text := *m
	text.Vision = nil
	tg := Target{Name: "80 GiB", Capacity: 80 * GiB}
	w := Workload{Kind: Serve, MaxModelLen: 8192}
	with, without := estimate(t, m, tg, w), estimate(t, &text, tg, w)
	if d := with.PerGPU.Weights - without.PerGPU.Weights; d != 2*m.Vision.Params {
		t.Errorf("serving weights grew by %d bytes, want the tower's %d", d, 2*m.Vision.Params)
	}
	l4, err := ModelFromHFConfig([]byte(hfConfigs["llama4-maverick"]))
	if err != nil {
		t.Fatal(err)
	}
	if l4.Vision != nil {
		t.Errorf("llama4_vision_model sized as %+v, want it left out", l4.Vision)
	}
}
