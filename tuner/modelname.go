package tuner

import (
	"regexp"
	"slices"
	"strings"
)

// sizeToken matches a parameter-count token of a model name: "8b", "0.5b",
// "135m", "8x7b".
var sizeToken = regexp.MustCompile(`^(\d+x)?\d+(\.\d+)?[bm]$`)

// quantTokens name a weight format in a model id ("...-AWQ", "-FP8",
// "-bnb-4bit"): a name carrying one outside the catalog name it matched
// has weights unlike the catalog checkpoint's, so it is not mapped.
var quantTokens = map[string]bool{
	"fp8": true, "fp4": true, "nvfp4": true, "mxfp4": true, "int4": true, "int8": true, "awq": true,
	"gptq": true, "bnb": true, "4bit": true, "8bit": true, "nf4": true, "gguf": true, "w4a16": true,
	"w8a8": true, "w8a16": true, "exl2": true, "quantized": true,
}

// nameFormats maps the weight-format tokens of a name, as a set (sorted,
// joined by "+"), to the quantization a checkpoint with that name most
// likely carries, where the tokens state its bytes per weight. A name that
// is a catalog model's plus one of these sets
// ("meta-llama/Llama-3.1-405B-Instruct-FP8", "unsloth/llama-3-8b-bnb-4bit")
// maps to the catalog model with these weights; every other set is left
// unmapped: "gptq" names no bit width (Qwen publishes GPTQ-Int4 and
// GPTQ-Int8), "4bit" or "int4" alone no scheme (AWQ, GPTQ and MLX
// checkpoints all say it), "awq" with "fp8" two schemes, and so on.
//   - fp8: 1 byte per quantized weight, whichever FP8 scheme the
//     config.json names (fp8, fbgemm_fp8, compressed-tensors float): vLLM
//     loads each as float8_e4m3fn with per-tensor, per-channel or block
//     scales (vllm-project/vllm vllm/model_executor/layers/quantization/
//     fp8.py, fbgemm_fp8.py create_weights), checkpointFormat's "fp8".
//   - awq: int4 with an fp16 scale and a 4-bit zero per group of 128
//     input rows: the quant_config of AutoAWQ's examples
//     (casper-hansen/AutoAWQ examples/quantize.py @ 18c5208: zero_point true,
//     q_group_size 128, w_bit 4), which the AWQ checkpoints on the Hub
//     mostly keep; vLLM reads group_size from quantization_config
//     (vllm/model_executor/layers/quantization/awq.py from_config).
//   - bnb with nf4 or 4bit: a bitsandbytes 4-bit checkpoint, the names
//     unsloth ("-bnb-4bit", "-unsloth-bnb-4bit") and axolotl-quants
//     ("-bnb-nf4") publish; transformers reads its quantization_config
//     (quant_method bitsandbytes, load_in_4bit) as pre-quantized and loads
//     the weights 4-bit whatever the recipe asks (get_hf_quantizer,
//     huggingface/transformers quantizers/auto.py), so a QLoRA recipe on
//     it quantizes nothing more and holds the base once. checkpointFormat
//     sizes it as nf4 (0.5625 B per weight); whether the checkpoint
//     double-quantizes its scales the name cannot say. nf4 without bnb
//     stays unmapped (torchao and others store NF4 their own way).
//   - bnb with 8bit or int8: a bitsandbytes LLM.int8 checkpoint (load_in_8bit),
//     1 byte per weight (checkpointFormat's int8).
//
// What the name cannot say: which modules the checkpoint leaves in 16
// bits (quantization_config modules_to_not_convert or ignore). Meta's
// Llama-3.1-405B-Instruct-FP8 is fbgemm_fp8, and the Llama 3 paper (§6.2
// "FP8 quantization") quantizes the feed-forward layers only, not
// self-attention and not the first and last layers: about 72B attention
// and 5B MLP weights of the 405B stay bf16, which 1 byte per weight
// undercounts by about 77 GB in all (NVIDIA's FP8 release of the same
// model, modelopt, quantizes every linear layer of the blocks). So the
// weights of a name-mapped quantized model are a lower bound, and the
// mapping an assumed input.
var nameFormats = map[string]Quantization{
	"fp8":          {Method: "fp8", Bits: 8},
	"awq":          {Method: "awq", Bits: 4, GroupSize: 128},
	"bnb+nf4":      {Method: "bitsandbytes", Bits: 4},
	"4bit+bnb":     {Method: "bitsandbytes", Bits: 4},
	"4bit+bnb+nf4": {Method: "bitsandbytes", Bits: 4},
	"8bit+bnb":     {Method: "bitsandbytes", Bits: 8},
	"bnb+int8":     {Method: "bitsandbytes", Bits: 8},
}

// nameTokens splits the part of a model id after its last "/" into
// lower-case tokens at every character other than a letter, a digit or a
// dot: "Qwen2.5-7B-Instruct" is qwen2.5, 7b, instruct.
func nameTokens(id string) []string {
	id = strings.TrimRight(id, "/") // a weights directory: gs://bucket/name/
	name := strings.ToLower(id[strings.LastIndex(id, "/")+1:])
	return strings.FieldsFunc(name, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.')
	})
}

