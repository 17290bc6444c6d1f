package cmdline

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// launchSummary renders launches as "tool opt=value@text ..." lines, the
// text being the bytes the option's span covers in the script.
func launchSummary(script string, ls []*TrainLaunch) []string {
	var out []string
	for _, l := range ls {
		keys := make([]string, 0, len(l.Opts))
		for k := range l.Opts {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := []string{l.Tool}
		for _, k := range keys {
			o := l.Opts[k]
			v := o.Value
			if !o.Known {
				v = "?"
			}
			parts = append(parts, fmt.Sprintf("%s=%s@%q", k, v, script[o.Span.Start:o.Span.End]))
		}
		out = append(out, strings.Join(parts, " "))
	}
	return out
}

func TestLaunchesInScript(t *testing.T) {
	tests := []struct {
		name   string
		script string
		want   []string
	}{
		{
			name:   "torchrun with a Trainer script",
			script: "#!/bin/bash\ntorchrun --nproc_per_node=8 --nnodes 2 train.py \\\n  --deepspeed ds_z3.json --model_name_or_path meta-llama/Llama-3.1-8B --bf16 True\n",
			want:   []string{`torchrun deepspeed=ds_z3.json@"--deepspeed ds_z3.json" mixed_precision=bf16@"--bf16 True" model=meta-llama/Llama-3.1-8B@"--model_name_or_path meta-llama/Llama-3.1-8B" nnodes=2@"--nnodes 2" nproc_per_node=8@"--nproc_per_node=8"`},
		},
		{
			name:   "deepspeed launcher with a variable",
			script: "GPUS=4\nexport DS=configs/ds.json\ndeepspeed --num_gpus $GPUS train.py --deepspeed --deepspeed_config ${DS}\n",
			want:   []string{`deepspeed deepspeed=configs/ds.json@"--deepspeed_config ${DS}" nproc_per_node=4@"--num_gpus $GPUS"`},
		},
		{
			name:   "a variable with a default and one from the environment",
			script: "torchrun --nproc-per-node ${NGPU:-2} --nnodes $NNODES x.py\n",
			want:   []string{`torchrun nnodes=?@"--nnodes $NNODES" nproc_per_node=2@"--nproc-per-node ${NGPU:-2}"`},
		},
		{
			name:   "accelerate launch names its config and overrides",
			script: "accelerate launch --config_file fsdp.yaml --num_processes 4 --mixed_precision fp16 train.py\n",
			want:   []string{`accelerate config_file=fsdp.yaml@"--config_file fsdp.yaml" mixed_precision=fp16@"--mixed_precision fp16" num_processes=4@"--num_processes 4"`},
		},
		{
			name:   "recipe CLIs",
			script: "axolotl train examples/lora.yml\nllamafactory-cli train sft.yaml\ntune run lora_finetune_distributed --config llama3/8B_lora.yaml\naccelerate launch -m axolotl.cli.train qlora.yml\n",
			want: []string{
				`axolotl recipe=examples/lora.yml@"examples/lora.yml"`,
				`llamafactory-cli recipe=sft.yaml@"sft.yaml"`,
				`tune recipe=llama3/8B_lora.yaml@"--config llama3/8B_lora.yaml"`,
				`accelerate recipe=qlora.yml@"qlora.yml"`,
			},
		},
		{
			name:   "a script run by another script",
			script: "cd /workspace && bash scripts/train.sh\n./run.sh --fast\n",
			want:   []string{`sh script=scripts/train.sh@"scripts/train.sh"`, `sh script=./run.sh@"./run.sh"`},
		},
		{
			name:   "python -m torch.distributed.run, bf16 false",
			script: "python -m torch.distributed.run --nproc_per_node 2 train.py --bf16 false --fp16\n",
			want:   []string{`torchrun mixed_precision=fp16@"--fp16" nproc_per_node=2@"--nproc_per_node 2"`},
		},
		{
			name:   "flags of another tool are not taken; the script's --config is the script's",
			script: "python train.py --num_gpus 8 --config x.yaml\necho torchrun\n",
			want:   []string{`python script_config=x.yaml@"--config x.yaml"`},
		},
		{
			name: "TRL script under accelerate launch (open-r1's README form)",
			script: "ACCELERATE_LOG_LEVEL=info accelerate launch --config_file recipes/accelerate_configs/zero3.yaml \\\n" +
				"  src/open_r1/sft.py --config recipes/OpenR1-Distill-7B/sft/config_distill.yaml --max_length 4096\n",
			want: []string{`accelerate config_file=recipes/accelerate_configs/zero3.yaml@"--config_file recipes/accelerate_configs/zero3.yaml" ` +
				`script_config=recipes/OpenR1-Distill-7B/sft/config_distill.yaml@"--config recipes/OpenR1-Distill-7B/sft/config_distill.yaml"`},
		},
		{
			name:   "torchrun and python -m run a module; --config after it",
			script: "torchrun --nproc_per_node 4 -m my.train --config sft.yaml\npython -m trl.scripts.sft --config dpo.yaml\n",
			want: []string{`torchrun nproc_per_node=4@"--nproc_per_node 4" script_config=sft.yaml@"--config sft.yaml"`,
				`python script_config=dpo.yaml@"--config dpo.yaml"`},
		},
		{
			name: "variables: a literal assignment resolves, anything else is unknown",
			script: "ACC=recipes/zero3.yaml\nCONFIG=$1\naccelerate launch --config_file $ACC train.py --config ${CONFIG}\n" +
				"accelerate launch --config_file ${ACCELERATOR} train.py --config recipes/sft.yaml\n" +
				"NAME=zero2\naccelerate launch --config_file configs/${NAME}.yaml train.py --config recipes/$NAME-$RUN.yaml\n",
			want: []string{`accelerate config_file=recipes/zero3.yaml@"--config_file $ACC" script_config=?@"--config ${CONFIG}"`,
				`accelerate config_file=?@"--config_file ${ACCELERATOR}" script_config=recipes/sft.yaml@"--config recipes/sft.yaml"`,
				`accelerate config_file=configs/zero2.yaml@"--config_file configs/${NAME}.yaml" script_config=?@"--config recipes/$NAME-$RUN.yaml"`},
		},
		{
			name:   "TrlParser takes --config PATH only; accelerate's own flags before the script are not the script's",
			script: "python train.py --config=a.yaml\naccelerate launch --config b.yaml train.py --bf16\n",
			want:   []string{`accelerate mixed_precision=bf16@"--bf16"`},
		},
		{
			// torchrun and the deepspeed runner take a unique prefix of an
			// option string (argparse's default); --nproc starts both of
			// torchrun's spellings and is refused, so it is not read, and
			// accelerate launch refuses every prefix (allow_abbrev=False).
			name: "launcher abbreviations: torchrun and deepspeed expand a unique prefix",
			script: "torchrun --nproc_per 8 --nnode=2 train.py --deepspeed ds.json\n" +
				"torchrun --nproc 4 x.py\n" +
				"deepspeed --num_gpu 2 --num_n 3 y.py\n" +
				"accelerate launch --num_proc 4 z.py\n",
			want: []string{`torchrun deepspeed=ds.json@"--deepspeed ds.json" nnodes=2@"--nnode=2" nproc_per_node=8@"--nproc_per 8"`,
				`torchrun`,
				`deepspeed nnodes=3@"--num_n 3" nproc_per_node=2@"--num_gpu 2"`,
				`accelerate`},
		},
		{
			// The deepspeed runner registers --num_gpus and --num_nodes
			// only (deepspeed/launcher/runner.py @ 2d991ba) and exits on
			// --num-gpus; the script's own dashed flags are the script's.
			name: "the deepspeed runner refuses dashed spellings",
			script: "deepspeed --num-gpus 4 --num-nodes=2 train.py --deepspeed ds.json\n" +
				"deepspeed --num_gpus 4 train.py --model-name-or-path m\n",
			want: []string{`deepspeed deepspeed=ds.json@"--deepspeed ds.json"`,
				`deepspeed model=m@"--model-name-or-path m" nproc_per_node=4@"--num_gpus 4"`},
		},
		{
			name: "the trl CLI: recipe, Accelerate config, process count",
			script: "trl sft --config recipes/sft.yaml --accelerate_config configs/fsdp2.yaml --num_processes 4\n" +
				"trl vllm-serve --model Qwen/Qwen2.5-7B\n",
			want: []string{`trl config_file=configs/fsdp2.yaml@"--accelerate_config configs/fsdp2.yaml" num_processes=4@"--num_processes 4" recipe=recipes/sft.yaml@"--config recipes/sft.yaml"`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := launchSummary(tc.script, LaunchesInScript("run.sh", tc.script))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestLaunchesInContainer(t *testing.T) {
	src := `command: ["bash", "-c", "deepspeed --num_gpus 2 train.py --deepspeed /cfg/ds.json"]`
	start := strings.Index(src, "deepspeed ")
	script := "deepspeed --num_gpus 2 train.py --deepspeed /cfg/ds.json"
	ct := Container{File: "job.yaml", Command: []Arg{
		{Text: "bash"}, {Text: "-c"},
		{Text: script, Raw: Span{Start: start, End: start + len(script), Exact: true}},
	}}
	got := launchSummary(src, LaunchesInContainer(ct))
	want := []string{`deepspeed deepspeed=/cfg/ds.json@"--deepspeed /cfg/ds.json" nproc_per_node=2@"--num_gpus 2"`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	argv := Container{File: "job.yaml", Command: []Arg{{Text: "torchrun"}, {Text: "--nproc_per_node=4"}, {Text: "train.py"}}}
	if ls := LaunchesInContainer(argv); len(ls) != 1 || ls[0].Opts[OptNprocPerNode].Value != "4" {
		t.Errorf("argv torchrun: got %+v", ls)
	}
}

// The options after a launched Python script, and every option of the trl
// CLI, are the script's own; the launcher's before the script are not.
func TestScriptFlags(t *testing.T) {
	script := "accelerate launch --num_processes 8 --config_file acc.yaml sft.py --config r.yaml --max-length 4096 --bf16\n" +
		"trl sft --config r.yaml --per_device_train_batch_size=2\n"
	var got [][]string
	for _, l := range LaunchesInScript("run.sh", script) {
		var names []string
		for k, sp := range l.ScriptFlags {
			names = append(names, k+"@"+script[sp.Start:sp.End])
		}
		sort.Strings(names)
		got = append(got, names)
	}
	want := [][]string{{"bf16@--bf16", "max_length@--max-length"}, {"per_device_train_batch_size@--per_device_train_batch_size=2"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}
