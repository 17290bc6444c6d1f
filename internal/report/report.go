// Package report renders lint results. Each format is one renderer; all of
// them read the same data and none decides anything.
package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/gpulint/gpulint/internal/finding"
)

// File is one linted file as reports list it.
type File struct {
	Path string `json:"path"`
	Kind string `json:"kind"`
	// Sizing is the memory verdict gpulint reached for the file, when it
	// knew the GPU, the model and the workload well enough to estimate.
	Sizing *Sizing `json:"sizing,omitempty"`
}

// Sizing is a file's memory verdict: the estimated per-GPU need against
// the GPU's capacity (a vLLM server's budget under gpu_memory_utilization).
type Sizing struct {
	GPU           string `json:"gpu"`
	Model         string `json:"model"`
	Fits          bool   `json:"fits"`
	PerGPUBytes   int64  `json:"per_gpu_bytes"`
	CapacityBytes int64  `json:"capacity_bytes"`
	// AssumedModel is the catalog model the estimate assumed from a name
	// alone (the model's own, a label's, a weights path's); empty when the
	// model was known.
	AssumedModel string `json:"assumed_model,omitempty"`
	// AssumedWeights is the weight format assumed from the same name
	// ("fp8 (8-bit)"); empty when the name names none.
	AssumedWeights string `json:"assumed_weights,omitempty"`
	// Open names the one input that decides the memory and that nothing
	// states ("sharding", "method"), when the sizing covers its plausible
	// values: Alternatives gives each one's need, Fits holds only when
	// every one fits, and PerGPUBytes is the one the rules judged (the
	// assumed full fine-tune for the method, the least need for the
	// sharding). Note says so in a line (the text report prints it).
	Open         string        `json:"open,omitempty"`
	Alternatives []Alternative `json:"alternatives,omitempty"`
	Note         string        `json:"note,omitempty"`
	// Related are the other files the verdict is read from when it is
	// another file's (a manifest's verdict is the recipe its container
	// launches): each with its role, recipe, launch or configmap.
	Related []SizingSource `json:"related,omitempty"`
	// NotStartable says why the server cannot start as written (its
	// parallel sizes need more GPUs than it gets, its vLLM release no
	// longer serves the model); Fits is then false and PerGPUBytes is the
	// need as written had it started.
	NotStartable string `json:"not_startable,omitempty"`
}

// Alternative is a sizing under one plausible value of its open input.
type Alternative struct {
	Value       string `json:"value"`
	Fits        bool   `json:"fits"`
	PerGPUBytes int64  `json:"per_gpu_bytes"`
}

// SizingSource is one file a sizing is read from.
type SizingSource struct {
	Role string `json:"role"`
	File string `json:"file"`
	Line int    `json:"line"`
}

// Summary counts files and findings.
type Summary struct {
	Files    int `json:"files"`
	Errors   int `json:"errors"`
	Warnings int `json:"warnings"`
	Infos    int `json:"infos"`
	// Skipped counts the files read but not recognised as GPU configs;
	// Baselined the findings left out because the baseline records them.
	Skipped   int `json:"skipped,omitempty"`
	Baselined int `json:"baselined,omitempty"`
}

// Skip is a file the run did not check, with the reason.
type Skip struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Input is what every renderer reads.
type Input struct {
	Files    []File
	Findings []finding.Finding
	Summary  Summary
	// Sources holds file contents by path, for renderers that show
	// context or diffs.
	Sources map[string][]byte
	// ToolVersion is gpulint's version, for formats that record it.
	ToolVersion string
	// Rules holds the catalog's text for each rule id, for formats that
	// describe the rules they report (SARIF).
	Rules map[string]RuleDoc
	// Category names the kind of run for SARIF automationDetails
	// ("lint" when empty).
	Category string
	// Skipped are the files not checked, with the reason.
	Skipped []Skip
}

// RuleDoc is what the catalog says about a rule.
type RuleDoc struct {
	Title       string
	Rationale   string
	Remediation string
}

// Options tune a renderer's output.
type Options struct {
	Color bool
	// ShowFixes prints each fix under its finding.
	ShowFixes bool
	// Verbose prints, under a finding whose message was too long for one
	// line, the details its summary leaves out.
	Verbose bool
}

