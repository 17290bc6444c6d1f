package kustomize

import (
	"bytes"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/gpulint/gpulint/internal/finding"
)

// generate adds the ConfigMaps of the kustomization's configMapGenerator
// to res, or merges them into a base's generator of the same name
// (behavior merge or replace).
func (b *builder) generate(dir string, k *Node, res []*Resource) []*Resource {
	for _, g := range k.Get("configMapGenerator").items() {
		name := g.Get("name").String()
		if name == "" {
			continue
		}
		data := &Node{Kind: Map, At: g.At}
		complete := true
		envs := g.Get("envs").items()
		if e := g.Get("env"); e != nil && e.Kind == Scalar {
			envs = append(envs, e)
		}
		for _, e := range envs {
			if !b.envFile(dir, e, data) {
				complete = false
			}
		}
		for _, l := range g.Get("literals").items() {
			key, val, ok := strings.Cut(l.String(), "=")
			if !ok || key == "" {
				continue
			}
			data.set(key, l.At, str(strings.Trim(val, `"'`), l.At))
		}
		if len(g.Get("files").items()) > 0 {
			// A file's content is a value no container expands into
			// its args here; its key is still set.
			complete = false
		}
		var base *Resource
		for _, r := range res {
			if r.Kind == "ConfigMap" && r.Name == name {
				base = r
			}
		}
		switch behavior := g.Get("behavior").String(); {
		case base != nil && behavior == "merge":
			bd := base.Doc.Get("data")
			if bd == nil {
				bd = &Node{Kind: Map, At: g.At}
				base.Doc.set("data", g.At, bd)
			}
			for _, e := range data.Entries {
				bd.set(e.Key, e.KeyAt, e.Value)
			}
			base.incomplete = base.incomplete || !complete
		case base != nil && behavior == "replace":
			base.Doc.set("data", g.At, data)
			base.incomplete = !complete
		default:
			doc := &Node{Kind: Map, At: g.At}
			doc.set("apiVersion", g.At, str("v1", g.At))
			doc.set("kind", g.At, str("ConfigMap", g.At))
			meta := &Node{Kind: Map, At: g.At}
			meta.set("name", g.Get("name").At, str(name, g.Get("name").At))
			doc.set("metadata", g.At, meta)
			doc.set("data", g.At, data)
			res = append(res, &Resource{Kind: "ConfigMap", Name: name, Doc: doc, incomplete: !complete})
		}
	}
	return res
}

// envFile reads one env file of a generator into data, each value
// located at its line; false when it could not be read whole.
func (b *builder) envFile(dir string, e *Node, data *Node) bool {
	s := e.String()
	if s == "" {
		return true
	}
	p := filepath.Join(dir, filepath.FromSlash(s))
	if !within(p, dir) || !within(p, b.o.Root) {
		b.note(e.At, "env file %s lies outside the kustomization's directory, which kustomize build refuses: not read", s)
		return false
	}
	content := b.readFile(p, e.At)
	if content == nil {
		return false
	}
	complete := true
	off := 0
	for i, line := range bytes.SplitAfter(content, []byte("\n")) {
		start := off
		off += len(line)
		text := strings.TrimRight(string(line), "\r\n")
		if i == 0 {
			text = strings.TrimPrefix(text, "\uFEFF")
		}
		trimmed := strings.TrimLeftFunc(text, unicode.IsSpace)
		if trimmed == "" || trimmed[0] == '#' {
			continue
		}
		at := finding.Range{File: p,
			Start: finding.Pos{Offset: start, Line: i + 1, Col: 1},
			End:   finding.Pos{Offset: start + len(text), Line: i + 1, Col: len(text) + 1}}
		key, val, ok := strings.Cut(trimmed, "=")
		if !ok {
			// The value comes from the environment of whoever builds.
			complete = false
			continue
		}
		data.set(key, at, str(val, at))
	}
	return complete
}
