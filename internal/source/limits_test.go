package source

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// billionLaughs is the classic alias bomb: ten levels, each a list of ten
// aliases to the level below, 10^9 strings once expanded.
func billionLaughs() string {
	var b strings.Builder
	b.WriteString("a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n")
	prev := "a"
	for _, name := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		b.WriteString(name + ": &" + name + " [")
		for j := 0; j < 9; j++ {
			if j > 0 {
				b.WriteString(",")
			}
			b.WriteString("*" + prev)
		}
		b.WriteString("]\n")
		prev = name
	}
	return b.String()
}

func TestLimits(t *testing.T) {
	deepJSON := strings.Repeat("[", 200000) + strings.Repeat("]", 200000)
	deepObj := strings.Repeat(`{"a":`, 200000) + "1" + strings.Repeat("}", 200000)
	deepFlow := strings.Repeat("[", 200000)
	deepBlock := strings.Repeat("- ", 200000) + "x\n"
	tests := []struct {
		name  string
		parse func(string, []byte, Limits) (*File, error)
		path  string
		data  string
		lim   Limits
		want  string // substring of the error; "" for success
	}{
		{"alias bomb", ParseYAML, "bomb.yaml", billionLaughs(), Limits{}, "bomb.yaml:7:8: alias *f expands the document to more than 1000000 nodes"},
		{"alias bomb small limit", ParseYAML, "bomb.yaml", billionLaughs(), Limits{MaxNodes: 50}, "expands the document to more than 50 nodes"},
		{"deep JSON array", ParseJSON, "d.json", deepJSON, Limits{}, "d.json:1:513: nesting depth 513 exceeds the limit of 512"},
		{"deep JSON object", Parse, "d.json", deepObj, Limits{}, "d.json:1:2561: nesting depth 513 exceeds the limit of 512"},
		{"deep JSON sniffed", Parse, "d", deepJSON, Limits{}, "nesting depth 513 exceeds the limit of 512"},
		{"deep YAML flow", ParseYAML, "d.yaml", deepFlow, Limits{}, "d.yaml:1:1: nesting depth exceeds the limit of 512"},
		{"deep YAML block", Parse, "d.yaml", deepBlock, Limits{}, "nesting depth exceeds the limit of 512"},
		{"YAML deeper than MaxDepth", ParseYAML, "d.yaml", strings.Repeat("[", 600) + strings.Repeat("]", 600), Limits{}, "d.yaml:1:513: nesting depth 513 exceeds the limit of 512"},
		{"YAML at MaxDepth", ParseYAML, "d.yaml", strings.Repeat("[", 512) + strings.Repeat("]", 512), Limits{}, ""},
		{"JSON at MaxDepth", ParseJSON, "d.json", strings.Repeat("[", 512) + strings.Repeat("]", 512), Limits{}, ""},
		{"alias deeper than MaxDepth", ParseYAML, "d.yaml", "a: &a [[[1]]]\nb: [[*a]]\n", Limits{MaxDepth: 5}, "d.yaml:2:6: alias *a nests the document deeper than the limit of 5"},
		{"JSON node count", ParseJSON, "n.json", "[" + strings.Repeat("0,", 100) + "0]", Limits{MaxNodes: 100}, "n.json:1:200: document has more than 100 nodes"},
		{"over size", Parse, "big.yaml", strings.Repeat("a", 101), Limits{MaxBytes: 100}, "big.yaml:1:1: file is 101 bytes, over the 100-byte limit"},
		{"over size JSON", ParseJSON, "big.json", strings.Repeat(" ", 101), Limits{MaxBytes: 100}, "big.json:1:1: file is 101 bytes"},
		{"over size YAML", ParseYAML, "big.yaml", strings.Repeat(" ", 101), Limits{MaxBytes: 100}, "big.yaml:1:1: file is 101 bytes"},
		{"binary garbage", Parse, "x.bin", "\x7fELF\x02\x01\x01\x00\x00\xff\xfe", Limits{}, "x.bin:1:1: binary file"},
		{"invalid UTF-8", Parse, "x.yaml", "a: \xc3\x28\n", Limits{}, "x.yaml:1:1: binary file (invalid UTF-8 byte 0xc3 at line 1, column 4)"},
		{"invalid UTF-8 ParseYAML", ParseYAML, "x.yaml", "a: \xc3\x28\n", Limits{}, "x.yaml:1:4: invalid UTF-8 byte 0xc3"},
		{"empty", Parse, "e.yaml", "", Limits{}, ""},
		{"whitespace only", Parse, "e.yaml", "  \n\t \r\n", Limits{}, ""},
		{"comment only", Parse, "e.yaml", "# a\n  # b\n", Limits{}, ""},
		{"empty JSON", Parse, "e.json", "  \n", Limits{}, "e.json:2:1: unexpected end of input, expected a value"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			f, err := tc.parse(tc.path, []byte(tc.data), tc.lim)
			if took := time.Since(start); took > 2*time.Second {
				t.Errorf("took %v", took)
			}
			if f == nil {
				t.Fatal("nil File")
			}
			if tc.want == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				checkTree(t, f)
				return
			}
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("error = %v, want a *Error containing %q", err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %q, want it to contain %q", err, tc.want)
			}
		})
	}
}
