package release_test

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"
)

const cliPkg = "github.com/gpulint/gpulint/internal/cli"

// repoRoot is the repository this test runs in.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// goreleaser is the part of .goreleaser.yaml (schema version 2) that the
// Action, the version command and the install docs depend on.
type goreleaser struct {
	Version int
	Project string `yaml:"project_name"`
	Builds  []struct {
		ID      string
		Main    string
		Binary  string
		Env     []string
		GOOS    []string `yaml:"goos"`
		GOARCH  []string `yaml:"goarch"`
		Flags   []string
		Ldflags []string
	}
	Archives []struct {
		IDs          []string `yaml:"ids"`
		Formats      []string
		NameTemplate string `yaml:"name_template"`
	}
	Checksum struct {
		NameTemplate string `yaml:"name_template"`
		Algorithm    string
	}
}

func loadGoreleaser(t *testing.T) goreleaser {
	t.Helper()
	var g goreleaser
	dec := yaml.NewDecoder(strings.NewReader(readFile(t, ".goreleaser.yaml")))
	if err := dec.Decode(&g); err != nil {
		t.Fatalf(".goreleaser.yaml: %v", err)
	}
	return g
}

// TestGoreleaserConfig holds .goreleaser.yaml to what the rest of the
// repository expects of a release.
func TestGoreleaserConfig(t *testing.T) {
	g := loadGoreleaser(t)
	if g.Version != 2 {
		t.Errorf("version %d, want 2 (goreleaser v2 schema)", g.Version)
	}
	if len(g.Builds) != 1 {
		t.Fatalf("%d builds, want 1", len(g.Builds))
	}
	b := g.Builds[0]
	got := map[string]any{
		"main": b.Main, "binary": b.Binary, "env": b.Env, "flags": b.Flags,
		"goos": sorted(b.GOOS), "goarch": sorted(b.GOARCH),
	}
	want := map[string]any{
		"main": "./cmd/gpulint", "binary": "gpulint", "env": []string{"CGO_ENABLED=0"}, "flags": []string{"-trimpath"},
		"goos": []string{"darwin", "linux", "windows"}, "goarch": []string{"amd64", "arm64"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("build (-want +got):\n%s", diff)
	}
	ld := strings.Join(b.Ldflags, " ")
	for _, v := range []string{"Version=v{{ .Version }}", "Commit={{ .FullCommit }}", "Date={{ .Date }}"} {
		if !strings.Contains(ld, "-X "+cliPkg+"."+v) {
			t.Errorf("ldflags lack -X %s.%s: %s", cliPkg, v, ld)
		}
	}
	if len(g.Archives) != 1 {
		t.Fatalf("%d archives, want 1", len(g.Archives))
	}
	a := g.Archives[0]
	if diff := cmp.Diff([]string{"tar.gz"}, a.Formats); diff != "" {
		t.Errorf("archive formats (-want +got), action.yml unpacks tar.gz:\n%s", diff)
	}
	if g.Checksum.NameTemplate != "checksums.txt" || g.Checksum.Algorithm != "sha256" {
		t.Errorf("checksum %+v, want checksums.txt with sha256 (action.yml verifies with sha256sum)", g.Checksum)
	}

	// The asset action.yml downloads for each runner is the one this
	// archive template names, for every target built.
	action := readFile(t, "action.yml")
	const actionAsset = `asset="gpulint_${ACTION_REF#v}_${os}_${arch}.tar.gz"`
	if !strings.Contains(action, actionAsset) {
		t.Fatalf("action.yml no longer names the asset %s", actionAsset)
	}
	for _, want := range []string{"Linux) os=linux", "macOS) os=darwin", "Windows) os=windows", "X64) arch=amd64", "ARM64) arch=arm64", "checksums.txt", "sha256sum"} {
		if !strings.Contains(action, want) {
			t.Errorf("action.yml lacks %q", want)
		}
	}
	for _, goos := range b.GOOS {
		for _, goarch := range b.GOARCH {
			name := renderTemplate(t, a.NameTemplate, map[string]string{"ProjectName": g.Project, "Version": "1.2.3", "Os": goos, "Arch": goarch})
			if want := "gpulint_1.2.3_" + goos + "_" + goarch; name != want {
				t.Errorf("archive of %s/%s is %q; action.yml downloads %q", goos, goarch, name, want)
			}
		}
	}
}

var templateField = regexp.MustCompile(`{{\s*\.(\w+)\s*}}`)

// renderTemplate fills goreleaser's {{ .Field }} placeholders; anything
// else left over is a template this test does not understand.
func renderTemplate(t *testing.T, tmpl string, vals map[string]string) string {
	t.Helper()
	out := templateField.ReplaceAllStringFunc(tmpl, func(m string) string {
		k := templateField.FindStringSubmatch(m)[1]
		v, ok := vals[k]
		if !ok {
			t.Fatalf("template %q: no value for .%s", tmpl, k)
		}
		return v
	})
	if strings.Contains(out, "{{") {
		t.Fatalf("template %q: left %q", tmpl, out)
	}
	return out
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// dockerfile is the part of the Dockerfile this test reads: the build
// stage's ENV and `go build` line, and the final stage.
type dockerfile struct {
	buildEnv   []string
	buildCmd   string
	finalBase  string
	finalUser  string
	entrypoint string
}

func parseDockerfile(t *testing.T) dockerfile {
	t.Helper()
	var d dockerfile
	stage := 0
	for _, line := range strings.Split(readFile(t, "Dockerfile"), "\n") {
		line = strings.TrimSpace(line)
		instr, rest, _ := strings.Cut(line, " ")
		switch instr {
		case "FROM":
			stage++
			if stage == 2 {
				d.finalBase = strings.Fields(rest)[0]
			}
		case "ENV":
			if stage == 1 {
				d.buildEnv = append(d.buildEnv, strings.Fields(rest)...)
			}
		case "RUN":
			if stage == 1 && strings.HasPrefix(rest, "go build ") {
				d.buildCmd = rest
			}
		case "USER":
			if stage == 2 {
				d.finalUser = rest
			}
		case "ENTRYPOINT":
			d.entrypoint = rest
		}
	}
	if stage != 2 || d.buildCmd == "" {
		t.Fatalf("Dockerfile: want two stages and a `RUN go build` in the first, got %d stages, build %q", stage, d.buildCmd)
	}
	return d
}

func TestDockerfileShape(t *testing.T) {
	d := parseDockerfile(t)
	if !slices.Contains(d.buildEnv, "CGO_ENABLED=0") || !slices.Contains(d.buildEnv, "GOFLAGS=-trimpath") {
		t.Errorf("build stage env %q: want CGO_ENABLED=0 and GOFLAGS=-trimpath, as .goreleaser.yaml builds", d.buildEnv)
	}
	if !strings.HasPrefix(d.finalBase, "gcr.io/distroless/static") && d.finalBase != "scratch" {
		t.Errorf("final base %q: want distroless/static or scratch (the binary is static)", d.finalBase)
	}
	if d.finalUser == "" || strings.HasPrefix(d.finalUser, "root") || strings.HasPrefix(d.finalUser, "0") {
		t.Errorf("final USER %q: want a non-root user", d.finalUser)
	}
	if !strings.Contains(d.entrypoint, "gpulint") {
		t.Errorf("ENTRYPOINT %q does not run gpulint", d.entrypoint)
	}
}

// TestReleaseBuilds builds gpulint the way the Dockerfile's build stage
// and goreleaser do, with release stamps, and checks the binary is static
// and reports what was stamped.
func TestReleaseBuilds(t *testing.T) {
	if testing.Short() {
		t.Skip("builds gpulint twice; skipped with -short")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	const (
		version = "v0.9.9"
		commit  = "0123456789abcdef0123456789abcdef01234567"
		date    = "2026-01-02T03:04:05Z"
	)
	d := parseDockerfile(t)
	g := loadGoreleaser(t)
	b := g.Builds[0]
	tmp := t.TempDir()

	dockerArgs := strings.NewReplacer("${VERSION}", version, "${COMMIT}", commit, "${DATE}", date).Replace(d.buildCmd)
	ld := renderTemplate(t, strings.Join(b.Ldflags, " "), map[string]string{"Version": strings.TrimPrefix(version, "v"), "FullCommit": commit, "Date": date})
	tests := []struct {
		name string
		// shell command run in the repository root with env; $OUT is the binary
		cmd string
		env []string
	}{
		{"Dockerfile build stage", strings.Replace(dockerArgs, "-o /out/gpulint", `-o "$OUT"`, 1), d.buildEnv},
		{"goreleaser build", `go build ` + strings.Join(b.Flags, " ") + ` -ldflags '` + ld + `' -o "$OUT" ` + b.Main, b.Env},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(tc.cmd, `-o "$OUT"`) {
				t.Fatalf("cannot redirect the output of %q", tc.cmd)
			}
			out := filepath.Join(tmp, "gpulint"+string(rune('0'+i)))
			cmd := exec.Command("sh", "-c", tc.cmd)
			cmd.Dir = repoRoot(t)
			cmd.Env = append(os.Environ(), tc.env...)
			cmd.Env = append(cmd.Env, "OUT="+out, "PATH="+filepath.Dir(goBin)+string(os.PathListSeparator)+os.Getenv("PATH"))
			if msg, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", tc.cmd, err, msg)
			}
			if runtime.GOOS == "linux" {
				assertStatic(t, out)
			}
			got, err := exec.Command(out, "version").Output()
			if err != nil {
				t.Fatalf("gpulint version: %v", err)
			}
			want := "gpulint " + version + " (commit " + commit + ", built " + date + ", "
			if !strings.HasPrefix(string(got), want) {
				t.Errorf("gpulint version = %q, want prefix %q", got, want)
			}
			flag, err := exec.Command(out, "--version").Output()
			if err != nil || !bytes.Equal(flag, got) {
				t.Errorf("gpulint --version = %q (%v), want %q", flag, err, got)
			}
		})
	}
}

