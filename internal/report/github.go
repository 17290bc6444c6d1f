package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/gpulint/gpulint/internal/finding"
)

// GitHub renders one GitHub Actions workflow command per finding,
//
//	::error file=F,line=L,col=C,endLine=L2,endColumn=C2,title=SLUG::MESSAGE
//
// with warning and notice for the other severities, which the runner turns
// into annotations on the pull request. The message carries the fixes on
// further lines. Properties and message are escaped as the Actions toolkit
// does (packages/core/src/command.ts: escapeData, escapeProperty), so a
// value containing a newline or "::" cannot start a command of its own.
// Columns are sent only for single-line ranges, which is all the toolkit
// accepts (packages/core/src/core.ts, AnnotationProperties).
func GitHub(w io.Writer, in Input, _ Options) error {
	var b strings.Builder
	for _, f := range in.Findings {
		b.WriteString("::")
		b.WriteString(workflowCommand(f.Severity))
		b.WriteByte(' ')
		b.WriteString(strings.Join(annotationProps(f), ","))
		b.WriteString("::")
		msg := f.Message
		for _, fx := range f.Fixes {
			tag := "fix"
			if fx.Tune {
				tag = "tune"
			}
			msg += "\n" + tag + ": " + fx.Message
		}
		b.WriteString(escapeData(msg))
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func workflowCommand(s finding.Severity) string {
	switch s {
	case finding.SeverityError:
		return "error"
	case finding.SeverityWarning:
		return "warning"
	default:
		return "notice"
	}
}

// annotationProps lists the escaped key=value properties of f.
func annotationProps(f finding.Finding) []string {
	r := f.Range
	props := []string{"file=" + escapeProperty(strings.ReplaceAll(r.File, `\`, "/"))}
	if r.Start.Line > 0 {
		endLine := r.Start.Line
		if r.End.Line > endLine {
			endLine = r.End.Line
			if r.End.Col == 1 { // the range ends with a line break
				endLine--
			}
		}
		props = append(props, fmt.Sprintf("line=%d", r.Start.Line))
		if endLine == r.Start.Line && r.Start.Col > 0 {
			props = append(props, fmt.Sprintf("col=%d", r.Start.Col))
		}
		props = append(props, fmt.Sprintf("endLine=%d", endLine))
		if endLine == r.Start.Line && r.Start.Col > 0 && r.End.Line == r.Start.Line {
			// Annotation columns are inclusive; Range.End is exclusive.
			props = append(props, fmt.Sprintf("endColumn=%d", max(r.Start.Col, r.End.Col-1)))
		}
	}
	title := f.Slug
	if title == "" {
		title = f.Rule
	}
	return append(props, "title="+escapeProperty(title))
}

// escapeData escapes a workflow command's message.
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// escapeProperty escapes a workflow command's property value.
func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}
