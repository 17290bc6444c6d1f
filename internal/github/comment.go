package github

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	gh "github.com/google/go-github/v62/github"

	"github.com/gpulint/gpulint/internal/report"
)

// Marker is the hidden first line of gpulint's pull request comment; the
// comment carrying it is updated in place on every run.
const Marker = "<!-- gpulint:comment -->"

// MaxCommentLen is GitHub's limit on a comment body ("Body is too long
// (maximum is 65536 characters)", the API's 422 answer). CommentBody
// stays within it counted in bytes, so it holds however GitHub counts.
const MaxCommentLen = 65536

// CommentOptions shape CommentBody.
type CommentOptions struct {
	// Repo ("owner/name") and SHA (the head commit) link each file:line
	// to the file on GitHub when both are set.
	Repo string
	SHA  string
	// ServerURL is the GitHub web root; empty means https://github.com.
	ServerURL string
	// MaxLen caps the body in bytes; 0 means MaxCommentLen.
	MaxLen int
}

// CommentBody renders the sticky comment: the marker, then the Markdown
// report (summary table, findings linked to the head commit, fixes as
// collapsed diffs, rule links), or an all-clear line when nothing was
// found. Findings that do not fit in MaxLen are dropped and counted.
func CommentBody(in report.Input, o CommentOptions) string {
	return report.MarkdownBody(in, report.MarkdownOptions{
		Header: Marker, Repo: o.Repo, SHA: o.SHA, ServerURL: o.ServerURL,
		MaxLen: cmp.Or(o.MaxLen, MaxCommentLen),
	})
}

// CommentAction says what UpsertComment did.
type CommentAction string

// Comment actions.
const (
	CommentCreated   CommentAction = "created"
	CommentUpdated   CommentAction = "updated"
	CommentUnchanged CommentAction = "unchanged"
)

// CommentResult describes the sticky comment after UpsertComment.
type CommentResult struct {
	ID     int64
	URL    string
	Action CommentAction
}

// UpsertComment keeps exactly one gpulint comment on pull request pr: it
// finds the oldest comment whose body starts with Marker (paging through
// all comments, and, with WithCommentAuthor, only that author's), updates
// it when body differs, and otherwise creates one. body gets the marker
// put first if it lacks it. A refused write is ErrReadOnlyToken.
func (c *Client) UpsertComment(ctx context.Context, owner, repo string, pr int, body string) (CommentResult, error) {
	op := fmt.Sprintf("comment on %s/%s#%d", owner, repo, pr)
	if !strings.HasPrefix(body, Marker) {
		body = Marker + "\n" + body
	}
	if n := utf8.RuneCountInString(body); n > MaxCommentLen {
		return CommentResult{}, fmt.Errorf("%s: the body has %d characters, GitHub takes at most %d", op, n, MaxCommentLen)
	}
	existing, err := c.findComment(ctx, owner, repo, pr)
	if err != nil {
		return CommentResult{}, c.fail(op, false, err)
	}
	if existing == nil {
		created, _, err := c.gh.Issues.CreateComment(ctx, owner, repo, pr, &gh.IssueComment{Body: &body})
		if err != nil && statusOf(err) >= 500 {
			// The comment may exist despite the error: look before
			// trying again, so there is never a second one.
			existing, err = c.findComment(ctx, owner, repo, pr)
			if err == nil && existing == nil {
				created, _, err = c.gh.Issues.CreateComment(ctx, owner, repo, pr, &gh.IssueComment{Body: &body})
			}
		}
		if err != nil {
			return CommentResult{}, c.fail(op, true, err)
		}
		if existing == nil {
			return CommentResult{ID: created.GetID(), URL: created.GetHTMLURL(), Action: CommentCreated}, nil
		}
	}
	res := CommentResult{ID: existing.GetID(), URL: existing.GetHTMLURL(), Action: CommentUnchanged}
	if normalizeNewlines(existing.GetBody()) == normalizeNewlines(body) {
		return res, nil
	}
	if _, _, err := c.gh.Issues.EditComment(ctx, owner, repo, existing.GetID(), &gh.IssueComment{Body: &body}); err != nil {
		return CommentResult{}, c.fail(op, true, err)
	}
	res.Action = CommentUpdated
	return res, nil
}

// findComment returns the oldest of gpulint's comments, or nil.
func (c *Client) findComment(ctx context.Context, owner, repo string, pr int) (*gh.IssueComment, error) {
	opts := &gh.IssueListCommentsOptions{ListOptions: gh.ListOptions{PerPage: perPage}}
	var oldest *gh.IssueComment
	for range maxPages {
		comments, resp, err := c.gh.Issues.ListComments(ctx, owner, repo, pr, opts)
		if err != nil {
			return nil, err
		}
		for _, cm := range comments {
			if !c.ours(cm.GetBody(), cm.GetUser().GetLogin(), Marker) {
				continue
			}
			if oldest == nil || older(cm, oldest) {
				oldest = cm
			}
		}
		if resp.NextPage == 0 {
			return oldest, nil
		}
		opts.Page = resp.NextPage
	}
	return nil, errors.New("too many pages of comments")
}

// ours reports whether a comment body starts with marker and, when an
// author is configured, was written by that author.
func (c *Client) ours(body, login, marker string) bool {
	if !strings.HasPrefix(strings.TrimLeft(body, " \t\r\n"), marker) {
		return false
	}
	return c.author == "" || strings.EqualFold(login, c.author)
}

func older(a, b *gh.IssueComment) bool {
	ta, tb := a.GetCreatedAt().Time, b.GetCreatedAt().Time
	if !ta.Equal(tb) {
		return ta.Before(tb)
	}
	return a.GetID() < b.GetID()
}

func normalizeNewlines(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") }
