package tuner

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func mustModel(t testing.TB, c *Catalog, id string) *Model {
	t.Helper()
	m, ok := c.Model(id)
	if !ok {
		t.Fatalf("model %s missing", id)
	}
	return m
}

func mustGPU(t testing.TB, c *Catalog, name string) *GPU {
	t.Helper()
	g, ok := c.GPU(name)
	if !ok {
		t.Fatalf("gpu %s missing", name)
	}
	return g
}

func estimate(t testing.TB, m *Model, tg Target, w Workload) Estimate {
	t.Helper()
	e, err := EstimateMemory(m, tg, w)
	if err != nil {
		t.Fatalf("EstimateMemory: %v", err)
	}
	return e
}

// Model-state bytes per parameter at ZeRO stage 0 with AdamW, one GPU.
func TestTrainingStateBytesPerParam(t *testing.T) {
	c := testCatalog(t)
	m := mustModel(t, c, "meta-llama/Llama-3.1-8B")
	big := CapacityTarget("huge", 1<<50)
	P := float64(m.Params())
	tests := []struct {
		prec      Precision
		opt       Optimizer
		w, g, o   float64
		cacheNote string
	}{
		{BF16, AdamW, 2, 2, 16, ""},   // 2 + 2 + (4 master + 4 fp32 grads + 8 Adam), DeepSpeed accounting
		{FP16, SGD, 2, 2, 12, ""},     // momentum only
		{AMP, AdamW, 4 + 2, 4, 8, ""}, // fp32 weights + 16-bit autocast cache, fp32 grads
		{FP32, AdamW, 4, 4, 8, ""},
		{FP32, Adam8bit, 4, 4, 2, ""},
		{PureBF16, AdamW, 2, 2, 4, ""}, // torchtune: bf16 states
	}
	for _, tc := range tests {
		e := estimate(t, m, big, Workload{Kind: Train, Precision: tc.prec, Optimizer: tc.opt, SeqLen: 16})
		got := []float64{float64(e.PerGPU.Weights) / P, float64(e.PerGPU.Gradients) / P, float64(e.PerGPU.OptimizerStates) / P}
		want := []float64{tc.w, tc.g, tc.o}
		if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) < 1e-6 })); diff != "" {
			t.Errorf("%s/%s bytes per param (-want +got):\n%s", tc.prec, tc.opt, diff)
		}
	}
	// Adafactor keeps factored second moments: a small fraction of a byte per parameter.
	e := estimate(t, m, big, Workload{Kind: Train, Precision: FP32, Optimizer: Adafactor, SeqLen: 16})
	if per := float64(e.PerGPU.OptimizerStates) / P; per <= 0 || per > 0.05 {
		t.Errorf("adafactor optimizer bytes per param = %.4f, want a small positive number", per)
	}
}

// Model states under ZeRO follow DeepSpeed's estimator (memory-model.md §2).
func TestZeROStagesMatchDeepSpeedEstimator(t *testing.T) {
	c := testCatalog(t)
	m := mustModel(t, c, "meta-llama/Llama-2-7b-hf")
	big := CapacityTarget("huge", 1<<50)
	P, L := m.Params(), m.LargestLayerParams()
	states := func(e Estimate) int64 { return e.PerGPU.Weights + e.PerGPU.Gradients + e.PerGPU.OptimizerStates }

	w := Workload{Kind: Train, Precision: BF16, ZeroStage: 2, DataParallel: 8, SeqLen: 16}
	gpu, _ := DeepSpeedZero2Estimate(P, 8, 1, false, 1.5)
	if got := states(estimate(t, m, big, w)); math.Abs(float64(got-gpu)) > 8 {
		t.Errorf("zero-2: %d, estimator %d", got, gpu)
	}
	w.OffloadOptimizer = CPU
	gpu, cpu := DeepSpeedZero2Estimate(P, 8, 1, true, 1.5)
	e := estimate(t, m, big, w)
	if got := states(e); got != gpu || e.Host != cpu {
		t.Errorf("zero-2 offload: gpu %d host %d, estimator %d / %d", got, e.Host, gpu, cpu)
	}
	w = Workload{Kind: Train, Precision: BF16, ZeroStage: 3, DataParallel: 8, SeqLen: 16,
		OffloadOptimizer: CPU, OffloadParam: CPU}
	gpu, cpu = DeepSpeedZero3Estimate(P, L, 8, 1, true, true, true, 1.5)
	e = estimate(t, m, big, w)
	if got := states(e); got != gpu || e.Host != cpu {
		t.Errorf("zero-3 full offload: gpu %d host %d, estimator %d / %d", got, e.Host, gpu, cpu)
	}
	// Without offload we also count the 16-bit gradient partition (2Ψ/N) that
	// the estimator leaves out: 20Ψ/N + 4L.
	w = Workload{Kind: Train, Precision: BF16, ZeroStage: 3, DataParallel: 8, SeqLen: 16}
	want := 20*P/8 + 4*L
	if got := states(estimate(t, m, big, w)); math.Abs(float64(got-want)) > 16 {
		t.Errorf("zero-3: %d, want 20Ψ/N + 4L = %d", got, want)
	}
	// ZeRO-1 keeps full 16-bit weights and gradients: 4Ψ + 16Ψ/N.
	w.ZeroStage = 1
	want = 4*P + 16*P/8
	if got := states(estimate(t, m, big, w)); math.Abs(float64(got-want)) > 16 {
		t.Errorf("zero-1: %d, want %d", got, want)
	}
}

