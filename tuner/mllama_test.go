package tuner

import "testing"

// smallMllama is a 4-layer text stack whose layer 3 is cross-attention.
func smallMllama() *Model {
	return &Model{Hidden: 8, Layers: 4, CrossAttentionLayers: 1, ExtraEmbedTokens: 2, Heads: 2, KVHeads: 1, HeadDim: 4,
		Intermediate: 16, Vocab: 10, MaxPositions: 16, Norm: "rmsnorm", NormsPerLayer: 2, MLP: "swiglu", Positions: "rope"}
}

func TestCrossAttentionLayers(t *testing.T) {
	m := smallMllama()
	if err := m.validate(); err != nil {
		t.Fatal(err)
	}
	// embed (10+2)×8 = 96; lm_head 10×8 = 80; 4 layers × (attention
	// 8×8 + 2×8×4 + 8×8 = 192, MLP 3×8×16 = 384, norms 16) = 2368; final
	// norm 8; the cross layer's q_norm and k_norm (2×4) and 2 gates = 10.
	if got, want := m.Params(), int64(96+80+2368+8+10); got != want {
		t.Errorf("params = %d, want %d", got, want)
	}
	// KV for the 3 self-attention layers only: 2 × 1 kv head × 4 × 2 B × 3.
	if got, want := m.KVBytesPerToken(1, 2), int64(2*1*4*2*3); got != want {
		t.Errorf("KV bytes/token = %d, want %d", got, want)
	}
	m.CrossAttentionLayers = m.Layers
	if err := m.validate(); err == nil {
		t.Error("every layer cross-attention: want a validation error")
	}
}

// Llama 3.2 Vision's text stack: 40 layers, 8 of them cross-attention.
// Hand count (11B): embed (128256+8)×4096 = 525,369,344; lm_head
// 128256×4096 = 525,336,576; 40 layers × (attention 41,943,040 + MLP
// 176,160,768 + 2 norms 8,192) = 8,724,480,000; final norm 4,096; 8 cross
// layers × (q_norm + k_norm 256 + 2 gates) = 2,064. The checkpoint's
// 10.67B adds the vision encoder and projector the catalog leaves out.
func TestMllamaCatalog(t *testing.T) {
	c := testCatalog(t)
	m, ok := c.Model("meta-llama/Llama-3.2-11B-Vision-Instruct")
	if !ok {
		t.Fatal("Llama-3.2-11B-Vision-Instruct not in the catalog")
	}
	if got, want := m.Params(), int64(9_775_192_080); got != want {
		t.Errorf("params = %d, want %d", got, want)
	}
	// KV only for the 32 self-attention layers: 2 × 8 kv heads × 128 × 2 B × 32.
	if got, want := m.KVBytesPerToken(1, 2), int64(2*8*128*2*32); got != want {
		t.Errorf("KV bytes/token = %d, want %d (self-attention layers only)", got, want)
	}
	m90, ok := c.Model("meta-llama/Llama-3.2-90B-Vision")
	if !ok {
		t.Fatal("Llama-3.2-90B-Vision not in the catalog")
	}
	// 80 self-attention layers, 8 kv heads split over tp=2.
	if got, want := m90.KVBytesPerToken(2, 2), int64(2*4*128*2*80); got != want {
		t.Errorf("90B KV bytes/token at tp=2 = %d, want %d", got, want)
	}
}

