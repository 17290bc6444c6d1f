package terraform

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpulint/gpulint/internal/source"
)

// body returns the heredocs' bodies as text.
func bodies(data []byte, hs []Heredoc) []string {
	var out []string
	for _, h := range hs {
		out = append(out, string(data[h.Start:h.End]))
	}
	return out
}

func TestHeredocs(t *testing.T) {
	for _, tc := range []struct {
		name string
		tf   string
		want []string // bodies
	}{
		{
			name: "indented and plain heredocs, markers of any name",
			tf:   "a = <<-EOT\n  x: 1\n  EOT\nb = [<<YAML\ny: 2\nYAML\n]\n",
			want: []string{"  x: 1\n", "y: 2\n"},
		},
		{
			name: "the closing marker must be alone on its line",
			tf:   "a = <<EOT\nEOT is not alone\n  EOT\n",
			want: []string{"EOT is not alone\n"},
		},
		{
			name: "openers in comments and strings are not heredocs",
			tf:   "# a = <<EOT\n// b = <<EOT\nc = \"<<EOT\"\n/* d = <<EOT\n*/ e = <<EOT\nz: 1\nEOT\n",
			want: []string{"z: 1\n"},
		},
		{
			name: "an opener followed by more text is not one",
			tf:   "a = <<EOT x\nEOT\n",
		},
		{
			name: "an unterminated heredoc ends the reading; the ones before stay",
			tf:   "a = <<A\nk: 1\nA\nb = <<B\nk: 2\n",
			want: []string{"k: 1\n"},
		},
		{
			name: "a body with an unclosed interpolation is left out",
			tf:   "a = <<A\nk: ${var.x\nA\nb = <<B\nk: 2\nB\n",
			want: []string{"k: 2\n"},
		},
		{
			name: "CRLF line ends",
			tf:   "a = <<-EOT\r\n  k: 1\r\n  EOT\r\n",
			want: []string{"  k: 1\r\n"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := []byte(tc.tf)
			if diff := cmp.Diff(tc.want, bodies(data, Heredocs(data, 0))); diff != "" {
				t.Errorf("bodies (-want +got):\n%s", diff)
			}
		})
	}
}

