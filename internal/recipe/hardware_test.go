package recipe

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// testGPUs stands in for the catalog: names and aliases to the catalog
// names they may mean (a bare A100 is 40 or 80 GB).
var testGPUs = map[string][]string{
	"h100": {"H100-80GB"}, "h100-80gb": {"H100-80GB"}, "h100-94gb": {"H100-NVL"},
	"a100": {"A100-40GB", "A100-80GB"}, "a100-40gb": {"A100-40GB"}, "a100-80gb": {"A100-80GB"}, "l4": {"L4"},
}

func resolveTest(name string) []string {
	return testGPUs[strings.ToLower(name)]
}

func TestStatedHardware(t *testing.T) {
	zero3 := Sharding{Scheme: "zero", Stage: 3}
	tests := []struct {
		name string
		data string
		want *Hardware // nil: no statement
	}{
		// The three open-r1 openings (huggingface/open-r1 at 1416fa0c).
		{name: "node of GPUs with ZeRO-3", data: "# Config for 1 node of 8 H100s with DeepSpeed ZeRO-3\n# Model arguments\nmodel_name_or_path: m\n",
			want: &Hardware{Nodes: 1, GPUsPerNode: 8, GPU: "H100-80GB", Written: "H100s", Sharding: zero3, Line: 1, Start: 2, End: 52}},
		{name: "nodes with FSDP1", data: "# Config for 16 nodes of 8 H100s with FSDP1\n",
			want: &Hardware{Nodes: 16, GPUsPerNode: 8, GPU: "H100-80GB", Written: "H100s", Sharding: Sharding{Scheme: "fsdp", Stage: 3, Version: 1}, Line: 1, Start: 2, End: 43}},
		{name: "x and memory", data: "# Config for 1 node of 8 x H100s (80GB)\n",
			want: &Hardware{Nodes: 1, GPUsPerNode: 8, GPU: "H100-80GB", Written: "H100s (80GB)", Line: 1, Start: 2, End: 39}},
		{name: "memory picks the variant", data: "# 4 x A100 (40GB) using ZeRO stage 2\n",
			want: &Hardware{Nodes: 1, GPUsPerNode: 4, GPU: "A100-40GB", Written: "A100 (40GB)", Sharding: Sharding{Scheme: "zero", Stage: 2}, Line: 1, Start: 2, End: 36}},
		{name: "glued count and FSDP2", data: "## Trained on 8xA100-80GB with FSDP2 full shard.\n",
			want: &Hardware{Nodes: 1, GPUsPerNode: 8, GPU: "A100-80GB", Written: "A100-80GB", Sharding: Sharding{Scheme: "fsdp", Stage: 3, Version: 2}, Line: 1, Start: 3, End: 48}},
		{name: "after a blank line and another comment", data: "\n# Model arguments\n  # 1 L4\nbase_model: m\n",
			want: &Hardware{Nodes: 1, GPUsPerNode: 1, GPU: "L4", Written: "L4", Line: 3, Start: 23, End: 27}},
		{name: "ZeRO-0 shards nothing", data: "# 2 L4 with ZeRO-0\n",
			want: &Hardware{Nodes: 1, GPUsPerNode: 2, GPU: "L4", Written: "L4", Line: 1, Start: 2, End: 18}},

		// torchtune's "tested on" forms (pytorch/torchtune recipes/configs
		// at bd2a0fc), each the whole comment line.
		{name: "tested on an NxGPU machine", data: "# Config for multi-device full finetuning\n#\n# This config is only tested on an 8xA100-80GB machine.\n#\noutput_dir: /tmp\n",
			want: &Hardware{Nodes: 1, GPUsPerNode: 8, GPU: "A100-80GB", Written: "A100-80GB", Line: 3, Start: 46, End: 99}},
		{name: "tested on nodes w/ GPU machines", data: "# This config is only tested on 2 nodes w/ 8 H100 machines.\n",
			want: &Hardware{Nodes: 2, GPUsPerNode: 8, GPU: "H100-80GB", Written: "H100", Line: 1, Start: 2, End: 59}},
		{name: "tested on N NxGPU nodes", data: "# This config is only tested on 2 8xH100 nodes.\n",
			want: &Hardware{Nodes: 2, GPUsPerNode: 8, GPU: "H100-80GB", Written: "H100", Line: 1, Start: 2, End: 47}},
		{name: "tested on an article GPU with memory", data: "# This config has been tested on an A100 80GB.\n",
			want: &Hardware{Nodes: 1, GPUsPerNode: 1, GPU: "A100-80GB", Written: "A100 (80GB)", Line: 1, Start: 2, End: 46}},
		{name: "was tested on a machine", data: "# This recipe was tested on 4xL4 machine\n",
			want: &Hardware{Nodes: 1, GPUsPerNode: 4, GPU: "L4", Written: "L4", Line: 1, Start: 2, End: 40}},

		{name: "GPU without its memory", data: "# This config is only tested on an 8xA100 machine.\n",
			want: &Hardware{Nodes: 1, GPUsPerNode: 8, GPU: "A100-40GB", Written: "A100", Variants: []string{"A100-40GB", "A100-80GB"}, Line: 1, Start: 2, End: 50}},

		// A line naming two setups states both, as alternatives (pytorch/
		// torchtune recipes/configs/llama4/scout_17B_16E_full.yaml at
		// bd2a0fc); "16xH100 machines" is 16 H100s, as "8xA100 machine"
		// is 8 A100s, over machines the line does not count.
		{name: "two setups", data: "# This config was only tested on 8xA100 machine and 16xH100 machines.\n",
			want: &Hardware{Nodes: 1, GPUsPerNode: 8, GPU: "A100-40GB", Written: "A100", Variants: []string{"A100-40GB", "A100-80GB"},
				Or: []Hardware{{Total: 16, GPU: "H100-80GB", Written: "H100"}}, Line: 1, Start: 2, End: 69}},
		{name: "three setups", data: "# Tested on 4xL4 machine, 2 nodes of 8 H100s or an 8xA100-80GB machine\n",
			want: &Hardware{Nodes: 1, GPUsPerNode: 4, GPU: "L4", Written: "L4",
				Or:   []Hardware{{Nodes: 2, GPUsPerNode: 8, GPU: "H100-80GB", Written: "H100s"}, {Nodes: 1, GPUsPerNode: 8, GPU: "A100-80GB", Written: "A100-80GB"}},
				Line: 1, Start: 2, End: 70}},
		{name: "GPUs over uncounted machines", data: "# This config was only tested on 16xH100 machines.\n",
			want: &Hardware{Total: 16, GPU: "H100-80GB", Written: "H100", Line: 1, Start: 2, End: 50}},
		{name: "machines that may be counted", data: "# This config was only tested on 16 H100 machines.\n"},
		{name: "a setup of an unknown GPU", data: "# This config was only tested on 8xA100 machine and 8xZ9000 machine.\n"},
		{name: "a setup without a count", data: "# This config was only tested on 8xA100 machine and H100s.\n"},
		{name: "setups without a lead", data: "# 8xA100 machine and 16xH100 machines\n"},
		{name: "setups with more after them", data: "# This config was only tested on 8xA100 machine and 16xH100 machines so far, see the docs\n"},
		{name: "node count before a singular unit", data: "# This config is only tested on 2 8xH100 node.\n"},
		{name: "article with a plural unit", data: "# tested on an H100 nodes\n"},
		{name: "two node counts", data: "# 2 nodes of 4 8xH100 nodes\n"},
		{name: "tested on in passing", data: "# This config is only tested on an 8xA100 machine, see the docs for others.\n"},

		// Mentions in passing and other counts are not statements.
		{name: "in passing", data: "# we were unable to train at 32k on 8 H100s\n"},
		{name: "GPU without a count", data: "# tuned for H100\n"},
		{name: "count of something else", data: "# Config for 8 epochs\n"},
		{name: "unknown GPU", data: "# Config for 8 x Z9000\n"},
		{name: "statement with more after it", data: "# 8 H100s with ZeRO-3, but 4 nodes would be faster\n"},
		{name: "unnamed sharding", data: "# 8 H100s with some sharding\n"},
		{name: "not a comment", data: "note: 8 H100s\n"},
		{name: "comment after a value", data: "lr: 1 # 8 H100s\n"},
		{name: "after the first setting", data: "model_name_or_path: m\n# Config for 8 H100s\n"},
		{name: "zero nodes", data: "# 0 nodes of 8 H100s\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := StatedHardware([]byte(tc.data), resolveTest)
			if ok != (tc.want != nil) {
				t.Fatalf("ok = %v, want %v (%+v)", ok, tc.want != nil, got)
			}
			if tc.want == nil {
				return
			}
			if diff := cmp.Diff(*tc.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
			if s := tc.data[got.Start:got.End]; strings.HasPrefix(s, "#") || strings.HasSuffix(s, "\n") {
				t.Errorf("span %q is not the statement", s)
			}
		})
	}
}

