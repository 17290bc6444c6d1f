package cli_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpulint/gpulint/internal/cli"
)

// complete runs cobra's hidden __complete command, as the shell scripts
// do, and returns the candidates (without descriptions) and the directive
// line.
func complete(t *testing.T, args ...string) (values []string, directive string) {
	t.Helper()
	out, errOut, code := run(t, false, nil, append([]string{"__complete"}, args...)...)
	if code != cli.ExitOK {
		t.Fatalf("__complete %q: exit %d\n%s", args, code, errOut)
	}
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if strings.HasPrefix(line, ":") {
			directive = line
			continue
		}
		v, _, _ := strings.Cut(line, "\t")
		values = append(values, v)
	}
	return values, directive
}

const noFileComp = ":4" // cobra.ShellCompDirectiveNoFileComp

func TestCompletion(t *testing.T) {
	tests := []struct {
		name string
		args []string
		// want lists candidates that must be offered; exact makes it the
		// whole list.
		want  []string
		exact bool
		// absent lists candidates that must not be offered.
		absent        []string
		wantDirective string
	}{
		{"GPU names from the catalog", []string{"lint", "--gpu", "h10"}, []string{"H100-80GB", "H100-PCIe"}, false, []string{"A100-80GB"}, noFileComp},
		{"GPU names for fix", []string{"fix", "--gpu", "L4"}, []string{"L4"}, false, []string{"H100-80GB"}, noFileComp},
		{"GPU names for estimate", []string{"estimate", "--gpu", "A100"}, []string{"A100-40GB", "A100-80GB"}, false, nil, noFileComp},
		{"model ids from the catalog", []string{"lint", "--model", "meta-llama/Llama-3.1-"}, []string{"meta-llama/Llama-3.1-8B", "meta-llama/Llama-3.1-70B"}, false, []string{"Qwen/Qwen2.5-7B-Instruct"}, noFileComp},
		// A model may be a local directory: no catalog id matches, so the shell completes directories.
		{"model directory", []string{"lint", "--model", "./my-models/"}, nil, true, nil, ":16"},
		{"lint formats", []string{"lint", "--format", ""}, []string{"github", "json", "markdown", "sarif", "text"}, true, nil, noFileComp},
		{"rules formats", []string{"rules", "--format", ""}, []string{"text", "json", "markdown"}, true, nil, noFileComp},
		{"estimate formats", []string{"estimate", "--format", ""}, []string{"text", "json"}, true, nil, noFileComp},
		{"estimate workloads", []string{"estimate", "--workload", "q"}, []string{"qlora"}, true, nil, noFileComp},
		{"fail-on levels", []string{"lint", "--fail-on", "w"}, []string{"warning"}, true, nil, noFileComp},
		{"color modes", []string{"fix", "--color", ""}, []string{"auto", "always", "never"}, true, nil, noFileComp},
		{"rule ids", []string{"explain", "DS00"}, []string{"DS001", "DS002", "DS003", "DS004", "DS005"}, true, nil, noFileComp},
		{"rule slugs", []string{"explain", "fp32"}, []string{"fp32-where-bf16"}, true, nil, noFileComp},
		{"rule ids, lower case", []string{"explain", "gpu00"}, []string{"GPU001", "GPU002"}, false, nil, noFileComp},
		{"explain takes one rule", []string{"explain", "DS001", ""}, nil, true, nil, noFileComp},
		{"completion shells", []string{"completion", ""}, []string{"bash", "fish", "powershell", "zsh"}, true, nil, noFileComp},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, directive := complete(t, tc.args...)
			if tc.exact {
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("candidates (-want +got):\n%s", diff)
				}
			}
			for _, w := range tc.want {
				if !slices.Contains(got, w) {
					t.Errorf("%q not offered: %q", w, got)
				}
			}
			for _, a := range tc.absent {
				if slices.Contains(got, a) {
					t.Errorf("%q offered: %q", a, got)
				}
			}
			if directive != tc.wantDirective {
				t.Errorf("directive %s, want %s", directive, tc.wantDirective)
			}
		})
	}
}

// TestCompletedValuesAreAccepted holds the completion lists to the
// commands: every value offered must be one the command takes.
func TestCompletedValuesAreAccepted(t *testing.T) {
	clean := write(t, t.TempDir(), "clean.json", cleanDS)
	tests := []struct {
		name   string
		prefix []string                // completed: prefix + ""
		argv   func(v string) []string // a run with the value
	}{
		{"lint --format", []string{"lint", "--format"}, func(v string) []string { return []string{"lint", "--format", v, clean} }},
		{"lint --fail-on", []string{"lint", "--fail-on"}, func(v string) []string { return []string{"lint", "--fail-on", v, clean} }},
		{"lint --color", []string{"lint", "--color"}, func(v string) []string { return []string{"lint", "--color", v, clean} }},
		{"lint --gpu", []string{"lint", "--gpu"}, func(v string) []string { return []string{"lint", "--gpu", v, clean} }},
		{"rules --format", []string{"rules", "--format"}, func(v string) []string { return []string{"rules", "--format", v} }},
		{"estimate --format", []string{"estimate", "--format"}, func(v string) []string {
			return []string{"estimate", "--model", "meta-llama/Llama-3.1-8B", "--gpu", "H100-80GB", "--format", v}
		}},
		{"estimate --workload", []string{"estimate", "--workload"}, func(v string) []string {
			return []string{"estimate", "--model", "meta-llama/Llama-3.1-8B", "--gpu", "H100-80GB", "--workload", v}
		}},
		{"estimate --model", []string{"estimate", "--model"}, func(v string) []string {
			return []string{"estimate", "--model", v, "--gpu", "H200", "--workload", "inference"}
		}},
		{"explain", []string{"explain"}, func(v string) []string { return []string{"explain", v} }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			vals, _ := complete(t, append(tc.prefix, "")...)
			if len(vals) == 0 {
				t.Fatal("nothing offered")
			}
			for _, v := range vals {
				_, errOut, code := run(t, false, nil, tc.argv(v)...)
				if code == cli.ExitUsage || code == cli.ExitInternal {
					t.Errorf("%s %s: exit %d\n%s", strings.Join(tc.prefix, " "), v, code, errOut)
				}
			}
		})
	}
}

func TestCompletionScripts(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish"} {
		t.Run(shell, func(t *testing.T) {
			out, errOut, code := run(t, false, nil, "completion", shell)
			if code != cli.ExitOK {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			// Each script calls back into gpulint's __complete.
			if !strings.Contains(out, "__complete") || !strings.Contains(out, "gpulint") {
				t.Errorf("%s script does not call gpulint __complete:\n%.300s", shell, out)
			}
		})
	}
}
