package source

import "strings"

// The fast YAML reader.
//
// Most config YAML is block maps and sequences of one-line scalars, with
// flow collections and literal or folded block scalars here and there.
// parseYAMLFast reads exactly that shape straight into Nodes, without
// yaml.v3's token stream and node tree and without the conversion from
// that tree: about 5x faster, with a fifth of the allocations
// (BenchmarkParseYAML). Anything else makes it give up, and the file is
// read by the full path (yaml.go) from the start: multi-line plain and
// quoted scalars, anchors, aliases, tags, explicit and merge keys,
// directives and "...", escapes other than \\ \" \n \t, block scalars
// with an indentation indicator or "keep" chomping, tabs, CR and Unicode
// line breaks, control characters, and a syntax error of any kind. It
// never reports an error: only the full path does.
//
// Whatever it accepts, it must read as the full path does, node for node,
// position for position: TestYAMLFastMatchesFull holds it to that over the
// corpus and the edit cases, and FuzzYAMLFast over generated input.

// fastBail is the panic value with which the fast reader gives up.
type fastBail struct{}

type fastYAML struct {
	f    *File
	data []byte
	text string // data as a string: scalar texts are substrings of it
	cur  posCursor
	lim  Limits

	nodes int
	// slab hands out nodes from a first chunk sized from the line count,
	// then from chunks that double in size, so that a file takes few
	// allocations and wastes little.
	slab      []Node
	slabChunk int
	// Scratch stacks from which each collection's children are copied
	// into a slice of their final size.
	items   []*Node
	entries []Entry
}

// parseYAMLFast reads f.Data into f.Docs when the file keeps to the shape
// described above; otherwise it reports false and leaves f untouched.
func parseYAMLFast(f *File, lim Limits) (ok bool) {
	if !fastBytesOK(f.Data) {
		return false
	}
	p := &fastYAML{f: f, data: f.Data, text: string(f.Data), cur: posCursor{lines: f.Lines}, lim: lim}
	// A block document has at most a key and a value per line; flow
	// collections and comments move that either way, and newNode grows.
	p.slabChunk = min(2*len(f.Lines)+8, 1024, lim.MaxNodes+1)
	p.slab = make([]Node, p.slabChunk)
	defer func() {
		if r := recover(); r != nil {
			if _, bail := r.(fastBail); !bail {
				panic(r)
			}
			ok = false
		}
	}()
	f.Docs = p.stream()
	return true
}

