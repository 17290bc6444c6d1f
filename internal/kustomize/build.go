package kustomize

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/source"
)

// What a kustomization means, from the kustomize reference
// (https://kubectl.docs.kubernetes.io/references/kustomize/kustomization/,
// pages resource, bases, patches, patchesStrategicMerge,
// configMapGenerator, generatorOptions, nameprefix, namesuffix, images)
// and sigs.k8s.io/kustomize api/kv/kv.go (env files) at commit 31a193f:
//   - resources (and the older bases) name files of manifests and
//     directories holding a kustomization, built first, in order; a URL
//     names a remote base, which gpulint never fetches;
//   - files a kustomization reads (patches, env files, manifests) lie in
//     or under its own directory (the default load restrictor,
//     LoadRestrictionsRootOnly, of `kustomize build`); a directory
//     resource may lie anywhere;
//   - configMapGenerator makes a ConfigMap from env files (KEY=VALUE per
//     line, leading blanks trimmed, # comments and blank lines skipped,
//     the value the rest of the line as written; a line without = takes
//     the value from the environment of the machine that builds) and
//     literals (KEY=VALUE, the value stripped of quotes); behavior merge
//     or replace changes a generator of the same name from a base;
//   - patches (path or inline patch, optionally a target) and
//     patchesStrategicMerge apply strategic-merge patches to the resource
//     of the patch's kind and name (merge.go); a JSON6902 patch (a list
//     of operations) is not read here;
//   - namePrefix and nameSuffix rename every resource of the build and
//     the references to them, a ConfigMap's in env, envFrom and volumes
//     included;
//   - images sets the name, tag or digest of the containers' images that
//     name the given image.

// Resource is one object of a build.
type Resource struct {
	Kind, Name string
	Doc        *Node
	// names are the names it had before a prefix or suffix, which a
	// patch may still name.
	names []string
	// incomplete marks a generated ConfigMap whose sources could not all
	// be read: a key it lacks may still be set.
	incomplete bool
}

// Note is something the build could not read, where it is written.
type Note struct {
	At      finding.Range
	Message string
}

// Build is what a kustomization composes.
type Build struct {
	Path      string // the kustomization file
	Resources []*Resource
	// Patches are the files the kustomization itself patches with
	// (absolute), not its bases'.
	Patches []string
	Notes   []Note
	// Unsure marks a build that something it does not apply may change
	// where sizing reads (a JSON6902 patch, a replacement or var aimed
	// at a pod spec, components): its workloads are not to be sized.
	Unsure bool
	// Files are every file read, for the result cache.
	Files []string
}

// Options bound a build.
type Options struct {
	// Root bounds every file read: the repository.
	Root   string
	Limits source.Limits
	// MaxDepth bounds nested kustomizations, MaxResources the objects
	// and MaxFiles the files read (defaults 16, 500 and 200).
	MaxDepth, MaxResources, MaxFiles int
}

// names kustomize reads as a kustomization, in its order of preference.
var names = []string{"kustomization.yaml", "kustomization.yml", "Kustomization"}

// IsKustomization reports whether a file name is one kustomize reads.
func IsKustomization(name string) bool {
	for _, n := range names {
		if name == n {
			return true
		}
	}
	return false
}

