package tuner

import "testing"

// A float32 checkpoint served by vLLM with dtype auto runs in bfloat16, so
// the serving plan's current precision is bf16, not fp32; plain inference
// (Hugging Face generate) keeps the checkpoint's fp32.
func TestEffectiveServePrecisionFloat32Checkpoint(t *testing.T) {
	m := &Model{Dtype: "float32"}
	if got := effectiveServePrecision(m, Workload{Kind: Serve}); got != BF16 {
		t.Errorf("serve: got %s, want bf16", got)
	}
	if got := effectiveServePrecision(m, Workload{Kind: Inference}); got != FP32 {
		t.Errorf("inference: got %s, want fp32", got)
	}
	if got := effectiveServePrecision(m, Workload{Kind: Serve, Precision: FP32}); got != FP32 {
		t.Errorf("serve with --dtype float32: got %s, want fp32", got)
	}
}
