package report

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gpulint/gpulint/internal/finding"
)

func TestEscapeMarkdown(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain words 1.5", "plain words 1.5"},
		// Mid-line, Markdown reads hyphens, plus signs, "!", "#" and
		// parentheses as text: a rule slug stays as written.
		{"fp32-where-bf16 2 + 3 - 1! (x) #tag", "fp32-where-bf16 2 + 3 - 1! (x) #tag"},
		// "_" inside a word opens no emphasis; at a word's edge it may.
		{"max_num_seqs _b_ x_ _y", `max_num_seqs \_b\_ x\_ \_y`},
		{"<b>x</b> & y &amp; &#38;", "&lt;b&gt;x&lt;/b&gt; & y &amp;amp; &amp;\\#38;"},
		{"<!-- gpulint:comment -->", "&lt;!-- gpulint:comment --&gt;"},
		{"*a* `c` ~d~", `\*a\* \` + "`" + `c\` + "`" + ` \~d\~`},
		{"[x](http://e)", `\[x\](http://e)`},
		{"![img](http://e/i.png)", `!\[img\](http://e/i.png)`},
		{"a | b", "a | b"},
		{"# h\n## h2", "# h ## h2"},
		{"see #12", `see \#12`},
		{"cc @team", "cc @\u200bteam"},
		{"$x$", `\$x\$`},
		{"bell\x07 and\tc1\u0085", "bell and c1"},
		{`back\slash`, `back\\slash`},
	}
	for _, tc := range tests {
		if got := EscapeMarkdown(tc.in); got != tc.want {
			t.Errorf("EscapeMarkdown(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	// In a table cell "|" ends the cell.
	if got, want := EscapeTableCell("a | b-c"), `a \| b-c`; got != want {
		t.Errorf("EscapeTableCell = %q, want %q", got, want)
	}
}

func TestEscapeHTML(t *testing.T) {
	in := "<summary>\"x\" & 'y'</summary>\n@me"
	want := "&lt;summary&gt;&quot;x&quot; &amp; &#39;y&#39;&lt;/summary&gt; @\u200bme"
	if got := EscapeHTML(in); got != want {
		t.Errorf("EscapeHTML(%q) = %q, want %q", in, got, want)
	}
}

func TestCodeFence(t *testing.T) {
	tests := []struct {
		name, content, want string
	}{
		{"no backticks", "a\n", "```diff\na\n```\n"},
		{"adds the last newline", "a", "```diff\na\n```\n"},
		{"three inside", "```\n", "````diff\n```\n````\n"},
		{"runs of five", "x ````` y\n", "``````diff\nx ````` y\n``````\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := CodeFence(tc.content, "diff"); got != tc.want {
				t.Errorf("CodeFence = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestMarkdownNoFindings(t *testing.T) {
	got := MarkdownBody(Input{Summary: Summary{Files: 4}}, MarkdownOptions{Header: "<!-- m -->"})
	want := "<!-- m -->\n## gpulint\n\nNo findings — all clear (4 files checked).\n"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestMarkdownLinks(t *testing.T) {
	in := sampleInput(t)
	got := MarkdownBody(in, MarkdownOptions{Repo: "acme/train", SHA: "0123abc", ServerURL: "https://ghe.example.com/"})
	for _, want := range []string{
		"[configs/ds_config.json:2](https://ghe.example.com/acme/train/blob/0123abc/configs/ds_config.json#L2)",
		"[k8s/vllm serve,prod.yaml:10](https://ghe.example.com/acme/train/blob/0123abc/k8s/vllm%20serve%2Cprod.yaml#L10)",
		"  - [k8s/vllm serve,prod.yaml:13](https://ghe.example.com/acme/train/blob/0123abc/k8s/vllm%20serve%2Cprod.yaml#L13): 2 GPUs requested here",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("body lacks %q:\n%s", want, got)
		}
	}
	// A hostile doc URL is not linked.
	in.Findings[0].DocURL = "javascript:alert(1)"
	if got := MarkdownBody(in, MarkdownOptions{}); strings.Contains(got, "javascript") {
		t.Errorf("javascript: URL was linked:\n%s", got)
	}
}

// TestMarkdownFencesHold checks that no line inside a fenced diff can
// close its fence, whatever backticks the fixed values contain.
func TestMarkdownFencesHold(t *testing.T) {
	body := MarkdownBody(sampleInput(t), MarkdownOptions{})
	open := regexp.MustCompile("^(`{3,})diff$")
	lines := strings.Split(body, "\n")
	fences := 0
	for i := 0; i < len(lines); i++ {
		m := open.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		fences++
		closed := false
		for j := i + 1; j < len(lines); j++ {
			trimmed := strings.TrimLeft(lines[j], " ")
			if strings.HasPrefix(trimmed, "```") {
				run := len(trimmed) - len(strings.TrimLeft(trimmed, "`"))
				if run >= len(m[1]) {
					if trimmed != m[1] {
						t.Errorf("line %d closes the fence opened on line %d early: %q", j+1, i+1, lines[j])
					}
					i, closed = j, true
					break
				}
			}
		}
		if !closed {
			t.Errorf("fence on line %d is never closed", i+1)
		}
	}
	if fences != 4 {
		t.Errorf("found %d diffs, want 4", fences)
	}
}

// manyFindings returns n findings, each with a fix, in one file.
func manyFindings(t testing.TB, n int) Input {
	var src strings.Builder
	for i := range n {
		fmt.Fprintf(&src, "key_%04d: %d # <b>@owner</b>\n", i, i)
	}
	s := src.String()
	in := Input{Sources: map[string][]byte{"big.yaml": []byte(s)}, Summary: Summary{Files: 1}}
	for i := range n {
		r := rangeOf(t, "big.yaml", s, fmt.Sprintf("key_%04d: %d", i, i), 0)
		in.Findings = append(in.Findings, finding.Finding{
			Rule: fmt.Sprintf("GPU%03d", i%7), Slug: "some-rule", Severity: finding.Severity(1 + i%3),
			Message: fmt.Sprintf("value %d is wrong | <script>alert(%d)</script> @someone", i, i),
			Range:   r, DocURL: docs + "gpu",
			Fixes: []finding.Fix{{Message: "set it", Edits: []finding.Edit{replace(r, fmt.Sprintf("key_%04d: %d", i, i+1))}}},
		})
	}
	return in
}

func TestMarkdownBudget(t *testing.T) {
	const limit = 65536
	for _, n := range []int{1, 10, 2000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			in := manyFindings(t, n)
			body := MarkdownBody(in, MarkdownOptions{Header: "<!-- marker -->", MaxLen: limit, Repo: "o/r", SHA: "abc"})
			if len(body) > limit || utf8.RuneCountInString(body) > limit {
				t.Fatalf("body is %d bytes, limit %d", len(body), limit)
			}
			shown := strings.Count(body, "\n- **")
			if shown == 0 {
				t.Fatal("no finding shown")
			}
			note := fmt.Sprintf("_%d more not shown._", n-shown)
			if shown < n && !strings.Contains(body, note) {
				t.Errorf("%d of %d shown, body lacks %q", shown, n, note)
			}
			if shown == n && strings.Contains(body, "more not shown") {
				t.Errorf("all %d shown, yet the body says some are not", n)
			}
			if n == 2000 && shown > 1000 {
				t.Errorf("%d findings fit in %d bytes: the diffs are missing", shown, limit)
			}
			if strings.Contains(body, "<script>") || strings.Contains(body, "@someone") {
				t.Error("user text is not escaped")
			}
		})
	}
}

// TestMemoryChart holds the Mermaid chart's title for an estimate over
// capacity (no free slice) and the reduction of names to plain text, so
// a GPU or part name cannot end the chart's statement or string.
func TestMemoryChart(t *testing.T) {
	got := memoryChart(finding.Memory{
		GPU: "L4\"\n```x", Total: 30 << 30, Capacity: 22 << 30,
		Parts: []finding.Part{{Name: "weights\"", Bytes: 26 << 30}, {Name: "kv", Bytes: 0}, {Name: "overhead", Bytes: 4 << 30}},
	})
	want := "\n```mermaid\npie showData title Per-GPU memory: 30.0 GiB of 22.0 GiB on L4x, over by 8.0 GiB\n" +
		"    \"weights\" : 26.0\n    \"overhead\" : 4.0\n```\n"
	if got != want {
		t.Errorf("memoryChart:\n%s\nwant:\n%s", got, want)
	}
}
