// Package kustomize composes a kustomization the way `kustomize build`
// does, for the fields that size a GPU workload: it resolves local
// resources and bases, applies strategic-merge patches, generates
// ConfigMaps from env files and literals, renames ConfigMap references
// for namePrefix and nameSuffix, and sets images. Every value of the
// result keeps the place it was written (a base manifest, a patch, an env
// file line), so a verdict on the composed workload can show its
// evidence in the files a user edits. It imports no kustomize code.
package kustomize

import (
	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/source"
)

// Kind says what a Node holds.
type Kind uint8

// Node kinds.
const (
	Map Kind = iota + 1
	Seq
	Scalar
)

// Node is one value of a composed resource with where it was written.
type Node struct {
	Kind    Kind
	Entries []Entry // Map, in order
	Items   []*Node // Seq
	Text    string  // Scalar: the decoded text
	Value   any     // Scalar: string, int64, float64, bool or nil
	At      finding.Range
	// Via are the places of the values substituted into a scalar (a
	// $(VAR) of a container's args filled from a ConfigMap entry).
	Via []Via
}

// Via is one value substituted into a scalar, with where it was written.
type Via struct {
	What string // "MAX_MODEL_LEN=32768 from ConfigMap runtime"
	At   finding.Range
}

// Entry is one key of a map.
type Entry struct {
	Key   string
	KeyAt finding.Range
	Value *Node
}

// fromSource copies a parsed YAML node of file path; nil stays nil.
func fromSource(path string, n *source.Node) *Node {
	if n == nil {
		return nil
	}
	out := &Node{At: n.Range(path)}
	switch n.Kind {
	case source.MapNode:
		out.Kind = Map
		for _, e := range n.Entries {
			if e.Key == nil {
				continue
			}
			v := fromSource(path, e.Value)
			if v == nil {
				v = &Node{Kind: Scalar, At: e.Key.Range(path)}
			}
			out.set(e.Key.Text, e.Key.Range(path), v)
		}
	case source.SeqNode:
		out.Kind = Seq
		for _, it := range n.Items {
			if c := fromSource(path, it); c != nil {
				out.Items = append(out.Items, c)
			}
		}
	default:
		out.Kind, out.Text, out.Value = Scalar, n.Text, n.Value
	}
	return out
}

// withAt returns a deep copy of n with every place set to at (an inline
// patch is located at the kustomization's string that holds it).
func withAt(n *Node, at finding.Range) *Node {
	if n == nil {
		return nil
	}
	c := &Node{Kind: n.Kind, Text: n.Text, Value: n.Value, At: at}
	for _, e := range n.Entries {
		c.Entries = append(c.Entries, Entry{Key: e.Key, KeyAt: at, Value: withAt(e.Value, at)})
	}
	for _, it := range n.Items {
		c.Items = append(c.Items, withAt(it, at))
	}
	return c
}

// Get returns the value of key in a map node, or nil.
func (n *Node) Get(key string) *Node {
	if n == nil || n.Kind != Map {
		return nil
	}
	for i := range n.Entries {
		if n.Entries[i].Key == key {
			return n.Entries[i].Value
		}
	}
	return nil
}

// String returns a scalar's text, "" for anything else.
func (n *Node) String() string {
	if n == nil || n.Kind != Scalar || n.Value == nil {
		return ""
	}
	return n.Text
}

// set replaces the value of key, or appends it; a later duplicate key
// wins, as the YAML readers do.
func (n *Node) set(key string, at finding.Range, v *Node) {
	for i := range n.Entries {
		if n.Entries[i].Key == key {
			n.Entries[i].Value, n.Entries[i].KeyAt = v, at
			return
		}
	}
	n.Entries = append(n.Entries, Entry{Key: key, KeyAt: at, Value: v})
}

// remove deletes key from a map node.
func (n *Node) remove(key string) {
	for i := range n.Entries {
		if n.Entries[i].Key == key {
			n.Entries = append(n.Entries[:i:i], n.Entries[i+1:]...)
			return
		}
	}
}

// clone copies n deeply.
func (n *Node) clone() *Node {
	if n == nil {
		return nil
	}
	c := *n
	c.Entries = make([]Entry, len(n.Entries))
	for i, e := range n.Entries {
		c.Entries[i] = Entry{Key: e.Key, KeyAt: e.KeyAt, Value: e.Value.clone()}
	}
	c.Items = make([]*Node, len(n.Items))
	for i, it := range n.Items {
		c.Items[i] = it.clone()
	}
	c.Via = append([]Via(nil), n.Via...)
	return &c
}

// str builds a string scalar.
func str(s string, at finding.Range) *Node {
	return &Node{Kind: Scalar, Text: s, Value: s, At: at}
}
