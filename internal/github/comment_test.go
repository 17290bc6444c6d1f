package github

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/github/githubtest"
	"github.com/gpulint/gpulint/internal/report"
)

const (
	owner = "acme"
	repo  = "train"
	prNum = 42
	head  = "0123456789abcdef0123456789abcdef01234567"
)

var (
	bot   = githubtest.User{Login: "github-actions[bot]", Type: "Bot"}
	human = githubtest.User{Login: "alice", Type: "User"}
)

func bodies(cs []githubtest.Comment) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Body)
	}
	return out
}

func TestUpsertCommentLifecycle(t *testing.T) {
	srv := githubtest.NewServer(t,
		githubtest.WithPullRequest(owner, repo, prNum, head),
		githubtest.WithComment(owner, repo, prNum, human, "LGTM, but see "+Marker+" below"),
	)
	c, rec := newTestClient(t, srv, githubtest.DefaultToken)
	ctx := context.Background()
	steps := []struct {
		body       string
		wantAction CommentAction
		wantWrite  string // the write request, "" for none
	}{
		{body: Marker + "\nfirst", wantAction: CommentCreated, wantWrite: "POST /repos/acme/train/issues/42/comments"},
		{body: Marker + "\nsecond", wantAction: CommentUpdated, wantWrite: "PATCH /repos/acme/train/issues/comments/2"},
		{body: Marker + "\nsecond", wantAction: CommentUnchanged},
		{body: "third, without the marker", wantAction: CommentUpdated, wantWrite: "PATCH /repos/acme/train/issues/comments/2"},
	}
	var errs []error
	for i, st := range steps {
		before := len(srv.Requests())
		res, err := c.UpsertComment(ctx, owner, repo, prNum, st.body)
		errs = append(errs, err)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if res.Action != st.wantAction || res.ID != 2 {
			t.Errorf("step %d: got %+v, want action %s on comment 2", i, res, st.wantAction)
		}
		var writes []string
		for _, r := range srv.Requests()[before:] {
			if r.Method != http.MethodGet {
				writes = append(writes, r.Method+" "+r.Path)
			}
		}
		if want := []string{st.wantWrite}; st.wantWrite == "" && len(writes) > 0 || st.wantWrite != "" && !cmp.Equal(want, writes) {
			t.Errorf("step %d: writes %q, want %q", i, writes, st.wantWrite)
		}
	}
	want := []string{"LGTM, but see " + Marker + " below", Marker + "\nthird, without the marker"}
	if diff := cmp.Diff(want, bodies(srv.Comments())); diff != "" {
		t.Errorf("comments (-want +got):\n%s", diff)
	}
	assertNoToken(t, githubtest.DefaultToken, srv, rec, errs...)
}

func TestUpsertCommentPicksOldestOwn(t *testing.T) {
	var opts []githubtest.Option
	opts = append(opts, githubtest.WithPullRequest(owner, repo, prNum, head))
	// 150 comments by others push ours onto the second page.
	for i := range 150 {
		opts = append(opts, githubtest.WithComment(owner, repo, prNum, human, fmt.Sprintf("comment %d", i)))
	}
	opts = append(opts,
		githubtest.WithComment(owner, repo, prNum, human, Marker+"\nforged by a human"), // id 151
		githubtest.WithComment(owner, repo, prNum, bot, Marker+"\nold report"),          // id 152
		githubtest.WithComment(owner, repo, prNum, bot, Marker+"\nduplicate report"),    // id 153
	)
	tests := []struct {
		name   string
		opts   []Option
		wantID int64
	}{
		{name: "oldest with the marker", wantID: 151},
		{name: "oldest by the configured author", opts: []Option{WithCommentAuthor("github-actions[bot]")}, wantID: 152},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := githubtest.NewServer(t, opts...)
			c, _ := newTestClient(t, srv, githubtest.DefaultToken, tc.opts...)
			res, err := c.UpsertComment(context.Background(), owner, repo, prNum, Marker+"\nnew report")
			if err != nil {
				t.Fatal(err)
			}
			if res.ID != tc.wantID || res.Action != CommentUpdated {
				t.Errorf("got %+v, want comment %d updated", res, tc.wantID)
			}
			if n := len(srv.Comments()); n != 153 {
				t.Errorf("%d comments, want 153 (none created)", n)
			}
		})
	}
}

func TestUpsertCommentServerErrorNeverDuplicates(t *testing.T) {
	// A create that answers 5xx may or may not have happened; the client
	// must look again before it creates.
	tests := []struct {
		name      string
		fault     githubtest.Option
		wantCount int
		wantErr   bool
	}{
		{name: "create refused once", fault: githubtest.WithServerErrors(http.MethodPost, 1, http.StatusBadGateway), wantCount: 1},
		{name: "create done but its answer lost", fault: githubtest.WithLostResponses(1), wantCount: 1},
		{name: "create refused every time", fault: githubtest.WithServerErrors(http.MethodPost, 100, http.StatusBadGateway), wantErr: true},
		{name: "listing fails every time", fault: githubtest.WithServerErrors(http.MethodGet, 100, http.StatusServiceUnavailable), wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := githubtest.NewServer(t, githubtest.WithPullRequest(owner, repo, prNum, head), tc.fault)
			c, rec := newTestClient(t, srv, githubtest.DefaultToken)
			_, err := c.UpsertComment(context.Background(), owner, repo, prNum, "report")
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if n := len(srv.Comments()); n != tc.wantCount {
				t.Errorf("%d comments, want %d", n, tc.wantCount)
			}
			assertNoToken(t, githubtest.DefaultToken, srv, rec, err)
		})
	}
}

