package cmdline

import (
	"slices"
	"strings"
)

// OptionType is the value type of a vLLM option as argparse converts it.
type OptionType string

// Option types. TypeJSON options take a JSON object (or, for some, a
// shorthand such as a level number); their values stay strings.
const (
	TypeString OptionType = "string"
	TypeInt    OptionType = "int"
	TypeFloat  OptionType = "float"
	TypeBool   OptionType = "bool"
	TypeJSON   OptionType = "json"
)

// Option describes one `vllm serve` option: its canonical long name, value
// type and spellings.
type Option struct {
	// Name is the long name without dashes, kebab-case
	// ("tensor-parallel-size").
	Name string
	Type OptionType
	// Short lists single-dash aliases ("-tp").
	Short []string
	// Human marks ints that accept human-readable suffixes: k/m/g/t
	// decimal, K/M/G/T binary ("32k", "1M").
	Human bool
	// Multi marks options that take one or more values (argparse
	// nargs="+"): `--served-model-name a b`.
	Multi bool
	// Negatable marks booleans that newer vLLM registers with
	// BooleanOptionalAction, so `--no-<name>` exists. Older releases only
	// had `--<name>` (store_true).
	Negatable bool
	// DefaultOn marks booleans that current vLLM turns on by default, so
	// turning them off needs `--no-<name>` rather than dropping the flag.
	DefaultOn bool
	// OptionalValue marks options whose value may be omitted (argparse
	// nargs="?"), such as old vLLM's `--enable-chunked-prefill [true|false]`.
	OptionalValue bool
}

