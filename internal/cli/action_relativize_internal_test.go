package cli

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/lint"
)

// The Action lints the workspace by absolute paths; the PR comment, the
// annotations and SARIF show every location relative to the workspace:
// a finding's own, its related locations, its evidence and its file's
// sizing sources. A location outside the workspace stays absolute.
func TestRelativizeEveryLocation(t *testing.T) {
	ws := filepath.Join(string(filepath.Separator), "ws")
	in := func(p string) string { return filepath.Join(ws, p) }
	shared := &finding.Range{File: in("deploy/job.yaml"), Start: finding.Pos{Line: 8, Col: 9}}
	outside := filepath.Join(string(filepath.Separator), "elsewhere", "x.sh")
	res := &lint.Result{
		Files: []lint.FileResult{{Path: in("conf/ds.json"), Sizing: &lint.Sizing{GPU: "L4",
			Related: []lint.SizingSource{{Role: "launch", File: in("launch/run.sh"), Line: 1}}}}},
		Findings: []finding.Finding{
			{Range: finding.Range{File: in("conf/ds.json")},
				Related:  []finding.Related{{Range: finding.Range{File: in("launch/run.sh")}}},
				Evidence: []finding.Input{{Name: "gpu", Range: shared}, {Name: "gpus", Range: &finding.Range{File: outside}}, {Name: "model", Source: finding.SourceAssumed}}},
			{Range: finding.Range{File: in("conf/ds.json")}, Evidence: []finding.Input{{Name: "gpu", Range: shared}}},
		},
	}
	relativize(res, ws)
	var got []string
	got = append(got, res.Files[0].Path, res.Files[0].Sizing.Related[0].File)
	for _, f := range res.Findings {
		got = append(got, f.Range.File)
		for _, r := range f.Related {
			got = append(got, r.Range.File)
		}
		for _, e := range f.Evidence {
			if e.Range != nil {
				got = append(got, e.Range.File)
			}
		}
	}
	want := []string{"conf/ds.json", "launch/run.sh", "conf/ds.json", "launch/run.sh", "deploy/job.yaml", filepath.ToSlash(outside), "conf/ds.json", "deploy/job.yaml"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("locations (-want +got):\n%s", diff)
	}
}
