// Package finding holds the plain data that checks produce and drivers act
// on: findings, their source ranges, and the fixes that go with them. It
// imports nothing from gpulint so every layer can share it.
package finding

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Severity orders how bad a finding is. The zero value is SeverityNone,
// which no finding carries; it is the "never" threshold for --fail-on.
type Severity int

// Severities from least to most severe.
const (
	SeverityNone Severity = iota
	SeverityInfo
	SeverityWarning
	SeverityError
)

// String returns the lower-case name used in output and configuration.
func (s Severity) String() string {
	switch s {
	case SeverityInfo:
		return "info"
	case SeverityWarning:
		return "warning"
	case SeverityError:
		return "error"
	default:
		return "none"
	}
}

// ParseSeverity reads a severity name. "never" and "none" give SeverityNone.
func ParseSeverity(s string) (Severity, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "info":
		return SeverityInfo, nil
	case "warning", "warn":
		return SeverityWarning, nil
	case "error":
		return SeverityError, nil
	case "never", "none":
		return SeverityNone, nil
	}
	return SeverityNone, fmt.Errorf("unknown severity %q (want error, warning, info or never)", s)
}

// Pos is a position in a file. Line and Col are 1-based; Col counts bytes
// from the start of the line. Offset is the 0-based byte offset.
type Pos struct {
	Offset int `json:"offset"`
	Line   int `json:"line"`
	Col    int `json:"column"`
}

// Range is a half-open byte range [Start, End) in one file.
type Range struct {
	File  string `json:"file"`
	Start Pos    `json:"start"`
	End   Pos    `json:"end"`
}

// Edit replaces the bytes [Start, End) of File with NewText. Start == End
// inserts.
type Edit struct {
	File    string `json:"file"`
	Start   int    `json:"start"`
	End     int    `json:"end"`
	NewText string `json:"new_text"`
}

// Fix is one way to resolve a finding: a short imperative message and the
// edits that carry it out. Alternative fixes are separate Fix values.
type Fix struct {
	Message string `json:"message"`
	Edits   []Edit `json:"edits"`
	// Tune marks fixes that come from the tuner's sizing; `fix` applies
	// them only with --tune.
	Tune bool `json:"tune,omitempty"`
}

// Related is a secondary location that a finding depends on.
type Related struct {
	Range   Range  `json:"range"`
	Message string `json:"message"`
}

// Finding is one result of a check.
type Finding struct {
	Rule     string    `json:"rule"` // rule id, e.g. GPU001
	Slug     string    `json:"slug"` // rule slug, e.g. fp32-where-bf16
	Severity Severity  `json:"-"`
	Message  string    `json:"message"`
	Range    Range     `json:"range"`
	Path     []any     `json:"path,omitempty"` // key path in the document (strings and ints)
	Related  []Related `json:"related,omitempty"`
	Fixes    []Fix     `json:"fixes,omitempty"`
	// DocURL links to the rule's documentation.
	DocURL string `json:"doc_url,omitempty"`
	// Evidence lists the inputs a memory, fit, batch or precision verdict
	// rests on, each with where it came from.
	Evidence []Input `json:"evidence,omitempty"`
	// Summary is the message's first clause when the whole message is too
	// long for one line of text output (see Split); Details holds the rest
	// (the arithmetic and evidence), one clause each. Both are empty for a
	// message that fits.
	Summary string   `json:"summary,omitempty"`
	Details []string `json:"details,omitempty"`
	// Memory is the per-GPU memory estimate a memory verdict rests on, for
	// reports that chart it.
	Memory *Memory `json:"memory,omitempty"`
}

// Memory is a per-GPU memory estimate: its parts in a fixed order, their
// total, and the capacity of the GPU (or MIG slice) it is set against.
type Memory struct {
	GPU      string `json:"gpu"`
	Parts    []Part `json:"parts"`
	Total    int64  `json:"total"`
	Capacity int64  `json:"capacity"`
}

// Part is one named share of a memory estimate, in bytes.
type Part struct {
	Name  string `json:"name"`
	Bytes int64  `json:"bytes"`
}

// Source says where an input of a verdict came from.
type Source string

// Sources of an input.
const (
	// SourceFile: the file under check or a related one (Range says where).
	SourceFile Source = "file"
	// SourceFlag: a command-line flag (--gpu, --gpus, --model).
	SourceFlag Source = "flag"
	// SourceProject: the project file's targets.
	SourceProject Source = "project"
	// SourceCatalog: gpulint's GPU or model catalog.
	SourceCatalog Source = "catalog"
	// SourceAssumed: a default gpulint assumed because nothing stated it.
	SourceAssumed Source = "assumed"
)

// Input is one input a verdict used: its name (gpu, gpus, model, seq_len,
// micro_batch, method, model_dtype), its value as text, and its source.
// Range locates it when it came from a file; Settle says how to state an
// assumed one.
type Input struct {
	Name   string `json:"name"`
	Value  string `json:"value"`
	Source Source `json:"source"`
	Range  *Range `json:"range,omitempty"`
	Settle string `json:"settle,omitempty"`
}

// Assumed returns the inputs that were assumed, in order.
func Assumed(in []Input) []Input {
	var out []Input
	for _, x := range in {
		if x.Source == SourceAssumed {
			out = append(out, x)
		}
	}
	return out
}

// PathString renders a key path as dotted text with [i] for indices.
func PathString(path []any) string {
	var b strings.Builder
	for _, p := range path {
		switch v := p.(type) {
		case int:
			fmt.Fprintf(&b, "[%d]", v)
		default:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			fmt.Fprint(&b, v)
		}
	}
	return b.String()
}

// Compare orders findings by file, position, rule and message, so output
// is stable whatever order the checks ran in.
func Compare(a, b Finding) int {
	return cmp.Or(
		cmp.Compare(a.Range.File, b.Range.File),
		cmp.Compare(a.Range.Start.Offset, b.Range.Start.Offset),
		cmp.Compare(a.Range.End.Offset, b.Range.End.Offset),
		cmp.Compare(a.Rule, b.Rule),
		cmp.Compare(a.Message, b.Message),
	)
}

// Sort sorts findings in place and drops exact duplicates (same rule,
// range and message).
func Sort(fs []Finding) []Finding {
	slices.SortStableFunc(fs, Compare)
	return slices.CompactFunc(fs, func(a, b Finding) bool {
		return a.Rule == b.Rule && a.Range == b.Range && a.Message == b.Message
	})
}

// Worst returns the highest severity among fs, or SeverityNone.
func Worst(fs []Finding) Severity {
	w := SeverityNone
	for _, f := range fs {
		w = max(w, f.Severity)
	}
	return w
}
