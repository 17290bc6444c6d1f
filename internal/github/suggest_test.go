package github

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/github/githubtest"
	"github.com/gpulint/gpulint/internal/report"
)

const dsFile = "configs/ds.json"

const dsSrc = `{
  "train_batch_size": 48,
  "train_micro_batch_size_per_gpu": 8,
  "gradient_accumulation_steps": 2,
  "zero_optimization": {
    "stage": 3,
    "offload_param": {"device": "nvme"}
  }
}`

// The pull request changed lines 2-4 and 7 of dsFile; line 6 is context.
const dsPatch = "@@ -1,8 +1,8 @@\n {\n-  \"train_batch_size\": 32,\n-  \"train_micro_batch_size_per_gpu\": 4,\n-  \"gradient_accumulation_steps\": 4,\n+  \"train_batch_size\": 48,\n+  \"train_micro_batch_size_per_gpu\": 8,\n+  \"gradient_accumulation_steps\": 2,\n   \"zero_optimization\": {\n     \"stage\": 3,\n-    \"offload_param\": {\"device\": \"cpu\"}\n+    \"offload_param\": {\"device\": \"nvme\"}\n   }"

// at returns the offsets of the n-th occurrence of sub in dsSrc.
func at(t *testing.T, sub string) (int, int) {
	t.Helper()
	i := strings.Index(dsSrc, sub)
	if i < 0 {
		t.Fatalf("%q not in source", sub)
	}
	return i, i + len(sub)
}

func fixOf(t *testing.T, msg string, repl ...string) finding.Fix {
	t.Helper()
	fx := finding.Fix{Message: msg}
	for i := 0; i < len(repl); i += 2 {
		s, e := at(t, repl[i])
		fx.Edits = append(fx.Edits, finding.Edit{File: dsFile, Start: s, End: e, NewText: repl[i+1]})
	}
	return fx
}

func dsFinding(t *testing.T, rule, msg string, fixes ...finding.Fix) finding.Finding {
	s, e := at(t, `"train_batch_size"`)
	return finding.Finding{
		Rule: rule, Slug: strings.ToLower(rule) + "-slug", Severity: finding.SeverityError, Message: msg,
		Range: finding.Range{File: dsFile, Start: finding.Pos{Offset: s, Line: 2, Col: 3}, End: finding.Pos{Offset: e, Line: 2, Col: 21}},
		Path:  []any{rule}, DocURL: "https://github.com/gpulint/gpulint/blob/main/docs/rules.md#" + strings.ToLower(rule),
		Fixes: fixes,
	}
}

func changedDS(t *testing.T) map[string]LineSet {
	lines, err := ParsePatch(dsPatch)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]LineSet{dsFile: lines}
}

