package lint

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpulint/gpulint/internal/normalize"
	"github.com/gpulint/gpulint/tuner"
)

func TestQuantityInt(t *testing.T) {
	tests := []struct {
		name    string
		in      any
		want    int64
		integer bool
	}{
		{"int", int64(2), 2, true},
		{"integral float", 1.0, 1, true},
		{"fraction", 0.5, 0, false},
		{"negative", int64(-1), -1, false},
		{"string", "4", 4, true},
		{"decimal string", "1.0", 1, true},
		{"milli whole", "1000m", 1, true},
		{"milli fraction", "500m", 0, false},
		{"half string", "0.5", 0, false},
		{"kilo", "1k", 1000, true},
		{"binary", "1Ki", 1024, true},
		{"exponent", "2e0", 2, true},
		{"unknown suffix", "1x", 0, false},
		{"empty", "", 0, false},
		{"bool", true, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n, integer := quantityInt(tc.in)
			if integer != tc.integer || (integer && n != tc.want) {
				t.Errorf("quantityInt(%#v) = %d, %v; want %d, %v", tc.in, n, integer, tc.want, tc.integer)
			}
		})
	}
}

func TestFindPodsResourcesAndGroups(t *testing.T) {
	doc := map[string]any{
		"spec": map[string]any{
			"leaderWorkerTemplate": map[string]any{
				"workerTemplate": map[string]any{
					"spec": map[string]any{
						"nodeSelector": map[string]any{"nvidia.com/mig.strategy": "mixed"},
						"containers": []any{map[string]any{
							"name": "w",
							"resources": map[string]any{
								"requests": map[string]any{"nvidia.com/gpu": "2", "memory": "8Gi"},
								"limits":   map[string]any{"nvidia.com/gpu": 0.5, "nvidia.com/mig-1g.10gb": int64(1)},
							},
							"volumeMounts": []any{map[string]any{"name": "host-shm", "mountPath": "/dev/shm/"}},
						}},
					},
				},
			},
		},
	}
	pods := findPods(doc)
	if len(pods) != 1 {
		t.Fatalf("found %d pods, want 1", len(pods))
	}
	p := pods[0]
	c := p.Containers[0]
	got := map[string]any{
		"group": p.Group, "strategy": p.MIGStrategy, "shm": c.ShmSize, "shm_mount": c.ShmMount,
		"resources": c.Resources,
	}
	base := []any{"spec", "leaderWorkerTemplate", "workerTemplate", "spec", "containers", 0, "resources"}
	at := func(s ...any) []any { return append(append([]any(nil), base...), s...) }
	want := map[string]any{
		"group": "leader-worker-set", "strategy": "mixed", "shm": false, "shm_mount": true,
		"resources": []gpuResource{
			{Name: "nvidia.com/gpu", Section: "requests", Value: "2", Count: 2, Integer: true, Path: at("requests", "nvidia.com/gpu")},
			{Name: "nvidia.com/gpu", Section: "limits", Value: 0.5, Path: at("limits", "nvidia.com/gpu")},
			{Name: "nvidia.com/mig-1g.10gb", Section: "limits", Value: int64(1), Count: 1, Integer: true, Path: at("limits", "nvidia.com/mig-1g.10gb")},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pod (-want +got):\n%s", diff)
	}
}

func TestPodGroup(t *testing.T) {
	tests := []struct {
		path []any
		want string
	}{
		{[]any{"spec", "template", "spec"}, ""},
		{[]any{"spec", "workerGroupSpecs", 0, "template", "spec"}, "ray"},
		{[]any{"spec", "pytorchReplicaSpecs", "Worker", "template", "spec"}, "kubeflow"},
		{[]any{"spec", "predictor", "workerSpec"}, "kserve"},
	}
	for _, tc := range tests {
		if got := podGroup(tc.path); got != tc.want {
			t.Errorf("podGroup(%v) = %q, want %q", tc.path, got, tc.want)
		}
	}
}

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
	}
	tests := []struct {
		name   string
		config []any
		target Target
		want   []verdict
	}{
		{"device filter holds", entry("0x20B010DE", map[string]any{"1g.10gb": int64(4)}), Target{}, []verdict{{"c", "A100-40GB", "device-filter", true}}},
		{"device filter breaks", entry([]any{"0x20B010DE"}, map[string]any{"1g.10gb": int64(7)}), Target{}, []verdict{{"c", "A100-40GB", "device-filter", false}}},
		{"unknown device id: no verdict", entry("0x2BB510DE", map[string]any{"4g.40gb": int64(2)}), Target{}, nil},
		{"target with the profiles", entry(nil, map[string]any{"1g.10gb": int64(7)}), Target{GPU: a100, GPUFrom: "flag"}, []verdict{{"c", "A100-40GB", "flag", false}}},
		{"target without the profiles: other GPUs decide", entry(nil, map[string]any{"1g.5gb": int64(7)}), Target{GPU: h100, GPUFrom: "flag"}, nil},
		{"no GPU fits", entry(nil, map[string]any{"4g.40gb": int64(2)}), Target{}, []verdict{{"c", "A100-80GB-PCIe", "profiles", false}}},
		{"some GPU fits", entry(nil, map[string]any{"1g.10gb": int64(7)}), Target{}, nil},
		{"unknown profile", entry(nil, map[string]any{"1g.99gb": int64(1)}), Target{}, nil},
		{"mig disabled", []any{map[string]any{"devices": "all", "mig-enabled": false}}, Target{}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc := map[string]any{"version": "v1", "mig-configs": map[string]any{"c": tc.config}}
			var got []verdict
			for _, v := range migInput(cat, doc, tc.target)["layouts"].([]any) {
				m := v.(map[string]any)
				got = append(got, verdict{m["config"].(string), m["gpu"].(string), m["gpu_from"].(string), m["valid"].(bool)})
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
	}{
		{"small model fits everywhere", "Qwen/Qwen2.5-0.5B", map[string]any{"train_micro_batch_size_per_gpu": int64(1), "bf16": map[string]any{"enabled": true}, "zero_optimization": map[string]any{"stage": int64(3)}}, 8,
			map[string]bool{"0": true, "1": true, "2": true, "3": true}},
		{"8B needs sharding", "meta-llama/Llama-3.1-8B", map[string]any{"train_micro_batch_size_per_gpu": int64(1), "bf16": map[string]any{"enabled": true}, "zero_optimization": map[string]any{"stage": int64(3)}}, 8,
			map[string]bool{"0": false, "1": true, "2": true, "3": true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, ok := cat.Model(tc.model)
			if !ok {
				t.Fatalf("model %s not in the catalog", tc.model)
			}
			tgt := Target{GPU: gpu, GPUs: tc.gpus, Model: m, ModelID: tc.model}
			est := tgt.estimate(normalize.DeepSpeed(tc.doc))
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
				if prev >= 0 && total > prev {
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
