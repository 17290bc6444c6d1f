package cmdline

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// Version is a vLLM release a file states: the tag of a vllm/vllm-openai
// image, or the pin of a `pip install vllm==X.Y.Z` in the container's
// script. Zero when the file states none.
type Version struct {
	Major, Minor, Patch int
	// From says where the version was read: "image vllm/vllm-openai:v0.10.0"
	// or "pip install vllm==0.9.2".
	From string
}

// Known reports whether a version was stated.
func (v Version) Known() bool { return v.From != "" }

// String renders the version as vLLM tags it ("v0.10.0").
func (v Version) String() string {
	return "v" + strconv.Itoa(v.Major) + "." + strconv.Itoa(v.Minor) + "." + strconv.Itoa(v.Patch)
}

// Less orders versions by major, minor, patch.
func (v Version) Less(o Version) bool {
	if v.Major != o.Major {
		return v.Major < o.Major
	}
	if v.Minor != o.Minor {
		return v.Minor < o.Minor
	}
	return v.Patch < o.Patch
}

var (
	tagVersion = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^v?(\d+)\.(\d+)(?:\.(\d+))?(?:[-.+].*)?$`) })
	pipVersion = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?:^|[\s'"])vllm(?:\[[^\]]*\])?==(\d+)\.(\d+)(?:\.(\d+))?`)
	})
)

func parseVersion(m []string, from string) Version {
	v := Version{From: from}
	v.Major, _ = strconv.Atoi(m[1])
	v.Minor, _ = strconv.Atoi(m[2])
	if m[3] != "" {
		v.Patch, _ = strconv.Atoi(m[3])
	}
	return v
}

// StatedRelease reads a release written as X.Y or X.Y.Z, with or without
// a leading v (--vllm-version, a project file's vllm_version); from says
// where it was written. The zero Version when s is not one.
func StatedRelease(s, from string) Version {
	m := tagVersion().FindStringSubmatch(s)
	if m == nil {
		return Version{}
	}
	return parseVersion(m, from)
}

// ImageVersion reads the release from a vLLM server image's tag
// ("vllm/vllm-openai:v0.10.0", "…:0.9.2", "…:v0.8.5.post1"). Tags such as
// "latest", "nightly" or a digest state no version.
func ImageVersion(image string) Version {
	if !IsVLLMImage(image) {
		return Version{}
	}
	name, _, _ := strings.Cut(image, "@")
	i := strings.LastIndex(name, ":")
	if i < 0 || strings.Contains(name[i:], "/") {
		return Version{}
	}
	m := tagVersion().FindStringSubmatch(name[i+1:])
	if m == nil {
		return Version{}
	}
	return parseVersion(m, "image "+image)
}

// PipVersion reads a `vllm==X.Y[.Z]` pin from a shell script, as in
// `pip install vllm==0.9.2 && vllm serve …`.
func PipVersion(script string) Version {
	m := pipVersion().FindStringSubmatch(script)
	if m == nil {
		return Version{}
	}
	return parseVersion(m, "pip install "+strings.Trim(strings.TrimSpace(m[0]), `'"`))
}

// Removal is when vLLM dropped an option and where that is recorded.
type Removal struct {
	Option string
	In     Version // first release without the option
	Source string
}

// removals lists options vLLM removed, with the release that dropped them
// (reference: /work/shared/reference/vllm.md §2; vllm-project/vllm
// vllm/engine/arg_utils.py, AU-old @ 001999d has all three, and the PRs
// that removed them). A file pinned to an older release may use them.
var removals = []Removal{
	{Option: "disable-log-requests", In: Version{Minor: 12}, Source: "vllm-project/vllm#29402"},
	{Option: "max-seq-len-to-capture", In: Version{Minor: 11}, Source: "vllm-project/vllm#25543"},
	{Option: "swap-space", In: Version{Minor: 18}, Source: "vllm-project/vllm#36216"},
}

// RemovalOf returns when an option was removed from vLLM, if it was.
func RemovalOf(name string) (Removal, bool) {
	name = CanonicalName(name)
	for _, r := range removals {
		if r.Option == name {
			return r, true
		}
	}
	return Removal{}, false
}

// Present reports whether release v still has the option: true for an
// option vLLM never removed, and for one removed in a later release.
func (r Removal) Present(v Version) bool { return v.Less(r.In) }

// stated reads the release a container states: the vLLM image's tag, else
// a pip pin in its command or args.
func stated(ct Container) Version {
	if v := ImageVersion(ct.Image); v.Known() {
		return v
	}
	for _, a := range append(append([]Arg(nil), ct.Command...), ct.Args...) {
		if v := PipVersion(a.Text); v.Known() {
			return v
		}
	}
	return Version{}
}

// EnvValue returns the value the manifest states for the container's
// environment variable name, and whether it states one.
func (c *Command) EnvValue(name string) (string, bool) {
	v, ok := c.env[name]
	return v, ok
}