// The activation formula reproduces Korthikanti et al. Table 2 for a
// GPT-style layer (LayerNorm, dropout, GeLU 4h MLP, materialized softmax):
// sbh(10 + 24/t) plus the s² term. Korthikanti's 5as²b assumes Megatron's
// fused 16-bit softmax (2 + 1 + 2 bytes per score); transformers and
// autocast keep the softmax in fp32, so the model stores eagerScoreBytes =
// 4 + 1 + 4 + 2 = 11 bytes per score (activation.go).
func TestActivationsMatchKorthikanti(t *testing.T) {
	m := &Model{ID: "test/gpt", Hidden: 1024, Layers: 4, Heads: 16, KVHeads: 16, HeadDim: 64,
		Intermediate: 4096, Vocab: 1000, MaxPositions: 2048, Norm: "layernorm", NormsPerLayer: 2,
		MLP: "gelu", Positions: "learned", Dropout: true, LinearBias: true, Dtype: "float16"}
	for _, tp := range []int{1, 2, 4} {
		r, err := Workload{Kind: Train, Precision: FP16, TensorParallel: tp, SeqLen: 2048, Attention: EagerAttention}.resolve(m)
		if err != nil {
			t.Fatal(err)
		}
		s, b, h, a, tf := 2048.0, 1.0, 1024.0, 16.0, float64(tp)
		want := s * b * h * (10 + 24/tf + 11*a*s/(h*tf))
		if got := trainLayerActivation(m, r, false).bytes(s*b, s); math.Abs(got-want) > 1e-6*want {
			t.Errorf("tp=%d: %.0f bytes per layer, Korthikanti %.0f", tp, got, want)
		}
	}
}

// A parallel-attention layer with one norm (Falcon-7B) saves the norm's
// output once for both projections: ab·h per token less than the same
// layer with two norms, beside the second norm's own input.
func TestActivationsParallelAttentionSharesInput(t *testing.T) {
	m := mustModel(t, testCatalog(t), "tiiuae/falcon-7b")
	r, err := Workload{Kind: Train, Precision: BF16, SeqLen: 2048}.resolve(m)
	if err != nil {
		t.Fatal(err)
	}
	two := *m
	two.NormsPerLayer = 2
	h := float64(m.Hidden)
	got := trainLayerActivation(&two, r, false).perToken - trainLayerActivation(m, r, false).perToken
	if want := 2*h + 2*h; got != want { // the second LayerNorm's input (bf16) and the second projection input
		t.Errorf("two norms save %.0f bytes per token more than one, want %.0f", got, want)
	}
}

func TestActivationsScale(t *testing.T) {
	c := testCatalog(t)
	m := mustModel(t, c, "meta-llama/Llama-3.1-8B")
	big := CapacityTarget("huge", 1<<50)
	act := func(w Workload) int64 { return estimate(t, m, big, w).PerGPU.Activations }
	base := Workload{Kind: Train, SeqLen: 2048, Loss: ChunkedLoss}
	a1 := act(base)
	base.MicroBatch = 2
	if a2 := act(base); a2 != 2*a1 {
		t.Errorf("doubling the micro-batch: %d → %d, want exactly twice", a1, a2)
	}
	base.MicroBatch, base.Checkpointing = 1, true
	if ac := act(base); ac >= a1/4 {
		t.Errorf("checkpointing keeps %d of %d bytes, want far less", ac, a1)
	}
	// The loss term (2·s·b·v for a chunked loss, 12·s·b·v for transformers'
	// default) is part of every non-checkpointed and checkpointed estimate.
	if logits := int64(2 * 2048 * m.Vocab); act(base) < logits {
		t.Errorf("checkpointed activations %d are below the logits term %d", act(base), logits)
	}
	base.Loss = HFDefaultLoss
	if logits := int64(12 * 2048 * m.Vocab); act(base) < logits {
		t.Errorf("checkpointed activations %d are below the logits term %d", act(base), logits)
	}
	base.Checkpointing, base.Attention = false, EagerAttention
	if ae := act(base); ae <= a1 {
		t.Errorf("eager attention %d is not above flash %d", ae, a1)
	}
}

func TestLoRAParams(t *testing.T) {
	c := testCatalog(t)
	tests := []struct {
		model   string
		rank    int
		targets []string
		want    int64
	}{
		// Trainable parameter counts printed in LitGPT's resource tables (r=8, q and v).
		{"meta-llama/Llama-2-7b-hf", 8, []string{"q", "v"}, 4_194_304},
		{"meta-llama/Llama-2-13b-hf", 8, []string{"query", "value"}, 6_553_600},
		// PEFT's "trainable params: 41,943,040" for Llama-3-8B, r=16, all linear layers.
		{"meta-llama/Llama-3.1-8B", 16, nil, 41_943_040},
		{"meta-llama/Llama-3.1-8B", 16, []string{"all-linear"}, 41_943_040},
		{"meta-llama/Llama-3.1-8B", 16, []string{"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"}, 41_943_040},
		// Path-qualified names as PEFT matches them (a suffix after "."):
		// self_attn.q_proj is every layer's q, the same count as q_proj.
		{"meta-llama/Llama-3.1-8B", 8, []string{"self_attn.q_proj", "self_attn.v_proj"}, 3_407_872},
		// axolotl's Llama 4 Scout QLoRA targets: attention and the shared
		// expert only, not the 16 routed experts. Per layer, r=32:
		// q 32·(5120+5120) + k, v 32·(5120+1024) + o 32·(5120+5120)
		// + 3 × 32·(5120+8192) = 2,326,528; × 48 layers.
		{"meta-llama/Llama-4-Scout-17B-16E", 32, []string{"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
			"shared_expert.gate_proj", "shared_expert.up_proj", "shared_expert.down_proj"}, 111_673_344},
	}
	for _, tc := range tests {
		m := mustModel(t, c, tc.model)
		targets, err := canonicalTargets(tc.targets)
		if err != nil {
			t.Fatal(err)
		}
		if got := loraParams(m, tc.rank, targets); got != tc.want {
			t.Errorf("%s r=%d %v: %d adapter params, want %d", tc.model, tc.rank, tc.targets, got, tc.want)
		}
	}
}

