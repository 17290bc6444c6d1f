package lint_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/lint"
)

// Accelerate configs as open-r1 and trl ship them
// (recipes/accelerate_configs/zero3.yaml, ddp.yaml; trl/accelerate_configs/
// fsdp2.yaml), cut to the keys that matter.
const (
	accZero3 = "compute_environment: LOCAL_MACHINE\ndeepspeed_config:\n  offload_optimizer_device: none\n  offload_param_device: none\n" +
		"  zero3_init_flag: true\n  zero_stage: 3\ndistributed_type: DEEPSPEED\nmixed_precision: bf16\nnum_machines: 1\nnum_processes: 8\n"
	accDDP   = "distributed_type: MULTI_GPU\nmixed_precision: bf16\nnum_machines: 1\nnum_processes: 8\n"
	accFSDP2 = "distributed_type: FSDP\nfsdp_config:\n  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n  fsdp_offload_params: false\n" +
		"  fsdp_reshard_after_forward: true\n  fsdp_version: 2\nmixed_precision: bf16\nnum_machines: 1\nnum_processes: 8\n"
	// recipeFile is where the recipe lies; its comment names the GPUs
	// but no sharding, as open-r1's OpenR1-Distill-7B does.
	recipeFile = "recipes/Distill-7B/sft/config.yaml"
	h100s      = "# Config for 1 node of 8 x H100s (80GB)"
)

// A TRL recipe whose comment names its GPUs but not the sharding is sized
// once a launch script in the repository runs it: the script's
// `accelerate launch --config_file ACC script.py --config RECIPE` hands
// the recipe the Accelerate config's process count and sharding, each
// shown as a file:line in the evidence. A variable the script does not
// assign literally, a --config=PATH TrlParser does not read, or a recipe
// no Trainer script reads links nothing.
func TestTRLRecipeSizedByItsLaunch(t *testing.T) {
	repo := func(script string, extra map[string]string) map[string]string {
		files := map[string]string{
			"recipes/accelerate_configs/zero3.yaml": accZero3,
			"recipes/accelerate_configs/ddp.yaml":   accDDP,
			"recipes/accelerate_configs/fsdp2.yaml": accFSDP2,
			"recipes/accelerate_configs/ds_file.yaml": "distributed_type: DEEPSPEED\ndeepspeed_config:\n" +
				"  deepspeed_config_file: recipes/accelerate_configs/ds_z3.json\n  zero3_init_flag: true\nnum_machines: 1\nnum_processes: 8\n",
			"recipes/accelerate_configs/ds_gone.yaml": "distributed_type: DEEPSPEED\ndeepspeed_config:\n" +
				"  deepspeed_config_file: recipes/accelerate_configs/missing.json\nnum_machines: 1\nnum_processes: 8\n",
			"recipes/accelerate_configs/ds_z3.json": `{"train_micro_batch_size_per_gpu": "auto", "bf16": {"enabled": "auto"}, "zero_optimization": {"stage": 3}}` + "\n",
			recipeFile:                              sftRecipe(h100s, "4096", "1"),
			"scripts/train.sh":                      script,
		}
		for k, v := range extra {
			files[k] = v
		}
		return files
	}
	const launch = "accelerate launch --config_file recipes/accelerate_configs/%s src/open_r1/sft.py --config " + recipeFile + "\n"
	tests := []struct {
		name   string
		script string
		extra  map[string]string
		lint   string // the file linted, recipeFile when empty
		fits   string // "yes", "no", or "" for no sizing
	}{
		{name: "ZeRO-3 over the config's 8 processes", script: strings.Replace(launch, "%s", "zero3.yaml", 1), fits: "yes"},
		{name: "the Accelerate config through a literal variable",
			script: "ACCELERATOR=zero3\nCONFIG=" + recipeFile + "\naccelerate launch --config_file recipes/accelerate_configs/${ACCELERATOR}.yaml src/open_r1/sft.py --config $CONFIG\n",
			fits:   "yes"},
		{name: "a variable set from the script's arguments is never guessed (open-r1's slurm/train.slurm)",
			script: "ACCELERATOR=$3\naccelerate launch --config_file recipes/accelerate_configs/$ACCELERATOR.yaml src/open_r1/sft.py --config " + recipeFile + "\n",
			fits:   ""},
		{name: "a whole-word literal variable resolves",
			script: "ACC=recipes/accelerate_configs/zero3.yaml\naccelerate launch --config_file $ACC src/open_r1/sft.py --config " + recipeFile + "\n",
			fits:   "yes"},
		{name: "an unassigned variable is never guessed",
			script: "accelerate launch --config_file $ACCELERATOR src/open_r1/sft.py --config " + recipeFile + "\n", fits: ""},
		{name: "FSDP2 full shard", script: strings.Replace(launch, "%s", "fsdp2.yaml", 1), fits: "yes"},
		{name: "ZeRO-3 from the DeepSpeed file the Accelerate config names", script: strings.Replace(launch, "%s", "ds_file.yaml", 1), fits: "yes"},
		{name: "a DeepSpeed file that is not there leaves the stage unknown", script: strings.Replace(launch, "%s", "ds_gone.yaml", 1), fits: ""},
		{name: "the deepspeed launcher with the Trainer's --deepspeed",
			script: "deepspeed --num_gpus 8 src/open_r1/sft.py --config " + recipeFile + " --deepspeed recipes/accelerate_configs/ds_z3.json\n", fits: "yes"},
		{name: "the deepspeed launcher without a DeepSpeed config shards nothing it states",
			script: "deepspeed --num_gpus 8 src/open_r1/sft.py --config " + recipeFile + "\n", fits: ""},
		{name: "plain DDP: a 7B full fine-tune does not fit", script: strings.Replace(launch, "%s", "ddp.yaml", 1), fits: "no"},
		{name: "the trl CLI", script: "trl sft --config " + recipeFile + " --accelerate_config recipes/accelerate_configs/zero3.yaml\n", fits: "yes"},
		{name: "command-line values the memory model does not read leave the link",
			script: strings.TrimSuffix(strings.Replace(launch, "%s", "zero3.yaml", 1), "\n") + " --output_dir data/run --num_train_epochs 3\n",
			fits:   "yes"},
		{name: "a command line that replaces the recipe's sequence length sizes nothing",
			script: strings.TrimSuffix(strings.Replace(launch, "%s", "zero3.yaml", 1), "\n") + " --max_length 32768\n",
			fits:   ""},
		{name: "TrlParser does not read --config=PATH",
			script: "accelerate launch --config_file recipes/accelerate_configs/zero3.yaml src/open_r1/sft.py --config=" + recipeFile + "\n", fits: ""},
		{name: "a LLaMA-Factory recipe is not what a script's --config reads",
			script: "accelerate launch --config_file recipes/accelerate_configs/zero3.yaml train.py --config lmf.yaml\n",
			extra: map[string]string{"lmf.yaml": h100s + "\nmodel_name_or_path: Qwen/Qwen2.5-Coder-7B-Instruct\nfinetuning_type: full\n" +
				"bf16: true\ncutoff_len: 4096\nper_device_train_batch_size: 1\n"},
			lint: "lmf.yaml", fits: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			name := tc.lint
			if name == "" {
				name = recipeFile
			}
			fr := lintTree(t, lint.Options{}, repo(tc.script, tc.extra), name)
			switch s := fr.Sizing; {
			case tc.fits == "" && s != nil && s.Open != "sharding":
				// Unlinked, the recipe may still be sized over every
				// sharding its comment's GPUs allow, never with the launch's.
				t.Errorf("sized %+v, want no sizing from the launch", s)
			case tc.fits != "" && s == nil:
				t.Errorf("no sizing, want fits=%s; findings %v", tc.fits, fr.Findings)
			case tc.fits != "" && s.Fits != (tc.fits == "yes"):
				t.Errorf("sizing %+v, want fits=%s", s, tc.fits)
			}
		})
	}
}

