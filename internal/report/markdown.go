package report

import (
	"cmp"
	"fmt"
	"io"
	"net/url"
	"path"
	"slices"
	"strings"
	"unicode"

	"github.com/gpulint/gpulint/internal/edit"
	"github.com/gpulint/gpulint/internal/finding"
)

// MarkdownOptions shape MarkdownBody. The zero value renders a plain
// report with no links to the repository and no length cap.
type MarkdownOptions struct {
	// Header is written first, verbatim (the PR comment's hidden marker).
	Header string
	// Repo ("owner/name") and SHA link each file:line to the file at that
	// commit when both are set.
	Repo string
	SHA  string
	// ServerURL is the GitHub web root; empty means https://github.com.
	ServerURL string
	// MaxLen caps the body's length in bytes (0: no cap). Findings that do
	// not fit are dropped and counted in a closing "N more not shown" line.
	// A cap below a few hundred bytes cannot be met.
	MaxLen int
}

// diffContext is the number of unchanged lines shown around each change.
const diffContext = 2

// Markdown renders the report as Markdown: the body of the PR comment,
// for `--format markdown` and the job's step summary.
func Markdown(w io.Writer, in Input, _ Options) error {
	_, err := io.WriteString(w, MarkdownBody(in, MarkdownOptions{}))
	return err
}

// MarkdownBody returns the Markdown report: a summary table by rule and
// severity, then each finding as file:line with its rule, message, related
// locations and, per fix, a unified diff in a collapsed <details> section.
// All text that comes from users' files (paths, messages, values) is
// escaped so it cannot forge Markdown, HTML or @-mentions.
func MarkdownBody(in Input, o MarkdownOptions) string {
	var b strings.Builder
	if o.Header != "" {
		b.WriteString(o.Header)
		if !strings.HasSuffix(o.Header, "\n") {
			b.WriteByte('\n')
		}
	}
	b.WriteString("## gpulint\n\n")
	files := in.Summary.Files
	if files == 0 {
		files = len(in.Files)
	}
	if len(in.Findings) == 0 {
		fmt.Fprintf(&b, "No findings — all clear (%d %s checked).\n", files, plural(files, "file", "files"))
		return b.String()
	}
	var errs, warns, infos int
	withFindings := map[string]bool{}
	for _, f := range in.Findings {
		withFindings[f.Range.File] = true
		switch f.Severity {
		case finding.SeverityError:
			errs++
		case finding.SeverityWarning:
			warns++
		default:
			infos++
		}
	}
	fmt.Fprintf(&b, "%s, %s and %s in %d of %d %s checked.\n\n",
		count(errs, "error"), count(warns, "warning"), count(infos, "info"),
		len(withFindings), max(files, len(withFindings)), plural(files, "file", "files"))

	budget := func(extra int) bool { return o.MaxLen <= 0 || b.Len()+extra <= o.MaxLen }
	// The closing lines are reserved up front so that they always fit.
	closing := len(omittedNote(len(in.Findings))) + 16

	rows := ruleRows(in.Findings)
	b.WriteString("| Rule | Severity | Findings |\n| --- | --- | ---: |\n")
	for i, r := range rows {
		line := fmt.Sprintf("| %s | %s | %d |\n", ruleRef(r.rule, r.slug, r.doc, true), r.sev, r.n)
		// The table may use at most half of the budget.
		if o.MaxLen > 0 && b.Len()+len(line) > o.MaxLen/2 {
			fmt.Fprintf(&b, "| %d more rules not shown | | |\n", len(rows)-i)
			break
		}
		b.WriteString(line)
	}
	b.WriteString("\n### Findings\n\n")

	shown := 0
	for _, f := range in.Findings {
		blk := findingBlock(in, f, o)
		if !budget(len(blk) + closing) {
			break
		}
		b.WriteString(blk)
		shown++
	}
	if n := len(in.Findings) - shown; n > 0 {
		b.WriteString(omittedNote(n))
	}
	return b.String()
}

func omittedNote(n int) string {
	return fmt.Sprintf("\n_%d more not shown._\n", n)
}

type ruleRow struct {
	rule, slug, doc string
	sev             finding.Severity
	n               int
}

// ruleRows counts findings by rule and severity, worst first.
func ruleRows(fs []finding.Finding) []ruleRow {
	idx := map[[2]string]int{}
	var rows []ruleRow
	for _, f := range fs {
		k := [2]string{f.Rule, f.Severity.String()}
		i, ok := idx[k]
		if !ok {
			i = len(rows)
			idx[k] = i
			rows = append(rows, ruleRow{rule: f.Rule, slug: f.Slug, doc: f.DocURL, sev: f.Severity})
		}
		rows[i].n++
	}
	slices.SortFunc(rows, func(a, b ruleRow) int {
		return cmp.Or(cmp.Compare(b.sev, a.sev), cmp.Compare(a.rule, b.rule))
	})
	return rows
}

