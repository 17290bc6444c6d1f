package source

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"gopkg.in/yaml.v3"
)

// ParseYAML parses a multi-document YAML stream and keeps the position of
// every node, key nodes included.
//
// Plain scalars are resolved as YAML 1.1, the way PyYAML's SafeLoader does
// (yes/no/on/off are booleans, "2e-5" is a string, 0x1f and 1:30 are
// ints); quoted and block scalars are strings; explicit tags (!!str,
// !!int, !!float, !!bool, !!null) are honoured.
//
// Documents: a stream that is empty or holds only comments has no
// documents. A document with no content (a bare "---") has a nil Root.
//
// Anchors and aliases: an alias is the anchored *Node itself (the pointer is
// shared, positions are the anchor's), and lim.MaxNodes bounds the tree as
// if every alias were expanded, so an alias bomb fails fast. Recursive
// aliases are an error.
//
// Merge keys ("<<"): the "<<" entry stays in place, and the merged entries
// are put in front of the map's own entries in the order PyYAML merges them,
// so Get and ToValue see merged keys and the map's own keys win. Merged
// entries share the anchored map's key and value nodes, so their positions
// lie outside the merging map.
//
// On a syntax error ParseYAML returns the documents before the broken one
// and a *Error at the position of the problem. The File is never nil.
//
// Templates: a file that fails to parse only because {{ ... }}
// placeholders stand as whole plain scalars is read with each of them as a
// string holding the placeholder as written, listed in File.Placeholders,
// and no error (mustache.go).
//
// Files in the shape most configs have are read by a fast reader
// (yamlfast.go) that gives the same result; the rest go through yaml.v3.
func ParseYAML(path string, data []byte, lim Limits) (*File, error) {
	lim = lim.withDefaults()
	if int64(len(data)) > lim.MaxBytes {
		return &File{Path: path, Data: data, Format: FormatYAML}, sizeError(path, len(data), lim.MaxBytes)
	}
	f := newFile(path, data, FormatYAML)
	if off := invalidUTF8(data); off >= 0 {
		return f, f.errAt(off, "invalid UTF-8 byte 0x%02x", data[off])
	}
	if len(bytes.TrimSpace(data[bomLen(data):])) == 0 {
		return f, nil // white space only (yaml.v3 rejects a tab here)
	}
	var err error
	if !parseYAMLFast(f, lim) {
		err = parseYAMLFull(f, lim)
	}
	var perr *Error
	if (err == nil && f.mustacheAsMap()) || (errors.As(err, &perr) && !perr.Limit) {
		if t, ok := parseMustache(path, data, lim); ok {
			return t, nil
		}
	}
	return f, err
}

// parseYAMLFull reads f.Data with yaml.v3 and converts its node trees.
func parseYAMLFull(f *File, lim Limits) error {
	data := f.Data
	c := &yamlConv{
		f:      f,
		ix:     newYAMLIndex(data),
		cur:    posCursor{lines: f.Lines},
		lim:    lim,
		done:   map[*yaml.Node]convInfo{},
		active: map[*yaml.Node]bool{},
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var yn yaml.Node
		err := decodeYAML(dec, &yn)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			base := 0
			if n := len(f.Docs); n > 0 {
				base = f.Docs[n-1].End.Offset
			}
			return c.syntaxError(err, base)
		}
		doc, err := c.document(&yn, len(f.Docs))
		if err != nil {
			return err
		}
		f.Docs = append(f.Docs, doc)
	}
}

// decodeYAML decodes one document, turning a panic inside yaml.v3 into an
// error so a hostile file cannot crash the linter.
func decodeYAML(dec *yaml.Decoder, yn *yaml.Node) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: internal parser failure: %v", r)
		}
	}()
	return dec.Decode(yn)
}

// convInfo describes a converted anchored node: its size and height as if
// every alias under it were expanded.
type convInfo struct {
	node         *Node
	size, height int
}

