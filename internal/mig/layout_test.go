package mig

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpulint/gpulint/tuner"
)

func TestLayouts(t *testing.T) {
	cat, err := tuner.LoadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	a100, _ := cat.GPU("A100-40GB")
	entry := func(filter any, devs map[string]any) []any {
		e := map[string]any{"devices": "all", "mig-enabled": true, "mig-devices": devs}
		if filter != nil {
			e["device-filter"] = filter
		}
		return []any{e, map[string]any{"devices": "all", "mig-enabled": false}}
	}
	type verdict struct {
		GPU, From string
		Valid     bool
		GPUs      int
	}
	tests := []struct {
		name   string
		config []any
		target *tuner.GPU
		want   []verdict
	}{
		{"device filter holds", entry("0x20B010DE", map[string]any{"1g.10gb": int64(4)}), nil, []verdict{{"A100-40GB", "device-filter", true, 0}}},
		{"device filter breaks", entry([]any{"0x20B010DE"}, map[string]any{"1g.10gb": "7"}), nil, []verdict{{"A100-40GB", "device-filter", false, 0}}},
		{"unknown device id: no verdict", entry("0x2BB510DE", map[string]any{"4g.40gb": int64(2)}), nil, nil},
		{"target with the profiles", entry(nil, map[string]any{"1g.10gb": int64(7)}), a100, []verdict{{"A100-40GB", "flag", false, 0}}},
		{"no GPU fits: every candidate named", entry(nil, map[string]any{"4g.40gb": int64(2)}), nil, []verdict{{"A100-80GB-PCIe", "profiles", false, 6}}},
		{"some GPU fits", entry(nil, map[string]any{"1g.10gb": int64(7)}), nil, nil},
		{"count not a number", entry(nil, map[string]any{"1g.10gb": "x"}), nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc := map[string]any{"version": "v1", "mig-configs": map[string]any{"c": tc.config}}
			var got []verdict
			for _, v := range Layouts(cat, doc, tc.target, "flag") {
				if v.Config != "c" || v.Entry != 0 {
					t.Errorf("verdict at %s[%d], want c[0]", v.Config, v.Entry)
				}
				if !v.Valid && v.Reason == "" {
					t.Error("invalid layout without a reason")
				}
				got = append(got, verdict{v.GPU, v.GPUFrom, v.Valid, len(v.GPUs)})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("verdicts (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPublishedProfiles holds published.txt to NVIDIA's configs in the
// corpus: every profile they name is in the catalog or in the list, so none
// of NVIDIA's own layouts is reported as naming an unknown profile.
func TestPublishedProfiles(t *testing.T) {
	cat, err := tuner.LoadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	key := regexp.MustCompile(`(?m)^\s*"?([0-9]+g\.[0-9]+gb[^":\s]*)"?\s*:\s*[0-9]+`)
	for _, f := range []string{
		"mig/NVIDIA__mig-parted__deployments__systemd__config-default.yaml",
		"mig/NVIDIA__gpu-operator__assets__state-mig-manager__0400_configmap.yaml",
		"kubernetes/NVIDIA__mig-parted__deployments__container__nvidia-mig-manager-example-hopper-blackwell.yaml",
	} {
		b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "corpus", f))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, m := range key.FindAllStringSubmatch(string(b), -1) {
			n++
			if Unknown(cat, m[1]) {
				t.Errorf("%s: profile %s is neither in the catalog nor in published.txt", f, m[1])
			}
		}
		if n == 0 {
			t.Errorf("%s: no MIG profiles read", f)
		}
	}
	for _, name := range []string{"2g.7gb", "1g.99gb", "nvidia.com/mig-5g.1gb"} {
		if !Unknown(cat, name) {
			t.Errorf("Unknown(%q) = false, want true", name)
		}
	}
	if Unknown(cat, "nvidia.com/mig-1g.24gb.me") || Unknown(cat, "1g.10gb") {
		t.Error("a published or catalog profile read as unknown")
	}
}
