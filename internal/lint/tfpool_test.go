package lint_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

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
			// A case holding a .git directory runs as the CLI does, with no
			// root given: the repository is found by its .git.
			opts := lint.Options{Root: dir}
			if _, isRepo := c.Prefixed("input/")[".git/HEAD"]; isRepo {
				opts = lint.Options{}
			}
			res, err := newLinter(t, opts).Run(context.Background(), manifests)
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

// Hostile Terraform beside a manifest: a .tf over the size limit, one
// of openers that never close, one of many small heredocs (each parse
// reads the file up to its heredoc), a deep directory chain. The run stays
// bounded, and the one well-formed pool still resolves the pod's GPU.
func TestTerraformPoolsHostile(t *testing.T) {
	dir := t.TempDir()
	write := func(p string, data []byte) {
		t.Helper()
		p = filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pool := "x = [<<-EOT\n  name: gpu\n  nodePool:\n    requirements:\n      - key: karpenter.k8s.aws/instance-family\n        operator: In\n        values: [\"g5\"]\nEOT\n]\n"
	write("infra/pool.tf", []byte(pool))
	write("infra/huge.tf", append([]byte("# nodePool:\n"), bytes.Repeat([]byte("y = <<-EOT\nnodePool: ${\n"), 200_000)...))
	write("infra/many.tf", bytes.Repeat([]byte("w = <<-EOT\nnodePool: {}\nEOT\n"), 30_000))
	write("infra/open.tf", append([]byte("z = <<-EOT\n"), bytes.Repeat([]byte("  nodePool: {labels: [${\"}\"}]}\n"), 20_000)...))
	write(strings.Repeat("d/", 40)+"deep.tf", []byte(strings.Replace(pool, "g5", "p4d", 1)))
	write("k8s/vllm.yaml", []byte(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: vllm
spec:
  template:
    spec:
      nodeSelector:
        NodeGroupType: gpu
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.8.5
          args: ["--model", "meta-llama/Llama-3.1-70B-Instruct", "--max-model-len", "8192"]
          resources:
            limits:
              nvidia.com/gpu: 1
`))
	start := time.Now()
	res, err := newLinter(t, lint.Options{Root: dir}).Run(context.Background(), []string{filepath.Join(dir, "k8s", "vllm.yaml")})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("lint took %v", d)
	}
	n := 0
	for _, f := range res.Findings {
		for _, e := range f.Evidence {
			if e.Name == "gpu" && e.Range != nil && filepath.Base(e.Range.File) == "pool.tf" {
				n++
			}
		}
	}
	if n == 0 {
		t.Errorf("no finding rests on pool.tf's g5 (the deep p4d pool is past the walk's depth); findings: %+v", res.Findings)
	}
}
