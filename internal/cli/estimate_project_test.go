package cli_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type estimateJSON struct {
	PerGPU struct {
		Total int64 `json:"total"`
	} `json:"per_gpu"`
	Capacity int64 `json:"capacity"`
	Model    struct {
		ID, From string
	} `json:"model"`
	Inputs map[string]struct {
		Value  any    `json:"value"`
		Source string `json:"source"`
		Basis  string `json:"basis"`
		From   string `json:"from"`
	} `json:"inputs"`
}

func estimateJSONOf(t *testing.T, args ...string) estimateJSON {
	t.Helper()
	out, errOut, code := run(t, false, nil, append(args, "--format", "json")...)
	if code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, errOut)
	}
	var e estimateJSON
	if err := json.Unmarshal([]byte(out), &e); err != nil {
		t.Fatal(err)
	}
	return e
}

const loraProject = `targets:
  - paths: ["finetune/**"]
    gpu: L4
    model: meta-llama/Llama-3.1-8B
    method: lora
    seq_len: 1024
    optimizer: adam8bit
    loss: chunked
    lora_rank: 8
    lora_targets: [q, v]
    cuda_context: 600
`

// TestEstimateReadsProjectFile: with --config the project file's target
// states every input no flag sets, each shown with its line; a flag wins;
// the estimate is the one the same flags give.
func TestEstimateReadsProjectFile(t *testing.T) {
	dir := t.TempDir()
	pp := write(t, dir, ".gpulint.yaml", loraProject)
	got := estimateJSONOf(t, "estimate", "--config", pp)
	flags := estimateJSONOf(t, "estimate", "--gpu", "L4", "--model", "meta-llama/Llama-3.1-8B", "--workload", "lora",
		"--seq-len", "1024", "--optimizer", "adam8bit", "--loss", "chunked", "--lora-rank", "8", "--lora-targets", "q,v",
		"--cuda-context", "600")
	if got.PerGPU.Total != flags.PerGPU.Total || got.Capacity != flags.Capacity {
		t.Errorf("project estimate %d of %d, flags %d of %d", got.PerGPU.Total, got.Capacity, flags.PerGPU.Total, flags.Capacity)
	}
	lines := map[string]int{"gpu": 3, "workload": 5, "seq-len": 6, "optimizer": 7, "loss": 8, "lora-rank": 9, "lora-targets": 10, "cuda-context": 11}
	for name, line := range lines {
		in := got.Inputs[name]
		if want := "project file " + pp + ":" + itoa(line); in.Source != "project" || in.From != want {
			t.Errorf("input %s: source %q from %q, want project from %q", name, in.Source, in.From, want)
		}
	}
	if want := "catalog, project file " + pp + ":4"; got.Model.From != want {
		t.Errorf("model from %q, want %q", got.Model.From, want)
	}
	if in := got.Inputs["micro-batch"]; in.Source != "assumed" {
		t.Errorf("micro-batch source %q, want assumed: neither a flag nor the project states it", in.Source)
	}
	over := estimateJSONOf(t, "estimate", "--config", pp, "--optimizer", "adamw", "--seq-len", "2048")
	if over.Inputs["optimizer"].Source != "given" || over.Inputs["seq-len"].Value != float64(2048) {
		t.Errorf("flags did not win over the project file: %+v", over.Inputs)
	}
	text, _, code := run(t, false, nil, "estimate", "--config", pp)
	named := false
	for _, l := range strings.Split(text, "\n") {
		f := strings.Fields(l)
		named = named || (len(f) == 5 && f[0] == "optimizer" && f[1] == "adam8bit" && f[4] == pp+":7")
	}
	if code != 0 || !named {
		t.Errorf("text output does not name the project line (exit %d):\n%s", code, text)
	}
}

// TestEstimateProjectKbitFP32: a QLoRA target's kbit_fp32 sizes the base's
// unquantized parameters in fp32, as --kbit-fp32 does.
func TestEstimateProjectKbitFP32(t *testing.T) {
	dir := t.TempDir()
	body := strings.Replace(loraProject, "method: lora", "method: qlora", 1)
	off := estimateJSONOf(t, "estimate", "--config", write(t, dir, "off.yaml", body))
	pp := write(t, dir, "on.yaml", body+"    kbit_fp32: true\n")
	on := estimateJSONOf(t, "estimate", "--config", pp)
	flag := estimateJSONOf(t, "estimate", "--config", write(t, dir, "off2.yaml", body), "--kbit-fp32")
	if on.PerGPU.Total <= off.PerGPU.Total || on.PerGPU.Total != flag.PerGPU.Total {
		t.Errorf("kbit_fp32: %d, without %d, flag %d", on.PerGPU.Total, off.PerGPU.Total, flag.PerGPU.Total)
	}
	if in := on.Inputs["kbit-fp32"]; in.Source != "project" || in.From != "project file "+pp+":12" {
		t.Errorf("kbit-fp32 input %+v", in)
	}
}

