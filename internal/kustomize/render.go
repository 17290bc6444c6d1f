package kustomize

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/gpulint/gpulint/internal/finding"
)

// Line is where one line of a rendered resource was written.
type Line struct {
	At  finding.Range
	Via []Via
}

// Render writes a composed resource as block YAML, one scalar per line,
// every key and string double-quoted, with the place each line's value
// was written: lines[i] is line i+1's. A reader of the text maps any
// position in it back to the files the value came from.
func Render(n *Node) ([]byte, []Line) {
	r := &renderer{}
	r.mapBody(n, 0, "")
	return r.buf.Bytes(), r.lines
}

type renderer struct {
	buf   bytes.Buffer
	lines []Line
}

func (r *renderer) line(text string, at finding.Range, via []Via) {
	r.buf.WriteString(text)
	r.buf.WriteByte('\n')
	r.lines = append(r.lines, Line{At: at, Via: via})
}

// mapBody writes a map's entries at indent; first, when set, is written
// before the first key (a sequence item's "- ").
func (r *renderer) mapBody(n *Node, indent int, first string) {
	pad := strings.Repeat(" ", indent)
	for i, e := range n.entries() {
		lead := pad
		if i == 0 && first != "" {
			lead = first
		}
		r.value(lead+quote(e.Key)+":", e.KeyAt, e.Value, indent)
	}
}

// value writes head followed by v: inline for a scalar or an empty
// collection, else on the lines below.
func (r *renderer) value(head string, keyAt finding.Range, v *Node, indent int) {
	switch {
	case v.Kind == Scalar:
		r.line(head+" "+scalar(v), v.At, v.Via)
	case v.Kind == Map && len(v.Entries) == 0:
		r.line(head+" {}", v.At, nil)
	case v.Kind == Seq && len(v.Items) == 0:
		r.line(head+" []", v.At, nil)
	case v.Kind == Map:
		r.line(head, keyAt, nil)
		r.mapBody(v, indent+2, "")
	default:
		r.line(head, keyAt, nil)
		r.seq(v, indent+2)
	}
}

func (r *renderer) seq(n *Node, indent int) {
	pad := strings.Repeat(" ", indent)
	for _, it := range n.Items {
		switch {
		case it.Kind == Map && len(it.Entries) > 0:
			r.mapBody(it, indent+2, pad+"- ")
		default:
			r.value(pad+"-", it.At, it, indent)
		}
	}
}

// scalar renders a scalar so a YAML reader resolves it to the same value.
func scalar(n *Node) string {
	switch v := n.Value.(type) {
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return quote(n.Text)
}

// quote writes a JSON string, which YAML reads as the same string.
func quote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}
