package check

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/version"

	"github.com/gpulint/gpulint/internal/regobin"
	"github.com/gpulint/gpulint/internal/rules"
)

// The built-in policies ship compiled. BuildBundle compiles them with every
// check OPA has (safety, types, recursion, unused imports, unsafe
// built-ins...) and stores the compiled modules; at run time the engine
// decodes the modules a document kind needs and runs only the compiler
// stages that build the structures evaluation needs (module and rule trees,
// rule indices; see loadStages). The checks and rewrites
// already ran when the bundle was built, on the same modules.
//
// A bundle names the sources it was built from by a digest over their
// file names and text, OPA's version and the encoding's version. An engine
// given a bundle that does not match its modules (a policy edited without
// rebuilding the bundle) ignores it and compiles from source, so a stale
// bundle costs time, never correctness; a test keeps the committed bundle
// current.

// bundleMagic opens a bundle; the digit is the layout's version.
const bundleMagic = "gpulint-policy-bundle2\n"

// loadStages are the compiler stages run over precompiled modules. Every
// other stage is a check or rewrite that BuildBundle already ran (the
// dependency graph and the local variable generator serve only those).
//
// Comprehension indices are left out: topdown uses one only to cache a
// comprehension evaluated again and again under different bindings, and
// evaluates the comprehension itself when there is none. Building them
// cost more than they saved: one file 62.3M -> 57.1M instructions, 150
// corpus files 268.2M -> 262.9M (valgrind --tool=callgrind).
var loadStages = map[ast.StageID]bool{
	ast.StageRemoveImports:    true, // precedes the install stage below
	ast.StageSetModuleTree:    true,
	ast.StageSetRuleTree:      true,
	ast.StageBuildRuleIndices: true,
}

// sourceDigest names a set of built-in modules: the bundle built from them
// carries it.
func sourceDigest(mods []rules.Module) [sha256.Size]byte {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00opa %s\x00", bundleMagic, version.Version)
	for _, m := range mods {
		if m.Custom {
			continue
		}
		fmt.Fprintf(h, "%d:%s\x00%d:", len(m.File), m.File, len(m.Source))
		io.WriteString(h, m.Source)
	}
	var out [sha256.Size]byte
	h.Sum(out[:0])
	return out
}

// BuildBundle compiles the built-in modules (all checks on) and encodes
// the compiled modules. The result is deterministic for a given set of
// sources and OPA version.
func BuildBundle(mods []rules.Module) ([]byte, error) {
	var builtin []rules.Module
	for _, m := range mods {
		if !m.Custom {
			builtin = append(builtin, m)
		}
	}
	c, err := compile(builtin)
	if err != nil {
		return nil, err
	}
	digest := sourceDigest(builtin)
	// The built-ins the policies call: at load time the compiler is given
	// only these, which spares it the type environment of the other two
	// hundred.
	var used []string
	if c.Required != nil {
		for _, b := range c.Required.Builtins {
			used = append(used, b.Name)
		}
	}
	sort.Strings(used)
	var index, body []byte
	for _, m := range builtin {
		cm, ok := c.Modules[m.File]
		if !ok {
			return nil, fmt.Errorf("build policy bundle: %s missing after compile", m.File)
		}
		enc, err := regobin.EncodeModule(cm)
		if err != nil {
			return nil, fmt.Errorf("build policy bundle: %s: %w", m.File, err)
		}
		index = appendString(index, m.File)
		index = binary.AppendUvarint(index, uint64(len(enc)))
		body = append(body, enc...)
	}
	out := []byte(bundleMagic)
	out = append(out, digest[:]...)
	out = binary.AppendUvarint(out, uint64(len(used)))
	for _, name := range used {
		out = appendString(out, name)
	}
	// Each module's METADATA already read, under its source's digest
	// (rules.ParseModulesCached).
	out = binary.AppendUvarint(out, uint64(len(builtin)))
	for _, m := range builtin {
		meta, err := rules.EncodeMetadata(m)
		if err != nil {
			return nil, fmt.Errorf("build policy bundle: %s: %w", m.File, err)
		}
		sum := rules.SourceSum(m.Source)
		out = appendString(out, m.File)
		out = append(out, sum[:]...)
		out = appendString(out, string(meta))
	}
	out = binary.AppendUvarint(out, uint64(len(builtin)))
	out = append(out, index...)
	return append(out, body...), nil
}