// options is the single table of known vLLM server options. Names, types,
// aliases and booleans follow /work/shared/reference/vllm.md §1–2 (short
// aliases -tp, -pp, -dp, -q, -O, -cc, -ac, -sc; human-readable ints; the
// BooleanOptionalAction `--no-` forms) and vllm-project/vllm
// vllm/engine/arg_utils.py (AU-old @ 001999d, AU-new @ 99d7eb5: the
// EngineArgs fields, aliases -dcp -dpn -dpr -dpl -dpa -dpp -dpb, and the
// human_readable_ints set), vllm/utils/argparse_utils.py @ 00da11e (-O
// rewrites to --optimization-level) and vllm/entrypoints/openai/cli_args.py
// (frontend options; those of vllm/entrypoints/launchers/cli_args.py @
// 5606eaf, its newer home, are held to the schema by
// internal/normalize TestVLLMSchemaKnowsFrontendOptions: --grpc and
// --headless are store_true there, the dataclass booleans
// BooleanOptionalAction). -ep, -pcp and -asc are as vllm.md lists (-ep) or as
// third-party tools that mirror vLLM's parser spell them (-pcp, -asc; not
// checked against vLLM's own source). Removed and deprecated options stay
// in the table so old manifests parse; the schema layer decides what to
// say about them. Every top-level key of schemas/vllm.cue is an option
// string here (a name, or the --no- form of a Negatable boolean; held by
// internal/normalize TestVLLMSchemaOptionsAreParserOptions), so that
// abbreviations are resolved against every option gpulint knows. Sorted by
// name.
var options = []Option{
	{Name: "additional-config", Type: TypeJSON},
	{Name: "aggregate-engine-logging", Type: TypeBool, Negatable: true},
	{Name: "all2all-backend", Type: TypeString},
	{Name: "allow-credentials", Type: TypeBool, Negatable: true},
	{Name: "allow-deprecated-quantization", Type: TypeBool, Negatable: true},
	{Name: "allowed-headers", Type: TypeJSON},
	{Name: "allowed-local-media-path", Type: TypeString},
	{Name: "allowed-media-domains", Type: TypeString, Multi: true},
	{Name: "allowed-methods", Type: TypeJSON},
	{Name: "allowed-origins", Type: TypeJSON},
	{Name: "api-key", Type: TypeString},
	{Name: "api-server-count", Type: TypeInt, Short: []string{"-asc"}},
	{Name: "async-scheduling", Type: TypeBool, Negatable: true},
	{Name: "attention-backend", Type: TypeString},
	{Name: "attention-config", Type: TypeJSON, Short: []string{"-ac"}},
	{Name: "block-size", Type: TypeInt},
	{Name: "calculate-kv-scales", Type: TypeBool, Negatable: true},
	{Name: "chat-template", Type: TypeString},
	{Name: "chat-template-content-format", Type: TypeString},
	{Name: "code-revision", Type: TypeString},
	{Name: "cohere-format", Type: TypeString},
	{Name: "cohere-is-reasoning-model", Type: TypeBool, Negatable: true, DefaultOn: true},
	{Name: "collect-detailed-traces", Type: TypeString, Multi: true},
	{Name: "compilation-config", Type: TypeJSON, Short: []string{"-cc"}},
	{Name: "config", Type: TypeString},
	{Name: "config-format", Type: TypeString},
	{Name: "convert", Type: TypeString},
	{Name: "cp-kv-cache-interleave-size", Type: TypeInt},
	{Name: "cpu-offload-gb", Type: TypeFloat},
	{Name: "cpu-offload-params", Type: TypeString, Multi: true},
	{Name: "cuda-graph-sizes", Type: TypeInt, Multi: true},
	{Name: "cudagraph-capture-sizes", Type: TypeInt, Multi: true},
	{Name: "cudagraph-metrics", Type: TypeBool, Negatable: true},
	{Name: "data-parallel-address", Type: TypeString, Short: []string{"-dpa"}},
	{Name: "data-parallel-backend", Type: TypeString, Short: []string{"-dpb"}},
	{Name: "data-parallel-external-lb", Type: TypeBool, Negatable: true},
	{Name: "data-parallel-hybrid-lb", Type: TypeBool, Negatable: true},
	{Name: "data-parallel-rank", Type: TypeInt, Short: []string{"-dpn"}},
	{Name: "data-parallel-rpc-port", Type: TypeInt, Short: []string{"-dpp"}},
	{Name: "data-parallel-size", Type: TypeInt, Short: []string{"-dp"}},
	{Name: "data-parallel-size-local", Type: TypeInt, Short: []string{"-dpl"}},
	{Name: "data-parallel-start-rank", Type: TypeInt, Short: []string{"-dpr"}},
	{Name: "data-parallel-supervisor-port", Type: TypeInt},
	{Name: "dbo-decode-token-threshold", Type: TypeInt},
	{Name: "dbo-prefill-token-threshold", Type: TypeInt},
	{Name: "dcp-kv-cache-interleave-size", Type: TypeInt},
	{Name: "decode-context-parallel-size", Type: TypeInt, Short: []string{"-dcp"}},
	{Name: "default-chat-template-kwargs", Type: TypeJSON},
	{Name: "default-mm-loras", Type: TypeJSON},
	{Name: "device", Type: TypeString},
	{Name: "disable-access-log-for-endpoints", Type: TypeString},
	{Name: "disable-async-output-proc", Type: TypeBool, Negatable: true},
	{Name: "disable-cascade-attn", Type: TypeBool, Negatable: true},
	{Name: "disable-chunked-mm-input", Type: TypeBool, Negatable: true},
	{Name: "disable-custom-all-reduce", Type: TypeBool, Negatable: true},
	{Name: "disable-fastapi-docs", Type: TypeBool, Negatable: true},
	{Name: "disable-frontend-multiprocessing", Type: TypeBool, Negatable: true},
	{Name: "disable-hybrid-kv-cache-manager", Type: TypeBool, Negatable: true},
	{Name: "disable-log-requests", Type: TypeBool, Negatable: true},
	{Name: "disable-log-stats", Type: TypeBool, Negatable: true},
	{Name: "disable-logprobs-during-spec-decoding", Type: TypeBool, Negatable: true},
	{Name: "disable-mm-preprocessor-cache", Type: TypeBool, Negatable: true},
	{Name: "disable-nccl-for-dp-synchronization", Type: TypeBool, Negatable: true},
	{Name: "disable-sliding-window", Type: TypeBool, Negatable: true},
	{Name: "disable-uvicorn-access-log", Type: TypeBool, Negatable: true},
	{Name: "distributed-executor-backend", Type: TypeString},
	{Name: "download-dir", Type: TypeString},
	{Name: "dp-supervisor-probe-failure-threshold", Type: TypeInt},
	{Name: "dp-supervisor-probe-interval-s", Type: TypeFloat},
	{Name: "dp-supervisor-probe-timeout-s", Type: TypeFloat},
	{Name: "dtype", Type: TypeString},
	{Name: "ec-transfer-config", Type: TypeJSON},
	{Name: "enable-auto-tool-choice", Type: TypeBool, Negatable: true},
	{Name: "enable-chunked-prefill", Type: TypeBool, Negatable: true, DefaultOn: true, OptionalValue: true},
	{Name: "enable-dbo", Type: TypeBool, Negatable: true},
	{Name: "enable-elastic-ep", Type: TypeBool, Negatable: true},
	{Name: "enable-eplb", Type: TypeBool, Negatable: true},
	{Name: "enable-expert-parallel", Type: TypeBool, Short: []string{"-ep"}, Negatable: true},
	{Name: "enable-flash-late-interaction", Type: TypeBool, Negatable: true, DefaultOn: true},
	{Name: "enable-flashinfer-autotune", Type: TypeBool, Negatable: true},
	{Name: "enable-force-include-usage", Type: TypeBool, Negatable: true},
	{Name: "enable-layerwise-nvtx-tracing", Type: TypeBool, Negatable: true},
	{Name: "enable-log-deltas", Type: TypeBool, Negatable: true},
	{Name: "enable-log-outputs", Type: TypeBool, Negatable: true},
	{Name: "enable-log-requests", Type: TypeBool, Negatable: true},
	{Name: "enable-logging-iteration-details", Type: TypeBool, Negatable: true},
	{Name: "enable-lora", Type: TypeBool, Negatable: true},
	{Name: "enable-lora-bias", Type: TypeBool, Negatable: true},
	{Name: "enable-mfu-metrics", Type: TypeBool, Negatable: true},
	{Name: "enable-mm-embeds", Type: TypeBool, Negatable: true},
	{Name: "enable-multimodal-encoder-data-parallel", Type: TypeBool, Negatable: true},
	{Name: "enable-offline-docs", Type: TypeBool, Negatable: true},
	{Name: "enable-per-request-metrics", Type: TypeBool, Negatable: true},
	{Name: "enable-prefix-caching", Type: TypeBool, Negatable: true, DefaultOn: true},
	{Name: "enable-prompt-adapter", Type: TypeBool, Negatable: true},
	{Name: "enable-prompt-embeds", Type: TypeBool, Negatable: true},
	{Name: "enable-prompt-tokens-details", Type: TypeBool, Negatable: true},
	{Name: "enable-reasoning", Type: TypeBool, Negatable: true},
	{Name: "enable-request-id-headers", Type: TypeBool, Negatable: true},
	{Name: "enable-return-routed-experts", Type: TypeBool, Negatable: true},
	{Name: "enable-server-load-tracking", Type: TypeBool, Negatable: true},
	{Name: "enable-sleep-mode", Type: TypeBool, Negatable: true},
	{Name: "enable-ssl-refresh", Type: TypeBool, Negatable: true},
	{Name: "enable-tokenizer-info-endpoint", Type: TypeBool, Negatable: true},
	{Name: "enable-tower-connector-lora", Type: TypeBool, Negatable: true},
	{Name: "enforce-eager", Type: TypeBool, Negatable: true},
	{Name: "eplb-config", Type: TypeJSON},
	{Name: "eplb-log-balancedness", Type: TypeBool, Negatable: true},
	{Name: "eplb-step-interval", Type: TypeInt},
	{Name: "eplb-window-size", Type: TypeInt},
	{Name: "exclude-tools-when-tool-choice-none", Type: TypeBool, Negatable: true},
	{Name: "expert-placement-strategy", Type: TypeString},
	{Name: "fail-on-environ-validation", Type: TypeBool, Negatable: true},
	{Name: "fingerprint-mode", Type: TypeString},
	{Name: "fingerprint-value", Type: TypeString},
	{Name: "fully-sharded-loras", Type: TypeBool, Negatable: true},
	{Name: "generation-config", Type: TypeString},
	{Name: "gpu-memory-utilization", Type: TypeFloat},
	{Name: "grpc", Type: TypeBool},
	{Name: "guided-decoding-backend", Type: TypeString},
	{Name: "h11-max-header-count", Type: TypeInt},
	{Name: "h11-max-incomplete-event-size", Type: TypeInt},
	{Name: "headless", Type: TypeBool, Negatable: true},
	{Name: "hf-config-path", Type: TypeString},
	{Name: "hf-overrides", Type: TypeJSON},
	{Name: "hf-token", Type: TypeString, OptionalValue: true},
	{Name: "host", Type: TypeString},
	{Name: "ignore-patterns", Type: TypeString, Multi: true},
	{Name: "interleave-mm-strings", Type: TypeBool, Negatable: true},
	{Name: "io-processor-plugin", Type: TypeString},
	{Name: "kernel-config", Type: TypeJSON},
	{Name: "kv-cache-dtype", Type: TypeString},
	{Name: "kv-cache-memory-bytes", Type: TypeInt, Human: true},
	{Name: "kv-cache-metrics", Type: TypeBool, Negatable: true},
	{Name: "kv-cache-metrics-sample", Type: TypeFloat},
	{Name: "kv-events-config", Type: TypeJSON},
	{Name: "kv-offloading-backend", Type: TypeString},
	{Name: "kv-offloading-size", Type: TypeFloat},
	{Name: "kv-sharing-fast-prefill", Type: TypeBool, Negatable: true},
	{Name: "kv-transfer-config", Type: TypeJSON},
	{Name: "language-model-only", Type: TypeBool, Negatable: true},
	{Name: "limit-mm-per-prompt", Type: TypeJSON},
	{Name: "load-format", Type: TypeString},
	{Name: "log-config-file", Type: TypeString},
	{Name: "log-error-stack", Type: TypeBool, Negatable: true},
	{Name: "logits-processor-pattern", Type: TypeString},
	{Name: "logits-processors", Type: TypeString, Multi: true},
	{Name: "logprobs-mode", Type: TypeString},
	{Name: "long-lora-scaling-factors", Type: TypeFloat, Multi: true},
	{Name: "long-prefill-token-threshold", Type: TypeInt},
	{Name: "lora-dtype", Type: TypeString},
	{Name: "lora-extra-vocab-size", Type: TypeInt},
	{Name: "lora-modules", Type: TypeString, Multi: true},
	{Name: "mamba-block-size", Type: TypeInt},
	{Name: "mamba-cache-dtype", Type: TypeString},
	{Name: "mamba-cache-mode", Type: TypeString},
	{Name: "mamba-ssm-cache-dtype", Type: TypeString},
	{Name: "master-addr", Type: TypeString},
	{Name: "master-port", Type: TypeInt},
	{Name: "max-cpu-loras", Type: TypeInt},
	{Name: "max-cudagraph-capture-size", Type: TypeInt},
	{Name: "max-log-len", Type: TypeInt},
	{Name: "max-logprobs", Type: TypeInt},
	{Name: "max-long-partial-prefills", Type: TypeInt},
	{Name: "max-lora-rank", Type: TypeInt},
	{Name: "max-loras", Type: TypeInt},
	{Name: "max-model-len", Type: TypeInt, Human: true},
	{Name: "max-num-batched-tokens", Type: TypeInt, Human: true},
	{Name: "max-num-partial-prefills", Type: TypeInt},
	{Name: "max-num-seqs", Type: TypeInt},
	{Name: "max-parallel-loading-workers", Type: TypeInt},
	{Name: "max-prompt-adapter-token", Type: TypeInt},
	{Name: "max-prompt-adapters", Type: TypeInt},
	{Name: "max-seq-len-to-capture", Type: TypeInt},
	{Name: "media-io-kwargs", Type: TypeJSON},
	{Name: "middleware", Type: TypeString, Multi: true},
	{Name: "mm-encoder-attn-backend", Type: TypeString},
	{Name: "mm-encoder-only", Type: TypeBool, Negatable: true},
	{Name: "mm-encoder-tp-mode", Type: TypeString},
	{Name: "mm-processor-cache-gb", Type: TypeFloat},
	{Name: "mm-processor-cache-type", Type: TypeString},
	{Name: "mm-processor-kwargs", Type: TypeJSON},
	{Name: "mm-shm-cache-max-object-size-mb", Type: TypeInt},
	{Name: "model", Type: TypeString},
	{Name: "model-impl", Type: TypeString},
	{Name: "model-loader-extra-config", Type: TypeJSON},
	{Name: "moe-backend", Type: TypeString},
	{Name: "multi-step-stream-outputs", Type: TypeBool, Negatable: true, DefaultOn: true, OptionalValue: true},
	{Name: "ngram-prompt-lookup-max", Type: TypeInt},
	{Name: "ngram-prompt-lookup-min", Type: TypeInt},
	{Name: "nnodes", Type: TypeInt},
	{Name: "node-rank", Type: TypeInt},
	{Name: "num-gpu-blocks-override", Type: TypeInt},
	{Name: "num-lookahead-slots", Type: TypeInt},
	{Name: "num-redundant-experts", Type: TypeInt},
	{Name: "num-scheduler-steps", Type: TypeInt},
	{Name: "num-speculative-tokens", Type: TypeInt},
	{Name: "offload-backend", Type: TypeString},
	{Name: "offload-group-size", Type: TypeInt},
	{Name: "offload-num-in-group", Type: TypeInt},
	{Name: "offload-params", Type: TypeString, Multi: true},
	{Name: "offload-prefetch-step", Type: TypeInt},
	{Name: "optimization-level", Type: TypeString, Short: []string{"-O"}},
	{Name: "otlp-traces-endpoint", Type: TypeString},
	{Name: "override-attention-dtype", Type: TypeString},
	{Name: "override-generation-config", Type: TypeJSON},
	{Name: "override-neuron-config", Type: TypeJSON},
	{Name: "override-pooler-config", Type: TypeJSON},
	{Name: "performance-mode", Type: TypeString},
	{Name: "pipeline-parallel-size", Type: TypeInt, Short: []string{"-pp"}},
	{Name: "pooler-config", Type: TypeJSON},
	{Name: "port", Type: TypeInt},
	{Name: "preemption-mode", Type: TypeString},
	{Name: "prefill-context-parallel-size", Type: TypeInt, Short: []string{"-pcp"}},
	{Name: "prefix-caching-hash-algo", Type: TypeString},
	{Name: "profiler-config", Type: TypeJSON},
	{Name: "prompt-adapters", Type: TypeString, Multi: true},
	{Name: "pt-load-map-location", Type: TypeString},
	{Name: "qlora-adapter-name-or-path", Type: TypeString},
	{Name: "quantization", Type: TypeString, Short: []string{"-q"}},
	{Name: "ray-workers-use-nsight", Type: TypeBool, Negatable: true},
	{Name: "reasoning-parser", Type: TypeString},
	{Name: "reasoning-parser-plugin", Type: TypeString},
	{Name: "response-role", Type: TypeString},
	{Name: "return-tokens-as-token-ids", Type: TypeBool, Negatable: true},
	{Name: "revision", Type: TypeString},
	{Name: "root-path", Type: TypeString},
	{Name: "rope-scaling", Type: TypeJSON},
	{Name: "rope-theta", Type: TypeFloat},
	{Name: "runner", Type: TypeString},
	{Name: "safetensors-load-strategy", Type: TypeString},
	{Name: "scheduler-cls", Type: TypeString},
	{Name: "scheduler-delay-factor", Type: TypeFloat},
	{Name: "scheduling-policy", Type: TypeString},
	{Name: "seed", Type: TypeInt},
	{Name: "served-model-name", Type: TypeString, Multi: true},
	{Name: "show-hidden-metrics-for-version", Type: TypeString},
	{Name: "skip-mm-profiling", Type: TypeBool, Negatable: true},
	{Name: "skip-tokenizer-init", Type: TypeBool, Negatable: true},
	{Name: "spec-decoding-acceptance-method", Type: TypeString},
	{Name: "specialize-active-lora", Type: TypeBool, Negatable: true},
	{Name: "speculative-config", Type: TypeJSON, Short: []string{"-sc"}},
	{Name: "speculative-disable-by-batch-size", Type: TypeInt},
	{Name: "speculative-disable-mqa-scorer", Type: TypeBool, Negatable: true},
	{Name: "speculative-draft-tensor-parallel-size", Type: TypeInt},
	{Name: "speculative-max-model-len", Type: TypeInt},
	{Name: "speculative-model", Type: TypeString},
	{Name: "speculative-model-quantization", Type: TypeString},
	{Name: "sse-keep-alive-interval", Type: TypeInt},
	{Name: "ssl-ca-certs", Type: TypeString},
	{Name: "ssl-cert-reqs", Type: TypeInt},
	{Name: "ssl-certfile", Type: TypeString},
	{Name: "ssl-ciphers", Type: TypeString},
	{Name: "ssl-keyfile", Type: TypeString},
	{Name: "stream-interval", Type: TypeInt},
	{Name: "structured-outputs-config", Type: TypeJSON},
	{Name: "swap-space", Type: TypeFloat},
	{Name: "task", Type: TypeString},
	{Name: "tensor-parallel-size", Type: TypeInt, Short: []string{"-tp"}},
	{Name: "tokenizer", Type: TypeString},
	{Name: "tokenizer-mode", Type: TypeString},
	{Name: "tokenizer-pool-extra-config", Type: TypeJSON},
	{Name: "tokenizer-pool-size", Type: TypeInt},
	{Name: "tokenizer-pool-type", Type: TypeString},
	{Name: "tokenizer-revision", Type: TypeString},
	{Name: "tokens-only", Type: TypeBool, Negatable: true},
	{Name: "tool-call-parser", Type: TypeString},
	{Name: "tool-parser-plugin", Type: TypeString},
	{Name: "tool-server", Type: TypeString},
	{Name: "trust-remote-code", Type: TypeBool, Negatable: true},
	{Name: "trust-request-chat-template", Type: TypeBool, Negatable: true},
	{Name: "typical-acceptance-sampler-posterior-alpha", Type: TypeFloat},
	{Name: "typical-acceptance-sampler-posterior-threshold", Type: TypeFloat},
	{Name: "ubatch-size", Type: TypeInt},
	{Name: "uds", Type: TypeString},
	{Name: "use-tqdm-on-load", Type: TypeBool, Negatable: true, DefaultOn: true},
	{Name: "use-v2-block-manager", Type: TypeBool, Negatable: true},
	{Name: "uvicorn-log-level", Type: TypeString},
	{Name: "video-pruning-rate", Type: TypeFloat},
	{Name: "weight-transfer-config", Type: TypeJSON},
	{Name: "worker-cls", Type: TypeString},
	{Name: "worker-extension-cls", Type: TypeString},
}

