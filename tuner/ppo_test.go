package tuner

import (
	"strings"
	"testing"
)

// A PPO run's estimate is the sum of its models: the trained policy and
// value model as the training model sizes each alone, the frozen reference
// policy and reward model as 16-bit weights, and the larger of the PPO
// step's and the generation step's transient memory.
func TestPPOIsTheSumOfItsModels(t *testing.T) {
	c := testCatalog(t)
	m := mustModel(t, c, "Qwen/Qwen2.5-0.5B")
	tg := CapacityTarget("test", 1<<40)
	base := Workload{Precision: PureBF16, Optimizer: AdamW, MicroBatch: 4, SeqLen: 320, Checkpointing: true}
	ppo := base
	ppo.Kind = PPO
	ppo.PPO = PPOShape{GeneratedTokens: 64, ForwardBatch: 8, KVCache: true}
	got := estimate(t, m, tg, ppo)

	pol := base
	pol.Kind = Train
	pol.Loss = FusedLoss // the PPO estimate counts the policy's logits itself
	p := estimate(t, m, tg, pol)
	vm := valueModel(m, 1)
	v := estimate(t, vm, tg, pol)

	if want := m.Params() - m.LMHeadParams() + int64(m.Hidden); vm.Params() != want {
		t.Errorf("value model params = %d, want %d (policy less its LM head, plus a 1-wide head)", vm.Params(), want)
	}
	frozen := 2*m.Params() + 2*vm.Params()
	if want := p.PerGPU.Weights + v.PerGPU.Weights + frozen; got.PerGPU.Weights != want {
		t.Errorf("weights = %d, want policy %d + value %d + frozen reference and reward %d = %d",
			got.PerGPU.Weights, p.PerGPU.Weights, v.PerGPU.Weights, frozen, want)
	}
	if want := p.PerGPU.OptimizerStates + v.PerGPU.OptimizerStates; got.PerGPU.OptimizerStates != want {
		t.Errorf("optimizer states = %d, want %d", got.PerGPU.OptimizerStates, want)
	}
	if want := p.PerGPU.Gradients + v.PerGPU.Gradients; got.PerGPU.Gradients != want {
		t.Errorf("gradients = %d, want %d", got.PerGPU.Gradients, want)
	}
	if got.PPO == nil {
		t.Fatal("PPO parts missing")
	}
	// fp32 logits of 4 × 320 tokens plus their 16-bit source, and the
	// response's two fp32 log-softmax tensors.
	V := float64(m.Vocab)
	if want := int64(4*320*V*6 + 4*64*V*8); got.PPO.PolicyLogits != want {
		t.Errorf("policy logits = %d, want %d", got.PPO.PolicyLogits, want)
	}
	act := p.PerGPU.Activations + v.PerGPU.Activations + got.PPO.PolicyLogits
	gen := got.PPO.GenerationKV + got.PPO.GenerationForward
	if want := max(act, gen); got.PerGPU.Activations+got.PerGPU.KVCache != want {
		t.Errorf("transient = %d, want the larger of the PPO step %d and generation %d", got.PerGPU.Activations+got.PerGPU.KVCache, act, gen)
	}
	if wantKV := int64(8 * 320 * m.KVBytesPerToken(1, 2)); got.PPO.GenerationKV != wantKV {
		t.Errorf("generation KV = %d, want 8 sequences × 320 tokens = %d", got.PPO.GenerationKV, wantKV)
	}
	if got.PerGPU.Total <= p.PerGPU.Total+v.PerGPU.Total-p.PerGPU.Overhead-v.PerGPU.Overhead {
		t.Errorf("total %d is not above the two trained models' states and activations", got.PerGPU.Total)
	}
	notes := strings.Join(got.Notes, "\n")
	for _, want := range []string{"reference policy", "reward model", "unvalidated"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
}

// Generation without a KV cache holds no cache; a bigger forward batch
// makes generation the peak.
func TestPPOGenerationPhase(t *testing.T) {
	c := testCatalog(t)
	m := mustModel(t, c, "Qwen/Qwen2.5-0.5B")
	tg := CapacityTarget("test", 1<<40)
	w := Workload{Kind: PPO, Precision: PureBF16, MicroBatch: 1, SeqLen: 600, Checkpointing: true,
		PPO: PPOShape{GeneratedTokens: 100, ForwardBatch: 64}}
	noKV := estimate(t, m, tg, w)
	if noKV.PPO.GenerationKV != 0 || noKV.PerGPU.KVCache != 0 {
		t.Errorf("KV cache counted without enable_kv_cache: %d", noKV.PPO.GenerationKV)
	}
	w.PPO.KVCache = true
	kv := estimate(t, m, tg, w)
	if kv.PPO.TrainingPhasePeak || kv.PerGPU.KVCache == 0 {
		t.Errorf("64-sequence generation with a KV cache should be the peak: %+v", kv.PPO)
	}
}

func TestPPOWorkloadErrors(t *testing.T) {
	c := testCatalog(t)
	m := mustModel(t, c, "Qwen/Qwen2.5-0.5B")
	tg := CapacityTarget("test", 1<<40)
	for _, tc := range []struct {
		name string
		w    Workload
		want string
	}{
		{"no generated tokens", Workload{Kind: PPO, SeqLen: 512}, "generated-token"},
		{"sequence not above the response", Workload{Kind: PPO, SeqLen: 64, PPO: PPOShape{GeneratedTokens: 64}}, "must exceed"},
		{"several GPUs", Workload{Kind: PPO, SeqLen: 512, DataParallel: 2, PPO: PPOShape{GeneratedTokens: 64}}, "single-device"},
		{"shape on a plain run", Workload{Kind: Train, PPO: PPOShape{GeneratedTokens: 64}}, "PPO workloads only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := EstimateMemory(m, tg, tc.w)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

// bitsandbytes' 32-bit optimizers keep fp32 states over bf16 parameters:
// 8 bytes of AdamW state per parameter where torch's AdamW keeps 4.
func TestFP32OptimizerStatesUnderPureBF16(t *testing.T) {
	c := testCatalog(t)
	m := mustModel(t, c, "Qwen/Qwen2.5-0.5B")
	tg := CapacityTarget("test", 1<<40)
	w := Workload{Kind: Train, Precision: PureBF16, MicroBatch: 1, SeqLen: 128}
	bf16 := estimate(t, m, tg, w)
	w.FP32OptimizerStates = true
	fp32 := estimate(t, m, tg, w)
	if got, want := fp32.PerGPU.OptimizerStates, 8*m.Params(); got != want {
		t.Errorf("fp32 states = %d, want 8 B × %d params = %d", got, m.Params(), want)
	}
	if got, want := bf16.PerGPU.OptimizerStates, 4*m.Params(); got != want {
		t.Errorf("bf16 states = %d, want %d", got, want)
	}
	w.Precision = BF16 // mixed precision: fp32 states already
	mixed := estimate(t, m, tg, w)
	w.FP32OptimizerStates = false
	if plain := estimate(t, m, tg, w); plain.PerGPU.OptimizerStates != mixed.PerGPU.OptimizerStates {
		t.Errorf("mixed precision states changed with the flag: %d vs %d", mixed.PerGPU.OptimizerStates, plain.PerGPU.OptimizerStates)
	}
}

// Optimizer states per parameter of each regime in fp32 (no master
// copy): two fp32 states for AdamW, one for SGD (and bitsandbytes' 32-bit
// Lion), two bytes for 8-bit Adam, one for an 8-bit one-state optimizer
// (bitsandbytes' Lion8bit).
func TestOptimizerStateBytesPerRegime(t *testing.T) {
	c := testCatalog(t)
	m := mustModel(t, c, "Qwen/Qwen2.5-0.5B")
	tg := CapacityTarget("test", 1<<40)
	for o, per := range map[Optimizer]int64{AdamW: 8, SGD: 4, Adam8bit: 2, OneState8bit: 1} {
		w := Workload{Kind: Train, Precision: FP32, MicroBatch: 1, SeqLen: 128, Optimizer: o}
		if got, want := estimate(t, m, tg, w).PerGPU.OptimizerStates, per*m.Params(); got != want {
			t.Errorf("%s: states %d, want %d B × %d params = %d", o, got, per, m.Params(), want)
		}
	}
}
