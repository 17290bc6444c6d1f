package tuner

import (
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

// Config snippets in the shape Hugging Face publishes them (fields trimmed to
// what matters plus a few that must be ignored).
var hfConfigs = map[string]string{
	"llama3.1-8b": `{"_name_or_path": "meta-llama/Llama-3.1-8B-Instruct", "architectures": ["LlamaForCausalLM"],
		"attention_bias": false, "hidden_size": 4096, "intermediate_size": 14336, "max_position_embeddings": 131072,
		"model_type": "llama", "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
		"rope_scaling": {"factor": 8.0, "rope_type": "llama3"}, "tie_word_embeddings": false,
		"torch_dtype": "bfloat16", "vocab_size": 128256}`,
	"qwen2.5-0.5b": `{"hidden_size": 896, "intermediate_size": 4864, "max_position_embeddings": 32768,
		"model_type": "qwen2", "num_attention_heads": 14, "num_hidden_layers": 24, "num_key_value_heads": 2,
		"sliding_window": 32768, "use_sliding_window": false, "tie_word_embeddings": true,
		"torch_dtype": "bfloat16", "vocab_size": 151936}`,
	"mixtral": `{"hidden_size": 4096, "intermediate_size": 14336, "max_position_embeddings": 32768,
		"model_type": "mixtral", "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
		"num_local_experts": 8, "num_experts_per_tok": 2, "vocab_size": 32000, "torch_dtype": "bfloat16"}`,
	"deepseek-v3": `{"model_type": "deepseek_v3", "hidden_size": 7168, "intermediate_size": 18432,
		"moe_intermediate_size": 2048, "num_hidden_layers": 61, "num_attention_heads": 128,
		"num_key_value_heads": 128, "n_shared_experts": 1, "n_routed_experts": 256, "num_experts_per_tok": 8,
		"first_k_dense_replace": 3, "q_lora_rank": 1536, "kv_lora_rank": 512, "qk_rope_head_dim": 64,
		"qk_nope_head_dim": 128, "v_head_dim": 128, "topk_method": "noaux_tc", "vocab_size": 129280,
		"max_position_embeddings": 163840, "tie_word_embeddings": false, "torch_dtype": "bfloat16",
		"quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]}}`,
	"gemma2-9b": `{"model_type": "gemma2", "hidden_size": 3584, "intermediate_size": 14336,
		"num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 256, "num_hidden_layers": 42,
		"max_position_embeddings": 8192, "sliding_window": 4096, "vocab_size": 256000, "torch_dtype": "float32"}`,
	"gpt2": `{"model_type": "gpt2", "n_embd": 768, "n_head": 12, "n_layer": 12, "n_positions": 1024,
		"n_inner": null, "vocab_size": 50257, "resid_pdrop": 0.1, "attn_pdrop": 0.1}`,
	"bert-base": `{"model_type": "bert", "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
		"intermediate_size": 3072, "max_position_embeddings": 512, "type_vocab_size": 2, "vocab_size": 30522,
		"hidden_dropout_prob": 0.1}`,
	"roberta-base": `{"model_type": "roberta", "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
		"intermediate_size": 3072, "max_position_embeddings": 514, "type_vocab_size": 1, "vocab_size": 50265}`,
	"qwen1.5-moe": `{"model_type": "qwen2_moe", "hidden_size": 2048, "intermediate_size": 5632,
		"moe_intermediate_size": 1408, "shared_expert_intermediate_size": 5632, "num_experts": 60,
		"num_experts_per_tok": 4, "num_attention_heads": 16, "num_key_value_heads": 16, "num_hidden_layers": 24,
		"max_position_embeddings": 8192, "vocab_size": 151936, "tie_word_embeddings": false}`,
	"llava-text": `{"model_type": "llava", "_name_or_path": "llava-hf/llava-1.5-7b-hf",
		"text_config": {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 11008,
		"num_attention_heads": 32, "num_hidden_layers": 32, "max_position_embeddings": 4096, "vocab_size": 32064,
		"torch_dtype": "float16"}}`,
	// meta-llama/Llama-4-Maverick-17B-128E-Instruct: the text_config keys the
	// memory model reads (NVIDIA/TensorRT-LLM test_modeling_llama_min_latency.py
	// copies them, with 48 layers in the checkpoint).
	"llama4-maverick": `{"model_type": "llama4", "architectures": ["Llama4ForConditionalGeneration"],
		"text_config": {"model_type": "llama4_text", "hidden_size": 5120, "intermediate_size": 8192,
		"intermediate_size_mlp": 16384, "interleave_moe_layer_step": 2, "num_local_experts": 128,
		"num_experts_per_tok": 1, "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128,
		"num_hidden_layers": 48, "max_position_embeddings": 1048576, "vocab_size": 202048,
		"tie_word_embeddings": false, "use_qk_norm": false, "torch_dtype": "bfloat16"},
		"vision_config": {"model_type": "llama4_vision_model", "hidden_size": 1408}}`,
	// tiiuae/falcon-7b as Hugging Face re-sharded it
	// (huggingface.co/ybelkada/falcon-7b-sharded-bf16 @ e486a3b config.json):
	// n_head and n_layer, no max_position_embeddings or ffn_hidden_size.
	"falcon-7b": `{"_name_or_path": "tiiuae/falcon-7b", "alibi": false, "apply_residual_connection_post_layernorm": false,
		"architectures": ["FalconForCausalLM"], "bias": false, "hidden_size": 4544, "model_type": "falcon",
		"multi_query": true, "n_head": 71, "n_layer": 32, "parallel_attn": true, "torch_dtype": "bfloat16", "vocab_size": 65024}`,
	// falcon-7b-instruct's later config.json states num_kv_heads 71 beside
	// multi_query, which FalconAttention ignores (one KV head).
	"falcon-7b-instruct": `{"model_type": "falcon", "hidden_size": 4544, "num_attention_heads": 71, "num_hidden_layers": 32,
		"num_kv_heads": 71, "multi_query": true, "new_decoder_architecture": false, "parallel_attn": true, "bias": false,
		"torch_dtype": "bfloat16", "vocab_size": 65024}`,
	// A small config in Falcon-40B's layout: new_decoder_architecture with
	// 2 KV heads and two norms (ln_attn, ln_mlp) per layer.
	"falcon-new-arch": `{"model_type": "falcon", "hidden_size": 256, "num_attention_heads": 8, "num_kv_heads": 2,
		"num_hidden_layers": 2, "new_decoder_architecture": true, "parallel_attn": true, "bias": false,
		"max_position_embeddings": 512, "vocab_size": 1000}`,
	"awq": `{"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
		"num_hidden_layers": 32, "num_key_value_heads": 8, "max_position_embeddings": 8192, "vocab_size": 128256,
		"torch_dtype": "float16", "quantization_config": {"quant_method": "awq", "bits": 4, "group_size": 128}}`,
}

func TestModelFromHFConfig(t *testing.T) {
	type summary struct {
		ID                       string
		Params, Active           int64
		KVHeads, HeadDim, MaxPos int
		Tied, Encoder, Dropout   bool
		Dtype, Quant             string
		KVBytes                  int64
	}
	tests := []struct {
		name string
		want summary
	}{
		{"llama3.1-8b", summary{"meta-llama/Llama-3.1-8B-Instruct", 8_030_261_248, 8_030_261_248, 8, 128, 131072, false, false, false, "bfloat16", "", 131_072}},
		{"qwen2.5-0.5b", summary{"", 494_032_768, 494_032_768, 2, 64, 32768, true, false, false, "bfloat16", "", 12_288}},
		{"mixtral", summary{"", 46_702_792_704, 12_879_925_248, 8, 128, 32768, false, false, false, "bfloat16", "", 131_072}},
		{"deepseek-v3", summary{"", 671_026_419_200, 37_552_282_624, 128, 192, 163840, false, false, false, "bfloat16", "fp8/8", 70_272}},
		{"gemma2-9b", summary{"", 9_241_705_984, 9_241_705_984, 8, 256, 8192, true, false, false, "float32", "", 344_064}},
		{"gpt2", summary{"", 124_439_808, 124_439_808, 12, 64, 1024, true, false, true, "float32", "", 36_864}},
		{"bert-base", summary{"", 109_482_240, 109_482_240, 12, 64, 512, true, true, true, "float32", "", 0}},
		// roberta-base: 124,645,632 parameters with the pooler (published 125M).
		{"roberta-base", summary{"", 124_645_632, 124_645_632, 12, 64, 514, true, true, false, "float32", "", 0}},
		// Qwen1.5-MoE-A2.7B: 14.3B total, 2.7B active (model card).
		{"qwen1.5-moe", summary{"", 14_315_784_192, 2_689_173_504, 16, 128, 8192, false, false, false, "float32", "", 196_608}},
		{"llava-text", summary{"llava-hf/llava-1.5-7b-hf", 6_738_939_904, 6_738_939_904, 32, 128, 4096, false, false, false, "float16", "", 524_288}},
		// Llama 4 Maverick: 24 MoE layers (128 routed + 1 shared expert of
		// 8192) between 24 dense ones (16384); Meta: 400B total, 17B active.
		{"llama4-maverick", summary{"", 400_711_848_960, 17_184_691_200, 8, 128, 1048576, false, false, false, "bfloat16", "", 196_608}},
		// The catalog's falcon-7b total: one KV head, one LayerNorm per
		// parallel layer, tied head.
		{"falcon-7b", summary{"tiiuae/falcon-7b", 6_921_720_704, 6_921_720_704, 1, 64, 2048, true, false, false, "bfloat16", "", 8_192}},
		{"falcon-7b-instruct", summary{"", 6_921_720_704, 6_921_720_704, 1, 64, 2048, true, false, false, "bfloat16", "", 8_192}},
		// 2 × (q 256² + k, v 2·256·2·32 + o 256² + MLP 2·256·1024 + 2 LayerNorms 2·2·256)
		// + embedding 1000·256 (tied) + ln_f 2·256.
		{"falcon-new-arch", summary{"", 1_634_816, 1_634_816, 2, 32, 512, true, false, false, "float32", "", 512}},
		{"awq", summary{"", 8_030_261_248, 8_030_261_248, 8, 128, 8192, false, false, false, "float16", "awq/4", 131_072}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := ModelFromHFConfig([]byte(hfConfigs[tc.name]))
			if err != nil {
				t.Fatal(err)
			}
			got := summary{m.ID, m.Params(), m.ActiveParams(), m.KVHeads, m.HeadDim, m.MaxPositions,
				m.TiedEmbeddings, m.Encoder, m.Dropout, m.Dtype, "", m.KVBytesPerToken(1, 2)}
			if m.Quant != nil {
				got.Quant = m.Quant.Method + "/" + string(rune('0'+m.Quant.Bits))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestModelFromHFConfigErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"not json", `{`, "parse config.json"},
		{"unknown type", `{"model_type": "mamba", "hidden_size": 8}`, `unsupported model_type "mamba"`},
		{"missing keys", `{"model_type": "llama", "hidden_size": 4096}`, "missing num_hidden_layers"},
		{"string number", `{"model_type": "llama", "hidden_size": "4096", "num_hidden_layers": 2,
			"num_attention_heads": 32, "intermediate_size": 8, "vocab_size": 8, "max_position_embeddings": 8}`, "hidden_size is not a number"},
		{"bad heads", `{"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 2, "num_attention_heads": 32,
			"num_key_value_heads": 5, "intermediate_size": 8, "vocab_size": 8, "max_position_embeddings": 8}`, "not a multiple"},
	}
	for _, tc := range tests {
		_, err := ModelFromHFConfig([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error = %v, want %q", tc.name, err, tc.want)
		}
	}
}

// safetensorsFile builds a header-only safetensors file; the data section is
// filler the reader must never need.
func safetensorsFile(t testing.TB, tensors map[string]tensorInfo, dataBytes int) []byte {
	t.Helper()
	header := map[string]any{"__metadata__": map[string]string{"format": "pt"}}
	for k, v := range tensors {
		header[k] = v
	}
	h, err := json.Marshal(header)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]byte, 8, 8+len(h)+dataBytes)
	binary.LittleEndian.PutUint64(out, uint64(len(h)))
	out = append(out, h...)
	return append(out, make([]byte, dataBytes)...)
}

func TestModelFromDir(t *testing.T) {
	cfg := `{"model_type": "llama", "hidden_size": 64, "intermediate_size": 128, "num_attention_heads": 4,
		"num_hidden_layers": 2, "num_key_value_heads": 2, "max_position_embeddings": 256, "vocab_size": 100,
		"tie_word_embeddings": false, "torch_dtype": "float32"}`
	shard1 := safetensorsFile(t, map[string]tensorInfo{
		"model.embed_tokens.weight": {Dtype: "BF16", Shape: []int64{100, 64}, DataOffsets: []int64{0, 12800}},
		"lm_head.weight":            {Dtype: "BF16", Shape: []int64{100, 64}, DataOffsets: []int64{12800, 25600}},
	}, 16)
	shard2 := safetensorsFile(t, map[string]tensorInfo{
		"model.norm.weight": {Dtype: "F32", Shape: []int64{64}, DataOffsets: []int64{0, 256}},
	}, 16)
	index := `{"metadata": {"total_size": 25856}, "weight_map": {"model.embed_tokens.weight": "a.safetensors",
		"lm_head.weight": "a.safetensors", "model.norm.weight": "b.safetensors"}}`

	t.Run("index", func(t *testing.T) {
		fsys := fstest.MapFS{
			"config.json":                  {Data: []byte(cfg)},
			"model.safetensors.index.json": {Data: []byte(index)},
			"a.safetensors":                {Data: shard1},
			"b.safetensors":                {Data: shard2},
			"c.safetensors":                {Data: []byte("not listed in the index, never opened")},
		}
		m, err := ModelFromDir(fsys)
		if err != nil {
			t.Fatal(err)
		}
		want := &Checkpoint{Files: []string{"a.safetensors", "b.safetensors"}, Tensors: 3, Params: 12864,
			Bytes: 25856, ByDtype: map[string]int64{"BF16": 12800, "F32": 64}}
		if diff := cmp.Diff(want, m.Checkpoint); diff != "" {
			t.Errorf("checkpoint (-want +got):\n%s", diff)
		}
		if m.Params() != 12864 || m.Dtype != "bfloat16" {
			t.Errorf("Params = %d (want 12864), Dtype = %q (want bfloat16)", m.Params(), m.Dtype)
		}
	})
	t.Run("glob on disk", func(t *testing.T) {
		dir := t.TempDir()
		for name, data := range map[string][]byte{"config.json": []byte(cfg), "model.safetensors": shard1} {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		m, err := ModelFromDir(os.DirFS(dir))
		if err != nil {
			t.Fatal(err)
		}
		if m.Params() != 12800 || m.Checkpoint.DominantDtype() != "BF16" {
			t.Errorf("Params = %d, dtype %s", m.Params(), m.Checkpoint.DominantDtype())
		}
	})
	t.Run("config only", func(t *testing.T) {
		m, err := ModelFromDir(fstest.MapFS{"config.json": {Data: []byte(cfg)}})
		if err != nil || m.Checkpoint != nil || m.Params() != m.ArchParams() {
			t.Errorf("config-only dir: %v, %+v", err, m)
		}
	})
	t.Run("quantized keeps the architecture count", func(t *testing.T) {
		q := strings.Replace(cfg, `"torch_dtype"`, `"quantization_config": {"quant_method": "gptq", "bits": 4}, "torch_dtype"`, 1)
		m, err := ModelFromDir(fstest.MapFS{"config.json": {Data: []byte(q)}, "model.safetensors": {Data: shard1}})
		if err != nil || m.ExactParams != 0 || m.Checkpoint == nil || m.Checkpoint.Bytes != 25600 {
			t.Errorf("quantized dir: %v, %+v", err, m)
		}
	})

	bad := map[string][]byte{
		"short file":      {1, 2, 3},
		"huge header":     binary.LittleEndian.AppendUint64(nil, MaxSafetensorsHeader+1),
		"truncated":       append(binary.LittleEndian.AppendUint64(nil, 100), []byte("{}")...),
		"not json":        append(binary.LittleEndian.AppendUint64(nil, 3), []byte("abc")...),
		"bad offsets":     safetensorsFile(t, map[string]tensorInfo{"w": {Dtype: "F32", Shape: []int64{2}, DataOffsets: []int64{8, 0}}}, 0),
		"negative shape":  safetensorsFile(t, map[string]tensorInfo{"w": {Dtype: "F32", Shape: []int64{-2}, DataOffsets: []int64{0, 8}}}, 0),
		"zero header len": binary.LittleEndian.AppendUint64(nil, 0),
	}
	for name, data := range bad {
		t.Run(name, func(t *testing.T) {
			_, err := ModelFromDir(fstest.MapFS{"config.json": {Data: []byte(cfg)}, "model.safetensors": {Data: data}})
			if err == nil {
				t.Error("ModelFromDir accepted a broken safetensors file")
			}
		})
	}
	if _, err := ModelFromDir(fstest.MapFS{}); err == nil {
		t.Error("ModelFromDir without config.json succeeded")
	}
}