// fastBytesOK reports whether data holds none of the bytes the fast
// reader leaves to yaml.v3: control characters (tab and CR included),
// DEL, a byte-order mark anywhere, C1 controls, NEL, the Unicode line and
// paragraph separators, U+FFFE and U+FFFF.
func fastBytesOK(data []byte) bool {
	for i, c := range data {
		if !fastSuspect[c] {
			continue
		}
		switch c {
		case 0xc2: // U+0080..U+00BF: C1 controls and NEL are out
			if i+1 < len(data) && data[i+1] < 0xa0 {
				return false
			}
		case 0xe2: // U+2028, U+2029
			if i+2 < len(data) && data[i+1] == 0x80 && (data[i+2] == 0xa8 || data[i+2] == 0xa9) {
				return false
			}
		case 0xef: // U+FEFF, U+FFFE, U+FFFF
			if i+2 < len(data) && (data[i+1] == 0xbb && data[i+2] == 0xbf || data[i+1] == 0xbf && data[i+2] >= 0xbe) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// fastSuspect marks the bytes fastBytesOK looks at.
var fastSuspect = func() (t [256]bool) {
	for c := 0; c < 0x20; c++ {
		t[c] = c != '\n'
	}
	t[0x7f], t[0xc2], t[0xe2], t[0xef] = true, true, true, true
	return t
}()

func (p *fastYAML) bail() { panic(fastBail{}) }

func (p *fastYAML) newNode(depth int, collection bool) *Node {
	if collection && depth+1 > p.lim.MaxDepth {
		p.bail()
	}
	p.nodes++
	if p.nodes > p.lim.MaxNodes {
		p.bail()
	}
	if len(p.slab) == 0 {
		p.slabChunk = min(max(2*p.slabChunk, 32), 1024)
		p.slab = make([]Node, p.slabChunk)
	}
	n := &p.slab[0]
	p.slab = p.slab[1:]
	return n
}

// at returns the byte at i, or 0 at the end of the data.
func (p *fastYAML) at(i int) byte {
	if i < len(p.data) {
		return p.data[i]
	}
	return 0
}

// blankAt reports whether i is at a space, a line break or the end.
func (p *fastYAML) blankAt(i int) bool {
	c := p.at(i)
	return c == ' ' || c == '\n' || c == 0
}

// spaces returns the offset after the spaces at i.
func (p *fastYAML) spaces(i int) int {
	for p.at(i) == ' ' {
		i++
	}
	return i
}

// dash reports whether a block sequence entry ("- " or a lone '-')
// starts at i.
func (p *fastYAML) dash(i int) bool {
	return p.at(i) == '-' && p.blankAt(i+1)
}

// inlineAt reports whether a node starts at i, after "key:" or "-" and
// their spaces, rather than the line ending there (a comment aside).
func (p *fastYAML) inlineAt(i int) bool {
	c := p.at(i)
	return c != 0 && c != '\n' && !(c == '#' && p.data[i-1] == ' ')
}

// content returns the first character of the first line from ls (a line
// start) on that is neither blank nor a comment, and its column (0-based;
// the fast reader has no tabs). At the end of the data it returns
// len(data) and -1.
func (p *fastYAML) content(ls int) (int, int) {
	for ls < len(p.data) {
		i := ls
		for i < len(p.data) && p.data[i] == ' ' {
			i++
		}
		if i < len(p.data) && p.data[i] != '\n' && p.data[i] != '#' {
			return i, i - ls
		}
		ls = p.f.nextLineStart(i)
	}
	return len(p.data), -1
}

// docMarker reports whether a "---" or "..." line starts at i.
func (p *fastYAML) docMarker(i int) bool {
	return (i == 0 || p.data[i-1] == '\n') && isDocMarker(p.data, i)
}

// rest checks that only spaces and a comment follow i on its line.
func (p *fastYAML) rest(i int) {
	i = p.spaces(i)
	switch c := p.at(i); {
	case c == 0 || c == '\n':
	case c == '#' && p.data[i-1] == ' ':
	default:
		p.bail()
	}
}

// stream reads the documents.
func (p *fastYAML) stream() []*Document {
	var docs []*Document
	q, _ := p.content(0)
	for q < len(p.data) {
		start := q
		explicit := p.docMarker(q)
		if explicit {
			if p.data[q] != '-' {
				p.bail() // "..."
			}
			p.rest(q + 3)
			q, _ = p.content(p.f.nextLineStart(q + 3))
			if q == len(p.data) || p.docMarker(q) {
				pos := p.cur.at(start + 3)
				docs = append(docs, &Document{Index: len(docs), Start: pos, End: pos})
				continue
			}
		} else if len(docs) > 0 {
			p.bail() // a second document needs "---"
		}
		if p.data[q] == '%' {
			p.bail()
		}
		root, end := p.block(q, -1, 0)
		docs = append(docs, &Document{Index: len(docs), Root: root, Start: root.Start, End: p.cur.at(end)})
		q, _ = p.content(p.f.nextLineStart(end))
		if q < len(p.data) && !p.docMarker(q) {
			p.bail()
		}
	}
	return docs
}

// block reads the node at q, on a line of its own or after "- ", inside
// a collection indented parent columns (-1 at a document's root), under
// depth collections. It returns the node and the offset after its text.
func (p *fastYAML) block(q, parent, depth int) (*Node, int) {
	if p.dash(q) {
		return p.blockSeq(q, depth)
	}
	if c := p.data[q]; c == '|' || c == '>' {
		n, end := p.blockScalar(q, parent, depth)
		p.value(end, parent)
		return n, end
	}
	n, end := p.inline(q, false, depth)
	if s := p.spaces(end); p.at(s) == ':' && p.blankAt(s+1) {
		if n.Kind != ScalarNode {
			p.bail()
		}
		return p.blockMap(q, n, end, s, depth)
	}
	p.value(end, parent)
	return n, end
}

// value checks what follows a scalar or flow collection that ends at
// end, as a value inside a collection indented parent columns: the rest
// of its line must be blank or a comment, and no line indented more may
// follow (that would continue a plain scalar, or be an error).
func (p *fastYAML) value(end, parent int) {
	p.rest(end)
	q, col := p.content(p.f.nextLineStart(end))
	if q < len(p.data) && col > parent && !(col == 0 && p.docMarker(q)) {
		p.bail()
	}
}

// blockMap reads a block map whose first key, key, starts at q and ends
// at keyEnd, with its ':' at colon.
func (p *fastYAML) blockMap(q int, key *Node, keyEnd, colon, depth int) (*Node, int) {
	m := p.newNode(depth, true)
	m.Kind, m.Start = MapNode, key.Start
	col := m.Start.Col - 1 // bytes, and the fast reader has no tabs
	end := keyEnd
	base := len(p.entries)
	for {
		if key.Kind == ScalarNode && key.Style == Plain && key.Text == "<<" {
			p.bail() // merge keys are left to the full path
		}
		v, vend := p.mapValue(colon, col, depth+1)
		end = max(end, vend)
		p.entries = append(p.entries, Entry{Key: key, Value: v})
		nq, ncol := p.content(p.f.nextLineStart(vend))
		if nq == len(p.data) || ncol < col || p.docMarker(nq) {
			break
		}
		if ncol > col || p.dash(nq) {
			p.bail()
		}
		key, keyEnd = p.inline(nq, false, depth+1)
		colon = p.spaces(keyEnd)
		if key.Kind != ScalarNode || p.at(colon) != ':' || !p.blankAt(colon+1) {
			p.bail()
		}
		end = max(end, keyEnd)
	}
	m.Entries = popScratch(&p.entries, base)
	m.End = p.cur.at(end)
	return m, end
}

// mapValue reads the value after the ':' at colon of a key in a block map
// indented col columns.
func (p *fastYAML) mapValue(colon, col, depth int) (*Node, int) {
	v := p.spaces(colon + 1)
	if p.inlineAt(v) {
		if p.dash(v) {
			p.bail() // "k: - x"
		}
		var n *Node
		var end int
		if c := p.data[v]; c == '|' || c == '>' {
			n, end = p.blockScalar(v, col, depth)
		} else {
			n, end = p.inline(v, false, depth)
		}
		p.value(end, col)
		return n, end
	}
	p.rest(v)
	nq, ncol := p.content(p.f.nextLineStart(v))
	if nq < len(p.data) && !p.docMarker(nq) && (ncol > col || ncol == col && p.dash(nq)) {
		return p.block(nq, col, depth)
	}
	return p.empty(colon+1, depth), colon + 1
}

// empty returns the null of an empty value, placed at i.
func (p *fastYAML) empty(i, depth int) *Node {
	n := p.newNode(depth, false)
	n.Kind, n.Tag = ScalarNode, "null"
	n.Start = p.cur.at(i)
	n.End = n.Start
	return n
}

// blockSeq reads a block sequence whose first '-' is at q.
func (p *fastYAML) blockSeq(q, depth int) (*Node, int) {
	s := p.newNode(depth, true)
	s.Kind, s.Start = SeqNode, p.cur.at(q)
	col := s.Start.Col - 1
	end := q
	base := len(p.items)
	for {
		v := p.spaces(q + 1)
		var it *Node
		var iend int
		if p.inlineAt(v) {
			it, iend = p.block(v, col, depth+1)
		} else {
			p.rest(v)
			nq, ncol := p.content(p.f.nextLineStart(v))
			if nq < len(p.data) && !p.docMarker(nq) && ncol > col {
				it, iend = p.block(nq, col, depth+1)
			} else {
				it, iend = p.empty(q+1, depth+1), q+1
			}
		}
		end = max(end, iend)
		p.items = append(p.items, it)
		nq, ncol := p.content(p.f.nextLineStart(iend))
		if nq == len(p.data) || ncol < col || p.docMarker(nq) {
			break
		}
		if ncol > col {
			p.bail()
		}
		if !p.dash(nq) {
			break // the map holding this sequence goes on
		}
		q = nq
	}
	s.Items = popScratch(&p.items, base)
	s.End = p.cur.at(end)
	return s, end
}

// inline reads a scalar or a flow collection that starts at i, in flow
// context or not. A scalar ends on its line; a flow collection may not.
func (p *fastYAML) inline(i int, flow bool, depth int) (*Node, int) {
	switch c := p.at(i); c {
	case '"':
		return p.doubleQuoted(i, depth)
	case '\'':
		return p.singleQuoted(i, depth)
	case '[', '{':
		return p.flowCollection(i, depth)
	case '-':
		if next := p.at(i + 1); p.blankAt(i+1) || flow && strings.IndexByte(",[]{}", next) >= 0 {
			p.bail()
		}
	case '?', ':':
		p.bail()
	case 0, '\n', ' ', '#', ',', ']', '}', '&', '*', '!', '|', '>', '%', '@', '`':
		p.bail()
	}
	return p.plain(i, flow, depth)
}

// plain reads a one-line plain scalar. In block context it ends before
// ": ", " #" or the end of the line; in flow context also before a flow
// indicator, and a ':' or '#' inside it is left to the full path.
func (p *fastYAML) plain(i int, flow bool, depth int) (*Node, int) {
	j := i
scan:
	for ; j < len(p.data); j++ {
		switch p.data[j] {
		case '\n':
			break scan
		case ':':
			if flow {
				if j > i && p.blankAt(j+1) {
					break scan
				}
				p.bail()
			}
			if p.blankAt(j + 1) {
				break scan
			}
		case '#':
			if p.data[j-1] == ' ' {
				break scan
			}
			if flow {
				p.bail()
			}
		case ',', '[', ']', '{', '}':
			if flow {
				break scan
			}
		case '?':
			if flow {
				p.bail() // yaml.v3 ends a flow plain scalar at '?'
			}
		}
	}
	for j > i && p.data[j-1] == ' ' {
		j--
	}
	if j-i > 1000 {
		p.bail() // yaml.v3 limits implicit keys to 1024 characters
	}
	n := p.newNode(depth, false)
	n.Kind = ScalarNode
	n.Text = p.text[i:j]
	n.Tag, n.Value = resolvePlain(n.Text)
	n.Start, n.End = p.cur.at(i), p.cur.at(j)
	return n, j
}

// singleQuoted reads a one-line single-quoted scalar.
func (p *fastYAML) singleQuoted(i, depth int) (*Node, int) {
	var b strings.Builder
	escaped := false
	j := i + 1
	for ; ; j++ {
		switch p.at(j) {
		case 0, '\n':
			p.bail()
		case '\'':
			if p.at(j+1) == '\'' {
				if !escaped {
					escaped = true
					b.WriteString(p.text[i+1 : j])
				}
				b.WriteByte('\'')
				j++
				continue
			}
		default:
			if escaped {
				b.WriteByte(p.data[j])
			}
			continue
		}
		break
	}
	return p.strNode(i, j+1, p.quotedText(i, j, &b, escaped), SingleQuoted, depth), j + 1
}

// doubleQuoted reads a one-line double-quoted scalar with at most the
// escapes \\ \" \n and \t (yaml.v3 refuses \/).
func (p *fastYAML) doubleQuoted(i, depth int) (*Node, int) {
	var b strings.Builder
	escaped := false
	j := i + 1
	for ; ; j++ {
		c := p.at(j)
		switch c {
		case 0, '\n':
			p.bail()
		case '\\':
			if !escaped {
				escaped = true
				b.WriteString(p.text[i+1 : j])
			}
			j++
			switch p.at(j) {
			case '\\', '"':
				b.WriteByte(p.data[j])
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			default:
				p.bail()
			}
			continue
		case '"':
		default:
			if escaped {
				b.WriteByte(c)
			}
			continue
		}
		break
	}
	return p.strNode(i, j+1, p.quotedText(i, j, &b, escaped), DoubleQuoted, depth), j + 1
}

// quotedText is the text of the quoted scalar whose quotes are at q1
// and q2: what b decoded when it held an escape, else the text between
// them.
func (p *fastYAML) quotedText(q1, q2 int, b *strings.Builder, escaped bool) string {
	if escaped {
		return b.String()
	}
	return p.text[q1+1 : q2]
}

// strNode makes the node of a quoted or block scalar, a string, whose
// text runs from start to end.
func (p *fastYAML) strNode(start, end int, text string, style ScalarStyle, depth int) *Node {
	n := p.newNode(depth, false)
	n.Kind, n.Style, n.Text, n.Tag, n.Value = ScalarNode, style, text, "str", text
	n.Start, n.End = p.cur.at(start), p.cur.at(end)
	return n
}

// flowCollection reads a flow sequence or map of scalars and flow
// collections, over one line or several, comments and a trailing comma
// included. Pairs in sequences ("[a: 1]"), keys without values ("{a}"),
// empty values and a key whose ':' is on another line are left to the
// full path.
func (p *fastYAML) flowCollection(i, depth int) (*Node, int) {
	n := p.newNode(depth, true)
	n.Kind, n.Flow, n.Start = SeqNode, true, p.cur.at(i)
	closer := byte(']')
	if p.data[i] == '{' {
		n.Kind, closer = MapNode, '}'
	}
	base, ebase := len(p.items), len(p.entries)
	j := p.flowSpace(i + 1)
	if p.at(j) != closer {
		for {
			k, kend := p.inline(j, true, depth+1)
			j = p.spaces(kend)
			if n.Kind == MapNode {
				if k.Kind != ScalarNode || p.at(j) != ':' {
					p.bail()
				}
				j = p.flowSpace(j + 1)
				if c := p.at(j); c == ',' || c == '}' {
					p.bail()
				}
				v, vend := p.inline(j, true, depth+1)
				p.entries = append(p.entries, Entry{Key: k, Value: v})
				j = p.flowSpace(vend)
			} else {
				p.items = append(p.items, k)
				j = p.flowSpace(j)
			}
			if p.at(j) == closer {
				break
			}
			if p.at(j) != ',' {
				p.bail()
			}
			j = p.flowSpace(j + 1)
			if p.at(j) == closer {
				break // a trailing comma
			}
		}
	}
	if n.Kind == MapNode {
		n.Entries = popScratch(&p.entries, ebase)
	} else {
		n.Items = popScratch(&p.items, base)
	}
	n.End = p.cur.at(j + 1)
	return n, j + 1
}

// flowSpace skips spaces, line breaks and comments inside a flow
// collection.
func (p *fastYAML) flowSpace(j int) int {
	for {
		switch p.at(j) {
		case ' ', '\n':
			j++
		case '#':
			if c := p.data[j-1]; c != ' ' && c != '\n' {
				p.bail()
			}
			j = p.f.nextLineStart(j)
		default:
			return j
		}
	}
}

// blockScalar reads a literal or folded block scalar whose header is at
// h, inside a collection indented parent columns. Explicit indentation,
// "keep" chomping, lines of spaces only beyond the indentation, and in a
// folded scalar leading empty lines and more-indented lines are left to
// the full path.
func (p *fastYAML) blockScalar(h, parent, depth int) (*Node, int) {
	style := Literal
	if p.data[h] == '>' {
		style = Folded
	}
	j := h + 1
	strip := p.at(j) == '-'
	if strip {
		j++
	}
	if c := p.at(j); c == '+' || c >= '0' && c <= '9' {
		p.bail()
	}
	p.rest(j)
	var b strings.Builder
	indent, end, breaks, lead := -1, -1, 0, 0
	for ls := p.f.nextLineStart(j); ls < len(p.data); ls = p.f.nextLineStart(ls) {
		s := p.spaces(ls)
		if c := p.at(s); c == '\n' || c == 0 {
			if indent >= 0 && s-ls > indent || indent < 0 && style == Folded {
				p.bail()
			}
			lead = max(lead, s-ls)
			breaks++
			continue
		}
		if indent < 0 {
			indent = s - ls
			if indent <= max(parent, 0) || lead > indent {
				p.bail() // an empty scalar, or one yaml.v3 reads with a deeper indentation
			}
		}
		if s-ls < indent {
			break
		}
		if s-ls > indent && style == Folded {
			p.bail()
		}
		le := p.f.nextLineStart(s)
		if p.data[le-1] == '\n' {
			le--
		}
		switch {
		case end < 0 || style == Literal:
			for ; breaks > 0; breaks-- {
				b.WriteByte('\n')
			}
			if end >= 0 {
				b.WriteByte('\n')
			}
		case breaks == 0:
			b.WriteByte(' ')
		default:
			for ; breaks > 0; breaks-- {
				b.WriteByte('\n')
			}
		}
		breaks = 0
		b.WriteString(p.text[ls+indent : le])
		end = le
	}
	if end < 0 {
		p.bail()
	}
	if !strip && end < len(p.data) {
		b.WriteByte('\n') // clipped to the last line's break, when it has one
	}
	return p.strNode(h, end, b.String(), style, depth), end
}

// popScratch returns the entries of a scratch stack from base on, in a
// slice of their own size, and pops them.
func popScratch[T any](stack *[]T, base int) []T {
	out := append(make([]T, 0, len(*stack)-base), (*stack)[base:]...)
	clear((*stack)[base:])
	*stack = (*stack)[:base]
	return out
}
