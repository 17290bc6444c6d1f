package github

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpulint/gpulint/internal/github/githubtest"
)

func TestParsePatch(t *testing.T) {
	tests := []struct {
		name    string
		patch   string
		want    []int
		wantErr bool
	}{
		{name: "empty", patch: "", want: []int{}},
		{name: "new file", patch: "@@ -0,0 +1,3 @@\n+a\n+b\n+c", want: []int{1, 2, 3}},
		{
			name:  "change amid context",
			patch: "@@ -1,4 +1,4 @@\n {\n-  \"x\": 1,\n+  \"x\": 2,\n   \"y\": 3\n }",
			want:  []int{2},
		},
		{
			name:  "two hunks, additions and deletions",
			patch: "@@ -2,3 +2,4 @@ spec:\n a\n+b\n c\n-d\n+e\n@@ -20,2 +21,3 @@\n x\n+y\n+z\n-w",
			want:  []int{3, 5, 22, 23},
		},
		{
			name:  "no newline at end of file",
			patch: "@@ -1 +1 @@\n-old\n\\ No newline at end of file\n+new\n\\ No newline at end of file",
			want:  []int{1},
		},
		{name: "empty context line without its space", patch: "@@ -1,3 +1,3 @@\n a\n\n-b\n+c", want: []int{3}},
		{name: "deletions only", patch: "@@ -1,2 +0,0 @@\n-a\n-b", want: []int{}},
		{name: "line outside any hunk", patch: "+a", wantErr: true},
		{name: "hunk shorter than its header", patch: "@@ -1,2 +1,2 @@\n a", wantErr: true},
		{name: "hunk longer than its header", patch: "@@ -1 +1 @@\n a\n+b", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParsePatch(tc.patch)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if tc.wantErr {
				return
			}
			if diff := cmp.Diff(tc.want, got.Sorted()); diff != "" {
				t.Errorf("added lines (-want +got):\n%s", diff)
			}
		})
	}
}

func TestChangedFilesPaging(t *testing.T) {
	var files []githubtest.File
	want := map[string][]int{}
	for i := range 250 {
		name := fmt.Sprintf("configs/job-%03d.yaml", i)
		// Each file changes line i%7+2.
		l := i%7 + 2
		patch := fmt.Sprintf("@@ -%d,2 +%d,2 @@\n a\n-old\n+new", l-1, l-1)
		files = append(files, githubtest.File{Filename: name, Status: "modified", Patch: patch})
		want[name] = []int{l}
	}
	files = append(files,
		githubtest.File{Filename: "gone.yaml", Status: "removed", Patch: "@@ -1 +0,0 @@\n-x"},
		githubtest.File{Filename: "model.bin", Status: "added"})
	srv := githubtest.NewServer(t, githubtest.WithPullRequest("acme", "train", 7, "abc123", files...))
	c, _ := newTestClient(t, srv, githubtest.DefaultToken)

	got, err := c.ChangedFiles(context.Background(), "acme", "train", 7)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 252 {
		t.Fatalf("got %d files, want 252", len(got))
	}
	gotLines := map[string][]int{}
	for _, f := range got[:250] {
		gotLines[f.Path] = f.Changed.Sorted()
	}
	if diff := cmp.Diff(want, gotLines); diff != "" {
		t.Errorf("changed lines (-want +got):\n%s", diff)
	}
	wantCalls := []string{
		"GET /repos/acme/train/pulls/7/files?per_page=100 200",
		"GET /repos/acme/train/pulls/7/files?page=2&per_page=100 200",
		"GET /repos/acme/train/pulls/7/files?page=3&per_page=100 200",
	}
	if diff := cmp.Diff(wantCalls, calls(srv)); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	lines := ChangedLines(got)
	if _, ok := lines["gone.yaml"]; ok {
		t.Error("a removed file is offered for suggestions")
	}
	if l, ok := lines["model.bin"]; !ok || len(l) != 0 {
		t.Errorf("model.bin: got %v, %v; want an empty set", l, ok)
	}
}

func TestChangedFilesErrors(t *testing.T) {
	srv := githubtest.NewServer(t, githubtest.WithPullRequest("acme", "train", 7, "abc"))
	tests := []struct {
		name  string
		token string
		pr    int
		want  error
	}{
		{name: "wrong token", token: "ghp_wrongTokenWrongToken0123456789", pr: 7, want: ErrUnauthorized},
		{name: "unknown pull request", token: githubtest.DefaultToken, pr: 8, want: ErrNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, rec := newTestClient(t, srv, tc.token)
			_, err := c.ChangedFiles(context.Background(), "acme", "train", tc.pr)
			if !isKind(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			assertNoToken(t, tc.token, srv, rec, err)
		})
	}
}

// TestEnterpriseBaseURL points the client at /api/v3/, as on GitHub
// Enterprise Server.
func TestEnterpriseBaseURL(t *testing.T) {
	var files []githubtest.File
	for i := range 120 {
		files = append(files, githubtest.File{Filename: fmt.Sprintf("f%03d.yaml", i), Status: "added", Patch: "@@ -0,0 +1 @@\n+x"})
	}
	srv := githubtest.NewServer(t, githubtest.WithPullRequest("acme", "train", 7, "abc", files...))
	c, err := NewClient(nil, githubtest.DefaultToken, srv.URL+"api/v3")
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.ChangedFiles(context.Background(), "acme", "train", 7)
	if err != nil || len(got) != 120 {
		t.Fatalf("got %d files, err %v; want 120", len(got), err)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("%d requests, want 2 pages", n)
	}
}
