package githubtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Error bodies as GitHub sends them.
const (
	docsRateLimits   = "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"
	msgBadCreds      = "Bad credentials"
	msgNotAccessible = "Resource not accessible by integration"
	msgSecondary     = "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."
	msgNotPartOfDiff = "pull_request_review_thread.line must be part of the diff"
	// maxBody is GitHub's limit on a comment body, in characters.
	maxBody = 65536
)

type prefixKey struct{}

// ServeHTTP answers one API request.
func (f *Fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == StatePath && r.Method == http.MethodGet {
		writeJSON(w, http.StatusOK, f.State())
		return
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 4<<20))
	// GitHub Enterprise Server serves the API under /api/v3.
	path, prefix := r.URL.Path, ""
	if p, ok := strings.CutPrefix(path, "/api/v3"); ok {
		path, prefix = p, "/api/v3"
	}

	f.mu.Lock()
	defer f.mu.Unlock()
	f.state.Requests = append(f.state.Requests, Request{Method: r.Method, Path: path, Query: r.URL.RawQuery, Body: string(body)})
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	defer func() { f.state.Requests[len(f.state.Requests)-1].Status = rec.status }()

	if !f.authorized(r.Header.Get("Authorization")) {
		apiError(rec, http.StatusUnauthorized, msgBadCreds, "https://docs.github.com/rest")
		return
	}
	if f.secondaryLeft > 0 {
		f.secondaryLeft--
		rec.Header().Set("Retry-After", strconv.Itoa(f.retryAfter))
		apiError(rec, http.StatusForbidden, msgSecondary, docsRateLimits+"#about-secondary-rate-limits")
		return
	}
	if f.primaryLeft > 0 {
		f.primaryLeft--
		h := rec.Header()
		h.Set("X-RateLimit-Limit", "5000")
		h.Set("X-RateLimit-Remaining", "0")
		h.Set("X-RateLimit-Used", "5000")
		h.Set("X-RateLimit-Reset", strconv.FormatInt(f.primaryReset.Unix(), 10))
		h.Set("X-RateLimit-Resource", "core")
		apiError(rec, http.StatusForbidden, "API rate limit exceeded for installation ID 1.", docsRateLimits+"#about-primary-rate-limits")
		return
	}
	if f.serverErrLeft > 0 && (f.serverErrMethod == "" || f.serverErrMethod == r.Method) {
		f.serverErrLeft--
		apiError(rec, f.serverErrCode, "Server Error", "")
		return
	}
	r2 := r.Clone(context.WithValue(r.Context(), prefixKey{}, prefix))
	r2.URL.Path = path
	r2.Body = io.NopCloser(strings.NewReader(string(body)))
	if f.lostLeft > 0 && r.Method != http.MethodGet {
		buf := httptest.NewRecorder()
		f.mux.ServeHTTP(buf, r2)
		if buf.Code < 300 {
			f.lostLeft--
			apiError(rec, http.StatusBadGateway, "Server Error", "")
			return
		}
		for k, v := range buf.Header() {
			rec.Header()[k] = v
		}
		rec.WriteHeader(buf.Code)
		_, _ = rec.Write(buf.Body.Bytes())
		return
	}
	f.mux.ServeHTTP(rec, r2)
}

func (f *Fake) authorized(header string) bool {
	scheme, tok, ok := strings.Cut(header, " ")
	return ok && f.token != "" && tok == f.token && (strings.EqualFold(scheme, "Bearer") || strings.EqualFold(scheme, "token"))
}

func (f *Fake) routes() {
	m := http.NewServeMux()
	m.HandleFunc("GET /repos/{owner}/{repo}/pulls/{number}/files", f.listFiles)
	m.HandleFunc("GET /repos/{owner}/{repo}/issues/{number}/comments", f.listComments)
	m.HandleFunc("POST /repos/{owner}/{repo}/issues/{number}/comments", f.createComment)
	m.HandleFunc("PATCH /repos/{owner}/{repo}/issues/comments/{id}", f.editComment)
	m.HandleFunc("GET /repos/{owner}/{repo}/pulls/{number}/comments", f.listReviewComments)
	m.HandleFunc("POST /repos/{owner}/{repo}/pulls/{number}/reviews", f.createReview)
	m.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		apiError(w, http.StatusNotFound, "Not Found", "https://docs.github.com/rest")
	})
	f.mux = m
}