// TestLoRAPathTargets: which path-qualified target names are read, and
// as what; a layer index, a regular expression or an unknown scope is not.
func TestLoRAPathTargets(t *testing.T) {
	tests := []struct {
		in   string
		want []string // nil: unknown
	}{
		{"self_attn.q_proj", []string{"q"}},
		{"self_attention.dense", []string{"o"}},
		{"feed_forward.shared_expert.down_proj", []string{"shared_down"}},
		{"mlp.shared_experts.gate_proj", []string{"shared_gate"}},
		{"shared_expert.q_proj", nil},
		{"self_attn.gate_proj", nil},
		{"layers.0.self_attn.q_proj", nil},
		{"experts.gate_projs.[0-9]+$", nil},
		{"mlp.gate_proj", nil},
		{"block_sparse_moe.experts.w1", nil},
	}
	for _, tc := range tests {
		got, err := canonicalTargets([]string{tc.in})
		if (err != nil) != (tc.want == nil) || err == nil && !slices.Equal(got, tc.want) {
			t.Errorf("canonicalTargets(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
		if KnownLoRATarget(tc.in) != (tc.want != nil) {
			t.Errorf("KnownLoRATarget(%q) = %v", tc.in, !(tc.want != nil))
		}
	}
}

func TestQLoRAWeights(t *testing.T) {
	c := testCatalog(t)
	m := mustModel(t, c, "meta-llama/Llama-2-7b-hf")
	big := CapacityTarget("huge", 1<<50)
	e := estimate(t, m, big, Workload{Kind: QLoRA, SeqLen: 16, LoRARank: 8, LoRATargets: []string{"q", "v"}})
	// Layer weights at 0.516 B (NF4 + double quant), embeddings, lm_head and
	// norms in bf16, plus the fp32 adapters (4 B each).
	q := m.quantizableParams()
	want := float64(q)*4.127/8 + float64(m.Params()-q)*2 + 4_194_304*4
	if got := float64(e.PerGPU.Weights); math.Abs(got-want) > 2 {
		t.Errorf("QLoRA weights %.0f, want %.0f", got, want)
	}
	if q != 6_476_005_376 {
		t.Errorf("Llama-2-7B quantizable params = %d, want 6476005376 (32 layers × (4·4096² + 3·4096·11008))", q)
	}
}

// TestLoRAOnBitsandbytesCheckpoint: LoRA (no 4-bit load asked) on a
// checkpoint stored in bitsandbytes 4-bit holds the base in that format,
// not in bf16: transformers loads a pre-quantized checkpoint quantized.
func TestLoRAOnBitsandbytesCheckpoint(t *testing.T) {
	c := testCatalog(t)
	big := CapacityTarget("huge", 1<<50)
	w := Workload{Kind: LoRA, SeqLen: 16, LoRARank: 8, LoRATargets: []string{"q", "v"}}
	plain := mustModel(t, c, "meta-llama/Llama-3.1-8B")
	bnb, _, ok := c.ModelByName("unsloth/llama-3.1-8b-bnb-4bit")
	if !ok {
		t.Fatal("unsloth/llama-3.1-8b-bnb-4bit maps to no catalog model")
	}
	q := plain.quantizableParams()
	adapters := float64(loraParams(plain, 8, []string{"q", "v"})) * 4
	for _, tc := range []struct {
		m    *Model
		want float64
	}{
		{plain, float64(plain.Params())*2 + adapters},
		{bnb, float64(q)*0.5625 + float64(plain.Params()-q)*2 + adapters},
	} {
		if got := float64(estimate(t, tc.m, big, w).PerGPU.Weights); math.Abs(got-tc.want) > 2 {
			t.Errorf("LoRA weights on %s (quant %+v) = %.0f, want %.0f", tc.m.ID, tc.m.Quant, got, tc.want)
		}
	}
}

// A full fine-tune of a checkpoint stored in bitsandbytes is no workload
// the memory model sizes: transformers' Trainer refuses it.
func TestFullFineTuneOfBitsandbytesCheckpointRefused(t *testing.T) {
	c := testCatalog(t)
	bnb, _, ok := c.ModelByName("unsloth/llama-3.1-8b-bnb-4bit")
	if !ok {
		t.Fatal("unsloth/llama-3.1-8b-bnb-4bit maps to no catalog model")
	}
	big := CapacityTarget("huge", 1<<50)
	if _, err := EstimateMemory(bnb, big, Workload{Kind: Train, SeqLen: 16}); err == nil || !strings.Contains(err.Error(), "cannot be fully fine-tuned") {
		t.Errorf("full fine-tune of a bnb-4bit checkpoint: error %v, want a refusal", err)
	}
	if _, err := EstimateMemory(mustModel(t, c, "meta-llama/Llama-3.1-8B"), big, Workload{Kind: Train, SeqLen: 16}); err != nil {
		t.Errorf("full fine-tune of the 16-bit checkpoint: %v", err)
	}
}

func TestServeDefaults(t *testing.T) {
	c := testCatalog(t)
	m := mustModel(t, c, "meta-llama/Llama-3.1-8B-Instruct")
	tests := []struct {
		gpu, mig     string
		mnbt, mns    int
		util         float64
		maxModelLen  int
		wantFits     bool
		wantNoteFrag string
	}{
		{"H100-80GB", "", 8192, 1024, 0.9, 131072, true, ""},
		{"H200", "", 8192, 1024, 0.9, 131072, true, ""},
		{"A100-80GB", "", 2048, 256, 0.9, 131072, true, ""},        // A100s keep the small defaults
		{"L40S", "", 2048, 256, 0.9, 131072, true, ""},             // < 70 GiB: small defaults
		{"H100-80GB", "3g.40gb", 2048, 256, 0.9, 131072, true, ""}, // a MIG slice is < 70 GiB too
		{"RTX-4090", "", 2048, 256, 0.9, 131072, false, "vLLM refuses to start"},
	}
	for _, tc := range tests {
		g := mustGPU(t, c, tc.gpu)
		tg := g.Target()
		if tc.mig != "" {
			p, ok := g.MIGProfile(tc.mig)
			if !ok {
				t.Fatalf("no %s", tc.mig)
			}
			tg = g.MIGTarget(p)
		}
		e := estimate(t, m, tg, Workload{Kind: Serve})
		s := e.Serve
		got := []any{s.MaxNumBatchedTokens, s.MaxNumSeqs, s.GPUMemoryUtilization, s.MaxModelLen, s.BlockSize, e.Fits}
		want := []any{tc.mnbt, tc.mns, tc.util, tc.maxModelLen, 16, tc.wantFits}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s %s (-want +got):\n%s", tc.gpu, tc.mig, diff)
		}
		if tc.wantNoteFrag != "" && !strings.Contains(strings.Join(e.Notes, "\n"), tc.wantNoteFrag) {
			t.Errorf("%s %s notes %q lack %q", tc.gpu, tc.mig, e.Notes, tc.wantNoteFrag)
		}
		if s.Budget != int64(0.9*float64(tg.Capacity)) {
			t.Errorf("%s budget %d, want 0.9 × %d", tc.gpu, s.Budget, tg.Capacity)
		}
	}
}

func TestServeKVCache(t *testing.T) {
	c := testCatalog(t)
	m := mustModel(t, c, "meta-llama/Llama-3.1-8B-Instruct")
	h100 := mustGPU(t, c, "H100-80GB").Target()
	e := estimate(t, m, h100, Workload{Kind: Serve, MaxModelLen: 8192})
	s := e.Serve
	if s.KVCacheTokens%16 != 0 || s.KVCacheTokens != s.NumBlocks*16 {
		t.Errorf("tokens %d are not whole 16-token blocks (%d blocks)", s.KVCacheTokens, s.NumBlocks)
	}
	if got := float64(s.NumBlocks) / 512; math.Abs(s.MaxConcurrency-got) > 1e-9 {
		t.Errorf("max concurrency %.3f, want blocks/512 = %.3f", s.MaxConcurrency, got)
	}
	if e.PerGPU.KVCache != s.NumBlocks*16*131072 || e.PerGPU.KVCache > s.KVCacheBytes {
		t.Errorf("allocated KV %d vs blocks %d, available %d", e.PerGPU.KVCache, s.NumBlocks, s.KVCacheBytes)
	}
	// TP 2 halves weights and KV heads per GPU and adds communication
	// buffers; every rank keeps the whole rotary cos/sin table.
	e2 := estimate(t, m, h100, Workload{Kind: Serve, MaxModelLen: 8192, TensorParallel: 2})
	rope := int64(131072 * 128 * 2)
	if e2.Serve.KVBytesPerToken != 65536 || e2.PerGPU.Weights != (e.PerGPU.Weights-rope)/2+rope {
		t.Errorf("tp=2: %d B/token, weights %d (tp=1 %d)", e2.Serve.KVBytesPerToken, e2.PerGPU.Weights, e.PerGPU.Weights)
	}
	// fp8 KV doubles the tokens.
	e8 := estimate(t, m, h100, Workload{Kind: Serve, MaxModelLen: 8192, KVCacheDtype: "fp8"})
	if e8.Serve.KVCacheTokens < 2*s.KVCacheTokens-16 || e8.Serve.KVCacheTokens > 2*s.KVCacheTokens+16 {
		t.Errorf("fp8 KV tokens %d, want about 2 × %d", e8.Serve.KVCacheTokens, s.KVCacheTokens)
	}
	// DeepSeek-V3 in fp8 on 8 × H200: MLA latent, the same bytes per token on every rank.
	ds := mustModel(t, c, "deepseek-ai/DeepSeek-V3")
	ed := estimate(t, ds, mustGPU(t, c, "H200").Target(), Workload{Kind: Serve, TensorParallel: 8, WeightQuant: "fp8", MaxModelLen: 32768})
	if ed.Serve.KVBytesPerToken != 70272 || !ed.Fits {
		t.Errorf("DeepSeek-V3 fp8 TP8 on H200: %d B/token, fits=%v, notes %v", ed.Serve.KVBytesPerToken, ed.Fits, ed.Notes)
	}
	// Not even the weights fit: no blocks.
	e70 := estimate(t, mustModel(t, c, "meta-llama/Llama-3.1-70B"), h100, Workload{Kind: Serve})
	if e70.Fits || e70.Serve.KVCacheTokens != 0 || !strings.Contains(strings.Join(e70.Notes, " "), "No available memory") {
		t.Errorf("70B bf16 on one H100: fits=%v tokens=%d notes=%v", e70.Fits, e70.Serve.KVCacheTokens, e70.Notes)
	}
}

func TestServeGraphHeadroom(t *testing.T) {
	c := testCatalog(t)
	m := mustModel(t, c, "Qwen/Qwen2.5-0.5B-Instruct")
	l4 := mustGPU(t, c, "L4").Target()
	ok := estimate(t, m, l4, Workload{Kind: Serve})
	tight := estimate(t, m, l4, Workload{Kind: Serve, GPUMemoryUtilization: 0.96})
	eager := estimate(t, m, l4, Workload{Kind: Serve, GPUMemoryUtilization: 0.96, EnforceEager: true})
	if ok.Serve.GraphHeadroom <= 0 || !ok.Fits {
		t.Errorf("util 0.9: graph headroom %d, fits %v", ok.Serve.GraphHeadroom, ok.Fits)
	}
	if tight.Serve.GraphHeadroom >= 0 || tight.Fits || !strings.Contains(strings.Join(tight.Notes, " "), "CUDA graphs") {
		t.Errorf("util 0.96: graph headroom %d, fits %v, notes %v", tight.Serve.GraphHeadroom, tight.Fits, tight.Notes)
	}
	if !eager.Fits {
		t.Errorf("util 0.96 with enforce_eager should fit: headroom %d", eager.Headroom)
	}
}

func TestMIGTarget(t *testing.T) {
	c := testCatalog(t)
	g := mustGPU(t, c, "A100-80GB")
	p, _ := g.MIGProfile("1g.10gb")
	m := mustModel(t, c, "Qwen/Qwen2.5-1.5B-Instruct")
	// 10 % of a 9.5 GiB slice is too little for the CUDA context and graphs ...
	e := estimate(t, m, g.MIGTarget(p), Workload{Kind: Serve, MaxModelLen: 4096})
	if e.Fits || e.Serve.GraphHeadroom >= 0 {
		t.Errorf("default utilization on 1g.10gb: fits %v, graph headroom %d", e.Fits, e.Serve.GraphHeadroom)
	}
	// ... so leave vLLM 80 %.
	e = estimate(t, m, g.MIGTarget(p), Workload{Kind: Serve, MaxModelLen: 4096, GPUMemoryUtilization: 0.8})
	if e.Capacity != p.MemoryBytes || e.Target != "A100-80GB MIG 1g.10gb" || !e.Fits {
		t.Errorf("MIG estimate: capacity %d (want %d), target %q, fits %v", e.Capacity, p.MemoryBytes, e.Target, e.Fits)
	}
	e = estimate(t, m, g.MIGTarget(p), Workload{Kind: Inference, TensorParallel: 2, SeqLen: 512})
	if !strings.Contains(strings.Join(e.Notes, " "), "no NVLink") {
		t.Errorf("multi-GPU job on MIG slices lacks the interconnect note: %v", e.Notes)
	}
}

func TestEstimateJSONContract(t *testing.T) {
	c := testCatalog(t)
	m := mustModel(t, c, "meta-llama/Llama-3.1-8B-Instruct")
	h100 := mustGPU(t, c, "H100-80GB").Target()
	keys := func(data []byte) []string {
		var v map[string]json.RawMessage
		if err := json.Unmarshal(data, &v); err != nil {
			t.Fatal(err)
		}
		return sortedKeys(v)
	}
	serve, err := json.Marshal(estimate(t, m, h100, Workload{Kind: Serve, MaxModelLen: 8192}))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"allocated", "capacity", "fits", "headroom", "overheads", "per_gpu", "reserved", "serve"}, keys(serve)); diff != "" {
		t.Errorf("serve JSON keys (-want +got):\n%s", diff)
	}
	var doc struct {
		PerGPU map[string]json.Number `json:"per_gpu"`
		Serve  map[string]json.Number `json:"serve"`
	}
	if err := json.Unmarshal(serve, &doc); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"activations", "gradients", "kv_cache", "optimizer_states", "overhead", "total", "weights"},
		sortedKeys(doc.PerGPU)); diff != "" {
		t.Errorf("per_gpu keys (-want +got):\n%s", diff)
	}
	for k, v := range doc.PerGPU {
		if _, err := v.Int64(); err != nil {
			t.Errorf("per_gpu.%s = %s is not an integer", k, v)
		}
	}
	if diff := cmp.Diff([]string{"kv_bytes_per_token", "kv_cache_tokens", "max_concurrency"}, sortedKeys(doc.Serve)); diff != "" {
		t.Errorf("serve keys (-want +got):\n%s", diff)
	}
	train, err := json.Marshal(estimate(t, m, h100, Workload{Kind: Train, SeqLen: 1024}))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"allocated", "capacity", "fits", "headroom", "overheads", "per_gpu", "reserved"}, keys(train)); diff != "" {
		t.Errorf("train JSON keys (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(string(train), `{"per_gpu":{"weights":`) {
		t.Errorf("JSON does not start with per_gpu.weights: %s", train)
	}
}

