package report

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/gpulint/gpulint/internal/finding"
)

// SARIF 2.1.0 constants. The schema address is the OASIS errata 01 copy,
// https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/.
const (
	sarifVersion   = "2.1.0"
	sarifSchema    = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
	informationURI = "https://github.com/gpulint/gpulint"
	// sarifLanguage is the language of the log's messages (SARIF 2.1.0
	// §3.14.7, §3.19.21; its default, written out for strict readers).
	sarifLanguage = "en-US"
	// FingerprintKey names gpulint's entry in SARIF partialFingerprints.
	FingerprintKey = "gpulint/v1"
)

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool       sarifTool `json:"tool"`
	Language   string    `json:"language"`
	ColumnKind string    `json:"columnKind"`
	// NewlineSequences is SARIF's default, written out: gpulint counts
	// lines at "\n", so "\r\n" ends a line and a lone "\r" does not.
	NewlineSequences []string      `json:"newlineSequences"`
	Results          []sarifResult `json:"results"`
	// AutomationDetails names the run's category (SARIF 2.1.0 §3.17),
	// which GitHub code scanning uses to keep one analysis per category.
	AutomationDetails sarifAutomation `json:"automationDetails"`
}

type sarifAutomation struct {
	ID string `json:"id"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version,omitempty"`
	InformationURI string      `json:"informationUri"`
	Language       string      `json:"language"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID                   string      `json:"id"`
	Name                 string      `json:"name,omitempty"`
	ShortDescription     sarifText   `json:"shortDescription"`
	FullDescription      *sarifText  `json:"fullDescription,omitempty"`
	Help                 *sarifHelp  `json:"help,omitempty"`
	HelpURI              string      `json:"helpUri,omitempty"`
	DefaultConfiguration sarifConfig `json:"defaultConfiguration"`
}

type sarifText struct {
	Text string `json:"text"`
}

// sarifHelp is a rule's help as plain text and as Markdown (SARIF
// 2.1.0 §3.12).
type sarifHelp struct {
	Text     string `json:"text"`
	Markdown string `json:"markdown,omitempty"`
}

type sarifConfig struct {
	Level string `json:"level"`
}

type sarifResult struct {
	RuleID              string            `json:"ruleId"`
	RuleIndex           int               `json:"ruleIndex"`
	Level               string            `json:"level"`
	Message             sarifText         `json:"message"`
	Locations           []sarifLocation   `json:"locations"`
	RelatedLocations    []sarifLocation   `json:"relatedLocations,omitempty"`
	PartialFingerprints map[string]string `json:"partialFingerprints"`
	Fixes               []sarifFix        `json:"fixes,omitempty"`
	// Properties carries the verdict's evidence: {"evidence": [...]}, each
	// input with its value and source; inputs read from a file are also
	// related locations.
	Properties map[string]any `json:"properties,omitempty"`
}

type sarifLocation struct {
	ID               *int          `json:"id,omitempty"`
	PhysicalLocation sarifPhysical `json:"physicalLocation"`
	Message          *sarifText    `json:"message,omitempty"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           *sarifRegion  `json:"region,omitempty"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifRegion struct {
	StartLine   int  `json:"startLine,omitempty"`
	StartColumn int  `json:"startColumn,omitempty"`
	EndLine     int  `json:"endLine,omitempty"`
	EndColumn   int  `json:"endColumn,omitempty"`
	ByteOffset  *int `json:"byteOffset,omitempty"`
	ByteLength  *int `json:"byteLength,omitempty"`
}

type sarifFix struct {
	Description     sarifText     `json:"description"`
	ArtifactChanges []sarifChange `json:"artifactChanges"`
}

type sarifChange struct {
	ArtifactLocation sarifArtifact      `json:"artifactLocation"`
	Replacements     []sarifReplacement `json:"replacements"`
}

type sarifReplacement struct {
	DeletedRegion   sarifRegion `json:"deletedRegion"`
	InsertedContent *sarifText  `json:"insertedContent,omitempty"`
}

// SARIF renders a SARIF 2.1.0 log with one run: the rules that have
// findings, and one result per finding with its location, related
// locations, fixes (byte-offset replacements) and a partial fingerprint
// that survives line shifts. Columns count Unicode code points when the
// file's source is in Input.Sources, bytes otherwise (equal for ASCII).
func SARIF(w io.Writer, in Input, _ Options) error {
	run := sarifRun{
		Tool: sarifTool{Driver: sarifDriver{
			Name: "gpulint", Version: in.ToolVersion, InformationURI: informationURI,
			Language: sarifLanguage, Rules: []sarifRule{},
		}},
		Language:         sarifLanguage,
		ColumnKind:       "unicodeCodePoints",
		NewlineSequences: []string{"\r\n", "\n"},
		Results:          []sarifResult{},
		// A trailing "/" makes the whole id the category, with no run id.
		AutomationDetails: sarifAutomation{ID: "gpulint/" + cmp.Or(in.Category, "lint") + "/"},
	}
	ruleIndex := map[string]int{}
	for _, f := range in.Findings {
		if _, ok := ruleIndex[f.Rule]; ok {
			continue
		}
		ruleIndex[f.Rule] = -1
		run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, sarifRuleOf(f, in.Rules[f.Rule]))
	}
	slices.SortFunc(run.Tool.Driver.Rules, func(a, b sarifRule) int { return strings.Compare(a.ID, b.ID) })
	for i, r := range run.Tool.Driver.Rules {
		ruleIndex[r.ID] = i
	}

	fps := Fingerprints(in.Findings)
	for fi, f := range in.Findings {
		res := sarifResult{
			RuleID:              f.Rule,
			RuleIndex:           ruleIndex[f.Rule],
			Level:               sarifLevel(f.Severity),
			Message:             sarifText{Text: f.Message},
			Locations:           []sarifLocation{{PhysicalLocation: physical(in.Sources, f.Range)}},
			PartialFingerprints: map[string]string{FingerprintKey: fps[fi]},
		}
		for i, r := range f.Related {
			loc := sarifLocation{ID: &i, PhysicalLocation: physical(in.Sources, r.Range)}
			if r.Message != "" {
				loc.Message = &sarifText{Text: r.Message}
			}
			res.RelatedLocations = append(res.RelatedLocations, loc)
		}
		if len(f.Evidence) > 0 {
			ev := make([]map[string]any, 0, len(f.Evidence))
			for _, e := range f.Evidence {
				m := map[string]any{"name": e.Name, "value": e.Value, "source": string(e.Source)}
				if e.Settle != "" {
					m["settle"] = e.Settle
				}
				if e.Range != nil {
					id := len(res.RelatedLocations)
					res.RelatedLocations = append(res.RelatedLocations, sarifLocation{ID: &id,
						PhysicalLocation: physical(in.Sources, *e.Range),
						Message:          &sarifText{Text: fmt.Sprintf("%s %s", e.Name, e.Value)}})
					m["relatedLocation"] = id
				}
				ev = append(ev, m)
			}
			res.Properties = map[string]any{"evidence": ev}
		}
		for _, fx := range f.Fixes {
			res.Fixes = append(res.Fixes, sarifFixOf(fx))
		}
		run.Results = append(run.Results, res)
	}

	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(sarifLog{Schema: sarifSchema, Version: sarifVersion, Runs: []sarifRun{run}})
}

// sarifRuleOf describes a rule from the catalog's text: its title, its
// rationale as the full description, help that says what to change and
// why, and its doc anchor. The catalog's text is Markdown already (the
// rule reference in docs/rules.md prints it as written), so help.markdown
// carries it unescaped. A rule the catalog text does not cover is
// described by its slug.
func sarifRuleOf(f finding.Finding, doc RuleDoc) sarifRule {
	r := sarifRule{
		ID:                   f.Rule,
		Name:                 f.Slug,
		ShortDescription:     sarifText{Text: cmp.Or(doc.Title, ruleDescription(f))},
		HelpURI:              safeURL(f.DocURL),
		DefaultConfiguration: sarifConfig{Level: sarifLevel(f.Severity)},
	}
	if doc.Rationale != "" {
		r.FullDescription = &sarifText{Text: doc.Rationale}
	}
	var text, md []string
	if doc.Remediation != "" {
		text = append(text, doc.Remediation)
		md = append(md, "**Remediation.** "+doc.Remediation)
	}
	if doc.Rationale != "" {
		text = append(text, doc.Rationale)
		md = append(md, doc.Rationale)
	}
	if r.HelpURI != "" && len(md) > 0 {
		md = append(md, "[Rule reference]("+r.HelpURI+")")
	}
	if len(text) > 0 {
		r.Help = &sarifHelp{Text: strings.Join(text, "\n\n"), Markdown: strings.Join(md, "\n\n")}
	}
	return r
}

// ruleDescription is a rule's short description built from its slug, for
// a rule the catalog text does not cover.
func ruleDescription(f finding.Finding) string {
	if f.Slug == "" {
		return f.Rule
	}
	return f.Rule + ": " + strings.ReplaceAll(f.Slug, "-", " ")
}

func sarifLevel(s finding.Severity) string {
	switch s {
	case finding.SeverityError:
		return "error"
	case finding.SeverityWarning:
		return "warning"
	default:
		return "note"
	}
}

func sarifFixOf(fx finding.Fix) sarifFix {
	out := sarifFix{Description: sarifText{Text: fx.Message}, ArtifactChanges: []sarifChange{}}
	byFile := map[string]int{}
	for _, e := range fx.Edits {
		i, ok := byFile[e.File]
		if !ok {
			i = len(out.ArtifactChanges)
			byFile[e.File] = i
			out.ArtifactChanges = append(out.ArtifactChanges, sarifChange{ArtifactLocation: sarifArtifact{URI: artifactURI(e.File)}})
		}
		off, n := e.Start, e.End-e.Start
		rep := sarifReplacement{DeletedRegion: sarifRegion{ByteOffset: &off, ByteLength: &n}}
		if e.NewText != "" {
			rep.InsertedContent = &sarifText{Text: e.NewText}
		}
		out.ArtifactChanges[i].Replacements = append(out.ArtifactChanges[i].Replacements, rep)
	}
	return out
}

// physical maps a range onto a SARIF physical location. A range without
// a line (a whole-file finding) has no region.
func physical(sources map[string][]byte, r finding.Range) sarifPhysical {
	p := sarifPhysical{ArtifactLocation: sarifArtifact{URI: artifactURI(r.File)}}
	if r.Start.Line <= 0 {
		return p
	}
	src := sources[r.File]
	reg := &sarifRegion{StartLine: r.Start.Line, StartColumn: codePointCol(src, r.Start)}
	if r.End.Line >= r.Start.Line {
		reg.EndLine = r.End.Line
		reg.EndColumn = codePointCol(src, r.End)
	}
	p.Region = reg
	return p
}

// codePointCol converts a byte column into a code-point column using the
// source line, when the source is known and agrees with the position.
func codePointCol(src []byte, p finding.Pos) int {
	if p.Col <= 0 {
		return 1
	}
	start := p.Offset - (p.Col - 1)
	if src == nil || start < 0 || p.Offset > len(src) || slices.Contains(src[start:p.Offset], '\n') {
		return p.Col
	}
	return utf8.RuneCount(src[start:p.Offset]) + 1
}

// artifactURI turns a file path into a relative URI reference with
// forward slashes; absolute paths become file URIs.
func artifactURI(file string) string {
	p := filepath.ToSlash(file)
	if filepath.IsAbs(file) || path.IsAbs(p) {
		return (&url.URL{Scheme: "file", Path: p}).String()
	}
	p = strings.TrimPrefix(path.Clean(p), "./")
	u := (&url.URL{Path: p}).EscapedPath()
	if first, _, _ := strings.Cut(u, "/"); strings.Contains(first, ":") {
		u = "./" + u // not a scheme
	}
	return u
}

// Fingerprints returns each finding's Fingerprint with its occurrence
// among the findings that share it ("<hash>:1", "<hash>:2"), in order: the
// SARIF partial fingerprint, and the key of a baseline.
func Fingerprints(fs []finding.Finding) []string {
	out := make([]string, len(fs))
	seen := map[string]int{}
	for i, f := range fs {
		fp := Fingerprint(f)
		seen[fp]++
		out[i] = fmt.Sprintf("%s:%d", fp, seen[fp])
	}
	return out
}

// Fingerprint identifies a finding independently of its line: a hash of
// the rule id, the file, the key path and the message with its digits
// removed. Editing lines above a finding, or changing the numbers in it,
// keeps the fingerprint; moving it to another key or file changes it.
func Fingerprint(f finding.Finding) string {
	h := sha256.New()
	msg := strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return -1
		}
		return r
	}, f.Message)
	for _, part := range []string{f.Rule, filepath.ToSlash(f.Range.File), finding.PathString(f.Path), msg} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}
