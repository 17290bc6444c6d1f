package cmdline

import (
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// Text Generation Inference (TGI) launches its model server with
// text-generation-launcher, whose options each read a flag or, when the
// flag is absent, an environment variable of the same name in upper snake
// case (clap's `#[clap(long, env)]`: --model-id or MODEL_ID). Source:
// huggingface/text-generation-inference launcher/src/main.rs @ db931fcf
// (struct Args, find_num_shards). The images' ENTRYPOINT runs the launcher
// with the container's args (Dockerfile @ db931fcf: /tgi-entrypoint.sh
// execs `text-generation-launcher $@`; older releases name the launcher
// itself).

// TGIOption is one launcher option a container states.
type TGIOption struct {
	Name  string // the long option, kebab-case without dashes: "model-id"
	Value string
	// Env is the variable it was read from; "" for a flag.
	Env string
	// Arg is the argv element holding the flag (an index into command
	// followed by args); -1 for an env variable.
	Arg int
	// Unknown marks a value set from something the manifest does not
	// state (a $(VAR) of a valueFrom variable).
	Unknown bool
}

// TGI is a text-generation-launcher a container runs, with the options it
// states.
type TGI struct {
	Options map[string]TGIOption
}

// tgiImage matches the images whose ENTRYPOINT is the launcher:
// ghcr.io/huggingface/text-generation-inference[:tag] and the Hugging Face
// deep learning containers for Google Cloud
// (…/huggingface-text-generation-inference-cu124.2-3…; source:
// huggingface/Google-Cloud-Containers containers/tgi).
var tgiImage = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(^|/)(huggingface/)?(huggingface-)?text-generation-inference([-.][^/]*)?$`)
})

// envRef matches a $(NAME) reference Kubernetes expands in args.
var envRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`) })

// tgiValueOptions are the launcher options that take a value and that a
// memory estimate reads.
var tgiValueOptions = map[string]bool{
	"model-id": true, "num-shard": true, "sharded": true, "quantize": true, "dtype": true,
	"max-input-tokens": true, "max-input-length": true, "max-total-tokens": true,
	"max-batch-prefill-tokens": true, "max-batch-total-tokens": true, "cuda-memory-fraction": true,
	"kv-cache-dtype": true, "revision": true, "port": true, "hostname": true,
}

// tgiEnv is the variable each option falls back to.
func tgiEnv(name string) string { return strings.ToUpper(strings.ReplaceAll(name, "-", "_")) }

// RecognizeTGI returns the TGI launcher a container runs, or nil: an image
// whose ENTRYPOINT is the launcher and no command, or a command whose
// program is text-generation-launcher. Flags win over env variables, as
// clap reads them.
func RecognizeTGI(ct Container) *TGI {
	var flags []Arg
	switch {
	case len(ct.Command) == 0 && isTGIImage(ct.Image):
		flags = ct.Args
	case len(ct.Command) > 0 && path.Base(ct.Command[0].Text) == "text-generation-launcher":
		flags = append(append([]Arg(nil), ct.Command[1:]...), ct.Args...)
	default:
		return nil
	}
	off := len(ct.Command)
	if len(ct.Command) > 0 {
		off = 1
	}
	t := &TGI{Options: map[string]TGIOption{}}
	for name := range tgiValueOptions {
		if v, ok := ct.Env[tgiEnv(name)]; ok {
			t.Options[name] = TGIOption{Name: name, Value: v, Env: tgiEnv(name), Arg: -1}
		} else if ct.EnvUnknown != nil && ct.EnvUnknown(tgiEnv(name)) {
			t.Options[name] = TGIOption{Name: name, Env: tgiEnv(name), Arg: -1, Unknown: true}
		}
	}
	for i := 0; i < len(flags); i++ {
		s := flags[i].Text
		if !strings.HasPrefix(s, "--") {
			continue
		}
		name, val, has := strings.Cut(s[2:], "=")
		if !tgiValueOptions[name] {
			continue
		}
		at := i
		if !has {
			if i+1 >= len(flags) {
				break
			}
			i++
			val = flags[i].Text
		}
		o := TGIOption{Name: name, Arg: at + off}
		o.Value, o.Unknown = expandEnv(val, ct.Env)
		t.Options[name] = o
	}
	return t
}

