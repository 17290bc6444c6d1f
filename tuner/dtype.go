package tuner

import (
	"fmt"
	"strings"
)

// weightFormat is a storage format for the transformer's linear weights; the
// rest (embeddings, lm_head, norms, biases) stays 16-bit in quantized
// checkpoints (precision.md §2.1: "Embeddings / lm_head / norms are often left
// in bf16 by quantizers"; memory-model.md §6.1 for bitsandbytes).
type weightFormat struct {
	name        string
	linearBytes float64 // bytes per linear-layer parameter, incl. scales
	otherBytes  float64 // bytes per other parameter
}

// Bytes per parameter, precision.md §2.1:
//   - fp8 / int8: 1 (per-channel or block scales ≈ 0.0002 B, ignored)
//   - awq / gptq int4 with group size 128: 0.5 + 2/128 (fp16 scale) + 0.5/128 (4-bit zero) ≈ 0.52
//   - nf4 (bitsandbytes, fp32 absmax per 64): 4.5 bits = 0.5625 B
//   - nf4 with double quantization: 4.127 bits ≈ 0.516 B (QLoRA paper §3, memory-model.md §6.1)
//   - mxfp4: 4 + 8/32 bits = 0.53125 B; nvfp4: 4 + 8/16 bits = 0.5625 B
var weightFormats = map[string]weightFormat{
	"fp32":   {"fp32", 4, 4},
	"fp16":   {"fp16", 2, 2},
	"bf16":   {"bf16", 2, 2},
	"fp8":    {"fp8", 1, 2},
	"int8":   {"int8", 1, 2},
	"awq":    {"awq", 0.5 + 2.0/128 + 0.5/128, 2},
	"gptq":   {"gptq", 0.5 + 2.0/128 + 0.5/128, 2},
	"nf4":    {"nf4", 0.5625, 2},
	"nf4-dq": {"nf4-dq", 4.127 / 8, 2},
	"mxfp4":  {"mxfp4", 0.53125, 2},
	"nvfp4":  {"nvfp4", 0.5625, 2},
}

var weightFormatAliases = map[string]string{
	"float32": "fp32", "float": "fp32", "float16": "fp16", "half": "fp16", "bfloat16": "bf16",
	"w8a8": "int8", "experts_int8": "int8", "awq_marlin": "awq", "gptq_marlin": "gptq", "int4": "gptq",
	"bitsandbytes": "nf4", "bnb-nf4": "nf4", "nf4-double-quant": "nf4-dq", "modelopt_fp4": "nvfp4",
	"fbgemm_fp8": "fp8", "ptpc_fp8": "fp8",
}

func lookupWeightFormat(s string) (weightFormat, error) {
	k := strings.ToLower(strings.TrimSpace(s))
	if a, ok := weightFormatAliases[k]; ok {
		k = a
	}
	f, ok := weightFormats[k]
	if !ok {
		return weightFormat{}, fmt.Errorf("unknown weight format %q (known: %s)", s, strings.Join(sortedKeys(weightFormats), ", "))
	}
	return f, nil
}

// checkpointFormat maps a checkpoint's quantization_config to a weight format.
func checkpointFormat(q *Quantization) (weightFormat, bool) {
	if q == nil {
		return weightFormat{}, false
	}
	switch {
	case q.Method == "fp8" || q.Method == "fbgemm_fp8":
		return weightFormats["fp8"], true
	case q.Method == "mxfp4":
		return weightFormats["mxfp4"], true
	case q.Method == "modelopt" && q.Bits == 4, q.Method == "modelopt_fp4":
		return weightFormats["nvfp4"], true
	case q.Bits == 8:
		return weightFormats["int8"], true
	case q.Method == "bitsandbytes" && q.Bits == 4:
		return weightFormats["nf4"], true
	case q.Bits == 4:
		return weightFormats["gptq"], true
	}
	return weightFormat{}, false
}

// kvCacheBytes resolves vLLM's --kv-cache-dtype (vllm.md §2): "auto" uses the
// model dtype, which vLLM serves as 16-bit even for fp32 checkpoints.
func kvCacheBytes(s string) (float64, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "auto", "bfloat16", "bf16", "float16", "fp16", "half":
		return 2, nil
	case "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc":
		return 1, nil
	case "float32", "fp32":
		return 4, nil
	}
	return 0, fmt.Errorf("unknown kv cache dtype %q (known: auto, fp8, fp8_e4m3, fp8_e5m2, bfloat16, float16)", s)
}

func autoKV(s string) bool {
	s = strings.ToLower(strings.TrimSpace(s))
	return s == "" || s == "auto"
}

// quantizableParams counts the parameters in the layers' weight matrices
// (attention and MLP projections, experts and routers): what quantizers
// replace. Embeddings, lm_head, norms and biases are not included.
func (m *Model) quantizableParams() int64 {
	strip := *m
	strip.LinearBias, strip.QKVBias, strip.QKNorm = false, false, false
	attn := strip.AttentionParams()
	if a := m.MLA; a != nil {
		attn -= int64(a.QLoRARank + a.KVLoRARank) // the two latent norms
	}
	dense := int64(m.Layers-m.moeLayers()) * strip.DenseMLPParams()
	var moe int64
	if e := m.MoE; e != nil {
		moe = int64(m.moeLayers()) * (strip.MoEParams() - boolInt64(e.RouterBias)*int64(e.Experts))
	}
	return int64(m.Layers)*attn + dense + moe
}

func boolInt64(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// weightBytes is the total weight storage of m in format f.
func weightBytes(m *Model, f weightFormat) int64 {
	q := m.quantizableParams()
	other := m.Params() - q
	if other < 0 {
		other = 0
	}
	return int64(float64(q)*f.linearBytes + float64(other)*f.otherBytes)
}
