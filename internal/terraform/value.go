package terraform

import (
	"fmt"
	"sort"

	"github.com/gpulint/gpulint/internal/source"
)

// Docs parses the heredoc's body as YAML (Heredoc.YAML) and returns the
// parsed file, whose Data is the .tf file's own bytes, so that positions
// and the content digest are the .tf file's. A body that is not YAML
// gives an error.
func (h Heredoc) Docs(path string, data []byte, lim source.Limits) (*source.File, error) {
	f, err := source.Parse(path, h.YAML(data), lim)
	if err != nil {
		return nil, err
	}
	f.Data = data
	return f, nil
}

// Value converts a node of the heredoc's YAML into plain Go values as
// source.Node.ToValue does, leaving out what Terraform fills in: a map
// entry whose key or value is an interpolation is dropped, and so is a
// list holding one (a requirement's values with one unknown member are
// not the members known). A node that is itself unknown gives ok false.
// At most maxNodes nodes are visited (source.DefaultLimits' MaxNodes when
// maxNodes ≤ 0).
func (h Heredoc) Value(n *source.Node, maxNodes int) (v any, ok bool, err error) {
	if maxNodes <= 0 {
		maxNodes = source.DefaultLimits().MaxNodes
	}
	budget := maxNodes
	return h.value(n, &budget)
}

func (h Heredoc) value(n *source.Node, budget *int) (any, bool, error) {
	if n == nil {
		return nil, true, nil
	}
	*budget--
	if *budget < 0 {
		return nil, false, fmt.Errorf("value at %d:%d: %w", n.Start.Line, n.Start.Col, source.ErrTooManyNodes)
	}
	switch n.Kind {
	case source.MapNode:
		m := make(map[string]any, len(n.Entries))
		for _, e := range n.Entries {
			if e.Key == nil || e.Key.Kind != source.ScalarNode || h.unknown(e.Key) {
				continue
			}
			if e.Key.Style == source.Plain && e.Key.Text == "<<" {
				continue // a merge key: its entries are merged already
			}
			v, ok, err := h.value(e.Value, budget)
			if err != nil {
				return nil, false, err
			}
			if ok {
				m[e.Key.Text] = v
			} else {
				delete(m, e.Key.Text) // a repeated key: the last one wins
			}
		}
		return m, true, nil
	case source.SeqNode:
		s := make([]any, 0, len(n.Items))
		for _, it := range n.Items {
			v, ok, err := h.value(it, budget)
			if err != nil || !ok {
				return nil, false, err
			}
			s = append(s, v)
		}
		return s, true, nil
	}
	if h.unknown(n) {
		return nil, false, nil
	}
	return n.Value, true, nil
}

// unknown reports whether a scalar's text overlaps an interpolation
// (h.Unknown is in file order and its spans do not overlap).
func (h Heredoc) unknown(n *source.Node) bool {
	i := sort.Search(len(h.Unknown), func(i int) bool { return h.Unknown[i][1] > n.Start.Offset })
	return i < len(h.Unknown) && h.Unknown[i][0] < n.End.Offset
}
