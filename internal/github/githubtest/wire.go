package githubtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// paginate answers one page of items as GitHub does: per_page (default
// 30, at most 100) and page query parameters, and a Link header with
// next, last, first and prev relations.
func paginate[T any](w http.ResponseWriter, r *http.Request, items []T) []T {
	q := r.URL.Query()
	per := queryInt(q, "per_page", 30)
	per = min(max(per, 1), 100)
	page := max(queryInt(q, "page", 1), 1)
	last := max(1, (len(items)+per-1)/per)
	link := func(p int, rel string) string {
		q2 := url.Values{}
		for k, v := range q {
			q2[k] = v
		}
		q2.Set("page", strconv.Itoa(p))
		q2.Set("per_page", strconv.Itoa(per))
		prefix, _ := r.Context().Value(prefixKey{}).(string)
		return fmt.Sprintf(`<http://%s%s%s?%s>; rel="%s"`, r.Host, prefix, r.URL.Path, q2.Encode(), rel)
	}
	var links []string
	if page < last {
		links = append(links, link(page+1, "next"), link(last, "last"))
	}
	if page > 1 {
		links = append(links, link(page-1, "prev"), link(1, "first"))
	}
	if len(links) > 0 {
		w.Header().Set("Link", strings.Join(links, ", "))
	}
	start := (page - 1) * per
	if start >= len(items) {
		return []T{}
	}
	return items[start:min(start+per, len(items))]
}

func queryInt(q url.Values, key string, def int) int {
	n, err := strconv.Atoi(q.Get(key))
	if err != nil {
		return def
	}
	return n
}

func userJSON(u User) map[string]any {
	return map[string]any{"login": u.Login, "type": u.Type}
}

func commentJSON(c Comment) map[string]any {
	return map[string]any{
		"id": c.ID, "body": c.Body, "user": userJSON(c.User),
		"html_url":   fmt.Sprintf("https://github.com/%s/%s/pull/%d#issuecomment-%d", c.Owner, c.Repo, c.Number, c.ID),
		"created_at": c.CreatedAt.Format(time.RFC3339), "updated_at": c.UpdatedAt.Format(time.RFC3339),
	}
}

func reviewCommentJSON(c ReviewComment) map[string]any {
	m := map[string]any{
		"id": c.ID, "pull_request_review_id": c.ReviewID, "path": c.Path, "line": c.Line, "side": c.Side,
		"commit_id": c.CommitID, "original_commit_id": c.CommitID, "body": c.Body, "user": userJSON(c.User),
		"html_url": fmt.Sprintf("https://github.com/%s/%s/pull/%d#discussion_r%d", c.Owner, c.Repo, c.Number, c.ID),
	}
	if c.StartLine != 0 {
		m["start_line"], m["start_side"] = c.StartLine, "RIGHT"
	}
	return m
}

func apiError(w http.ResponseWriter, status int, msg, doc string) {
	body := map[string]any{"message": msg, "status": strconv.Itoa(status)}
	if doc != "" {
		body["documentation_url"] = doc
	}
	writeJSON(w, status, body)
}

func unprocessable(w http.ResponseWriter, msg string) {
	writeJSON(w, http.StatusUnprocessableEntity, map[string]any{
		"message": "Unprocessable Entity", "errors": []string{msg}, "status": "422",
		"documentation_url": "https://docs.github.com/rest/pulls/reviews#create-a-review-for-a-pull-request",
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}
