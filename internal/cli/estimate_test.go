package cli_test

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpulint/gpulint/internal/golden"
)

// offload70B trains a 70B model with ZeRO-3 and the optimizer on the CPU:
// it fits the GPUs and needs about 1.5 TiB of host RAM per node.
var offload70B = []string{"estimate", "--model", "meta-llama/Llama-3.1-70B", "--gpu", "H100-80GB", "--gpus", "8",
	"--zero", "3", "--offload-optimizer", "cpu", "--checkpointing", "--seq-len", "4096"}

// TestEstimateOutput holds the command's text (not a terminal, a terminal
// without color, a terminal with color) and JSON output to golden files.
func TestEstimateOutput(t *testing.T) {
	serve := []string{"estimate", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "H100-80GB",
		"--workload", "serve", "--max-model-len", "16384"}
	tests := []struct {
		name   string
		tty    bool
		env    map[string]string
		args   []string
		golden string
	}{
		{"serve text", false, nil, serve, "estimate_serve.golden"},
		{"serve terminal no color", true, map[string]string{"NO_COLOR": "1"}, serve, "estimate_serve_tty.golden"},
		{"serve terminal color", true, nil, serve, "estimate_serve_tty_color.golden"},
		{"serve json", false, nil, append(slices.Clone(serve), "--format", "json"), "estimate_serve.json.golden"},
		{"offload text, host not judged", false, nil, offload70B, "estimate_offload.golden"},
		{"offload json, host short", false, nil, append(slices.Clone(offload70B), "--host-memory", "1TiB", "--format", "json"), "estimate_offload_host.json.golden"},
		{"params text", false, nil, []string{"estimate", "--params", "7.5B", "--gpu-memory", "24GiB", "--workload", "qlora"}, "estimate_params.golden"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := run(t, tc.tty, tc.env, tc.args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			golden.Check(t, filepath.Join("testdata", tc.golden), []byte(out))
			if esc := strings.Contains(out, "\x1b["); esc != (tc.tty && tc.env == nil) {
				t.Errorf("escape codes %v on tty=%v env=%v", esc, tc.tty, tc.env)
			}
			if bar := strings.Contains(out, "  ["); bar != tc.tty {
				t.Errorf("bar drawn %v on tty=%v", bar, tc.tty)
			}
		})
	}
}

// TestEstimateHostMemory: --host-memory judges the host need of offloading;
// below the need the estimate does not fit, above it the GPU verdict stands,
// and without it the need is printed and left unjudged.
func TestEstimateHostMemory(t *testing.T) {
	tests := []struct {
		name   string
		host   []string
		fits   bool
		judged bool
		text   string
	}{
		{"not given", nil, true, false, "not judged"},
		{"node too small", []string{"--host-memory", "512GiB"}, false, true, "does not fit: host memory"},
		{"node large enough", []string{"--host-memory", "2TiB"}, true, true, "fits: "},
		{"decimal units", []string{"--host-memory", "2TB"}, true, true, "fits: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append(slices.Clone(offload70B), tc.host...)
			out, errOut, code := run(t, false, nil, append(args, "--format", "json")...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var got struct {
				Fits bool `json:"fits"`
				Host *struct {
					Need   int64 `json:"need"`
					Judged bool  `json:"judged"`
					Fits   *bool `json:"fits"`
				} `json:"host"`
			}
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatal(err)
			}
			if got.Host == nil || got.Host.Need <= 0 {
				t.Fatalf("no host need in %s", out)
			}
			if got.Fits != tc.fits || got.Host.Judged != tc.judged || (got.Host.Fits != nil) != tc.judged ||
				(got.Host.Fits != nil && *got.Host.Fits != tc.fits) {
				t.Errorf("fits %v, host %+v; want fits %v, judged %v", got.Fits, *got.Host, tc.fits, tc.judged)
			}
			text, _, _ := run(t, false, nil, args...)
			if !strings.Contains(text, tc.text) {
				t.Errorf("text lacks %q:\n%s", tc.text, text)
			}
		})
	}
	if _, errOut, code := run(t, false, nil, append(slices.Clone(offload70B), "--host-memory", "lots")...); code != 2 || !strings.Contains(errOut, "--host-memory") {
		t.Errorf("bad --host-memory: exit %d, %s", code, errOut)
	}
}

