package tuner

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

func testCatalog(t testing.TB) *Catalog {
	t.Helper()
	c, err := LoadCatalog()
	if err != nil {
		t.Fatalf("LoadCatalog: %v", err)
	}
	return c
}

func TestMustLoadCatalog(t *testing.T) {
	if MustLoadCatalog() == nil {
		t.Fatal("MustLoadCatalog returned nil")
	}
}

func TestCatalogHasEveryGPUOfTheReference(t *testing.T) {
	// gpus.md §1.1 keys, plus the parts added with their own sources in gpus.yaml
	// (a800-80, h800, l20, rtx-a4000/a5000/a6000, rtx-pro-6000, rtx4060ti-16,
	// rtx4080, rtx4080-super, rtx5080, titan-rtx).
	want := []string{
		"a10", "a100-40-pcie", "a100-40-sxm", "a100-80-pcie", "a100-80-sxm", "a10g", "a30", "a40",
		"a800-80", "b100", "b200", "gb200", "gh200", "h100-nvl", "h100-pcie", "h100-sxm", "h20",
		"h200", "h200-nvl", "h800", "l20", "l4", "l40", "l40s", "mi250x", "mi300x", "mi325x",
		"rtx-a4000", "rtx-a5000", "rtx-a6000", "rtx-pro-6000", "rtx3090", "rtx4060ti-16",
		"rtx4080", "rtx4080-super", "rtx4090", "rtx5080", "rtx5090", "rtx6000ada", "t4",
		"titan-rtx", "v100-16", "v100-32",
	}
	var got []string
	for _, g := range testCatalog(t).GPUs() {
		got = append(got, g.Key)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GPU keys (-want +got):\n%s", diff)
	}
}