// The verdict on a launched recipe names where its GPU count and sharding
// are written: the Accelerate config's num_processes (the range) and its
// zero_stage (in the value), both as stated file inputs, not assumed.
func TestTRLRecipeLaunchEvidence(t *testing.T) {
	files := map[string]string{
		"recipes/accelerate_configs/zero3.yaml": accZero3,
		recipeFile:                              sftRecipe(h100s, "32768", "16"),
		"scripts/train.sh":                      "accelerate launch --config_file recipes/accelerate_configs/zero3.yaml src/open_r1/sft.py --config " + recipeFile + "\n",
	}
	fr := lintTree(t, lint.Options{}, files, recipeFile)
	var gpu004 *finding.Finding
	for i, f := range fr.Findings {
		if f.Rule == "GPU004" {
			gpu004 = &fr.Findings[i]
		}
	}
	if gpu004 == nil {
		t.Fatalf("no GPU004 for micro batch 16 at 32768 tokens: %v", fr.Findings)
	}
	in, ok := evidenceOf(*gpu004, "gpus")
	if !ok {
		t.Fatalf("GPU004 has no gpus evidence: %+v", gpu004.Evidence)
	}
	if want := "8, sharded by DeepSpeed ZeRO-3 (zero3.yaml:6)"; in.Value != want || in.Source != finding.SourceFile {
		t.Errorf("gpus evidence %q (%s), want %q (file)", in.Value, in.Source, want)
	}
	if in.Range == nil || filepath.Base(in.Range.File) != "zero3.yaml" || in.Range.Start.Line != 10 {
		t.Errorf("gpus evidence range %+v, want zero3.yaml:10 (num_processes)", in.Range)
	}
	// The GPU still rests on the comment: the verdict stays info.
	if gpu004.Severity != finding.SeverityInfo {
		t.Errorf("GPU004 severity %v, want info (the GPU is the comment's)", gpu004.Severity)
	}
}

