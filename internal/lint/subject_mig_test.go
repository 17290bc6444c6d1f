package lint

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpulint/gpulint/internal/normalize"
	"github.com/gpulint/gpulint/tuner"
)

func TestMIGLayouts(t *testing.T) {
	cat, err := tuner.LoadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	a100, _ := cat.GPU("A100-40GB")
	h100, _ := cat.GPU("H100-80GB")
	entry := func(filter any, devs map[string]any) []any {
		e := map[string]any{"devices": "all", "mig-enabled": true, "mig-devices": devs}
		if filter != nil {
			e["device-filter"] = filter
		}
		return []any{e}
	}
	type verdict struct {
		Config, GPU, From string
		Valid             bool
		Unknown           string
	}
	tests := []struct {
		name   string
		config []any
		target Target
		want   []verdict
	}{
		{"device filter holds", entry("0x20B010DE", map[string]any{"1g.10gb": int64(4)}), Target{}, []verdict{{"c", "A100-40GB", "device-filter", true, ""}}},
		{"device filter breaks", entry([]any{"0x20B010DE"}, map[string]any{"1g.10gb": int64(7)}), Target{}, []verdict{{"c", "A100-40GB", "device-filter", false, ""}}},
		{"unknown device id: no verdict", entry("0x2BB510DE", map[string]any{"4g.40gb": int64(2)}), Target{}, nil},
		{"target with the profiles", entry(nil, map[string]any{"1g.10gb": int64(7)}), Target{GPU: a100, GPUFrom: "flag"}, []verdict{{"c", "A100-40GB", "flag", false, ""}}},
		{"target without the profiles: other GPUs decide", entry(nil, map[string]any{"1g.5gb": int64(7)}), Target{GPU: h100, GPUFrom: "flag"}, nil},
		{"no GPU fits", entry(nil, map[string]any{"4g.40gb": int64(2)}), Target{}, []verdict{{"c", "A100-80GB-PCIe", "profiles", false, ""}}},
		{"some GPU fits", entry(nil, map[string]any{"1g.10gb": int64(7)}), Target{}, nil},
		{"unknown profile: reported, not skipped", entry(nil, map[string]any{"1g.99gb": int64(1), "1g.10gb": int64(1)}), Target{}, []verdict{{"c", "", "", true, "1g.99gb"}}},
		{"unknown profile on an unknown device", entry("0x2BB510DE", map[string]any{"1g.99gb": int64(1)}), Target{}, []verdict{{"c", "", "", true, "1g.99gb"}}},
		{"mig disabled", []any{map[string]any{"devices": "all", "mig-enabled": false}}, Target{}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc := map[string]any{"version": "v1", "mig-configs": map[string]any{"c": tc.config}}
			var got []verdict
			for _, v := range migInput(cat, doc, tc.target)["layouts"].([]any) {
				m := v.(map[string]any)
				gpu, _ := m["gpu"].(string)
				from, _ := m["gpu_from"].(string)
				var unknown string
				if u, ok := m["unknown"].([]any); ok {
					unknown = fmt.Sprint(u...)
					if len(m["known_profiles"].([]any)) == 0 {
						t.Error("unknown profile without the known ones")
					}
				}
				got = append(got, verdict{m["config"].(string), gpu, from, m["valid"].(bool), unknown})
				if m["valid"] == false && m["reason"] == "" {
					t.Error("invalid layout without a reason")
				}
				if diff := cmp.Diff([]any{"mig-configs", "c", 0, "mig-devices"}, m["path"]); diff != "" {
					t.Errorf("path (-want +got):\n%s", diff)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("verdicts (-want +got):\n%s", diff)
			}
		})
	}
}

func TestZeroStages(t *testing.T) {
	cat, err := tuner.LoadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	gpu, _ := cat.GPU("H100-80GB")
	tests := []struct {
		name    string
		model   string
		doc     map[string]any
		gpus    int
		wantFit map[string]bool
		// stage3AboveStage2: ZeRO-3 keeps every layer whose reuse lies
		// within stage3_max_reuse_distance (1e9) gathered, so a sub-1B
		// model ends up wholly gathered beside its shards and its buffers:
		// stage 3 may need more than stage 2.
		stage3AboveStage2 bool
	}{
		{"small model fits everywhere", "Qwen/Qwen2.5-0.5B", map[string]any{"train_micro_batch_size_per_gpu": int64(1), "bf16": map[string]any{"enabled": true}, "zero_optimization": map[string]any{"stage": int64(3)}}, 8,
			map[string]bool{"0": true, "1": true, "2": true, "3": true}, true},
		{"8B needs sharding", "meta-llama/Llama-3.1-8B", map[string]any{"train_micro_batch_size_per_gpu": int64(1), "bf16": map[string]any{"enabled": true}, "zero_optimization": map[string]any{"stage": int64(3)}}, 8,
			map[string]bool{"0": false, "1": true, "2": true, "3": true}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, ok := cat.Model(tc.model)
			if !ok {
				t.Fatalf("model %s not in the catalog", tc.model)
			}
			tgt := Target{GPU: gpu, GPUs: tc.gpus, Model: m, ModelID: tc.model}
			est, _ := tgt.estimate(normalize.DeepSpeed(tc.doc))
			stages, ok := est["stages"].(map[string]any)
			if !ok {
				t.Fatalf("no stages in %v", est)
			}
			got := map[string]bool{}
			var prev int64 = -1
			for _, s := range []string{"0", "1", "2", "3"} {
				st := stages[s].(map[string]any)
				got[s] = st["fits"].(bool)
				total := st["total"].(int64)
				if prev >= 0 && total > prev && !(s == "3" && tc.stage3AboveStage2) {
					t.Errorf("stage %s needs %d bytes, more than the stage below (%d)", s, total, prev)
				}
				prev = total
			}
			if diff := cmp.Diff(tc.wantFit, got); diff != "" {
				t.Errorf("fits (-want +got):\n%s", diff)
			}
		})
	}
}
