package githubtest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func do(t *testing.T, method, url, auth, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp, string(data)
}

// TestPlainHandler serves the fake without testing.TB, as a helper binary
// would, and reads its state back over HTTP.
func TestPlainHandler(t *testing.T) {
	f := NewFake(WithToken("tok-123456"), WithPullRequest("o", "r", 1, "sha1"))
	srv := httptest.NewServer(f)
	defer srv.Close()

	tests := []struct {
		name, method, path, auth, body string
		wantStatus                     int
		wantBody                       string // a substring
	}{
		{"no token", "GET", "/repos/o/r/issues/1/comments", "", "", 401, "Bad credentials"},
		{"wrong token", "GET", "/repos/o/r/issues/1/comments", "Bearer nope", "", 401, "Bad credentials"},
		{"token scheme", "GET", "/repos/o/r/issues/1/comments", "token tok-123456", "", 200, "[]"},
		{"unknown pull request", "GET", "/repos/o/r/pulls/2/files", "Bearer tok-123456", "", 404, "Not Found"},
		{"unknown endpoint", "GET", "/user", "Bearer tok-123456", "", 404, "Not Found"},
		{"create", "POST", "/repos/o/r/issues/1/comments", "Bearer tok-123456", `{"body":"hi"}`, 201, `"body":"hi"`},
		{"enterprise prefix", "GET", "/api/v3/repos/o/r/issues/1/comments", "Bearer tok-123456", "", 200, `"body":"hi"`},
		{"bad JSON", "POST", "/repos/o/r/issues/1/comments", "Bearer tok-123456", `{`, 400, "Problems parsing JSON"},
		{"no body", "POST", "/repos/o/r/issues/1/comments", "Bearer tok-123456", `{}`, 422, "body is missing"},
		{"too long", "POST", "/repos/o/r/issues/1/comments", "Bearer tok-123456", `{"body":"` + strings.Repeat("é", 65537) + `"}`, 422, "maximum is 65536"},
		{"edit", "PATCH", "/repos/o/r/issues/comments/1", "Bearer tok-123456", `{"body":"bye"}`, 200, `"body":"bye"`},
		{"edit elsewhere", "PATCH", "/repos/x/r/issues/comments/1", "Bearer tok-123456", `{"body":"no"}`, 404, "Not Found"},
		{"review off the diff", "POST", "/repos/o/r/pulls/1/reviews", "Bearer tok-123456", `{"event":"COMMENT","comments":[{"path":"a","line":1,"body":"x"}]}`, 422, "Path could not be resolved"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := do(t, tc.method, srv.URL+tc.path, tc.auth, tc.body)
			if resp.StatusCode != tc.wantStatus || !strings.Contains(body, tc.wantBody) {
				t.Errorf("got %d %s, want %d with %q", resp.StatusCode, body, tc.wantStatus, tc.wantBody)
			}
		})
	}

	resp, body := do(t, "GET", srv.URL+StatePath, "", "")
	if resp.StatusCode != 200 {
		t.Fatalf("state: %d", resp.StatusCode)
	}
	var st State
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(f.State(), st); diff != "" {
		t.Errorf("state over HTTP differs from State() (-want +got):\n%s", diff)
	}
	if len(st.Comments) != 1 || st.Comments[0].Body != "bye" || len(st.Requests) != len(tests) {
		t.Errorf("state: %d comments, %d requests; want 1 (\"bye\") and %d", len(st.Comments), len(st.Requests), len(tests))
	}
	for _, r := range st.Requests {
		if strings.Contains(r.Body+r.Query, "tok-123456") {
			t.Errorf("request record holds the token: %+v", r)
		}
	}
}

func TestPaginationLinks(t *testing.T) {
	var files []File
	for range 7 {
		files = append(files, File{Filename: "f", Status: "added"})
	}
	srv := NewServer(t, WithPullRequest("o", "r", 1, "sha", files...))
	base := strings.TrimSuffix(srv.URL, "/")
	tests := []struct {
		query, wantLink string
		wantN           int
	}{
		{"?per_page=3", `<` + base + `/repos/o/r/pulls/1/files?page=2&per_page=3>; rel="next", <` + base + `/repos/o/r/pulls/1/files?page=3&per_page=3>; rel="last"`, 3},
		{"?per_page=3&page=2", `<` + base + `/repos/o/r/pulls/1/files?page=3&per_page=3>; rel="next", <` + base + `/repos/o/r/pulls/1/files?page=3&per_page=3>; rel="last", <` + base + `/repos/o/r/pulls/1/files?page=1&per_page=3>; rel="prev", <` + base + `/repos/o/r/pulls/1/files?page=1&per_page=3>; rel="first"`, 3},
		{"?per_page=3&page=3", `<` + base + `/repos/o/r/pulls/1/files?page=2&per_page=3>; rel="prev", <` + base + `/repos/o/r/pulls/1/files?page=1&per_page=3>; rel="first"`, 1},
		{"?per_page=500", "", 7},
		{"?per_page=3&page=9", `<` + base + `/repos/o/r/pulls/1/files?page=8&per_page=3>; rel="prev", <` + base + `/repos/o/r/pulls/1/files?page=1&per_page=3>; rel="first"`, 0},
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			resp, body := do(t, "GET", base+"/repos/o/r/pulls/1/files"+tc.query, "Bearer "+DefaultToken, "")
			if got := resp.Header.Get("Link"); got != tc.wantLink {
				t.Errorf("Link:\n got %s\nwant %s", got, tc.wantLink)
			}
			var page []map[string]any
			if err := json.Unmarshal([]byte(body), &page); err != nil || len(page) != tc.wantN {
				t.Errorf("got %d items (%v), want %d", len(page), err, tc.wantN)
			}
		})
	}
}
