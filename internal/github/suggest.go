package github

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"regexp"
	"strings"
	"sync"

	gh "github.com/google/go-github/v62/github"

	"github.com/gpulint/gpulint/internal/edit"
	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/report"
)

// Suggestion is a fix offered as a review comment with a suggested change
// that replaces whole lines of one file at the head commit.
type Suggestion struct {
	Path      string // repository-relative, forward slashes
	StartLine int    // first replaced line, 1-based
	EndLine   int    // last replaced line, inclusive
	// Body is the replacement text for lines StartLine..EndLine, each
	// line with its line break; "" deletes the lines.
	Body string
	// Fingerprint identifies the suggestion without its line numbers: the
	// finding's report.Fingerprint plus the replacement text. A
	// suggestion is posted once per fingerprint.
	Fingerprint string

	// The finding and fix behind the suggestion, for the comment text.
	Rule     string
	Slug     string
	Severity finding.Severity
	Message  string
	Fix      string
	DocURL   string
}

// Suggestions turns fixes into review suggestions. A finding yields at
// most one: from its first fix whose edits all lie in one file, apply
// cleanly to in.Sources, and touch only lines that changed holds for that
// file (the lines the pull request added or changed, see ChangedLines).
// A suggestion whose lines overlap an earlier one in the same file is
// left out, since GitHub cannot apply both.
func Suggestions(in report.Input, changed map[string]LineSet) []Suggestion {
	var out []Suggestion
	taken := map[string][][2]int{}
	for _, f := range in.Findings {
		for _, fx := range f.Fixes {
			s, ok := suggestionFor(in.Sources, changed, fx)
			if !ok {
				continue
			}
			if overlapsAny(taken[s.Path], s.StartLine, s.EndLine) {
				break
			}
			taken[s.Path] = append(taken[s.Path], [2]int{s.StartLine, s.EndLine})
			s.Rule, s.Slug, s.Severity, s.Message, s.Fix, s.DocURL = f.Rule, f.Slug, f.Severity, f.Message, fx.Message, f.DocURL
			s.Fingerprint = suggestionFingerprint(report.Fingerprint(f), s.Body)
			out = append(out, s)
			break
		}
	}
	return out
}

func overlapsAny(spans [][2]int, start, end int) bool {
	for _, sp := range spans {
		if start <= sp[1] && sp[0] <= end {
			return true
		}
	}
	return false
}

// suggestionFor computes the whole-line replacement a fix makes.
func suggestionFor(sources map[string][]byte, changed map[string]LineSet, fx finding.Fix) (Suggestion, bool) {
	if len(fx.Edits) == 0 {
		return Suggestion{}, false
	}
	file := fx.Edits[0].File
	lo, hi := fx.Edits[0].Start, -1
	for _, e := range fx.Edits {
		if e.File != file {
			return Suggestion{}, false
		}
		lo = min(lo, e.Start)
		last := e.Start // the last byte the edit touches, or its insertion point
		if e.End > e.Start {
			last = e.End - 1
		}
		hi = max(hi, last)
	}
	src, ok := sources[file]
	p := path.Clean(strings.ReplaceAll(file, `\`, "/"))
	lines, lok := changed[p]
	if !ok || !lok || len(src) == 0 {
		return Suggestion{}, false
	}
	fixed, err := edit.Apply(src, fx.Edits)
	if err != nil {
		return Suggestion{}, false
	}
	// An insertion at the very end attaches to the last line.
	lo, hi = min(lo, len(src)-1), min(hi, len(src)-1)
	startLine := 1 + bytes.Count(src[:lo], []byte("\n"))
	endLine := 1 + bytes.Count(src[:hi], []byte("\n"))
	for l := startLine; l <= endLine; l++ {
		if !lines.Has(l) {
			return Suggestion{}, false
		}
	}
	lineStart := bytes.LastIndexByte(src[:lo], '\n') + 1
	lineEnd := len(src)
	if i := bytes.IndexByte(src[hi:], '\n'); i >= 0 {
		lineEnd = hi + i + 1
	}
	body := fixed[lineStart : lineEnd+len(fixed)-len(src)]
	if bytes.Equal(body, src[lineStart:lineEnd]) {
		return Suggestion{}, false
	}
	return Suggestion{Path: p, StartLine: startLine, EndLine: endLine, Body: string(body)}, true
}

func suggestionFingerprint(findingFP, body string) string {
	h := sha256.Sum256([]byte(findingFP + "\x00" + body))
	return hex.EncodeToString(h[:16])
}

// fpMarker is the hidden line that carries a suggestion's fingerprint.
const fpMarker = "<!-- gpulint:fp=%s -->"

// fpPattern reads the fingerprint from a review comment's first line (the
// suggested text further down may contain anything).
var fpPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\A\s*<!-- gpulint:fp=([0-9a-f]{8,64}) -->`) })

// commentText renders the review comment of s: the hidden fingerprint,
// the finding, the fix and the suggested change.
func (s Suggestion) commentText() string {
	var b strings.Builder
	fmt.Fprintf(&b, fpMarker+"\n", s.Fingerprint)
	rule := report.EscapeMarkdown(s.Rule)
	if u := docLink(s.DocURL); u != "" {
		rule = "[" + rule + "](" + u + ")"
	}
	fmt.Fprintf(&b, "**%s** %s %s: %s\n\n", s.Severity, rule, report.EscapeMarkdown(s.Slug), report.EscapeMarkdown(s.Message))
	if s.Fix != "" {
		fmt.Fprintf(&b, "Fix: %s\n\n", report.EscapeMarkdown(s.Fix))
	}
	b.WriteString(report.CodeFence(s.Body, "suggestion"))
	return b.String()
}

