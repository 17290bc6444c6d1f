package lint_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/lint"
)

// sftRecipe is a TRL full fine-tune of a 7B model whose first line is the
// given comment; seq and micro set its activations.
func sftRecipe(comment, seq, micro string) string {
	return comment + "\n# Model arguments\nmodel_name_or_path: Qwen/Qwen2.5-Coder-7B-Instruct\ntorch_dtype: bfloat16\n" +
		"attn_implementation: flash_attention_2\nbf16: true\ngradient_checkpointing: true\nlearning_rate: 1.0e-05\n" +
		"max_length: " + seq + "\nper_device_train_batch_size: " + micro + "\n"
}

// lintTree writes files under a temporary root and lints the first name.
func lintTree(t *testing.T, opts lint.Options, files map[string]string, name string) lint.FileResult {
	t.Helper()
	dir := t.TempDir()
	for n, data := range files {
		p := filepath.Join(dir, n)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	opts.Root = dir
	res, err := newLinter(t, opts).Run(context.Background(), []string{filepath.Join(dir, name)})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Files) != 1 {
		t.Fatalf("%d file results, want 1", len(res.Files))
	}
	return res.Files[0]
}

func evidenceOf(f finding.Finding, name string) (finding.Input, bool) {
	for _, in := range f.Evidence {
		if in.Name == name {
			return in, true
		}
	}
	return finding.Input{}, false
}

// A recipe whose leading comment states nodes × GPUs, the GPU and the
// sharding is sized with all three, each an assumed input located at the
// comment, and its verdict is at most info. The same recipe whose comment
// names the GPUs without a sharding is not sized: a multi-GPU full
// fine-tune is sharded, or not, by a launcher nothing here states.
func TestRecipeCommentStatesHardware(t *testing.T) {
	const zero3 = "# Config for 1 node of 8 H100s with DeepSpeed ZeRO-3"

	fits := lintTree(t, lint.Options{}, map[string]string{"sft.yaml": sftRecipe(zero3, "4096", "1")}, "sft.yaml")
	if s := fits.Sizing; s == nil || !s.Fits || s.GPU != "H100-80GB" {
		t.Fatalf("sizing %+v, want a fitting estimate on H100-80GB", s)
	}
	// Sharded over 8 GPUs, a 7B full fine-tune's states are an eighth of
	// the 16 bytes per parameter that do not fit one H100 unsharded.
	if s := fits.Sizing; s.PerGPUBytes > 40<<30 {
		t.Errorf("per-GPU estimate %d bytes: the comment's ZeRO-3 over 8 GPUs was not applied", s.PerGPUBytes)
	}
	for _, f := range fits.Findings {
		if f.Rule == "TUNE001" {
			t.Errorf("a plan was proposed for hardware only a comment states: %s", f.Message)
		}
	}

	over := lintTree(t, lint.Options{}, map[string]string{"sft.yaml": sftRecipe(zero3, "32768", "16")}, "sft.yaml")
	var gpu004 *finding.Finding
	for i, f := range over.Findings {
		if f.Rule == "GPU004" {
			gpu004 = &over.Findings[i]
		}
	}
	if gpu004 == nil {
		t.Fatalf("no GPU004 for micro batch 16 at 32768 tokens: %+v", over.Findings)
	}
	if gpu004.Severity != finding.SeverityInfo {
		t.Errorf("GPU004 severity %v, want info: the hardware rests on a comment", gpu004.Severity)
	}
	for name, want := range map[string]string{
		"gpu":  "H100-80GB (79.1 GiB usable, catalog), as the recipe's comment at line 1 says",
		"gpus": "8 (1 node × 8, as the recipe's comment at line 1 says, sharded by DeepSpeed ZeRO-3)",
	} {
		in, ok := evidenceOf(*gpu004, name)
		if !ok {
			t.Errorf("GPU004 has no %s evidence", name)
			continue
		}
		if in.Value != want || in.Source != finding.SourceAssumed {
			t.Errorf("%s evidence = %q (%s), want %q (assumed)", name, in.Value, in.Source, want)
		}
		if in.Range == nil || in.Range.Start.Line != 1 || in.Range.Start.Col != 3 || in.Settle == "" {
			t.Errorf("%s evidence range %+v settle %q, want line 1 col 3 and how to confirm it", name, in.Range, in.Settle)
		}
	}

	noSharding := lintTree(t, lint.Options{}, map[string]string{"sft.yaml": sftRecipe("# Config for 1 node of 8 x H100s (80GB)", "4096", "1")}, "sft.yaml")
	if z := noSharding.Sizing; z == nil || z.Open != "sharding" || len(z.Alternatives) != 4 {
		t.Errorf("sizing %+v without a stated sharding, want one over the four shardings a launcher may use", z)
	}
	passing := lintTree(t, lint.Options{}, map[string]string{"sft.yaml": sftRecipe("# we ran out of memory at 64k on 8 H100s with ZeRO-3", "4096", "1")}, "sft.yaml")
	if passing.Sizing != nil {
		t.Errorf("sizing %+v from a comment that mentions GPUs in passing, want none", passing.Sizing)
	}
}

