package cmdline

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpulint/gpulint/internal/corpus"
)

func TestOptionsTable(t *testing.T) {
	opts := Options()
	if !slices.IsSortedFunc(opts, func(a, b Option) int { return strings.Compare(a.Name, b.Name) }) {
		t.Error("options are not sorted by name")
	}
	seen := map[string]bool{}
	for _, o := range opts {
		for _, s := range append([]string{o.Name}, o.Short...) {
			if seen[s] {
				t.Errorf("spelling %q appears twice", s)
			}
			seen[s] = true
		}
		if o.Name != kebab(o.Name) || strings.HasPrefix(o.Name, "-") {
			t.Errorf("%q is not a kebab-case long name", o.Name)
		}
		if (o.Negatable || o.DefaultOn) && o.Type != TypeBool {
			t.Errorf("%s: Negatable/DefaultOn on a %s option", o.Name, o.Type)
		}
		if o.Human && o.Type != TypeInt {
			t.Errorf("%s: Human on a %s option", o.Name, o.Type)
		}
	}
	// Options returns a copy.
	opts[0].Name = "changed"
	if Options()[0].Name == "changed" {
		t.Error("Options shares the table with its caller")
	}
}

// TestOptionsCoverReference checks that every flag the vLLM
// reference names is in the table, so the schema and the parser agree
// with it.
func TestOptionsCoverReference(t *testing.T) {
	ref := corpus.Reference(t, "vllm.md")
	placeholders := map[string]bool{"key": true, "no-key": true, "tensor": true}
	for _, m := range regexp.MustCompile("`(--?[a-zA-Z][a-z0-9-]*)").FindAllStringSubmatch(string(ref), -1) {
		name := strings.TrimLeft(m[1], "-")
		if placeholders[name] {
			continue
		}
		if _, ok := LookupOption(m[1]); ok {
			continue
		}
		if o, neg, _, _ := lookupLong(name); o != nil && neg {
			continue
		}
		t.Errorf("%s is in vllm.md but not in the option table", m[1])
	}
}