// optionIndex maps every spelling a user may write (long name, short
// alias) to its entry in options. It is built once from the constant table
// and never changed.
var optionIndex = buildOptionIndex(options)

func buildOptionIndex(opts []Option) map[string]int {
	idx := make(map[string]int, 2*len(opts))
	for i, o := range opts {
		idx[o.Name] = i
		for _, s := range o.Short {
			idx[s] = i
		}
	}
	return idx
}

// Options returns a copy of the table of known vLLM server options, sorted
// by name. The schema layer and the parser both read this table.
func Options() []Option {
	out := make([]Option, len(options))
	for i, o := range options {
		o.Short = slices.Clone(o.Short)
		out[i] = o
	}
	return out
}

// LookupOption finds a known option by any spelling: "tensor-parallel-size",
// "--tensor_parallel_size" or "-tp".
func LookupOption(name string) (Option, bool) {
	i, ok := optionIndex[CanonicalName(name)]
	if !ok {
		return Option{}, false
	}
	o := options[i]
	o.Short = slices.Clone(o.Short)
	return o, true
}

// CanonicalName turns a flag spelling into the key used for Flag.Name and
// Config: leading "--" dropped, underscores before the first "." turned
// into dashes (as vLLM's FlexibleArgumentParser does), short aliases
// resolved ("-tp" → "tensor-parallel-size"). An unknown single-dash flag
// keeps its dash ("-x"); an unknown long flag loses its dashes.
func CanonicalName(s string) string {
	if strings.HasPrefix(s, "--") {
		return kebab(s[2:])
	}
	if strings.HasPrefix(s, "-") {
		if i, ok := optionIndex[s]; ok {
			return options[i].Name
		}
		return s
	}
	return kebab(s)
}

