package normalize

import (
	"os"
	"path/filepath"
	"testing"

	"gopkg.in/yaml.v3"
)

// benchDoc loads testdata/bench/<schema>.yaml (or .json), a corpus-like
// document of that kind.
func benchDoc(tb testing.TB, schema string) any {
	tb.Helper()
	for _, ext := range []string{".yaml", ".json"} {
		data, err := os.ReadFile(filepath.Join("testdata", "bench", schema+ext))
		if err != nil {
			continue
		}
		var doc any
		if err := yaml.Unmarshal(data, &doc); err != nil {
			tb.Fatal(err)
		}
		return doc
	}
	tb.Fatalf("no benchmark document for %s", schema)
	return nil
}

// benchSchemas are the schemas with a benchmark document.
func benchSchemas() []string {
	return []string{"deepspeed", "accelerate", "vllm", "kubernetes", "mig-parted", "device-plugin",
		"workload", "gpulint-config"}
}

// BenchmarkValidate measures Validate on a warm Validator: the per-file
// cost once the schema is compiled.
func BenchmarkValidate(b *testing.B) {
	v := NewValidator()
	for _, s := range benchSchemas() {
		doc := benchDoc(b, s)
		b.Run(s, func(b *testing.B) {
			vs, err := v.Validate(s, doc)
			if err != nil || len(vs) != 0 {
				b.Fatalf("benchmark document is not clean: %v %v", err, vs)
			}
			b.ReportAllocs()
			cpu := cpuTime()
			for b.Loop() {
				if _, err := v.Validate(s, doc); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, cpu)
		})
	}
}

// BenchmarkCompile measures the one-off cost a run pays for a schema: a
// fresh Validator building its checks (plans_gen.go).
func BenchmarkCompile(b *testing.B) {
	for _, s := range schemaNames() {
		b.Run(s, func(b *testing.B) {
			b.ReportAllocs()
			cpu := cpuTime()
			for b.Loop() {
				if err := NewValidator().Compile(s); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, cpu)
		})
	}
}

// BenchmarkFirstValidate measures what `gpulint lint one-file` pays: a
// fresh Validator, building the schema's checks and the first Validate.
func BenchmarkFirstValidate(b *testing.B) {
	for _, s := range benchSchemas() {
		doc := benchDoc(b, s)
		b.Run(s, func(b *testing.B) {
			b.ReportAllocs()
			cpu := cpuTime()
			for b.Loop() {
				if _, err := NewValidator().Validate(s, doc); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, cpu)
		})
	}
}
