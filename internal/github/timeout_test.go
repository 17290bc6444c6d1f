package github

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestRequestTimeout: a request that gets no complete answer within the
// per-request timeout fails with ErrTimeout, whether the server never
// sends headers or sends them and then trickles the body byte by byte
// (which a transport's ResponseHeaderTimeout alone lets run forever).
func TestRequestTimeout(t *testing.T) {
	const timeout = 300 * time.Millisecond
	tests := []struct {
		name    string
		handler http.HandlerFunc
	}{
		{"no headers", func(w http.ResponseWriter, r *http.Request) {
			<-r.Context().Done()
		}},
		{"body trickles", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write([]byte("["))
			for {
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
					return
				case <-time.After(20 * time.Millisecond):
				}
				if _, err := w.Write([]byte(" ")); err != nil {
					return
				}
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.handler)
			defer srv.Close()
			c, err := NewClient(nil, "ghs_token", srv.URL, WithRequestTimeout(timeout))
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, err = c.ChangedFiles(context.Background(), "o", "r", 1)
			took := time.Since(start)
			if !errors.Is(err, ErrTimeout) {
				t.Fatalf("err = %v, want ErrTimeout", err)
			}
			var te *TimeoutError
			if !errors.As(err, &te) || te.Timeout != timeout || !strings.Contains(te.Path, "/repos/o/r/pulls/1/files") {
				t.Errorf("err = %v, want a TimeoutError naming the request and %s", err, timeout)
			}
			if took > 10*timeout {
				t.Errorf("took %s with a timeout of %s", took, timeout)
			}
		})
	}
}

// TestRequestTimeoutDefault: without the option every attempt is still
// bounded, body included.
func TestRequestTimeoutDefault(t *testing.T) {
	if defaultRetryPolicy().timeout != defaultRequestTimeout || defaultRequestTimeout <= 0 {
		t.Errorf("default per-request timeout %s, want defaultRequestTimeout (%s) > 0", defaultRetryPolicy().timeout, defaultRequestTimeout)
	}
}