// What a launch, the recipe's DeepSpeed config or a flag states wins over
// the comment, and each disagreement is reported at the comment as info.
func TestRecipeCommentLosesToStatedSources(t *testing.T) {
	const comment = "# Config for 1 node of 8 H100s with DeepSpeed ZeRO-3"
	tests := []struct {
		name  string
		opts  lint.Options
		files map[string]string
		want  string // a TARGET001 message fragment
		// related is where the winning statement is, "" for a flag.
		related string
	}{
		{name: "gpus flag", opts: lint.Options{GPUs: 2},
			files: map[string]string{"sft.yaml": sftRecipe(comment, "4096", "1")},
			want:  "the comment states GPU count 8 (8× H100-80GB, DeepSpeed ZeRO-3), but the --gpus flag gives 2, which is used for it"},
		{name: "gpu flag", opts: lint.Options{GPU: "A100-80GB"},
			files: map[string]string{"sft.yaml": sftRecipe(comment, "4096", "1")},
			want:  "the comment states GPU H100-80GB, but the --gpu flag gives A100-80GB, which is used for it"},
		{name: "deepspeed config", files: map[string]string{
			"sft.yaml": sftRecipe(comment, "4096", "1") + "deepspeed: ds.json\n",
			"ds.json":  "{\n  \"train_micro_batch_size_per_gpu\": 1,\n  \"bf16\": {\"enabled\": true},\n  \"zero_optimization\": {\n    \"stage\": 2\n  }\n}\n",
		}, want: "the comment states sharding DeepSpeed ZeRO-3, but the DeepSpeed config the recipe names gives DeepSpeed ZeRO-2, which is used for it", related: "ds.json:5"},
		{name: "deepspeed config and a gpus flag", opts: lint.Options{GPUs: 8}, files: map[string]string{
			"sft.yaml": sftRecipe(comment, "4096", "1") + "deepspeed: ds.json\n",
			"ds.json":  `{"train_micro_batch_size_per_gpu": 1, "bf16": {"enabled": true}, "zero_optimization": {"stage": 1}}` + "\n",
		}, want: "the comment states sharding DeepSpeed ZeRO-3, but the DeepSpeed config the recipe names gives DeepSpeed ZeRO-1, which is used for it", related: "ds.json:1"},
		{name: "launch script", files: map[string]string{
			"axolotl.yaml": comment + "\nbase_model: Qwen/Qwen2.5-Coder-7B-Instruct\nsequence_len: 4096\nmicro_batch_size: 1\nbf16: true\n",
			"run.sh":       "accelerate launch --num_processes 4 -m axolotl.cli.train axolotl.yaml\n",
		}, want: "the comment states GPU count 8 (8× H100-80GB, DeepSpeed ZeRO-3), but the command that launches this file gives 4, which is used for it", related: "run.sh:1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			name := "sft.yaml"
			if _, ok := tc.files[name]; !ok {
				name = "axolotl.yaml"
			}
			fr := lintTree(t, tc.opts, tc.files, name)
			var got []string
			for _, f := range fr.Findings {
				if f.Rule != "TARGET001" {
					continue
				}
				got = append(got, f.Message)
				if strings.Contains(f.Message, tc.want) {
					if f.Severity != finding.SeverityInfo || f.Range.Start.Line != 1 {
						t.Errorf("TARGET001 at line %d, %v; want info at the comment (line 1)", f.Range.Start.Line, f.Severity)
					}
					var rel []string
					for _, r := range f.Related {
						rel = append(rel, fmt.Sprintf("%s:%d", filepath.Base(r.Range.File), r.Range.Start.Line))
					}
					if got := strings.Join(rel, " "); got != tc.related {
						t.Errorf("related %q, want %q", got, tc.related)
					}
					return
				}
			}
			t.Errorf("no TARGET001 saying %q; got %q", tc.want, got)
		})
	}
}