// assertStatic fails unless the ELF file has no interpreter and needs no
// shared library: it runs on distroless/static and scratch.
func assertStatic(t *testing.T, path string) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s has a dynamic loader (PT_INTERP): not static", path)
		}
	}
	libs, err := f.ImportedLibraries()
	if err != nil {
		t.Fatal(err)
	}
	if len(libs) > 0 {
		t.Errorf("%s needs shared libraries %q: not static", path, libs)
	}
}

// pin is a ref the README tells users to pin: the Action's `uses:` and
// pre-commit's `rev:`.
var pin = regexp.MustCompile(`(?m)^\s*(?:-\s+)?(?:uses:\s+gpulint/gpulint@|rev:\s+)(\S+)`)

var fullSHA = regexp.MustCompile(`^[0-9a-f]{40}$`)

// TestReadmePins checks that every install snippet in the README pins a
// ref that exists: a full commit SHA in this repository's history or a
// tag. A branch (which moves) or a tag not yet created fails.
func TestReadmePins(t *testing.T) {
	readme := readFile(t, "README.md")
	pins := pin.FindAllStringSubmatch(readme, -1)
	if len(pins) < 3 {
		t.Fatalf("found %d pinned refs in README.md, want the Action's two and pre-commit's: %q", len(pins), pins)
	}
	git := func(args ...string) (string, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir = repoRoot(t)
		out, err := cmd.Output()
		return strings.TrimSpace(string(out)), err
	}
	shallow, err := git("rev-parse", "--is-shallow-repository")
	if err != nil {
		t.Fatalf("git rev-parse: %v (the test reads this repository's history)", err)
	}
	for _, m := range pins {
		ref := m[1]
		switch {
		case fullSHA.MatchString(ref):
			if _, err := git("cat-file", "-e", ref+"^{commit}"); err != nil {
				if shallow == "true" {
					t.Logf("%s: not in this shallow clone's history; only its form is checked", ref)
					continue
				}
				t.Errorf("README pins %s, which is no commit of this repository", ref)
			}
		default:
			if _, err := git("rev-parse", "--verify", "--quiet", "refs/tags/"+ref); err != nil {
				t.Errorf("README pins %q, which is neither a 40-hex commit SHA nor an existing tag", ref)
			}
		}
	}
}