type yamlConv struct {
	f      *File
	ix     *yamlIndex
	cur    posCursor
	lim    Limits
	nodes  int // nodes so far, aliases expanded
	done   map[*yaml.Node]convInfo
	active map[*yaml.Node]bool // anchored nodes being converted
	slab   []Node              // nodes handed out by newNode
}

// newNode returns a zero Node from a chunk allocated for several: one
// allocation instead of one per node. A file's nodes live and die
// together, so a chunk holds nothing alive longer than its file. document
// sizes the first chunk to the document's nodes; aliases expanded beyond
// it take chunks of 32.
func (c *yamlConv) newNode() *Node {
	if len(c.slab) == 0 {
		c.slab = make([]Node, 32)
	}
	n := &c.slab[0]
	c.slab = c.slab[1:]
	return n
}

func (c *yamlConv) errAt(off int, format string, args ...any) error {
	return c.f.errAt(off, format, args...)
}

func (c *yamlConv) document(yn *yaml.Node, index int) (*Document, error) {
	start := c.ix.offset(yn.Line, yn.Column)
	doc := &Document{Index: index}
	var root *yaml.Node
	if yn.Kind == yaml.DocumentNode && len(yn.Content) > 0 {
		root = yn.Content[0]
	} else if yn.Kind != yaml.DocumentNode {
		root = yn
	}
	if root == nil || isEmptyNull(root) && !hasProperties(c.f.Data, c.ix.offset(root.Line, root.Column)) {
		if bytes.HasPrefix(c.f.Data[start:], []byte("---")) {
			start += 3
		}
		doc.Start = c.f.PosAt(start)
		doc.End = doc.Start
		return doc, nil
	}
	if len(c.slab) == 0 {
		c.slab = make([]Node, min(countNodes(root, 0), c.lim.MaxNodes+1))
	}
	r, err := c.convert(root, 0)
	if err != nil {
		return nil, err
	}
	doc.Root, doc.End = r.node, c.f.PosAt(r.end)
	doc.Start = r.node.Start
	if r.aliasStart >= 0 {
		doc.Start = c.f.PosAt(r.aliasStart)
	}
	return doc, nil
}

// hasProperties reports whether an anchor or tag starts at data[i].
func hasProperties(data []byte, i int) bool {
	return i < len(data) && (data[i] == '&' || data[i] == '!')
}

// isEmptyNull reports whether yn is the implicit null of an empty document.
func isEmptyNull(yn *yaml.Node) bool {
	return yn.Kind == yaml.ScalarNode && yn.Value == "" && yn.Style == 0 && yn.Anchor == "" && yn.Tag == "!!null"
}

// converted is the result of converting one yaml.v3 node.
type converted struct {
	node       *Node
	end        int // offset after the node's own text (for an alias, "*name")
	size       int // nodes with aliases expanded
	height     int // collection levels with aliases expanded; 0 for a scalar
	aliasStart int // for an alias, where "*name" starts; else -1
}

// countNodes counts the nodes convert makes for yn, aliases not expanded,
// up to the depth at which convert stops.
func countNodes(yn *yaml.Node, depth int) int {
	if yn.Kind == yaml.AliasNode || depth > maxCountDepth {
		return 0
	}
	n := 1
	for _, c := range yn.Content {
		n += countNodes(c, depth+1)
	}
	return n
}

// maxCountDepth bounds countNodes' recursion; convert refuses documents
// nested deeper than its Limits long before this.
const maxCountDepth = 10000

