package cmdline

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseShell(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []string // word texts; operators as "op:<text>"
		wantErr bool
	}{
		{name: "plain words", in: "vllm serve m --port 8000", want: []string{"vllm", "serve", "m", "--port", "8000"}},
		{name: "quotes", in: `--host "0.0.0.0" --cfg '{"a": 1}' a"b"'c'`, want: []string{"--host", "0.0.0.0", "--cfg", `{"a": 1}`, "abc"}},
		{name: "escapes", in: `a\ b "x\"y\$z\q" \\`, want: []string{"a b", `x"y$z\q`, `\`}},
		{name: "continuations", in: "vllm serve \\\n  --a 1 \\\n  --b=2", want: []string{"vllm", "serve", "--a", "1", "--b=2"}},
		{name: "continuation inside a word", in: "--ab\\\ncd", want: []string{"--abcd"}},
		{name: "operators and newline", in: "ulimit -n 1; echo a && vllm serve m | tee x\nfoo &", want: []string{"ulimit", "-n", "1", "op:;", "echo", "a", "op:&&", "vllm", "serve", "m", "op:|", "tee", "x", "op:\n", "foo", "op:&"}},
		{name: "redirections", in: "cmd > /log 2>&1 <in", want: []string{"cmd", "op:>", "/log", "op:2>&", "1", "op:<", "in"}},
		{name: "expansions kept verbatim", in: `$VLLM_ADDITIONAL_ARGS ${A:-x} $(cat "f)") "$(LWS_GROUP_SIZE)" ` + "`date`", want: []string{"$VLLM_ADDITIONAL_ARGS", "${A:-x}", `$(cat "f)")`, "$(LWS_GROUP_SIZE)", "`date`"}},
		{name: "comments", in: "a # not b\nc#d", want: []string{"a", "op:\n", "c#d"}},
		{name: "go template in quotes", in: `--served-model-name "{{ .Spec.Model.Name }}"`, want: []string{"--served-model-name", "{{ .Spec.Model.Name }}"}},
		{name: "unterminated single quote", in: "a 'bc", want: []string{"a", "bc"}, wantErr: true},
		{name: "unterminated double quote", in: `a "bc`, want: []string{"a", "bc"}, wantErr: true},
		{name: "unterminated expansion", in: "a $(b", want: []string{"a", "$(b"}, wantErr: true},
		{name: "CRLF", in: "a\r\nb", want: []string{"a", "op:\n", "b"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			toks, err := ParseShell(tc.in)
			if (err != nil) != tc.wantErr || (err != nil && !errors.Is(err, ErrUnterminated)) {
				t.Errorf("err = %v, want error %v", err, tc.wantErr)
			}
			var got []string
			for _, tk := range toks {
				if tk.Op {
					got = append(got, "op:"+tk.Text)
				} else {
					got = append(got, tk.Text)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("tokens (-want +got):\n%s", diff)
			}
			checkTokens(t, tc.in, toks)
		})
	}
}

func TestSimpleCommands(t *testing.T) {
	lw, _ := lexShell("a 1 > f; b 2 && c\n\nd | e 2>&1")
	var got [][]string
	for _, cmd := range simpleCommands(lw) {
		var ws []string
		for _, i := range cmd {
			ws = append(ws, lw[i].Text)
		}
		got = append(got, ws)
	}
	want := [][]string{{"a", "1"}, {"b", "2"}, {"c"}, {"d"}, {"e"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("commands (-want +got):\n%s", diff)
	}
}

// checkTokens checks the invariants of a token list against its script:
// spans are ordered and in bounds, re-reading a word's span gives the same
// word, non-expansion words unquote (by an independent decoder) to their
// text, and every byte of a word's text was copied from the script.
func checkTokens(t *testing.T, s string, toks []Token) {
	t.Helper()
	prev := 0
	for _, tk := range toks {
		if tk.Start < prev || tk.End < tk.Start || tk.End > len(s) {
			t.Fatalf("token %+v out of order or bounds (prev %d, len %d)", tk, prev, len(s))
		}
		prev = tk.End
		raw := s[tk.Start:tk.End]
		if tk.Op {
			if raw != tk.Text {
				t.Errorf("operator %q spans %q", tk.Text, raw)
			}
			continue
		}
		again, _ := ParseShell(raw)
		if len(again) != 1 || again[0].Text != tk.Text {
			t.Errorf("re-reading %q gives %+v, want one word %q", raw, again, tk.Text)
		}
		if !strings.ContainsAny(raw, "$`") {
			if got := unquoteWord(raw); got != tk.Text {
				t.Errorf("unquote(%q) = %q, want %q", raw, got, tk.Text)
			}
		}
	}
	lw, _ := lexShell(s)
	for _, w := range lw {
		if w.Op {
			continue
		}
		if len(w.offs) != len(w.Text) {
			t.Fatalf("word %q has %d offsets", w.Text, len(w.offs))
		}
		for k, o := range w.offs {
			if o < w.Start || o >= w.End || s[o] != w.Text[k] || (k > 0 && o <= w.offs[k-1]) {
				t.Fatalf("word %q byte %d maps to %d", w.Text, k, o)
			}
		}
	}
}

// unquoteWord removes shell quoting from one word with no expansions:
// backslash escapes, '...', "..." (where \ only escapes \ " $ ` and
// newline) and backslash-newline. An unclosed quote runs to the end.
func unquoteWord(raw string) string {
	var b strings.Builder
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; c {
		case '\\':
			if i+1 < len(raw) {
				i++
				if raw[i] != '\n' {
					b.WriteByte(raw[i])
				}
			} else {
				b.WriteByte(c)
			}
		case '\'':
			j := strings.IndexByte(raw[i+1:], '\'')
			if j < 0 {
				b.WriteString(raw[i+1:])
				return b.String()
			}
			b.WriteString(raw[i+1 : i+1+j])
			i += j + 1
		case '"':
			for i++; i < len(raw) && raw[i] != '"'; i++ {
				if raw[i] == '\\' && i+1 < len(raw) && strings.IndexByte("\\\"$`\n", raw[i+1]) >= 0 {
					i++
					if raw[i] != '\n' {
						b.WriteByte(raw[i])
					}
					continue
				}
				b.WriteByte(raw[i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func FuzzParseShell(f *testing.F) {
	for _, s := range []string{
		"vllm serve m --port 8000",
		"ulimit -n 65536; echo head; $KUBERAY_GEN_RAY_START_CMD; vllm serve deepseek-ai/DeepSeek-R1 --tensor-parallel-size 16",
		"vllm serve \\\n  --host \"0.0.0.0\" \\\n  --kv-transfer-config '{\"kv_connector\":\"NixlConnector\"}' \\\n  --tensor-parallel-size=2\n",
		"bash x leader --ray_cluster_size=$(LWS_GROUP_SIZE); python3 -m vllm.entrypoints.openai.api_server --model m",
		`--served-model-name "{{ .Spec.Model.Name }}" $VLLM_ADDITIONAL_ARGS 2>&1 > /log`,
		"a\\", `"a\`, "'", "$(", "${a", "`", "$'x\\'y'", "# c\n$((1+(2)))",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		toks, _ := ParseShell(s)
		checkTokens(t, s, toks)
	})
}
