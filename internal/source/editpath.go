package source

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"sync"
	"unicode/utf8"
)

// normPath turns path elements into strings and ints.
func normPath(path []any) ([]any, error) {
	out := make([]any, len(path))
	for i, p := range path {
		switch x := p.(type) {
		case string:
			if !utf8.ValidString(x) {
				return nil, fmt.Errorf("path key %q is not valid UTF-8", x)
			}
			out[i] = x
		case int:
			out[i] = x
		case int64:
			out[i] = int(x)
		case float64:
			if x != math.Trunc(x) {
				return nil, fmt.Errorf("path element %v is not an integer index", x)
			}
			out[i] = int(x)
		case json.Number:
			n, err := x.Int64()
			if err != nil {
				return nil, fmt.Errorf("path element %v is not an integer index", x)
			}
			out[i] = int(n)
		default:
			return nil, fmt.Errorf("path element %v has type %T, want string or int", p, p)
		}
		if n, ok := out[i].(int); ok && n < 0 {
			return nil, fmt.Errorf("negative index %d in path", n)
		}
	}
	return out, nil
}

// jsonNumberRE is JSON's number grammar.
var jsonNumberRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?$`)
})

// normValue turns an op value into nil, bool, string, int64, float64,
// json.Number, map[string]any or []any.
func normValue(v any) (any, error) {
	switch x := v.(type) {
	case string:
		if !utf8.ValidString(x) {
			return nil, fmt.Errorf("string value %q is not valid UTF-8", x)
		}
		return x, nil
	case nil, bool, int64, float64:
		return x, nil
	case int:
		return int64(x), nil
	case int8:
		return int64(x), nil
	case int16:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case uint:
		return uintValue(uint64(x))
	case uint8:
		return int64(x), nil
	case uint16:
		return int64(x), nil
	case uint32:
		return int64(x), nil
	case uint64:
		return uintValue(x)
	case float32:
		return float64(x), nil
	case json.Number:
		// Kept as written, so "1.0" stays a float in the file.
		if !jsonNumberRE().MatchString(string(x)) {
			return nil, fmt.Errorf("bad number %q", x)
		}
		return x, nil
	case []string:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = e
		}
		return s, nil
	case map[string]string:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = e
		}
		return m, nil
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			n, err := normValue(e)
			if err != nil {
				return nil, err
			}
			s[i] = n
		}
		return s, nil
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			if !utf8.ValidString(k) {
				return nil, fmt.Errorf("map key %q is not valid UTF-8", k)
			}
			n, err := normValue(e)
			if err != nil {
				return nil, err
			}
			m[k] = n
		}
		return m, nil
	}
	return nil, fmt.Errorf("unsupported value type %T", v)
}

func uintValue(u uint64) (any, error) {
	if u > math.MaxInt64 {
		return float64(u), nil
	}
	return int64(u), nil
}

// step is one node on a path: the node, its parent collection, and its
// place there (entry index for a map, item index for a sequence; -1 for the
// root).
type step struct {
	node, parent *Node
	at           int
}

// errThroughAlias is returned for paths whose node text is not inside its
// parent's text: it comes from an alias or a merge key.
var errThroughAlias = errors.New("the path goes through an alias or merge key; edit the anchored node instead")

// walk follows path from root as far as it exists. steps[0] is the root;
// len(steps)-1 elements of path matched.
func walk(root *Node, path []any) ([]step, error) {
	steps := []step{{node: root, at: -1}}
	n := root
	for _, p := range path {
		var next step
		switch k := p.(type) {
		case string:
			if n.Kind != MapNode {
				return steps, nil
			}
			i := lastEntry(n, k)
			if i < 0 {
				return steps, nil
			}
			next = step{node: n.Entries[i].Value, parent: n, at: i}
		case int:
			if n.Kind != SeqNode || k >= len(n.Items) {
				return steps, nil
			}
			next = step{node: n.Items[k], parent: n, at: k}
		}
		if !ownChild(n, next.at) {
			return nil, errThroughAlias
		}
		if n.Kind == MapNode && n.Entries[next.at].Key.Start.Line != n.Entries[next.at].Key.End.Line {
			return nil, errLayout
		}
		steps = append(steps, next)
		n = next.node
	}
	return steps, nil
}

// lastEntry returns the index of the last entry of map n with key k, or -1.
func lastEntry(n *Node, k string) int {
	for i := len(n.Entries) - 1; i >= 0; i-- {
		if n.Entries[i].Key.Text == k && !isMergeKey(n.Entries[i].Key) {
			return i
		}
	}
	return -1
}

// ownChild reports whether entry or item i of collection n is written
// there, not reached through an alias or a merge key. Aliases refer back
// to anchors, so an alias's node starts before the text around it: before
// the end of its key, or of the previous item, or of the collection's start.
func ownChild(n *Node, i int) bool {
	if n.Kind == MapNode {
		e := n.Entries[i]
		// An entry merged in by `<<: {...}` is written inside the merge
		// entry's value, not as one of this map's own entries.
		for _, m := range n.Entries {
			if isMergeKey(m.Key) && m.Value != nil && e.Key != m.Key &&
				e.Key.Start.Offset >= m.Value.Start.Offset && e.Key.End.Offset <= m.Value.End.Offset {
				return false
			}
		}
		return within(e.Key, n) && within(e.Value, n) && e.Value.Start.Offset >= e.Key.End.Offset
	}
	it := n.Items[i]
	return within(it, n) && (i == 0 || it.Start.Offset >= n.Items[i-1].End.Offset)
}

// within reports whether child's text lies inside parent's.
func within(child, parent *Node) bool {
	return child.Start.Offset >= parent.Start.Offset && child.End.Offset <= parent.End.Offset
}

// nestValue wraps v in the maps (and one-item lists for index 0) that the
// missing path elements rest name.
func nestValue(rest []any, v any) (any, error) {
	for i := len(rest) - 1; i >= 0; i-- {
		switch k := rest[i].(type) {
		case string:
			v = map[string]any{k: v}
		case int:
			if k != 0 {
				return nil, fmt.Errorf("cannot create index %d of a missing sequence", k)
			}
			v = []any{v}
		}
	}
	return v, nil
}

// isNull reports whether n is a null scalar.
func isNull(n *Node) bool { return n.Kind == ScalarNode && n.Tag == "null" }

// isCollection reports whether v is a non-empty map or list.
func isCollection(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		return len(x) > 0
	case []any:
		return len(x) > 0
	}
	return false
}

func describeKind(n *Node) string {
	switch n.Kind {
	case MapNode:
		return "a map"
	case SeqNode:
		return "a sequence"
	}
	return "a scalar (" + n.Tag + ")"
}

func describeElem(p any) string {
	if k, ok := p.(int); ok {
		return "index " + strconv.Itoa(k)
	}
	return fmt.Sprintf("key %q", p)
}