// torchtuneFull is a torchtune full fine-tune of Llama 3.3 70B sharded
// by FSDP with 8-way tensor parallelism, whose leading block ends with the
// given comment (torchtune's configs state their hardware so: pytorch/
// torchtune recipes/configs/llama3_3/70B_full_multinode.yaml at bd2a0fc).
func torchtuneFull(comment string) string {
	return "# Config for multi-node full finetuning in full_finetune_distributed.py\n#\n" + comment + "\n\n" +
		"tokenizer:\n  _component_: torchtune.models.llama3.llama3_tokenizer\n  max_seq_len: 1024\n" +
		"model:\n  _component_: torchtune.models.llama3_3.llama3_3_70b\n" +
		"tensor_parallel_dim: 8\nbatch_size: 4\ngradient_accumulation_steps: 1\n" +
		"optimizer:\n  _component_: torch.optim.AdamW\n  lr: 2e-5\n" +
		"enable_activation_checkpointing: True\nfsdp_cpu_offload: False\ndtype: bf16\n"
}

// A torchtune config's "tested on" line states its hardware as the
// open-r1 openings do: the GPU and the world size are taken from it as
// assumed inputs and the recipe is sized.
func TestTorchtuneTestedOnComment(t *testing.T) {
	sized := lintTree(t, lint.Options{}, map[string]string{"70B_full.yaml": torchtuneFull("# This config is only tested on 2 nodes w/ 8 H100 machines.")}, "70B_full.yaml")
	s := sized.Sizing
	if s == nil || s.GPU != "H100-80GB" || !s.Fits {
		t.Fatalf("sizing %+v, want a fitting estimate on H100-80GB", s)
	}
	// 70B in bf16 with bf16 gradients and AdamW states is 8 bytes a
	// parameter, 565 GB: it fits an H100 only sharded over the 16 GPUs.
	if s.PerGPUBytes > 60<<30 {
		t.Errorf("per-GPU estimate %d bytes: the comment's 2 × 8 GPUs were not applied", s.PerGPUBytes)
	}
	for _, f := range sized.Findings {
		if f.Severity != finding.SeverityInfo && strings.HasPrefix(f.Rule, "GPU") {
			t.Errorf("%s at %v rests on hardware only a comment states, want at most info", f.Rule, f.Severity)
		}
	}
	// A line naming two setups is sized over both (TestCommentNamesSetups).
	// A GPU without its memory is sized on each variant it may mean
	// (TestCommentGPUWithoutMemory).
	bare := "# This config is only tested on an 8xA100 machine."
	r := lintTree(t, lint.Options{}, map[string]string{"70B_full.yaml": torchtuneFull(bare)}, "70B_full.yaml")
	if r.Sizing == nil || r.Sizing.Open != "gpu" {
		t.Fatalf("%q: sizing %+v, want one over the A100 variants", bare, r.Sizing)
	}
	// Unsharded by offload, 70B's states exceed every A100: a verdict
	// that holds on each variant, still at most info on a comment.
	var over bool
	for _, f := range r.Findings {
		if f.Rule == "GPU004" {
			over = true
			if f.Severity != finding.SeverityInfo {
				t.Errorf("GPU004 at %v on a comment's GPU, want info", f.Severity)
			}
		}
	}
	if !over {
		t.Errorf("no GPU004 for %.1f GiB per GPU on every A100: %+v", float64(r.Sizing.PerGPUBytes)/(1<<30), r.Findings)
	}
}

