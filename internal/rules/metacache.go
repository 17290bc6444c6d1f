package rules

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sort"
)

// Reading the METADATA blocks (YAML) of the built-in policies is most of
// the cost of loading them. The precompiled policy bundle therefore carries
// each module's metadata already read, in the small binary form below, with
// the digest of the source it was read from; a module whose source differs
// is read from its YAML as usual.

// MetadataCache returns a module's metadata as encoded by EncodeMetadata,
// when it holds it for exactly this source.
type MetadataCache func(file string, sum [sha256.Size]byte) ([]byte, bool)

// SourceSum is the digest a MetadataCache is keyed by.
func SourceSum(source string) [sha256.Size]byte { return sha256.Sum256([]byte(source)) }

// EncodeMetadata encodes the module's package metadata (or its absence).
func EncodeMetadata(m Module) ([]byte, error) {
	if m.meta == nil {
		return []byte{0}, nil
	}
	out := []byte{1}
	out = appendString(out, m.meta.Title)
	out = appendString(out, m.meta.Scope)
	var custom any
	if m.meta.Custom != nil {
		custom = m.meta.Custom
	}
	return appendValue(out, custom)
}

// Value tags.
const (
	vNil byte = iota
	vFalse
	vTrue
	vInt
	vFloat
	vString
	vList
	vMap
)

func appendString(out []byte, s string) []byte {
	out = binary.AppendUvarint(out, uint64(len(s)))
	return append(out, s...)
}

func appendValue(out []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(out, vNil), nil
	case bool:
		if x {
			return append(out, vTrue), nil
		}
		return append(out, vFalse), nil
	case int:
		return binary.AppendVarint(append(out, vInt), int64(x)), nil
	case float64:
		return binary.LittleEndian.AppendUint64(append(out, vFloat), math.Float64bits(x)), nil
	case string:
		return appendString(append(out, vString), x), nil
	case []any:
		out = binary.AppendUvarint(append(out, vList), uint64(len(x)))
		for _, e := range x {
			var err error
			if out, err = appendValue(out, e); err != nil {
				return nil, err
			}
		}
		return out, nil
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out = binary.AppendUvarint(append(out, vMap), uint64(len(keys)))
		for _, k := range keys {
			out = appendString(out, k)
			var err error
			if out, err = appendValue(out, x[k]); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("metadata value of type %T", v)
}

type metaDecoder struct {
	data  []byte
	depth int
	err   error
}

var errMetaCorrupt = errors.New("cached metadata damaged")

func (d *metaDecoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.data)
	if n <= 0 {
		d.err = errMetaCorrupt
		return 0
	}
	d.data = d.data[n:]
	return v
}

func (d *metaDecoder) string() string {
	n := d.uvarint()
	if d.err != nil || n > uint64(len(d.data)) {
		d.err = errMetaCorrupt
		return ""
	}
	s := string(d.data[:n])
	d.data = d.data[n:]
	return s
}

func (d *metaDecoder) value() any {
	if d.err != nil || len(d.data) == 0 || d.depth > 100 {
		d.err = errMetaCorrupt
		return nil
	}
	d.depth++
	defer func() { d.depth-- }()
	tag := d.data[0]
	d.data = d.data[1:]
	switch tag {
	case vNil:
		return nil
	case vFalse:
		return false
	case vTrue:
		return true
	case vInt:
		v, n := binary.Varint(d.data)
		if n <= 0 {
			d.err = errMetaCorrupt
			return nil
		}
		d.data = d.data[n:]
		return int(v)
	case vFloat:
		if len(d.data) < 8 {
			d.err = errMetaCorrupt
			return nil
		}
		f := math.Float64frombits(binary.LittleEndian.Uint64(d.data))
		d.data = d.data[8:]
		return f
	case vString:
		return d.string()
	case vList:
		n := d.uvarint()
		if n > uint64(len(d.data)) {
			d.err = errMetaCorrupt
			return nil
		}
		xs := make([]any, 0, n)
		for range n {
			xs = append(xs, d.value())
		}
		return xs
	case vMap:
		n := d.uvarint()
		if n > uint64(len(d.data)) {
			d.err = errMetaCorrupt
			return nil
		}
		m := make(map[string]any, n)
		for range n {
			k := d.string()
			m[k] = d.value()
		}
		return m
	}
	d.err = errMetaCorrupt
	return nil
}

// decodeMetadata reads what EncodeMetadata wrote.
func decodeMetadata(data []byte) (*metadata, error) {
	if len(data) == 0 {
		return nil, errMetaCorrupt
	}
	if data[0] == 0 && len(data) == 1 {
		return nil, nil
	}
	if data[0] != 1 {
		return nil, errMetaCorrupt
	}
	d := &metaDecoder{data: data[1:]}
	m := &metadata{Title: d.string(), Scope: d.string()}
	custom := d.value()
	if d.err != nil || len(d.data) != 0 {
		return nil, errMetaCorrupt
	}
	if custom != nil {
		c, ok := custom.(map[string]any)
		if !ok {
			return nil, errMetaCorrupt
		}
		m.Custom = c
	}
	return m, nil
}