func TestGPULookup(t *testing.T) {
	c := testCatalog(t)
	tests := []struct {
		in   string
		want string // key; "" = not found
	}{
		{"h100-sxm", "h100-sxm"},
		{"H100-80GB", "h100-sxm"},
		{"H100", "h100-sxm"},
		{"h100 80gb", "h100-sxm"},
		{"H200", "h200"},
		{"A100-40GB", "a100-40-sxm"},
		{"A100-80GB", "a100-80-sxm"},
		{"L40S", "l40s"},
		{"L4", "l4"},
		{"T4", "t4"},
		{"V100-16GB", "v100-16"},
		{"V100-32GB", "v100-32"},
		{"RTX-4090", "rtx4090"},
		{"RTX-3090", "rtx3090"},
		{"rtx 5090", "rtx5090"},
		{"MI300X", "mi300x"},
		// nvidia.com/gpu.product labels (kubernetes-gpu.md §3.1).
		{"NVIDIA-H100-80GB-HBM3", "h100-sxm"},
		{"Tesla-T4", "t4"},
		{"NVIDIA-A100-SXM4-40GB", "a100-40-sxm"},
		{"NVIDIA-A100-80GB-PCIe", "a100-80-pcie"},
		{"NVIDIA-GeForce-RTX-4090", "rtx4090"},
		{"NVIDIA-RTX-6000-Ada-Generation", "rtx6000ada"},
		{"NVIDIA-GH200-480GB", "gh200"},
		{"NVIDIA-H200-SXM5-141GB", "h200"}, // not GFD output, seen in the wild
		{"NVIDIA-H100", "h100-sxm"},
		{"A100-SXM4-40GB", "a100-40-sxm"}, // older drivers: no NVIDIA prefix
		{"nvidia-l4", "l4"},               // cloud label spelling
		// Suffixed label values return the base GPU.
		{"NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", "a100-40-sxm"},
		{"NVIDIA-H100-80GB-HBM3-MIG-1g.10gb", "h100-sxm"},
		{"NVIDIA-H100-80GB-HBM3-SHARED", "h100-sxm"},
		{"NVIDIA-A100-SXM4-80GB-MIG-INVALID", "a100-80-sxm"},
		// Parts added with their own sources (gpus.yaml comments).
		{"NVIDIA-RTX-A6000", "rtx-a6000"},
		{"NVIDIA-RTX-A5000", "rtx-a5000"},
		{"NVIDIA-RTX-A4000", "rtx-a4000"},
		{"TITAN-RTX", "titan-rtx"},
		{"NVIDIA-TITAN-RTX", "titan-rtx"},
		{"NVIDIA-A800-SXM4-80GB-MIG-3g.40gb", "a800-80"},
		{"NVIDIA-H800-80GB-HBM3", "h800"},
		{"NVIDIA-L20", "l20"},
		{"NVIDIA-GeForce-RTX-4080-SUPER", "rtx4080-super"},
		{"NVIDIA-GeForce-RTX-4080", "rtx4080"},
		{"NVIDIA-GeForce-RTX-5080", "rtx5080"},
		{"NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition", "rtx-pro-6000"},
		{"RTX-4060-Ti-16GB", "rtx4060ti-16"},
		// The 4060 Ti label names the 8 GB card too: no match rather than the 16 GB entry.
		{"NVIDIA-GeForce-RTX-4060-Ti", ""},
		{"A100", ""},
		{"K80", ""},
		{"", ""},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			g, ok := c.GPU(tc.in)
			got := ""
			if ok {
				got = g.Key
			}
			if got != tc.want {
				t.Errorf("GPU(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestParseProductLabel(t *testing.T) {
	c := testCatalog(t)
	type res struct {
		GPU, MIG, MIGName string
		Invalid, Shared   bool
		MIGMemSlices      int
	}
	tests := []struct {
		in   string
		want res
		ok   bool
	}{
		{"NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", res{GPU: "a100-40-sxm", MIG: "1g.5gb", MIGName: "1g.5gb", MIGMemSlices: 1}, true},
		// 1g.10gb is the 2-memory-slice profile on the 40 GB part ...
		{"NVIDIA-A100-SXM4-40GB-MIG-1g.10gb", res{GPU: "a100-40-sxm", MIG: "1g.10gb", MIGName: "1g.10gb", MIGMemSlices: 2}, true},
		// ... and the 1-slice profile on 80 GB parts (gpus.md §2.4 "Trap").
		{"NVIDIA-H100-80GB-HBM3-MIG-1g.10gb", res{GPU: "h100-sxm", MIG: "1g.10gb", MIGName: "1g.10gb", MIGMemSlices: 1}, true},
		{"NVIDIA-H100-80GB-HBM3-SHARED", res{GPU: "h100-sxm", Shared: true}, true},
		{"NVIDIA-A100-SXM4-80GB-MIG-INVALID", res{GPU: "a100-80-sxm", Invalid: true}, true},
		{"NVIDIA-A100-SXM4-40GB-MIG-9g.99gb", res{GPU: "a100-40-sxm", MIGName: "9g.99gb"}, true},
		{"NVIDIA-K80-MIG-1g.5gb", res{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			pl, ok := c.ParseProductLabel(tc.in)
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			var got res
			if ok {
				got = res{GPU: pl.GPU.Key, MIGName: pl.MIGProfileName, Invalid: pl.MIGInvalid, Shared: pl.Shared}
				if pl.MIG != nil {
					got.MIG, got.MIGMemSlices = pl.MIG.Name, pl.MIG.MemorySlices
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParseProductLabel(%q) (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

func TestSuggest(t *testing.T) {
	c := testCatalog(t)
	tests := []struct{ in, want string }{
		{"A100", "A100-40GB"},
		{"H100-80G", "H100-80GB"},
		{"H10-80GB", "H100-80GB"},
		{"L40S-48G", "L40S"},
		{"L40X", "L40"},
		{"RTX-4090-24G", "RTX-4090"},
		{"V100-16", "V100-16GB"},
		{"NVIDIA-H200-141G", "H200"},
		{"completely-unknown-accelerator", ""},
	}
	for _, tc := range tests {
		if got := c.Suggest(tc.in); got != tc.want {
			t.Errorf("Suggest(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// A name without its memory means every catalog GPU that adds one; a
// name that is a GPU or an alias (H100 is the SXM 80GB) means only that.
// Least usable memory first: each PCIe card's usable bytes are below its
// SXM twin's in the catalog.
func TestMemoryVariants(t *testing.T) {
	c := testCatalog(t)
	names := func(gs []*GPU) []string {
		var out []string
		for _, g := range gs {
			out = append(out, g.Name)
		}
		return out
	}
	for name, want := range map[string][]string{
		"A100":        {"A100-40GB-PCIe", "A100-40GB", "A100-80GB-PCIe", "A100-80GB"},
		"NVIDIA A100": {"A100-40GB-PCIe", "A100-40GB", "A100-80GB-PCIe", "A100-80GB"},
		"V100":        {"V100-16GB", "V100-32GB"},
		"H100":        nil,
		"A100-80GB":   nil,
		"A10":         nil,
		"Z9000":       nil,
	} {
		got := names(c.MemoryVariants(name))
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("MemoryVariants(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestGPUFeaturesDerivedFromComputeCapability(t *testing.T) {
	c := testCatalog(t)
	type feat struct{ BF16, FP8, FP4 bool }
	tests := map[string]feat{
		"v100-16": {}, "t4": {},
		"a100-80-sxm": {BF16: true}, "rtx3090": {BF16: true}, "a10": {BF16: true},
		"l4": {BF16: true, FP8: true}, "rtx4090": {BF16: true, FP8: true},
		"h100-sxm": {BF16: true, FP8: true},
		"b200":     {BF16: true, FP8: true, FP4: true}, "rtx5090": {BF16: true, FP8: true, FP4: true},
		"mi250x": {BF16: true}, "mi300x": {BF16: true, FP8: true},
	}
	for key, want := range tests {
		g, ok := c.GPU(key)
		if !ok {
			t.Fatalf("GPU(%q) not found", key)
		}
		got := feat{g.SupportsBF16(), g.SupportsFP8(), g.SupportsFP4()}
		if got != want {
			t.Errorf("%s features = %+v, want %+v", key, got, want)
		}
	}
}

func TestUsableCapacity(t *testing.T) {
	c := testCatalog(t)
	tests := []struct {
		gpu     string
		wantMiB int64
	}{
		{"H100-80GB", 81009},       // 79.11 GiB, memory-model.md Units
		{"A100-80GB", 81050},       // 79.15 GiB
		{"A100-40GB", 40325},       // 39.38 GiB
		{"RTX-3090", 24146},        // 23.58 GiB
		{"V100-32GB", 32512},       // 31.75 GiB
		{"L4", 23034 * 985 / 1000}, // derived from the driver total
	}
	for _, tc := range tests {
		g, _ := c.GPU(tc.gpu)
		if got := g.UsableBytes / MiB; got != tc.wantMiB {
			t.Errorf("%s usable = %d MiB, want %d (%s)", tc.gpu, got, tc.wantMiB, g.UsableSource)
		}
		if g.UsableBytes >= g.DriverMiB*MiB {
			t.Errorf("%s usable %d is not below the driver total", tc.gpu, g.UsableBytes)
		}
	}
}

func TestParseCatalogRejectsBadData(t *testing.T) {
	gpus, err := profilesFS.ReadFile(GPUProfilesPath)
	if err != nil {
		t.Fatal(err)
	}
	models, err := profilesFS.ReadFile(ModelProfilesPath)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name          string
		gpus, models  string
		wantErrSubstr string
	}{
		{"unknown field", strings.Replace(string(gpus), "  - key: t4\n", "  - key: t4\n    colour: green\n", 1), string(models), "colour"},
		{"duplicate spelling", strings.Replace(string(gpus), "aliases: [T4-16GB, Tesla-T4]", "aliases: [T4-16GB, Tesla-T4, L4]", 1), string(models), "names both"},
		{"bad mig class", strings.Replace(string(gpus), "{name: 1g.6gb, class: 1g,", "{name: 1g.6gb, class: 9g,", 1), string(models), "unknown class"},
		{"model without source", string(gpus), strings.Replace(string(models), `published_source: "openai/gpt-2 model_card.md"`, "published_source: \"\"", 1), "needs a parseable value and a source"},
		{"model kv heads", string(gpus), strings.Replace(string(models), "num_kv_heads: 2\n", "num_kv_heads: 5\n", 1), "not a multiple"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.gpus == string(gpus) && tc.models == string(models) {
				t.Fatal("test case did not change the data")
			}
			_, err := ParseCatalog([]byte(tc.gpus), []byte(tc.models))
			if err == nil || !strings.Contains(err.Error(), tc.wantErrSubstr) {
				t.Errorf("ParseCatalog error = %v, want it to mention %q", err, tc.wantErrSubstr)
			}
		})
	}
}

func TestLoadCatalogFS(t *testing.T) {
	if _, err := LoadCatalogFS(fstest.MapFS{}); err == nil {
		t.Error("LoadCatalogFS on an empty FS succeeded")
	}
	gpus, _ := profilesFS.ReadFile(GPUProfilesPath)
	models, _ := profilesFS.ReadFile(ModelProfilesPath)
	c, err := LoadCatalogFS(fstest.MapFS{
		GPUProfilesPath:   {Data: gpus},
		ModelProfilesPath: {Data: models},
	})
	if err != nil || len(c.GPUs()) == 0 || len(c.Models()) == 0 {
		t.Errorf("LoadCatalogFS = %v, %v", c, err)
	}
}

func TestProductLabelMIG(t *testing.T) {
	for label, want := range map[string]string{
		"NVIDIA-A100-SXM4-40GB-MIG-1g.5gb":         "1g.5gb",
		"NVIDIA-Example-Accelerator-MIG-3g.40gb":   "3g.40gb",
		"NVIDIA-H100-80GB-HBM3-MIG-1g.10gb-SHARED": "1g.10gb",
		"NVIDIA-A100-SXM4-40GB-MIG-INVALID":        "",
		"NVIDIA-H100-80GB-HBM3":                    "",
	} {
		if got := ProductLabelMIG(label); got != want {
			t.Errorf("ProductLabelMIG(%q) = %q, want %q", label, got, want)
		}
	}
}