// A comment whose sharding the launch contradicts loses to it, and the
// disagreement is TARGET001 at the comment pointing at the Accelerate
// config's stage.
func TestTRLRecipeCommentLosesToLaunch(t *testing.T) {
	files := map[string]string{
		"recipes/accelerate_configs/zero3.yaml": accZero3,
		recipeFile:                              sftRecipe("# Config for 1 node of 8 H100s with FSDP1", "4096", "1"),
		"scripts/train.sh":                      "accelerate launch --config_file recipes/accelerate_configs/zero3.yaml src/open_r1/sft.py --config " + recipeFile + "\n",
	}
	fr := lintTree(t, lint.Options{}, files, recipeFile)
	for _, f := range fr.Findings {
		if f.Rule != "TARGET001" || !strings.Contains(f.Message, "sharding") {
			continue
		}
		if !strings.Contains(f.Message, "the Accelerate config the launch passes gives DeepSpeed ZeRO-3") {
			t.Errorf("TARGET001 %q does not name the launch's sharding", f.Message)
		}
		for _, r := range f.Related {
			if filepath.Base(r.Range.File) == "zero3.yaml" && r.Range.Start.Line == 6 {
				return
			}
		}
		t.Errorf("TARGET001 related %+v, want zero3.yaml:6", f.Related)
		return
	}
	t.Errorf("no TARGET001 for the comment's FSDP1 against the launch's ZeRO-3: %v", fr.Findings)
}

// The trl CLI's --num_processes is the world size of the recipe it runs:
// it wins over the comment's count, which is reported.
func TestTRLCLIProcessCount(t *testing.T) {
	files := map[string]string{
		"fsdp.yaml":        sftRecipe(h100s, "4096", "1") + "fsdp: full_shard auto_wrap\n",
		"scripts/train.sh": "trl sft --config fsdp.yaml --num_processes 4\n",
	}
	fr := lintTree(t, lint.Options{}, files, "fsdp.yaml")
	for _, f := range fr.Findings {
		if f.Rule == "TARGET001" && strings.Contains(f.Message, "the command that launches this file gives 4") {
			return
		}
	}
	t.Errorf("no TARGET001 for the comment's 8 GPUs against trl's --num_processes 4: %v", fr.Findings)
}

// A recipe that enables neither bf16 nor fp16 trains in the mixed
// precision of the Accelerate config its launch passes: no FP32 advice,
// and the evidence says where the precision is written. Without the
// launch the advice stands.
func TestTRLRecipeTakesTheLaunchPrecision(t *testing.T) {
	noFlags := strings.NewReplacer("bf16: true\n", "", "torch_dtype: bfloat16\n", "").Replace(sftRecipe(h100s, "32768", "16"))
	files := map[string]string{
		"recipes/accelerate_configs/zero3.yaml": accZero3,
		recipeFile:                              noFlags,
		"scripts/train.sh":                      "accelerate launch --config_file recipes/accelerate_configs/zero3.yaml src/open_r1/sft.py --config " + recipeFile + "\n",
	}
	fr := lintTree(t, lint.Options{}, files, recipeFile)
	seen := false
	for _, f := range fr.Findings {
		if f.Rule == "GPU001" {
			t.Errorf("FP32 advice on a recipe its launch runs in bf16: %s", f.Message)
		}
		if in, ok := evidenceOf(f, "gpus"); ok && f.Rule == "GPU004" {
			seen = true
			if want := "8, sharded by DeepSpeed ZeRO-3 (zero3.yaml:6), bf16 mixed precision (zero3.yaml:8)"; in.Value != want {
				t.Errorf("gpus evidence %q, want %q", in.Value, want)
			}
		}
	}
	if !seen {
		t.Errorf("no GPU004 with gpus evidence for micro batch 16 at 32768 tokens: %v", fr.Findings)
	}
	alone := lintTree(t, lint.Options{}, map[string]string{recipeFile: noFlags}, recipeFile)
	found := false
	for _, f := range alone.Findings {
		found = found || f.Rule == "GPU001"
	}
	if !found {
		t.Errorf("no FP32 advice on the recipe without its launch: %v", alone.Findings)
	}
}

// The DeepSpeed config on a launch's command line shards the recipe, and
// the evidence points at the launcher's process count and names the
// config's stage.
func TestTRLRecipeDeepSpeedOnTheCommandLine(t *testing.T) {
	files := map[string]string{
		"configs/ds_z3.json": "{\n  \"bf16\": {\"enabled\": \"auto\"},\n  \"zero_optimization\": {\n    \"stage\": 3\n  }\n}\n",
		recipeFile:           sftRecipe(h100s, "32768", "16"),
		"scripts/train.sh":   "deepspeed --num_gpus 8 src/open_r1/sft.py --config " + recipeFile + " --deepspeed configs/ds_z3.json\n",
	}
	fr := lintTree(t, lint.Options{}, files, recipeFile)
	for _, f := range fr.Findings {
		if in, ok := evidenceOf(f, "gpus"); ok && f.Rule == "GPU004" {
			if want := "8, sharded by DeepSpeed ZeRO-3 (ds_z3.json:4)"; in.Value != want {
				t.Errorf("gpus evidence %q, want %q", in.Value, want)
			}
			if in.Range == nil || filepath.Base(in.Range.File) != "train.sh" {
				t.Errorf("gpus evidence range %+v, want the script's --num_gpus", in.Range)
			}
			return
		}
	}
	t.Errorf("no GPU004 with gpus evidence: %v", fr.Findings)
}
