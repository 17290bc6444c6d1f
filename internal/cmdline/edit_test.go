package cmdline

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"

	"github.com/gpulint/gpulint/internal/finding"
)

// parser reads the command under test from a parsed file.
type parser func(f *yfile, root *yaml.Node) *Command

func asContainer(f *yfile, root *yaml.Node) *Command { return Recognize(f.container(root)) }

func asFlagString(f *yfile, root *yaml.Node) *Command {
	return ParseFlagString(f.name, f.arg(get(root, "value")))
}

func asFlagList(f *yfile, root *yaml.Node) *Command {
	s := seqOf(root, "extraArgs")
	return ParseArgList(f.name, f.args(s), yList{f, s})
}

// op is one edit request.
type op struct {
	set         bool
	name, value string
}

func (o op) run(c *Command) ([]finding.Edit, error) {
	if o.set {
		return c.SetFlag(o.name, o.value)
	}
	return c.RemoveFlag(o.name)
}

func parseWith(t *testing.T, p parser, src []byte) (*Command, *yfile) {
	t.Helper()
	f := newYFile("c.yaml", src)
	docs, err := f.docs()
	if err != nil || len(docs) == 0 {
		t.Fatalf("parse YAML %q: %v", src, err)
	}
	c := p(f, docs[0].Content[0])
	if c == nil {
		t.Fatalf("not recognised: %q", src)
	}
	return c, f
}

