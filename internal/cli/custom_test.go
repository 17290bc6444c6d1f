package cli_test

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

const latestImagePolicy = `# METADATA
# title: GPU images must pin a tag
# custom:
#   id: TEAM001
#   slug: team-pinned-gpu-image
#   severity: error
#   rationale: Our clusters cache images by tag; :latest breaks reproducibility.
#   remediation: Pin the image to a version tag.
#   kinds: [kubernetes]
#   since: 0.1.0
#   fixable: false
package team.images

import data.gpulint.lib

findings contains f if {
	some pod in input.k8s.pods
	some c in pod.containers
	c.gpu > 0
	endswith(c.image, ":latest")
	f := lib.finding(array.concat(c.path, ["image"]), sprintf("container %q runs %s", [c.name, c.image]))
}
`

const gpuPod = `apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
    - name: train
      image: example/train:latest
      resources:
        limits:
          nvidia.com/gpu: 1
`

func sandboxPolicy(body string) string {
	return `# METADATA
# title: Sandbox probe
# custom:
#   id: TEAM900
#   slug: team-sandbox-probe
#   severity: error
#   rationale: Probes the sandbox.
#   remediation: None.
#   kinds: ["*"]
#   since: 0.1.0
#   fixable: false
package team.probe

findings contains f if {
` + body + `
	f := {"path": [], "message": "probe"}
}
`
}

// TestCustomPolicies: a team's own rules run with the built-in ones, from
// --policy or the project file, and get positions like any rule.
func TestCustomPolicies(t *testing.T) {
	dir := t.TempDir()
	pod := write(t, dir, "k8s/pod.yaml", gpuPod)
	write(t, dir, "policies/images.rego", latestImagePolicy)

	stdout, stderr, code := run(t, false, nil, "lint", "--policy", filepath.Join(dir, "policies"), pod)
	want := pod + ":7:7: error team-pinned-gpu-image: container \"train\" runs example/train:latest"
	if code != 1 || !strings.Contains(stdout, want) {
		t.Errorf("--policy: code %d, stderr %q, stdout:\n%s\nwant line %q", code, stderr, stdout, want)
	}

	write(t, dir, ".gpulint.yaml", "policies: [policies]\n")
	stdout, _, code = run(t, false, nil, "lint", pod)
	if code != 1 || !strings.Contains(stdout, "team-pinned-gpu-image") {
		t.Errorf("project policies: code %d stdout:\n%s", code, stdout)
	}
}

// TestSandbox: custom policies cannot reach the network, the environment
// or nondeterministic built-ins, and a runaway policy is cut off.
func TestSandbox(t *testing.T) {
	tests := []struct {
		name       string
		body       string
		wantStderr string
	}{
		{"http.send", `	r := http.send({"method": "GET", "url": "http://127.0.0.1:1/"})
	r.status_code == 200`, "http.send"},
		{"opa.runtime reads the environment", `	rt := opa.runtime()
	rt.env.GITHUB_TOKEN != ""`, "opa.runtime"},
		{"time.now_ns", `	time.now_ns() > 0`, "time.now_ns"},
		{"rand.intn", `	rand.intn("x", 10) >= 0`, "rand.intn"},
		{"net.lookup_ip_addr", `	count(net.lookup_ip_addr("example.com")) > 0`, "net.lookup_ip_addr"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := write(t, dir, "ds.json", cleanDS)
			write(t, dir, "p/probe.rego", sandboxPolicy(tc.body))
			_, stderr, code := run(t, false, map[string]string{"GITHUB_TOKEN": "ghs_secret"}, "lint", "--policy", filepath.Join(dir, "p"), cfg)
			if code != 2 {
				t.Errorf("exit %d, want 2 (refused at compile time)", code)
			}
			if !strings.Contains(stderr, tc.wantStderr) || !strings.Contains(stderr, "probe.rego") {
				t.Errorf("stderr does not name %s and the file:\n%s", tc.wantStderr, stderr)
			}
			if strings.Contains(stderr, "ghs_secret") {
				t.Error("token leaked into stderr")
			}
		})
	}

	t.Run("runaway policy is cut off", func(t *testing.T) {
		dir := t.TempDir()
		cfg := write(t, dir, "ds.json", cleanDS)
		write(t, dir, "p/probe.rego", sandboxPolicy(`	some i in numbers.range(1, 200000)
	some j in numbers.range(1, 200000)
	i * j == -1`))
		start := time.Now()
		stdout, stderr, code := run(t, false, nil, "lint", "--timeout", "300ms", "--policy", filepath.Join(dir, "p"), cfg)
		if d := time.Since(start); d > 20*time.Second {
			t.Errorf("took %s", d)
		}
		if code != 1 || !strings.Contains(stdout, "policy evaluation took longer than 300ms") {
			t.Errorf("code %d stderr %q stdout:\n%s", code, stderr, stdout)
		}
	})

	t.Run("incomplete metadata is refused", func(t *testing.T) {
		dir := t.TempDir()
		cfg := write(t, dir, "ds.json", cleanDS)
		write(t, dir, "p/bad.rego", strings.Replace(latestImagePolicy, "#   remediation: Pin the image to a version tag.\n", "", 1))
		_, stderr, code := run(t, false, nil, "lint", "--policy", filepath.Join(dir, "p"), cfg)
		if code != 2 || !strings.Contains(stderr, "missing metadata field(s): remediation") {
			t.Errorf("code %d stderr %q", code, stderr)
		}
	})

	t.Run("a custom rule cannot take a built-in id", func(t *testing.T) {
		dir := t.TempDir()
		cfg := write(t, dir, "ds.json", cleanDS)
		write(t, dir, "p/dup.rego", strings.Replace(latestImagePolicy, "TEAM001", "GPU001", 1))
		_, stderr, code := run(t, false, nil, "lint", "--policy", filepath.Join(dir, "p"), cfg)
		if code != 2 || !strings.Contains(stderr, "id GPU001 already used") {
			t.Errorf("code %d stderr %q", code, stderr)
		}
	})
}