// pr finds the pull request the path names, or answers 404.
func (f *Fake) pr(w http.ResponseWriter, r *http.Request) (prKey, *pullRequest, bool) {
	n, err := strconv.Atoi(r.PathValue("number"))
	k := prKey{r.PathValue("owner"), r.PathValue("repo"), n}
	p := f.prs[k]
	if err != nil || p == nil {
		apiError(w, http.StatusNotFound, "Not Found", "https://docs.github.com/rest")
		return k, nil, false
	}
	return k, p, true
}

func (f *Fake) listFiles(w http.ResponseWriter, r *http.Request) {
	_, p, ok := f.pr(w, r)
	if !ok {
		return
	}
	out := make([]map[string]any, 0, len(p.files))
	for i, fl := range p.files {
		add, del := countChanges(fl.Patch)
		m := map[string]any{
			"sha": fmt.Sprintf("%040x", i+1), "filename": fl.Filename, "status": fl.Status,
			"additions": add, "deletions": del, "changes": add + del,
		}
		if fl.Patch != "" {
			m["patch"] = fl.Patch
		}
		if fl.PreviousFilename != "" {
			m["previous_filename"] = fl.PreviousFilename
		}
		out = append(out, m)
	}
	writeJSON(w, http.StatusOK, paginate(w, r, out))
}

func (f *Fake) listComments(w http.ResponseWriter, r *http.Request) {
	k, _, ok := f.pr(w, r)
	if !ok {
		return
	}
	var out []map[string]any
	for _, c := range f.state.Comments {
		if c.Owner == k.owner && c.Repo == k.repo && c.Number == k.number {
			out = append(out, commentJSON(c))
		}
	}
	writeJSON(w, http.StatusOK, paginate(w, r, out))
}

func (f *Fake) createComment(w http.ResponseWriter, r *http.Request) {
	k, _, ok := f.pr(w, r)
	if !ok || f.refuseWrite(w) {
		return
	}
	var in struct {
		Body *string `json:"body"`
	}
	if !decode(w, r, &in) || !validBody(w, in.Body) {
		return
	}
	c := f.newComment(k.owner, k.repo, k.number, f.user, *in.Body)
	f.state.Comments = append(f.state.Comments, c)
	writeJSON(w, http.StatusCreated, commentJSON(c))
}

func (f *Fake) editComment(w http.ResponseWriter, r *http.Request) {
	if f.refuseWrite(w) {
		return
	}
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	for i, c := range f.state.Comments {
		if c.ID != id || c.Owner != r.PathValue("owner") || c.Repo != r.PathValue("repo") {
			continue
		}
		var in struct {
			Body *string `json:"body"`
		}
		if !decode(w, r, &in) || !validBody(w, in.Body) {
			return
		}
		c.Body = *in.Body
		c.UpdatedAt = c.UpdatedAt.Add(time.Second)
		f.state.Comments[i] = c
		writeJSON(w, http.StatusOK, commentJSON(c))
		return
	}
	apiError(w, http.StatusNotFound, "Not Found", "https://docs.github.com/rest/issues/comments#update-an-issue-comment")
}

func (f *Fake) listReviewComments(w http.ResponseWriter, r *http.Request) {
	k, _, ok := f.pr(w, r)
	if !ok {
		return
	}
	var out []map[string]any
	for _, c := range f.state.ReviewComments {
		if c.Owner == k.owner && c.Repo == k.repo && c.Number == k.number {
			out = append(out, reviewCommentJSON(c))
		}
	}
	writeJSON(w, http.StatusOK, paginate(w, r, out))
}

type draftComment struct {
	Path      string `json:"path"`
	Position  *int   `json:"position"`
	Body      string `json:"body"`
	Line      *int   `json:"line"`
	Side      string `json:"side"`
	StartLine *int   `json:"start_line"`
	StartSide string `json:"start_side"`
}