func TestSuggestions(t *testing.T) {
	tests := []struct {
		name     string
		findings []finding.Finding
		want     []Suggestion // compared on Path, lines and Body
	}{
		{
			name:     "one changed line",
			findings: []finding.Finding{dsFinding(t, "DS001", "batch is 48", fixOf(t, "set 64", "48", "64"))},
			want:     []Suggestion{{Path: dsFile, StartLine: 2, EndLine: 2, Body: "  \"train_batch_size\": 64,\n"}},
		},
		{
			name: "two edits over three changed lines",
			findings: []finding.Finding{dsFinding(t, "DS002", "sizes",
				fixOf(t, "fix sizes", "48", "16", "\"gradient_accumulation_steps\": 2", "\"gradient_accumulation_steps\": 1"))},
			want: []Suggestion{{Path: dsFile, StartLine: 2, EndLine: 4,
				Body: "  \"train_batch_size\": 16,\n  \"train_micro_batch_size_per_gpu\": 8,\n  \"gradient_accumulation_steps\": 1,\n"}},
		},
		{
			name:     "deleting a whole line",
			findings: []finding.Finding{dsFinding(t, "DS003", "drop it", fixOf(t, "remove", "  \"train_batch_size\": 48,\n", ""))},
			want:     []Suggestion{{Path: dsFile, StartLine: 2, EndLine: 2, Body: ""}},
		},
		{
			name:     "a context line is not changed by the pull request",
			findings: []finding.Finding{dsFinding(t, "DS004", "stage", fixOf(t, "set 2", "\"stage\": 3", "\"stage\": 2"))},
		},
		{
			name: "a later fix of the same finding may fit",
			findings: []finding.Finding{dsFinding(t, "DS005", "two ways",
				fixOf(t, "stage", "\"stage\": 3", "\"stage\": 2"),
				fixOf(t, "device", "\"nvme\"", "\"cpu\""))},
			want: []Suggestion{{Path: dsFile, StartLine: 7, EndLine: 7, Body: "    \"offload_param\": {\"device\": \"cpu\"}\n"}},
		},
		{
			name:     "a fix across a changed and an unchanged line",
			findings: []finding.Finding{dsFinding(t, "DS006", "span", fixOf(t, "both", "\"stage\": 3,\n    \"offload", "\"stage\": 2,\n    \"offload"))},
		},
		{
			name: "a fix in two files",
			findings: []finding.Finding{dsFinding(t, "DS007", "two files", finding.Fix{Message: "both", Edits: []finding.Edit{
				{File: dsFile, Start: 0, End: 1, NewText: "["}, {File: "other.json", Start: 0, End: 0, NewText: "x"},
			}})},
		},
		{
			name: "overlapping suggestions keep the first",
			findings: []finding.Finding{
				dsFinding(t, "DS008", "first", fixOf(t, "a", "48", "64")),
				dsFinding(t, "DS009", "second", fixOf(t, "b", "\"train_batch_size\": 48", "\"train_batch_size\": 96")),
			},
			want: []Suggestion{{Path: dsFile, StartLine: 2, EndLine: 2, Body: "  \"train_batch_size\": 64,\n"}},
		},
		{
			name:     "edits that do not apply",
			findings: []finding.Finding{dsFinding(t, "DS010", "bad", finding.Fix{Message: "x", Edits: []finding.Edit{{File: dsFile, Start: 5, End: 9999}}})},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := report.Input{Findings: tc.findings, Sources: map[string][]byte{dsFile: []byte(dsSrc)}}
			got := Suggestions(in, changedDS(t))
			ignore := cmpopts.IgnoreFields(Suggestion{}, "Fingerprint", "Rule", "Slug", "Severity", "Message", "Fix", "DocURL")
			if diff := cmp.Diff(tc.want, got, ignore, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("suggestions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSuggestionFingerprintIgnoresLines(t *testing.T) {
	f := dsFinding(t, "DS001", "train_batch_size is 48", fixOf(t, "set 64", "48", "64"))
	in := report.Input{Findings: []finding.Finding{f}, Sources: map[string][]byte{dsFile: []byte(dsSrc)}}
	before := Suggestions(in, changedDS(t))

	// Two lines added above move everything down.
	shifted := "{\n  \"a\": 1,\n  \"b\": 2," + strings.TrimPrefix(dsSrc, "{")
	g := f
	g.Range.Start.Line += 2
	g.Fixes = []finding.Fix{{Message: "set 64", Edits: []finding.Edit{{File: dsFile, Start: strings.Index(shifted, "48"), End: strings.Index(shifted, "48") + 2, NewText: "64"}}}}
	all := LineSet{}
	for l := 1; l <= 12; l++ {
		all[l] = true
	}
	after := Suggestions(report.Input{Findings: []finding.Finding{g}, Sources: map[string][]byte{dsFile: []byte(shifted)}}, map[string]LineSet{dsFile: all})
	if len(before) != 1 || len(after) != 1 {
		t.Fatalf("got %d and %d suggestions, want 1 and 1", len(before), len(after))
	}
	if before[0].StartLine == after[0].StartLine {
		t.Fatal("the test did not move the line")
	}
	if before[0].Fingerprint != after[0].Fingerprint {
		t.Errorf("fingerprint changed with the line: %s, %s", before[0].Fingerprint, after[0].Fingerprint)
	}
	// A different replacement is a different suggestion.
	g.Fixes[0].Edits[0].NewText = "96"
	other := Suggestions(report.Input{Findings: []finding.Finding{g}, Sources: map[string][]byte{dsFile: []byte(shifted)}}, map[string]LineSet{dsFile: all})
	if other[0].Fingerprint == after[0].Fingerprint {
		t.Error("a different replacement kept the fingerprint")
	}
}

func suggestionServer(t *testing.T, opts ...githubtest.Option) *githubtest.Server {
	files := []githubtest.File{
		{Filename: dsFile, Status: "modified", Patch: dsPatch},
		{Filename: "README.md", Status: "modified", Patch: "@@ -10,2 +10,3 @@\n a\n+b\n c"},
	}
	return githubtest.NewServer(t, append([]githubtest.Option{githubtest.WithPullRequest(owner, repo, prNum, head, files...)}, opts...)...)
}

func TestPostSuggestions(t *testing.T) {
	srv := suggestionServer(t)
	c, rec := newTestClient(t, srv, githubtest.DefaultToken)
	ctx := context.Background()

	files, err := c.ChangedFiles(ctx, owner, repo, prNum)
	if err != nil {
		t.Fatal(err)
	}
	in := report.Input{
		Findings: []finding.Finding{
			dsFinding(t, "DS001", "train_batch_size is 48 but <b>8</b> × 2 = 16 @team", fixOf(t, "set 16", "48", "16")),
			dsFinding(t, "DS011", "nvme needs a path", fixOf(t, "use ```cpu```", "\"nvme\"", "\"cpu\"")),
			dsFinding(t, "DS012", "sizes", fixOf(t, "sizes", "\"train_micro_batch_size_per_gpu\": 8,\n  \"gradient_accumulation_steps\": 2", "\"train_micro_batch_size_per_gpu\": 4,\n  \"gradient_accumulation_steps\": 4")),
		},
		Sources: map[string][]byte{dsFile: []byte(dsSrc)},
	}
	sugs := Suggestions(in, ChangedLines(files))
	if len(sugs) != 3 {
		t.Fatalf("%d suggestions, want 3", len(sugs))
	}
	posted, skipped, err := c.PostSuggestions(ctx, owner, repo, prNum, head, sugs)
	if err != nil || posted != 3 || skipped != 0 {
		t.Fatalf("first run: posted %d, skipped %d, err %v; want 3, 0, nil", posted, skipped, err)
	}
	type placed struct {
		Path            string
		StartLine, Line int
		Suggested       string
	}
	var got []placed
	for _, rc := range srv.ReviewComments() {
		_, block, _ := strings.Cut(rc.Body, "suggestion\n")
		block = block[:strings.LastIndex(strings.TrimSuffix(block, "\n"), "\n")+1]
		got = append(got, placed{rc.Path, rc.StartLine, rc.Line, block})
		if rc.CommitID != head {
			t.Errorf("comment on commit %s, want %s", rc.CommitID, head)
		}
	}
	want := []placed{
		{dsFile, 0, 2, "  \"train_batch_size\": 16,\n"},
		{dsFile, 0, 7, "    \"offload_param\": {\"device\": \"cpu\"}\n"},
		{dsFile, 3, 4, "  \"train_micro_batch_size_per_gpu\": 4,\n  \"gradient_accumulation_steps\": 4,\n"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("review comments (-want +got):\n%s", diff)
	}
	if n := len(srv.Reviews()); n != 1 || srv.Reviews()[0].Event != "COMMENT" {
		t.Errorf("reviews: %+v, want one COMMENT review", srv.Reviews())
	}
	first := srv.ReviewComments()[0].Body
	if strings.Contains(first, "<b>") || strings.Contains(first, "@team") {
		t.Errorf("finding text is not escaped:\n%s", first)
	}

	// A second run, with lines shifted or not, posts nothing new.
	posted, skipped, err = c.PostSuggestions(ctx, owner, repo, prNum, head, Suggestions(in, ChangedLines(files)))
	if err != nil || posted != 0 || skipped != 3 {
		t.Fatalf("second run: posted %d, skipped %d, err %v; want 0, 3, nil", posted, skipped, err)
	}
	if n := len(srv.ReviewComments()); n != 3 {
		t.Errorf("%d review comments after the second run, want 3", n)
	}
	assertNoToken(t, githubtest.DefaultToken, srv, rec, err)
}

// TestPostSuggestionsOutsideDiff: GitHub refuses a whole review when one
// comment lies outside the diff; the others must still land.
func TestPostSuggestionsOutsideDiff(t *testing.T) {
	srv := suggestionServer(t)
	c, _ := newTestClient(t, srv, githubtest.DefaultToken)
	sug := func(path string, line int, fp string) Suggestion {
		return Suggestion{Path: path, StartLine: line, EndLine: line, Body: "x\n", Fingerprint: fp, Rule: "DS001"}
	}
	sugs := []Suggestion{
		sug(dsFile, 2, "00000000000000a1"),
		sug(dsFile, 20, "00000000000000a2"), // not in the diff
		sug("README.md", 11, "00000000000000a3"),
		sug("README.md", 1, "00000000000000a4"), // not in the diff
		sug(dsFile, 7, "00000000000000a5"),
	}
	posted, skipped, err := c.PostSuggestions(context.Background(), owner, repo, prNum, head, sugs)
	if err != nil || posted != 3 || skipped != 2 {
		t.Fatalf("posted %d, skipped %d, err %v; want 3, 2, nil", posted, skipped, err)
	}
	var got []string
	for _, rc := range srv.ReviewComments() {
		got = append(got, fpPattern().FindStringSubmatch(rc.Body)[1])
	}
	want := []string{"00000000000000a1", "00000000000000a3", "00000000000000a5"}
	if diff := cmp.Diff(want, got, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("posted (-want +got):\n%s", diff)
	}
	refused := 0
	for _, r := range srv.Requests() {
		if r.Status == http.StatusUnprocessableEntity {
			refused++
		}
	}
	if refused == 0 {
		t.Error("the fake never refused a review; the test proves nothing")
	}
}

func TestPostSuggestionsFailures(t *testing.T) {
	sugs := []Suggestion{{Path: dsFile, StartLine: 2, EndLine: 2, Body: "x\n", Fingerprint: "00000000000000b1"}}
	tests := []struct {
		name       string
		fault      githubtest.Option
		wantErr    error
		wantPosted int
	}{
		{name: "read-only token", fault: githubtest.WithReadOnlyToken(), wantErr: ErrReadOnlyToken},
		{name: "answer lost after posting", fault: githubtest.WithLostResponses(1), wantPosted: 1},
		{name: "refused once with 502", fault: githubtest.WithServerErrors(http.MethodPost, 1, http.StatusBadGateway), wantPosted: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := suggestionServer(t, tc.fault)
			c, rec := newTestClient(t, srv, githubtest.DefaultToken)
			posted, _, err := c.PostSuggestions(context.Background(), owner, repo, prNum, head, sugs)
			if !errorsIs(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if posted != tc.wantPosted || len(srv.ReviewComments()) != tc.wantPosted {
				t.Errorf("posted %d, fake holds %d comments; want %d", posted, len(srv.ReviewComments()), tc.wantPosted)
			}
			assertNoToken(t, githubtest.DefaultToken, srv, rec, err)
		})
	}
}

func errorsIs(err, kind error) bool {
	if kind == nil {
		return err == nil
	}
	return isKind(err, kind)
}
