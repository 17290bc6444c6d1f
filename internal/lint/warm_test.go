package lint

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gpulint/gpulint/internal/normalize"
	"github.com/gpulint/gpulint/internal/source"
)

func TestSniffKinds(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ds := write("ds_config.json", `{"train_micro_batch_size_per_gpu": 4, "zero_optimization": {"stage": 2}, "bf16": {"enabled": true}}`)
	k8s := write("pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\nspec:\n  containers:\n  - name: c\n    image: i\n    resources:\n      limits:\n        nvidia.com/gpu: 1\n")
	other := write("notes.yaml", "hello: world\n")
	broken := write("broken.json", "{")
	big := write("big.yaml", "a: "+strings.Repeat("x", sniffMaxBytes)+"\n")

	for _, tc := range []struct {
		name  string
		paths []string
		want  []source.Kind
	}{
		{"named files", []string{ds, k8s, other, broken, ds}, []source.Kind{source.KindDeepSpeed, source.KindKubernetes}},
		{"a directory", []string{ds, dir}, nil},
		{"a large file", []string{ds, big}, nil},
		{"a missing file", []string{filepath.Join(dir, "missing.yaml")}, nil},
		{"many files", slices.Repeat([]string{ds}, sniffMaxFiles+1), nil},
	} {
		if got := SniffKinds(tc.paths); !slices.Equal(got, tc.want) {
			t.Errorf("%s: SniffKinds = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestSchemasFor holds schemasFor to the schemas that exist, and to the
// kinds that are checked against one.
func TestSchemasFor(t *testing.T) {
	known := normalize.NewValidator().Schemas()
	for _, k := range []source.Kind{source.KindDeepSpeed, source.KindAccelerate, source.KindVLLM, source.KindKubernetes, source.KindMIG} {
		ss := schemasFor(k)
		if len(ss) == 0 {
			t.Errorf("%s: no schema", k)
		}
		for _, s := range ss {
			if !slices.Contains(known, s) {
				t.Errorf("%s: unknown schema %q", k, s)
			}
		}
	}
	if ss := schemasFor(source.KindFinetune); ss != nil {
		t.Errorf("finetune recipes have no schema, got %v", ss)
	}
}
