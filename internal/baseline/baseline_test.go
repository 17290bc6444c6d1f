package baseline

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpulint/gpulint/internal/finding"
)

func fd(file string, line int, rule, path, msg string) finding.Finding {
	return finding.Finding{Rule: rule, Message: msg, Path: []any{path},
		Range: finding.Range{File: file, Start: finding.Pos{Line: line, Col: 1}}}
}

// TestFilter: a baselined finding stays baselined when lines move or its
// numbers change; another file, key or a second occurrence is new.
func TestFilter(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.json")
	recorded := []finding.Finding{fd(a, 3, "GPU001", "fp16", "fp32 on H100")}
	var buf bytes.Buffer
	if err := Write(&buf, filepath.Join(dir, "baseline.json"), recorded); err != nil {
		t.Fatal(err)
	}
	b, err := Read(&buf, filepath.Join(dir, "baseline.json"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		now       []finding.Finding
		wantLines []int
		wantBase  int
	}{
		{"same", recorded, nil, 1},
		{"moved down", []finding.Finding{fd(a, 9, "GPU001", "fp16", "fp32 on H100")}, nil, 1},
		{"numbers changed", []finding.Finding{fd(a, 3, "GPU001", "fp16", "fp32 on H200")}, nil, 1},
		{"other file", []finding.Finding{fd(filepath.Join(dir, "b.json"), 3, "GPU001", "fp16", "fp32 on H100")}, []int{3}, 0},
		{"other key", []finding.Finding{fd(a, 3, "GPU001", "bf16", "fp32 on H100")}, []int{3}, 0},
		{"second occurrence", []finding.Finding{fd(a, 3, "GPU001", "fp16", "fp32 on H100"), fd(a, 7, "GPU001", "fp16", "fp32 on H100")}, []int{7}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, n := b.Filter(tc.now)
			var lines []int
			for _, f := range got {
				lines = append(lines, f.Range.Start.Line)
			}
			if diff := cmp.Diff(tc.wantLines, lines); diff != "" || n != tc.wantBase {
				t.Errorf("baselined %d, want %d; new lines (-want +got):\n%s", n, tc.wantBase, diff)
			}
		})
	}
}
