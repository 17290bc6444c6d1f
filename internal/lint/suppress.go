package lint

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/source"
)

// suppressPattern matches `# gpulint:ignore RULE[,RULE] reason` and
// `# gpulint:file-ignore RULE reason` comments (YAML, and DeepSpeed's
// hjson-style JSON).
var suppressPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)(^|[ \t])#[ \t]*gpulint:(ignore|file-ignore)\b[ \t]*([^ \t\r\n]*)[ \t]*([^\r\n]*)`)
})

// suppression is one ignore comment.
type suppression struct {
	file   bool // file-ignore
	line   int  // the comment's line
	target int  // the line it applies to (line-level only)
	rules  []string
	reason string
	rng    finding.Range
	// lineStart and lineEnd delimit the comment's own line, for the fix
	// that removes an unused suppression.
	commentStart, commentEnd int
	ownLine                  bool
	used                     bool
}

// scanSuppressions finds the ignore comments of a file.
func scanSuppressions(f *source.File) []*suppression {
	data := f.Data
	if !bytes.Contains(data, []byte("gpulint:")) {
		return nil
	}
	var out []*suppression
	for _, m := range suppressPattern().FindAllSubmatchIndex(data, -1) {
		hash := bytes.IndexByte(data[m[0]:m[1]], '#') + m[0]
		s := &suppression{
			file:   string(data[m[4]:m[5]]) == "file-ignore",
			reason: strings.TrimSpace(string(data[m[8]:m[9]])),
		}
		for _, r := range strings.Split(string(data[m[6]:m[7]]), ",") {
			if r = strings.TrimSpace(r); r != "" {
				s.rules = append(s.rules, r)
			}
		}
		start := f.PosAt(hash)
		end := f.PosAt(m[1])
		s.line = start.Line
		s.rng = finding.Range{File: f.Path, Start: start, End: end}
		lineStart := hash - (start.Col - 1)
		s.ownLine = len(bytes.TrimSpace(data[lineStart:hash])) == 0
		s.commentStart, s.commentEnd = hash, m[1]
		if s.ownLine {
			// Applies to the next line that is not blank or a comment.
			s.commentStart = lineStart
			s.commentEnd = nextLine(data, m[1])
			s.target = nextContentLine(f, s.commentEnd)
		} else {
			// Trailing comment: drop it with the spaces before it.
			for s.commentStart > lineStart && (data[s.commentStart-1] == ' ' || data[s.commentStart-1] == '\t') {
				s.commentStart--
			}
			s.target = s.line
		}
		out = append(out, s)
	}
	return out
}

func nextLine(data []byte, off int) int {
	if i := bytes.IndexByte(data[off:], '\n'); i >= 0 {
		return off + i + 1
	}
	return len(data)
}

// nextContentLine is the line number of the first line at or after off
// that holds something other than blanks and a comment.
func nextContentLine(f *source.File, off int) int {
	data := f.Data
	for off < len(data) {
		end := nextLine(data, off)
		t := bytes.TrimSpace(data[off:end])
		if len(t) > 0 && t[0] != '#' {
			return f.PosAt(off).Line
		}
		off = end
	}
	return -1
}

func (s *suppression) covers(f finding.Finding) bool {
	matched := false
	for _, r := range s.rules {
		if strings.EqualFold(r, f.Rule) || strings.EqualFold(r, f.Slug) {
			matched = true
		}
	}
	if !matched {
		return false
	}
	if s.file {
		return true
	}
	return f.Range.Start.Line == s.target || f.Range.Start.Line == s.line
}

// applySuppressions drops the findings a comment silences and reports the
// comments that are invalid or silence nothing.
func (l *Linter) applySuppressions(f *source.File, fs []finding.Finding) []finding.Finding {
	sups := scanSuppressions(f)
	if len(sups) == 0 {
		return fs
	}
	kept := fs[:0]
	for _, fd := range fs {
		silenced := false
		for _, s := range sups {
			if s.reason != "" && s.covers(fd) {
				s.used, silenced = true, true
			}
		}
		if !silenced || fd.Slug == "parse-error" {
			kept = append(kept, fd)
		}
	}
	invalid, _ := l.deps.Catalog.Lookup("suppression-invalid")
	unused, _ := l.deps.Catalog.Lookup("suppression-unused")
	for _, s := range sups {
		var unknown []string
		for _, r := range s.rules {
			if _, ok := l.deps.Catalog.Lookup(r); !ok {
				unknown = append(unknown, r)
			}
		}
		switch {
		case len(s.rules) == 0:
			kept = append(kept, l.stamp(invalid, finding.Finding{Message: "gpulint:ignore names no rule; write the rule id or slug and a reason", Range: s.rng}, ""))
		case len(unknown) > 0:
			kept = append(kept, l.stamp(invalid, finding.Finding{Message: fmt.Sprintf("gpulint:ignore names unknown rule %s; `gpulint rules` lists them", strings.Join(unknown, ", ")), Range: s.rng}, ""))
		case s.reason == "":
			kept = append(kept, l.stamp(invalid, finding.Finding{Message: fmt.Sprintf("suppression of %s has no reason; it silences nothing until one is given", strings.Join(s.rules, ", ")), Range: s.rng}, ""))
		case !s.used:
			fd := l.stamp(unused, finding.Finding{Message: fmt.Sprintf("suppression of %s silences nothing here", strings.Join(s.rules, ", ")), Range: s.rng}, "")
			fd.Fixes = []finding.Fix{{Message: "remove the suppression comment", Edits: []finding.Edit{{File: f.Path, Start: s.commentStart, End: s.commentEnd}}}}
			kept = append(kept, fd)
		}
	}
	return finding.Sort(kept)
}