// Renderer writes results in one format.
type Renderer func(w io.Writer, in Input, opts Options) error

// Renderers maps --format names to renderers.
func Renderers() map[string]Renderer {
	return map[string]Renderer{
		"text":     Text,
		"json":     JSON,
		"sarif":    SARIF,
		"github":   GitHub,
		"markdown": Markdown,
	}
}

// Formats lists the format names, sorted.
func Formats() []string {
	var out []string
	for k := range Renderers() {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

const (
	ansiReset  = "\x1b[0m"
	ansiBold   = "\x1b[1m"
	ansiRed    = "\x1b[31m"
	ansiYellow = "\x1b[33m"
	ansiBlue   = "\x1b[34m"
	ansiDim    = "\x1b[2m"
)

func sevColor(s finding.Severity) string {
	switch s {
	case finding.SeverityError:
		return ansiRed
	case finding.SeverityWarning:
		return ansiYellow
	default:
		return ansiBlue
	}
}

// Text renders `path:line:col: severity slug: message` lines, each fix
// under its finding, and a summary line. A message too long for one line
// prints as its summary; Verbose adds its details on indented lines.
func Text(w io.Writer, in Input, opts Options) error {
	var b strings.Builder
	paint := func(code, s string) string {
		if !opts.Color {
			return s
		}
		return code + s + ansiReset
	}
	for _, f := range in.Findings {
		fmt.Fprintf(&b, "%s:%d:%d: %s %s: %s\n",
			f.Range.File, f.Range.Start.Line, f.Range.Start.Col,
			paint(sevColor(f.Severity), f.Severity.String()), paint(ansiBold, f.Slug), sanitize(cmp.Or(f.Summary, f.Message)))
		if opts.Verbose && f.Summary != "" {
			for _, d := range f.Details {
				fmt.Fprintf(&b, "      %s\n", sanitize(d))
			}
		}
		for _, rel := range f.Related {
			msg := rel.Message
			if msg == "" {
				msg = "related"
			}
			fmt.Fprintf(&b, "    %s:%d:%d: %s\n", rel.Range.File, rel.Range.Start.Line, rel.Range.Start.Col, sanitize(msg))
		}
		for _, r := range elsewhere(f) {
			fmt.Fprintf(&b, "    %s:%d:%d: %s %s\n", r.Range.File, r.Range.Start.Line, r.Range.Start.Col, sanitize(r.Name), sanitize(r.Value))
		}
		if opts.ShowFixes {
			for _, fx := range f.Fixes {
				tag := "fix"
				if fx.Tune {
					tag = "tune"
				}
				fmt.Fprintf(&b, "    %s: %s\n", paint(ansiDim, tag), sanitize(fx.Message))
			}
		}
	}
	for _, f := range in.Files {
		if f.Sizing != nil && f.Sizing.NotStartable != "" {
			fmt.Fprintf(&b, "%s: sizing: does not start as written: %s; the memory figure is its need had it started\n", f.Path, sanitize(f.Sizing.NotStartable))
		}
		if f.Sizing != nil && f.Sizing.Note != "" {
			fmt.Fprintf(&b, "%s: sizing: %s\n", f.Path, sanitize(f.Sizing.Note))
		}
	}
	s := in.Summary
	fmt.Fprintf(&b, "%d %s checked: %s, %s, %s", s.Files, plural(s.Files, "file", "files"),
		count(s.Errors, "error"), count(s.Warnings, "warning"), count(s.Infos, "info"))
	if s.Baselined > 0 {
		fmt.Fprintf(&b, "; %d in the baseline not shown", s.Baselined)
	}
	if s.Skipped > 0 {
		fmt.Fprintf(&b, "; %d %s skipped as not GPU configs", s.Skipped, plural(s.Skipped, "file", "files"))
	}
	if s.Skipped >= s.Files {
		b.WriteString("; no GPU config recognised (gpulint reads DeepSpeed, Accelerate, vLLM, Kubernetes and MIG configs)")
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// sanitize keeps user-controlled text on one line and free of terminal
// escape sequences.
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\r' || r == '\t':
			return ' '
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			return -1
		}
		return r
	}, s)
}