// The YAML view keeps the .tf file's offsets and lines: outside the body
// every byte is blank, a template sequence taking its lines is blank, one
// inside a line's text is opaque (x) and listed as unknown.
func TestHeredocYAML(t *testing.T) {
	for _, tc := range []struct {
		name, tf, want string
		unknown        []string
	}{
		{
			name:    "inline interpolation is unknown, a line of its own is blank",
			tf:      "v = <<-EOT\n  name: ${var.name}\n  ${var.extra}\n  k: a-${x}\n  EOT\n",
			want:    "          \n  name: xxxxxxxxxxx\n              \n  k: a-xxxx\n",
			unknown: []string{"${var.name}", "${x}"},
		},
		{
			name:    "quoted strings and nested templates inside an interpolation",
			tf:      "v = <<EOT\n${a != null ? \"s: ${b}\" : \"}\"}\nk: ${f(\"}\")}\nEOT\n",
			want:    "         \n" + strings.Repeat(" ", 30) + "\nk: xxxxxxxxx\n",
			unknown: []string{`${f("}")}`},
		},
		{
			name: "escaped sequences are literal text",
			tf:   "v = <<EOT\nk: $${x} %%{y}\nEOT\n",
			want: "         \nk: $${x} %%{y}\n",
		},
		{
			name: "a directive block is blank as a whole, its branches included",
			tf:   "v = <<EOT\n%{ if var.big }\nf: p4d\n%{ else }\nf: g5\n%{ endif }\nk: 1\nEOT\n",
			want: "         \n" + strings.Repeat(" ", 15) + "\n      \n" + strings.Repeat(" ", 9) + "\n     \n" + strings.Repeat(" ", 10) + "\nk: 1\n",
		},
		{
			name:    "an inline directive block is unknown",
			tf:      "v = <<EOT\nf: %{ if x }p4d%{ else }g5%{ endif }\nEOT\n",
			want:    "         \nf: " + strings.Repeat("x", len("%{ if x }p4d%{ else }g5%{ endif }")) + "\n",
			unknown: []string{"%{ if x }p4d%{ else }g5%{ endif }"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := []byte(tc.tf)
			hs := Heredocs(data, 0)
			if len(hs) != 1 {
				t.Fatalf("%d heredocs, want 1", len(hs))
			}
			if diff := cmp.Diff(tc.want, string(hs[0].YAML(data))); diff != "" {
				t.Errorf("YAML view (-want +got):\n%s", diff)
			}
			var unknown []string
			for _, sp := range hs[0].Unknown {
				unknown = append(unknown, string(data[sp[0]:sp[1]]))
			}
			if diff := cmp.Diff(tc.unknown, unknown); diff != "" {
				t.Errorf("unknown (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHeredocsUnbalancedDirectives(t *testing.T) {
	for _, tf := range []string{
		"v = <<EOT\n%{ endif }\nEOT\n",
		"v = <<EOT\n%{ if x }\nk: 1\nEOT\n",
		"v = <<EOT\n%{ else }\nEOT\n",
	} {
		if hs := Heredocs([]byte(tf), 0); len(hs) != 0 {
			t.Errorf("%q: read %d heredocs, want none (Terraform rejects the template)", tf, len(hs))
		}
	}
}

// Value leaves out what Terraform fills in: an entry whose value is an
// interpolation, and a list holding one; known values keep their
// positions in the .tf file.
func TestHeredocValue(t *testing.T) {
	tf := `resource "x" "y" {
  values = [<<-EOT
    name: ${var.name}
    nodePool:
      labels:
        - instanceType: g5-pool
        - team: ${var.team}
      requirements:
        - key: karpenter.k8s.aws/instance-family
          operator: In
          values: ["g5", "${var.family}"]
        - key: karpenter.k8s.aws/instance-family
          operator: In
          values: ["g5"]
    EOT
  ]
}
`
	data := []byte(tf)
	hs := Heredocs(data, 0)
	if len(hs) != 1 {
		t.Fatalf("%d heredocs, want 1", len(hs))
	}
	f, err := hs[0].Docs("addons.tf", data, source.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(f.Data, data) {
		t.Error("the parsed file's Data is not the .tf file's bytes")
	}
	got, ok, err := hs[0].Value(f.Docs[0].Root, 0)
	if err != nil || !ok {
		t.Fatalf("Value: ok %v, err %v", ok, err)
	}
	want := map[string]any{"nodePool": map[string]any{
		"labels": []any{map[string]any{"instanceType": "g5-pool"}, map[string]any{}},
		"requirements": []any{
			map[string]any{"key": "karpenter.k8s.aws/instance-family", "operator": "In"},
			map[string]any{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": []any{"g5"}},
		},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("value (-want +got):\n%s", diff)
	}
	node, _, _ := f.Docs[0].Root.Lookup([]any{"nodePool", "requirements", 1, "values", 0})
	if node.Start.Line != 14 || node.Start.Col != 20 {
		t.Errorf("values[0] of the second requirement at %d:%d, want the .tf file's 14:20", node.Start.Line, node.Start.Col)
	}
}

// Hostile input: a large file of openers, a deep nest of quoted
// templates, and an unterminated heredoc each cost one bounded pass.
func TestHeredocsHostile(t *testing.T) {
	inputs := map[string][]byte{
		"many openers":      bytes.Repeat([]byte("a = <<EOT\n"), 200_000),
		"deep nesting":      []byte("v = <<EOT\nk: " + strings.Repeat(`${"`, 50_000) + "\nEOT\n"),
		"unterminated":      append([]byte("v = <<EOT\n"), bytes.Repeat([]byte("k: ${x}\n"), 200_000)...),
		"many interpolated": append(append([]byte("v = <<EOT\n"), bytes.Repeat([]byte("k: ${x} ${y}\n"), 100_000)...), "EOT\n"...),
		"binary":            append([]byte("v = <<EOT\n\x00\xff${\n"), "EOT\n"...),
	}
	for name, data := range inputs {
		start := time.Now()
		hs := Heredocs(data, 64)
		for _, h := range hs {
			if f, err := h.Docs("x.tf", data, source.Limits{}); err == nil {
				for _, d := range f.Docs {
					_, _, _ = h.Value(d.Root, 0)
				}
			}
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: took %v", name, d)
		}
	}
}

func FuzzHeredocs(f *testing.F) {
	for _, s := range []string{
		"a = <<-EOT\n  name: ${var.n}\n  nodePool:\n    labels:\n      - k: v\n  EOT\n",
		"v = <<EOT\n%{ if x }\nk: 1\n%{ endif }\nEOT\n",
		"v = <<EOT\n${a ? \"${b}\" : \"}\"}\nEOT\n",
		"/* <<EOT */ x = <<Y\nk: $${z}\nY\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, h := range Heredocs(data, 8) {
			if h.Start > h.End || h.End > len(data) {
				t.Fatalf("body [%d, %d) outside the file of %d bytes", h.Start, h.End, len(data))
			}
			y := h.YAML(data)
			if len(y) != h.End || bytes.Count(y, []byte("\n")) != bytes.Count(data[:h.End], []byte("\n")) {
				t.Fatal("the YAML view moved offsets or lines")
			}
			for _, sp := range h.Unknown {
				if sp[0] < h.Start || sp[1] > h.End || sp[0] >= sp[1] {
					t.Fatalf("unknown span %v outside the body [%d, %d)", sp, h.Start, h.End)
				}
			}
			if f, err := h.Docs("x.tf", data, source.Limits{MaxNodes: 10_000}); err == nil {
				for _, d := range f.Docs {
					_, _, _ = h.Value(d.Root, 10_000)
				}
			}
		}
	})
}
