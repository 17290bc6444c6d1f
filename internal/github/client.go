// Package github keeps gpulint's pull request feedback on GitHub: it lists
// a pull request's changed lines, keeps one sticky comment with the report
// and posts fixes as review suggestions. It wraps go-github with retries
// for rate limits and server errors, and with errors that say what went
// wrong in the reader's terms, never carrying the token.
package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	gh "github.com/google/go-github/v62/github"
)

// DefaultAPIURL is the REST API of github.com.
const DefaultAPIURL = "https://api.github.com/"

// Error is a kind of failure a caller may want to act on; compare with
// errors.Is.
type Error string

func (e Error) Error() string { return string(e) }

// Failure kinds.
const (
	// ErrUnauthorized: GitHub answered 401.
	ErrUnauthorized Error = "the token was rejected"
	// ErrNotFound: GitHub answered 404, which it also does for private
	// repositories the token cannot see.
	ErrNotFound Error = "repository or pull request not found, or the token cannot see it"
	// ErrReadOnlyToken: a write was refused with 403, as for the
	// read-only token of a pull request from a fork ("Resource not
	// accessible by integration"). Callers may log it and go on.
	ErrReadOnlyToken Error = "the token may not write to this pull request (pull requests from forks get a read-only token)"
	// ErrForbidden: a read was refused with 403.
	ErrForbidden Error = "the token lacks a permission this needs"
	// ErrRateLimited: a rate limit did not clear within the retry budget.
	ErrRateLimited Error = "GitHub's rate limit did not clear in time"
	// ErrTimeout: a request got no complete answer within the
	// per-request timeout (WithRequestTimeout); see TimeoutError.
	ErrTimeout Error = "GitHub did not answer in time"
)

// Client talks to one GitHub API on behalf of one token.
type Client struct {
	gh *gh.Client
	// redact removes the token from error text; the token itself is not
	// kept in a field, so printing a Client cannot show it.
	redact func(string) string
	// author, when set, is the login whose comments count as gpulint's.
	author string
}

// config collects NewClient's options.
type config struct {
	retry  retryPolicy
	author string
}

// Option adjusts a Client.
type Option func(*config)

// WithSleep replaces the function that waits between retries (tests pass
// one that records the wait and returns at once). It must return the
// context's error if the context ends first.
func WithSleep(sleep func(ctx context.Context, d time.Duration) error) Option {
	return func(c *config) { c.retry.sleep = sleep }
}

// WithClock replaces time.Now for computing waits until a rate limit's
// reset time.
func WithClock(now func() time.Time) Option { return func(c *config) { c.retry.now = now } }

// WithMaxWait caps the total time one request may spend waiting between
// retries (default 3 minutes). A wait that would pass the cap is not
// started; the request fails with ErrRateLimited or the server error.
func WithMaxWait(d time.Duration) Option { return func(c *config) { c.retry.maxWait = d } }

// WithRequestTimeout bounds each attempt of a request, from sending it to
// reading the last byte of the answer (default 1 minute; 0 means none).
// Unlike a transport's ResponseHeaderTimeout it also ends a body that
// trickles in. The waits between retries are bounded by WithMaxWait.
func WithRequestTimeout(d time.Duration) Option { return func(c *config) { c.retry.timeout = d } }

// WithRetryNotify calls notify before each wait, so the caller can log
// progress. The event carries no credentials.
func WithRetryNotify(notify func(RetryEvent)) Option {
	return func(c *config) { c.retry.notify = notify }
}

// WithCommentAuthor makes only comments by this login count as gpulint's
// own (for UpsertComment and the suggestions already posted). Without it,
// any comment that starts with the marker counts.
func WithCommentAuthor(login string) Option { return func(c *config) { c.author = login } }

// responseTimeout bounds the wait for one response's headers; the
// per-request timeout (WithRequestTimeout) bounds the whole answer.
const responseTimeout = time.Minute

// NewClient returns a client for the REST API at apiBaseURL (empty means
// DefaultAPIURL; GitHub Enterprise Server's is https://HOST/api/v3/) that
// authenticates with token as "Authorization: Bearer <token>". httpClient
// may be nil; its transport is wrapped, not changed. A Timeout on it
// covers retries and their waits too.
func NewClient(httpClient *http.Client, token, apiBaseURL string, opts ...Option) (*Client, error) {
	if strings.TrimSpace(token) == "" {
		return nil, errors.New("github client: no token given")
	}
	if strings.ContainsAny(token, " \t\r\n") {
		return nil, errors.New("github client: the token contains white space")
	}
	base, err := parseBaseURL(apiBaseURL)
	if err != nil {
		return nil, err
	}
	cfg := config{retry: defaultRetryPolicy()}
	for _, o := range opts {
		o(&cfg)
	}
	// No overall client timeout by default: it would also cut short the
	// waits between retries. Each attempt still gives up on a server
	// that does not answer; the caller's context bounds the whole.
	hc := &http.Client{}
	if httpClient != nil {
		copied := *httpClient
		hc = &copied
	}
	inner := hc.Transport
	if inner == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.ResponseHeaderTimeout = responseTimeout
		inner = t
	}
	hc.Transport = &retryTransport{base: inner, policy: cfg.retry}
	c := gh.NewClient(hc).WithAuthToken(token)
	c.BaseURL = base
	c.UserAgent = "gpulint"
	return &Client{
		gh:     c,
		redact: func(s string) string { return strings.ReplaceAll(s, token, "[REDACTED]") },
		author: cfg.author,
	}, nil
}

func parseBaseURL(raw string) (*url.URL, error) {
	if raw == "" {
		raw = DefaultAPIURL
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("github api url: %w", err)
	}
	if (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("github api url %q: want an http or https URL", u.Redacted())
	}
	if u.User != nil {
		return nil, fmt.Errorf("github api url %q: credentials belong in the token, not the URL", u.Redacted())
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	return u, nil
}

// fail turns a go-github error into one that names the operation, says
// what went wrong in the reader's terms (errors.Is with the Err* kinds),
// keeps the original for errors.As, and never contains the token.
func (c *Client) fail(op string, write bool, err error) error {
	if err == nil {
		return nil
	}
	var kind Error
	var rl *gh.RateLimitError
	var abuse *gh.AbuseRateLimitError
	var resp *gh.ErrorResponse
	switch {
	case errors.As(err, &rl), errors.As(err, &abuse):
		kind = ErrRateLimited
	case errors.As(err, &resp) && resp.Response != nil:
		switch resp.Response.StatusCode {
		case http.StatusUnauthorized:
			kind = ErrUnauthorized
		case http.StatusNotFound:
			kind = ErrNotFound
		case http.StatusForbidden:
			kind = ErrForbidden
			if write {
				kind = ErrReadOnlyToken
			}
		}
	}
	if kind != "" {
		err = fmt.Errorf("%s: %w (%w)", op, kind, err)
	} else {
		err = fmt.Errorf("%s: %w", op, err)
	}
	if msg := c.redact(err.Error()); msg != err.Error() {
		return &redactedError{msg: msg, err: err}
	}
	return err
}

// redactedError shows a message with the token removed while keeping the
// error chain for errors.Is and errors.As.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// statusOf returns the HTTP status behind a go-github error, or 0.
func statusOf(err error) int {
	var resp *gh.ErrorResponse
	if errors.As(err, &resp) && resp.Response != nil {
		return resp.Response.StatusCode
	}
	return 0
}
