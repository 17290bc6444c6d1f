package recipe

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// bodyGPUs adds to testGPUs the GPUs the body statements below name.
func resolveBody(name string) []string {
	switch strings.ToLower(name) {
	case "a6000", "rtx-a6000":
		return []string{"RTX-A6000"}
	case "b200":
		return []string{"B200"}
	case "v100":
		return []string{"V100-16GB", "V100-32GB"}
	}
	return resolveTest(name)
}

func TestParseBody(t *testing.T) {
	tests := []struct {
		text string
		want *Hardware // nil: not a statement; Line, Start and End unset
	}{
		// axolotl-ai-cloud/axolotl at 067b021c: examples/archived/falcon/
		// config-7b-qlora.yml and xgen-7b/xgen-7b-8k-qlora.yml, above
		// micro_batch_size; examples/llama-4/scout-qlora-single-h100-flex.yaml
		// beside sequence_len.
		{"Max size tested on A6000", &Hardware{Nodes: 1, GPU: "RTX-A6000", Written: "A6000"}},
		{"up to 8k will work on a single H100", &Hardware{Nodes: 1, GPUsPerNode: 1, GPU: "H100-80GB", Written: "H100"}},
		{"fits on 2 x A100 80GB", &Hardware{Nodes: 1, GPUsPerNode: 2, GPU: "A100-80GB", Written: "A100 (80GB)"}},
		{"This recipe runs on 8xH100 with ZeRO-3.", &Hardware{Nodes: 1, GPUsPerNode: 8, GPU: "H100-80GB", Written: "H100", Sharding: Sharding{Scheme: "zero", Stage: 3}}},
		{"trained on 2 nodes of 8 H100s", &Hardware{Nodes: 2, GPUsPerNode: 8, GPU: "H100-80GB", Written: "H100s"}},
		{"tested on an RTX A6000", &Hardware{Nodes: 1, GPUsPerNode: 1, GPU: "RTX-A6000", Written: "RTX-A6000"}},
		{"was only tested on one L4 GPU", &Hardware{Nodes: 1, GPUsPerNode: 1, GPU: "L4", Written: "L4"}},
		{"should fit into 4 A100s", &Hardware{Nodes: 1, GPUsPerNode: 4, GPU: "A100-40GB", Written: "A100s", Variants: []string{"A100-40GB", "A100-80GB"}}},
		{"tested on an 8xA100-80GB machine", &Hardware{Nodes: 1, GPUsPerNode: 8, GPU: "A100-80GB", Written: "A100-80GB"}},
		{"works on 16xH100 machines", &Hardware{Total: 16, GPU: "H100-80GB", Written: "H100"}}, // 16 GPUs over uncounted machines

		// Negatives, each from a real comment: a recipe's or config's in
		// testdata/realworld or found with the code search.
		{"for H100, H200 GPUs", nil},                                             // a Slurm launch script's comment
		{"For H100 (compute capability 9.0)", nil},                               // a docker build script's comment
		{"for H100 only", nil},                                                   // beside a model id in a Python config
		{"A100: set to 8", nil},                                                  // a setting's advice per GPU
		{"designed for 8 GPUs, so batch size 32", nil},                           // allenai/open-instruct dpo/default.yaml
		{"batch size (trained on 256 gpus)", nil},                                // EleutherAI/pythia models/12B/pythia-12b.yml
		{"Note, reduced from 8192 to fit on one GPU with DeepSpeed Stage3", nil}, // open-instruct tulu2_7b_lora.yaml
		{"= total GPU count (8 for 8xH100; 2 for 2xB200)", nil},                  // axolotl glm-5.2-nvfp4-lora.yaml
		{"GLM-5.2 (glm_moe_dsa) MoE LoRA on an NVFP4 (modelopt) checkpoint via ScatterMoE. ~500B, FSDP2 multi-GPU (2xB200 / 8xH100).", nil}, // its first line
		{"CUDA-capable GPUs (tested on A100/V100)", nil}, // a README's requirements
		{"tested on A100/V100", nil},                     // two GPUs
		{"This config needs 8 GPUs to run", nil},         // hishab-nlp/torchtune llama3_70B_lora.yaml
		{"Set to \"float16\" for compatibility with V100 GPUs; use \"bfloat16\" for A100, H100 or newer GPUs", nil}, // kaito custom-model-deployment.yaml
		{"Requires: 2x H200 nodes, HF token secret", nil},                                                           // kserve nemotron-3-ultra-pd.yaml: no verb of running
		{"across at least 4x 16GB V100. TP=4 generates 4-way all-reduce traffic on", nil},                           // production-stack values-25-v100-multi-gpu-tp4.yaml
		{"limited by GPU memory", nil},                                           // beside micro_batch_size in NeMo test configs
		{"Should work with 20 GB VRAM, adjust if needed", nil},                   // beside micro_batch_size in a litgpt tutorial config
		{"Run on a single 24GB GPU box (3090 / 3090 Ti). ~14 hours total.", nil}, // a training script's header
		{"it has been rigorously tested on A100 cards, it is expected to", nil},
		{"Runs ProtT5-XL embeddings on a single A100, then the", nil},                                    // more after the GPU
		{"required by falcon custom model code: https://huggingface.co/tiiuae/falcon-7b/tree/main", nil}, // axolotl falcon/config-7b-qlora.yml
		{"doesn't fit on a single A100", nil},
		{"if it runs on an A100", nil},
		{"the original model was trained on 2048 A100s", nil},
		{"we could not run on 8 H100s", nil},
		{"tested on Z9000", nil},
		{"tested on 2 nodes of A100", nil}, // nodes of an uncounted GPU
		{"works on 16 H100 machines", nil}, // the number may count the machines
	}
	for _, tc := range tests {
		t.Run(tc.text, func(t *testing.T) {
			got, ok := parseBody(tc.text, resolveBody)
			if ok != (tc.want != nil) {
				t.Fatalf("ok = %v, want %v (%+v)", ok, tc.want != nil, got)
			}
			if tc.want == nil {
				return
			}
			if diff := cmp.Diff(*tc.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestStatedHardwareInBody(t *testing.T) {
	tests := []struct {
		name string
		data string
		want *Hardware
	}{
		{name: "comment line above a setting", data: "base_model: m\n# QLoRA paper Table 9\n# Max size tested on A6000\n# - 7b: 40\nmicro_batch_size: 1\n",
			want: &Hardware{Nodes: 1, GPU: "RTX-A6000", Written: "A6000", Line: 3, Start: 38, End: 62}},
		{name: "inline comment", data: "base_model: m\nsequence_len: 4096  # up to 8k will work on a single H100\n",
			want: &Hardware{Nodes: 1, GPUsPerNode: 1, GPU: "H100-80GB", Written: "H100", Line: 2, Start: 36, End: 71}},
		{name: "the leading block wins", data: "# Config for 1 node of 8 H100s\nbase_model: m\nlr: 1 # tested on A6000\n",
			want: &Hardware{Nodes: 1, GPUsPerNode: 8, GPU: "H100-80GB", Written: "H100s", Line: 1, Start: 2, End: 30}},
		{name: "two statements of one setup", data: "a: 1 # tested on a single H100\nb: 2 # fits on 1 H100\n",
			want: &Hardware{Nodes: 1, GPUsPerNode: 1, GPU: "H100-80GB", Written: "H100", Line: 1, Start: 7, End: 30}},
		{name: "two statements of two setups", data: "a: 1 # tested on a single H100\nb: 2 # tested on A6000\n"},
		{name: "a hash inside quotes", data: "prompt: \"x # tested on a single H100\"\n"},
		{name: "a hash inside a word", data: "url: http://x/a#tested on a single H100\n"},
		{name: "block scalar text", data: "chat_template: |\n  # tested on a single H100\n  {{ x }}\nb: 1\n"},
		{name: "after a block scalar", data: "chat_template: |-\n  {{ x }}\nb: 1 # tested on a single H100\n",
			want: &Hardware{Nodes: 1, GPUsPerNode: 1, GPU: "H100-80GB", Written: "H100", Line: 3, Start: 35, End: 58}},
		{name: "a leading comment in the body's grammar only", data: "# Model arguments\n# Tested on A6000\nbase_model: m\n",
			want: &Hardware{Nodes: 1, GPU: "RTX-A6000", Written: "A6000", Line: 2, Start: 20, End: 35}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := StatedHardware([]byte(tc.data), resolveBody)
			if ok != (tc.want != nil) {
				t.Fatalf("ok = %v, want %v (%+v)", ok, tc.want != nil, got)
			}
			if tc.want == nil {
				return
			}
			if diff := cmp.Diff(*tc.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
			if s := tc.data[got.Start:got.End]; strings.HasPrefix(s, "#") || strings.HasSuffix(s, "\n") || strings.HasPrefix(s, " ") {
				t.Errorf("span %q is not the statement", s)
			}
		})
	}
}
