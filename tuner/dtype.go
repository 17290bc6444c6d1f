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
	// skip is what the checkpoint's quantization_config leaves in 16 bits
	// (modules_to_not_convert, ignore); zero for a format chosen by flag.
	skip quantSkip
}

// Bytes per parameter, precision.md §2.1:
//   - fp8 / int8: 1 (per-channel or block scales ≈ 0.0002 B, ignored)
//   - awq / gptq int4 with group size 128: 0.5 + 2/128 (fp16 scale) + 0.5/128 (4-bit zero) ≈ 0.52
//   - nf4 (bitsandbytes, fp32 absmax per 64): 4.5 bits = 0.5625 B
//   - nf4 with double quantization: 4.127 bits ≈ 0.516 B (QLoRA paper §3, memory-model.md §6.1)
//   - mxfp4: 4 + 8/32 bits = 0.53125 B; nvfp4: 4 + 8/16 bits = 0.5625 B
var weightFormats = map[string]weightFormat{
	"fp32":   {name: "fp32", linearBytes: 4, otherBytes: 4},
	"fp16":   {name: "fp16", linearBytes: 2, otherBytes: 2},
	"bf16":   {name: "bf16", linearBytes: 2, otherBytes: 2},
	"fp8":    {name: "fp8", linearBytes: 1, otherBytes: 2},
	"int8":   {name: "int8", linearBytes: 1, otherBytes: 2},
	"awq":    {name: "awq", linearBytes: int4GroupBytes(128), otherBytes: 2},
	"gptq":   {name: "gptq", linearBytes: int4GroupBytes(128), otherBytes: 2},
	"nf4":    {name: "nf4", linearBytes: 0.5625, otherBytes: 2},
	"nf4-dq": {name: "nf4-dq", linearBytes: 4.127 / 8, otherBytes: 2},
	"mxfp4":  {name: "mxfp4", linearBytes: 0.53125, otherBytes: 2},
	"nvfp4":  {name: "nvfp4", linearBytes: 0.5625, otherBytes: 2},
}

// int4GroupBytes is the storage of one int4 weight with an fp16 scale and a
// packed 4-bit zero point per group of g input rows (AWQ qweight/qzeros/
// scales, GPTQ qweight/qzeros/scales: vllm-project/vllm
// vllm/model_executor/layers/quantization/awq.py and gptq.py
// create_weights); g ≤ 0 is one group per output channel (group_size -1),
// whose scales are negligible.
func int4GroupBytes(g int) float64 {
	if g <= 0 {
		return 0.5
	}
	return 0.5 + 2/float64(g) + 0.5/float64(g)
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

// checkpointFormat maps a checkpoint's quantization_config to a weight
// format, with the group size and the modules it leaves unquantized.
func checkpointFormat(q *Quantization) (weightFormat, bool) {
	f, ok := checkpointScheme(q)
	if !ok {
		return f, false
	}
	if (f.name == "gptq" || f.name == "awq") && q.GroupSize != 0 {
		f.linearBytes = int4GroupBytes(q.GroupSize)
	}
	f.skip = q.Skip
	return f, true
}

func checkpointScheme(q *Quantization) (weightFormat, bool) {
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
func (m *Model) quantizableParams() int64 { return m.quantizedParams(quantSkip{}) }

// quantizedParams is quantizableParams less the modules skip leaves in 16
// bits.
func (m *Model) quantizedParams(skip quantSkip) int64 {
	strip := *m
	strip.LinearBias, strip.QKVBias, strip.QKNorm = false, false, false
	if strip.MoE != nil {
		e := *strip.MoE
		e.RouterBias, e.ExpertBias = false, false
		strip.MoE = &e
	}
	attn := strip.AttentionParams()
	if a := m.MLA; a != nil {
		attn -= int64(a.QLoRARank + a.KVLoRARank) // the two latent norms
	}
	L := float64(m.Layers)
	keep := func(skipped int) float64 { return max(L-float64(skipped), 0) / L }
	q := float64(m.Layers) * float64(attn) * keep(skip.Attention)
	mlpKeep := keep(skip.MLP)
	q += float64(m.Layers-m.moeLayers()) * float64(strip.DenseMLPParams()) * mlpKeep
	q += float64(m.DecoderLayers) * float64(2*attn+strip.DenseMLPParams()) // encoder-decoder: decoder blocks
	if e := strip.MoE; e != nil {
		router := int64(m.Hidden) * int64(e.Experts)
		experts := strip.MoEParams() - router
		n := float64(m.moeLayers())
		q += n * float64(experts) * min(mlpKeep, keep(skip.Experts))
		q += n * float64(router) * min(mlpKeep, keep(skip.Router))
	}
	return int64(q)
}

func boolInt64(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// weightBytes is the total weight storage of m in format f.
func weightBytes(m *Model, f weightFormat) int64 {
	q := m.quantizedParams(f.skip)
	other := m.Params() - q
	if other < 0 {
		other = 0
	}
	return int64(float64(q)*f.linearBytes + float64(other)*f.otherBytes)
}
