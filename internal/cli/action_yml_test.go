package cli_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"
)

// actionInputs are the inputs `gpulint action` reads.
var actionInputs = []string{"baseline", "comment", "config", "fail-on", "github-token", "gpu", "gpus", "model", "only-changed", "paths", "sarif-file", "suggestions", "timeout"}

// TestActionYAML checks the wiring in action.yml that act cannot (act
// also hands a composite action's inputs to its steps as INPUT_*
// variables, which GitHub's runner does not): every input reaches
// `gpulint action` through the step's env under the name go-githubactions
// reads, no script interpolates an expression, and the outputs come from
// the step.
func TestActionYAML(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var act struct {
		Inputs  map[string]struct{ Default string }
		Outputs map[string]struct{ Value string }
		Runs    struct {
			Using string
			Steps []struct {
				ID   string
				Uses string
				Run  string
				With map[string]string
				Env  map[string]string
			}
		}
	}
	if err := yaml.Unmarshal(data, &act); err != nil {
		t.Fatal(err)
	}
	var names []string
	for n := range act.Inputs {
		names = append(names, n)
	}
	slices.Sort(names)
	if diff := cmp.Diff(actionInputs, names); diff != "" {
		t.Errorf("inputs (-read by gpulint action +declared):\n%s", diff)
	}
	if act.Runs.Using != "composite" {
		t.Errorf("runs.using %q, want composite", act.Runs.Using)
	}
	var runEnv map[string]string
	var setupGo map[string]string
	for _, st := range act.Runs.Steps {
		if strings.Contains(st.Run, "${{") {
			t.Errorf("step %q interpolates an expression into its script:\n%s", st.ID, st.Run)
		}
		if st.ID == "gpulint" {
			runEnv = st.Env
		}
		if strings.HasPrefix(st.Uses, "actions/setup-go@") {
			setupGo = st.With
		}
	}
	want := map[string]string{}
	for _, n := range actionInputs {
		// go-githubactions GetInput: "INPUT_" + upper-cased name, spaces
		// to underscores, dashes kept.
		want["INPUT_"+strings.ToUpper(n)] = "${{ inputs." + n + " }}"
	}
	if diff := cmp.Diff(want, runEnv); diff != "" {
		t.Errorf("env of step gpulint (-want +got):\n%s", diff)
	}
	if got := setupGo["go-version-file"]; got != "${{ github.action_path }}/go.mod" {
		t.Errorf("setup-go go-version-file %q, want the action's own go.mod", got)
	}
	outs := map[string]string{}
	for n, o := range act.Outputs {
		outs[n] = o.Value
	}
	if diff := cmp.Diff(map[string]string{
		"findings": "${{ steps.gpulint.outputs.findings }}", "errors": "${{ steps.gpulint.outputs.errors }}",
		"warnings": "${{ steps.gpulint.outputs.warnings }}", "sarif-file": "${{ steps.gpulint.outputs.sarif-file }}",
	}, outs); diff != "" {
		t.Errorf("outputs (-want +got):\n%s", diff)
	}
	for n, def := range map[string]string{"github-token": "${{ github.token }}", "fail-on": "error", "comment": "true", "suggestions": "true", "only-changed": "true", "paths": ".", "timeout": "10m"} {
		if got := act.Inputs[n].Default; got != def {
			t.Errorf("input %s defaults to %q, want %q", n, got, def)
		}
	}
}
