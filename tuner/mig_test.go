package tuner

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMIGProfileSpellings(t *testing.T) {
	c := testCatalog(t)
	h100, _ := c.GPU("H100-80GB")
	tests := []struct{ in, want string }{
		{"1g.10gb", "1g.10gb"},
		{"1G.10GB", "1g.10gb"},
		{"1g.10gb+me", "1g.10gb+me"},
		{"1g.10gb.me", "1g.10gb+me"},
		{"mig-1g.10gb", "1g.10gb"},
		{"nvidia.com/mig-1g.10gb.me", "1g.10gb+me"},
		{"mig-3g.40gb", "3g.40gb"},
		{"1g.5gb", ""},
	}
	for _, tc := range tests {
		p, ok := h100.MIGProfile(tc.in)
		got := ""
		if ok {
			got = p.Name
		}
		if got != tc.want {
			t.Errorf("MIGProfile(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestMIGProfileMemory(t *testing.T) {
	c := testCatalog(t)
	tests := []struct {
		gpu, profile string
		wantMiB      int64
	}{
		{"H100-80GB", "1g.10gb", 9984},  // 9.75 GiB (-lgip)
		{"A100-40GB", "1g.5gb", 4864},   // 4.75 GiB (-lgip; the GFD README shows 4864 too)
		{"A100-80GB", "7g.80gb", 80640}, // 78.75 GiB
		{"H200", "7g.141gb", 143360},    // 140.00 GiB
		{"B200", "1g.23gb", 22461},      // derived: 183359 MiB / 8 × 0.98
	}
	for _, tc := range tests {
		g, _ := c.GPU(tc.gpu)
		p, ok := g.MIGProfile(tc.profile)
		if !ok {
			t.Fatalf("%s has no %s", tc.gpu, tc.profile)
		}
		if got := p.MemoryBytes / MiB; got != tc.wantMiB {
			t.Errorf("%s %s = %d MiB, want %d (%s)", tc.gpu, tc.profile, got, tc.wantMiB, p.MemorySource)
		}
	}
}

func TestGPUsWithMIGProfile(t *testing.T) {
	c := testCatalog(t)
	keys := func(gs []*GPU) []string {
		var out []string
		for _, g := range gs {
			out = append(out, g.Key)
		}
		return out
	}
	tests := []struct {
		profile string
		want    []string
	}{
		{"1g.10gb", []string{"a100-40-pcie", "a100-40-sxm", "a100-80-pcie", "a100-80-sxm", "a800-80", "h100-pcie", "h100-sxm", "h800"}},
		{"1g.5gb", []string{"a100-40-pcie", "a100-40-sxm"}},
		{"mig-1g.18gb", []string{"h200", "h200-nvl"}},
		{"4g.24gb", []string{"a30"}},
		{"9g.1gb", nil},
	}
	for _, tc := range tests {
		if diff := cmp.Diff(tc.want, keys(c.GPUsWithMIGProfile(tc.profile))); diff != "" {
			t.Errorf("GPUsWithMIGProfile(%q) (-want +got):\n%s", tc.profile, diff)
		}
	}
	a40, _ := c.GPU("A100-40GB")
	h100, _ := c.GPU("H100-80GB")
	p40, _ := a40.MIGProfile("1g.10gb")
	p80, _ := h100.MIGProfile("1g.10gb")
	if p40.MemorySlices != 2 || p40.MaxCount != 4 || p80.MemorySlices != 1 || p80.MaxCount != 7 {
		t.Errorf("1g.10gb geometry: A100-40GB %d slices ×%d, H100 %d slices ×%d; want 2×4 and 1×7",
			p40.MemorySlices, p40.MaxCount, p80.MemorySlices, p80.MaxCount)
	}
}

// Layouts from gpus.md §2.1 items 2 and 3 on an 80 GB part (and the A100-40GB
// for the double-memory 1g profile).
func TestValidateMIGLayout(t *testing.T) {
	c := testCatalog(t)
	tests := []struct {
		name    string
		gpu     string
		counts  map[string]int
		wantErr string // "" = valid; otherwise a substring of the error
	}{
		{"7g", "H100-80GB", map[string]int{"7g.80gb": 1}, ""},
		{"4g+3g", "H100-80GB", map[string]int{"4g.40gb": 1, "3g.40gb": 1}, ""},
		{"3g+3g", "H100-80GB", map[string]int{"3g.40gb": 2}, ""},
		{"3g+2g+1g+1g", "H100-80GB", map[string]int{"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2}, ""},
		{"2g×3+1g", "H100-80GB", map[string]int{"2g.20gb": 3, "1g.10gb": 1}, ""},
		{"4g+2g+1g", "A100-80GB", map[string]int{"4g.40gb": 1, "2g.20gb": 1, "1g.10gb": 1}, ""},
		{"4g+1g×3", "A100-80GB", map[string]int{"4g.40gb": 1, "1g.10gb": 3}, ""},
		{"1g×7", "H100-80GB", map[string]int{"1g.10gb": 7}, ""},
		{"1g-double×4", "H100-80GB", map[string]int{"1g.20gb": 4}, ""},
		{"1g-double×4 on A100-40GB", "A100-40GB", map[string]int{"1g.10gb": 4}, ""},
		{"1g+me with 1g×6", "H100-80GB", map[string]int{"1g.10gb+me": 1, "1g.10gb": 6}, ""},
		{"resource spellings", "H100-80GB", map[string]int{"mig-3g.40gb": 1, "1g.10gb.me": 1, "2g.20gb": 1}, ""},
		{"zero counts ignored", "H100-80GB", map[string]int{"7g.80gb": 1, "1g.10gb": 0}, ""},
		{"A30 balanced", "A30", map[string]int{"1g.6gb": 2, "2g.12gb": 1}, ""},
		{"2g×3+1g-double uses slots 6-7", "H100-80GB", map[string]int{"2g.20gb": 3, "1g.20gb": 1}, ""},
		{"4g+1g-double+1g×2", "H100-80GB", map[string]int{"4g.40gb": 1, "1g.20gb": 1, "1g.10gb": 2}, ""},

		{"4g+4g", "H100-80GB", map[string]int{"4g.40gb": 2}, "4g.40gb can be placed once per GPU, layout asks for 2"},
		{"3g×3", "H100-80GB", map[string]int{"3g.40gb": 3}, "3g.40gb can be placed at most 2 times per GPU, layout asks for 3"},
		{"2g×4", "H100-80GB", map[string]int{"2g.20gb": 4}, "2g.20gb can be placed at most 3 times per GPU, layout asks for 4"},
		{"1g+me×2", "H100-80GB", map[string]int{"1g.10gb+me": 2}, "only one +me instance"},
		{"1g-double×5", "H100-80GB", map[string]int{"1g.20gb": 5}, "1g.20gb can be placed at most 4 times per GPU, layout asks for 5"},
		{"more than 7 compute", "H100-80GB", map[string]int{"4g.40gb": 1, "2g.20gb": 2}, "layout uses 8 compute slices, H100-80GB has 7"},
		{"3g+3g+1g needs 9 memory slices", "H100-80GB", map[string]int{"3g.40gb": 2, "1g.10gb": 1}, "needs 9 memory slices"},
		{"4g+2g×2", "A100-80GB", map[string]int{"4g.40gb": 1, "2g.20gb": 2}, "layout uses 8 compute slices, A100-80GB has 7"},
		{"4g+1g-double×2+1g", "H100-80GB", map[string]int{"4g.40gb": 1, "1g.20gb": 2, "1g.10gb": 1}, "needs 9 memory slices"},
		{"unknown profile", "H100-80GB", map[string]int{"1g.5gb": 1}, `has no MIG profile "1g.5gb"`},
		{"A30 has 4 compute slices", "A30", map[string]int{"2g.12gb": 2, "1g.6gb": 1}, "layout uses 5 compute slices, A30 has 4"},
		{"no MIG", "L40S", map[string]int{"1g.10gb": 1}, "does not support MIG"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, ok := c.GPU(tc.gpu)
			if !ok {
				t.Fatalf("unknown GPU %s", tc.gpu)
			}
			err := ValidateMIGLayout(g, tc.counts)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("ValidateMIGLayout = %v, want valid", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("ValidateMIGLayout = %v, want error containing %q", err, tc.wantErr)
			}
		})
	}
}

// On the real geometries the per-profile, compute and memory counts rule out
// almost every bad layout before placement; a synthetic geometry exercises the
// overlap search itself.
func TestValidateMIGLayoutPlacementSearch(t *testing.T) {
	g := &GPU{Name: "test-gpu", MIGComputeSlices: 7, MIGMemorySlices: 8, migProfiles: []*MIGProfile{
		{Name: "2g.20gb", Class: "2g", ComputeSlices: 2, MemorySlices: 2, Starts: []int{0, 1}, MaxCount: 2},
		{Name: "1g.10gb", Class: "1g", ComputeSlices: 1, MemorySlices: 1, Starts: []int{0, 1, 2, 3, 4, 5, 6}, MaxCount: 7},
	}}
	if err := ValidateMIGLayout(g, map[string]int{"2g.20gb": 1, "1g.10gb": 5}); err != nil {
		t.Errorf("valid synthetic layout rejected: %v", err)
	}
	err := ValidateMIGLayout(g, map[string]int{"2g.20gb": 2})
	if err == nil || !strings.Contains(err.Error(), "2g.20gb×2 cannot be placed on the 8 memory slices of test-gpu") ||
		!strings.Contains(err.Error(), "2g.20gb {0,1}") {
		t.Errorf("overlapping synthetic layout: got %v", err)
	}
}