// TestEstimateSharding: --sharding picks the framework that shards the
// model states, so an FSDP FULL_SHARD estimate carries FSDP's prefetch of
// the next unit and no DeepSpeed buckets; an unknown name is a usage error.
func TestEstimateSharding(t *testing.T) {
	base := []string{"estimate", "--model", "meta-llama/Llama-3.1-8B", "--gpu", "H100-80GB", "--gpus", "8", "--zero", "3", "--format", "json"}
	overheads := func(args ...string) []string {
		t.Helper()
		out, errOut, code := run(t, false, nil, append(slices.Clone(base), args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		var got struct {
			Overheads []struct{ Name string } `json:"overheads"`
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, o := range got.Overheads {
			names = append(names, o.Name)
		}
		return names
	}
	has := func(names []string, prefix string) bool {
		return slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, prefix) })
	}
	for _, tc := range []struct {
		flags       []string
		fsdp, zero3 bool
	}{
		{nil, false, true},
		{[]string{"--sharding", "zero"}, false, true},
		{[]string{"--sharding", "fsdp"}, true, false},
		{[]string{"--sharding", "fsdp2"}, true, false},
	} {
		got := overheads(tc.flags...)
		if has(got, "FSDP prefetch") != tc.fsdp || has(got, "ZeRO-3 gathered parameters") != tc.zero3 {
			t.Errorf("%v: overheads %q, want FSDP prefetch %v, ZeRO-3 gathered parameters %v", tc.flags, got, tc.fsdp, tc.zero3)
		}
	}
	if _, errOut, code := run(t, false, nil, append(slices.Clone(base), "--sharding", "megatron")...); code != 2 || !strings.Contains(errOut, "--sharding") {
		t.Errorf("bad --sharding: exit %d, %s", code, errOut)
	}
}