// docLink keeps only plain https links to rule docs.
func docLink(u string) string {
	if !strings.HasPrefix(u, "https://") || strings.ContainsAny(u, " ()<>\"`\r\n") {
		return ""
	}
	return u
}

// PostSuggestions posts the suggestions not yet on pull request pr as one
// review (event COMMENT) on commitSHA, the head commit the lines refer to.
// Suggestions whose fingerprint an existing review comment carries are
// skipped. If GitHub refuses the review (422, e.g. a line outside the
// diff), the batch is split and retried so that only the refused comments
// are dropped; they count as skipped. A refused write is ErrReadOnlyToken.
func (c *Client) PostSuggestions(ctx context.Context, owner, repo string, pr int, commitSHA string, sugs []Suggestion) (posted, skipped int, err error) {
	op := fmt.Sprintf("review %s/%s#%d", owner, repo, pr)
	if len(sugs) == 0 {
		return 0, 0, nil
	}
	have, err := c.postedFingerprints(ctx, owner, repo, pr)
	if err != nil {
		return 0, 0, c.fail(op, false, err)
	}
	var todo []Suggestion
	for _, s := range sugs {
		if have[s.Fingerprint] {
			skipped++
			continue
		}
		have[s.Fingerprint] = true
		todo = append(todo, s)
	}
	if len(todo) == 0 {
		return 0, skipped, nil
	}
	p, rejected, err := c.postBatch(ctx, op, owner, repo, pr, commitSHA, todo, true)
	return p, skipped + rejected, err
}

// postBatch posts one review with batch, splitting it on 422. After a
// server error it looks at what was posted before trying once more.
func (c *Client) postBatch(ctx context.Context, op, owner, repo string, pr int, sha string, batch []Suggestion, recheck bool) (posted, rejected int, err error) {
	_, _, err = c.gh.PullRequests.CreateReview(ctx, owner, repo, pr, reviewRequest(sha, batch))
	switch status := statusOf(err); {
	case err == nil:
		return len(batch), 0, nil
	case status == 422 && !strings.Contains(err.Error(), "commit_id"):
		if len(batch) == 1 {
			return 0, 1, nil
		}
		mid := len(batch) / 2
		p1, r1, err := c.postBatch(ctx, op, owner, repo, pr, sha, batch[:mid], recheck)
		if err != nil {
			return p1, r1, err
		}
		p2, r2, err := c.postBatch(ctx, op, owner, repo, pr, sha, batch[mid:], recheck)
		return p1 + p2, r1 + r2, err
	case status >= 500 && recheck:
		have, lerr := c.postedFingerprints(ctx, owner, repo, pr)
		if lerr != nil {
			return 0, 0, c.fail(op, false, lerr)
		}
		var rest []Suggestion
		for _, s := range batch {
			if !have[s.Fingerprint] {
				rest = append(rest, s)
			}
		}
		if len(rest) == 0 {
			return len(batch), 0, nil
		}
		p, r, err := c.postBatch(ctx, op, owner, repo, pr, sha, rest, false)
		return len(batch) - len(rest) + p, r, err
	default:
		return 0, 0, c.fail(op, true, err)
	}
}

func reviewRequest(sha string, batch []Suggestion) *gh.PullRequestReviewRequest {
	noun := "fixes"
	if len(batch) == 1 {
		noun = "fix"
	}
	body := fmt.Sprintf("<!-- gpulint:review -->\ngpulint suggests %d %s; each can be committed from its comment.", len(batch), noun)
	req := &gh.PullRequestReviewRequest{CommitID: gh.String(sha), Body: gh.String(body), Event: gh.String("COMMENT")}
	for _, s := range batch {
		dc := &gh.DraftReviewComment{
			Path: gh.String(s.Path), Body: gh.String(s.commentText()),
			Line: gh.Int(s.EndLine), Side: gh.String("RIGHT"),
		}
		if s.StartLine < s.EndLine {
			dc.StartLine, dc.StartSide = gh.Int(s.StartLine), gh.String("RIGHT")
		}
		req.Comments = append(req.Comments, dc)
	}
	return req
}

// postedFingerprints collects the fingerprints in the pull request's
// review comments (gpulint's own, with WithCommentAuthor).
func (c *Client) postedFingerprints(ctx context.Context, owner, repo string, pr int) (map[string]bool, error) {
	have := map[string]bool{}
	opts := &gh.PullRequestListCommentsOptions{ListOptions: gh.ListOptions{PerPage: perPage}}
	for range maxPages {
		comments, resp, err := c.gh.PullRequests.ListComments(ctx, owner, repo, pr, opts)
		if err != nil {
			return nil, err
		}
		for _, cm := range comments {
			if c.author != "" && !strings.EqualFold(cm.GetUser().GetLogin(), c.author) {
				continue
			}
			if m := fpPattern().FindStringSubmatch(cm.GetBody()); m != nil {
				have[m[1]] = true
			}
		}
		if resp.NextPage == 0 {
			return have, nil
		}
		opts.Page = resp.NextPage
	}
	return nil, fmt.Errorf("too many pages of review comments")
}
