package cli_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/gpulint/gpulint/internal/cli"
	"github.com/gpulint/gpulint/internal/iostreams"
)

// childEnv, when set, makes the test binary run gpulint itself with the
// arguments it holds (one per line) instead of the tests, then print the
// Go runtime's memory as the last line of stderr: a test that bounds a
// run's memory must see that run's alone, not what earlier tests in the
// same process left the runtime holding.
const childEnv = "GPULINT_TEST_CHILD_ARGS"

func TestMain(m *testing.M) {
	if args, ok := os.LookupEnv(childEnv); ok {
		ios := iostreams.System("1")
		env := cli.Env{Getenv: os.Getenv, LookupEnv: os.LookupEnv}
		code := cli.Run(strings.Split(args, "\n"), ios, env, assets)
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		fmt.Fprintf(os.Stderr, "\ngo-runtime-sys=%d\n", ms.Sys)
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// runChild runs gpulint with args in a fresh process (the test binary, see
// TestMain) and returns its output, exit code and the memory its Go
// runtime obtained from the OS.
func runChild(t *testing.T, args ...string) (stdout, stderr string, code int, sys uint64) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+strings.Join(args, "\n"), "GPULINT_CACHE_DIR="+t.TempDir(),
		"HF_HUB_CACHE="+t.TempDir()) // the machine's own Hugging Face cache stays out of the figures
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatalf("run the child: %v", err)
		}
	}
	stderr = errOut.String()
	i := strings.LastIndex(stderr, "\ngo-runtime-sys=")
	if i < 0 {
		t.Fatalf("the child printed no memory figure; stderr:\n%s", stderr)
	}
	sys, err := strconv.ParseUint(strings.TrimSpace(stderr[i+len("\ngo-runtime-sys="):]), 10, 64)
	if err != nil {
		t.Fatalf("the child's memory figure: %v", err)
	}
	return out.String(), stderr[:i], cmd.ProcessState.ExitCode(), sys
}