// A Llama-3.2-11B-Vision config.json gives the catalog's text stack plus
// the vision tower: 40 encoder layers × 19,672,320 + 16 gates; patch conv
// 752,640; class embedding 1,280; positions 1601×1280 + gate; tile
// positions 9×4×1601×1280 = 73,774,080; two aspect-ratio embeddings
// 9×5120 + gate each; two LayerNorms 5,120; projector 7680×4096 + 4096 =
// 895,028,755, which with the text stack's 9,775,192,080 is the
// checkpoint's 10,670,220,835 (the safetensors total on the Hub, 10.67B;
// the model card rounds it to 10.6B).
func TestMllamaFromHFConfig(t *testing.T) {
	m, err := ModelFromHFConfig([]byte(`{"model_type": "mllama", "_name_or_path": "meta-llama/Llama-3.2-11B-Vision",
		"text_config": {"model_type": "mllama_text_model", "hidden_size": 4096, "num_hidden_layers": 40,
			"cross_attention_layers": [3, 8, 13, 18, 23, 28, 33, 38], "num_attention_heads": 32,
			"num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256,
			"max_position_embeddings": 131072, "tie_word_embeddings": false, "torch_dtype": "bfloat16"},
		"vision_config": {"model_type": "mllama_vision_model", "hidden_size": 1280, "intermediate_size": 5120,
			"num_hidden_layers": 32, "num_global_layers": 8, "patch_size": 14, "image_size": 560,
			"num_channels": 3, "max_num_tiles": 4, "vision_output_dim": 7680,
			"supported_aspect_ratios": [[1, 1], [1, 2], [1, 3], [1, 4], [2, 1], [2, 2], [3, 1], [4, 1]]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if m.Vision == nil || m.Vision.Params != 895_028_755 {
		t.Errorf("vision tower = %+v, want 895,028,755 params", m.Vision)
	}
	if got, want := m.Params(), int64(10_670_220_835); got != want {
		t.Errorf("params = %d, want %d", got, want)
	}
	if got, want := m.KVBytesPerToken(1, 2), int64(2*8*128*2*32); got != want {
		t.Errorf("KV bytes/token = %d, want %d", got, want)
	}
}

// TestMllamaVLLMKVLayout: vLLM's block for Llama 3.2 Vision holds a page in
// all 40 text layers, the 8 cross-attention layers included (vllmKVLayout:
// V0's CacheEngine allocates every num_hidden_layers layer), so a served
// token costs 2 × 8 kv heads × 128 × 2 B × 40 = 163,840 B at TP 1, a
// quarter more than the 131,072 B the 32 self-attention layers fill in a
// Hugging Face generate() cache (KVBytesPerToken).
func TestMllamaVLLMKVLayout(t *testing.T) {
	c := testCatalog(t)
	m := mustModel(t, c, "meta-llama/Llama-3.2-11B-Vision-Instruct")
	if l := vllmKVLayout(m, 1, false); l.groupSize != 40 || len(l.groups) != 1 {
		t.Errorf("layout %d groups of %d layers, want 1 of 40", len(l.groups), l.groupSize)
	}
	h100 := mustGPU(t, c, "H100-80GB").Target()
	e := estimate(t, m, h100, Workload{Kind: Serve, MaxModelLen: 8192})
	if got, want := e.Serve.KVBytesPerToken, int64(2*8*128*2*40); got != want {
		t.Errorf("served KV bytes/token = %d, want %d (all 40 layers)", got, want)
	}
	// 8192 tokens are 512 blocks of 16, each 16 × 40 layers × 4,096 B.
	if got, want := e.Serve.OneRequestKVBytes, int64(512*16*40*4096); got != want {
		t.Errorf("one 8192-token request = %d B, want %d", got, want)
	}
	if got, want := m.KVBytesPerToken(1, 2), int64(2*8*128*2*32); got != want {
		t.Errorf("generate() KV bytes/token = %d, want %d (self-attention layers)", got, want)
	}
	// With TP 2 and PP 2 a stage holds 20 layers of 4 kv heads.
	e2 := estimate(t, m, h100, Workload{Kind: Serve, MaxModelLen: 8192, TensorParallel: 2, PipelineParallel: 2})
	if got, want := e2.Serve.KVBytesPerToken, int64(2*4*128*2*20); got != want {
		t.Errorf("TP 2 × PP 2 served KV bytes/token = %d, want %d", got, want)
	}
}
