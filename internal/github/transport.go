package github

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RetryEvent describes one wait before a retry.
type RetryEvent struct {
	Method  string
	Path    string // URL path, without query or host
	Attempt int    // 1 for the first retry
	Wait    time.Duration
	Reason  string // "secondary rate limit", "rate limit", "server error 502"
}

// String renders the event as one log line.
func (e RetryEvent) String() string {
	return fmt.Sprintf("github: %s on %s %s; retry %d in %s", e.Reason, e.Method, e.Path, e.Attempt, e.Wait)
}

type retryPolicy struct {
	// timeout bounds one attempt, from sending the request to the last
	// byte of the response body; 0 means none.
	timeout    time.Duration
	sleep      func(ctx context.Context, d time.Duration) error
	now        func() time.Time
	maxWait    time.Duration // total per request
	maxRetries int
	notify     func(RetryEvent)
}

// Retry budget. GitHub asks clients that hit a secondary rate limit
// without a Retry-After header to wait at least a minute, and longer on
// each further failure
// (docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api,
// "Exceeding the rate limit").
const (
	// defaultRequestTimeout bounds one attempt, body included. GitHub
	// answers a page of files or comments in well under a second; a
	// minute leaves room for a slow Enterprise Server without letting a
	// stalled connection hold the job until its own timeout (6 hours).
	defaultRequestTimeout = time.Minute
	defaultMaxWait        = 3 * time.Minute
	defaultMaxRetries     = 5
	secondaryFallback     = time.Minute
	serverErrorBackoff    = time.Second
)

func defaultRetryPolicy() retryPolicy {
	return retryPolicy{
		timeout:    defaultRequestTimeout,
		sleep:      sleepContext,
		now:        time.Now,
		maxWait:    defaultMaxWait,
		maxRetries: defaultMaxRetries,
	}
}

func sleepContext(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// retryTransport retries requests that GitHub refused for a rate limit
// (403 or 429 with Retry-After, with x-ratelimit-remaining: 0 and a reset
// time, or naming a secondary rate limit) and idempotent requests that
// met a server error. A POST that met a server error is not retried here,
// since it may have taken effect; the callers check and retry themselves.
type retryTransport struct {
	base   http.RoundTripper
	policy retryPolicy
}

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var waited time.Duration
	for attempt := 1; ; attempt++ {
		r := req
		if attempt > 1 {
			var err error
			if r, err = rewind(req); err != nil {
				return nil, err
			}
		}
		resp, err := t.attempt(r)
		if err != nil {
			return nil, err
		}
		wait, reason := t.retryAfter(req, resp, attempt)
		if reason == "" || attempt > t.policy.maxRetries || waited+wait > t.policy.maxWait ||
			(req.Body != nil && req.GetBody == nil) {
			return resp, nil
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		if t.policy.notify != nil {
			t.policy.notify(RetryEvent{Method: req.Method, Path: req.URL.Path, Attempt: attempt, Wait: wait, Reason: reason})
		}
		if err := t.policy.sleep(req.Context(), wait); err != nil {
			return nil, err
		}
		waited += wait
	}
}

// attempt sends req once under the per-attempt timeout, which keeps
// running while the caller reads the body: a server that sends headers
// and then trickles the body is cut off as one that never answers.
func (t *retryTransport) attempt(req *http.Request) (*http.Response, error) {
	if t.policy.timeout <= 0 {
		return t.base.RoundTrip(req)
	}
	ctx, cancel := context.WithTimeout(req.Context(), t.policy.timeout)
	resp, err := t.base.RoundTrip(req.WithContext(ctx))
	if err != nil {
		err = t.timedOut(ctx, req, err)
		cancel()
		return nil, err
	}
	resp.Body = &deadlineBody{body: resp.Body, ctx: ctx, cancel: cancel, t: t, req: req}
	return resp, nil
}

// timedOut returns err as a TimeoutError when the attempt's own timeout,
// not the caller's context, ended it.
func (t *retryTransport) timedOut(ctx context.Context, req *http.Request, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) && req.Context().Err() == nil {
		return &TimeoutError{Method: req.Method, Path: req.URL.Path, Timeout: t.policy.timeout, Err: err}
	}
	return err
}

// deadlineBody is a response body read under its attempt's timeout; Close
// releases the timer.
type deadlineBody struct {
	body   io.ReadCloser
	ctx    context.Context
	cancel context.CancelFunc
	t      *retryTransport
	req    *http.Request
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.body.Read(p)
	if err != nil && err != io.EOF {
		err = b.t.timedOut(b.ctx, b.req, err)
	}
	return n, err
}

func (b *deadlineBody) Close() error {
	defer b.cancel()
	return b.body.Close()
}

// TimeoutError says that one request got no complete answer, headers and
// body, within the per-request timeout. errors.Is(err, ErrTimeout) holds.
type TimeoutError struct {
	Method, Path string
	Timeout      time.Duration
	Err          error
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("github: %s %s: %s: no complete answer within %s", e.Method, e.Path, ErrTimeout, e.Timeout)
}

func (e *TimeoutError) Unwrap() []error { return []error{ErrTimeout, e.Err} }

// rewind returns a copy of req with a fresh body.
func rewind(req *http.Request) (*http.Request, error) {
	r := req.Clone(req.Context())
	if req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			return nil, fmt.Errorf("github: replay request body: %w", err)
		}
		r.Body = body
	}
	return r, nil
}

// retryAfter decides whether resp is worth retrying and after how long;
// reason is "" when it is not.
func (t *retryTransport) retryAfter(req *http.Request, resp *http.Response, attempt int) (time.Duration, string) {
	h := resp.Header
	switch code := resp.StatusCode; {
	case code == http.StatusForbidden || code == http.StatusTooManyRequests:
		if d, ok := parseRetryAfter(h.Get("Retry-After"), t.policy.now()); ok {
			return d, "secondary rate limit"
		}
		if h.Get("X-RateLimit-Remaining") == "0" {
			if reset, err := strconv.ParseInt(h.Get("X-RateLimit-Reset"), 10, 64); err == nil {
				// One second past the reset, as the reset is rounded down.
				return max(time.Unix(reset, 0).Sub(t.policy.now())+time.Second, time.Second), "rate limit"
			}
		}
		if mentionsSecondaryLimit(resp) {
			return secondaryFallback << (attempt - 1), "secondary rate limit"
		}
	case code >= 500 && code <= 599 && idempotent(req.Method):
		if d, ok := parseRetryAfter(h.Get("Retry-After"), t.policy.now()); ok {
			return d, fmt.Sprintf("server error %d", code)
		}
		return serverErrorBackoff << (attempt - 1), fmt.Sprintf("server error %d", code)
	}
	return 0, ""
}

func idempotent(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

// parseRetryAfter reads a Retry-After header: seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return time.Duration(n) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(at.Sub(now), 0), true
	}
	return 0, false
}

// mentionsSecondaryLimit peeks at the body of a refusal for GitHub's
// secondary rate limit message, leaving the body readable.
func mentionsSecondaryLimit(resp *http.Response) bool {
	orig := resp.Body
	data, err := io.ReadAll(io.LimitReader(orig, 64<<10))
	resp.Body = readCloser{io.MultiReader(bytes.NewReader(data), orig), orig}
	return err == nil && bytes.Contains(bytes.ToLower(data), []byte("secondary rate limit"))
}

type readCloser struct {
	io.Reader
	io.Closer
}
