package rules

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpulint/gpulint/policies"
)

// TestMetadataMatchesOPA: the METADATA read from the comment block (so the
// catalog loads without parsing every rule's Rego) is exactly what OPA's
// own annotation parser reads, for every built-in policy.
func TestMetadataMatchesOPA(t *testing.T) {
	mods, err := ParseModules(policies.FS, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(mods) < 10 {
		t.Fatalf("only %d policy modules", len(mods))
	}
	for _, m := range mods {
		pm, err := m.Parse()
		if err != nil {
			t.Fatal(err)
		}
		if got, want := m.Package, pm.Package.Path.String()[len("data."):]; got != want {
			t.Errorf("%s: package %q, OPA says %q", m.File, got, want)
		}
		var opa *metadata
		for _, a := range pm.Annotations {
			if a.Scope == "package" || a.Scope == "subpackages" {
				opa = &metadata{Title: a.Title, Scope: a.Scope, Custom: a.Custom}
			}
		}
		if opa == nil && m.meta == nil {
			continue
		}
		if opa == nil || m.meta == nil {
			t.Errorf("%s: METADATA found by one reader only (ours %v, OPA %v)", m.File, m.meta != nil, opa != nil)
			continue
		}
		mine := *m.meta
		mine.Scope = opa.Scope
		if diff := cmp.Diff(opa, &mine); diff != "" {
			t.Errorf("%s: metadata differs from OPA's (-opa +ours):\n%s", m.File, diff)
		}
	}
}

func TestLoadRejectsIncompleteMetadata(t *testing.T) {
	src := `# METADATA
# title: A rule
# custom:
#   id: GPU999
#   slug: a-rule
#   severity: warning
#   kinds: [deepspeed]
#   since: 0.1.0
#   fixable: false
package gpulint.rules.gpu999
`
	m := Module{File: "x.rego", Source: src, Package: "gpulint.rules.gpu999"}
	var err error
	if m.meta, err = readMetadata(src); err != nil {
		t.Fatal(err)
	}
	_, err = Load([]Module{m})
	if err == nil || !cmp.Equal(err.Error(), "invalid rule metadata:\n  x.rego: rule \"GPU999\": missing metadata field(s): rationale, remediation") {
		t.Errorf("got %v", err)
	}
}

func TestPackageName(t *testing.T) {
	cases := []struct {
		src  string
		want string
		ok   bool
	}{
		{"package gpulint.rules.ds001\n", "gpulint.rules.ds001", true},
		{"# METADATA\n# title: x\npackage a.b # trailing comment\n", "a.b", true},
		{"package\ta_b\r\n\nx := 1\n", "a_b", true},
		{"packages.x\npackage real\n", "real", true},
		{"  package indented\n", "", false},
		{"package 9lives\n", "", false},
		{"package a b\n", "", false},
		{"# package in.a.comment\n", "", false},
		{"", "", false},
	}
	for _, tc := range cases {
		got, ok := packageName(tc.src)
		if got != tc.want || ok != tc.ok {
			t.Errorf("packageName(%q) = %q, %v; want %q, %v", tc.src, got, ok, tc.want, tc.ok)
		}
	}
}

// TestLoadChecksFixNeeds holds a rule's fix_needs: metadata to the input
// names the pipeline knows and to rules that have a fix to withhold.
func TestLoadChecksFixNeeds(t *testing.T) {
	head := "# METADATA\n# title: A rule\n# custom:\n#   id: GPU999\n#   slug: a-rule\n#   severity: info\n" +
		"#   rationale: r\n#   remediation: r\n#   kinds: [deepspeed]\n#   since: 0.1.0\n"
	tests := []struct {
		name, meta, wantErr string
		want                []string
	}{
		{name: "known inputs", meta: "#   fixable: true\n#   fix_needs: [gpu, seq_len]\n", want: []string{"gpu", "seq_len"}},
		{name: "none", meta: "#   fixable: true\n"},
		{name: "unknown input", meta: "#   fixable: true\n#   fix_needs: [compute_capability]\n",
			wantErr: `rule GPU999: fix_needs: "compute_capability" is not one of gpu, gpus, model, seq_len, micro_batch, method, model_dtype`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := head + tc.meta + "package gpulint.rules.gpu999\n"
			m := Module{File: "x.rego", Source: src, Package: "gpulint.rules.gpu999"}
			var err error
			if m.meta, err = readMetadata(src); err != nil {
				t.Fatal(err)
			}
			c, err := Load([]Module{m})
			got := ""
			if err != nil {
				got = err.Error()
			}
			if tc.wantErr == "" && got != "" || tc.wantErr != "" && !strings.Contains(got, tc.wantErr) {
				t.Fatalf("got %q, want %q", got, tc.wantErr)
			}
			if err != nil {
				return
			}
			r, _ := c.Lookup("GPU999")
			if diff := cmp.Diff(tc.want, r.FixNeeds); diff != "" {
				t.Errorf("FixNeeds (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLoadChecksInputs holds a rule's inputs: metadata to the names the
// pipeline records, and to allowing info (a verdict on an assumed input is
// at most info).
func TestLoadChecksInputs(t *testing.T) {
	head := "# METADATA\n# title: A rule\n# custom:\n#   id: GPU999\n#   slug: a-rule\n#   severity: warning\n" +
		"#   rationale: r\n#   remediation: r\n#   kinds: [deepspeed]\n#   since: 0.1.0\n#   fixable: false\n"
	tests := []struct {
		name, meta, wantErr string
	}{
		{name: "inputs with info allowed", meta: "#   levels: [warning, info]\n#   inputs: [gpu, seq_len]\n"},
		{name: "inputs without info", meta: "#   inputs: [gpu]\n",
			wantErr: "rule GPU999: a rule with inputs must list info in levels (a verdict on an assumed input is at most info)"},
		{name: "unknown input", meta: "#   levels: [info]\n#   inputs: [batch]\n",
			wantErr: `rule GPU999: inputs: "batch" is not one of gpu, gpus, model, seq_len, micro_batch, method, model_dtype`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := head + tc.meta + "package gpulint.rules.gpu999\n"
			m := Module{File: "x.rego", Source: src, Package: "gpulint.rules.gpu999"}
			var err error
			if m.meta, err = readMetadata(src); err != nil {
				t.Fatal(err)
			}
			_, err = Load([]Module{m})
			got := ""
			if err != nil {
				got = err.Error()
			}
			if tc.wantErr == "" && got != "" || tc.wantErr != "" && !strings.Contains(got, tc.wantErr) {
				t.Errorf("got %q, want %q", got, tc.wantErr)
			}
		})
	}
}