// ModelByName maps a model id the catalog does not hold, such as a
// fine-tune's ("acme/llama-3.1-8b-sft-v2", "my-org/Qwen2.5-7B-Instruct-ft"),
// to the one catalog model whose name it contains, by name alone. A
// catalog name (an id or alias, after its "/") counts when its tokens
// appear in a row in the id's and it carries a size token (8b, 0.5b,
// 135m, 8x7b): a family and a size. Where the names found overlap, the
// longest wins (qwen2.5-7b-instruct over qwen2.5-7b). There must be one
// model left, and every size token of the id must lie in its name: an id
// naming two models or two sizes ("llama-3.1-8b-pruned-to-1b") maps to
// none. Weight-format tokens outside the catalog name
// ("llama-3.1-8b-sft-awq", "Llama-4-Scout-17B-16E-Linearized-bnb-nf4")
// map only when together they state the bytes (nameFormats) and the
// catalog model is unquantized: the model returned is then a copy with
// that Quant ("Llama-3.1-405B-Instruct-FP8" is Llama-3.1-405B-Instruct
// with fp8 weights); any other set ("...-GPTQ-Int4", "...-4bit") maps to
// none, its weights being unknown. Other words outside the catalog name
// (sft, dpo, bf16, linearized) do not stop a match. It returns the model
// and the catalog name that matched.
//
// The answer is a guess from the name, not the checkpoint: a caller must
// treat it, and its Quant when the name set it, as an assumed input.
func (c *Catalog) ModelByName(id string) (*Model, string, bool) {
	toks := nameTokens(id)
	if len(toks) == 0 {
		return nil, "", false
	}
	type match struct {
		m          *Model
		name       string
		start, end int
	}
	var found []match
	for _, m := range c.models {
		for _, n := range append([]string{m.ID}, m.Aliases...) {
			nt := nameTokens(n)
			if !hasSize(nt) {
				continue
			}
			for i := 0; i+len(nt) <= len(toks); i++ {
				if equalTokens(toks[i:i+len(nt)], nt) {
					found = append(found, match{m, n, i, i + len(nt)})
				}
			}
		}
	}
	// Keep the matches no longer match contains.
	var kept []match
	for _, a := range found {
		inside := false
		for _, b := range found {
			if b.start <= a.start && a.end <= b.end && b.end-b.start > a.end-a.start {
				inside = true
				break
			}
		}
		if !inside {
			kept = append(kept, a)
		}
	}
	if len(kept) == 0 {
		return nil, "", false
	}
	best := kept[0]
	for _, k := range kept[1:] {
		if k.m != best.m {
			return nil, "", false
		}
	}
	formats := map[string]bool{}
	for i, t := range toks {
		if i >= best.start && i < best.end {
			continue
		}
		if sizeToken.MatchString(t) {
			return nil, "", false
		}
		if quantTokens[t] {
			formats[t] = true
		}
	}
	switch {
	case len(formats) == 0:
		return linearized(best.m, toks), best.name, true
	case best.m.Quant != nil:
		return nil, "", false
	}
	q, ok := nameFormats[strings.Join(sortedKeys(formats), "+")]
	if !ok {
		return nil, "", false
	}
	m := *best.m
	m.Quant = &q
	return linearized(&m, toks), best.name, true
}

// linearized returns m with its routed experts per-expert modules when the
// id's tokens say "linearized": axolotl's re-packed Llama 4 replaces the
// fused Llama4TextExperts with one nn.Linear per expert and projection
// (axolotl-ai-cloud/axolotl src/axolotl/monkeypatch/models/llama4/modeling.py
// @ 102fdac6), so ZeRO-3 and FSDP gather one expert's matrix at a time.
func linearized(m *Model, toks []string) *Model {
	if m.MoE == nil || !m.MoE.Fused || !slices.Contains(toks, "linearized") {
		return m
	}
	c := *m
	moe := *m.MoE
	moe.Fused = false
	c.MoE = &moe
	return &c
}

func hasSize(toks []string) bool {
	for _, t := range toks {
		if sizeToken.MatchString(t) {
			return true
		}
	}
	return false
}

// equalTokens compares an id's tokens a with a catalog name's b. A
// version token of the catalog name matches the id's token with its dots
// dropped ("3.1" and "31", "qwen2.5" and "qwen25"): Kubernetes object
// names and the storage paths named after them cannot hold a dot (RFC 1035
// labels, kubernetes.io/docs/concepts/overview/working-with-objects/names),
// so a model written into one loses its dots ("llama-31-8b-instruct").
// Size tokens must match as written.
func equalTokens(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] && (sizeToken.MatchString(b[i]) || !strings.Contains(b[i], ".") || strings.ReplaceAll(b[i], ".", "") != a[i]) {
			return false
		}
	}
	return true
}