// expandEnv replaces the $(NAME) references Kubernetes expands in args;
// unknown is true when one names a variable without a stated value.
func expandEnv(s string, env map[string]string) (string, bool) {
	unknown := false
	out := envRef().ReplaceAllStringFunc(s, func(m string) string {
		v, ok := env[m[2:len(m)-1]]
		if !ok {
			unknown = true
		}
		return v
	})
	return out, unknown
}

func isTGIImage(image string) bool {
	name := image
	if i := strings.IndexByte(name, '@'); i >= 0 {
		name = name[:i]
	}
	if i := strings.LastIndexByte(name, ':'); i > strings.LastIndexByte(name, '/') {
		name = name[:i]
	}
	return tgiImage().MatchString(strings.ToLower(name))
}

// tgiQuantize maps --quantize to the memory model's weight formats
// (launcher/src/main.rs enum Quantization @ db931fcf): bitsandbytes is
// 8-bit there (LLM.int8), nf4/fp4 4-bit with a blockwise absmax that TGI
// quantizes again (Params4bit(compress_statistics=True): double
// quantization, nf4-dq; server/text_generation_server/layers/bnb.py
// Linear4bit @ db931fcf, and utils/layers.py Linear4bit @ v1.4.3
// e6bb3ff8); eetq is int8 weights; marlin runs GPTQ-format 4-bit
// checkpoints. exl2 and compressed-tensors carry their bits in the
// checkpoint: no mapping.
var tgiQuantize = map[string]string{
	"awq": "awq", "gptq": "gptq", "marlin": "gptq", "fp8": "fp8", "eetq": "int8",
	"bitsandbytes": "int8", "bitsandbytes-nf4": "nf4-dq", "bitsandbytes-fp4": "nf4-dq",
}