func TestEstimateIsDeterministic(t *testing.T) {
	c := testCatalog(t)
	m := mustModel(t, c, "mistralai/Mixtral-8x7B-Instruct-v0.1")
	g := mustGPU(t, c, "H100-80GB").Target()
	w := Workload{Kind: Train, ZeroStage: 3, DataParallel: 16, GPUsPerNode: 8, SeqLen: 4096, Checkpointing: true}
	first := estimate(t, m, g, w)
	for i := 0; i < 5; i++ {
		if diff := cmp.Diff(first, estimate(t, m, g, w)); diff != "" {
			t.Fatalf("estimate changed between runs (-first +now):\n%s", diff)
		}
	}
	var total int64
	for _, o := range first.Overheads {
		total += o.Bytes
	}
	b := first.PerGPU
	if total != b.Overhead || b.Total != b.Weights+b.Gradients+b.OptimizerStates+b.Activations+b.KVCache+b.Overhead ||
		first.Headroom != first.Capacity-b.Total {
		t.Errorf("breakdown does not add up: %+v, overheads %+v", b, first.Overheads)
	}
}

func TestEstimateErrors(t *testing.T) {
	c := testCatalog(t)
	llama := mustModel(t, c, "meta-llama/Llama-3.1-8B")
	bert := mustModel(t, c, "bert-base-uncased")
	h100 := mustGPU(t, c, "H100-80GB").Target()
	tests := []struct {
		name string
		m    *Model
		tg   Target
		w    Workload
		want string
	}{
		{"nil model", nil, h100, Workload{Kind: Train}, "no model"},
		{"no capacity", llama, CapacityTarget("x", 0), Workload{Kind: Train}, "no capacity"},
		{"unknown kind", llama, h100, Workload{Kind: "pretrain"}, "unknown workload kind"},
		{"tp divides heads", llama, h100, Workload{Kind: Serve, TensorParallel: 3}, "does not divide 32 attention heads"},
		{"bad lora target", llama, h100, Workload{Kind: LoRA, LoRATargets: []string{"lm_head"}}, "unknown lora target"},
		{"encoder serve", bert, h100, Workload{Kind: Serve}, "encoder-only"},
		{"util", llama, h100, Workload{Kind: Serve, GPUMemoryUtilization: 1.5}, "outside (0, 1]"},
		{"zero stage", llama, h100, Workload{Kind: Train, ZeroStage: 4}, "zero stage 4"},
		{"weight format", llama, h100, Workload{Kind: Serve, WeightQuant: "int3"}, "unknown weight format"},
		{"kv dtype", llama, h100, Workload{Kind: Serve, KVCacheDtype: "int2"}, "unknown kv cache dtype"},
		{"batch limits", llama, h100, Workload{Kind: Serve, MaxNumBatchedTokens: 128, MaxNumSeqs: 256}, "must be greater than or equal to max_num_seqs"},
		{"precision", llama, h100, Workload{Kind: Train, Precision: "fp12"}, "unknown precision"},
		{"offload device", llama, h100, Workload{Kind: Train, OffloadOptimizer: "tape"}, "unknown offload device"},
	}
	for _, tc := range tests {
		_, err := EstimateMemory(tc.m, tc.tg, tc.w)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error = %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestEstimateNotes(t *testing.T) {
	c := testCatalog(t)
	m := mustModel(t, c, "meta-llama/Llama-3.1-8B")
	t4 := mustGPU(t, c, "T4").Target()
	e := estimate(t, m, t4, Workload{Kind: QLoRA, SeqLen: 512, Checkpointing: true})
	joined := strings.Join(e.Notes, "\n")
	for _, frag := range []string{"no BF16 tensor cores", "trainable adapter parameters"} {
		if !strings.Contains(joined, frag) {
			t.Errorf("notes lack %q: %v", frag, e.Notes)
		}
	}
	e = estimate(t, m, mustGPU(t, c, "H100-80GB").Target(), Workload{Kind: Train, OffloadParam: CPU, ZeroStage: 2, DataParallel: 8})
	if !strings.Contains(strings.Join(e.Notes, " "), "offload_param needs ZeRO-3") {
		t.Errorf("missing offload_param note: %v", e.Notes)
	}
}

// Every catalog model gets a sane estimate for every workload kind.
func TestEstimateEveryCatalogModel(t *testing.T) {
	c := testCatalog(t)
	h200 := mustGPU(t, c, "H200").Target()
	kinds := []Workload{
		{Kind: Train, ZeroStage: 3, DataParallel: 8, SeqLen: 1024, Checkpointing: true},
		{Kind: Train, Precision: FP32, Optimizer: Adafactor, SeqLen: 512, PipelineParallel: 2},
		{Kind: LoRA, SeqLen: 1024},
		{Kind: QLoRA, SeqLen: 1024, Checkpointing: true},
		{Kind: Inference, SeqLen: 256, MicroBatch: 4},
		{Kind: Serve, MaxModelLen: 512},
	}
	for _, m := range c.Models() {
		for _, w := range kinds {
			if m.Encoder && w.Kind == Serve {
				continue
			}
			e, err := EstimateMemory(m, h200, w)
			if err != nil {
				t.Errorf("%s %s: %v", m.ID, w.Kind, err)
				continue
			}
			b := e.PerGPU
			for name, v := range map[string]int64{"weights": b.Weights, "gradients": b.Gradients,
				"optimizer": b.OptimizerStates, "activations": b.Activations, "kv": b.KVCache, "overhead": b.Overhead} {
				if v < 0 {
					t.Errorf("%s %s: %s = %d", m.ID, w.Kind, name, v)
				}
			}
			if b.Weights == 0 || b.Total <= 0 {
				t.Errorf("%s %s: empty estimate %+v", m.ID, w.Kind, b)
			}
			if (w.Kind == Train || w.Kind == LoRA || w.Kind == QLoRA) && b.Activations == 0 {
				t.Errorf("%s %s: no activations", m.ID, w.Kind)
			}
		}
	}
}

// TestEstimateJudgesHostMemory: with the node's RAM known, an offloading
// run whose host need exceeds it does not fit, however much GPU headroom is
// left; with enough RAM, or with none given, the GPU verdict stands.
func TestEstimateJudgesHostMemory(t *testing.T) {
	c := testCatalog(t)
	m := mustModel(t, c, "meta-llama/Llama-3.1-8B")
	h100 := mustGPU(t, c, "H100-80GB").Target()
	offload := Workload{Kind: Train, ZeroStage: 2, DataParallel: 8, SeqLen: 2048, Checkpointing: true, OffloadOptimizer: CPU}
	need := estimate(t, m, h100, offload).Host
	if need <= 0 {
		t.Fatalf("an optimizer offload run needs no host memory: %d", need)
	}
	tests := []struct {
		name         string
		host         int64
		w            Workload
		fits, judged bool
	}{
		{"no host memory given: not judged", 0, offload, true, false},
		{"node RAM above the need", need + GiB, offload, true, true},
		{"node RAM exactly the need", need, offload, true, true},
		{"node RAM below the need", need - GiB, offload, false, true},
		{"no offload needs no host memory", GiB, Workload{Kind: LoRA, SeqLen: 2048, Checkpointing: true}, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tg := h100
			tg.HostMemory = tc.host
			e := estimate(t, m, tg, tc.w)
			if e.Headroom < 0 {
				t.Fatalf("the GPU itself does not fit (headroom %d); the case tests host memory only", e.Headroom)
			}
			if e.Fits != tc.fits || (e.HostCapacity > 0) != tc.judged || e.HostShort() == tc.fits {
				t.Errorf("fits %v, judged %v, short %v; want fits %v, judged %v", e.Fits, e.HostCapacity > 0, e.HostShort(), tc.fits, tc.judged)
			}
		})
	}
}

// TestEstimateJSONBackwardCompatible: filling the model, the inputs and a
// judged host keeps every field of the old contract with the same value
// (fits aside, which a short host turns false) and adds only model, inputs
// and host.
func TestEstimateJSONBackwardCompatible(t *testing.T) {
	c := testCatalog(t)
	m := mustModel(t, c, "meta-llama/Llama-3.1-8B")
	h100 := mustGPU(t, c, "H100-80GB").Target()
	old := []string{"per_gpu", "capacity", "fits", "headroom", "serve", "allocated", "reserved", "overheads"}
	added := map[string]bool{"model": true, "inputs": true, "host": true}
	decode := func(e Estimate) map[string]json.RawMessage {
		data, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		var v map[string]json.RawMessage
		if err := json.Unmarshal(data, &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	tests := []struct {
		name string
		w    Workload
		host int64
	}{
		{"serve", Workload{Kind: Serve, MaxModelLen: 8192}, 0},
		{"train", Workload{Kind: Train, SeqLen: 1024}, 0},
		{"offload with enough RAM", Workload{Kind: Train, ZeroStage: 3, DataParallel: 8, SeqLen: 1024, OffloadOptimizer: CPU}, 1 << 40},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base := estimate(t, m, h100, tc.w)
			tg := h100
			tg.HostMemory = tc.host
			full := estimate(t, m, tg, tc.w)
			full.Model = ModelSource{ID: m.ID, From: "catalog"}
			full.Inputs = []EstimateInput{{Name: "workload", Value: string(tc.w.Kind)}, {Name: "gpus", Value: 1, Assumed: true, Basis: "one GPU"}}
			before, after := decode(base), decode(full)
			for _, k := range old {
				if string(before[k]) != string(after[k]) {
					t.Errorf("%s changed: %s -> %s", k, before[k], after[k])
				}
			}
			for k := range after {
				if _, ok := before[k]; !ok && !added[k] {
					t.Errorf("unexpected new field %q", k)
				}
			}
			var in struct {
				Inputs map[string]struct {
					Value  any    `json:"value"`
					Source string `json:"source"`
					Basis  string `json:"basis"`
				} `json:"inputs"`
				Model struct{ ID, From string } `json:"model"`
			}
			if err := json.Unmarshal(mustMarshal(t, full), &in); err != nil {
				t.Fatal(err)
			}
			if in.Inputs["workload"].Source != "given" || in.Inputs["gpus"].Source != "assumed" || in.Inputs["gpus"].Basis != "one GPU" || in.Model.ID != m.ID {
				t.Errorf("inputs or model misread: %+v %+v", in.Inputs, in.Model)
			}
		})
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// A paged optimizer's state stays resident on the GPU until memory
// pressure pages it out (bitsandbytes unified memory), so it counts in
// the peak like the non-paged optimizer's, with a note on paging.
func TestPagedOptimizerCountsOnGPU(t *testing.T) {
	c := testCatalog(t)
	m := mustModel(t, c, "meta-llama/Llama-3.1-8B")
	tg := CapacityTarget("huge", 1<<50)
	for _, o := range []Optimizer{Adam8bit, AdamW} {
		w := Workload{Kind: Train, Precision: BF16, Optimizer: o, MicroBatch: 1, SeqLen: 1024, Checkpointing: true}
		plain := estimate(t, m, tg, w)
		w.PagedOptimizer = true
		paged := estimate(t, m, tg, w)
		if paged.PerGPU.OptimizerStates != plain.PerGPU.OptimizerStates || paged.PerGPU.OptimizerStates == 0 {
			t.Errorf("%s: paged optimizer states %d, non-paged %d; want equal and non-zero", o, paged.PerGPU.OptimizerStates, plain.PerGPU.OptimizerStates)
		}
		if !slices.ContainsFunc(paged.Notes, func(n string) bool { return strings.Contains(n, "paged optimizer") && strings.Contains(n, "spill") }) {
			t.Errorf("%s: no paging note: %v", o, paged.Notes)
		}
	}
}

// TestCheckpointedPeakTakesLossOrRecomputeNotBoth holds the checkpointed
// activation peak to its two phases: a layer's recomputation runs inside
// its own backward, after the loss's backward has freed the logits, so the
// peak is the kept layer inputs plus the larger transient, never both.
func TestCheckpointedPeakTakesLossOrRecomputeNotBoth(t *testing.T) {
	c := testCatalog(t)
	m := mustModel(t, c, "meta-llama/Llama-3.1-8B")
	big := CapacityTarget("huge", 1<<50)
	w := Workload{Kind: Train, SeqLen: 2048, Checkpointing: true, Attention: EagerAttention}
	r, err := w.resolve(m)
	if err != nil {
		t.Fatal(err)
	}
	tokens := float64(r.SeqLen * r.MicroBatch)
	recompute := trainLayerActivation(m, r, false).bytes(tokens, float64(r.SeqLen))
	act := func(l LossImpl) int64 {
		w.Loss = l
		return estimate(t, m, big, w).PerGPU.Activations
	}
	fused, chunked, hf := act(FusedLoss), act(ChunkedLoss), act(HFDefaultLoss)
	chunkedLogits, hfLogits := 2*tokens*float64(m.Vocab), 12*tokens*float64(m.Vocab)
	if chunkedLogits >= recompute || hfLogits <= recompute {
		t.Fatalf("test premise: chunked logits %.0f should be below one layer's recompute %.0f, hf-default logits %.0f above", chunkedLogits, recompute, hfLogits)
	}
	// The chunked loss's logits hide inside the recompute phase's peak.
	if chunked != fused {
		t.Errorf("checkpointed, chunked loss %d != fused loss %d: the smaller transient must not add", chunked, fused)
	}
	// The default loss's logits outgrow it by their difference only.
	if want := fused + int64(hfLogits-recompute); math.Abs(float64(hf-want)) > 2 {
		t.Errorf("checkpointed, hf-default loss %d, want %d (fused %d + logits %.0f − recompute %.0f)", hf, want, fused, hfLogits, recompute)
	}
}

// TestReserveAndContextFollowTheWorkloadClass holds two overheads to the
// class bench/gpu measured them on: checkpointed training reserves 20 % of
// activations for the caching allocator (5 % without checkpointing), and a
// training process carries 686 MiB of non-PyTorch memory against 512 MiB for
// inference, unless the workload states its own context.
func TestReserveAndContextFollowTheWorkloadClass(t *testing.T) {
	c := testCatalog(t)
	m := mustModel(t, c, "meta-llama/Llama-3.1-8B")
	big := CapacityTarget("huge", 1<<50)
	overhead := func(e Estimate, prefix string) int64 {
		for _, o := range e.Overheads {
			if strings.HasPrefix(o.Name, prefix) {
				return o.Bytes
			}
		}
		t.Fatalf("no %q overhead in %+v", prefix, e.Overheads)
		return 0
	}
	for _, tc := range []struct {
		w       Workload
		pct     int64
		context int64
	}{
		{Workload{Kind: QLoRA, SeqLen: 4096, Checkpointing: true}, 20, 686 * MiB},
		{Workload{Kind: Train, SeqLen: 2048}, 5, 686 * MiB},
		{Workload{Kind: LoRA, SeqLen: 2048, Checkpointing: true, CUDAContextBytes: 1343 * MiB}, 20, 1343 * MiB},
		{Workload{Kind: Inference, SeqLen: 2048}, 5, 512 * MiB},
	} {
		e := estimate(t, m, big, tc.w)
		if got, want := overhead(e, "allocator"), e.PerGPU.Activations*tc.pct/100; got != want {
			t.Errorf("%s checkpointing=%v: reserve %d, want %d%% of activations (%d)", tc.w.Kind, tc.w.Checkpointing, got, tc.pct, want)
		}
		if got := overhead(e, "CUDA context"); got != tc.context {
			t.Errorf("%s: CUDA context %d MiB, want %d MiB", tc.w.Kind, got/MiB, tc.context/MiB)
		}
	}
}
