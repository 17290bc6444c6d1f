package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/owenrumney/go-sarif/v3/pkg/report/v210/sarif"

	"github.com/gpulint/gpulint/internal/finding"
)

// validateSARIF checks doc against the SARIF 2.1.0 schema embedded in
// go-sarif. go-sarif validates its own Go model, so the document is
// decoded into that model first, refusing any property the model does not
// know; then the model is encoded again and compared with doc, so the
// validated document is doc plus nothing but zero-valued defaults.
func validateSARIF(doc []byte) error {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.DisallowUnknownFields()
	var strict sarif.Report
	if err := dec.Decode(&strict); err != nil {
		return fmt.Errorf("decode into the SARIF model: %w", err)
	}
	// FromBytes also turns absent arrays into empty ones, as the model
	// would otherwise write them as null.
	rep, err := sarif.FromBytes(doc)
	if err != nil {
		return err
	}
	if err := rep.Validate(); err != nil {
		return err
	}
	again, err := json.Marshal(rep)
	if err != nil {
		return err
	}
	var ours, theirs any
	if err := json.Unmarshal(doc, &ours); err != nil {
		return err
	}
	if err := json.Unmarshal(again, &theirs); err != nil {
		return err
	}
	return sameBesidesDefaults("", ours, theirs)
}

// sameBesidesDefaults reports where theirs differs from ours other than by
// object members with zero values (0, "", false, null, [], {}) that ours
// leaves out.
func sameBesidesDefaults(at string, ours, theirs any) error {
	switch o := ours.(type) {
	case map[string]any:
		t, ok := theirs.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: object became %T", at, theirs)
		}
		for k, v := range o {
			if err := sameBesidesDefaults(at+"/"+k, v, t[k]); err != nil {
				return err
			}
		}
		for k, v := range t {
			if _, ok := o[k]; !ok && !isZeroJSON(v) {
				return fmt.Errorf("%s/%s: model added %v", at, k, v)
			}
		}
		return nil
	case []any:
		t, ok := theirs.([]any)
		if !ok || len(t) != len(o) {
			return fmt.Errorf("%s: array became %v", at, theirs)
		}
		for i := range o {
			if err := sameBesidesDefaults(fmt.Sprintf("%s/%d", at, i), o[i], t[i]); err != nil {
				return err
			}
		}
		return nil
	default:
		if !reflect.DeepEqual(ours, theirs) {
			return fmt.Errorf("%s: %v became %v", at, ours, theirs)
		}
		return nil
	}
}

func isZeroJSON(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case float64:
		return x == 0
	case string:
		return x == ""
	case bool:
		return !x
	case []any:
		return len(x) == 0
	case map[string]any:
		for _, e := range x {
			if !isZeroJSON(e) {
				return false
			}
		}
		return true
	}
	return false
}

func TestSARIFSchema(t *testing.T) {
	good := render(t, "sarif", sampleInput(t))
	tests := []struct {
		name    string
		doc     string
		wantErr string // "" for a valid document
	}{
		{name: "shared findings", doc: good},
		{name: "no findings", doc: render(t, "sarif", Input{ToolVersion: "1.0.0"})},
		// The validator must be able to fail, or the cases above prove nothing.
		{name: "bad level", doc: strings.Replace(good, `"level": "error"`, `"level": "fatal"`, 1), wantErr: "level"},
		{name: "bad start line", doc: strings.Replace(good, `"startLine": 2`, `"startLine": 0`, 1), wantErr: "startLine"},
		{name: "unknown property", doc: strings.Replace(good, `"ruleId"`, `"rule_id"`, 1), wantErr: "rule_id"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := validateSARIF([]byte(tc.doc))
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("invalid SARIF: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("got error %v, want one mentioning %q", err, tc.wantErr)
			}
		})
	}
}

