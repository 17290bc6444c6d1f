package recipe_test

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpulint/gpulint/internal/normalize"
	"github.com/gpulint/gpulint/internal/recipe"
)

func TestDeepSpeedCandidates(t *testing.T) {
	tests := []struct {
		name, recipe, written string
		want                  []string
	}{
		{
			name: "absolute path is the only candidate", recipe: "examples/sft.yaml", written: "/etc/ds.json",
			want: []string{"/etc/ds.json"},
		},
		{
			name: "relative path: beside the recipe, its parents, the working directory", recipe: "examples/train/sft.yaml", written: "ds/z3.json",
			want: func() []string {
				out := []string{"examples/train/ds/z3.json", "examples/ds/z3.json", "ds/z3.json"}
				for p := ".."; len(out) < 16; p = filepath.Join(p, "..") {
					out = append(out, filepath.Join(p, "ds/z3.json"))
				}
				return append(out, "ds/z3.json")
			}(),
		},
		{
			name: "absolute recipe stops at the file system root", recipe: "/a/sft.yaml", written: "./ds.json",
			want: []string{"/a/ds.json", "/ds.json", "ds.json"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, recipe.DeepSpeedCandidates(tc.recipe, tc.written)); diff != "" {
				t.Errorf("DeepSpeedCandidates(%q, %q) (-want +got):\n%s", tc.recipe, tc.written, diff)
			}
		})
	}
}

func TestMergeDeepSpeed(t *testing.T) {
	tests := []struct {
		name      string
		recipe    string
		ds        map[string]any
		wantModel any
		wantPaths map[string][]any
	}{
		{
			name:      "stage and offload are recorded at the recipe's deepspeed key",
			recipe:    "model_name_or_path: m\nper_device_train_batch_size: 1\nbf16: true\ndeepspeed: ds.json\n",
			ds:        map[string]any{"zero_optimization": map[string]any{"stage": int64(3), "offload_optimizer": map[string]any{"device": "cpu"}}},
			wantModel: map[string]any{"stage": int64(3), "offload_optimizer": "cpu", "offload_param": "none"},
			wantPaths: map[string][]any{"zero.stage": {"deepspeed"}, "zero.offload_optimizer": {"deepspeed"}, "zero.offload_param": {"deepspeed"}},
		},
		{
			name:   "ZeRO-3's gathering settings are recorded with the stage",
			recipe: "model_name_or_path: m\nper_device_train_batch_size: 1\nbf16: true\ndeepspeed: ds.json\n",
			ds:     map[string]any{"zero_optimization": map[string]any{"stage": int64(3), "stage3_max_live_parameters": 1e8}},
			wantModel: map[string]any{"stage": int64(3), "offload_optimizer": "none", "offload_param": "none",
				"max_live_parameters": int64(100_000_000)},
			wantPaths: map[string][]any{"zero.stage": {"deepspeed"}, "zero.offload_optimizer": {"deepspeed"}, "zero.offload_param": {"deepspeed"},
				"zero.max_live_parameters": {"deepspeed"}},
		},
		{
			name:      "a config without ZeRO runs at DeepSpeed's defaults",
			recipe:    "model_name_or_path: m\nper_device_train_batch_size: 1\nbf16: true\ndeepspeed: ds.json\n",
			ds:        map[string]any{"train_micro_batch_size_per_gpu": "auto"},
			wantModel: map[string]any{"stage": int64(0), "offload_optimizer": "none", "offload_param": "none"},
			wantPaths: map[string][]any{"zero.stage": {"deepspeed"}, "zero.offload_optimizer": {"deepspeed"}, "zero.offload_param": {"deepspeed"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := recipeWorkload(t, tc.recipe)
			if got := recipe.DeepSpeedPath(w); got != "ds.json" {
				t.Fatalf("DeepSpeedPath = %q, want ds.json", got)
			}
			recipe.MergeDeepSpeed(w, normalize.DeepSpeed(tc.ds))
			if diff := cmp.Diff(tc.wantModel, w.Model["zero"]); diff != "" {
				t.Errorf("zero (-want +got):\n%s", diff)
			}
			gotPaths := map[string][]any{}
			for _, f := range []string{"zero.stage", "zero.offload_optimizer", "zero.offload_param",
				"zero.max_live_parameters", "zero.prefetch_bucket_size", "zero.max_reuse_distance"} {
				if p, ok := w.Paths[f]; ok {
					gotPaths[f] = p
				}
			}
			if diff := cmp.Diff(tc.wantPaths, gotPaths); diff != "" {
				t.Errorf("paths (-want +got):\n%s", diff)
			}
		})
	}
}
