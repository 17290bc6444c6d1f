package act_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

// asset is one release archive as .goreleaser.yaml names it.
type asset struct {
	name string
	data []byte
}

// releaseAsset builds gpulint from repo as a release does (static,
// stamped with releaseTag) and packs it as the archive action.yml
// downloads for this host; it returns the archive and its sha256.
func releaseAsset(t *testing.T, repo, tmp string) (asset, string) {
	t.Helper()
	bin := filepath.Join(tmp, "release", "gpulint")
	cmd := exec.Command("go", "build", "-trimpath",
		"-ldflags", "-X github.com/gpulint/gpulint/internal/cli.Version="+releaseTag,
		"-o", bin, "./cmd/gpulint")
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	exe, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, f := range []struct {
		name string
		mode int64
		data []byte
	}{{"README.md", 0o644, []byte("gpulint\n")}, {"gpulint", 0o755, exe}} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.data)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(f.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(buf.Bytes())
	name := fmt.Sprintf("gpulint_%s_%s_%s.tar.gz", strings.TrimPrefix(releaseTag, "v"), runtime.GOOS, runtime.GOARCH)
	return asset{name: name, data: buf.Bytes()}, hex.EncodeToString(sum[:])
}

// releaseServer serves a release's assets as GitHub does, under
// <server>/<owner>/<repo>/releases/download/<tag>/, and records what was
// fetched.
type releaseServer struct {
	URL string

	mu  sync.Mutex
	got []string
}

// newReleaseServer serves a and a checksums.txt that gives it checksum
// (sha256sum's format, beside another platform's line).
func newReleaseServer(t *testing.T, a asset, checksum string) *releaseServer {
	t.Helper()
	other := "gpulint_" + strings.TrimPrefix(releaseTag, "v") + "_windows_arm64.tar.gz"
	files := map[string][]byte{
		a.name:          a.data,
		"checksums.txt": []byte(strings.Repeat("1", 64) + "  " + other + "\n" + checksum + "  " + a.name + "\n"),
	}
	rs := &releaseServer{}
	prefix := "/gpulint/gpulint/releases/download/" + releaseTag + "/"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, ok := strings.CutPrefix(r.URL.Path, prefix)
		data, found := files[name]
		if !ok || !found || r.Method != http.MethodGet {
			http.NotFound(w, r)
			return
		}
		rs.mu.Lock()
		rs.got = append(rs.got, path.Base(name))
		rs.mu.Unlock()
		w.Write(data)
	}))
	t.Cleanup(srv.Close)
	rs.URL = srv.URL
	return rs
}

// requests are the names fetched, in order.
func (rs *releaseServer) requests() []string {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return slices.Clone(rs.got)
}
