package lint_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpulint/gpulint/internal/lint"
)

// TestAbbreviatedFlagIsShownAsWritten: vLLM's argparse reads a unique
// prefix of an option as the option, and so does gpulint; a finding that
// rests on such a flag names it in full but carries, in its evidence, the
// flag as the file writes it, located at that flag. A flag written in full
// adds nothing.
func TestAbbreviatedFlagIsShownAsWritten(t *testing.T) {
	tests := []struct {
		name, flag string
		want       []string
	}{
		{"abbreviation with underscores", "--max_num_seq=4",
			[]string{"max-num-seqs=--max_num_seq, which vLLM's argparse reads as --max-num-seqs, the one option it abbreviates@deploy.yaml:12"}},
		{"full spelling", "--max-num-seqs=4", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: m\nspec:\n  template:\n    spec:\n" +
				"      containers:\n        - name: vllm\n          image: vllm/vllm-openai:v0.10.1\n" +
				"          args:\n            - " + tc.flag + "\n            - --model=Qwen/Qwen2.5-7B-Instruct\n"
			l := newLinter(t, lint.Options{})
			fr, err := l.LintBytes(context.Background(), "deploy.yaml", []byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			found := false
			for _, f := range fr.Findings {
				if f.Rule != "GPU002" {
					continue
				}
				found = true
				if !strings.HasPrefix(f.Message, "max-num-seqs is 4") || f.Range.Start.Line != 12 {
					t.Errorf("GPU002 at line %d: %q, want it at line 12 naming max-num-seqs", f.Range.Start.Line, f.Message)
				}
				for _, in := range f.Evidence {
					if in.Name != "max-num-seqs" || in.Range == nil {
						continue
					}
					got = append(got, in.Name+"="+in.Value+"@"+fmt.Sprintf("%s:%d", in.Range.File, in.Range.Start.Line))
				}
			}
			if !found {
				t.Fatalf("no GPU002 finding: %+v", fr.Findings)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("evidence (-want +got):\n%s", diff)
			}
		})
	}
}
