package cli_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestValidationCommandsReproduceRows runs every `gpulint estimate` command
// that docs/validation.md prints, through the CLI in-process, and checks it
// prints the row's predicted value and verdict.
func TestValidationCommandsReproduceRows(t *testing.T) {
	rows := readValidationDoc(t, "../../docs/validation.md")
	if len(rows) < 80 {
		t.Fatalf("docs/validation.md has %d rows with commands, want at least 80", len(rows))
	}
	for _, r := range rows {
		t.Run(r.id, func(t *testing.T) {
			args := strings.Fields(strings.TrimPrefix(r.command, "gpulint "))
			for i, a := range args {
				if strings.HasPrefix(a, "tuner/") {
					args[i] = "../../" + a // the test runs in internal/cli
				}
			}
			out, errOut, code := run(t, false, nil, append(args, "--format", "json")...)
			if code != 0 {
				t.Fatalf("%s: exit %d: %s", r.command, code, errOut)
			}
			var got struct {
				PerGPU struct {
					Total   float64 `json:"total"`
					Weights float64 `json:"weights"`
					KVCache float64 `json:"kv_cache"`
				} `json:"per_gpu"`
				Fits      bool    `json:"fits"`
				Allocated float64 `json:"allocated"`
				Reserved  float64 `json:"reserved"`
				Serve     *struct {
					KVCacheTokens  float64 `json:"kv_cache_tokens"`
					MaxConcurrency float64 `json:"max_concurrency"`
				} `json:"serve"`
			}
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatal(err)
			}
			v := got.PerGPU.Total
			switch r.metric {
			case "allocated":
				v = got.Allocated
			case "reserved":
				v = got.Reserved
			case "weights":
				v = got.PerGPU.Weights
			case "kv-memory":
				v = got.PerGPU.KVCache
			case "kv-tokens":
				if got.Serve == nil {
					t.Fatal("no serve object in the JSON")
				}
				v = got.Serve.KVCacheTokens
			case "concurrency":
				if got.Serve == nil {
					t.Fatal("no serve object in the JSON")
				}
				v = got.Serve.MaxConcurrency
			}
			if s := formatLike(v, r.predicted); s != r.predicted {
				t.Errorf("%s\nprints %s, the row says %s", r.command, s, r.predicted)
			}
			// "fits by paging" is over the GPU in the estimate, which counts
			// a paged optimizer's state; only vram-overcommit reads it as fitting.
			fits := !strings.HasPrefix(r.verdict, "does not fit") && !strings.HasPrefix(r.verdict, "refuses") &&
				!strings.HasPrefix(r.verdict, "fits by paging")
			if fits != got.Fits {
				t.Errorf("%s\nfits=%v, the row says %q", r.command, got.Fits, r.verdict)
			}
		})
	}
}

type validationRow struct {
	id, metric, predicted, verdict, command string
}

var (
	tableRow   = regexp.MustCompile("^\\| (\\d+) \\| `([^`]+)` \\|")
	commandRow = regexp.MustCompile("^\\s+Reproduce: `(gpulint estimate [^`]+)`$")
	noteRow    = regexp.MustCompile("^(\\d+)\\. `([^`]+)`")
)

// readValidationDoc reads the generated table (metric, predicted value,
// predicted verdict) and the command printed under each row's note.
func readValidationDoc(t *testing.T, path string) []validationRow {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	byID := map[string]*validationRow{}
	var order []string
	last := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if m := tableRow.FindStringSubmatch(line); m != nil {
			cells := strings.Split(strings.Trim(line, "|"), " | ")
			if len(cells) != 11 {
				t.Fatalf("table row with %d cells: %s", len(cells), line)
			}
			byID[m[2]] = &validationRow{id: m[2], metric: strings.TrimSpace(cells[4]),
				predicted: strings.TrimSpace(cells[6]), verdict: strings.TrimSpace(cells[10])}
			order = append(order, m[2])
			continue
		}
		if m := noteRow.FindStringSubmatch(line); m != nil {
			last = m[2]
			continue
		}
		if m := commandRow.FindStringSubmatch(line); m != nil && byID[last] != nil {
			byID[last].command = m[1]
		}
	}
	var out []validationRow
	for _, id := range order {
		r := byID[id]
		if r.command == "" {
			t.Errorf("row %s prints no command", id)
			continue
		}
		out = append(out, *r)
	}
	return out
}

// formatLike prints v in the unit and precision of the printed value like.
func formatLike(v float64, like string) string {
	switch {
	case strings.HasSuffix(like, " MiB"):
		return fmt.Sprintf("%.0f MiB", v/(1<<20))
	case strings.HasSuffix(like, " GiB"):
		return fmt.Sprintf("%.2f GiB", v/(1<<30))
	case strings.HasSuffix(like, " GB"):
		return fmt.Sprintf("%.2f GB", v/1e9)
	case strings.HasSuffix(like, " tokens"):
		return thousands(int64(v)) + " tokens"
	case strings.HasSuffix(like, "x"):
		return fmt.Sprintf("%.2fx", v)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// TestEstimateParamsAndGPUMemory: --params takes 7.5B, 7.5e9 or an integer,
// and --gpu-memory stands in for a GPU the catalog lacks.
func TestEstimateParamsAndGPUMemory(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		capacity float64
		code     int
	}{
		{"suffix", []string{"--params", "7.5B", "--gpu-memory", "24GiB"}, 24 << 30, 0},
		{"e-notation", []string{"--params", "7.5e9", "--gpu-memory", "24GB"}, 24e9, 0},
		{"integer", []string{"--params", "7500000000", "--gpu-memory", "24576MiB"}, 24 << 30, 0},
		{"bad count", []string{"--params", "lots", "--gpu-memory", "24GiB"}, 0, 2},
		{"bad size", []string{"--params", "7B", "--gpu-memory", "24"}, 0, 2},
	}
	var totals []float64
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := run(t, false, nil, append([]string{"estimate", "--format", "json"}, tc.args...)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d: %s", code, tc.code, errOut)
			}
			if code != 0 {
				return
			}
			var got struct {
				Capacity float64                 `json:"capacity"`
				PerGPU   struct{ Total float64 } `json:"per_gpu"`
			}
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatal(err)
			}
			if got.Capacity != tc.capacity {
				t.Errorf("capacity %.0f, want %.0f", got.Capacity, tc.capacity)
			}
			totals = append(totals, got.PerGPU.Total)
		})
	}
	for _, v := range totals[1:] {
		if v != totals[0] {
			t.Errorf("the three spellings of 7.5B give totals %v", totals)
		}
	}
}