// Find returns the kustomization file of dir, "" when it has none.
func Find(dir string) string {
	for _, n := range names {
		p := filepath.Join(dir, n)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

type builder struct {
	o      Options
	parsed map[string]*source.File
	read   map[string]bool
	files  []string
	notes  []Note
	active map[string]bool // kustomization directories being built
	count  int
	full   bool // a limit stopped the build
	unsure bool
}

// BuildFile composes the kustomization at path (absolute). It never
// fails: what it cannot read is a Note.
func BuildFile(path string, o Options) *Build {
	if o.MaxDepth <= 0 {
		o.MaxDepth = 16
	}
	if o.MaxResources <= 0 {
		o.MaxResources = 500
	}
	if o.MaxFiles <= 0 {
		o.MaxFiles = 200
	}
	if o.Limits.MaxBytes <= 0 {
		o.Limits = source.DefaultLimits()
	}
	b := &builder{o: o, read: map[string]bool{}, active: map[string]bool{}, parsed: map[string]*source.File{}}
	res, patches := b.build(path, 0)
	expandAll(res)
	return &Build{Path: path, Resources: res, Patches: patches, Notes: b.notes, Files: b.files, Unsure: b.unsure || b.full}
}

func (b *builder) note(at finding.Range, format string, args ...any) {
	b.notes = append(b.notes, Note{At: at, Message: fmt.Sprintf(format, args...)})
}

// load reads and parses a file within the limits.
func (b *builder) load(p string, at finding.Range) *source.File {
	if f, ok := b.parsed[p]; ok {
		return f
	}
	data := b.readFile(p, at)
	if data == nil {
		return nil
	}
	f, err := source.Parse(p, data, b.o.Limits)
	if err != nil || f == nil {
		b.note(at, "%s does not parse: not composed", filepath.Base(p))
		return nil
	}
	b.parsed[p] = f
	return f
}

func (b *builder) readFile(p string, at finding.Range) []byte {
	if !b.read[p] && len(b.read) >= b.o.MaxFiles {
		if !b.full {
			b.note(at, "more than %d files to read: the build stops here", b.o.MaxFiles)
		}
		b.full = true
		return nil
	}
	st, err := os.Stat(p)
	if err != nil || !st.Mode().IsRegular() {
		b.note(at, "%s not found: kustomize build would fail; composed without it", filepath.Base(p))
		return nil
	}
	if st.Size() > b.o.Limits.MaxBytes {
		b.note(at, "%s is over %d bytes: not read", filepath.Base(p), b.o.Limits.MaxBytes)
		return nil
	}
	data, err := os.ReadFile(p)
	if err != nil {
		b.note(at, "%s cannot be read", filepath.Base(p))
		return nil
	}
	if !b.read[p] {
		b.read[p] = true
		b.files = append(b.files, p)
	}
	return data
}

// within reports whether p lies in or under dir.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
}

// remote reports a resource kustomize fetches over the network.
func remote(s string) bool {
	return strings.Contains(s, "://") || strings.HasPrefix(s, "github.com/") || strings.HasPrefix(s, "git@") ||
		strings.Contains(s, "?ref=") || strings.Contains(s, ".git//")
}

// build composes one kustomization: its resources, generators, patches,
// images and names, in kustomize's order.
func (b *builder) build(kpath string, depth int) ([]*Resource, []string) {
	whole := finding.Range{File: kpath, Start: finding.Pos{Line: 1, Col: 1}, End: finding.Pos{Line: 1, Col: 1}}
	f := b.load(kpath, whole)
	if f == nil {
		return nil, nil
	}
	var root *source.Node
	for _, d := range f.Docs {
		if d.Root != nil {
			root = d.Root
			break
		}
	}
	if root == nil || root.Kind != source.MapNode {
		return nil, nil
	}
	dir := filepath.Dir(kpath)
	b.active[dir] = true
	defer delete(b.active, dir)
	k := fromSource(kpath, root)
	var res []*Resource
	ids := map[string]bool{}
	for _, field := range []string{"resources", "bases"} {
		for _, it := range k.Get(field).items() {
			for _, r := range b.resource(dir, it, depth) {
				// kustomize refuses a second resource of the same kind
				// and name ("may not add resource with an already
				// registered id", api/resmap/reswrangler.go Append).
				id := r.Kind + "/" + r.Name
				if ids[id] {
					b.note(it.At, "%s %s is listed twice, which kustomize build refuses: read once", r.Kind, r.Name)
					continue
				}
				ids[id] = true
				res = append(res, r)
			}
		}
	}
	res = b.generate(dir, k, res)
	var patches []string
	for _, it := range k.Get("patchesStrategicMerge").items() {
		docs, p := b.patchDocs(dir, it, it.String())
		if p != "" {
			patches = append(patches, p)
		}
		for _, d := range docs {
			b.apply(res, d, nil, it.At)
		}
	}
	for _, it := range k.Get("patches").items() {
		var docs []*Node
		var p string
		switch {
		case it.Get("path") != nil:
			docs, p = b.patchDocs(dir, it.Get("path"), "")
		case it.Get("patch") != nil:
			docs, _ = b.patchDocs(dir, it.Get("patch"), it.Get("patch").String())
		}
		if p != "" {
			patches = append(patches, p)
		}
		for _, d := range docs {
			b.apply(res, d, it.Get("target"), it.At)
		}
	}
	b.unapplied(k)
	images(res, k.Get("images"))
	rename(res, k.Get("namePrefix").String(), k.Get("nameSuffix").String())
	return res, patches
}

// unapplied notes what a kustomization holds that the build does not
// apply, and marks it unsure where that may change a pod spec: a
// patchesJson6902 entry, a replacement or var whose target is a pod
// spec's field, a component, a Helm chart or a transformer.
func (b *builder) unapplied(k *Node) {
	for _, field := range []string{"patchesJson6902", "components", "helmCharts", "transformers", "generators"} {
		if f := k.Get(field); f != nil && len(f.items()) > 0 {
			b.note(f.At, "%s not applied: gpulint does not compose them, so the workloads are not sized", field)
			b.unsure = true
		}
	}
	for _, r := range k.Get("replacements").items() {
		for _, t := range r.Get("targets").items() {
			for _, fp := range t.Get("fieldPaths").items() {
				if podField(fp.String()) {
					b.note(fp.At, "replacement into %s not applied: the workloads are not sized", fp.String())
					b.unsure = true
				}
			}
		}
	}
	for _, v := range k.Get("vars").items() {
		b.note(v.At, "vars not applied: $(%s) stays as written", v.Get("name").String())
	}
}

// podField reports whether a field path (a replacement's dotted path, a
// JSON6902 pointer) reaches a field sizing reads: containers' args,
// command, env, envFrom or resources, or the node selector and affinity.
// (The image a replacement sets stays the base's, which a reader of the
// composed pod takes as unknown when it is a placeholder.)
func podField(p string) bool {
	for _, part := range strings.FieldsFunc(p, func(r rune) bool { return r == '.' || r == '/' }) {
		switch part {
		case "args", "command", "env", "envFrom", "resources", "nodeSelector", "affinity":
			return true
		}
	}
	return false
}

// items returns a sequence's items, nil for anything else.
func (n *Node) items() []*Node {
	if n == nil || n.Kind != Seq {
		return nil
	}
	return n.Items
}

// resource reads one entry of resources or bases.
func (b *builder) resource(dir string, it *Node, depth int) []*Resource {
	s := it.String()
	switch {
	case s == "":
		return nil
	case remote(s):
		b.note(it.At, "remote resource %s is not fetched: the build lacks what it holds", s)
		return nil
	}
	p := filepath.Join(dir, filepath.FromSlash(s))
	if !within(p, b.o.Root) {
		b.note(it.At, "resource %s lies outside the repository: not read", s)
		return nil
	}
	st, err := os.Stat(p)
	if err != nil {
		b.note(it.At, "resource %s not found: kustomize build would fail; composed without it", s)
		return nil
	}
	if st.IsDir() {
		k := Find(p)
		switch {
		case k == "":
			b.note(it.At, "resource %s holds no kustomization: not read", s)
			return nil
		case b.active[p]:
			b.note(it.At, "resource %s includes itself (a cycle): not read again", s)
			return nil
		case depth+1 > b.o.MaxDepth:
			b.note(it.At, "resource %s is nested deeper than %d kustomizations: not read", s, b.o.MaxDepth)
			return nil
		}
		res, _ := b.build(k, depth+1)
		return res
	}
	if !within(p, dir) {
		b.note(it.At, "resource %s lies outside the kustomization's directory, which kustomize build refuses: not read", s)
		return nil
	}
	f := b.load(p, it.At)
	if f == nil {
		return nil
	}
	var out []*Resource
	for _, d := range f.Docs {
		n := fromSource(p, d.Root)
		kind, name := n.Get("kind").String(), n.Get("metadata").Get("name").String()
		if n == nil || n.Kind != Map || kind == "" {
			continue
		}
		if b.count >= b.o.MaxResources {
			if !b.full {
				b.note(it.At, "more than %d resources: the build stops here", b.o.MaxResources)
			}
			b.full = true
			break
		}
		b.count++
		out = append(out, &Resource{Kind: kind, Name: name, Doc: n})
	}
	return out
}

// patchDocs reads a patch: a file of the kustomization's directory
// (returned as p) or, when inline is set, the YAML text the
// kustomization holds at it.
func (b *builder) patchDocs(dir string, it *Node, inline string) (docs []*Node, p string) {
	var f *source.File
	if strings.Contains(inline, "\n") || strings.Contains(inline, "kind:") {
		pf, err := source.Parse(it.At.File, []byte(inline), b.o.Limits)
		if err != nil {
			b.note(it.At, "inline patch does not parse: not applied")
			return nil, ""
		}
		for _, d := range pf.Docs {
			if n := fromSource(it.At.File, d.Root); n != nil {
				docs = append(docs, withAt(n, it.At))
			}
		}
		return b.strategic(docs, it.At), ""
	}
	s := it.String()
	if s == "" {
		return nil, ""
	}
	p = filepath.Join(dir, filepath.FromSlash(s))
	if !within(p, dir) || !within(p, b.o.Root) {
		b.note(it.At, "patch %s lies outside the kustomization's directory, which kustomize build refuses: not applied", s)
		return nil, ""
	}
	if f = b.load(p, it.At); f == nil {
		return nil, ""
	}
	for _, d := range f.Docs {
		if n := fromSource(p, d.Root); n != nil {
			docs = append(docs, n)
		}
	}
	return b.strategic(docs, it.At), p
}

// strategic keeps the strategic-merge patches of docs; a JSON6902 patch
// (a list of operations) gets a note.
func (b *builder) strategic(docs []*Node, at finding.Range) []*Node {
	var out []*Node
	for _, d := range docs {
		if d.Kind == Seq {
			b.note(at, "JSON6902 patch not applied: gpulint composes strategic-merge patches only")
			for _, op := range d.Items {
				if podField(op.Get("path").String()) {
					b.unsure = true
				}
			}
			continue
		}
		if d.Kind == Map {
			out = append(out, d)
		}
	}
	return out
}

// apply patches the resources a patch targets: those a target selects
// (kind, name; the name a regular expression, as kustomize reads it),
// else the one of the patch's own kind and name.
func (b *builder) apply(res []*Resource, patch, target *Node, at finding.Range) {
	kind, name := patch.Get("kind").String(), patch.Get("metadata").Get("name").String()
	var nameRE *regexp.Regexp
	if target != nil {
		kind, name = target.Get("kind").String(), ""
		if tn := target.Get("name").String(); tn != "" {
			re, err := regexp.Compile("^(?:" + tn + ")$")
			if err != nil {
				b.note(at, "patch target name %q is not a regular expression kustomize accepts: not applied", tn)
				return
			}
			nameRE = re
		}
	}
	hit := false
	for _, r := range res {
		if kind != "" && r.Kind != kind {
			continue
		}
		if !r.named(name, nameRE) {
			continue
		}
		if m := merge(r.Doc, patch); m != nil {
			r.Doc = m
		}
		hit = true
	}
	if !hit {
		b.note(at, "patch of %s %s matches no resource of the build: not applied", kind, name)
	}
}

// named reports whether the resource has (or had) the name.
func (r *Resource) named(name string, re *regexp.Regexp) bool {
	for _, n := range append([]string{r.Name}, r.names...) {
		switch {
		case re != nil && re.MatchString(n):
			return true
		case re == nil && (name == "" || n == name):
			return true
		}
	}
	return false
}

// images applies a kustomization's images entries to every container.
func images(res []*Resource, list *Node) {
	if len(list.items()) == 0 {
		return
	}
	for _, r := range res {
		containers(r.Doc, func(c *Node) {
			img := c.Get("image")
			if img == nil || img.Kind != Scalar {
				return
			}
			for _, e := range list.items() {
				if out, ok := setImage(img.Text, e); ok {
					at := e.At
					c.set("image", at, str(out, at))
					return
				}
			}
		})
	}
}

// setImage applies one images entry to an image reference.
func setImage(ref string, e *Node) (string, bool) {
	name, tag := ref, ""
	if i := strings.IndexByte(ref, '@'); i >= 0 {
		name, tag = ref[:i], ref[i:]
	} else if i := strings.LastIndexByte(ref, ':'); i > strings.LastIndexByte(ref, '/') {
		name, tag = ref[:i], ref[i:]
	}
	if name != e.Get("name").String() {
		return "", false
	}
	if n := e.Get("newName").String(); n != "" {
		name = n
	}
	if t := e.Get("newTag").String(); t != "" {
		tag = ":" + t
	}
	if d := e.Get("digest").String(); d != "" {
		tag = "@" + d
	}
	return name + tag, true
}

// containers calls f on every container and init container of a
// resource (a pod spec at any depth: Deployments, Jobs, CRDs).
func containers(n *Node, f func(c *Node)) {
	if n == nil {
		return
	}
	for _, e := range n.Entries {
		if (e.Key == "containers" || e.Key == "initContainers") && e.Value.Kind == Seq {
			for _, c := range e.Value.Items {
				if c.Kind == Map {
					f(c)
				}
			}
			continue
		}
		containers(e.Value, f)
	}
	for _, it := range n.Items {
		containers(it, f)
	}
}

// rename applies namePrefix and nameSuffix: every resource is renamed,
// and the references to a renamed ConfigMap follow it.
func rename(res []*Resource, prefix, suffix string) {
	if prefix == "" && suffix == "" {
		return
	}
	renamed := map[string]string{}
	for _, r := range res {
		if r.Name == "" {
			continue
		}
		n := prefix + r.Name + suffix
		if r.Kind == "ConfigMap" {
			renamed[r.Name] = n
		}
		r.names = append(r.names, r.Name)
		r.Name = n
	}
	for _, r := range res {
		configMapRefs(r.Doc, func(ref *Node) {
			if n, ok := renamed[ref.String()]; ok {
				ref.Text, ref.Value = n, n
			}
		})
	}
}

// configMapRefs calls f on the name scalar of every ConfigMap reference:
// env valueFrom.configMapKeyRef, envFrom configMapRef and a volume's
// configMap (projected sources included).
func configMapRefs(n *Node, f func(name *Node)) {
	if n == nil {
		return
	}
	for _, e := range n.Entries {
		switch e.Key {
		case "configMapKeyRef", "configMapRef", "configMap":
			if nm := e.Value.Get("name"); nm != nil && nm.Kind == Scalar {
				f(nm)
			}
		}
		configMapRefs(e.Value, f)
	}
	for _, it := range n.Items {
		configMapRefs(it, f)
	}
}
