package lint_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/gpulint/gpulint/internal/golden"
	"github.com/gpulint/gpulint/internal/lint"
)

// TestTerraformPools runs the cases of testdata/tfpool: small
// repositories whose Karpenter pools are declared in Terraform heredocs
// (the karpenter-resources chart's values, a kubectl_manifest NodePool)
// beside manifests whose pods select a pool by its labels. want/findings
// lists each finding of the input manifests and, under it, the GPU it
// rests on with the place that GPU was read from.
func TestTerraformPools(t *testing.T) {
	cases := golden.Cases(t, filepath.Join("testdata", "tfpool"))
	if len(cases) == 0 {
		t.Fatal("no cases in testdata/tfpool")
	}
	for _, c := range cases {
		t.Run(filepath.Base(c.Path), func(t *testing.T) {
			dir := t.TempDir()
			var manifests []string
			for name, data := range c.Prefixed("input/") {
				p := filepath.Join(dir, filepath.FromSlash(name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, data, 0o644); err != nil {
					t.Fatal(err)
				}
				if ext := filepath.Ext(name); ext == ".yaml" || ext == ".yml" {
					manifests = append(manifests, p)
				}
			}
			sort.Strings(manifests)
			res, err := newLinter(t, lint.Options{Root: dir}).Run(context.Background(), manifests)
			if err != nil {
				t.Fatal(err)
			}
			rel := func(p string) string {
				r, err := filepath.Rel(dir, p)
				if err != nil || strings.HasPrefix(r, "..") {
					return p
				}
				return filepath.ToSlash(r)
			}
			var b strings.Builder
			for _, f := range res.Findings {
				fmt.Fprintf(&b, "%s:%d %s %s\n", rel(f.Range.File), f.Range.Start.Line, f.Rule, f.Severity)
				for _, e := range f.Evidence {
					if e.Name != "gpu" {
						continue
					}
					at := string(e.Source)
					if e.Range != nil {
						at = fmt.Sprintf("%s:%d:%d", rel(e.Range.File), e.Range.Start.Line, e.Range.Start.Col)
					}
					fmt.Fprintf(&b, "  gpu %s from %s\n", e.Value, at)
				}
			}
			c.Want(t, "want/findings", []byte(b.String()))
			c.Save(t)
		})
	}
}
