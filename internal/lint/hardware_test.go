package lint

import (
	"strconv"
	"strings"
	"testing"

	"github.com/gpulint/gpulint/internal/kube"
	"github.com/gpulint/gpulint/tuner"
)

// TestHardwareTableNamesCatalogGPUs holds every row of the hardware table
// (internal/kube/hardware.tsv) to the GPU catalog, with a source.
func TestHardwareTableNamesCatalogGPUs(t *testing.T) {
	cat, err := tuner.LoadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	rows := kube.HardwareTable()
	if len(rows) == 0 {
		t.Fatal("hardware table is empty")
	}
	kinds := map[string]bool{"gke-accelerator": true, "instance-type": true, "instance-family": true,
		"karpenter-gpu-name": true, "kubeai-profile": true, "gpu-memory": true}
	seen := map[string]bool{}
	for _, r := range rows {
		if g, ok := cat.GPU(r.GPU); !ok || g.Name != r.GPU {
			t.Errorf("%s %s: GPU %q is not a catalog name (gpulint estimate --list-gpus)", r.Kind, r.Value, r.GPU)
		}
		if !kinds[r.Kind] {
			t.Errorf("%s %s: unknown kind", r.Kind, r.Value)
		}
		if !strings.HasPrefix(r.Source, "https://") {
			t.Errorf("%s %s: source %q is not a URL", r.Kind, r.Value, r.Source)
		}
		if r.Value != strings.ToLower(r.Value) || r.Count < 0 {
			t.Errorf("%s %s: value must be lower case and count non-negative", r.Kind, r.Value)
		}
		k := r.Kind + "\t" + r.Value + "\t" + r.GPU
		if seen[k] {
			t.Errorf("%s %s %s: duplicate row", r.Kind, r.Value, r.GPU)
		}
		seen[k] = true
	}
}

// TestGPUMemoryRowsCoverCatalog holds the nvidia.com/gpu.memory rows of the
// hardware table to the catalog: every NVIDIA GPU's driver MiB names it,
// so a value names all the catalog GPUs that report it, not only some.
func TestGPUMemoryRowsCoverCatalog(t *testing.T) {
	cat, err := tuner.LoadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, g := range cat.GPUs() {
		if g.Vendor != "nvidia" || g.DriverMiB == 0 {
			continue
		}
		n++
		found := false
		for _, r := range kube.LookupHardware("gpu-memory", strconv.FormatInt(g.DriverMiB, 10)) {
			found = found || r.GPU == g.Name
		}
		if !found {
			t.Errorf("%s: no gpu-memory row for its driver MiB %d", g.Name, g.DriverMiB)
		}
	}
	if n == 0 {
		t.Fatal("no NVIDIA GPU in the catalog")
	}
}

func TestHintedGPU(t *testing.T) {
	l4 := kube.NodeHint{Label: "cloud.google.com/gke-accelerator", GPUs: []string{"L4"}, Path: []any{"a"}}
	h100 := kube.NodeHint{Label: "node.kubernetes.io/instance-type", GPUs: []string{"H100-80GB"}, Path: []any{"b"}}
	unknown := kube.NodeHint{Label: "cloud.google.com/gke-accelerator", Path: []any{"c"}}
	tests := []struct {
		name  string
		hints []kube.NodeHint
		want  string
	}{
		{"one hint", []kube.NodeHint{l4}, "L4"},
		{"unknown values are left out", []kube.NodeHint{unknown, l4}, "L4"},
		{"agreeing hints", []kube.NodeHint{l4, l4}, "L4"},
		{"disagreeing hints settle nothing", []kube.NodeHint{l4, h100}, ""},
		{"several candidates settle nothing", []kube.NodeHint{{GPUs: []string{"A100-40GB", "A100-80GB"}}}, ""},
		{"gpu.memory candidates are left to memoryHint", []kube.NodeHint{
			{Label: kube.GPUMemoryLabel, GPUs: []string{"H100-80GB", "H100-PCIe"}}, l4}, "L4"},
		{"none", nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got, _, _ := hintedGPU(tc.hints); got != tc.want {
				t.Errorf("hintedGPU = %q, want %q", got, tc.want)
			}
		})
	}
}