// TestEstimateInputsGivenOrAssumed: for each workload, the inputs are the
// ones its estimate rests on; with no flags every one but the workload is
// assumed, and each flag set on the command line turns its input given.
func TestEstimateInputsGivenOrAssumed(t *testing.T) {
	base := []string{"estimate", "--model", "meta-llama/Llama-3.1-8B", "--gpu", "H100-80GB", "--format", "json"}
	common := [][2]string{{"gpus", "1"}, {"tp", "1"}, {"pp", "1"}, {"precision", "bf16"}, {"cuda-context", "600"}}
	training := [][2]string{{"micro-batch", "1"}, {"seq-len", "1024"}, {"zero", "0"}, {"sharding", "fsdp"}, {"offload-optimizer", "none"},
		{"offload-param", "none"}, {"checkpointing", "true"}, {"optimizer", "adamw-fused"}, {"optimizer-in-backward", "false"},
		{"attention", "sdpa"}, {"loss", "chunked"}}
	lora := [][2]string{{"lora-rank", "8"}, {"lora-targets", "q,v"}}
	tests := []struct {
		workload string
		flags    [][2]string
	}{
		{"train", slices.Concat(common, training)},
		{"lora", slices.Concat(common, training, lora)},
		{"qlora", slices.Concat(common, training, lora, [][2]string{{"weights", "nf4"}, {"kbit-fp32", "true"}})},
		{"inference", slices.Concat(common, [][2]string{{"micro-batch", "2"}, {"seq-len", "1024"}, {"weights", "bf16"},
			{"prefill-logits", "all"}, {"kv-cache-dtype", "fp8"}})},
		{"serve", slices.Concat(common, [][2]string{{"weights", "bf16"}, {"kv-cache-dtype", "fp8"}, {"gpu-memory-utilization", "0.85"},
			{"max-model-len", "8192"}, {"max-num-seqs", "64"}, {"max-num-batched-tokens", "4096"}, {"enforce-eager", "true"}, {"vllm-version", "0.11.0"}})},
	}
	type input struct {
		Value  any    `json:"value"`
		Source string `json:"source"`
	}
	inputs := func(t *testing.T, args []string) map[string]input {
		t.Helper()
		out, errOut, code := run(t, false, nil, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		var got struct {
			Inputs map[string]input `json:"inputs"`
			Model  struct{ ID, From string }
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		return got.Inputs
	}
	for _, tc := range tests {
		t.Run(tc.workload, func(t *testing.T) {
			want := []string{"workload"}
			for _, f := range tc.flags {
				want = append(want, f[0])
			}
			slices.Sort(want)
			bare := inputs(t, append(slices.Clone(base), "--workload", tc.workload))
			var names []string
			for name, in := range bare {
				names = append(names, name)
				if wantSrc := map[bool]string{true: "given", false: "assumed"}[name == "workload"]; in.Source != wantSrc {
					t.Errorf("without flags, %s is %s, want %s", name, in.Source, wantSrc)
				}
			}
			slices.Sort(names)
			if diff := cmp.Diff(want, names); diff != "" {
				t.Errorf("inputs of %s (-want +got):\n%s", tc.workload, diff)
			}
			for _, f := range tc.flags {
				args := append(slices.Clone(base), "--workload", tc.workload)
				if f[1] == "true" || f[1] == "false" {
					args = append(args, "--"+f[0]+"="+f[1])
				} else {
					args = append(args, "--"+f[0], f[1])
				}
				got := inputs(t, args)[f[0]]
				if got.Source != "given" {
					t.Errorf("--%s %s: source %q, want given", f[0], f[1], got.Source)
				}
				if strings.Trim(string(mustJSON(t, got.Value)), `"`) != f[1] {
					t.Errorf("--%s %s: value %v", f[0], f[1], got.Value)
				}
			}
		})
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestEstimateDisableHybridKVCache: --disable-hybrid-kv-cache-manager sizes
// Llama 4's chunked-local layers at full length, as vLLM does with the
// flag, so one long request takes four times the blocks.
func TestEstimateDisableHybridKVCache(t *testing.T) {
	args := []string{"estimate", "--model", "meta-llama/Llama-4-Scout-17B-16E-Instruct", "--gpu", "H200", "--workload", "serve",
		"--gpus", "8", "--tp", "8", "--max-model-len", "5242880", "--format", "json"}
	concurrency := func(extra ...string) float64 {
		t.Helper()
		out, errOut, code := run(t, false, nil, append(slices.Clone(args), extra...)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var got struct {
			Serve struct {
				MaxConcurrency float64 `json:"max_concurrency"`
			} `json:"serve"`
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		return got.Serve.MaxConcurrency
	}
	hybrid, full := concurrency(), concurrency("--disable-hybrid-kv-cache-manager")
	if hybrid < 3*full || full >= 1 {
		t.Errorf("max concurrency %.2f with the hybrid manager, %.2f without; want the chunked layers to hold one chunk", hybrid, full)
	}
}

// TestEstimateActivationOffloadingFlag: --activation-offloading moves the
// saved activations off the GPU into the host need, and the input is shown
// as given; serving refuses it.
func TestEstimateActivationOffloadingFlag(t *testing.T) {
	base := []string{"estimate", "--model", "meta-llama/Llama-3.1-8B", "--gpu", "H100-80GB", "--workload", "lora",
		"--micro-batch", "4", "--seq-len", "4096", "--checkpointing", "--loss", "chunked", "--format", "json"}
	type out struct {
		PerGPU struct {
			Activations int64 `json:"activations"`
		} `json:"per_gpu"`
		Host *struct {
			Need int64 `json:"need"`
		} `json:"host"`
		Inputs map[string]struct {
			Value  any    `json:"value"`
			Source string `json:"source"`
		} `json:"inputs"`
	}
	get := func(args ...string) out {
		t.Helper()
		text, errOut, code := run(t, false, nil, args...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var o out
		if err := json.Unmarshal([]byte(text), &o); err != nil {
			t.Fatal(err)
		}
		return o
	}
	plain, off := get(base...), get(append(slices.Clone(base), "--activation-offloading")...)
	// 27 of Llama-3.1-8B's 32 checkpointed layer inputs (bf16, h 4096,
	// 4 × 4096 tokens) leave the GPU; five stay in flight.
	if moved := int64(27 * 2 * 4096 * 4 * 4096); plain.PerGPU.Activations-off.PerGPU.Activations < moved {
		t.Errorf("offloaded activations %d, without %d: want at least %d less", off.PerGPU.Activations, plain.PerGPU.Activations, moved)
	}
	if plain.Host != nil || off.Host == nil || off.Host.Need <= 0 {
		t.Errorf("host without offloading %+v, with %+v: want none, then a need", plain.Host, off.Host)
	}
	if in := off.Inputs["activation-offloading"]; in.Value != true || in.Source != "given" {
		t.Errorf("input %+v, want true, given", in)
	}
	if _, ok := plain.Inputs["activation-offloading"]; ok {
		t.Error("activation-offloading listed though nothing stated it")
	}
	_, errOut, code := run(t, false, nil, "estimate", "--model", "meta-llama/Llama-3.1-8B", "--gpu", "H100-80GB", "--workload", "serve", "--activation-offloading")
	if code != 2 || !strings.Contains(errOut, "training only") {
		t.Errorf("serve with --activation-offloading: exit %d, %s", code, errOut)
	}
}

// TestEstimateZeRO3Gathering: the --zero3-* flags restate a DeepSpeed
// config's stage3_max_live_parameters, prefetch bucket and reuse distance,
// and the gathered-parameter line follows them and says so.
func TestEstimateZeRO3Gathering(t *testing.T) {
	base := []string{"estimate", "--model", "meta-llama/Llama-3.1-8B", "--gpu", "H100-80GB", "--gpus", "8", "--zero", "3", "--format", "json"}
	gathered := func(args ...string) (string, int64) {
		t.Helper()
		out, errOut, code := run(t, false, nil, append(slices.Clone(base), args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		var got struct {
			Overheads []struct {
				Name  string
				Bytes int64
			} `json:"overheads"`
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		for _, o := range got.Overheads {
			if strings.HasPrefix(o.Name, "ZeRO-3 gathered parameters") {
				return o.Name, o.Bytes
			}
		}
		return "", 0
	}
	if name, b := gathered(); b != 2e9 || !strings.Contains(name, "DeepSpeed's defaults") {
		t.Errorf("no flags: %q %d bytes, want 1e9 bf16 at DeepSpeed's defaults", name, b)
	}
	if name, b := gathered("--zero3-max-live", "1e8"); b != 2e8 || !strings.Contains(name, "max_live 1e8") {
		t.Errorf("--zero3-max-live 1e8: %q %d bytes, want 2e8", name, b)
	}
	if _, b := gathered("--zero3-prefetch-bucket", "0"); b != 0 {
		t.Errorf("--zero3-prefetch-bucket 0: %d bytes, want none (Llama 3.1 8B keeps no reuse window)", b)
	}
	if _, errOut, code := run(t, false, nil, append(slices.Clone(base), "--zero3-max-live", "-1")...); code != 2 || !strings.Contains(errOut, "--zero3-max-live") {
		t.Errorf("negative --zero3-max-live: exit %d, %s", code, errOut)
	}
}