// convert converts yn found under depth collections.
func (c *yamlConv) convert(yn *yaml.Node, depth int) (converted, error) {
	start := c.ix.offset(yn.Line, yn.Column)
	if yn.Kind == yaml.AliasNode {
		return c.alias(yn, depth, start)
	}
	if yn.Kind == yaml.MappingNode || yn.Kind == yaml.SequenceNode {
		if depth+1 > c.lim.MaxDepth {
			return converted{}, c.f.limitAt(start, "nesting depth %d exceeds the limit of %d", depth+1, c.lim.MaxDepth)
		}
	}
	c.nodes++
	if c.nodes > c.lim.MaxNodes {
		return converted{}, c.f.limitAt(start, "document has more than %d nodes", c.lim.MaxNodes)
	}
	if yn.Anchor != "" {
		c.active[yn] = true
		defer delete(c.active, yn)
	}
	n := c.newNode()
	n.Start = c.cur.at(start)
	r := converted{node: n, size: 1, aliasStart: -1}
	switch yn.Kind {
	case yaml.ScalarNode:
		r.end = scalarEnd(c.f.Data, start, yn)
		if err := c.scalar(n, yn, start); err != nil {
			return converted{}, err
		}
	case yaml.MappingNode, yaml.SequenceNode:
		n.Kind, n.Flow = SeqNode, yn.Style&yaml.FlowStyle != 0
		if yn.Kind == yaml.MappingNode {
			n.Kind = MapNode
		}
		r.end, r.height = start, 1
		// A single "key: value" pair inside a flow sequence is a flow map
		// without braces; it ends with its value.
		// yaml.v3 starts such a pair where its key starts, which may be
		// a bracket too ("[[0]: 1]").
		bracketed := false
		if n.Flow {
			open := flowOpen(c.f.Data, start)
			want := byte('[')
			if n.Kind == MapNode {
				want = '{'
			}
			pair := n.Kind == MapNode && len(yn.Content) > 0 && yn.Content[0].Line == yn.Line && yn.Content[0].Column == yn.Column
			if bracketed = !pair && open < len(c.f.Data) && c.f.Data[open] == want; bracketed {
				r.end = open + 1
			}
		}
		if n.Kind == SeqNode {
			n.Items = make([]*Node, 0, len(yn.Content))
		} else {
			n.Entries = make([]Entry, 0, len(yn.Content)/2)
		}
		var merges []*Node
		for i, child := range yn.Content {
			cr, err := c.convert(child, depth+1)
			if err != nil {
				return converted{}, err
			}
			if n.Flow && n.Kind == MapNode && i%2 == 1 && isEmptyNull(child) {
				c.placeEmptyValue(&cr, n.Entries[len(n.Entries)-1].Key)
			}
			r.size = min(r.size+cr.size, c.lim.MaxNodes+1)
			r.height = max(r.height, cr.height+1)
			r.end = max(r.end, cr.end)
			switch {
			case n.Kind == SeqNode:
				n.Items = append(n.Items, cr.node)
			case i%2 == 0:
				n.Entries = append(n.Entries, Entry{Key: cr.node})
			default:
				n.Entries[len(n.Entries)-1].Value = cr.node
				if yn.Content[i-1].Tag == "!!merge" {
					merges = append(merges, cr.node)
				}
			}
		}
		if n.Kind == MapNode && len(yn.Content)%2 == 1 {
			return converted{}, c.errAt(start, "map has a key without a value")
		}
		if bracketed {
			r.end = flowEnd(c.f.Data, r.end)
		} else if n.Flow && n.Kind == MapNode && len(n.Entries) > 0 {
			// "key:" with an empty value still owns its ':'.
			i := n.Entries[len(n.Entries)-1].Key.End.Offset
			for i < len(c.f.Data) && isSpaceTab(c.f.Data[i]) {
				i++
			}
			if i < len(c.f.Data) && c.f.Data[i] == ':' {
				r.end = max(r.end, i+1)
			}
		}
		if len(merges) > 0 {
			if err := c.merge(n, merges, start); err != nil {
				return converted{}, err
			}
		}
	default:
		return converted{}, c.errAt(start, "unexpected YAML node kind %d", yn.Kind)
	}
	n.End = c.f.PosAt(r.end)
	if yn.Anchor != "" {
		c.done[yn] = convInfo{node: n, size: r.size, height: r.height}
	}
	return r, nil
}