func TestCanonicalName(t *testing.T) {
	tests := map[string]string{
		"--tensor_parallel_size":         "tensor-parallel-size",
		"tensor-parallel-size":           "tensor-parallel-size",
		"-tp":                            "tensor-parallel-size",
		"-q":                             "quantization",
		"-O":                             "optimization-level",
		"-sc":                            "speculative-config",
		"--compilation_config.pass_conf": "compilation-config.pass_conf",
		"-x":                             "-x",
		"--no-enforce-eager":             "no-enforce-eager",
	}
	for in, want := range tests {
		if got := CanonicalName(in); got != want {
			t.Errorf("CanonicalName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseHumanInt(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr bool
	}{
		{in: "32768", want: 32768},
		{in: "32k", want: 32000},
		{in: "25.6k", want: 25600},
		{in: "1K", want: 1024},
		{in: "8k", want: 8000},
		{in: "2M", want: 2 << 20},
		{in: "1g", want: 1_000_000_000},
		{in: "1T", want: 1 << 40},
		{in: "-1", want: -1},
		{in: "1.5K", wantErr: true},
		{in: "auto", wantErr: true},
		{in: "10x", wantErr: true},
		{in: "99999999999T", wantErr: true},
	}
	for _, tc := range tests {
		got, err := ParseHumanInt(tc.in)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("ParseHumanInt(%q) = %d, %v; want %d (error %v)", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestConfig(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want map[string]any
	}{
		{
			name: "typed values",
			yaml: "command: [vllm, serve, m, -tp, \"2\", --max-model-len, 32k, --max-num-batched-tokens=1K, --gpu-memory-utilization, \"0.95\", --enforce-eager, --no-enable-prefix-caching, --port, \"8000\", --dtype, half]\n",
			want: map[string]any{
				"model": "m", "tensor-parallel-size": int64(2), "max-model-len": int64(32000),
				"max-num-batched-tokens": int64(1024), "gpu-memory-utilization": 0.95,
				"enforce-eager": true, "enable-prefix-caching": false, "port": int64(8000), "dtype": "half",
			},
		},
		{
			name: "json kept as string, multi as list",
			yaml: "command: [vllm, serve, m, --compilation-config, '{\"level\": 3}', --cudagraph-capture-sizes, \"1\", \"2\", --served-model-name, a, b]\n",
			want: map[string]any{
				"model": "m", "compilation-config": `{"level": 3}`,
				"cudagraph-capture-sizes": []any{int64(1), int64(2)},
				"served-model-name":       []any{"a", "b"},
			},
		},
		{
			// vLLM merges the dotted sub-keys into one object and passes it
			// last, so it replaces the whole JSON value given before.
			name: "dotted sub-keys build their head's object",
			yaml: "command: [vllm, serve, m, --compilation-config, '{\"level\": 3}', --compilation-config.cudagraph_capture_sizes, '[1, 2]', --compilation_config.pass_config.fuse=true, -cc.mode, \"3\", --compilation-conf.sizes+, \"4,8\", --compilation-config.sizes+=16, -sc.num_speculative_tokens, \"2\", --max-model-len.x, 1k, --no-such.k, v]\n",
			want: map[string]any{
				"model": "m",
				"compilation-config": map[string]any{
					"cudagraph_capture_sizes": []any{int64(1), int64(2)},
					"pass_config":             map[string]any{"fuse": true},
					"mode":                    int64(3),
					"sizes":                   []any{"4", "8", "16"},
				},
				"speculative-config": map[string]any{"num_speculative_tokens": int64(2)},
				"max-model-len":      map[string]any{"x": int64(1000)},
				"no-such":            map[string]any{"k": "v"},
			},
		},
		{
			name: "unknown, unconvertible, dynamic, repeated, old boolean",
			yaml: "command: [vllm, serve, m, --my-flag, v, --bare-unknown, --max-model-len, auto, -tp, \"$(TP)\", --port, \"1\", --port, \"2\", --enable-chunked-prefill=False, --max-num-seqs]\n",
			want: map[string]any{
				"model": "m", "my-flag": "v", "bare-unknown": true, "max-model-len": "auto",
				"port": int64(2), "enable-chunked-prefill": false, // $(TP): no env, unknown
				"max-num-seqs": nil,
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := recognizeYAML(t, tc.yaml)
			if c == nil {
				t.Fatal("not recognised")
			}
			if diff := cmp.Diff(tc.want, c.Config()); diff != "" {
				t.Errorf("Config (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAbbreviations holds long names to argparse's prefix matching, which
// vLLM's FlexibleArgumentParser leaves on (lookupLong): a unique prefix of
// an option string (the --no- forms included) is that option, several are
// ambiguous, and underscores, "=" values and dotted JSON keys are read
// first as vLLM reads them.
func TestAbbreviations(t *testing.T) {
	type flag struct {
		Name, Spelled, Value string
		Negated, Abbrev      bool
		Ambiguous            []string
	}
	tests := []struct {
		name, args string
		want       []flag
	}{
		{"exact name is no abbreviation", "--max-num-seqs 8", []flag{{Name: "max-num-seqs", Spelled: "--max-num-seqs", Value: "8"}}},
		{"unique prefix", "--max-num-seq 1024", []flag{{Name: "max-num-seqs", Spelled: "--max-num-seq", Value: "1024", Abbrev: true}}},
		{"underscores and an equals value", "--max_num_seq=8", []flag{{Name: "max-num-seqs", Spelled: "--max_num_seq", Value: "8", Abbrev: true}}},
		{"prefix of two options", "--max-lora 2", []flag{{Name: "max-lora", Spelled: "--max-lora", Value: "2", Ambiguous: []string{"--max-lora-rank", "--max-loras"}}}},
		{"prefix of a --no- form", "--no-enable-prefix", []flag{{Name: "enable-prefix-caching", Spelled: "--no-enable-prefix", Negated: true, Abbrev: true}}},
		{"the --no- form does not share the positive prefix", "--enable-prefix", []flag{{Name: "enable-prefix-caching", Spelled: "--enable-prefix", Abbrev: true}}},
		{"no minimum length", "--gpu 0.8", []flag{{Name: "gpu-memory-utilization", Spelled: "--gpu", Value: "0.8", Abbrev: true}}},
		{"dotted key of an abbreviated JSON option", "--compilation-conf.level 3", []flag{{Name: "compilation-config.level", Spelled: "--compilation-conf.level", Value: "3", Abbrev: true}}},
		{"a boolean prefix takes no value", "--enforce-e extra", []flag{{Name: "enforce-eager", Spelled: "--enforce-e", Abbrev: true}}},
		{"unknown name", "--frobnicate 1", []flag{{Name: "frobnicate", Spelled: "--frobnicate", Value: "1"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := ParseFlagString("f", Arg{Text: tc.args})
			var got []flag
			for _, f := range c.Flags {
				got = append(got, flag{f.Name, f.Spelled, f.Value, f.Negated, f.Abbrev, f.Ambiguous})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("flags (-want +got):\n%s", diff)
			}
		})
	}
}

func TestExpandLong(t *testing.T) {
	tests := []struct {
		in, full string
		amb      []string
	}{
		{"max-num-seqs", "max-num-seqs", nil},
		{"max_num_seq", "max-num-seqs", nil},
		{"no-enable-prefix", "no-enable-prefix-caching", nil},
		{"no-enforce-eager", "no-enforce-eager", nil},
		{"max-lora", "", []string{"--max-lora-rank", "--max-loras"}},
		{"frobnicate", "", nil},
	}
	for _, tc := range tests {
		full, amb := ExpandLong(tc.in)
		if full != tc.full || !slices.Equal(amb, tc.amb) {
			t.Errorf("ExpandLong(%q) = %q, %q; want %q, %q", tc.in, full, amb, tc.full, tc.amb)
		}
	}
}
