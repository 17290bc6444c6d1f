package source

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpulint/gpulint/internal/finding"
)

func TestParseMustachePlaceholders(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		broken bool // the file must keep its parse error
		// want maps a path (dot-separated, from document 0 or the named
		// document) to the text its scalar must hold.
		want map[string]string
		// placeholders are the texts listed in File.Placeholders.
		placeholders []string
	}{
		{
			name:         "map value",
			in:           "kind: Secret\nstringData:\n  token: {{HF_TOKEN}}\n",
			want:         map[string]string{"stringData.token": "{{HF_TOKEN}}"},
			placeholders: []string{"{{HF_TOKEN}}"},
		},
		{
			name:         "sequence item, blanks inside and a trailing comment",
			in:           "args:\n  - --model\n  - {{ model_id }}   # sed fills it\n  - --port=8000\n",
			want:         map[string]string{"args.1": "{{ model_id }}", "args.2": "--port=8000"},
			placeholders: []string{"{{ model_id }}"},
		},
		{
			name:         "several documents",
			in:           "a: 1\n---\nb: {{B}}\nc: {{C}}\n",
			want:         map[string]string{"a": "1"},
			placeholders: []string{"{{B}}", "{{C}}"},
		},
		{
			name: "placeholder inside a longer scalar already parses",
			in:   "image: repo/{{NAME}}:v1\n",
			want: map[string]string{"image": "repo/{{NAME}}:v1"},
		},
		{
			name: "quoted placeholder is an ordinary string",
			in:   "token: \"{{HF_TOKEN}}\"\n",
			want: map[string]string{"token": "{{HF_TOKEN}}"},
		},
		{
			name:   "placeholder starting a longer scalar is a syntax error",
			in:     "image: {{REPO}}/vllm:v1\n",
			broken: true,
		},
		{
			name:   "a directive alone on its line is no value: syntax error kept",
			in:     "spec:\n  {{ if .Values.gpu }}\n  gpus: 1\n",
			broken: true,
		},
		{
			name:   "a mustache section is no value: syntax error kept",
			in:     "items:\n  - {{#models}}\n",
			broken: true,
		},
		{
			name:   "another syntax error keeps the file broken",
			in:     "token: {{HF_TOKEN}}\nbad: [1, 2\n",
			broken: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := ParseYAML("t.yaml", []byte(tc.in), DefaultLimits())
			if tc.broken {
				if err == nil {
					t.Fatalf("ParseYAML: no error, want one")
				}
				if len(f.Placeholders) != 0 {
					t.Errorf("Placeholders = %v on a broken file", f.Placeholders)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseYAML: %v", err)
			}
			if string(f.Data) != tc.in {
				t.Errorf("Data = %q, want the original bytes", f.Data)
			}
			var got []string
			for _, p := range f.Placeholders {
				got = append(got, string(f.Data[p[0]:p[1]]))
			}
			if diff := cmp.Diff(tc.placeholders, got); diff != "" {
				t.Errorf("Placeholders (-want +got):\n%s", diff)
			}
			for path, want := range tc.want {
				var n *Node
				for _, d := range f.Docs {
					if m, _, k := d.Root.Lookup(splitPath(path)); k == len(splitPath(path)) {
						n = m
					}
				}
				if n == nil || n.Kind != ScalarNode {
					t.Fatalf("%s: no scalar", path)
				}
				if n.Text != want {
					t.Errorf("%s = %q, want %q", path, n.Text, want)
				}
				if at := string(f.Data[n.Start.Offset:n.End.Offset]); !strings.Contains(at, want) {
					t.Errorf("%s: range holds %q, not %q", path, at, want)
				}
			}
			for _, p := range f.Placeholders {
				ok := false
				walkNodes(f, func(n *Node) {
					ok = ok || (n.Kind == ScalarNode && n.Start.Offset == p[0] && n.End.Offset == p[1] && n.Tag == "str" && n.Style == Plain)
				})
				if !ok {
					t.Errorf("placeholder %q has no plain string node at its exact range", f.Data[p[0]:p[1]])
				}
			}
		})
	}
}

// splitPath splits "a.1.b" into keys and indices.
func splitPath(s string) []any {
	var out []any
	for _, p := range strings.Split(s, ".") {
		if len(p) == 1 && p[0] >= '0' && p[0] <= '9' {
			out = append(out, int(p[0]-'0'))
			continue
		}
		out = append(out, p)
	}
	return out
}

func TestEditsKeepOutOfPlaceholders(t *testing.T) {
	const in = "spec:\n  replicas: {{REPLICAS}}\n  image: vllm/vllm-openai:v0.10.1\n"
	f, err := ParseYAML("t.yaml", []byte(in), DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	at := strings.Index(in, "{{")
	end := at + len("{{REPLICAS}}")
	tests := []struct {
		name  string
		edits []finding.Edit
		ok    bool
	}{
		{"replace the placeholder", []finding.Edit{{Start: at, End: end, NewText: "2"}}, false},
		{"replace part of it", []finding.Edit{{Start: at + 2, End: at + 4, NewText: "X"}}, false},
		{"insert inside", []finding.Edit{{Start: at + 1, End: at + 1, NewText: "x"}}, false},
		{"glue text after it", []finding.Edit{{Start: end, End: end, NewText: "0"}}, false},
		{"glue text before it", []finding.Edit{{Start: at, End: at, NewText: "1"}}, false},
		{"a new line after it", []finding.Edit{{Start: end, End: end, NewText: "\n  paused: true"}}, true},
		{"the key before it", []finding.Edit{{Start: at - len("replicas: "), End: at - 2, NewText: "count"}}, true},
		{"another line", []finding.Edit{{Start: strings.Index(in, "v0.10.1"), End: len(in) - 1, NewText: "v0.11.0"}}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := f.CheckEdits(tc.edits); (err == nil) != tc.ok {
				t.Errorf("CheckEdits = %v, want ok %v", err, tc.ok)
			}
		})
	}
	if _, err := f.Edits(0, []Op{{Kind: Set, Path: []any{"spec", "replicas"}, Value: 2}}); err == nil || !strings.Contains(err.Error(), "placeholder {{REPLICAS}}") {
		t.Errorf("Edits setting the placeholder: err = %v, want a refusal naming it", err)
	}
	es, err := f.Edits(0, []Op{{Kind: Set, Path: []any{"spec", "image"}, Value: "vllm/vllm-openai:v0.11.0"}})
	if err != nil {
		t.Fatalf("Edits elsewhere: %v", err)
	}
	if got, want := string(applyTo(f.Data, es)), strings.Replace(in, "v0.10.1", "v0.11.0", 1); got != want {
		t.Errorf("edited file:\n%s\nwant:\n%s", got, want)
	}
}
