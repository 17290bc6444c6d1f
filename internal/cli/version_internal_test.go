package cli

import (
	"runtime/debug"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestResolveBuild(t *testing.T) {
	const rev = "acee74f0123456789abcdef0123456789abcdef0"
	clone := &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Main:      debug.Module{Path: "github.com/gpulint/gpulint", Version: "v0.0.0-20260102030405-acee74f01234+dirty"},
		Settings: []debug.BuildSetting{
			{Key: "GOOS", Value: "linux"}, {Key: "GOARCH", Value: "arm64"},
			{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "true"},
			{Key: "vcs.time", Value: "2026-01-02T03:04:05Z"},
		},
	}
	installed := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.2.0"},
		Settings: []debug.BuildSetting{{Key: "GOOS", Value: "darwin"}, {Key: "GOARCH", Value: "amd64"}}}
	tests := []struct {
		name                  string
		version, commit, date string
		bi                    *debug.BuildInfo
		want                  string
	}{
		{
			name: "build info of a clone: pseudo-version, revision, modified, commit time",
			bi:   clone,
			want: "v0.0.0-20260102030405-acee74f01234+dirty (commit " + rev + ", modified, committed 2026-01-02T03:04:05Z, go1.26.8 linux/arm64)",
		},
		{
			name:    "ldflags of a release win over the build info",
			version: "v0.3.1", commit: "1111111111111111111111111111111111111111", date: "2026-03-04T05:06:07Z",
			bi:   clone,
			want: "v0.3.1 (commit 1111111111111111111111111111111111111111, built 2026-03-04T05:06:07Z, go1.26.8 linux/arm64)",
		},
		{
			name:    "ldflags version alone keeps the recorded revision",
			version: "v0.3.1",
			bi:      clone,
			want:    "v0.3.1 (commit " + rev + ", modified, committed 2026-01-02T03:04:05Z, go1.26.8 linux/arm64)",
		},
		{
			name: "go install of a tag: the module version",
			bi:   installed,
			want: "v0.2.0 (go1.26.8 darwin/amd64)",
		},
		{
			name: "no build info, no ldflags",
			want: "(devel) (" + resolveBuild("", "", "", nil).Platform + ")",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := resolveBuild(tc.version, tc.commit, tc.date, tc.bi).String()
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("version line (-want +got):\n%s", diff)
			}
		})
	}
}