// ruleRef renders "[ID](doc) slug", without the link when doc is not a
// web URL; cell escapes it for a table cell.
func ruleRef(rule, slug, doc string, cell bool) string {
	id := escapeInline(rule, cell)
	if u := safeURL(doc); u != "" {
		id = "[" + id + "](" + u + ")"
	}
	if slug == "" {
		return id
	}
	return id + " " + escapeInline(slug, cell)
}

// findingBlock renders one finding: a list item, its related locations
// and a collapsed diff per fix.
func findingBlock(in Input, f finding.Finding, o MarkdownOptions) string {
	var b strings.Builder
	fmt.Fprintf(&b, "- **%s** %s %s: %s\n", f.Severity, location(f.Range, o), ruleRef(f.Rule, f.Slug, f.DocURL, false), EscapeMarkdown(f.Message))
	for _, r := range f.Related {
		msg := r.Message
		if msg == "" {
			msg = "related"
		}
		fmt.Fprintf(&b, "  - %s: %s\n", location(r.Range, o), EscapeMarkdown(msg))
	}
	if len(f.Evidence) > 0 {
		parts := make([]string, 0, len(f.Evidence))
		for _, e := range f.Evidence {
			from := string(e.Source)
			if e.Range != nil {
				from = location(*e.Range, o)
			}
			parts = append(parts, fmt.Sprintf("%s %s (%s)", EscapeMarkdown(e.Name), EscapeMarkdown(e.Value), from))
		}
		fmt.Fprintf(&b, "  - evidence: %s\n", strings.Join(parts, "; "))
	}
	if f.Memory != nil {
		b.WriteString(memoryChart(*f.Memory))
	}
	for _, fx := range f.Fixes {
		label := "Fix"
		if fx.Tune {
			label = "Tuning"
		}
		fmt.Fprintf(&b, "\n<details><summary>%s: %s</summary>\n\n", label, EscapeHTML(fx.Message))
		if d := fixDiff(in.Sources, fx); d != "" {
			b.WriteString(CodeFence(d, "diff"))
		} else {
			b.WriteString("The diff is not available.\n")
		}
		b.WriteString("\n</details>\n")
	}
	if len(f.Fixes) > 0 {
		b.WriteByte('\n')
	}
	return b.String()
}