func TestHardwareString(t *testing.T) {
	h := Hardware{Nodes: 16, GPUsPerNode: 8, GPU: "H100-80GB", Sharding: Sharding{Scheme: "fsdp", Stage: 3, Version: 1}}
	if got, want := h.String(), "16 nodes × 8 H100-80GB, FSDP1 full shard"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if h.GPUs() != 128 {
		t.Errorf("GPUs() = %d, want 128", h.GPUs())
	}
	h = Hardware{Nodes: 1, GPUsPerNode: 8, GPU: "A100-40GB", Written: "A100s", Variants: []string{"A100-40GB", "A100-80GB"}}
	if got, want := h.String(), "8× A100 (memory unstated)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	h = Hardware{Total: 16, GPU: "H100-80GB"}
	if got, want := h.String(), "16× H100-80GB over machines it does not count"; got != want || h.GPUs() != 16 {
		t.Errorf("String() = %q, GPUs() = %d, want %q and 16", got, h.GPUs(), want)
	}
	h = Hardware{Nodes: 1, GPUsPerNode: 8, GPU: "H100-80GB", Sharding: Sharding{Scheme: "zero", Stage: 3}}
	if got, want := h.String(), "8× H100-80GB, DeepSpeed ZeRO-3"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func TestShardingAgrees(t *testing.T) {
	zero := func(n int) Sharding { return Sharding{Scheme: "zero", Stage: n} }
	fsdp := func(v int) Sharding { return Sharding{Scheme: "fsdp", Stage: 3, Version: v} }
	tests := []struct {
		own, comment Sharding
		want         bool
	}{
		{zero(3), zero(3), true},
		{zero(2), zero(3), false},
		{fsdp(0), zero(3), false},
		{zero(3), fsdp(1), false},
		{fsdp(0), fsdp(0), true},
		{fsdp(0), fsdp(1), true}, // the recipe's FSDP is version 1 unless it says 2
		{fsdp(2), fsdp(1), false},
		{fsdp(0), fsdp(2), false},
		{Sharding{Scheme: "fsdp", Stage: 2}, fsdp(0), true}, // a bare "FSDP" names no strategy
	}
	for _, tc := range tests {
		if got := tc.own.Agrees(tc.comment); got != tc.want {
			t.Errorf("%+v.Agrees(%+v) = %v, want %v", tc.own, tc.comment, got, tc.want)
		}
	}
}
