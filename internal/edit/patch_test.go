package edit

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// applyUnified is a strict, independent applier for the diffs Unified
// writes: it checks every header count, context and deleted line against
// old and rebuilds the new text. It is the oracle for the diff tests.
func applyUnified(old []byte, diff string) ([]byte, error) {
	if diff == "" {
		return bytes.Clone(old), nil
	}
	lines := strings.SplitAfter(diff, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	} else {
		return nil, fmt.Errorf("diff does not end in a newline")
	}
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "--- ") || !strings.HasPrefix(lines[1], "+++ ") {
		return nil, fmt.Errorf("missing --- / +++ headers")
	}
	oldLines := splitLinesForTest(old)
	var out []byte
	pos := 0 // next old line to copy
	i := 2
	for i < len(lines) {
		var oStart, oCount, nStart, nCount int
		if err := parseHunkHeader(lines[i], &oStart, &oCount, &nStart, &nCount); err != nil {
			return nil, err
		}
		i++
		first := oStart - 1 // index of the hunk's first old line
		if oCount == 0 {
			first = oStart
		}
		if first < pos || first > len(oldLines) {
			return nil, fmt.Errorf("hunk at old line %d out of order", oStart)
		}
		for ; pos < first; pos++ {
			out = append(out, oldLines[pos]...)
		}
		for oCount > 0 || nCount > 0 {
			if i >= len(lines) || lines[i] == "" {
				return nil, fmt.Errorf("hunk ends early")
			}
			op, text := lines[i][0], lines[i][1:]
			i++
			if i < len(lines) && lines[i] == "\\ No newline at end of file\n" {
				text = strings.TrimSuffix(text, "\n")
				i++
			}
			switch op {
			case ' ', '-':
				if pos >= len(oldLines) || oldLines[pos] != text {
					return nil, fmt.Errorf("old line %d does not match %q", pos+1, text)
				}
				pos++
				oCount--
				if op == ' ' {
					out = append(out, text...)
					nCount--
				}
			case '+':
				out = append(out, text...)
				nCount--
			default:
				return nil, fmt.Errorf("bad hunk line %q", lines[i-1])
			}
			if oCount < 0 || nCount < 0 {
				return nil, fmt.Errorf("hunk longer than its header says")
			}
		}
	}
	for ; pos < len(oldLines); pos++ {
		out = append(out, oldLines[pos]...)
	}
	return out, nil
}

func splitLinesForTest(data []byte) []string {
	parts := strings.SplitAfter(string(data), "\n")
	if parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

// parseHunkHeader reads "@@ -l[,n] +l[,n] @@\n".
func parseHunkHeader(line string, oStart, oCount, nStart, nCount *int) error {
	rest, ok := strings.CutPrefix(line, "@@ -")
	if !ok {
		return fmt.Errorf("bad hunk header %q", line)
	}
	rest, ok = strings.CutSuffix(rest, " @@\n")
	if !ok {
		return fmt.Errorf("bad hunk header %q", line)
	}
	o, n, ok := strings.Cut(rest, " +")
	if !ok {
		return fmt.Errorf("bad hunk header %q", line)
	}
	parse := func(s string, start, count *int) error {
		l, c, hasCount := strings.Cut(s, ",")
		var err error
		if *start, err = strconv.Atoi(l); err != nil {
			return fmt.Errorf("bad hunk header %q: %w", line, err)
		}
		*count = 1
		if hasCount {
			if *count, err = strconv.Atoi(c); err != nil {
				return fmt.Errorf("bad hunk header %q: %w", line, err)
			}
		}
		return nil
	}
	if err := parse(o, oStart, oCount); err != nil {
		return err
	}
	return parse(n, nStart, nCount)
}

// applyWithTool writes old to dir/a.txt under a fresh directory, applies
// diff (whose headers must be a/a.txt and b/a.txt) with the named tool
// and returns the result. It skips the test when the tool is missing.
// zeroContext says the diff has no context lines.
func applyWithTool(t *testing.T, tool string, old []byte, diff string, zeroContext bool) []byte {
	t.Helper()
	path, err := exec.LookPath(tool)
	if err != nil {
		t.Skipf("%s not on PATH", tool)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), old, 0o644); err != nil {
		t.Fatal(err)
	}
	var cmd *exec.Cmd
	switch tool {
	case "patch":
		cmd = exec.Command(path, "-p1", "--batch", "--silent", "--no-backup-if-mismatch")
	case "git":
		args := []string{"apply", "-p1"}
		if zeroContext {
			args = append(args, "--unidiff-zero") // git wants context lines unless told
		}
		cmd = exec.Command(path, append(args, "-")...)
	}
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(diff)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s rejected the diff: %v\n%s\ndiff:\n%s", tool, err, out, diff)
	}
	got, err := os.ReadFile(filepath.Join(dir, "a.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return got
}
