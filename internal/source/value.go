package source

import (
	"errors"
	"fmt"
)

// ErrTooManyNodes is returned (wrapped) by ToValue when a value has more
// nodes than allowed.
var ErrTooManyNodes = errors.New("too many nodes")

// ToValue converts n into plain Go values: map[string]any, []any, and the
// scalars' Values (string, int64, float64, bool, nil). When a key repeats,
// the last one wins; "<<" merge entries are left out because their keys are
// already merged into the map. A node shared through an alias is converted
// each time it appears, and at most maxNodes nodes are visited
// (DefaultLimits' MaxNodes when maxNodes ≤ 0). Map keys must be scalars;
// their Text is used. A nil node gives nil.
func (n *Node) ToValue(maxNodes int) (any, error) {
	if maxNodes <= 0 {
		maxNodes = DefaultLimits().MaxNodes
	}
	budget := maxNodes
	return n.toValue(&budget, maxNodes)
}

func (n *Node) toValue(budget *int, limit int) (any, error) {
	if n == nil {
		return nil, nil
	}
	*budget--
	if *budget < 0 {
		return nil, fmt.Errorf("value at %d:%d has more than %d nodes: %w", n.Start.Line, n.Start.Col, limit, ErrTooManyNodes)
	}
	switch n.Kind {
	case MapNode:
		m := make(map[string]any, len(n.Entries))
		for _, e := range n.Entries {
			if isMergeKey(e.Key) {
				continue
			}
			if e.Key.Kind != ScalarNode {
				return nil, fmt.Errorf("map key at %d:%d is not a scalar", e.Key.Start.Line, e.Key.Start.Col)
			}
			*budget--
			v, err := e.Value.toValue(budget, limit)
			if err != nil {
				return nil, err
			}
			m[e.Key.Text] = v
		}
		return m, nil
	case SeqNode:
		s := make([]any, 0, len(n.Items))
		for _, it := range n.Items {
			v, err := it.toValue(budget, limit)
			if err != nil {
				return nil, err
			}
			s = append(s, v)
		}
		return s, nil
	}
	return n.Value, nil
}
