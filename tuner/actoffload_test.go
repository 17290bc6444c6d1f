package tuner

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// TestActivationOffloadingKeepsInFlightOnGPU holds the offloaded regime to
// torchtune's OffloadActivations: with checkpointing, the GPU keeps only
// offloadStash layer inputs of all L, plus the output projection's input,
// the recompute working set and the loss; the other layer inputs move to
// host memory in pinned power-of-two blocks, per rank on the node.
func TestActivationOffloadingKeepsInFlightOnGPU(t *testing.T) {
	c := testCatalog(t)
	m := mustModel(t, c, "meta-llama/Llama-3.1-8B")
	big := CapacityTarget("huge", 1<<50)
	w := Workload{Kind: LoRA, Precision: PureBF16, Loss: ChunkedLoss, MicroBatch: 2, SeqLen: 2048, Checkpointing: true}
	on := w
	on.ActivationOffloading = true
	plain, off := estimate(t, m, big, w), estimate(t, m, big, on)

	input := 2.0 * float64(m.Hidden) * 2 * 2048 // one layer input, bf16
	moved := float64(m.Layers-offloadStash) * input
	finalNorm := 6 * float64(m.Hidden) * 2 * 2048
	if got := float64(plain.PerGPU.Activations - off.PerGPU.Activations); math.Abs(got-moved-finalNorm-input) > 8 {
		// moved layer inputs, the embedding output and the final RMSNorm's
		// saved fp32 input and normalized output (6 bytes an element)
		t.Errorf("offloading saved %.0f bytes on the GPU, want %.0f", got, moved+finalNorm+input)
	}
	if plain.Host != 0 {
		t.Fatalf("test premise: no host memory without offloading, got %d", plain.Host)
	}
	// 32 inputs of 16 MiB each: already powers of two.
	wantHost := int64(m.Layers)*int64(input) + int64(input) + int64(finalNorm)
	if off.Host != wantHost {
		t.Errorf("host %d, want %d", off.Host, wantHost)
	}
	if !slices.ContainsFunc(off.Notes, func(n string) bool {
		return strings.Contains(n, "activation offloading") && strings.Contains(n, "pinned host memory")
	}) {
		t.Errorf("no offloading note in %v", off.Notes)
	}
	// Eight ranks on a node offload eight times as much.
	dp := on
	dp.DataParallel = 8
	if got := estimate(t, m, big, dp).Host; got != 8*wantHost {
		t.Errorf("8 ranks: host %d, want %d", got, 8*wantHost)
	}
}

// TestActivationOffloadingWithoutCheckpointing bounds the GPU side by one
// layer's saved set (TRL's context runs without checkpointing), which is
// far below all layers' and above the checkpointed regime's.
func TestActivationOffloadingWithoutCheckpointing(t *testing.T) {
	c := testCatalog(t)
	m := mustModel(t, c, "meta-llama/Llama-3.1-8B")
	big := CapacityTarget("huge", 1<<50)
	w := Workload{Kind: LoRA, Loss: ChunkedLoss, MicroBatch: 1, SeqLen: 4096}
	on := w
	on.ActivationOffloading = true
	plain, off := estimate(t, m, big, w), estimate(t, m, big, on)
	if off.PerGPU.Activations*4 > plain.PerGPU.Activations {
		t.Errorf("offloaded activations %d not below a quarter of %d", off.PerGPU.Activations, plain.PerGPU.Activations)
	}
	if off.Host < plain.PerGPU.Activations/2 {
		t.Errorf("host %d holds less than half the activations %d", off.Host, plain.PerGPU.Activations)
	}
}

// TestActivationOffloadingIsTrainingOnly refuses it for inference, and the
// pinned block rounds up to a power of two.
func TestActivationOffloadingIsTrainingOnly(t *testing.T) {
	c := testCatalog(t)
	m := mustModel(t, c, "meta-llama/Llama-3.1-8B")
	if _, err := (Workload{Kind: Inference, ActivationOffloading: true}).resolve(m); err == nil {
		t.Error("inference with activation offloading resolved")
	}
	for n, want := range map[float64]float64{1024: 1024, 1025: 2048, 3 << 20: 4 << 20} {
		if got := pinnedBlock(n); got != want {
			t.Errorf("pinnedBlock(%.0f) = %.0f, want %.0f", n, got, want)
		}
	}
}