func TestEdits(t *testing.T) {
	tests := []struct {
		name  string
		parse parser
		in    string
		op    op
		want  string
	}{
		{
			name: "list: separate value keeps its quotes", parse: asContainer,
			in:   "command:\n  - vllm\n  - serve\n  - --max-model-len\n  - \"12288\"\n",
			op:   op{true, "max_model_len", "4096"},
			want: "command:\n  - vllm\n  - serve\n  - --max-model-len\n  - \"4096\"\n",
		},
		{
			name: "list: plain number value gets quoted", parse: asContainer,
			in:   "command: [vllm, serve, m, --max-model-len, 8192, --dtype, half]\n",
			op:   op{true, "max-model-len", "4096"},
			want: "command: [vllm, serve, m, --max-model-len, \"4096\", --dtype, half]\n",
		},
		{
			name: "list: plain word stays plain", parse: asContainer,
			in:   "command: [vllm, serve, m, --max-model-len, 8192, --dtype, half]\n",
			op:   op{true, "dtype", "bfloat16"},
			want: "command: [vllm, serve, m, --max-model-len, 8192, --dtype, bfloat16]\n",
		},
		{
			name: "list: equals form by short alias", parse: asContainer,
			in:   "command: [vllm, serve, m, \"--tensor-parallel-size=2\"]\n",
			op:   op{true, "-tp", "4"},
			want: "command: [vllm, serve, m, \"--tensor-parallel-size=4\"]\n",
		},
		{
			name: "list: add in separate style", parse: asContainer,
			in:   "command:\n  - vllm\n  - serve\n  - m\n  - --port\n  - \"8000\"\nimage: x\n",
			op:   op{true, "gpu-memory-utilization", "0.9"},
			want: "command:\n  - vllm\n  - serve\n  - m\n  - --port\n  - \"8000\"\n  - \"--gpu-memory-utilization\"\n  - \"0.9\"\nimage: x\n",
		},
		{
			name: "list: add to args after a command", parse: asContainer,
			in:   "command: [\"python3\", \"-m\", \"vllm.entrypoints.openai.api_server\"]\nargs: [\"--model\", \"m\"]\n",
			op:   op{true, "enforce-eager", "true"},
			want: "command: [\"python3\", \"-m\", \"vllm.entrypoints.openai.api_server\"]\nargs: [\"--model\", \"m\", \"--enforce-eager\"]\n",
		},
		{
			name: "extraArgs: add in equals style", parse: asFlagList,
			in:   "extraArgs:\n  - \"--max-model-len=8192\"\n  - \"--gpu-memory-utilization=0.90\"\n",
			op:   op{true, "max-num-seqs", "64"},
			want: "extraArgs:\n  - \"--max-model-len=8192\"\n  - \"--gpu-memory-utilization=0.90\"\n  - \"--max-num-seqs=64\"\n",
		},
		{
			// The refusal of a value written with a variable (TestEditErrors)
			// is per flag: a literal flag beside such values is edited.
			name: "script: literal flag beside variables", parse: asContainer,
			in:   "command: [sh, -c, \"vllm serve $MODEL --max-model-len 8192 --port ${PORT}\"]\n",
			op:   op{true, "max-model-len", "4096"},
			want: "command: [sh, -c, \"vllm serve $MODEL --max-model-len 4096 --port ${PORT}\"]\n",
		},
		{
			name: "list: remove flag and value", parse: asContainer,
			in:   "command:\n  - vllm\n  - serve\n  - --swap-space\n  - \"0\"\n  - --enforce-eager\n",
			op:   op{false, "swap-space", ""},
			want: "command:\n  - vllm\n  - serve\n  - --enforce-eager\n",
		},
		{
			name: "flow list: remove", parse: asContainer,
			in:   "command: [vllm, serve, m, --disable-log-requests, --port, \"8000\"]\n",
			op:   op{false, "disable-log-requests", ""},
			want: "command: [vllm, serve, m, --port, \"8000\"]\n",
		},
		{
			name: "folded script: add on a new line", parse: asContainer,
			in:   "command: [/bin/sh, -c]\nargs:\n  - >\n    vllm serve Qwen/Qwen2.5-3B-Instruct\n    --host 0.0.0.0\n    --enable-prefix-caching\nname: x\n",
			op:   op{true, "max-model-len", "4096"},
			want: "command: [/bin/sh, -c]\nargs:\n  - >\n    vllm serve Qwen/Qwen2.5-3B-Instruct\n    --host 0.0.0.0\n    --enable-prefix-caching\n    --max-model-len 4096\nname: x\n",
		},
		{
			name: "literal script: add with a continuation", parse: asContainer,
			in:   "command: [sh, -c]\nargs:\n  - |\n    vllm serve \\\n      --host \"0.0.0.0\" \\\n      --tensor-parallel-size=2\n",
			op:   op{true, "max-num-seqs", "8"},
			want: "command: [sh, -c]\nargs:\n  - |\n    vllm serve \\\n      --host \"0.0.0.0\" \\\n      --tensor-parallel-size=2 \\\n      --max-num-seqs 8\n",
		},
		{
			name: "literal script: remove a middle line", parse: asContainer,
			in:   "command: [sh, -c]\nargs:\n  - |\n    vllm serve m \\\n      --swap-space \"0\" \\\n      --port 8000\n",
			op:   op{false, "swap-space", ""},
			want: "command: [sh, -c]\nargs:\n  - |\n    vllm serve m \\\n      --port 8000\n",
		},
		{
			name: "double-quoted script: add before the closing quote", parse: asContainer,
			in:   "command: [sh, -c, \"ray start; python3 -m vllm.entrypoints.openai.api_server --model m --tensor-parallel-size 8\"]\n",
			op:   op{true, "served-model-name", "my model"},
			want: "command: [sh, -c, \"ray start; python3 -m vllm.entrypoints.openai.api_server --model m --tensor-parallel-size 8 --served-model-name 'my model'\"]\n",
		},
		{
			name: "script: add before ; and keep the next command", parse: asContainer,
			in:   "command: [bash, -c, 'vllm serve m --port 8000; echo done']\n",
			op:   op{true, "quantization", "fp8"},
			want: "command: [bash, -c, 'vllm serve m --port 8000 --quantization fp8; echo done']\n",
		},
		{
			name: "double-quoted script: replace a shell-quoted value", parse: asContainer,
			in:   "command: [sh, -c, \"vllm serve m --host \\\"0.0.0.0\\\" --port 8000\"]\n",
			op:   op{true, "host", "127.0.0.1"},
			want: "command: [sh, -c, \"vllm serve m --host \\\"127.0.0.1\\\" --port 8000\"]\n",
		},
		{
			name: "literal script: replace single-quoted JSON", parse: asContainer,
			in:   "command: [sh, -c]\nargs:\n  - |\n    vllm serve m --kv-transfer-config '{\"kv_role\":\"kv_both\"}'\n",
			op:   op{true, "kv-transfer-config", `{"kv_role":"kv_consumer"}`},
			want: "command: [sh, -c]\nargs:\n  - |\n    vllm serve m --kv-transfer-config '{\"kv_role\":\"kv_consumer\"}'\n",
		},
		{
			name: "default-on boolean turned off becomes --no-", parse: asContainer,
			in:   "command: [sh, -c, 'vllm serve m --enable-prefix-caching --port 1']\n",
			op:   op{true, "enable-prefix-caching", "false"},
			want: "command: [sh, -c, 'vllm serve m --no-enable-prefix-caching --port 1']\n",
		},
		{
			name: "default-off boolean turned off is removed", parse: asContainer,
			in:   "command: [sh, -c, 'vllm serve m --enforce-eager --port 1']\n",
			op:   op{true, "enforce-eager", "false"},
			want: "command: [sh, -c, 'vllm serve m --port 1']\n",
		},
		{
			name: "negated boolean turned on", parse: asContainer,
			in:   "command: [vllm, serve, m, --no-enable-chunked-prefill]\n",
			op:   op{true, "enable_chunked_prefill", "true"},
			want: "command: [vllm, serve, m, --enable-chunked-prefill]\n",
		},
		{
			name: "old boolean with a value", parse: asFlagList,
			in:   "extraArgs: [--enable-chunked-prefill=false, --max-model-len=1]\n",
			op:   op{true, "enable-chunked-prefill", "true"},
			want: "extraArgs: [--enable-chunked-prefill=true, --max-model-len=1]\n",
		},
		{
			name: "env flag string: replace", parse: asFlagString,
			in:   "value: \"--gpu-memory-utilization 0.95 --max-model-len 8192 --enforce-eager\"\n",
			op:   op{true, "max-model-len", "32k"},
			want: "value: \"--gpu-memory-utilization 0.95 --max-model-len 32k --enforce-eager\"\n",
		},
		{
			name: "env flag string: remove the first flag", parse: asFlagString,
			in:   "value: \"--gpu-memory-utilization 0.95 --enforce-eager\"\n",
			op:   op{false, "gpu-memory-utilization", ""},
			want: "value: \"--enforce-eager\"\n",
		},
		{
			name: "env flag string: escaped JSON value", parse: asFlagString,
			in:   "value: \"--kv_transfer_config '{\\\"kv_role\\\":\\\"kv_consumer\\\"}'\"\n",
			op:   op{true, "kv-transfer-config", `{"kv_role":"kv_producer"}`},
			want: "value: \"--kv_transfer_config '{\\\"kv_role\\\":\\\"kv_producer\\\"}'\"\n",
		},
		{
			name: "folded env flags: add on a new line", parse: asFlagString,
			in:   "value: >-\n  --trust-remote-code\n  --tensor-parallel-size=8\nname: x\n",
			op:   op{true, "max-model-len", "4096"},
			want: "value: >-\n  --trust-remote-code\n  --tensor-parallel-size=8\n  --max-model-len=4096\nname: x\n",
		},
		{
			name: "folded env flags: remove the first line", parse: asFlagString,
			in:   "value: >-\n  --trust-remote-code\n  --tensor-parallel-size=8\nname: x\n",
			op:   op{false, "trust-remote-code", ""},
			want: "value: >-\n  --tensor-parallel-size=8\nname: x\n",
		},
		{
			name: "empty env flags: add", parse: asFlagString,
			in:   "value: \"\"\n",
			op:   op{true, "enforce-eager", "true"},
			want: "value: \"--enforce-eager\"\n",
		},
		{
			name: "positional model", parse: asContainer,
			in:   "image: vllm/vllm-openai\nargs: [meta-llama/Llama-3.1-8B, --port, \"8000\"]\n",
			op:   op{true, "model", "Qwen/Qwen2.5-7B"},
			want: "image: vllm/vllm-openai\nargs: [Qwen/Qwen2.5-7B, --port, \"8000\"]\n",
		},
		{
			name: "-O3 attached value", parse: asContainer,
			in:   "command: [vllm, serve, m, -O3]\n",
			op:   op{true, "optimization-level", "0"},
			want: "command: [vllm, serve, m, -O0]\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, f := parseWith(t, tc.parse, []byte(tc.in))
			edits, err := tc.op.run(c)
			if err != nil {
				t.Fatalf("edit: %v", err)
			}
			got := applyEdits(t, f.src, edits)
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Fatalf("fixed file (-want +got):\n%s", diff)
			}
			// Converges: the re-parsed file says what was asked.
			c2, f2 := parseWith(t, tc.parse, got)
			checkSpans(t, f2, c2)
			checkApplied(t, c2, tc.op)
			// Idempotent: asking again changes nothing.
			again, err := tc.op.run(c2)
			if err != nil {
				t.Fatalf("second edit: %v", err)
			}
			if got2 := applyEdits(t, got, again); string(got2) != string(got) {
				t.Errorf("second edit changed the file:\n%s", got2)
			}
		})
	}
}