// kebab rewrites underscores to dashes in the part of a long name before
// its first dot (dotted JSON sub-keys keep their spelling).
func kebab(s string) string {
	head, tail, dotted := strings.Cut(s, ".")
	head = strings.ReplaceAll(head, "_", "-")
	if dotted {
		return head + "." + tail
	}
	return head
}

// lookupLong resolves a kebab-case long name (no dashes) the way vLLM's
// parser does. vLLM reads its command line with Python's argparse through
// FlexibleArgumentParser, which never passes allow_abbrev=False, so
// argparse's default prefix matching is on from the oldest to the newest
// copy read (vllm-project/vllm): vllm/utils.py @ 004202b (v0.5/v0.6 era,
// no __init__ at all), vllm/utils/argparse_utils.py @ 00da11e (current),
// and the `vllm` CLI's parsers in vllm/entrypoints/cli/main.py and
// serve.py @ 00a5fdd (FlexibleArgumentParser(...) and
// subparsers.add_parser(...), neither with allow_abbrev). So
// `--max-num-seq 8` sets max_num_seqs in every release.
// FlexibleArgumentParser first turns underscores before any "=" or "."
// into dashes (kebab), then argparse (python/cpython Lib/argparse.py,
// _parse_optional and _get_option_tuples; the same from 3.8 to 3.14)
// takes, for a "--" argument that is no option string itself: the part
// before "=" as a prefix, every option string starting with it, and
// refuses the command line ("ambiguous option: --x could match --xa,
// --xb", exit 2) when more than one does. The option strings are the long
// names and, for BooleanOptionalAction booleans, their --no- forms; there
// is no minimum length.
//
// It returns the option, whether the name was the negated form, whether
// it was an abbreviation, and, for an ambiguous prefix, the option strings
// it matches (then opt is nil). Where gpulint's table lacks an option of
// some release, a prefix unique here may still be ambiguous there.
func lookupLong(name string) (opt *Option, negated, abbrev bool, ambiguous []string) {
	if i, ok := optionIndex[name]; ok {
		return &options[i], false, false, nil
	}
	if rest, ok := strings.CutPrefix(name, "no-"); ok {
		if i, ok := optionIndex[rest]; ok && options[i].Type == TypeBool {
			return &options[i], true, false, nil
		}
	}
	if name == "" {
		return nil, false, false, nil
	}
	found, neg := -1, false
	for i := range options {
		o := &options[i]
		for _, s := range optionStrings(o) {
			if !strings.HasPrefix(s, name) {
				continue
			}
			ambiguous = append(ambiguous, "--"+s)
			found, neg = i, s != o.Name
		}
	}
	switch {
	case len(ambiguous) > 1:
		return nil, false, false, ambiguous
	case found < 0:
		return nil, false, false, nil
	}
	return &options[found], neg, true, nil
}

// optionStrings lists the long option strings argparse registers for o:
// its name and, for a BooleanOptionalAction boolean, the --no- form.
func optionStrings(o *Option) []string {
	if o.Negatable {
		return []string{o.Name, "no-" + o.Name}
	}
	return []string{o.Name}
}

// ExpandLong resolves a long option name (kebab-case, without dashes) as
// vLLM's argparse does (lookupLong): the option string it stands for,
// itself when it is one, or the one option string it is a prefix of
// ("max-num-seq" gives "max-num-seqs", "no-enable-prefix" gives
// "no-enable-prefix-caching"); for a prefix of several, "" and the option
// strings it matches. A name gpulint does not know gives "" and nil. The
// keys of a `vllm serve --config` file go through the same parser
// (vllm/utils/argparse_utils.py @ 00da11e load_config_file turns each key
// into "--" + key).
func ExpandLong(name string) (full string, ambiguous []string) {
	o, neg, _, amb := lookupLong(kebab(name))
	switch {
	case o == nil:
		return "", amb
	case neg:
		return "no-" + o.Name, nil
	}
	return o.Name, nil
}
