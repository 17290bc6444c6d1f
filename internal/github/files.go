package github

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	gh "github.com/google/go-github/v62/github"
)

// perPage is the largest page GitHub's list endpoints serve.
const perPage = 100

// maxPages bounds every listing, so a misbehaving server cannot keep us
// paging forever. GitHub lists at most 3,000 files of a pull request
// (docs.github.com/rest/pulls/pulls#list-pull-requests-files), 30 pages.
const maxPages = 500

// LineSet is a set of 1-based line numbers.
type LineSet map[int]bool

// Has reports whether line is in the set.
func (s LineSet) Has(line int) bool { return s[line] }

// Sorted returns the lines in increasing order.
func (s LineSet) Sorted() []int {
	out := make([]int, 0, len(s))
	for l, ok := range s {
		if ok {
			out = append(out, l)
		}
	}
	slices.Sort(out)
	return out
}

// ChangedFile is one file of a pull request.
type ChangedFile struct {
	Path         string // path at the head commit, with forward slashes
	PreviousPath string // path at the base, for renamed files
	Status       string // added, modified, removed, renamed, copied, changed
	// Changed holds the new-side lines the pull request adds or changes.
	// It is empty when GitHub sends no patch (binary or very large files).
	Changed LineSet
}

// ChangedFiles lists the files of pull request pr, following pagination,
// with the lines each one adds or changes.
func (c *Client) ChangedFiles(ctx context.Context, owner, repo string, pr int) ([]ChangedFile, error) {
	op := fmt.Sprintf("list files of %s/%s#%d", owner, repo, pr)
	opts := &gh.ListOptions{PerPage: perPage}
	var out []ChangedFile
	for range maxPages {
		files, resp, err := c.gh.PullRequests.ListFiles(ctx, owner, repo, pr, opts)
		if err != nil {
			return nil, c.fail(op, false, err)
		}
		for _, f := range files {
			lines, err := ParsePatch(f.GetPatch())
			if err != nil {
				// A patch we cannot read only costs that file its
				// suggestions.
				lines = LineSet{}
			}
			out = append(out, ChangedFile{
				Path: f.GetFilename(), PreviousPath: f.GetPreviousFilename(), Status: f.GetStatus(), Changed: lines,
			})
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
	return nil, fmt.Errorf("%s: more than %d pages", op, maxPages)
}

// ChangedLines maps each file that still exists at the head commit to the
// lines the pull request adds or changes, the input Suggestions needs.
func ChangedLines(files []ChangedFile) map[string]LineSet {
	out := make(map[string]LineSet, len(files))
	for _, f := range files {
		if f.Status != "removed" {
			out[f.Path] = f.Changed
		}
	}
	return out
}

var hunkHeader = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@`) })

// ParsePatch reads a unified diff of one file, as GitHub's "patch" field
// holds it (hunks only, no file headers), and returns the lines of the new
// side that the diff adds. It checks that each hunk's line counts agree
// with its header.
func ParsePatch(patch string) (LineSet, error) {
	set := LineSet{}
	if patch == "" {
		return set, nil
	}
	lines := strings.Split(strings.TrimSuffix(patch, "\n"), "\n")
	oldLeft, newLeft, newLine := 0, 0, 0
	for i, l := range lines {
		l = strings.TrimSuffix(l, "\r")
		if m := hunkHeader().FindStringSubmatch(l); m != nil {
			if oldLeft != 0 || newLeft != 0 {
				return nil, fmt.Errorf("patch line %d: hunk starts before the previous one ends", i+1)
			}
			oldLeft, newLeft = count(m[2]), count(m[4])
			newLine, _ = strconv.Atoi(m[3])
			continue
		}
		if l == "" && oldLeft == 0 && newLeft == 0 {
			continue // a blank line between hunks
		}
		switch {
		case strings.HasPrefix(l, `\`): // "\ No newline at end of file"
		case strings.HasPrefix(l, "+") && newLeft > 0:
			set[newLine] = true
			newLine++
			newLeft--
		case strings.HasPrefix(l, "-") && oldLeft > 0:
			oldLeft--
		case (strings.HasPrefix(l, " ") || l == "") && oldLeft > 0 && newLeft > 0:
			// Context; GitHub keeps an empty context line's leading space,
			// other tools may strip it.
			newLine++
			oldLeft--
			newLeft--
		default:
			return nil, fmt.Errorf("patch line %d: %.40q does not fit the hunk", i+1, l)
		}
	}
	if oldLeft != 0 || newLeft != 0 {
		return nil, fmt.Errorf("patch ends inside a hunk (%d old and %d new lines missing)", oldLeft, newLeft)
	}
	return set, nil
}

// count reads a hunk length, which defaults to 1.
func count(s string) int {
	if s == "" {
		return 1
	}
	n, _ := strconv.Atoi(s)
	return n
}
