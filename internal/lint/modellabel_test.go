package lint_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/lint"
)

// A model the file names only by a label (GKE's ai.gke.io/model) or by
// the path of its weights (a KServe storageUri) is assumed through the
// catalog's name mapping: the verdict is info, says what it assumes and
// where the name is; a label naming another model than the one the file
// states is reported at the label, info, and the stated model is used; a
// model id the catalog lacks is not replaced by the label.
func TestModelAssumedFromLabelOrWeightsPath(t *testing.T) {
	deployment := func(label, model string) string {
		return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: server
spec:
  template:
    metadata:
      labels:
        ai.gke.io/model: ` + label + `
    spec:
      nodeSelector:
        cloud.google.com/gke-accelerator: nvidia-l4
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.10.0
        args: ["--model=` + model + `", "--max-model-len=4096"]
        resources:
          limits:
            nvidia.com/gpu: "1"
`
	}
	_, paths := writeFiles(t, map[string]string{
		// 70B on one L4, named only by the label: does not fit, if the
		// label names the model.
		"label.yaml": deployment("llama-3.1-70b-instruct", "/data/ckpt/hf"),
		// The stated model wins over a label that disagrees.
		"conflict.yaml": deployment("llama-3.1-70b-instruct", "meta-llama/Llama-3.1-8B-Instruct"),
		// A model id the catalog lacks stays unknown.
		"unknownid.yaml": deployment("llama-3.1-70b-instruct", "acme/secret-model"),
		"kserve.yaml": `apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata:
  name: llama-31-70b-instruct
spec:
  predictor:
    nodeSelector:
      cloud.google.com/gke-accelerator: nvidia-l4
    model:
      modelFormat:
        name: huggingface
      storageUri: pvc://models/llama-31-70b-instruct
      args: ["--tensor-parallel-size=1", "--max-model-len=4096"]
      resources:
        limits:
          nvidia.com/gpu: "1"
`,
	})
	res, err := newLinter(t, lint.Options{}).Run(context.Background(), paths)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]lint.FileResult{}
	for _, fr := range res.Files {
		files[filepath.Base(fr.Path)] = fr
	}
	if s := files["unknownid.yaml"].Sizing; s != nil {
		t.Errorf("unknownid.yaml: sizing %+v, want none", s)
	}
	if s := files["conflict.yaml"].Sizing; s == nil || !s.Fits || s.AssumedModel != "" {
		t.Errorf("conflict.yaml: sizing %+v, want the stated 8B, fitting, not assumed", s)
	}
	conflict := false
	for _, f := range files["conflict.yaml"].Findings {
		if f.Rule == "TARGET001" {
			conflict = true
			if f.Severity != finding.SeverityInfo || f.Range.Start.Line != 9 || len(f.Related) != 1 || f.Related[0].Range.Start.Line != 16 ||
				!strings.Contains(f.Message, "the ai.gke.io/model label names model llama-3.1-70b-instruct, not the stated model meta-llama/Llama-3.1-8B-Instruct") {
				t.Errorf("conflict.yaml: TARGET001 %+v, want info at the label (line 9), the stated model related (line 16)", f)
			}
		}
	}
	if !conflict {
		t.Errorf("conflict.yaml: no TARGET001 for a label naming another model: %+v", files["conflict.yaml"].Findings)
	}
	for name, want := range map[string]struct {
		line int
		from string
	}{
		"label.yaml":  {9, "from the ai.gke.io/model label llama-3.1-70b-instruct"},
		"kserve.yaml": {12, "mapped by name from the path pvc://models/llama-31-70b-instruct"},
	} {
		fr := files[name]
		if s := fr.Sizing; s == nil || s.Fits || s.AssumedModel != "meta-llama/Llama-3.1-70B" {
			t.Errorf("%s: sizing %+v, want a 70B estimate that does not fit, assumed meta-llama/Llama-3.1-70B", name, s)
		}
		rested := 0
		for _, f := range fr.Findings {
			for _, in := range f.Evidence {
				if in.Name != "model" {
					continue
				}
				rested++
				if f.Severity > finding.SeverityInfo || in.Source != finding.SourceAssumed || in.Range == nil || in.Range.Start.Line != want.line ||
					!strings.Contains(f.Message, want.from) {
					t.Errorf("%s %s: %v %q, model evidence %+v; want info, assumed at line %d, %q", name, f.Rule, f.Severity, f.Message, in, want.line, want.from)
				}
			}
		}
		if rested == 0 {
			t.Errorf("%s: no finding rests on the assumed model: %+v", name, fr.Findings)
		}
	}
}
