package lint_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpulint/gpulint/internal/lint"
)

// TestRecipeDeepSpeedCache: the DeepSpeed config a recipe names is part
// of the recipe's cached result, so editing it is never answered from the
// cache.
func TestRecipeDeepSpeedCache(t *testing.T) {
	dir, _ := writeFiles(t, map[string]string{
		"sft.yaml": "model_name_or_path: m\nper_device_train_batch_size: 4\nbf16: true\ndeepspeed: ds.json\n",
		"ds.json":  `{"train_micro_batch_size_per_gpu": "auto", "bf16": {"enabled": "auto"}, "zero_optimization": {"stage": 2}}`,
	})
	recipe := filepath.Join(dir, "sft.yaml")
	cache := lint.NewCache(t.TempDir(), []byte("test"))
	l := newLinter(t, lint.Options{Cache: cache})
	slugs := func() string {
		t.Helper()
		res, err := l.Run(context.Background(), []string{recipe})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, f := range res.Findings {
			out = append(out, f.Slug)
		}
		return strings.Join(out, " ")
	}
	if got := slugs(); got != "" {
		t.Fatalf("clean recipe reported %q", got)
	}
	if got := slugs(); got != "" {
		t.Fatalf("warm run reported %q", got)
	}
	if err := os.WriteFile(filepath.Join(dir, "ds.json"), []byte(`{"train_micro_batch_size_per_gpu": 2, "bf16": {"enabled": false}, "zero_optimization": {"stage": 2}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := slugs(); got != "batch-size-mismatch precision-conflict" {
		t.Errorf("after the DeepSpeed config changed: %q, want batch-size-mismatch precision-conflict", got)
	}
}
