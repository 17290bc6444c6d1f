package source

import (
	"fmt"

	"github.com/gpulint/gpulint/internal/finding"
)

// NodeKind says what a Node holds.
type NodeKind uint8

// Node kinds.
const (
	MapNode NodeKind = iota + 1
	SeqNode
	ScalarNode
)

// ScalarStyle records how a scalar was written, so an edit can write the
// new value the same way.
type ScalarStyle uint8

// Scalar styles. JSON strings are DoubleQuoted; JSON numbers, booleans and
// null are Plain.
const (
	Plain ScalarStyle = iota
	SingleQuoted
	DoubleQuoted
	Literal // YAML |
	Folded  // YAML >
)

// Format is the syntax a file was parsed with.
type Format uint8

// Formats.
const (
	FormatJSON Format = iota + 1
	FormatYAML
)

func (f Format) String() string {
	switch f {
	case FormatJSON:
		return "json"
	case FormatYAML:
		return "yaml"
	}
	return "unknown"
}

// Node is one value of a parsed document with the exact byte range it was
// written at. Maps keep their entries in source order, duplicates included.
type Node struct {
	Kind NodeKind
	// Start and End delimit the value's text: for a scalar, its characters
	// including quotes or the block-scalar header; for a flow collection,
	// the brackets; for a block collection, from its first key or dash to
	// the end of its last value.
	Start, End finding.Pos
	Flow       bool // flow style: {…} / […]; always true for JSON collections
	Style      ScalarStyle
	// Tag is the resolved type of a scalar: "str", "int", "float", "bool"
	// or "null". YAML plain scalars are resolved as YAML 1.1 (PyYAML), the
	// loader the Python frameworks use: NO is false, 2e-5 is a string.
	Tag string
	// Text is a scalar's decoded string value (escapes processed).
	Text string
	// Value is a scalar's resolved value: string, int64, float64, bool or
	// nil.
	Value   any
	Entries []Entry // MapNode
	Items   []*Node // SeqNode
}

// Entry is one key: value pair of a map.
type Entry struct {
	Key   *Node
	Value *Node
}

// Document is one document of a file (YAML files may hold several).
type Document struct {
	Index int // 0-based position in the file
	Root  *Node
	// Start and End delimit the document's content (after any "---").
	Start, End finding.Pos
}

// File is a parsed file: its bytes and its documents.
type File struct {
	Path   string
	Data   []byte
	Format Format
	Docs   []*Document
	// Lines holds the byte offset at which each line starts.
	Lines []int
	// Lenient lists the places where a JSON file relied on the leniency
	// of DeepSpeed's hjson reader (comments, trailing commas) that strict
	// JSON rejects, so a rule can warn about them.
	Lenient []LenientNote
	// Placeholders lists the {{ ... }} template placeholders that stand
	// as whole plain scalars in a YAML file that parses only with them
	// read as strings (see ParseYAML); each is a [start, end) byte range
	// of Data. An edit never writes into one.
	Placeholders [][2]int
}

// Get returns the value of key in a map node, or nil. When a key repeats,
// the last occurrence wins, as PyYAML and encoding/json do.
func (n *Node) Get(key string) *Node {
	if n == nil || n.Kind != MapNode {
		return nil
	}
	for i := len(n.Entries) - 1; i >= 0; i-- {
		if n.Entries[i].Key.Text == key {
			return n.Entries[i].Value
		}
	}
	return nil
}

// GetEntry returns the last entry for key in a map node.
func (n *Node) GetEntry(key string) (Entry, bool) {
	if n == nil || n.Kind != MapNode {
		return Entry{}, false
	}
	for i := len(n.Entries) - 1; i >= 0; i-- {
		if n.Entries[i].Key.Text == key {
			return n.Entries[i], true
		}
	}
	return Entry{}, false
}

// Index returns item i of a sequence node, or nil.
func (n *Node) Index(i int) *Node {
	if n == nil || n.Kind != SeqNode || i < 0 || i >= len(n.Items) {
		return nil
	}
	return n.Items[i]
}

// Lookup follows path (string keys and int indices) from n. It returns the
// deepest node reached, the map entry that holds it (Key nil when the node
// is not a map value), and how many path elements were matched.
func (n *Node) Lookup(path []any) (node *Node, entry Entry, matched int) {
	node = n
	for i, p := range path {
		var next *Node
		var e Entry
		switch k := p.(type) {
		case string:
			var ok bool
			e, ok = node.GetEntry(k)
			if ok {
				next = e.Value
			}
		case int:
			next = node.Index(k)
		case int64:
			next = node.Index(int(k))
		case float64:
			next = node.Index(int(k))
		}
		if next == nil {
			return node, entry, i
		}
		node, entry = next, e
	}
	return node, entry, len(path)
}

// Range returns the node's range in file.
func (n *Node) Range(file string) finding.Range {
	return finding.Range{File: file, Start: n.Start, End: n.End}
}

// Bool reports a scalar's boolean value; ok is false for non-booleans.
func (n *Node) Bool() (v, ok bool) {
	if n == nil || n.Kind != ScalarNode {
		return false, false
	}
	b, ok := n.Value.(bool)
	return b, ok
}

// Error is a problem in a user's file at a position: a syntax error, a
// limit exceeded. It prints as path:line:col: message.
type Error struct {
	File string
	Pos  finding.Pos
	Msg  string
	// Limit marks an error that stops at a safety limit (size, depth,
	// alias expansion) rather than at a syntax error.
	Limit bool
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Pos.Line, e.Pos.Col, e.Msg)
}

// Limits bound the work a hostile file can cause.
type Limits struct {
	MaxBytes int64 // file size; larger files are not parsed
	MaxDepth int   // nesting of collections
	MaxNodes int   // nodes after YAML alias expansion
}

// DefaultLimits are the limits used unless configuration says otherwise.
func DefaultLimits() Limits {
	return Limits{MaxBytes: 10 << 20, MaxDepth: 512, MaxNodes: 1_000_000}
}
