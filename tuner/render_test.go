package tuner

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpulint/gpulint/internal/golden"
)

func TestRenderEstimateText(t *testing.T) {
	c := testCatalog(t)
	llama := mustModel(t, c, "meta-llama/Llama-3.1-8B-Instruct")
	h100 := mustGPU(t, c, "H100-80GB").Target()
	tests := []struct {
		name   string
		m      *Model
		tg     Target
		w      Workload
		opts   RenderOptions
		golden string
	}{
		{"serve", llama, h100, Workload{Kind: Serve, MaxModelLen: 16384, GPUMemoryUtilization: 0.95}, RenderOptions{}, "render_serve.golden"},
		{"serve color", llama, h100, Workload{Kind: Serve, MaxModelLen: 16384, GPUMemoryUtilization: 0.95}, RenderOptions{Color: true}, "render_serve_color.golden"},
		{"train zero3 offload", mustModel(t, c, "meta-llama/Llama-3.1-70B"), h100,
			Workload{Kind: Train, ZeroStage: 3, DataParallel: 8, SeqLen: 4096, Checkpointing: true, OffloadOptimizer: CPU},
			RenderOptions{}, "render_train_zero3.golden"},
		{"qlora too big", mustModel(t, c, "meta-llama/Llama-3.1-70B"), mustGPU(t, c, "RTX-4090").Target(),
			Workload{Kind: QLoRA, SeqLen: 2048, Checkpointing: true}, RenderOptions{}, "render_qlora_oom.golden"},
		{"serve refused", llama, mustGPU(t, c, "RTX-4090").Target(), Workload{Kind: Serve}, RenderOptions{}, "render_serve_refused.golden"},
		// A terminal without color: the bar is letters and dots, no escapes.
		{"serve bar", llama, h100, Workload{Kind: Serve, MaxModelLen: 16384}, RenderOptions{Bar: true}, "render_serve_bar.golden"},
		{"serve bar color", llama, h100, Workload{Kind: Serve, MaxModelLen: 16384}, RenderOptions{Bar: true, Color: true}, "render_serve_bar_color.golden"},
		// Past the capacity the bar is scaled to the total and | marks the capacity.
		{"qlora too big bar", mustModel(t, c, "meta-llama/Llama-3.1-70B"), mustGPU(t, c, "RTX-4090").Target(),
			Workload{Kind: QLoRA, SeqLen: 2048, Checkpointing: true}, RenderOptions{Bar: true}, "render_qlora_oom_bar.golden"},
		// Host memory judged: the node lacks RAM for the offloaded states...
		{"train offload host short", mustModel(t, c, "meta-llama/Llama-3.1-70B"), withHost(h100, 1<<40),
			Workload{Kind: Train, ZeroStage: 3, DataParallel: 8, SeqLen: 4096, Checkpointing: true, OffloadOptimizer: CPU},
			RenderOptions{}, "render_train_host_short.golden"},
		// ... or holds them.
		{"train offload host fits", mustModel(t, c, "meta-llama/Llama-3.1-70B"), withHost(h100, 2<<40),
			Workload{Kind: Train, ZeroStage: 3, DataParallel: 8, SeqLen: 4096, Checkpointing: true, OffloadOptimizer: CPU},
			RenderOptions{}, "render_train_host_fits.golden"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := RenderEstimateText(&buf, estimate(t, tc.m, tc.tg, tc.w), tc.opts); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", tc.golden), buf.Bytes())
			hasEsc := strings.Contains(buf.String(), "\x1b[")
			if hasEsc != tc.opts.Color {
				t.Errorf("escape codes present = %v with Color = %v", hasEsc, tc.opts.Color)
			}
		})
	}
}

func withHost(t Target, bytes int64) Target {
	t.HostMemory = bytes
	return t
}

// TestRenderShowsModelAndInputs: the model line and every input, given or
// assumed with its basis, as the caller filled them.
func TestRenderShowsModelAndInputs(t *testing.T) {
	c := testCatalog(t)
	e := estimate(t, mustModel(t, c, "meta-llama/Llama-3.1-8B-Instruct"), mustGPU(t, c, "L4").Target(),
		Workload{Kind: LoRA, SeqLen: 1024, Checkpointing: true})
	e.Model = ModelSource{ID: "meta-llama/Llama-3.1-8B", From: "catalog"}
	e.Inputs = []EstimateInput{
		{Name: "workload", Value: "lora"},
		{Name: "seq-len", Value: 1024},
		{Name: "micro-batch", Value: 1, Assumed: true},
		{Name: "lora-rank", Value: 16, Assumed: true, Basis: "gpulint's default"},
	}
	var buf bytes.Buffer
	if err := RenderEstimateText(&buf, e, RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "render_inputs.golden"), buf.Bytes())
}

// TestEstimateRowsDropOnlyAlwaysZero: a row leaves the table only when the
// workload can never fill it; a component zero for this setup stays.
func TestEstimateRowsDropOnlyAlwaysZero(t *testing.T) {
	names := func(e Estimate) []string {
		var out []string
		for _, r := range e.rows() {
			out = append(out, r.name)
		}
		return out
	}
	tests := []struct {
		name string
		e    Estimate
		want []string
	}{
		{"training drops kv cache", Estimate{Workload: Workload{Kind: Train}, PerGPU: Breakdown{Weights: 1}},
			[]string{"weights", "gradients", "optimizer states", "activations", "overhead"}},
		{"lora keeps zero optimizer states", Estimate{Workload: Workload{Kind: LoRA}},
			[]string{"weights", "gradients", "optimizer states", "activations", "overhead"}},
		{"serving drops gradients and optimizer states", Estimate{Workload: Workload{Kind: Serve}},
			[]string{"weights", "activations", "kv cache", "overhead"}},
		{"inference drops them too", Estimate{Workload: Workload{Kind: Inference}},
			[]string{"weights", "activations", "kv cache", "overhead"}},
		{"no workload keeps every row", Estimate{},
			[]string{"weights", "gradients", "optimizer states", "activations", "kv cache", "overhead"}},
		{"a non-zero row always stays", Estimate{Workload: Workload{Kind: Train}, PerGPU: Breakdown{KVCache: 1}},
			[]string{"weights", "gradients", "optimizer states", "activations", "kv cache", "overhead"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, names(tc.e)); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
		})
	}
}

func TestThousands(t *testing.T) {
	for in, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 476016: "476,016", -1234567: "-1,234,567"} {
		if got := thousands(in); got != want {
			t.Errorf("thousands(%d) = %q, want %q", in, got, want)
		}
	}
}

// BenchmarkEstimateMemory shows one estimate costs well under a millisecond.
func BenchmarkEstimateMemory(b *testing.B) {
	c := MustLoadCatalog()
	m, _ := c.Model("meta-llama/Llama-3.1-70B-Instruct")
	g, _ := c.GPU("H100-80GB")
	train := Workload{Kind: Train, ZeroStage: 3, DataParallel: 64, SeqLen: 8192, Checkpointing: true}
	serve := Workload{Kind: Serve, TensorParallel: 4}
	b.Run("train", func(b *testing.B) {
		for b.Loop() {
			if _, err := EstimateMemory(m, g.Target(), train); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("serve", func(b *testing.B) {
		for b.Loop() {
			if _, err := EstimateMemory(m, g.Target(), serve); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkLoadCatalog(b *testing.B) {
	for b.Loop() {
		if _, err := LoadCatalog(); err != nil {
			b.Fatal(err)
		}
	}
}
