package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// Version, Commit and Date are stamped by release builds (.goreleaser.yaml,
// Dockerfile):
//
//	-ldflags "-X github.com/gpulint/gpulint/internal/cli.Version=v0.2.0
//	          -X github.com/gpulint/gpulint/internal/cli.Commit=<sha>
//	          -X github.com/gpulint/gpulint/internal/cli.Date=<RFC 3339>"
//
// They are link-time constants, never assigned by the program. Left empty,
// the build information Go records stands in: the module version (a tag
// with `go install ...@v0.2.0`, a pseudo-version in a clone), vcs.revision,
// vcs.modified and vcs.time.
var (
	Version string
	Commit  string
	Date    string
)

// develVersion names a build that recorded no version at all.
const develVersion = "(devel)"

// Build describes the running binary.
type Build struct {
	// Version is the release tag, the module (pseudo-)version or (devel).
	Version string
	// Revision is the full VCS commit, empty when the build recorded none.
	Revision string
	// Modified says the work tree had uncommitted changes.
	Modified bool
	// Time is the build time of a release build, else the commit time
	// (Go records no build time); TimeIsCommit tells which.
	Time         string
	TimeIsCommit bool
	// Go and Platform are the toolchain and GOOS/GOARCH.
	Go, Platform string
}

// CurrentBuild describes this binary: the ldflags stamps where a release
// set them, Go's build information for the rest.
func CurrentBuild() Build {
	bi, _ := debug.ReadBuildInfo()
	return resolveBuild(Version, Commit, Date, bi)
}

// ToolVersion is the version gpulint reports in SARIF, caches and
// comments.
func ToolVersion() string { return CurrentBuild().Version }

// resolveBuild merges the ldflags stamps (which win) with Go's build
// information; bi may be nil.
func resolveBuild(version, commit, date string, bi *debug.BuildInfo) Build {
	b := Build{Version: version, Revision: commit, Time: date, Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi == nil {
		if b.Version == "" {
			b.Version = develVersion
		}
		return b
	}
	b.Go = bi.GoVersion
	if b.Version == "" {
		b.Version = bi.Main.Version
	}
	if b.Version == "" {
		b.Version = develVersion
	}
	var rev, modified, vcsTime string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		case "vcs.time":
			vcsTime = s.Value
		case "GOOS":
			b.Platform = s.Value + b.Platform[strings.Index(b.Platform, "/"):]
		case "GOARCH":
			b.Platform = b.Platform[:strings.Index(b.Platform, "/")+1] + s.Value
		}
	}
	if b.Revision == "" {
		b.Revision = rev
		// modified belongs to the recorded revision; a stamped commit
		// comes from a clean release checkout.
		b.Modified = modified == "true"
	}
	if b.Time == "" && vcsTime != "" {
		b.Time, b.TimeIsCommit = vcsTime, true
	}
	return b
}

// String is the version line without the program name:
// "v0.2.0 (commit 0123…, modified, built 2026-01-02T03:04:05Z, go1.26.0 linux/amd64)".
func (b Build) String() string {
	var parts []string
	if b.Revision != "" {
		parts = append(parts, "commit "+b.Revision)
	}
	if b.Modified {
		parts = append(parts, "modified")
	}
	if b.Time != "" {
		if b.TimeIsCommit {
			parts = append(parts, "committed "+b.Time)
		} else {
			parts = append(parts, "built "+b.Time)
		}
	}
	tool := strings.TrimSpace(b.Go + " " + b.Platform)
	if tool != "" {
		parts = append(parts, tool)
	}
	if len(parts) == 0 {
		return b.Version
	}
	return b.Version + " (" + strings.Join(parts, ", ") + ")"
}

// versionTemplate makes `gpulint --version` print what `gpulint version`
// prints.
const versionTemplate = "gpulint {{.Version}}\n"

// NewCmdVersion prints the version.
func NewCmdVersion(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print gpulint's version, commit and build",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(f.IO.Out, "gpulint %s\n", CurrentBuild())
			return err
		},
	}
}