// A comment that names a GPU without its memory ("8xA100": 40 or 80 GB,
// PCIe or SXM) leaves the GPU open among the catalog's variants: the
// recipe is sized on each, and a verdict stands only when all agree, on
// the least of them, saying so; when they differ, vram-overcommit says
// at info which fit and asks for the memory. With the sharding open too
// (two inputs), nothing is judged.
func TestCommentGPUWithoutMemory(t *testing.T) {
	const a100 = "# Config for 1 node of 8 A100s with DeepSpeed ZeRO-3"
	agree := lintTree(t, lint.Options{}, map[string]string{"sft.yaml": sftRecipe(a100, "2048", "1")}, "sft.yaml")
	s := agree.Sizing
	if s == nil || !s.Fits || s.Open != "gpu" || len(s.Alternatives) != 4 || s.GPU != "A100-40GB-PCIe" {
		t.Fatalf("sizing %+v, want a fitting estimate on the least A100 over its 4 variants", s)
	}
	if !strings.Contains(s.Note, `every GPU the recipe's comment may mean by "A100s"`) {
		t.Errorf("note %q does not say the verdict holds on every A100", s.Note)
	}

	split := lintTree(t, lint.Options{}, map[string]string{"sft.yaml": sftRecipe(a100, "8192", "1")}, "sft.yaml")
	s = split.Sizing
	if s == nil || s.Open != "gpu" || s.Fits {
		t.Fatalf("sizing %+v, want the A100 variants to disagree", s)
	}
	var fitting []string
	for _, a := range s.Alternatives {
		if a.Fits {
			fitting = append(fitting, a.Value)
		}
	}
	if strings.Join(fitting, ",") != "A100-80GB-PCIe,A100-80GB" {
		t.Errorf("fitting variants %v, want the two 80GB A100s", fitting)
	}
	var gpu004 *finding.Finding
	for i, f := range split.Findings {
		if f.Rule == "GPU004" {
			gpu004 = &split.Findings[i]
		}
	}
	if gpu004 == nil || gpu004.Severity != finding.SeverityInfo || !strings.Contains(gpu004.Message, "state the GPU with its memory") {
		t.Fatalf("GPU004 %+v, want an info that asks for the GPU's memory", gpu004)
	}
	if in, ok := evidenceOf(*gpu004, "gpu"); !ok || in.Source != finding.SourceAssumed || !strings.Contains(in.Value, "it states no memory") {
		t.Errorf("gpu evidence %+v, want the assumed least A100 and why", in)
	}

	both := lintTree(t, lint.Options{}, map[string]string{"sft.yaml": sftRecipe("# Config for 1 node of 8 A100s", "2048", "1")}, "sft.yaml")
	if both.Sizing != nil {
		t.Errorf("sizing %+v with the sharding and the GPU's memory both open, want none", both.Sizing)
	}
}

// axolotlQLoRA is an axolotl QLoRA of a 7B model with the given comment
// line above micro_batch_size and the given inline comment on
// sequence_len, as axolotl's examples state the GPU they were tried on
// (axolotl-ai-cloud/axolotl examples/archived/falcon/config-7b-qlora.yml,
// examples/llama-4/scout-qlora-single-h100-flex.yaml at 067b021c).
func axolotlQLoRA(above, inline, seq, micro string) string {
	return "base_model: Qwen/Qwen2.5-Coder-7B-Instruct\nload_in_4bit: true\nadapter: qlora\nlora_r: 16\nlora_alpha: 32\n" +
		"lora_target_linear: true\nsequence_len: " + seq + inline + "\ngradient_accumulation_steps: 1\n" +
		above + "\nmicro_batch_size: " + micro + "\nbf16: true\ngradient_checkpointing: true\n"
}

