package source

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"sync"
	"unicode/utf8"
)

// explicitKey finds a YAML explicit-key indicator ("? ") at the start of
// a line's content; "$" does not match before a CRLF's '\r'.
var explicitKey = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^[ \t-]*\?([ \t\r]|$)`) })

// loneCR finds a carriage return that is not part of CRLF.
var loneCR = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\r([^\n]|$)`) })

// editable refuses files whose layout the editor does not handle, before
// any op runs, with the reason and what the user can change.
func (f *File) editable() error {
	// The byte scans spare most files the regexps' full pass.
	if bytes.IndexByte(f.Data, '\r') >= 0 && loneCR().Match(f.Data) {
		return fmt.Errorf("edit %s: the file breaks lines with a lone carriage return, which gpulint does not edit; convert it to LF or CRLF", f.Path)
	}
	if f.Format != FormatYAML {
		return nil
	}
	if bytes.IndexByte(f.Data, '?') >= 0 && explicitKey().Match(f.Data) {
		return fmt.Errorf("edit %s: the file uses explicit (?) keys, whose layout gpulint does not edit; change it by hand", f.Path)
	}
	if bytes.Contains(f.Data[bomLen(f.Data):], []byte("\ufeff")) {
		// yaml.v3 (v3.0.1 yamlprivateh.go) tests is_bom at the start of its
		// read buffer, not at the current character, so while the buffer
		// starts with a U+FEFF (at the start of the text, or wherever a
		// buffer refill puts one, quoted or not) it skips the first
		// character of each line it scans from column 0, whatever that is,
		// and counts it as a column. Where that happens moves when an edit
		// shifts the text. YAML 1.2.2 allows the mark only before a document
		// and inside quoted scalars (production [27] nb-char excludes it),
		// and PyYAML reads a second one as content: no text we could insert
		// reads the same in every parser.
		return fmt.Errorf("edit %s: the file holds a U+FEFF (byte-order mark) character after its start, which YAML parsers read differently; remove it, or write it as \\uFEFF in a double-quoted string", f.Path)
	}
	if off, ok := f.looseTab(); ok {
		// yaml.v3 (v3.0.1 scannerc.go, yaml_parser_scan_to_next_token) and
		// PyYAML skip only spaces at the start of a block-context line, so
		// a tab there is an error, except where yaml.v3 reads the line
		// while looking for more of a plain scalar. An edit that writes a
		// quoted value or a new key before the line, or removes the plain
		// scalar, makes the file unreadable.
		return fmt.Errorf("edit %w", &Error{File: f.Path, Pos: f.PosAt(off), Msg: "the line is indented with a tab, which YAML allows here only after an unquoted value; replace the tab with spaces"})
	}
	return nil
}

// looseTab returns the offset of a tab in the indentation of a line that
// no scalar or flow collection holds.
func (f *File) looseTab() (int, bool) {
	if bytes.IndexByte(f.Data, '\t') < 0 {
		return 0, false
	}
	var tabs []int
	for ls := bomLen(f.Data); ls < len(f.Data); ls = nextLine(f.Data, ls) {
		for i := ls; i < len(f.Data) && isSpaceTab(f.Data[i]); i++ {
			if f.Data[i] == '\t' {
				tabs = append(tabs, i)
				break
			}
		}
	}
	if len(tabs) == 0 {
		return 0, false
	}
	held := make([]bool, len(tabs))
	var visit func(n *Node) // the parse limits bound the tree
	visit = func(n *Node) {
		if n == nil {
			return
		}
		if n.Kind == ScalarNode || n.Flow {
			// Scalars and flow collections do not nest in one another, so
			// each tab is marked at most once.
			i := sort.SearchInts(tabs, n.Start.Offset+1)
			for ; i < len(tabs) && tabs[i] < n.End.Offset; i++ {
				held[i] = true
			}
			return
		}
		for _, it := range n.Items {
			if within(it, n) {
				visit(it)
			}
		}
		for _, e := range n.Entries {
			for _, c := range []*Node{e.Key, e.Value} {
				if c != nil && within(c, n) {
					visit(c)
				}
			}
		}
	}
	for _, d := range f.Docs {
		visit(d.Root)
	}
	for i, t := range tabs {
		if !held[i] {
			return t, true
		}
	}
	return 0, false
}

// maxImplicitKey is how far, in characters, the ':' after a YAML key
// written without '?' may be from the key's start. YAML 1.2.2 section
// 7.4.2: "the ':' indicator must appear at most 1024 Unicode characters
// beyond the start of the key"; yaml.v3 and PyYAML enforce it.
const maxImplicitKey = 1024

// errLongKey refuses to write a key past maxImplicitKey.
var errLongKey = errors.New("a key longer than 1024 characters cannot be written without YAML's '?' form; change it by hand")

// longKey reports whether a path, or a normalized value's maps, hold a
// key whose double-quoted form would pass maxImplicitKey. Keys are written
// plain or double-quoted right before their ':', so that form bounds the
// distance.
func longKey(path []any, v any) bool {
	for _, p := range path {
		if k, ok := p.(string); ok && tooLongKey(k) {
			return true
		}
	}
	return longValueKey(v)
}

func longValueKey(v any) bool {
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			if longValueKey(e) {
				return true
			}
		}
	case map[string]any:
		for k, e := range x {
			if tooLongKey(k) || longValueKey(e) {
				return true
			}
		}
	}
	return false
}

// tooLongKey reports whether k, double-quoted, passes maxImplicitKey. A
// byte takes at most 6 characters quoted (\uXXXX), so short keys pass
// without rendering.
func tooLongKey(k string) bool {
	return len(k)*6+2 > maxImplicitKey && utf8.RuneCountInString(yamlDoubleQuote(k)) > maxImplicitKey
}
