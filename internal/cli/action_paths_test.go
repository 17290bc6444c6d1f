package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestActionStaysInWorkspace: a pull request controls the workspace, its
// symlinks and possibly the inputs. No path input may lead the Action
// outside: sarif-file is never written outside (by "..", an absolute
// path, or a symlinked directory), a symlink at sarif-file is replaced,
// not written through, and config, paths and model cannot be read from
// outside.
func TestActionStaysInWorkspace(t *testing.T) {
	const victimText = "do not overwrite\n"
	tests := []struct {
		name string
		// setup makes links in the workspace ws; outside is a directory
		// beside it holding victim.sarif and victim.yaml.
		setup      func(t *testing.T, ws, outside string)
		inputs     func(ws, outside string) map[string]string
		wantCode   int
		wantStderr string
		wantSARIF  string // file in the workspace that must hold the SARIF log
	}{
		{
			name: "dot-dot",
			inputs: func(ws, outside string) map[string]string {
				return map[string]string{"sarif-file": "../outside/victim.sarif"}
			},
			wantCode:   2,
			wantStderr: "input sarif-file: ../outside/victim.sarif lies outside the workspace",
		},
		{
			name: "absolute path elsewhere",
			inputs: func(ws, outside string) map[string]string {
				return map[string]string{"sarif-file": filepath.Join(outside, "victim.sarif")}
			},
			wantCode:   2,
			wantStderr: "lies outside the workspace",
		},
		{
			name:  "symlinked directory that leads out",
			setup: func(t *testing.T, ws, outside string) { symlink(t, outside, filepath.Join(ws, "reports")) },
			inputs: func(ws, outside string) map[string]string {
				return map[string]string{"sarif-file": "reports/victim.sarif"}
			},
			wantCode:   2,
			wantStderr: "input sarif-file: reports/victim.sarif: reports is a symlink that leads outside the workspace",
		},
		{
			name: "dangling symlinked directory",
			setup: func(t *testing.T, ws, outside string) {
				symlink(t, filepath.Join(outside, "none"), filepath.Join(ws, "reports"))
			},
			inputs: func(ws, outside string) map[string]string {
				return map[string]string{"sarif-file": "reports/victim.sarif"}
			},
			wantCode:   2,
			wantStderr: "reports is a symlink that leads nowhere",
		},
		{
			name: "symlink at the file is replaced",
			setup: func(t *testing.T, ws, outside string) {
				symlink(t, filepath.Join(outside, "victim.sarif"), filepath.Join(ws, "gpulint.sarif"))
			},
			inputs:    func(ws, outside string) map[string]string { return map[string]string{"sarif-file": "gpulint.sarif"} },
			wantSARIF: "gpulint.sarif",
		},
		{
			name: "symlinked directory inside is followed",
			setup: func(t *testing.T, ws, outside string) {
				if err := os.Mkdir(filepath.Join(ws, "out"), 0o755); err != nil {
					t.Fatal(err)
				}
				symlink(t, "out", filepath.Join(ws, "reports"))
			},
			inputs: func(ws, outside string) map[string]string {
				return map[string]string{"sarif-file": "reports/new/g.sarif"}
			},
			wantSARIF: "out/new/g.sarif",
		},
		{
			name: "config outside",
			inputs: func(ws, outside string) map[string]string {
				return map[string]string{"config": "../outside/victim.yaml"}
			},
			wantCode:   2,
			wantStderr: "input config: ../outside/victim.yaml lies outside the workspace",
		},
		{
			name: "config symlink that leads out",
			setup: func(t *testing.T, ws, outside string) {
				symlink(t, filepath.Join(outside, "victim.yaml"), filepath.Join(ws, "gpulint.yaml"))
			},
			inputs:     func(ws, outside string) map[string]string { return map[string]string{"config": "gpulint.yaml"} },
			wantCode:   2,
			wantStderr: "input config: gpulint.yaml is a symlink that leads outside the workspace",
		},
		{
			name:       "paths outside",
			inputs:     func(ws, outside string) map[string]string { return map[string]string{"paths": "configs ../outside"} },
			wantCode:   2,
			wantStderr: "input paths: ../outside lies outside the workspace",
		},
		{
			name:       "paths directory symlink that leads out",
			setup:      func(t *testing.T, ws, outside string) { symlink(t, outside, filepath.Join(ws, "more")) },
			inputs:     func(ws, outside string) map[string]string { return map[string]string{"paths": "configs more"} },
			wantCode:   2,
			wantStderr: "input paths: more is a symlink that leads outside the workspace",
		},
		{
			name:       "model directory outside",
			inputs:     func(ws, outside string) map[string]string { return map[string]string{"model": "../outside"} },
			wantCode:   2,
			wantStderr: "input model: ../outside lies outside the workspace",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := newActionRun(t, "", pushEvent, map[string]string{"configs/ds.json": cleanDS})
			outside := filepath.Join(filepath.Dir(a.ws), "outside")
			victims := map[string]string{
				filepath.Join(outside, "victim.sarif"): victimText,
				filepath.Join(outside, "victim.yaml"):  "rules:\n  fp32-where-bf16: error\n",
			}
			for p, text := range victims {
				write(t, outside, filepath.Base(p), text)
			}
			if tc.setup != nil {
				tc.setup(t, a.ws, outside)
			}
			_, stderr, code := a.run(t, tc.inputs(a.ws, outside))
			if code != tc.wantCode || !strings.Contains(stderr, tc.wantStderr) {
				t.Errorf("exit %d, stderr %q; want %d with %q", code, stderr, tc.wantCode, tc.wantStderr)
			}
			for p, text := range victims {
				if got := a.read(t, p); got != text {
					t.Errorf("%s outside the workspace was overwritten:\n%s", p, got)
				}
			}
			entries, err := os.ReadDir(outside)
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) != len(victims) {
				t.Errorf("%d entries outside the workspace, want the %d victims", len(entries), len(victims))
			}
			if tc.wantSARIF != "" {
				p := filepath.Join(a.ws, filepath.FromSlash(tc.wantSARIF))
				st, err := os.Lstat(p)
				if err != nil || !st.Mode().IsRegular() {
					t.Fatalf("%s is not a regular file: %v, %v", tc.wantSARIF, st, err)
				}
				if s := a.read(t, p); !strings.Contains(s, `"$schema"`) {
					t.Errorf("%s does not hold the SARIF log:\n%s", tc.wantSARIF, s)
				}
			}
		})
	}
}

// symlink makes a symlink or fails the test: these cases mean nothing
// without one.
func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}
