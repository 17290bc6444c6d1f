package tuner

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

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