// TestEstimateProjectTargetPath picks the target whose paths match.
func TestEstimateProjectTargetPath(t *testing.T) {
	dir := t.TempDir()
	pp := write(t, dir, ".gpulint.yaml", loraProject+`  - paths: ["serve/**"]
    gpu: My-Card
    gpu_memory: 24GiB
    params: 7.5B
    max_num_batched_tokens: 4096
    enforce_eager: true
    vllm_version: 0.11.1
`)
	got := estimateJSONOf(t, "estimate", "--config", pp, "--target-path", dir+"/serve/vllm.yaml", "--workload", "serve")
	if got.Capacity != 24<<30 {
		t.Errorf("capacity %d, want the stated 24 GiB", got.Capacity)
	}
	if !strings.HasPrefix(got.Model.From, "params 7.5B, project file "+pp+":15") {
		t.Errorf("model from %q", got.Model.From)
	}
	for _, name := range []string{"gpu-memory", "max-num-batched-tokens", "enforce-eager", "vllm-version"} {
		if got.Inputs[name].Source != "project" {
			t.Errorf("input %s = %+v, want from the project", name, got.Inputs[name])
		}
	}
	_, errOut, code := run(t, false, nil, "estimate", "--config", pp, "--target-path", dir+"/other.json")
	if code != 2 || !strings.Contains(errOut, "no target") {
		t.Errorf("unmatched --target-path: exit %d, %s", code, errOut)
	}
}

// TestEstimateProjectActivationOffloading: the project key feeds the
// estimate as --activation-offloading would, the input names the project's
// line, and the GPU figure drops below the one without it.
func TestEstimateProjectActivationOffloading(t *testing.T) {
	dir := t.TempDir()
	pp := write(t, dir, ".gpulint.yaml", loraProject+"    activation_offloading: true\n")
	off := estimateJSONOf(t, "estimate", "--config", pp)
	in := off.Inputs["activation-offloading"]
	if in.Value != true || !strings.Contains(in.From, pp+":12") {
		t.Errorf("activation-offloading input %+v, want true from %s:12", in, pp)
	}
	flag := estimateJSONOf(t, "estimate", "--config", pp, "--activation-offloading=false")
	if flag.Inputs["activation-offloading"].Source != "given" || flag.PerGPU.Total <= off.PerGPU.Total {
		t.Errorf("--activation-offloading=false: %d (%+v), project's offloaded %d: want the flag to win and a larger total",
			flag.PerGPU.Total, flag.Inputs["activation-offloading"], off.PerGPU.Total)
	}
}

// TestEstimateGaLoreIsAssumed: GaLore is sized as the optimizer it wraps,
// and its input says so even when given.
func TestEstimateGaLoreIsAssumed(t *testing.T) {
	base := []string{"estimate", "--model", "meta-llama/Llama-3.1-8B", "--gpu", "H100-80GB"}
	galore := estimateJSONOf(t, append(base, "--optimizer", "galore-adamw")...)
	adamw := estimateJSONOf(t, append(base, "--optimizer", "adamw")...)
	if galore.PerGPU.Total != adamw.PerGPU.Total {
		t.Errorf("galore-adamw %d, adamw %d: want the stand-in's estimate", galore.PerGPU.Total, adamw.PerGPU.Total)
	}
	in := galore.Inputs["optimizer"]
	if in.Source != "assumed" || in.Value != "galore-adamw" || !strings.Contains(in.Basis, "sized as adamw") {
		t.Errorf("optimizer input %+v, want assumed, sized as adamw", in)
	}
	if adamw.Inputs["optimizer"].Source != "given" {
		t.Errorf("adamw input %+v, want given", adamw.Inputs["optimizer"])
	}
}