// bundle is a decoded bundle index: each module's encoded bytes by file.
type bundle struct {
	files map[string][]byte
	// caps are the sandbox capabilities narrowed to the built-ins the
	// policies call.
	caps *ast.Capabilities
}

var errStaleBundle = errors.New("policy bundle does not match the policy sources")

// openBundle reads a bundle's index and checks that it was built from
// exactly the built-in modules in mods.
func openBundle(data []byte, mods []rules.Module) (*bundle, error) {
	if !bytes.HasPrefix(data, []byte(bundleMagic)) {
		return nil, errors.New("not a policy bundle")
	}
	rest := data[len(bundleMagic):]
	if len(rest) < sha256.Size {
		return nil, errors.New("policy bundle truncated")
	}
	want := sourceDigest(mods)
	if !bytes.Equal(rest[:sha256.Size], want[:]) {
		return nil, errStaleBundle
	}
	rest = rest[sha256.Size:]
	names, rest, err := readStrings(rest)
	if err != nil {
		return nil, err
	}
	if _, rest, err = readMetadataSection(rest); err != nil {
		return nil, err
	}
	n, k := binary.Uvarint(rest)
	if k <= 0 || n > uint64(len(rest)) {
		return nil, errors.New("policy bundle index damaged")
	}
	rest = rest[k:]
	type entry struct {
		file string
		size uint64
	}
	entries := make([]entry, 0, n)
	for range n {
		file, r, err := readString(rest)
		if err != nil {
			return nil, err
		}
		rest = r
		size, k2 := binary.Uvarint(rest)
		if k2 <= 0 {
			return nil, errors.New("policy bundle index damaged")
		}
		rest = rest[k2:]
		entries = append(entries, entry{file, size})
	}
	b := &bundle{files: make(map[string][]byte, len(entries)), caps: narrowCapabilities(names)}
	for _, e := range entries {
		if e.size > uint64(len(rest)) {
			return nil, errors.New("policy bundle truncated")
		}
		b.files[e.file] = rest[:e.size]
		rest = rest[e.size:]
	}
	if len(rest) != 0 {
		return nil, errors.New("policy bundle has trailing bytes")
	}
	for _, m := range mods {
		if _, ok := b.files[m.File]; !ok && !m.Custom {
			return nil, errStaleBundle
		}
	}
	return b, nil
}

// load decodes the named modules and builds a compiler over them that is
// ready for evaluation.
func (b *bundle) load(mods []rules.Module) (*ast.Compiler, error) {
	modules := make(map[string]*ast.Module, len(mods))
	stubs := make(map[string]*ast.Module, len(mods))
	for _, m := range mods {
		data, ok := b.files[m.File]
		if !ok {
			return nil, fmt.Errorf("policy bundle: no module %s", m.File)
		}
		cm, err := regobin.DecodeModule(data)
		if err != nil {
			return nil, fmt.Errorf("policy bundle: %s: %w", m.File, err)
		}
		modules[m.File] = cm
		stub := &ast.Module{Package: cm.Package}
		stub.SetRegoVersion(ast.RegoV1)
		stubs[m.File] = stub
	}
	var skip []ast.StageID
	for _, s := range ast.AllStages() {
		if !loadStages[s] {
			skip = append(skip, s)
		}
	}
	// Compile copies every module it is given; the decoded modules are
	// fresh and owned here, so the compiler is given stubs (the package
	// alone) and the first stage puts the decoded modules in their place.
	// That halves the work and the memory of a load.
	c := ast.NewCompiler().
		WithCapabilities(b.caps).
		WithEnablePrintStatements(false).
		WithSkipStages(slices.Clip(skip)...).
		WithStageAfterID(ast.StageRemoveImports, ast.CompilerStageDefinition{
			Name:       "gpulint.InstallDecodedModules",
			MetricName: "gpulint_install_decoded_modules",
			Stage: func(c *ast.Compiler) *ast.Error {
				maps.Copy(c.Modules, modules)
				return nil
			},
		})
	c.Compile(stubs)
	if c.Failed() {
		return nil, fmt.Errorf("policy bundle: %w", c.Errors)
	}
	return c, nil
}

