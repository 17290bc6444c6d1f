package normalize

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/gpulint/gpulint/internal/normalize/internal/planbuild"
)

func TestEverySchemaCompiles(t *testing.T) {
	v := newTestValidator(t)
	for _, s := range v.Schemas() {
		if err := v.Compile(s); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
}

func TestValidateErrors(t *testing.T) {
	_, err := NewValidator().Validate("helm", map[string]any{})
	if err == nil || !strings.Contains(err.Error(), `unknown schema "helm"`) {
		t.Errorf("Validate error = %v, want one naming the unknown schema", err)
	}
	if err := NewValidator().Compile("helm"); err == nil {
		t.Error("Compile accepts an unknown schema")
	}
}

// TestBuilderErrors feeds the builder broken schemas: each must fail with
// a clear error, never yield checks that pass what CUE rejects.
func TestBuilderErrors(t *testing.T) {
	tests := []struct {
		name    string
		fsys    fstest.MapFS
		schema  string
		wantErr string
	}{
		{name: "unknown schema", fsys: fstest.MapFS{}, schema: "helm", wantErr: `unknown schema "helm"`},
		{name: "missing file", fsys: fstest.MapFS{}, schema: "deepspeed", wantErr: "read schema deepspeed.cue"},
		{name: "schema does not compile", schema: "deepspeed",
			fsys:    fstest.MapFS{"deepspeed.cue": {Data: []byte("package schemas\n#DeepSpeed: {a: }")}},
			wantErr: "compile schema deepspeed.cue"},
		{name: "definition missing", schema: "deepspeed",
			fsys:    fstest.MapFS{"deepspeed.cue": {Data: []byte("package schemas\n#Other: {}")}},
			wantErr: "definition #DeepSpeed not found"},
		{name: "unknown attribute", schema: "deepspeed",
			fsys:    fstest.MapFS{"deepspeed.cue": {Data: []byte("package schemas\n#DeepSpeed: {a?: int @gpulint(colour=red)}")}},
			wantErr: `unknown @gpulint field attribute "colour"`},
		{name: "unknown declaration", schema: "deepspeed",
			fsys:    fstest.MapFS{"deepspeed.cue": {Data: []byte("package schemas\n#DeepSpeed: {@gpulint(check=cue)\na?: int}")}},
			wantErr: `unknown @gpulint declaration "check"`},
		{name: "constraint without a Go check", schema: "deepspeed",
			fsys:    fstest.MapFS{"deepspeed.cue": {Data: []byte("package schemas\nimport \"strings\"\n#DeepSpeed: {a?: strings.HasPrefix(\"x\")}")}},
			wantErr: `has no Go check`},
		{name: "exclusive keys CUE does not exclude", schema: "deepspeed",
			fsys:    fstest.MapFS{"deepspeed.cue": {Data: []byte("package schemas\n#DeepSpeed: {@gpulint(exclusive=\"a b\")\na?: {}\nb?: {}}")}},
			wantErr: `a and b together should give one error`},
		{name: "exclusive names an undeclared key", schema: "deepspeed",
			fsys:    fstest.MapFS{"deepspeed.cue": {Data: []byte("package schemas\n#DeepSpeed: {@gpulint(exclusive=\"a c\")\na?: {}\nb?: {}}")}},
			wantErr: `no field "c"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := planbuild.FromCUE(tc.fsys, tc.schema)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("FromCUE error = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

// TestGoValueTypes feeds the same document as different decoders produce
// it: yaml.v3 ints, json float64s and json.Number, map[any]any.
func TestGoValueTypes(t *testing.T) {
	v := newTestValidator(t)
	want := []string{`zero_optimization.stage [error] stage is 4; allowed 0..3 or "auto"`}
	docs := map[string]any{
		"int":        map[string]any{"zero_optimization": map[string]any{"stage": 4, "reduce_bucket_size": int32(5)}},
		"float64":    map[string]any{"zero_optimization": map[string]any{"stage": 4.0, "reduce_bucket_size": 5e8}},
		"uint64":     map[string]any{"zero_optimization": map[string]any{"stage": uint64(4), "reduce_bucket_size": uint(5)}},
		"jsonNumber": map[string]any{"zero_optimization": map[string]any{"stage": json.Number("4"), "reduce_bucket_size": json.Number("5e8")}},
		"anyKeys":    map[any]any{"zero_optimization": map[any]any{"stage": 4}},
	}
	for name, doc := range docs {
		t.Run(name, func(t *testing.T) {
			got, err := v.Validate("deepspeed", doc)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, renderViolations(got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestConcurrentValidate runs every schema from many goroutines on one
// Validator (run with -race): building each schema's checks on first use
// must be safe.
func TestConcurrentValidate(t *testing.T) {
	v := newTestValidator(t)
	var cases []schemaCase
	for _, group := range [][]schemaCase{deepSpeedCases(), accelerateCases(), vllmCases(), kubernetesCases(), migCases(), projectCases()} {
		cases = append(cases, group...)
	}
	docs := make([]any, len(cases))
	for i, tc := range cases {
		docs[i] = parseYAML(t, tc.doc)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8*len(cases))
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := range cases {
				tc := cases[(i+g*7)%len(cases)]
				doc := docs[(i+g*7)%len(cases)]
				got, err := v.Validate(tc.schema, doc)
				if err != nil {
					errs <- err.Error()
					continue
				}
				if diff := cmp.Diff(tc.want, renderViolations(got)); diff != "" {
					errs <- tc.name + ": " + diff
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestGPUCatalog validates the tuner's GPU catalog with gpu.cue.
func TestGPUCatalog(t *testing.T) {
	path := filepath.Join("..", "..", "tuner", "profiles", "gpus.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	v := newTestValidator(t)
	got, err := v.Validate("gpu-catalog", parseYAML(t, string(data)))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Errorf("%s does not match schemas/gpu.cue:\n%s", path, strings.Join(renderViolations(got), "\n"))
	}
	broken := `
version: 1
gpus:
  - key: H100_SXM
    name: H100-80GB
    vendor: nvidia
    architecture: hoper
    memory: {driver_mib: 81559, usable: 79}
    mig: {geometry: 7x8, profiles: [{name: 1g.10, class: 1g}]}
`
	got, err = v.Validate("gpu-catalog", parseYAML(t, broken))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`gpus[0].architecture [error] architecture is "hoper"; allowed one of "volta", "turing", "ampere", "ada", "hopper", "blackwell", "rubin", "cdna2", "cdna3", "cdna4" (did you mean "hopper"?)`,
		`gpus[0].key [error] key is "H100_SXM"; allowed a kebab-case id such as h100-sxm`,
		`gpus[0].memory.usable [error] unknown key "usable" in memory (did you mean "usable_gib"?)`,
		`gpus[0].mig.profiles[0].name [error] name is "1g.10"; allowed a string matching ^([1-9][0-9]*c\.)?[1-9][0-9]*g\.[1-9][0-9]*gb(\+me|\+me\.all|-me|\+gfx)?$`,
	}
	if diff := cmp.Diff(want, renderViolations(got)); diff != "" {
		t.Errorf("broken catalog (-want +got):\n%s", diff)
	}
}

func TestDidYouMean(t *testing.T) {
	names := []string{"stage", "stage3_prefetch_bucket_size", "reduce_bucket_size", "offload_param", "offload_optimizer", "tensor-parallel-size", "fp16", "bf16"}
	tests := []struct{ in, want string }{
		{"stage3_prefetch_bucket", "stage3_prefetch_bucket_size"},
		{"reduce_bucket_sze", "reduce_bucket_size"},
		{"offload_params", "offload_param"},
		{"Tensor_Parallel_Size", "tensor-parallel-size"},
		{"fp61", "fp16"},
		{"bfloat", ""},
		{"stage", ""}, // itself: nothing to suggest
		{"zero", ""},
	}
	for _, tc := range tests {
		if got := didYouMean(tc.in, names); got != tc.want {
			t.Errorf("didYouMean(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"kitten", "sitting", 3}, {"serving", "serve", 3}, {"fp16", "fp61", 1}, {"ab", "ba", 1},
	}
	for _, tc := range tests {
		if got := editDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestSortViolations(t *testing.T) {
	in := []Violation{
		{Path: []any{"b"}, Message: "x", Severity: "error"},
		{Path: []any{"a", 10}, Message: "x", Severity: "error"},
		{Path: []any{"a", 2}, Message: "y", Severity: "error"},
		{Path: []any{"a", 2}, Message: "x", Severity: "error"},
		{Path: []any{"a"}, Message: "z", Severity: "error"},
		{Path: []any{"a", 2}, Message: "x", Severity: "error"},
	}
	want := []string{`a [error] z`, `a[2] [error] x`, `a[2] [error] y`, `a[10] [error] x`, `b [error] x`}
	if diff := cmp.Diff(want, renderViolations(sortViolations(in))); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestEditDistanceRows holds the rolling-row distance equal to the full
// table's, on names longer than the stack buffer too.
func TestEditDistanceRows(t *testing.T) {
	full := func(a, b string) int {
		rows := make([][]int, len(a)+1)
		for i := range rows {
			rows[i] = make([]int, len(b)+1)
			rows[i][0] = i
		}
		for j := range rows[0] {
			rows[0][j] = j
		}
		for i := 1; i <= len(a); i++ {
			for j := 1; j <= len(b); j++ {
				cost := 1
				if a[i-1] == b[j-1] {
					cost = 0
				}
				d := min(rows[i-1][j]+1, rows[i][j-1]+1, rows[i-1][j-1]+cost)
				if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
					d = min(d, rows[i-2][j-2]+1)
				}
				rows[i][j] = d
			}
		}
		return rows[len(a)][len(b)]
	}
	words := []string{"", "a", "ab", "ba", "zero_optimization", "zero_optimisation", "train_micro_batch_size_per_gpu",
		"train_batch_size", "gradient_accumulation_steps", strings.Repeat("ab", 70), strings.Repeat("ba", 71) + "c"}
	for _, a := range words {
		for _, b := range words {
			if got, want := editDistance(a, b), full(a, b); got != want {
				t.Errorf("editDistance(%q, %q) = %d, want %d", a, b, got, want)
			}
		}
	}
}