func TestSARIFColumnsCountCodePoints(t *testing.T) {
	src := "name: café # x\n"
	off := strings.Index(src, "#")
	tests := []struct {
		name string
		src  []byte
		pos  finding.Pos
		want int
	}{
		{name: "after a two-byte rune", src: []byte(src), pos: posAt(src, off), want: 12},
		{name: "no source: bytes", src: nil, pos: posAt(src, off), want: 13},
		{name: "position disagrees with source", src: []byte("x\ny"), pos: finding.Pos{Offset: 2, Line: 1, Col: 3}, want: 3},
		{name: "no column", src: []byte(src), pos: finding.Pos{Line: 1}, want: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := codePointCol(tc.src, tc.pos); got != tc.want {
				t.Errorf("codePointCol = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestArtifactURI(t *testing.T) {
	tests := []struct{ in, want string }{
		{"configs/ds.json", "configs/ds.json"},
		{"./configs/ds.json", "configs/ds.json"},
		{"k8s/vllm serve,prod.yaml", "k8s/vllm%20serve,prod.yaml"},
		{"a:b.yaml", "./a:b.yaml"},
		{"100%.json", "100%25.json"},
		{"/abs/ds.json", "file:///abs/ds.json"},
	}
	for _, tc := range tests {
		if got := artifactURI(tc.in); got != tc.want {
			t.Errorf("artifactURI(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestFingerprint(t *testing.T) {
	base := finding.Finding{
		Rule: "DS001", Message: "train_batch_size is 48 but 8 × 2 × 4 = 64",
		Range: finding.Range{File: "ds.json", Start: finding.Pos{Offset: 24, Line: 2, Col: 23}},
		Path:  []any{"train_batch_size"},
	}
	tests := []struct {
		name   string
		change func(*finding.Finding)
		same   bool
	}{
		{name: "lines shift", same: true, change: func(f *finding.Finding) {
			f.Range.Start = finding.Pos{Offset: 90, Line: 7, Col: 5}
		}},
		{name: "numbers change", same: true, change: func(f *finding.Finding) {
			f.Message = "train_batch_size is 32 but 8 × 2 × 4 = 64"
		}},
		{name: "severity changes", same: true, change: func(f *finding.Finding) { f.Severity = finding.SeverityInfo }},
		{name: "other rule", change: func(f *finding.Finding) { f.Rule = "DS002" }},
		{name: "other file", change: func(f *finding.Finding) { f.Range.File = "other.json" }},
		{name: "other key", change: func(f *finding.Finding) { f.Path = []any{"gradient_accumulation_steps"} }},
		{name: "other words", change: func(f *finding.Finding) { f.Message = "train_batch_size is missing" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := base
			tc.change(&f)
			if got := Fingerprint(f) == Fingerprint(base); got != tc.same {
				t.Errorf("same fingerprint = %v, want %v", got, tc.same)
			}
		})
	}
}

// TestSARIFFingerprintsSurviveLineShift renders the shared findings, then
// the same findings two lines further down, and compares fingerprints.
func TestSARIFFingerprintsSurviveLineShift(t *testing.T) {
	in := sampleInput(t)
	shifted := sampleInput(t)
	for i := range shifted.Findings {
		shifted.Findings[i].Range.Start.Line += 2
		shifted.Findings[i].Range.End.Line += 2
	}
	fps := func(in Input) []string {
		var log struct {
			Runs []struct {
				Results []struct {
					PartialFingerprints map[string]string `json:"partialFingerprints"`
				} `json:"results"`
			} `json:"runs"`
		}
		if err := json.Unmarshal([]byte(render(t, "sarif", in)), &log); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range log.Runs[0].Results {
			out = append(out, r.PartialFingerprints[FingerprintKey])
		}
		return out
	}
	want := fps(in)
	if len(want) != len(in.Findings) {
		t.Fatalf("got %d fingerprints for %d findings", len(want), len(in.Findings))
	}
	if diff := cmp.Diff(want, fps(shifted)); diff != "" {
		t.Errorf("fingerprints moved with the lines (-before +after):\n%s", diff)
	}
}
