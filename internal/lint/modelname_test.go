package lint_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/lint"
)

// A fine-tune the catalog, the cache and the disk do not know is sized as
// the one catalog model its name names, as an assumed input: every
// verdict resting on it is info, says so, names how to state the model and
// carries the guess as evidence at the place the file names the model. A
// verdict that does not rest on the model keeps its severity, and a name
// matching no single catalog model is left unknown.
func TestModelAssumedFromName(t *testing.T) {
	manifest := l4VLLMDeployment
	_, paths := writeFiles(t, map[string]string{
		// 70B on one L4: the weights cannot fit.
		"big.yaml": manifest("acme/llama-3.1-70b-sft-v2", "1"),
		// 64 attention heads over TP 3: vLLM refuses to start, if the
		// model is the one the name suggests.
		"heads.yaml": manifest("acme/llama-3.1-70b-sft-v2", "3"),
		// Llama 3.1 has no 13B: no catalog model, no verdict.
		"unknown.yaml": manifest("acme/llama-3.1-13b-sft", "1"),
	})
	res, err := newLinter(t, lint.Options{}).Run(context.Background(), paths)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]lint.FileResult{}
	for _, fr := range res.Files {
		files[filepath.Base(fr.Path)] = fr
	}

	if s := files["unknown.yaml"].Sizing; s != nil {
		t.Errorf("unknown.yaml: sizing %+v, want none", s)
	}
	if s := files["big.yaml"].Sizing; s == nil || s.Fits || s.AssumedModel != "meta-llama/Llama-3.1-70B" {
		t.Errorf("big.yaml: sizing %+v, want a 70B estimate that does not fit, assumed meta-llama/Llama-3.1-70B", s)
	}
	for _, name := range []string{"big.yaml", "heads.yaml"} {
		fr := files[name]
		rested := 0
		for _, f := range fr.Findings {
			var model *finding.Input
			for i, in := range f.Evidence {
				if in.Name == "model" {
					model = &f.Evidence[i]
				}
			}
			if model == nil {
				continue
			}
			rested++
			if f.Severity > finding.SeverityInfo {
				t.Errorf("%s %s: severity %v on an assumed model, want info", name, f.Rule, f.Severity)
			}
			if model.Source != finding.SourceAssumed || model.Range == nil || model.Range.Start.Line != 13 {
				t.Errorf("%s %s: model evidence %+v, want assumed, at line 13", name, f.Rule, model)
			}
			if !strings.Contains(f.Message, "assumes model meta-llama/Llama-3.1-70B") ||
				!strings.Contains(f.Message, "from the name acme/llama-3.1-70b-sft-v2") ||
				!strings.Contains(f.Message, "state the model to confirm") {
				t.Errorf("%s %s: message %q does not say the model is assumed from the name", name, f.Rule, f.Message)
			}
			if len(f.Fixes) > 0 {
				t.Errorf("%s %s: a fix sized on an assumed model", name, f.Rule)
			}
		}
		if rested == 0 {
			t.Errorf("%s: no finding rests on the assumed model: %+v", name, fr.Findings)
		}
	}
	heads := false
	for _, f := range files["heads.yaml"].Findings {
		if f.Rule == "VLLM002" {
			heads = true
		}
	}
	if !heads {
		t.Errorf("heads.yaml: no VLLM002 on 64 heads over TP 3: %+v", files["heads.yaml"].Findings)
	}
}