// checkApplied verifies that an op's intent holds in a re-parsed command.
func checkApplied(t *testing.T, c *Command, o op) {
	t.Helper()
	canon := CanonicalName(o.name)
	f, ok := c.Lookup(canon)
	opt, _ := LookupOption(canon)
	switch {
	case !o.set:
		if ok {
			t.Errorf("--%s still present: %+v", canon, f)
		}
	case canon == "model":
		if c.Model != o.value {
			t.Errorf("model = %q, want %q", c.Model, o.value)
		}
	case opt.Type == TypeBool:
		if got := c.Config()[canon]; (got == true) != (o.value == "true") && !(got == nil && o.value == "false") {
			t.Errorf("--%s = %v, want %s", canon, got, o.value)
		}
	case !ok || f.Value != o.value:
		t.Errorf("--%s = %q (present %v), want %q", canon, f.Value, ok, o.value)
	}
}

func TestEditErrors(t *testing.T) {
	tests := []struct {
		name string
		c    func(t *testing.T) *Command
		op   op
	}{
		{
			name: "positions unknown",
			c: func(t *testing.T) *Command {
				return Recognize(Container{Command: []Arg{{Text: "sh"}, {Text: "-c"}, {Text: "vllm serve m --port 1"}}})
			},
			op: op{true, "port", "2"},
		},
		{
			name: "plain scalar cannot take ': '",
			c: func(t *testing.T) *Command {
				c, _ := parseWith(t, asContainer, []byte("command: [sh, -c, vllm serve m --port 1]\n"))
				return c
			},
			op: op{true, "chat-template", "a: b"},
		},
		{
			name: "no list editor",
			c: func(t *testing.T) *Command {
				return Recognize(Container{Image: "vllm/vllm-openai:v0.9.0"})
			},
			op: op{true, "max-model-len", "1"},
		},
		{
			name: "script value from a shell variable",
			c: func(t *testing.T) *Command {
				c, _ := parseWith(t, asContainer, []byte("command: [sh, -c, \"vllm serve m --max-model-len ${LEN}\"]\n"))
				return c
			},
			op: op{true, "max-model-len", "4096"},
		},
		{
			name: "list value with a kubernetes reference inside",
			c: func(t *testing.T) *Command {
				c, _ := parseWith(t, asContainer, []byte("command: [vllm, serve, m, \"--max-model-len=$(LEN)\"]\n"))
				return c
			},
			op: op{true, "max-model-len", "4096"},
		},
		{
			name: "model from a variable",
			c: func(t *testing.T) *Command {
				c, _ := parseWith(t, asContainer, []byte("command: [sh, -c, \"vllm serve $MODEL --port 8000\"]\n"))
				return c
			},
			op: op{true, "model", "Qwen/Qwen2.5-7B"},
		},
		{
			name: "list without a remover",
			c: func(t *testing.T) *Command {
				src := []byte("--port 1")
				return ParseArgList("f", []Arg{ScalarArg(src, 0, 6, "--port"), ScalarArg(src, 7, 8, "1")}, appendOnly{})
			},
			op: op{false, "port", ""},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			edits, err := tc.op.run(tc.c(t))
			if !errors.Is(err, ErrUnsafe) {
				t.Errorf("got edits %v, err %v; want ErrUnsafe", edits, err)
			}
		})
	}
}