// placeEmptyValue puts the empty value of a flow map entry right after its
// key's ':' (or at the key's end when it has none, as in "{a, b}"), over
// the tag or anchor it may have.
// yaml.v3 (v3.0.1) can give the empty value of a brace-less pair in a flow
// sequence a column past its ':', even past the sequence's ']' when the
// pair is not on the file's first line, which stretched the collections
// holding it over the brackets that close them.
func (c *yamlConv) placeEmptyValue(cr *converted, key *Node) {
	p := key.End.Offset
	i := p
	for i < len(c.f.Data) && isSpaceTab(c.f.Data[i]) {
		i++
	}
	if i < len(c.f.Data) && c.f.Data[i] == ':' {
		p = i + 1
	}
	end := p
	if q := skipBlank(c.f.Data, p); hasProperties(c.f.Data, q) {
		// "k: !" or "k: &a": the value is its properties.
		p, end = q, skipProperties(c.f.Data, q)
	}
	cr.node.Start, cr.node.End, cr.end = c.f.PosAt(p), c.f.PosAt(end), end
}

func (c *yamlConv) alias(yn *yaml.Node, depth, start int) (converted, error) {
	if c.active[yn.Alias] {
		return converted{}, c.errAt(start, "recursive alias *%s refers to a node that contains it", yn.Value)
	}
	info, ok := c.done[yn.Alias]
	if !ok {
		return converted{}, c.errAt(start, "alias *%s refers to an unknown anchor", yn.Value)
	}
	c.nodes += info.size
	if c.nodes > c.lim.MaxNodes {
		return converted{}, c.f.limitAt(start, "alias *%s expands the document to more than %d nodes", yn.Value, c.lim.MaxNodes)
	}
	if depth+info.height > c.lim.MaxDepth {
		return converted{}, c.errAt(start, "alias *%s nests the document deeper than the limit of %d", yn.Value, c.lim.MaxDepth)
	}
	return converted{node: info.node, end: start + 1 + len(yn.Value), size: info.size, height: info.height, aliasStart: start}, nil
}

func (c *yamlConv) scalar(n *Node, yn *yaml.Node, start int) error {
	n.Kind, n.Text = ScalarNode, yn.Value
	switch {
	case yn.Style&yaml.DoubleQuotedStyle != 0:
		n.Style = DoubleQuoted
	case yn.Style&yaml.SingleQuotedStyle != 0:
		n.Style = SingleQuoted
	case yn.Style&yaml.LiteralStyle != 0:
		n.Style = Literal
	case yn.Style&yaml.FoldedStyle != 0:
		n.Style = Folded
	}
	switch {
	case yn.Style&yaml.TaggedStyle != 0:
		tag, v, err := resolveTagged(yn.Tag, yn.Value)
		if err != nil {
			return c.errAt(start, "%v", err)
		}
		n.Tag, n.Value = tag, v
	case n.Style != Plain:
		n.Tag, n.Value = "str", yn.Value
	default:
		n.Tag, n.Value = resolvePlain(yn.Value)
	}
	return nil
}

// merge puts the entries of the maps named by "<<" keys in front of n's own
// entries, in the order PyYAML's SafeConstructor.flatten_mapping builds:
// "<<" keys in order, and for "<<: [*a, *b]" b's entries before a's, so that
// with last-wins lookups a beats b and n's own keys beat both.
func (c *yamlConv) merge(n *Node, merges []*Node, start int) error {
	var merged []Entry
	add := func(s *Node) error {
		if s.Kind != MapNode {
			return c.errAt(start, "merge key \"<<\" needs a map or a list of maps")
		}
		for _, e := range s.Entries {
			if !isMergeKey(e.Key) {
				merged = append(merged, e)
			}
		}
		return nil
	}
	for _, m := range merges {
		if m.Kind != SeqNode {
			if err := add(m); err != nil {
				return err
			}
			continue
		}
		for j := len(m.Items) - 1; j >= 0; j-- {
			if err := add(m.Items[j]); err != nil {
				return err
			}
		}
	}
	n.Entries = append(merged, n.Entries...)
	return nil
}

// isMergeKey reports whether k is a plain "<<" key.
func isMergeKey(k *Node) bool {
	return k != nil && k.Kind == ScalarNode && k.Style == Plain && k.Text == "<<" && k.Tag == "str"
}