func TestUpsertCommentReadOnlyToken(t *testing.T) {
	srv := githubtest.NewServer(t, githubtest.WithPullRequest(owner, repo, prNum, head), githubtest.WithReadOnlyToken())
	c, rec := newTestClient(t, srv, githubtest.DefaultToken)
	_, err := c.UpsertComment(context.Background(), owner, repo, prNum, "report")
	if !isKind(err, ErrReadOnlyToken) {
		t.Fatalf("err = %v, want ErrReadOnlyToken", err)
	}
	if !strings.Contains(err.Error(), "Resource not accessible by integration") {
		t.Errorf("error %q hides GitHub's reason", err)
	}
	if len(rec.waits) != 0 {
		t.Errorf("a refused write was retried: waits %v", rec.waits)
	}
	assertNoToken(t, githubtest.DefaultToken, srv, rec, err)
}

func TestUpsertCommentTooLong(t *testing.T) {
	srv := githubtest.NewServer(t, githubtest.WithPullRequest(owner, repo, prNum, head))
	c, _ := newTestClient(t, srv, githubtest.DefaultToken)
	_, err := c.UpsertComment(context.Background(), owner, repo, prNum, strings.Repeat("x", MaxCommentLen))
	if err == nil || !strings.Contains(err.Error(), "at most 65536") {
		t.Fatalf("err = %v, want a length error", err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent for a body GitHub would refuse", n)
	}
}

// bigInput returns n findings with fixes in one file.
func bigInput(n int) report.Input {
	var src strings.Builder
	for i := range n {
		fmt.Fprintf(&src, "key_%04d: %d\n", i, i)
	}
	s := src.String()
	in := report.Input{Sources: map[string][]byte{"cfg/big.yaml": []byte(s)}, Summary: report.Summary{Files: 1}}
	off := 0
	for i := range n {
		line := fmt.Sprintf("key_%04d: %d\n", i, i)
		r := finding.Range{File: "cfg/big.yaml",
			Start: finding.Pos{Offset: off, Line: i + 1, Col: 1},
			End:   finding.Pos{Offset: off + len(line) - 1, Line: i + 1, Col: len(line)}}
		in.Findings = append(in.Findings, finding.Finding{
			Rule: "GPU001", Slug: "fp32-where-bf16", Severity: finding.SeverityWarning,
			Message: fmt.Sprintf("<img src=x> @team value %d | is *wrong*", i), Range: r,
			Fixes: []finding.Fix{{Message: "set it", Edits: []finding.Edit{{File: r.File, Start: off, End: off + len(line) - 1, NewText: fmt.Sprintf("key_%04d: %d", i, i+1)}}}},
		})
		off += len(line)
	}
	return in
}

func TestCommentBodyLimit(t *testing.T) {
	body := CommentBody(bigInput(2000), CommentOptions{Repo: owner + "/" + repo, SHA: head})
	if n := utf8.RuneCountInString(body); n > MaxCommentLen || len(body) > MaxCommentLen {
		t.Fatalf("body has %d characters (%d bytes), limit %d", n, len(body), MaxCommentLen)
	}
	if !strings.HasPrefix(body, Marker+"\n") {
		t.Error("body does not start with the marker")
	}
	shown := strings.Count(body, "\n- **warning**")
	if shown < 10 {
		t.Fatalf("only %d findings shown", shown)
	}
	if want := fmt.Sprintf("_%d more not shown._", 2000-shown); !strings.Contains(body, want) {
		t.Errorf("body does not say %q", want)
	}
	// "|" outside a table is text and stays; emphasis is escaped.
	for _, bad := range []string{"<img", "@team", " *wrong*"} {
		if strings.Contains(body, bad) {
			t.Errorf("unescaped %q in the body", bad)
		}
	}
	// The body is accepted as is.
	srv := githubtest.NewServer(t, githubtest.WithPullRequest(owner, repo, prNum, head))
	c, _ := newTestClient(t, srv, githubtest.DefaultToken)
	if _, err := c.UpsertComment(context.Background(), owner, repo, prNum, body); err != nil {
		t.Fatal(err)
	}
}

func TestCommentBodyAllClear(t *testing.T) {
	body := CommentBody(report.Input{Summary: report.Summary{Files: 3}}, CommentOptions{})
	want := Marker + "\n## gpulint\n\nNo findings — all clear (3 files checked).\n"
	if body != want {
		t.Errorf("got %q, want %q", body, want)
	}
}

// TestCommentBodyCannotForgeMarker checks that a finding's message cannot
// plant a second marker that a later run would take for gpulint's comment.
func TestCommentBodyCannotForgeMarker(t *testing.T) {
	in := bigInput(1)
	in.Findings[0].Message = Marker + " <!-- gpulint:fp=0123456789abcdef -->"
	in.Findings[0].Range.File = "cfg/" + Marker + ".yaml"
	body := CommentBody(in, CommentOptions{Repo: "o/r", SHA: "abc"})
	if n := strings.Count(body, Marker); n != 1 {
		t.Errorf("marker appears %d times:\n%s", n, body)
	}
	if strings.Contains(body, "<!-- gpulint:fp") {
		t.Error("a fingerprint marker was forged")
	}
}
