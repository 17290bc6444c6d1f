package tuner

import (
	"strings"
	"testing"
)

func TestParseVLLMRelease(t *testing.T) {
	for in, want := range map[string]vllmRelease{
		"":        {},
		"0.10.1":  {major: 0, minor: 10, patch: 1, known: true},
		"v0.11.0": {major: 0, minor: 11, known: true},
		"0.21":    {major: 0, minor: 21, known: true},
	} {
		got, err := parseVLLMRelease(in)
		if err != nil || got != want {
			t.Errorf("parseVLLMRelease(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"latest", "0", "0.10.1rc1", "v1.2.3.4"} {
		if _, err := parseVLLMRelease(bad); err == nil {
			t.Errorf("parseVLLMRelease(%q) gave no error", bad)
		}
	}
}

// TestServeFollowsStatedRelease holds each release-dependent part of the
// serving estimate to the release it changed in (vllm_release.go).
func TestServeFollowsStatedRelease(t *testing.T) {
	c := testCatalog(t)
	h100 := mustGPU(t, c, "H100-80GB").Target()
	m := mustModel(t, c, "meta-llama/Llama-3.1-8B")
	est := func(v string, w Workload) Estimate {
		t.Helper()
		w.Kind, w.VLLMVersion = Serve, v
		e, err := EstimateMemory(m, h100, w)
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		return e
	}
	cur, v11, v12, v21 := est("", Workload{}), est("0.11.0", Workload{}), est("0.12.0", Workload{}), est("0.21.0", Workload{})

	// The dummy sampler run over 1024 requests dominates the profile at
	// the H100 defaults; v0.8-v0.11 sort the whole vocabulary in it.
	logits := int64(1024) * int64(m.Vocab)
	if cur.PerGPU.Activations != 16*logits || v12.PerGPU.Activations != 16*logits {
		t.Errorf("current/v0.12 sampler peak %d/%d, want 16 B × %d logits", cur.PerGPU.Activations, v12.PerGPU.Activations, logits)
	}
	if v11.PerGPU.Activations != 38*logits {
		t.Errorf("v0.11 sampler peak %d, want 38 B × %d logits", v11.PerGPU.Activations, logits)
	}
	// v0.8-v0.11.0 sort only without FlashInfer's sampler; v0.11.1
	// turned that sampler off by default.
	fi11 := est("0.11.0", Workload{VLLMFlashInferSampler: true})
	fi111 := est("0.11.1", Workload{VLLMFlashInferSampler: true})
	if fi11.PerGPU.Activations != 16*logits || fi111.PerGPU.Activations != 38*logits {
		t.Errorf("with FlashInfer's sampler: v0.11.0 peak %d (want 16 B), v0.11.1 %d (want 38 B) × %d logits", fi11.PerGPU.Activations, fi111.PerGPU.Activations, logits)
	}
	if d := cur.Serve.KVCacheBytes - v11.Serve.KVCacheBytes; d != 22*logits {
		t.Errorf("v0.11 leaves %d bytes less for the KV cache, want %d", d, 22*logits)
	}

	// From v0.21 the CUDA graphs come out of the budget.
	g := cur.Serve.Graphs.Bytes
	if cur.Serve.GraphsInBudget || !v21.Serve.GraphsInBudget {
		t.Fatalf("graphs in budget: current %v, v0.21 %v", cur.Serve.GraphsInBudget, v21.Serve.GraphsInBudget)
	}
	if d := cur.Serve.KVCacheBytes - v21.Serve.KVCacheBytes; d != g {
		t.Errorf("v0.21 leaves %d bytes less for the KV cache, want the graphs' %d", d, g)
	}
	if d := v21.Serve.GraphHeadroom - cur.Serve.GraphHeadroom; d != g {
		t.Errorf("v0.21 graph headroom grew by %d, want %d", d, g)
	}

	// Before v0.11 the capture sizes run to 512 with no FULL graphs.
	v10 := est("0.10.2", Workload{})
	if v10.Serve.Graphs.Bytes != cur.Serve.Graphs.Before11.Bytes || v10.Serve.Graphs.Bytes >= g {
		t.Errorf("v0.10 graphs %d, want the legacy rule's %d (< %d)", v10.Serve.Graphs.Bytes, cur.Serve.Graphs.Before11.Bytes, g)
	}
	if !strings.Contains(strings.Join(v11.Notes, "\n"), "sorts the whole vocabulary") {
		t.Errorf("v0.11 notes do not name the sort: %q", v11.Notes)
	}

	if _, err := EstimateMemory(m, h100, Workload{Kind: Serve, VLLMVersion: "nightly"}); err == nil {
		t.Error("an unreadable release gave no error")
	}
	if _, err := EstimateMemory(m, h100, Workload{Kind: Train, VLLMVersion: "0.11.0", SeqLen: 512, MicroBatch: 1}); err == nil {
		t.Error("a vLLM release on a training workload gave no error")
	}
}

// TestLlama4HybridOffByRelease: releases v0.10.1-v0.12.0 turn the hybrid KV
// cache manager off for chunked local attention by default, so one
// request holds full-length blocks on every layer there.
func TestLlama4HybridOffByRelease(t *testing.T) {
	c := testCatalog(t)
	h200 := mustGPU(t, c, "H200").Target()
	m := mustModel(t, c, "meta-llama/Llama-4-Scout-17B-16E-Instruct")
	one := func(v string) int64 {
		e, err := EstimateMemory(m, h200, Workload{Kind: Serve, TensorParallel: 8, MaxModelLen: 65536, VLLMVersion: v})
		if err != nil {
			t.Fatal(err)
		}
		return e.Serve.OneRequestKVBytes
	}
	off := one("0.11.0")
	for _, v := range []string{"", "0.10.0", "0.13.0"} {
		if on := one(v); on >= off {
			t.Errorf("release %q: one request %d bytes, want less than v0.11's full-attention %d", v, on, off)
		}
	}
	if forced, _ := EstimateMemory(m, h200, Workload{Kind: Serve, TensorParallel: 8, MaxModelLen: 65536, DisableHybridKVCache: true}); forced.Serve.OneRequestKVBytes != off {
		t.Errorf("v0.11 one request %d bytes, want the disabled manager's %d", off, forced.Serve.OneRequestKVBytes)
	}
}