// A statement of the hardware in a comment beside a setting, not in the
// leading block, is read as the leading block's is: the GPU an assumed
// input located at the comment, the verdict at most info, a stated source
// winning with a TARGET001 at the comment. A comment that names a GPU
// without a verb of running or fitting states nothing.
func TestRecipeBodyCommentStatesHardware(t *testing.T) {
	a6000 := lintTree(t, lint.Options{}, map[string]string{"qlora.yml": axolotlQLoRA("# Max size tested on A6000", "", "2048", "2")}, "qlora.yml")
	if s := a6000.Sizing; s == nil || s.GPU != "RTX-A6000" || !s.Fits {
		t.Fatalf("sizing %+v, want a fitting estimate on RTX-A6000", s)
	}

	h100 := lintTree(t, lint.Options{}, map[string]string{"qlora.yml": axolotlQLoRA("", "  # up to 8k will work on a single H100", "4096", "1")}, "qlora.yml")
	if s := h100.Sizing; s == nil || s.GPU != "H100-80GB" {
		t.Fatalf("sizing %+v, want an estimate on H100-80GB", s)
	}

	over := lintTree(t, lint.Options{}, map[string]string{"qlora.yml": axolotlQLoRA("# Max size tested on A6000", "", "32768", "64")}, "qlora.yml")
	var gpu004 *finding.Finding
	for i, f := range over.Findings {
		if f.Rule == "GPU004" {
			gpu004 = &over.Findings[i]
		}
		if strings.HasPrefix(f.Rule, "GPU") && f.Severity != finding.SeverityInfo {
			t.Errorf("%s at %v rests on a GPU only a comment states, want at most info", f.Rule, f.Severity)
		}
	}
	if gpu004 == nil {
		t.Fatalf("no GPU004 for micro batch 64 at 32768 tokens on an A6000: %+v", over.Findings)
	}
	in, ok := evidenceOf(*gpu004, "gpu")
	if !ok || in.Source != finding.SourceAssumed || !strings.Contains(in.Value, "RTX-A6000") || !strings.Contains(in.Value, "as the recipe's comment at line 9 says") {
		t.Errorf("gpu evidence %+v, want the A6000 assumed from the comment", in)
	}
	if in.Range == nil || in.Range.Start.Line != 9 || in.Range.Start.Col != 3 {
		t.Errorf("gpu evidence range %+v, want the comment at line 9 col 3", in.Range)
	}

	flag := lintTree(t, lint.Options{GPU: "A100-80GB"}, map[string]string{"qlora.yml": axolotlQLoRA("# Max size tested on A6000", "", "2048", "2")}, "qlora.yml")
	var conflict bool
	for _, f := range flag.Findings {
		if f.Rule == "TARGET001" && strings.Contains(f.Message, "the comment states GPU RTX-A6000, but the --gpu flag gives A100-80GB") {
			conflict = f.Severity == finding.SeverityInfo && f.Range.Start.Line == 9
		}
	}
	if !conflict {
		t.Errorf("no info TARGET001 at the comment (line 9) for --gpu A100-80GB: %+v", flag.Findings)
	}

	for _, c := range []string{"# for H100 use bf16", "# A100: set to 8", "# doesn't fit on a single A6000"} {
		if r := lintTree(t, lint.Options{}, map[string]string{"qlora.yml": axolotlQLoRA(c, "", "2048", "2")}, "qlora.yml"); r.Sizing != nil {
			t.Errorf("%q: sizing %+v, want none", c, r.Sizing)
		}
	}
}