// ServeConfig maps the launcher's options to the serving memory model's
// inputs, written as vLLM's options (the model server the estimate is
// built for), with the option each came from. gpus is the container's GPU
// count, which TGI shards over when --num-shard is not given. err is set
// when something the estimate rests on is unknown: no model, a value the
// manifest does not state, or a quantization without a mapping.
//
// Without --max-total-tokens the launcher leaves the token budget to the
// server (launcher/src/main.rs @ db931fcf: max_total_tokens "Default to
// min(max_allocatable, max_position_embeddings)"), whose warmup
// (server/text_generation_server/models/flash_causal_lm.py warmup @
// db931fcf) first runs one prefill batch of max_batch_prefill_tokens
// tokens with their KV blocks allocated, under cuda_memory_fraction, and
// only then fits max_total_tokens to the blocks the memory left holds
// (min(num_blocks × BLOCK_SIZE, model_max_length,
// max_position_embeddings)), never fewer than the warmup's. So what must
// fit whatever TGI picks is the weights plus that prefill: its
// activations and one sequence of that many tokens' KV cache. The
// prefill size is --max-batch-prefill-tokens when stated, else the
// launcher's default (main.rs: compute_optimal or 4096, at most
// max_position_embeddings, lowered to what its own VRAM estimate allows
// on GPUs it knows); assumed then names it and why, and a verdict that
// rests on it is no more than advice.
func (t *TGI) ServeConfig(gpus int) (cfg map[string]any, from map[string]string, assumed string, err error) {
	cfg, from = map[string]any{}, map[string]string{}
	get := func(name string) (TGIOption, bool, error) {
		o, ok := t.Options[name]
		if ok && o.Unknown {
			return o, false, fmt.Errorf("%s is set from a value the manifest does not state", name)
		}
		return o, ok, nil
	}
	model, ok, err := get("model-id")
	if err != nil {
		return nil, nil, "", err
	}
	if !ok || model.Value == "" {
		return nil, nil, "", fmt.Errorf("no --model-id or MODEL_ID")
	}
	cfg["model"], from["model"] = model.Value, "model-id"
	shards := 0
	if o, ok, err := get("num-shard"); err != nil {
		return nil, nil, "", err
	} else if ok {
		n, err := strconv.Atoi(strings.TrimSpace(o.Value))
		if err != nil || n < 1 {
			return nil, nil, "", fmt.Errorf("num-shard %q is not a positive integer", o.Value)
		}
		shards = n
		from["tensor-parallel-size"] = "num-shard"
	} else if o, ok, err := get("sharded"); err != nil {
		return nil, nil, "", err
	} else if ok && strings.EqualFold(o.Value, "false") {
		shards = 1
		from["tensor-parallel-size"] = "sharded"
	} else if gpus > 0 {
		shards = gpus // (None, None) => num_cuda_devices()
	}
	if shards > 0 {
		cfg["tensor-parallel-size"] = int64(shards)
	}
	total, hasTotal, err := get("max-total-tokens")
	if err != nil {
		return nil, nil, "", err
	}
	if hasTotal {
		n, err := strconv.ParseInt(strings.TrimSpace(total.Value), 10, 64)
		if err != nil || n < 1 {
			return nil, nil, "", fmt.Errorf("max-total-tokens %q is not a positive integer", total.Value)
		}
		cfg["max-model-len"], from["max-model-len"] = n, "max-total-tokens"
	}
	if o, ok, err := get("max-batch-prefill-tokens"); err != nil {
		return nil, nil, "", err
	} else if ok {
		n, err := strconv.ParseInt(strings.TrimSpace(o.Value), 10, 64)
		if err != nil || n < 1 {
			return nil, nil, "", fmt.Errorf("max-batch-prefill-tokens %q is not a positive integer", o.Value)
		}
		cfg["max-num-batched-tokens"], from["max-num-batched-tokens"] = n, "max-batch-prefill-tokens"
	}
	if !hasTotal {
		// The warmup's prefill batch is the one sequence that must fit.
		prefill, ok := cfg["max-num-batched-tokens"].(int64)
		if ok {
			assumed = "the stated max_batch_prefill_tokens as one sequence: TGI fits max_total_tokens to the memory its warmup prefill leaves"
			from["max-model-len"] = "max-batch-prefill-tokens"
		} else {
			prefill = TGIDefaultPrefillTokens
			cfg["max-num-batched-tokens"] = prefill
			assumed = "TGI's default max_batch_prefill_tokens as one sequence: TGI fits max_total_tokens to the memory its warmup prefill leaves, and may prefill fewer on a GPU it knows"
		}
		cfg["max-model-len"] = prefill
	}
	// cuda_memory_fraction defaults to 1.0: the whole visible memory.
	cfg["gpu-memory-utilization"] = 1.0
	if o, ok, err := get("cuda-memory-fraction"); err != nil {
		return nil, nil, "", err
	} else if ok {
		f, err := strconv.ParseFloat(strings.TrimSpace(o.Value), 64)
		if err != nil || f <= 0 || f > 1 {
			return nil, nil, "", fmt.Errorf("cuda-memory-fraction %q is not in (0, 1]", o.Value)
		}
		cfg["gpu-memory-utilization"], from["gpu-memory-utilization"] = f, "cuda-memory-fraction"
	}
	if o, ok, err := get("quantize"); err != nil {
		return nil, nil, "", err
	} else if ok {
		q, known := tgiQuantize[strings.ToLower(strings.TrimSpace(o.Value))]
		if !known {
			return nil, nil, "", fmt.Errorf("quantize %q has no weight format in the memory model", o.Value)
		}
		cfg["quantization"], from["quantization"] = q, "quantize"
	}
	if o, ok, err := get("dtype"); err != nil {
		return nil, nil, "", err
	} else if ok {
		cfg["dtype"], from["dtype"] = o.Value, "dtype"
	}
	return cfg, from, assumed, nil
}

// TGIDefaultPrefillTokens is the launcher's default max_batch_prefill_tokens
// for a text model when it cannot estimate the GPU's optimum
// (launcher/src/main.rs @ db931fcf: default_optimal 4096; 10000 for
// Qwen2-VL and 8000 for Gemma 3, vision models).
const TGIDefaultPrefillTokens = int64(4096)

// TGIDefaultMaxTotalTokens is the max_total_tokens the launcher of a TGI
// release uses when none is given, ok false where the default depends on
// the model or the memory left. 1.x: a fixed 2048 (launcher/src/main.rs
// @ v1.0.0 and v1.1.0 7a6fad6a: `#[clap(default_value = "2048", long,
// env)] max_total_tokens`); 2.x defaults to min(max_position_embeddings,
// 4096) and 3.x to what the memory left allows, neither a fixed number.
func TGIDefaultMaxTotalTokens(release string) (int64, bool) {
	r := strings.TrimPrefix(strings.TrimSpace(release), "v")
	if major, _, _ := strings.Cut(r, "."); major == "1" && strings.Contains(r, ".") {
		return 2048, true
	}
	return 0, false
}