// TestEstimateFSDP: --fsdp shards like the ZeRO stage its strategy maps to,
// is listed among the inputs, and excludes --zero.
func TestEstimateFSDP(t *testing.T) {
	base := []string{"estimate", "--model", "meta-llama/Llama-3.1-8B", "--gpu", "H100-80GB", "--gpus", "8"}
	ddp := estimateJSONOf(t, base...)
	full := estimateJSONOf(t, append(base, "--fsdp", "full_shard")...)
	grad := estimateJSONOf(t, append(base, "--fsdp", "shard_grad_op")...)
	if !(full.PerGPU.Total < grad.PerGPU.Total && grad.PerGPU.Total < ddp.PerGPU.Total) {
		t.Errorf("per-GPU totals full_shard %d, shard_grad_op %d, none %d: want decreasing with sharding",
			full.PerGPU.Total, grad.PerGPU.Total, ddp.PerGPU.Total)
	}
	if diff := cmp.Diff("full_shard", full.Inputs["fsdp"].Value); diff != "" || full.Inputs["fsdp"].Source != "given" {
		t.Errorf("fsdp input %+v", full.Inputs["fsdp"])
	}
	if _, ok := ddp.Inputs["fsdp"]; ok {
		t.Error("fsdp listed without --fsdp")
	}
	for _, args := range [][]string{{"--fsdp", "zero3"}, {"--fsdp", "full_shard", "--zero", "3"}} {
		if _, errOut, code := run(t, false, nil, append(base, args...)...); code != 2 {
			t.Errorf("%v: exit %d, %s", args, code, errOut)
		}
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// TestLintEvidenceNamesProjectLine: through the CLI, a verdict resting on an
// input the project file states carries that file's line in its JSON
// evidence, and a GaLore stand-in keeps the verdict at info.
func TestLintEvidenceNamesProjectLine(t *testing.T) {
	dir := t.TempDir()
	ds := write(t, dir, "ds.json", `{"train_micro_batch_size_per_gpu": 16, "bf16": {"enabled": true}, "zero_optimization": {"stage": 3}}`)
	project := `targets:
  - paths: ["**"]
    gpu: H100-80GB
    gpus: 8
    model: meta-llama/Llama-3.1-8B
    method: full
    seq_len: 2048
    attention: eager
    optimizer: %s
`
	type evidence struct {
		Name, Value, Source, File string
		Line                      int
	}
	lintJSON := func(t *testing.T, optimizer string) (string, []evidence) {
		t.Helper()
		write(t, dir, ".gpulint.yaml", strings.Replace(project, "%s", optimizer, 1))
		out, errOut, _ := run(t, false, nil, "lint", "--format", "json", ds)
		var got struct {
			Findings []struct {
				Slug, Severity string
				Evidence       []evidence
			}
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("%v: %s", err, errOut)
		}
		for _, f := range got.Findings {
			if f.Slug == "vram-overcommit" {
				return f.Severity, f.Evidence
			}
		}
		t.Fatalf("no vram-overcommit in %s", out)
		return "", nil
	}
	sev, ev := lintJSON(t, "adam8bit")
	found := map[string]evidence{}
	for _, e := range ev {
		found[e.Name] = e
	}
	if sev != "error" {
		t.Errorf("severity %s, want error", sev)
	}
	for name, line := range map[string]int{"attention": 8, "optimizer": 9} {
		if e := found[name]; e.Source != "project" || !strings.HasSuffix(e.File, ".gpulint.yaml") || e.Line != line {
			t.Errorf("evidence %s = %+v, want project at .gpulint.yaml:%d", name, e, line)
		}
	}
	if sev, _ := lintJSON(t, "galore-adamw8bit"); sev != "info" {
		t.Errorf("GaLore stand-in: severity %s, want info", sev)
	}
}

// TestEstimateTargetLenFromProject: an encoder-decoder's decoder length is a
// project-file input like seq_len: target_len fills --target-len, shown
// with its line, and gives the estimate the flag gives; unstated, it is
// assumed to be the encoder length.
func TestEstimateTargetLenFromProject(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "t5/config.json", `{"model_type": "t5", "d_model": 512, "d_ff": 2048, "d_kv": 64,
		"num_heads": 8, "num_layers": 6, "vocab_size": 32128}`)
	pp := write(t, dir, ".gpulint.yaml", `targets:
  - paths: ["**"]
    gpu: L4
    model: t5
    method: full
    seq_len: 512
    target_len: 64
`)
	got := estimateJSONOf(t, "estimate", "--config", pp)
	flags := estimateJSONOf(t, "estimate", "--gpu", "L4", "--model", dir+"/t5", "--workload", "train",
		"--seq-len", "512", "--target-len", "64")
	if got.PerGPU.Total != flags.PerGPU.Total {
		t.Errorf("project estimate %d, flags %d", got.PerGPU.Total, flags.PerGPU.Total)
	}
	if in, want := got.Inputs["target-len"], "project file "+pp+":7"; in.Source != "project" || in.From != want || in.Value != float64(64) {
		t.Errorf("target-len: %+v, want 64 from %q", in, want)
	}
	unset := estimateJSONOf(t, "estimate", "--gpu", "L4", "--model", dir+"/t5", "--workload", "train", "--seq-len", "512")
	if in := unset.Inputs["target-len"]; in.Source != "assumed" || in.Value != float64(512) {
		t.Errorf("unset target-len: %+v, want 512 assumed", in)
	}
	if unset.PerGPU.Total <= got.PerGPU.Total {
		t.Errorf("target 512 estimate %d not above target 64's %d", unset.PerGPU.Total, got.PerGPU.Total)
	}
}

// TestEstimatePagedAdamWStatesFP32: --optimizer paged-adamw is
// bitsandbytes' 32-bit PagedAdamW, whose two moments are fp32 over any
// parameter dtype, so under pure bf16 it needs 4 more bytes a parameter
// than torch's AdamW (bf16 moments); under mixed bf16, where both keep
// fp32 states, the two agree.
func TestEstimatePagedAdamWStatesFP32(t *testing.T) {
	base := []string{"estimate", "--model", "meta-llama/Llama-3.2-1B", "--gpu", "H100-80GB"}
	for _, tc := range []struct {
		precision string
		extra     int64 // bytes paged-adamw needs over adamw, per parameter
	}{
		{"pure-bf16", 4},
		{"bf16", 0},
	} {
		t.Run(tc.precision, func(t *testing.T) {
			args := append(append([]string{}, base...), "--precision", tc.precision)
			torch := estimateJSONOf(t, append(args, "--optimizer", "adamw")...)
			paged := estimateJSONOf(t, append(args, "--optimizer", "paged-adamw")...)
			const params = 1_235_814_400 // Llama 3.2 1B, tied embeddings
			got := paged.PerGPU.Total - torch.PerGPU.Total
			want := tc.extra * params
			if d := got - want; d < -want/50-(1<<20) || d > want/50+(1<<20) {
				t.Errorf("paged-adamw - adamw = %d bytes, want about %d", got, want)
			}
		})
	}
}

// TestEstimateNotesDroppedModel: serving Llama 3.2 Vision on a vLLM
// release after v0.10.2 is refused at start-up, and the estimate's verdict
// says so in text and JSON (not "fits", whatever the memory); on v0.10.2
// it fits.
func TestEstimateNotesDroppedModel(t *testing.T) {
	base := []string{"estimate", "--workload", "serve", "--model", "meta-llama/Llama-3.2-11B-Vision-Instruct", "--gpu", "H100-80GB", "--max-model-len", "8192"}
	for version, refused := range map[string]bool{"0.11.0": true, "0.10.2": false} {
		out, errOut, code := run(t, false, nil, append(base, "--vllm-version", version)...)
		if code != 0 {
			t.Fatalf("--vllm-version %s: exit %d: %s", version, code, errOut)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		verdict := lines[len(lines)-1]
		wantPrefix := "fits: "
		if refused {
			wantPrefix = "does not start: vLLM v0.11.0 no longer serves MllamaForConditionalGeneration (v0.10.2 was the last release to serve it)"
		}
		if !strings.HasPrefix(verdict, wantPrefix) {
			t.Errorf("--vllm-version %s: verdict %q, want prefix %q", version, verdict, wantPrefix)
		}
		js, errOut, code := run(t, false, nil, append(base, "--vllm-version", version, "--format", "json")...)
		if code != 0 {
			t.Fatalf("--vllm-version %s json: exit %d: %s", version, code, errOut)
		}
		var got struct {
			Fits    bool   `json:"fits"`
			Refused string `json:"refused"`
		}
		if err := json.Unmarshal([]byte(js), &got); err != nil {
			t.Fatal(err)
		}
		if got.Fits == refused || (got.Refused != "") != refused {
			t.Errorf("--vllm-version %s json: fits %v, refused %q; want refused %v", version, got.Fits, got.Refused, refused)
		}
	}
}
