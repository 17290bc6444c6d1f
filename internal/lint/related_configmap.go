package lint

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/gpulint/gpulint/internal/cmdline"
	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/kube"
	"github.com/gpulint/gpulint/internal/source"
	"github.com/gpulint/gpulint/internal/value"
)

// A launching container often reads its recipe from a ConfigMap volume
// (/workspace/configs/run.yaml, mounted from ConfigMap recipes). Which
// repository file that is, the repository states where it builds the
// ConfigMap: a script's `kubectl create configmap recipes
// --from-file=run.yaml=config/run.yaml`, or a kustomization's
// configMapGenerator. The launch graph links the recipe through that
// statement only; a file that merely shares the key's name is not linked.

// configMapRef is a config file a launching container reads through a
// ConfigMap mount: the ConfigMap and key, and where the mount is.
type configMapRef struct {
	name, key string
	at        finding.Range
}

// configMapSource is one repository file (or directory) a script or a
// kustomization packs into a ConfigMap.
type configMapSource struct {
	src  relatedSource // the script or kustomization
	name string
	// key is the data key as written; empty when it is the file's base
	// name (each file's, for a directory).
	key     string
	written string // the source path as written
	at      finding.Range
}

// mountedConfigs returns the config and script options of a launch whose
// absolute path the container sees through a ConfigMap volume.
func mountedConfigs(c kube.Container, la *cmdline.TrainLaunch, at func([]any) finding.Range) map[string]configMapRef {
	var out map[string]configMapRef
	for _, opt := range append(configOpts[:len(configOpts):len(configOpts)], cmdline.OptScript) {
		o, ok := la.Opts[opt]
		if !ok || !o.Known {
			continue
		}
		m, key, mounted := c.ConfigMapFile(o.Value)
		if !mounted {
			continue
		}
		if out == nil {
			out = map[string]configMapRef{}
		}
		out[opt] = configMapRef{name: m.ConfigMap, key: key, at: at(m.Path)}
	}
	return out
}

// packs returns the source that packs the file at target (absolute,
// clean) into the referenced ConfigMap under its key; nil when none does.
func (r configMapRef) packs(cms []configMapSource, root, target string) *configMapSource {
	if p, s := r.packed(cms, root); p == target {
		return s
	}
	return nil
}

// packed returns the repository file a source packs into the referenced
// ConfigMap under its key, and that source; "" when none does.
func (r configMapRef) packed(cms []configMapSource, root string) (string, *configMapSource) {
	if r.key == "" {
		return "", nil
	}
	for i := range cms {
		s := &cms[i]
		if s.name != r.name {
			continue
		}
		p := s.resolve(root)
		if p == "" {
			continue
		}
		st, err := os.Stat(p)
		switch {
		case err != nil:
		case st.Mode().IsRegular() && (s.key == r.key || s.key == "" && filepath.Base(p) == r.key):
			return p, s
		case st.IsDir() && s.key == "":
			// A directory packs each regular file under its base name.
			if f := filepath.Join(p, r.key); regularIn(f, root) {
				return f, s
			}
		}
	}
	return "", nil
}

// resolve returns the file or directory the source's path names, read
// from the stating file's directory or one above it up to root, as a
// script is run from the repository's or the sample's top; a
// kustomization's from its own directory, and only below it. "" when none exists or the
// path is only known to the running shell or names the machine that ran
// it.
func (s *configMapSource) resolve(root string) string {
	if s.written == "" || strings.ContainsAny(s.written, "$`*?") {
		return ""
	}
	w := filepath.Clean(filepath.FromSlash(s.written))
	if filepath.IsAbs(w) {
		return ""
	}
	if isKustomization(filepath.Base(s.src.path)) {
		// kustomize build reads only files in or under the
		// kustomization's directory unless run with --load-restrictor
		// LoadRestrictionsNone (kustomize docs, build:
		// https://kubectl.docs.kubernetes.io/references/kustomize/cmd/build/).
		d := filepath.Dir(s.src.path)
		if p := filepath.Join(d, w); within(p, d) && within(p, root) {
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
		return ""
	}
	for d := filepath.Dir(s.src.path); within(d, root); d = filepath.Dir(d) {
		p := filepath.Join(d, w)
		if _, err := os.Stat(p); err == nil && within(p, root) {
			return p
		}
		if d == root {
			break
		}
	}
	return ""
}

// regularIn reports whether p is a regular file within root.
func regularIn(p, root string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && within(p, root)
}

// scriptConfigMaps reads the files a shell script packs into ConfigMaps.
func scriptConfigMaps(p string, f *source.File) []configMapSource {
	if !strings.Contains(string(f.Data), "configmap") && !strings.Contains(string(f.Data), " cm ") {
		return nil
	}
	var out []configMapSource
	for _, c := range cmdline.ConfigMapsInScript(p, string(f.Data)) {
		out = append(out, configMapSource{src: relatedSource{path: p, file: f}, name: c.Name, key: c.Key,
			written: c.Source, at: spanRange(f, c.Span)})
	}
	return out
}

// isKustomization reports whether a file name is one kustomize reads.
func isKustomization(name string) bool {
	switch name {
	case "kustomization.yaml", "kustomization.yml", "Kustomization":
		return true
	}
	return false
}

// kustomizeConfigMaps reads a kustomization's configMapGenerator: each
// generator's name and its files entries, `PATH` or `KEY=PATH`, the key
// defaulting to the file's base name (kustomize docs, configMapGenerator:
// https://kubectl.docs.kubernetes.io/references/kustomize/kustomization/configmapgenerator/).
// kustomize adds a content hash to the name and rewrites the references
// of the resources it builds with it, so the name as written is the one
// a manifest of the same kustomization mounts.
func kustomizeConfigMaps(p string, data []byte, lim source.Limits) []configMapSource {
	f, err := source.Parse(p, data, lim)
	if err != nil || len(f.Docs) == 0 || f.Docs[0].Root == nil {
		return nil
	}
	root := f.Docs[0].Root
	v, err := root.ToValue(lim.MaxNodes)
	if err != nil {
		return nil
	}
	m, _ := v.(map[string]any)
	rs := relatedSource{path: p, file: f}
	var out []configMapSource
	for gi, g := range value.List(m["configMapGenerator"]) {
		gm, _ := g.(map[string]any)
		name := value.String(gm["name"])
		if name == "" {
			continue
		}
		for fi, e := range value.List(gm["files"]) {
			s := value.String(e)
			key, written, keyed := strings.Cut(s, "=")
			if !keyed {
				key, written = "", s
			}
			if written == "" {
				continue
			}
			at := root.Range(p)
			if n, _, matched := root.Lookup([]any{"configMapGenerator", gi, "files", fi}); n != nil && matched == 4 {
				at = n.Range(p)
			}
			out = append(out, configMapSource{src: rs, name: name, key: key, written: written, at: at})
		}
	}
	return out
}