type appendOnly struct{}

func (appendOnly) Append(...string) ([]finding.Edit, error) { return nil, nil }

func TestSetBoolNoChange(t *testing.T) {
	tests := []struct {
		name, in string
		op       op
	}{
		{"already on", "command: [vllm, serve, m, --enforce-eager]\n", op{true, "enforce-eager", "true"}},
		{"already off", "command: [vllm, serve, m, --no-enable-prefix-caching]\n", op{true, "enable-prefix-caching", "false"}},
		{"absent default-off", "command: [vllm, serve, m]\n", op{true, "trust-remote-code", "false"}},
		{"remove absent", "command: [vllm, serve, m]\n", op{false, "port", ""}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := parseWith(t, asContainer, []byte(tc.in))
			edits, err := tc.op.run(c)
			if err != nil || len(edits) != 0 {
				t.Errorf("got %v, %v; want no edits", edits, err)
			}
		})
	}
}

// TestInsertAfterEmptyQuotes adds a flag after a script whose last word
// ends in an empty quoted string, in each YAML style, with the scalar's
// end not given (as yaml.v3 does not give it). Single-quoted YAML doubles
// each quote mark of the script, and the content's first half once passed
// for the whole of it, so the flag landed inside the shell quotes and
// joined the model's word.
func TestInsertAfterEmptyQuotes(t *testing.T) {
	styles := []struct {
		name  string
		style yaml.Style
	}{
		{"plain", 0}, {"double quoted", yaml.DoubleQuotedStyle}, {"single quoted", yaml.SingleQuotedStyle},
		{"literal", yaml.LiteralStyle}, {"folded", yaml.FoldedStyle},
	}
	for _, script := range []string{"vllm serve 000000''", `vllm serve 000000""`, `vllm serve m\\`} {
		for _, st := range styles {
			t.Run(st.name+" "+script, func(t *testing.T) {
				n := &yaml.Node{Kind: yaml.ScalarNode, Value: script, Style: st.style}
				cmd := &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Value: "sh"}, {Kind: yaml.ScalarNode, Value: "-c"}, n}}
				src, err := yaml.Marshal(&yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Value: "command"}, cmd}})
				if err != nil {
					t.Fatal(err)
				}
				c, f := parseWith(t, asContainer, src)
				edits, err := c.SetFlag("max-num-seqs", "7")
				if err != nil {
					t.Fatalf("set: %v", err)
				}
				fixed := applyEdits(t, f.src, edits)
				c2, _ := parseWith(t, asContainer, fixed)
				toks, err := ParseShell(c2.args[c2.script].Text)
				if err != nil {
					t.Fatalf("edited script does not lex: %v", err)
				}
				var got []string
				for _, tok := range toks {
					got = append(got, tok.Text)
				}
				before, _ := ParseShell(script)
				want := []string{"vllm", "serve", before[2].Text, "--max-num-seqs", "7"}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("argv after the edit (-want +got):\n%s\n%q\n->\n%q", diff, src, fixed)
				}
			})
		}
	}
}