// A QLoRA recipe on a bitsandbytes re-pack ("-bnb-4bit") is sized as the
// catalog base its name names, with 4-bit weights held once, as an assumed input;
// and since the checkpoint holds no 16-bit base, quantized-base-on-large-gpu
// does not advise loading one, as it does for the same recipe on the
// 16-bit catalog id.
func TestBitsandbytesRepackAssumedFromName(t *testing.T) {
	recipe := func(model string) string {
		return "base_model: " + model + "\nload_in_4bit: true\nadapter: qlora\nlora_r: 16\nsequence_len: 2048\n" +
			"micro_batch_size: 1\ngradient_accumulation_steps: 1\ngradient_checkpointing: true\nbf16: true\n" +
			"datasets:\n  - path: tatsu-lab/alpaca\n    type: alpaca\n"
	}
	_, paths := writeFiles(t, map[string]string{
		"repack.yml": recipe("unsloth/llama-3.1-8b-bnb-4bit"),
		"base.yml":   recipe("meta-llama/Llama-3.1-8B"),
		"big.yml":    recipe("unsloth/llama-3.1-70b-bnb-4bit"),
	})
	res, err := newLinter(t, lint.Options{GPU: "H100-80GB", GPUs: 1}).Run(context.Background(), paths)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]lint.FileResult{}
	for _, fr := range res.Files {
		files[filepath.Base(fr.Path)] = fr
	}
	rules := func(name string) map[string]bool {
		out := map[string]bool{}
		for _, f := range files[name].Findings {
			out[f.Rule] = true
			if name != "base.yml" && f.Severity > finding.SeverityInfo {
				t.Errorf("%s %s: severity %v on an assumed model, want info", name, f.Rule, f.Severity)
			}
		}
		return out
	}
	if !rules("base.yml")["FT004"] {
		t.Fatalf("test premise: no quantized-base-on-large-gpu for QLoRA of the 16-bit Llama-3.1-8B on an H100: %+v", files["base.yml"].Findings)
	}
	if rules("repack.yml")["FT004"] {
		t.Errorf("repack.yml: quantized-base-on-large-gpu advises a 16-bit base the bnb-4bit checkpoint does not hold")
	}
	for name, want := range map[string]string{"repack.yml": "meta-llama/Llama-3.1-8B", "big.yml": "meta-llama/Llama-3.1-70B"} {
		s := files[name].Sizing
		if s == nil || s.AssumedModel != want || s.AssumedWeights != "bitsandbytes (4-bit)" {
			t.Errorf("%s: sizing %+v, want %s assumed with bitsandbytes (4-bit) weights", name, s, want)
		}
	}
	if s := files["repack.yml"].Sizing; s != nil && !s.Fits {
		t.Errorf("repack.yml: 8B QLoRA does not fit an H100: %+v", s)
	}
	// The base is held once, in 4 bits: QLoRA on the re-pack needs what
	// QLoRA on the 16-bit id needs (it quantizes that base on load).
	if r, b := files["repack.yml"].Sizing, files["base.yml"].Sizing; r == nil || b == nil || r.PerGPUBytes != b.PerGPUBytes {
		t.Errorf("QLoRA on the re-pack %+v, on the 16-bit id %+v: want the same need", r, b)
	}
}

// A path to weights gpulint cannot read, whose last component is a
// catalog name ("/data/llama-3.1-70b-instruct"), or another organisation's
// repository of that name, is mapped by that name alone: the model is
// assumed, its evidence says how it was mapped, and the verdicts on it are
// info without a fix. The catalog id itself states it.
func TestModelAssumedFromPath(t *testing.T) {
	_, paths := writeFiles(t, map[string]string{
		"path.yaml": l4VLLMDeployment("/data/llama-3.1-70b-instruct", "1"),
		"org.yaml":  l4VLLMDeployment("acme/Llama-3.1-70B-Instruct", "1"),
		"id.yaml":   l4VLLMDeployment("meta-llama/Llama-3.1-70B-Instruct", "1"),
	})
	res, err := newLinter(t, lint.Options{}).Run(context.Background(), paths)
	if err != nil {
		t.Fatal(err)
	}
	evidence := map[string]string{
		"path.yaml": "mapped by name from the path /data/llama-3.1-70b-instruct",
		"org.yaml":  "from the name acme/Llama-3.1-70B-Instruct",
	}
	for _, fr := range res.Files {
		name := filepath.Base(fr.Path)
		want, assumed := evidence[name]
		if s := fr.Sizing; s == nil || s.Fits || (s.AssumedModel != "") != assumed {
			t.Errorf("%s: sizing %+v, want a 70B estimate that does not fit, model assumed %v", name, s, assumed)
		}
		rested := 0
		for _, f := range fr.Findings {
			for _, in := range f.Evidence {
				if in.Name != "model" {
					continue
				}
				rested++
				if !assumed {
					if in.Source == finding.SourceAssumed {
						t.Errorf("%s %s: model evidence %+v on a stated catalog id", name, f.Rule, in)
					}
					continue
				}
				if in.Source != finding.SourceAssumed || !strings.Contains(in.Value, want) {
					t.Errorf("%s %s: model evidence %+v, want assumed, %q", name, f.Rule, in, want)
				}
				if f.Severity > finding.SeverityInfo || len(f.Fixes) > 0 {
					t.Errorf("%s %s: %v with %d fixes on a name-mapped model, want info without a fix", name, f.Rule, f.Severity, len(f.Fixes))
				}
			}
		}
		if assumed && rested == 0 {
			t.Errorf("%s: no finding rests on the name-mapped model: %+v", name, fr.Findings)
		}
	}
}