// metaEntry is one module's cached metadata.
type metaEntry struct {
	sum  [sha256.Size]byte
	data []byte
}

// readMetadataSection reads the modules' cached metadata.
func readMetadataSection(data []byte) (map[string]metaEntry, []byte, error) {
	n, k := binary.Uvarint(data)
	if k <= 0 || n > uint64(len(data)) {
		return nil, nil, errors.New("policy bundle metadata damaged")
	}
	data = data[k:]
	out := make(map[string]metaEntry, n)
	for range n {
		file, rest, err := readString(data)
		if err != nil || len(rest) < sha256.Size {
			return nil, nil, errors.New("policy bundle metadata damaged")
		}
		var e metaEntry
		copy(e.sum[:], rest)
		rest = rest[sha256.Size:]
		l, k := binary.Uvarint(rest)
		if k <= 0 || l > uint64(len(rest)-k) {
			return nil, nil, errors.New("policy bundle metadata damaged")
		}
		e.data = rest[k : k+int(l)]
		out[file] = e
		data = rest[k+int(l):]
	}
	return out, data, nil
}

// BundleMetadata returns the policies' metadata cached in a bundle, for
// rules.ParseModulesCached; each entry serves only the exact source it was
// read from. A damaged bundle yields an empty cache.
func BundleMetadata(data []byte) rules.MetadataCache {
	entries := map[string]metaEntry{}
	if rest, ok := bytes.CutPrefix(data, []byte(bundleMagic)); ok && len(rest) >= sha256.Size {
		if _, rest, err := readStrings(rest[sha256.Size:]); err == nil {
			if m, _, err := readMetadataSection(rest); err == nil {
				entries = m
			}
		}
	}
	return func(file string, sum [sha256.Size]byte) ([]byte, bool) {
		e, ok := entries[file]
		if !ok || e.sum != sum {
			return nil, false
		}
		return e.data, true
	}
}

// appendString writes a length-prefixed string (readString reads it).
func appendString(out []byte, s string) []byte {
	return append(binary.AppendUvarint(out, uint64(len(s))), s...)
}

// readString reads a length-prefixed string.
func readString(data []byte) (string, []byte, error) {
	l, k := binary.Uvarint(data)
	if k <= 0 || l > uint64(len(data)-k) {
		return "", nil, errors.New("policy bundle index damaged")
	}
	return string(data[k : k+int(l)]), data[k+int(l):], nil
}

// readStrings reads a count and that many length-prefixed strings.
func readStrings(data []byte) ([]string, []byte, error) {
	n, k := binary.Uvarint(data)
	if k <= 0 || n > uint64(len(data)) {
		return nil, nil, errors.New("policy bundle index damaged")
	}
	data = data[k:]
	out := make([]string, 0, n)
	for range n {
		s, rest, err := readString(data)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, s)
		data = rest
	}
	return out, data, nil
}

// narrowCapabilities is the sandbox's capabilities with only the named
// built-ins. A name the sandbox refuses stays refused.
func narrowCapabilities(names []string) *ast.Capabilities {
	full := capabilities()
	want := make(map[string]bool, len(names))
	for _, n := range names {
		want[n] = true
	}
	c := *full
	c.Builtins = nil
	for _, b := range full.Builtins {
		if want[b.Name] {
			c.Builtins = append(c.Builtins, b)
		}
	}
	return &c
}