// A comment that names several setups ("only tested on 8xA100 machine and
// 16xH100 machines", pytorch/torchtune recipes/configs/llama4/
// scout_17B_16E_full.yaml at bd2a0fc) is sized on each, every GPU a
// setup's name may mean with that setup's count: a verdict stands only
// when all agree, and at info; when they differ, vram-overcommit says at
// info which fit and what to state. A GPU stated elsewhere wins, and one
// that no setup names is reported at the comment.
func TestCommentNamesSetups(t *testing.T) {
	two := "# This config was only tested on 8xA100 machine and 16xH100 machines."
	split := lintTree(t, lint.Options{}, map[string]string{"70B_full.yaml": torchtuneFull(two)}, "70B_full.yaml")
	s := split.Sizing
	if s == nil || s.Open != "setup" || s.Fits || len(s.Alternatives) != 5 {
		t.Fatalf("sizing %+v, want one over the four 8× A100 variants and 16× H100", s)
	}
	var fitting []string
	for _, a := range s.Alternatives {
		if a.Fits {
			fitting = append(fitting, a.Value)
		}
	}
	// 70B's bf16 weights, gradients and AdamW states over 8 GPUs are
	// about 70 GiB each before activations; over 16, half that.
	if strings.Join(fitting, ",") != "16× H100-80GB over machines it does not count" {
		t.Errorf("fitting setups %q, want only the 16 H100s", fitting)
	}
	var gpu004 *finding.Finding
	for i, f := range split.Findings {
		if f.Rule == "GPU004" {
			gpu004 = &split.Findings[i]
		}
	}
	if gpu004 == nil || gpu004.Severity != finding.SeverityInfo || !strings.Contains(gpu004.Message, "names several setups") ||
		!strings.Contains(gpu004.Message, "state the GPU and the GPU count") {
		t.Fatalf("GPU004 %+v, want an info that names the setups that fit and asks for the GPU and count", gpu004)
	}
	in, ok := evidenceOf(*gpu004, "gpus")
	if !ok || in.Source != finding.SourceAssumed || !strings.Contains(in.Value, "16× H100-80GB over machines it does not count") || in.Range == nil || in.Range.Start.Line != 3 {
		t.Errorf("gpus evidence %+v, want the setups assumed from the comment at line 3", in)
	}

	// Every setup over: the verdict holds, at info.
	l4 := lintTree(t, lint.Options{}, map[string]string{"70B_full.yaml": torchtuneFull("# This config was only tested on 4xL4 machine or 8xL4 machine.")}, "70B_full.yaml")
	if s := l4.Sizing; s == nil || s.Open != "setup" || s.Fits || s.GPU != "L4" {
		t.Fatalf("sizing %+v, want a verdict over both L4 setups", s)
	}
	var over bool
	for _, f := range l4.Findings {
		if f.Rule == "GPU004" {
			over = f.Severity == finding.SeverityInfo && strings.Contains(f.Message, "the first of the setups the recipe's comment names")
		}
	}
	if !over {
		t.Errorf("no info GPU004 that holds on every setup: %+v", l4.Findings)
	}

	conflict := lintTree(t, lint.Options{GPU: "L4"}, map[string]string{"70B_full.yaml": torchtuneFull(two)}, "70B_full.yaml")
	var reported bool
	for _, f := range conflict.Findings {
		if f.Rule == "TARGET001" && strings.Contains(f.Message, "the comment states GPU 8× A100 (memory unstated) or 16× H100-80GB over machines it does not count, but the --gpu flag gives L4") {
			reported = f.Severity == finding.SeverityInfo && f.Range.Start.Line == 3
		}
	}
	if !reported {
		t.Errorf("no info TARGET001 at the comment for a GPU no setup names: %+v", conflict.Findings)
	}
	// A stated GPU one setup names takes that setup's count.
	agree := lintTree(t, lint.Options{GPU: "H100-80GB"}, map[string]string{"70B_full.yaml": torchtuneFull(two)}, "70B_full.yaml")
	for _, f := range agree.Findings {
		if f.Rule == "TARGET001" {
			t.Errorf("TARGET001 %q for a GPU one setup names", f.Message)
		}
	}
	if s := agree.Sizing; s == nil || s.GPU != "H100-80GB" || s.Open != "" || !s.Fits {
		t.Errorf("sizing %+v, want the flag's H100 over the 16 GPUs its setup names", s)
	}
	// A stated GPU and count that no one setup names together.
	mixed := lintTree(t, lint.Options{GPU: "H100-80GB", GPUs: 8}, map[string]string{"70B_full.yaml": torchtuneFull(two)}, "70B_full.yaml")
	reported = false
	for _, f := range mixed.Findings {
		if f.Rule == "TARGET001" && strings.Contains(f.Message, "the comment states GPU count 8× A100 (memory unstated) or 16× H100-80GB over machines it does not count, but the --gpus flag gives 8") {
			reported = true
		}
	}
	if !reported {
		t.Errorf("no TARGET001 for 8 H100s, a setup the comment does not name: %+v", mixed.Findings)
	}
}

// A comment that names a GPU without its memory ("8xA100") agrees with a
// flag that names any variant it may mean; only a GPU it cannot mean is a
// disagreement, reported with the GPU as the comment names it.
func TestRecipeCommentGPUWithoutMemoryAgreesWithItsVariants(t *testing.T) {
	const stated = "# This config is only tested on an 8xA100 machine."
	tests := []struct {
		gpu  string
		want string // the TARGET001 message fragment, "" for none
	}{
		{gpu: "A100-80GB"},
		{gpu: "A100-40GB"},
		{gpu: "H100-80GB", want: "the comment states GPU A100 (memory unstated), but the --gpu flag gives H100-80GB, which is used for it"},
	}
	for _, tc := range tests {
		t.Run(tc.gpu, func(t *testing.T) {
			fr := lintTree(t, lint.Options{GPU: tc.gpu}, map[string]string{"70B_full.yaml": torchtuneFull(stated)}, "70B_full.yaml")
			var got []string
			for _, f := range fr.Findings {
				if f.Rule == "TARGET001" {
					got = append(got, f.Message)
				}
			}
			switch {
			case tc.want == "" && len(got) > 0:
				t.Errorf("TARGET001 %q for a GPU the comment may mean", got)
			case tc.want != "" && (len(got) != 1 || !strings.Contains(got[0], tc.want)):
				t.Errorf("TARGET001 %q, want one containing %q", got, tc.want)
			}
			if s := fr.Sizing; s == nil || s.GPU != tc.gpu {
				t.Errorf("sizing %+v, want the flag's %s", s, tc.gpu)
			}
		})
	}
}
