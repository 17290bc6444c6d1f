// Package githubtest is an in-memory fake of the parts of the GitHub REST
// API that gpulint's Action uses: pull request files, issue comments, pull
// request review comments and reviews. It answers as the real API does
// (status codes, error bodies, Link pagination, Bearer authentication), can
// be told to misbehave (rate limits, a read-only token, server errors), and
// records every request.
//
// Tests use NewServer; a helper binary can serve NewFake as a plain
// http.Handler and read the state back from GET /_githubtest/state.
package githubtest

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"
)

// DefaultToken is the token the fake accepts unless WithToken says
// otherwise.
const DefaultToken = "ghs_fakeTokenForTests0123456789abcdef"

// StatePath serves the fake's State as JSON, without authentication.
const StatePath = "/_githubtest/state"

// File is one file of a pull request, as the files endpoint lists it.
type File struct {
	Filename         string `json:"filename"`
	Status           string `json:"status"` // added, modified, removed, renamed
	Patch            string `json:"patch,omitempty"`
	PreviousFilename string `json:"previous_filename,omitempty"`
}

// User is the author of a comment or review.
type User struct {
	Login string `json:"login"`
	Type  string `json:"type"` // User or Bot
}

// Comment is an issue comment on a pull request.
type Comment struct {
	ID        int64     `json:"id"`
	Owner     string    `json:"owner"`
	Repo      string    `json:"repo"`
	Number    int       `json:"number"`
	Body      string    `json:"body"`
	User      User      `json:"user"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Review is a pull request review.
type Review struct {
	ID       int64  `json:"id"`
	Owner    string `json:"owner"`
	Repo     string `json:"repo"`
	Number   int    `json:"number"`
	CommitID string `json:"commit_id"`
	Body     string `json:"body"`
	Event    string `json:"event"`
	User     User   `json:"user"`
}

// ReviewComment is a comment a review left on a line range of the diff.
type ReviewComment struct {
	ID        int64  `json:"id"`
	ReviewID  int64  `json:"review_id"`
	Owner     string `json:"owner"`
	Repo      string `json:"repo"`
	Number    int    `json:"number"`
	Path      string `json:"path"`
	StartLine int    `json:"start_line,omitempty"`
	Line      int    `json:"line"`
	Side      string `json:"side"`
	CommitID  string `json:"commit_id"`
	Body      string `json:"body"`
	User      User   `json:"user"`
}

// Request is one request the fake received. The Authorization header is
// not kept.
type Request struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	Query  string `json:"query,omitempty"`
	Body   string `json:"body,omitempty"`
	Status int    `json:"status"`
}

// State is everything the fake holds, in creation order.
type State struct {
	Comments       []Comment       `json:"comments"`
	Reviews        []Review        `json:"reviews"`
	ReviewComments []ReviewComment `json:"review_comments"`
	Requests       []Request       `json:"requests"`
}

type prKey struct {
	owner, repo string
	number      int
}

type pullRequest struct {
	headSHA string
	files   []File
}

// Fake is the fake API. It is an http.Handler and safe for concurrent
// use.
type Fake struct {
	mu     sync.Mutex
	token  string
	user   User
	prs    map[prKey]*pullRequest
	state  State
	nextID int64
	epoch  time.Time

	readOnly        bool
	secondaryLeft   int
	retryAfter      int
	primaryLeft     int
	primaryReset    time.Time
	serverErrLeft   int
	serverErrCode   int
	serverErrMethod string
	lostLeft        int
	mux             *http.ServeMux
}

// Option configures a Fake.
type Option func(*Fake)

// WithToken sets the only token the fake accepts (as "Bearer <token>").
func WithToken(token string) Option { return func(f *Fake) { f.token = token } }

// WithPullRequest adds a pull request with its head commit and files.
func WithPullRequest(owner, repo string, number int, headSHA string, files ...File) Option {
	return func(f *Fake) {
		f.prs[prKey{owner, repo, number}] = &pullRequest{headSHA: headSHA, files: slices.Clone(files)}
	}
}

// WithComment adds an existing issue comment by someone else.
func WithComment(owner, repo string, number int, author User, body string) Option {
	return func(f *Fake) {
		f.state.Comments = append(f.state.Comments, f.newComment(owner, repo, number, author, body))
	}
}

// WithSecondaryRateLimit answers the first n requests with 403, a
// secondary rate limit message and Retry-After: retryAfter (seconds).
func WithSecondaryRateLimit(n, retryAfter int) Option {
	return func(f *Fake) { f.secondaryLeft, f.retryAfter = n, retryAfter }
}

// WithPrimaryRateLimit answers the first n requests with 403,
// x-ratelimit-remaining: 0 and x-ratelimit-reset: reset.
func WithPrimaryRateLimit(n int, reset time.Time) Option {
	return func(f *Fake) { f.primaryLeft, f.primaryReset = n, reset }
}

// WithReadOnlyToken answers every write with 403 "Resource not accessible
// by integration", as GitHub does for a fork pull request's token.
func WithReadOnlyToken() Option { return func(f *Fake) { f.readOnly = true } }

// WithServerErrors answers the first n requests with the given method
// ("" for any) with the given 5xx status, after authentication and rate
// limits, without acting on them.
func WithServerErrors(method string, n, status int) Option {
	return func(f *Fake) { f.serverErrMethod, f.serverErrLeft, f.serverErrCode = method, n, status }
}

// WithLostResponses makes the first n successful writes (POST, PATCH)
// take effect but answer 502, as when GitHub's response is lost on the
// way back.
func WithLostResponses(n int) Option { return func(f *Fake) { f.lostLeft = n } }

// NewFake returns a fake API with the given options.
func NewFake(opts ...Option) *Fake {
	f := &Fake{
		token: DefaultToken,
		user:  User{Login: "github-actions[bot]", Type: "Bot"},
		prs:   map[prKey]*pullRequest{},
		epoch: time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC),
	}
	for _, o := range opts {
		o(f)
	}
	f.routes()
	return f
}

// Server is a Fake served over HTTP for the length of a test.
type Server struct {
	*Fake
	// URL is the API base URL, ending in a slash.
	URL string
}

// NewServer starts a fake API that stops when the test ends.
func NewServer(t testing.TB, opts ...Option) *Server {
	t.Helper()
	f := NewFake(opts...)
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return &Server{Fake: f, URL: srv.URL + "/"}
}

// State returns a copy of everything the fake holds.
func (f *Fake) State() State {
	f.mu.Lock()
	defer f.mu.Unlock()
	return State{
		Comments:       slices.Clone(f.state.Comments),
		Reviews:        slices.Clone(f.state.Reviews),
		ReviewComments: slices.Clone(f.state.ReviewComments),
		Requests:       slices.Clone(f.state.Requests),
	}
}

// Comments returns the issue comments on all pull requests.
func (f *Fake) Comments() []Comment { return f.State().Comments }

// Reviews returns the reviews on all pull requests.
func (f *Fake) Reviews() []Review { return f.State().Reviews }

// ReviewComments returns the review comments on all pull requests.
func (f *Fake) ReviewComments() []ReviewComment { return f.State().ReviewComments }

// Requests returns every request received so far.
func (f *Fake) Requests() []Request { return f.State().Requests }

// newComment builds a comment with the next id; f.mu must be held or f
// not yet shared.
func (f *Fake) newComment(owner, repo string, number int, author User, body string) Comment {
	f.nextID++
	at := f.epoch.Add(time.Duration(f.nextID) * time.Minute)
	return Comment{ID: f.nextID, Owner: owner, Repo: repo, Number: number, Body: body, User: author, CreatedAt: at, UpdatedAt: at}
}