// jsonFinding is the stable JSON shape of a finding (version 1).
type jsonFinding struct {
	Rule      string        `json:"rule"`
	Slug      string        `json:"slug"`
	Severity  string        `json:"severity"`
	Message   string        `json:"message"`
	File      string        `json:"file"`
	Line      int           `json:"line"`
	Column    int           `json:"column"`
	EndLine   int           `json:"end_line"`
	EndColumn int           `json:"end_column"`
	Path      string        `json:"path"`
	DocURL    string        `json:"doc_url,omitempty"`
	Related   []jsonRelated `json:"related,omitempty"`
	Fixes     []jsonFix     `json:"fixes,omitempty"`
	// Evidence lists the inputs a memory, fit, batch or precision verdict
	// rests on (additive to version 1).
	Evidence []jsonInput `json:"evidence,omitempty"`
	// Summary and Details split a message too long for one line (additive
	// to version 1); Memory is the per-GPU estimate a memory verdict rests
	// on, in bytes.
	Summary string          `json:"summary,omitempty"`
	Details []string        `json:"details,omitempty"`
	Memory  *finding.Memory `json:"memory,omitempty"`
}

// jsonInput is one input of a verdict: name, value, source (file, flag,
// project, catalog or assumed), where in a file it was read, and for an
// assumed one how to state it.
type jsonInput struct {
	Name   string `json:"name"`
	Value  string `json:"value"`
	Source string `json:"source"`
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
	Column int    `json:"column,omitempty"`
	Settle string `json:"settle,omitempty"`
}

type jsonRelated struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Column  int    `json:"column"`
	Message string `json:"message,omitempty"`
}

type jsonFix struct {
	Message string         `json:"message"`
	Tune    bool           `json:"tune,omitempty"`
	Edits   []finding.Edit `json:"edits"`
}

type jsonDoc struct {
	Version  int           `json:"version"`
	Files    []File        `json:"files"`
	Findings []jsonFinding `json:"findings"`
	Summary  Summary       `json:"summary"`
	Skipped  []Skip        `json:"skipped,omitempty"`
}

// JSON renders the versioned JSON contract:
// {"version":1,"files":[…],"findings":[…],"summary":{…}}.
func JSON(w io.Writer, in Input, _ Options) error {
	doc := jsonDoc{Version: 1, Files: in.Files, Findings: []jsonFinding{}, Summary: in.Summary, Skipped: in.Skipped}
	if doc.Files == nil {
		doc.Files = []File{}
	}
	for _, f := range in.Findings {
		jf := jsonFinding{
			Rule: f.Rule, Slug: f.Slug, Severity: f.Severity.String(), Message: f.Message,
			File: f.Range.File, Line: f.Range.Start.Line, Column: f.Range.Start.Col,
			EndLine: f.Range.End.Line, EndColumn: f.Range.End.Col,
			Path: finding.PathString(f.Path), DocURL: f.DocURL,
			Summary: f.Summary, Details: f.Details, Memory: f.Memory,
		}
		for _, r := range f.Related {
			jf.Related = append(jf.Related, jsonRelated{File: r.Range.File, Line: r.Range.Start.Line, Column: r.Range.Start.Col, Message: r.Message})
		}
		for _, fx := range f.Fixes {
			jf.Fixes = append(jf.Fixes, jsonFix{Message: fx.Message, Tune: fx.Tune, Edits: fx.Edits})
		}
		for _, e := range f.Evidence {
			ji := jsonInput{Name: e.Name, Value: e.Value, Source: string(e.Source), Settle: e.Settle}
			if e.Range != nil {
				ji.File, ji.Line, ji.Column = e.Range.File, e.Range.Start.Line, e.Range.Start.Col
			}
			jf.Evidence = append(jf.Evidence, ji)
		}
		doc.Findings = append(doc.Findings, jf)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// elsewhere returns the evidence a finding takes from other files (the
// manifest or launch script that gave the GPU, the GPU count or the
// model) that its related locations do not already show, so the text
// report points at every file the verdict rests on.
func elsewhere(f finding.Finding) []finding.Input {
	var out []finding.Input
	for _, e := range f.Evidence {
		if e.Range == nil || e.Range.File == f.Range.File {
			continue
		}
		shown := false
		for _, r := range f.Related {
			shown = shown || (r.Range.File == e.Range.File && r.Range.Start == e.Range.Start)
		}
		if !shown {
			out = append(out, e)
		}
	}
	return out
}
