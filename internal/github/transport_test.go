package github

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpulint/gpulint/internal/github/githubtest"
)

func TestRetries(t *testing.T) {
	now := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name      string
		fault     githubtest.Option
		opts      []Option
		wantWaits []time.Duration
		wantErr   error // nil: the comment is created
	}{
		{
			name:      "secondary rate limit with Retry-After",
			fault:     githubtest.WithSecondaryRateLimit(2, 7),
			wantWaits: []time.Duration{7 * time.Second, 7 * time.Second},
		},
		{
			name:      "primary rate limit waits for the reset",
			fault:     githubtest.WithPrimaryRateLimit(1, now.Add(42*time.Second)),
			opts:      []Option{WithClock(func() time.Time { return now })},
			wantWaits: []time.Duration{43 * time.Second},
		},
		{
			name:      "server errors on reads back off",
			fault:     githubtest.WithServerErrors(http.MethodGet, 3, http.StatusBadGateway),
			wantWaits: []time.Duration{time.Second, 2 * time.Second, 4 * time.Second},
		},
		{
			name:      "a wait past the budget is not started",
			fault:     githubtest.WithSecondaryRateLimit(1, 600),
			wantWaits: nil,
			wantErr:   ErrRateLimited,
		},
		{
			name:      "the budget is shared by one request's retries",
			fault:     githubtest.WithSecondaryRateLimit(10, 50),
			opts:      []Option{WithMaxWait(2 * time.Minute)},
			wantWaits: []time.Duration{50 * time.Second, 50 * time.Second},
			wantErr:   ErrRateLimited,
		},
		{
			name:      "retries are bounded",
			fault:     githubtest.WithSecondaryRateLimit(100, 1),
			wantWaits: []time.Duration{time.Second, time.Second, time.Second, time.Second, time.Second},
			wantErr:   ErrRateLimited,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := githubtest.NewServer(t, githubtest.WithPullRequest(owner, repo, prNum, head), tc.fault)
			c, rec := newTestClient(t, srv, githubtest.DefaultToken, tc.opts...)
			_, err := c.UpsertComment(context.Background(), owner, repo, prNum, Marker+"\nreport")
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.wantWaits, rec.waits); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
			if len(rec.events) != len(rec.waits) {
				t.Errorf("%d retry events for %d waits", len(rec.events), len(rec.waits))
			}
			if tc.wantErr == nil {
				if diff := cmp.Diff([]string{Marker + "\nreport"}, bodies(srv.Comments())); diff != "" {
					t.Errorf("comments (-want +got):\n%s", diff)
				}
			}
			assertNoToken(t, githubtest.DefaultToken, srv, rec, err)
		})
	}
}

// TestRetryReplaysBody rate-limits the write itself and checks that the
// retried POST carries the whole body again.
func TestRetryReplaysBody(t *testing.T) {
	var attempts []string
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte("[]"))
			return
		}
		var in struct{ Body string }
		_ = json.NewDecoder(r.Body).Decode(&in)
		attempts = append(attempts, in.Body)
		if len(attempts) == 1 {
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(`{"message":"You have exceeded a secondary rate limit."}`))
			return
		}
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"id":1}`))
	})
	srv := httptest.NewServer(api)
	defer srv.Close()
	rec := &recorder{}
	c, err := NewClient(srv.Client(), "ghs_someTokenValue123", srv.URL, WithSleep(rec.sleep))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.UpsertComment(context.Background(), owner, repo, prNum, Marker+"\nbody"); err != nil {
		t.Fatal(err)
	}
	want := []string{Marker + "\nbody", Marker + "\nbody"}
	if diff := cmp.Diff(want, attempts); diff != "" {
		t.Errorf("POST bodies (-want +got):\n%s", diff)
	}
	// No Retry-After: GitHub asks for at least a minute.
	if diff := cmp.Diff([]time.Duration{time.Minute}, rec.waits); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}
}

// TestErrorsNeverCarryTheToken talks to a server that echoes the
// Authorization header into its error messages.
func TestErrorsNeverCarryTheToken(t *testing.T) {
	const token = "ghp_secretTokenThatMustNotLeak42"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]string{"message": "bad request with " + r.Header.Get("Authorization")})
	}))
	defer srv.Close()
	c, err := NewClient(nil, token, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, err1 := c.ChangedFiles(ctx, owner, repo, prNum)
	_, err2 := c.UpsertComment(ctx, owner, repo, prNum, "x")
	_, _, err3 := c.PostSuggestions(ctx, owner, repo, prNum, head, []Suggestion{{Path: "a", StartLine: 1, EndLine: 1, Fingerprint: "0123456789abcdef"}})
	for _, err := range []error{err1, err2, err3} {
		if err == nil {
			t.Fatal("want an error")
		}
		if !strings.Contains(err.Error(), "[REDACTED]") {
			t.Errorf("error %q: the echo was not redacted", err)
		}
	}
	assertNoToken(t, token, nil, nil, err1, err2, err3)
}

func TestNewClientChecksArguments(t *testing.T) {
	tests := []struct {
		name, token, url, wantErr string
	}{
		{name: "no token", token: " ", wantErr: "no token"},
		{name: "token with a newline", token: "abc\nAuthorization: x", wantErr: "white space"},
		{name: "credentials in the URL", token: "t0k3n-value", url: "https://user:pw@ghe.example.com/api/v3", wantErr: "credentials"},
		{name: "not http", token: "t0k3n-value", url: "ftp://ghe.example.com/", wantErr: "http"},
		{name: "default URL", token: "t0k3n-value"},
		{name: "GHES URL without slash", token: "t0k3n-value", url: "https://ghe.example.com/api/v3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := NewClient(nil, tc.token, tc.url)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one mentioning %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "pw") && strings.Contains(err.Error(), "user:pw") {
					t.Errorf("error %q shows the URL's password", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(c.gh.BaseURL.String(), "/") {
				t.Errorf("base URL %s lacks its trailing slash", c.gh.BaseURL)
			}
		})
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"", 0, false},
		{"30", 30 * time.Second, true},
		{"0", 0, true},
		{"-5", 0, false},
		{"Wed, 01 May 2024 12:00:10 GMT", 10 * time.Second, true},
		{"Wed, 01 May 2024 11:00:00 GMT", 0, true},
		{"soon", 0, false},
	}
	for _, tc := range tests {
		got, ok := parseRetryAfter(tc.in, now)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseRetryAfter(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}
