package source

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestYAML11Resolution checks plain-scalar typing against what PyYAML's
// SafeLoader returns for the same text (YAML 1.1).
func TestYAML11Resolution(t *testing.T) {
	type res struct {
		Tag   string
		Value any
	}
	tests := []struct {
		in   string
		want res
	}{
		{"yes", res{"bool", true}}, {"Yes", res{"bool", true}}, {"YES", res{"bool", true}},
		{"no", res{"bool", false}}, {"NO", res{"bool", false}}, {"No", res{"bool", false}},
		{"on", res{"bool", true}}, {"OFF", res{"bool", false}}, {"True", res{"bool", true}},
		{"FALSE", res{"bool", false}},
		{"nO", res{"str", "nO"}}, {"y", res{"str", "y"}}, {"n", res{"str", "n"}}, {"tRUE", res{"str", "tRUE"}},
		{"~", res{"null", nil}}, {"null", res{"null", nil}}, {"Null", res{"null", nil}}, {"NULL", res{"null", nil}},
		{"nULL", res{"str", "nULL"}},
		{"0", res{"int", int64(0)}}, {"-17", res{"int", int64(-17)}}, {"+5", res{"int", int64(5)}},
		{"1_000", res{"int", int64(1000)}}, {"0x1F", res{"int", int64(31)}}, {"0b101", res{"int", int64(5)}},
		{"017", res{"int", int64(15)}}, {"0o17", res{"str", "0o17"}}, {"09", res{"str", "09"}},
		{"1:30", res{"int", int64(90)}}, {"-1:0:0", res{"int", int64(-3600)}},
		{"99999999999999999999", res{"int", 1e20}},
		{"2e-5", res{"str", "2e-5"}}, {"5e8", res{"str", "5e8"}}, {"1e+9", res{"str", "1e+9"}},
		{"2.0e-5", res{"float", 2e-5}}, {"1.0e-8", res{"float", 1e-8}}, {"1.5", res{"float", 1.5}},
		{"1.", res{"float", 1.0}}, {".5", res{"float", 0.5}}, {"-.5", res{"str", "-.5"}},
		{"1e5.", res{"str", "1e5."}}, {"1.2.3", res{"str", "1.2.3"}}, {"1_0.5", res{"float", 10.5}},
		{"1.0e5", res{"str", "1.0e5"}}, {"1:30.5", res{"float", 90.5}},
		{"2024-01-01", res{"str", "2024-01-01"}}, {"<<", res{"str", "<<"}}, {"=", res{"str", "="}},
		{"auto", res{"str", "auto"}}, {"bf16", res{"str", "bf16"}},
	}
	for _, tc := range tests {
		tag, v := resolvePlain(tc.in)
		if diff := cmp.Diff(tc.want, res{tag, v}); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tc.in, diff)
		}
	}
}

func TestYAMLScalarStyles(t *testing.T) {
	data := "a: 'yes'\nb: \"1\"\nc: |\n  no\nd: !!str 5\ne: !!int '7'\nf: !!float 1e3\ng: !!bool On\nh: !!null x\ni: !custom 3\nj: NO\n"
	f, err := ParseYAML("s.yaml", []byte(data), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	type res struct {
		Tag   string
		Value any
		Style ScalarStyle
	}
	want := map[string]res{
		"a": {"str", "yes", SingleQuoted}, "b": {"str", "1", DoubleQuoted}, "c": {"str", "no\n", Literal},
		"d": {"str", "5", Plain}, "e": {"int", int64(7), SingleQuoted}, "f": {"float", 1000.0, Plain},
		"g": {"bool", true, Plain}, "h": {"null", nil, Plain}, "i": {"str", "3", Plain}, "j": {"bool", false, Plain},
	}
	got := map[string]res{}
	for _, e := range f.Docs[0].Root.Entries {
		got[e.Key.Text] = res{e.Value.Tag, e.Value.Value, e.Value.Style}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestPlainDecimal holds resolvePlain's fast path for decimal integers to
// the pattern-based resolution it skips.
func TestPlainDecimal(t *testing.T) {
	cases := []string{"", "0", "00", "01", "07", "08", "1", "9", "10", "42", "123456789012345678",
		"1234567890123456789", "9223372036854775807", "9223372036854775808", "99999999999999999999",
		"-1", "+1", "1_000", "1.0", "1e5", "1:30", "0x10", "0b1", "1a", "١٢", " 1", "1 "}
	for i := range 2000 { // every length up to 19 digits, leading zeros included
		digits := strconv.FormatUint(uint64(i)*2654435761, 10) + "1234567890123456789"
		cases = append(cases, digits[:1+i%19])
		cases = append(cases, fmt.Sprintf("%0*d", 1+i%19, i))
	}
	for _, s := range cases {
		wantTag, wantVal := resolvePlainRE(s)
		gotTag, gotVal := resolvePlain(s)
		if gotTag != wantTag || gotVal != wantVal {
			t.Errorf("resolvePlain(%q) = %s %#v, patterns give %s %#v", s, gotTag, gotVal, wantTag, wantVal)
		}
		if v, ok := plainDecimal(s); ok && (wantTag != "int" || wantVal != v) {
			t.Errorf("plainDecimal(%q) = %d, patterns give %s %#v", s, v, wantTag, wantVal)
		}
	}
}
