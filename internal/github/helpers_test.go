package github

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpulint/gpulint/internal/github/githubtest"
)

// recorder collects what a client did besides its results: the waits it
// asked for and the retry events it reported, so tests can check them and
// scan them for the token.
type recorder struct {
	mu     sync.Mutex
	waits  []time.Duration
	events []string
}

func (r *recorder) sleep(_ context.Context, d time.Duration) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.waits = append(r.waits, d)
	return nil
}

func (r *recorder) notify(e RetryEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e.String())
}

// newTestClient returns a client for srv whose waits return at once.
func newTestClient(t *testing.T, srv *githubtest.Server, token string, opts ...Option) (*Client, *recorder) {
	t.Helper()
	rec := &recorder{}
	opts = append([]Option{WithSleep(rec.sleep), WithRetryNotify(rec.notify)}, opts...)
	c, err := NewClient(nil, token, srv.URL, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c, rec
}

// assertNoToken fails if the token shows in any error, log line, request
// body, comment or review the test produced.
func assertNoToken(t *testing.T, token string, srv *githubtest.Server, rec *recorder, errs ...error) {
	t.Helper()
	var texts []string
	for _, err := range errs {
		if err != nil {
			texts = append(texts, err.Error(), fmt.Sprintf("%+v", err))
		}
	}
	if rec != nil {
		texts = append(texts, rec.events...)
	}
	if srv != nil {
		st := srv.State()
		for _, r := range st.Requests {
			texts = append(texts, r.Path, r.Query, r.Body)
		}
		for _, c := range st.Comments {
			texts = append(texts, c.Body)
		}
		for _, c := range st.ReviewComments {
			texts = append(texts, c.Body)
		}
		for _, r := range st.Reviews {
			texts = append(texts, r.Body)
		}
	}
	for _, s := range texts {
		if strings.Contains(s, token) {
			t.Errorf("the token leaked into %q", s)
		}
	}
}

// calls lists the fake's requests as "METHOD path?query status".
func calls(srv *githubtest.Server) []string {
	var out []string
	for _, r := range srv.Requests() {
		s := r.Method + " " + r.Path
		if r.Query != "" {
			s += "?" + r.Query
		}
		out = append(out, fmt.Sprintf("%s %d", s, r.Status))
	}
	return out
}

// isKind reports whether err is of the given kind.
func isKind(err error, kind error) bool { return err != nil && errors.Is(err, kind) }
