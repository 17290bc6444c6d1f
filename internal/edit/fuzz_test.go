package edit

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/gpulint/gpulint/internal/finding"
)

// editsFromSpec turns fuzz bytes into edits: 4 bytes per edit (start, end,
// text length, flags), the text taken from the tail of spec. Offsets run
// from -1 to len(data)+1 so out-of-range edits occur too.
func editsFromSpec(data, spec []byte) []finding.Edit {
	var edits []finding.Edit
	text := spec
	for len(spec) >= 4 && len(edits) < 16 {
		e := finding.Edit{
			File:  "f",
			Start: int(spec[0])%(len(data)+3) - 1,
			End:   int(spec[1])%(len(data)+3) - 1,
		}
		if spec[3]&1 == 1 {
			e.End = e.Start // insertions are common in real fixes
		}
		if spec[3]&0x80 != 0 {
			e.File = "g"
		}
		n := min(int(spec[2]%8), len(text))
		e.NewText = string(text[len(text)-n:])
		edits = append(edits, e)
		spec = spec[4:]
	}
	return edits
}

// applyBackwards is a second, simpler applier: it applies edits from the
// last to the first, so earlier offsets stay valid.
func applyBackwards(data []byte, edits []finding.Edit) []byte {
	out := bytes.Clone(data)
	order := sortedOrder(edits)
	for _, i := range slices.Backward(order) {
		e := edits[i]
		out = slices.Concat(out[:e.Start], []byte(e.NewText), out[e.End:])
	}
	return out
}

func FuzzApply(f *testing.F) {
	f.Add([]byte("a: 1\r\nb: é\n"), []byte{3, 4, 1, 0, 0, 0, 3, 1, 9, 11, 2, 0})
	f.Add([]byte("key: value\n"), []byte{5, 10, 5, 0, 5, 5, 2, 1, 6, 6, 1, 0x81})
	f.Add([]byte(""), []byte{1, 1, 3, 1})
	f.Fuzz(func(t *testing.T, data, spec []byte) {
		edits := editsFromSpec(data, spec)
		verr := Validate(data, "f", edits)
		out, aerr := Apply(data, edits)
		if verr != nil {
			var ie *InvalidEditError
			if !errors.As(verr, &ie) || ie.Problem < ErrWrongFile || ie.Problem > ErrOverlap {
				t.Fatalf("Validate error %v is not an *InvalidEditError with a known problem", verr)
			}
			if aerr == nil && ie.Problem != ErrWrongFile {
				t.Fatalf("Validate rejects (%v) but Apply accepts", verr)
			}
			return
		}
		if aerr != nil {
			t.Fatalf("Validate accepts but Apply fails: %v", aerr)
		}
		want := len(data)
		for _, e := range edits {
			want += len(e.NewText) - (e.End - e.Start)
		}
		if len(out) != want {
			t.Fatalf("len(out) = %d, want %d", len(out), want)
		}
		if ref := applyBackwards(data, edits); !bytes.Equal(out, ref) {
			t.Fatalf("Apply = %q, backwards applier gives %q", out, ref)
		}
	})
}

func FuzzUnified(f *testing.F) {
	for _, tc := range diffCases() {
		f.Add([]byte(tc.old), []byte(tc.new), uint8(tc.context), false)
	}
	f.Add([]byte("a\nb\nc\n"), []byte("c\nb\na\n"), uint8(1), true)
	f.Fuzz(func(t *testing.T, oldText, newText []byte, context uint8, tinyBound bool) {
		maxD := maxDiffD
		if tinyBound {
			maxD = 1 // exercise the whole-middle fallback
		}
		d := unified("a/a.txt", "b/a.txt", oldText, newText, int(context%5), maxD)
		if (d == "") != bytes.Equal(oldText, newText) {
			t.Fatalf("empty diff = %v, texts equal = %v", d == "", bytes.Equal(oldText, newText))
		}
		got, err := applyUnified(oldText, d)
		if err != nil {
			t.Fatalf("diff does not apply: %v\n%s", err, d)
		}
		if !bytes.Equal(got, newText) {
			t.Fatalf("patched text %q, want %q\ndiff:\n%s", got, newText, d)
		}
	})
}