// TestMalformedPolicyFinding: a custom policy's finding with a field of the
// wrong type becomes an error finding of that policy at the file's start,
// naming the policy file and the field; the other files and rules are
// still reported and the exit code is that of findings (1), not an
// internal error (2).
func TestMalformedPolicyFinding(t *testing.T) {
	tests := []struct{ name, finding, want string }{
		{"message a number", `{"path": [], "message": 42}`, "message must be a string, got number"},
		{"path not a list", `{"path": "zero_optimization", "message": "m"}`, "path must be a list of keys and indices, got string"},
		{"path of objects", `{"path": [{"a": 1}], "message": "m"}`, "path elements must be strings or numbers, got object"},
		{"related nonsense", `{"path": [], "message": "m", "related": 7}`, "related must be a list, got number"},
		{"patch not a list", `{"path": [], "message": "m", "patch": {"op": "set"}}`, "patch must be a list of operations, got object"},
		{"patch op unknown", `{"path": [], "message": "m", "patch": [{"op": "delete", "path": []}]}`, `patch op delete (want "set" or "remove")`},
		{"level a number", `{"path": [], "message": "m", "level": 3}`, "level must be a string, got number"},
		{"finding not an object", `"just a string"`, "a finding must be an object, got string"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := write(t, dir, "ds.json", cleanDS)
			pod := write(t, dir, "pod.yaml", gpuPod)
			write(t, dir, "p/images.rego", latestImagePolicy)
			write(t, dir, "p/probe.rego", strings.Replace(sandboxPolicy("\tinput.kind == \"deepspeed\""),
				`f := {"path": [], "message": "probe"}`, "f := "+tc.finding, 1))
			stdout, stderr, code := run(t, false, nil, "lint", "--policy", filepath.Join(dir, "p"), cfg, pod)
			want := cfg + ":1:1: error team-sandbox-probe: policy probe.rego returned a finding gpulint cannot read: " + tc.want
			if code != 1 || !strings.Contains(stdout, want) || !strings.Contains(stdout, "team-pinned-gpu-image") {
				t.Errorf("code %d stderr %q stdout:\n%s\nwant line %q and the other policy's finding", code, stderr, stdout, want)
			}
		})
	}
}

// TestPolicyMemoryBound: a custom policy that builds a value of many GiB
// is stopped by the heap watchdog at the policy memory limit (here 64 MiB,
// set by --policy-memory or limits.policy-memory) long before its
// timeout, with a limit-exceeded finding naming the policy file; the other
// files and rules still report, and the Go runtime's memory stays within a
// small multiple of the limit.
func TestPolicyMemoryBound(t *testing.T) {
	const limit = 64 << 20
	tests := []struct {
		name string
		body string
		flag bool // the limit from --policy-memory, else from .gpulint.yaml
	}{
		{"concat of a range", `	x := concat("", [s | some i in numbers.range(1, 100000000); s := "aaaaaaaa"])
	count(x) == 1`, true},
		{"nested comprehension", `	xs := [[i, j, "some padding to make each element bigger"] | some i in numbers.range(1, 100000); some j in numbers.range(1, 100000)]
	count(xs) == 1`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := write(t, dir, "ds.json", cleanDS)
			pod := write(t, dir, "pod.yaml", gpuPod)
			write(t, dir, "p/images.rego", latestImagePolicy)
			write(t, dir, "p/probe.rego", strings.Replace(sandboxPolicy(tc.body), "kinds: [\"*\"]", "kinds: [deepspeed]", 1))
			args := []string{"lint", "--timeout", "5m", "--no-cache", "--policy", filepath.Join(dir, "p"), cfg, pod}
			if tc.flag {
				args = append(args, "--policy-memory", strconv.Itoa(limit))
			} else {
				write(t, dir, ".gpulint.yaml", fmt.Sprintf("limits: {policy-memory: %d}\n", limit))
			}
			start := time.Now()
			stdout, stderr, code, sys := runChild(t, args...)
			d := time.Since(start)
			want := cfg + ":1:1: error limit-exceeded: policy evaluation grew the heap past its limit of 64 MiB while evaluating probe.rego"
			if code != 1 || !strings.Contains(stdout, want) || !strings.Contains(stdout, "team-pinned-gpu-image") {
				t.Errorf("code %d stderr %q stdout:\n%s\nwant %q and the other policy's finding", code, stderr, stdout, want)
			}
			if sys > 3*limit {
				t.Errorf("memory obtained from the OS reached %d MiB, want under %d MiB (3 x the limit)", sys>>20, 3*limit>>20)
			}
			if d > time.Minute {
				t.Errorf("took %s", d)
			}
			t.Logf("%s in %s; Go runtime memory %d MiB", tc.name, d.Round(time.Millisecond), sys>>20)
		})
	}
}
