package lint_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/lint"
)

// writeChart writes a chart directory: Chart.yaml (skipped when chart is
// "") and one values file under examples/, and returns the values path.
func writeChart(t *testing.T, chart, values string) string {
	t.Helper()
	dir := t.TempDir()
	if chart != "" {
		if err := os.WriteFile(filepath.Join(dir, "Chart.yaml"), []byte("apiVersion: v2\nname: "+chart+"\nversion: 0.1.0\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "examples"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "examples", "values.yaml")
	if err := os.WriteFile(p, []byte(values), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Values of substratusai's vllm chart are the vLLM server the chart
// deploys: sized with no flags, the model at its key, the GPU at the node
// selector and the count at the container's GPU limit.
func TestSubstratusVLLMChartValues(t *testing.T) {
	const values = `model: meta-llama/Llama-3.1-70B-Instruct
resources:
  limits:
    nvidia.com/gpu: 1
nodeSelector:
  cloud.google.com/gke-accelerator: nvidia-l4
`
	run := func(p string) lint.FileResult {
		t.Helper()
		res, err := newLinter(t, lint.Options{}).Run(context.Background(), []string{p})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Files) != 1 {
			t.Fatalf("%d file results, want 1", len(res.Files))
		}
		return res.Files[0]
	}
	fr := run(writeChart(t, "vllm", values))
	if fr.Sizing == nil || fr.Sizing.GPU != "L4" || fr.Sizing.Fits {
		t.Fatalf("sizing = %+v, want 70B not fitting one L4", fr.Sizing)
	}
	type input struct {
		Name      string
		Line, Col int
	}
	var got []input
	for _, f := range fr.Findings {
		if f.Rule != "GPU004" {
			continue
		}
		if f.Range.Start.Line != 1 || f.Severity != finding.SeverityError {
			t.Errorf("GPU004 at line %d (%s), want an error at the model, line 1", f.Range.Start.Line, f.Severity)
		}
		for _, e := range f.Evidence {
			in := input{Name: e.Name}
			if e.Range != nil {
				in.Line, in.Col = e.Range.Start.Line, e.Range.Start.Col
			}
			got = append(got, in)
		}
	}
	want := []input{{"gpu", 6, 3}, {"gpus", 4, 5}, {"model", 1, 1}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GPU004 evidence (-want +got):\n%s", diff)
	}

	// With no Chart.yaml, a key only the vllm chart defines names it.
	if fr := run(writeChart(t, "", values+"maxModelLen: 4096\n")); fr.Sizing == nil {
		t.Errorf("values with the chart's maxModelLen and no Chart.yaml: no sizing")
	}
	// The same values are another chart's (TGI's takes them too) or no
	// known chart's: nothing is sized.
	for _, chart := range []string{"text-generation-inference", ""} {
		if fr := run(writeChart(t, chart, values)); fr.Sizing != nil || len(fr.Findings) != 0 {
			t.Errorf("chart %q: sizing %+v, findings %v, want none", chart, fr.Sizing, fr.Findings)
		}
	}
}

// The sizing of chart values names the Chart.yaml that says which chart
// they are.
func TestSubstratusVLLMChartSizingRelated(t *testing.T) {
	p := writeChart(t, "vllm", "model: meta-llama/Llama-3.1-8B-Instruct\nresources:\n  limits:\n    nvidia.com/gpu: 1\nnodeSelector:\n  cloud.google.com/gke-accelerator: nvidia-l4\n")
	res, err := newLinter(t, lint.Options{}).Run(context.Background(), []string{p})
	if err != nil {
		t.Fatal(err)
	}
	z := res.Files[0].Sizing
	if z == nil {
		t.Fatal("no sizing")
	}
	want := []lint.SizingSource{{Role: "chart", File: filepath.Join(filepath.Dir(filepath.Dir(p)), "Chart.yaml"), Line: 2}}
	if diff := cmp.Diff(want, z.Related); diff != "" {
		t.Errorf("sizing related (-want +got):\n%s", diff)
	}
}

// Values of substratusai's text-generation-inference chart are the TGI
// launcher it runs: with no MAX_TOTAL_TOKENS, the default of the chart's
// TGI release (appVersion 1.x: 2048) is the sequence length; a release
// whose default is not a fixed number (2.x and later) is not sized.
func TestSubstratusTGIChartValues(t *testing.T) {
	const values = `model: meta-llama/Llama-3.1-70B-Instruct
resources:
  limits:
    nvidia.com/gpu: 1
nodeSelector:
  cloud.google.com/gke-accelerator: nvidia-l4
`
	write := func(appVersion, values string) string {
		p := writeChart(t, "text-generation-inference", values)
		chart := filepath.Join(filepath.Dir(filepath.Dir(p)), "Chart.yaml")
		data := "apiVersion: v2\nname: text-generation-inference\nversion: 0.1.1\nappVersion: \"" + appVersion + "\"\n"
		if err := os.WriteFile(chart, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	run := func(p string) lint.FileResult {
		t.Helper()
		res, err := newLinter(t, lint.Options{}).Run(context.Background(), []string{p})
		if err != nil {
			t.Fatal(err)
		}
		return res.Files[0]
	}
	fr := run(write("1.1.0", values))
	if fr.Sizing == nil || fr.Sizing.GPU != "L4" || fr.Sizing.Fits {
		t.Fatalf("sizing = %+v, want 70B not fitting one L4", fr.Sizing)
	}
	var gpu004 *finding.Finding
	for i, f := range fr.Findings {
		if f.Rule == "GPU004" {
			gpu004 = &fr.Findings[i]
		}
	}
	if gpu004 == nil {
		t.Fatalf("no GPU004 in %v", fr.Findings)
	}
	// 70B of bf16 weights exceed one L4 at any sequence length: the
	// verdict rests on stated inputs only, so it stays an error.
	if gpu004.Severity != finding.SeverityError {
		t.Errorf("GPU004 is %s, want error", gpu004.Severity)
	}
	var names []string
	for _, e := range gpu004.Evidence {
		names = append(names, e.Name)
	}
	if diff := cmp.Diff([]string{"gpu", "gpus", "model"}, names); diff != "" {
		t.Errorf("GPU004 evidence (-want +got):\n%s", diff)
	}
	// MAX_TOTAL_TOKENS in env states it; a 2.x release's default is not
	// a fixed number.
	if fr := run(write("2.0.0", values)); fr.Sizing != nil {
		t.Errorf("TGI 2.0.0 with no MAX_TOTAL_TOKENS: sizing %+v, want none", fr.Sizing)
	}
	if fr := run(write("2.0.0", values+"env:\n- name: MAX_TOTAL_TOKENS\n  value: \"4096\"\n")); fr.Sizing == nil {
		t.Errorf("MAX_TOTAL_TOKENS in env: no sizing")
	}
}