// fixDiff applies a fix's edits to the sources and returns the unified
// diff of every file it touches, or "" when a source is missing or the
// edits do not apply.
func fixDiff(sources map[string][]byte, fx finding.Fix) string {
	byFile := map[string][]finding.Edit{}
	var files []string
	for _, e := range fx.Edits {
		if _, ok := byFile[e.File]; !ok {
			files = append(files, e.File)
		}
		byFile[e.File] = append(byFile[e.File], e)
	}
	slices.Sort(files)
	var out strings.Builder
	for _, file := range files {
		old, ok := sources[file]
		if !ok {
			return ""
		}
		changed, err := edit.Apply(old, byFile[file])
		if err != nil {
			return ""
		}
		p := path.Clean(strings.ReplaceAll(file, `\`, "/"))
		out.WriteString(edit.Unified("a/"+p, "b/"+p, old, changed, diffContext))
	}
	return out.String()
}

// location renders "file:line", linked to the file at the head commit
// when the options name one.
func location(r finding.Range, o MarkdownOptions) string {
	text := r.File
	if r.Start.Line > 0 {
		text = fmt.Sprintf("%s:%d", r.File, r.Start.Line)
	}
	text = EscapeMarkdown(text)
	if o.Repo == "" || o.SHA == "" {
		return text
	}
	server := strings.TrimSuffix(cmp.Or(o.ServerURL, "https://github.com"), "/")
	link := server + "/" + escapeSegments(o.Repo) + "/blob/" + url.PathEscape(o.SHA) + "/" + escapeSegments(strings.ReplaceAll(r.File, `\`, "/"))
	if r.Start.Line > 0 {
		end := r.Start.Line
		if r.End.Line > end {
			end = r.End.Line
			if r.End.Col == 1 {
				end--
			}
		}
		link += fmt.Sprintf("#L%d", r.Start.Line)
		if end > r.Start.Line {
			link += fmt.Sprintf("-L%d", end)
		}
	}
	if safeURL(link) == "" {
		return text
	}
	return "[" + text + "](" + link + ")"
}

// escapeSegments percent-encodes each slash-separated segment of p.
func escapeSegments(p string) string {
	segs := strings.Split(strings.TrimPrefix(p, "./"), "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// safeURL returns s if it is an absolute http(s) URL that cannot break
// out of a Markdown link destination, with parentheses encoded; else "".
func safeURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
		return ""
	}
	out := u.String()
	if strings.ContainsAny(out, " \t\r\n<>\"`") {
		return ""
	}
	return strings.NewReplacer("(", "%28", ")", "%29").Replace(out)
}

// EscapeMarkdown makes user-controlled text inert inside a line of
// GitHub-flavoured Markdown (a list item's text, never the start of a
// line), escaping only what Markdown would read there: line breaks become
// spaces and control characters go; "<", ">" and an "&" that could start
// an entity become entities; code, emphasis, strikethrough, link and math
// punctuation is backslash-escaped ("_" only where it can open or close
// emphasis, not inside a word such as max_num_seqs); "#" before a digit
// is escaped so it is no issue reference; @-mentions are broken with a
// zero-width space. Hyphens, plus signs, "!", "#" elsewhere and
// parentheses stay as written: mid-line, Markdown reads them as text.
func EscapeMarkdown(s string) string {
	return escapeInline(s, false)
}

// EscapeTableCell is EscapeMarkdown for a table cell, where "|" ends the
// cell and is escaped too.
func EscapeTableCell(s string) string {
	return escapeInline(s, true)
}

func escapeInline(s string, cell bool) string {
	rs := []rune(s)
	at := func(i int) rune {
		if i < 0 || i >= len(rs) {
			return ' '
		}
		return rs[i]
	}
	var b strings.Builder
	for i, r := range rs {
		switch {
		case r == '\r' || r == '\n' || r == '\t':
			b.WriteByte(' ')
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
		case r == '&':
			if n := at(i + 1); n == '#' || unicode.IsLetter(n) || unicode.IsDigit(n) {
				b.WriteString("&amp;")
			} else {
				b.WriteByte('&')
			}
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '@':
			b.WriteString("@\u200b")
		case r == '_':
			if wordRune(at(i-1)) && wordRune(at(i+1)) {
				b.WriteByte('_')
			} else {
				b.WriteString("\\_")
			}
		case r == '#':
			if unicode.IsDigit(at(i + 1)) {
				b.WriteString("\\#")
			} else {
				b.WriteByte('#')
			}
		case r == '|' && cell, strings.ContainsRune("\\`*[]~$", r):
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// wordRune reports whether r is a letter or digit, around which "_" does
// not open or close emphasis.
func wordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// EscapeHTML makes user-controlled text inert inside raw HTML such as a
// <summary> element, where Markdown is not interpreted.
func EscapeHTML(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\r' || r == '\n' || r == '\t':
			b.WriteByte(' ')
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '"':
			b.WriteString("&quot;")
		case r == '\'':
			b.WriteString("&#39;")
		case r == '@':
			b.WriteString("@\u200b")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// CodeFence wraps content in a fenced code block whose backtick fence is
// longer than any backtick run inside, so the content cannot close it.
// info is the language tag ("diff", "suggestion").
func CodeFence(content, info string) string {
	run, longest := 0, 0
	for i := 0; i < len(content); i++ {
		if content[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", max(3, longest+1))
	if content != "" && !strings.HasSuffix(content, "\n") {
		content += "\n"
	}
	return fence + info + "\n" + content + fence + "\n"
}

// memoryChart renders a per-GPU memory estimate as a Mermaid pie chart,
// which GitHub draws in comments and job summaries: one slice per part in
// GiB and, when the estimate fits, the capacity left free. The title says
// the total against the capacity. Names are reduced to characters Mermaid
// reads as plain text.
func memoryChart(m finding.Memory) string {
	var c strings.Builder
	title := fmt.Sprintf("Per-GPU memory: %s of %s", gibText(m.Total), gibText(m.Capacity))
	if g := mermaidText(m.GPU); g != "" {
		title += " on " + g
	}
	if m.Capacity > 0 && m.Total > m.Capacity {
		title += ", over by " + gibText(m.Total-m.Capacity)
	}
	fmt.Fprintf(&c, "pie showData title %s\n", title)
	for _, p := range m.Parts {
		if p.Bytes <= 0 {
			continue
		}
		fmt.Fprintf(&c, "    %q : %.1f\n", mermaidText(p.Name), float64(p.Bytes)/(1<<30))
	}
	if free := m.Capacity - m.Total; m.Capacity > 0 && free > 0 {
		fmt.Fprintf(&c, "    %q : %.1f\n", "free", float64(free)/(1<<30))
	}
	return "\n" + CodeFence(c.String(), "mermaid")
}

func gibText(b int64) string { return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30)) }

// mermaidText keeps letters, digits, spaces and a few marks, so a name
// cannot end a Mermaid statement or string.
func mermaidText(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune(" .-_×/+", r) {
			b.WriteRune(r)
		}
	}
	return strings.TrimSpace(b.String())
}