func (f *Fake) createReview(w http.ResponseWriter, r *http.Request) {
	k, p, ok := f.pr(w, r)
	if !ok || f.refuseWrite(w) {
		return
	}
	var in struct {
		CommitID string         `json:"commit_id"`
		Body     string         `json:"body"`
		Event    string         `json:"event"`
		Comments []draftComment `json:"comments"`
	}
	if !decode(w, r, &in) {
		return
	}
	if in.CommitID != "" && in.CommitID != p.headSHA {
		unprocessable(w, "commit_id is not part of the pull request")
		return
	}
	switch in.Event {
	case "", "COMMENT", "APPROVE", "REQUEST_CHANGES":
	default:
		unprocessable(w, "event is not included in the list")
		return
	}
	for _, c := range in.Comments {
		if msg := p.checkComment(c); msg != "" {
			// GitHub rejects the whole review; nothing is stored.
			unprocessable(w, msg)
			return
		}
	}
	f.nextID++
	rv := Review{ID: f.nextID, Owner: k.owner, Repo: k.repo, Number: k.number, CommitID: in.CommitID, Body: in.Body, Event: in.Event, User: f.user}
	if rv.CommitID == "" {
		rv.CommitID = p.headSHA
	}
	f.state.Reviews = append(f.state.Reviews, rv)
	for _, c := range in.Comments {
		f.nextID++
		rc := ReviewComment{
			ID: f.nextID, ReviewID: rv.ID, Owner: k.owner, Repo: k.repo, Number: k.number,
			Path: c.Path, Line: *c.Line, Side: "RIGHT", CommitID: rv.CommitID, Body: c.Body, User: f.user,
		}
		if c.StartLine != nil {
			rc.StartLine = *c.StartLine
		}
		f.state.ReviewComments = append(f.state.ReviewComments, rc)
	}
	state := "COMMENTED"
	if in.Event == "" {
		state = "PENDING"
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id": rv.ID, "user": userJSON(rv.User), "body": rv.Body, "state": state, "commit_id": rv.CommitID,
		"html_url": fmt.Sprintf("https://github.com/%s/%s/pull/%d#pullrequestreview-%d", k.owner, k.repo, k.number, rv.ID),
	})
}

// checkComment returns GitHub's complaint about a draft review comment,
// or "" when the comment lies on the diff.
func (p *pullRequest) checkComment(c draftComment) string {
	var file *File
	for i := range p.files {
		if p.files[i].Filename == c.Path {
			file = &p.files[i]
		}
	}
	switch {
	case file == nil:
		return "Path could not be resolved"
	case c.Line == nil || c.Position != nil:
		return "this fake takes line-based review comments only"
	case (c.Side != "" && c.Side != "RIGHT") || (c.StartSide != "" && c.StartSide != "RIGHT"):
		return "this fake takes comments on the RIGHT side only"
	}
	end := hunkOf(file.Patch, *c.Line)
	if end < 0 {
		return msgNotPartOfDiff
	}
	if c.StartLine != nil {
		if *c.StartLine >= *c.Line {
			return "pull_request_review_thread.start_line must precede the end line"
		}
		if hunkOf(file.Patch, *c.StartLine) != end {
			return "pull_request_review_thread.start_line must be part of the same hunk as the line"
		}
	}
	return ""
}

var hunkHeader = regexp.MustCompile(`(?m)^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@`)

// hunkOf returns the index of the hunk whose new side spans line, or -1.
func hunkOf(patch string, line int) int {
	for i, m := range hunkHeader.FindAllStringSubmatch(patch, -1) {
		start, _ := strconv.Atoi(m[1])
		n := 1
		if m[2] != "" {
			n, _ = strconv.Atoi(m[2])
		}
		if line >= start && line < start+n {
			return i
		}
	}
	return -1
}

func countChanges(patch string) (add, del int) {
	for _, l := range strings.Split(patch, "\n") {
		switch {
		case strings.HasPrefix(l, "+"):
			add++
		case strings.HasPrefix(l, "-"):
			del++
		}
	}
	return add, del
}

func (f *Fake) refuseWrite(w http.ResponseWriter) bool {
	if f.readOnly {
		apiError(w, http.StatusForbidden, msgNotAccessible, "https://docs.github.com/rest/issues/comments#create-an-issue-comment")
	}
	return f.readOnly
}

func validBody(w http.ResponseWriter, body *string) bool {
	switch {
	case body == nil:
		unprocessable(w, "body is missing")
		return false
	case len([]rune(*body)) > maxBody:
		unprocessable(w, fmt.Sprintf("Body is too long (maximum is %d characters)", maxBody))
		return false
	}
	return true
}

func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		apiError(w, http.StatusBadRequest, "Problems parsing JSON", "https://docs.github.com/rest")
		return false
	}
	return true
}
