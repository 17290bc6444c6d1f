package source

import (
	"os"
	"path/filepath"
	"testing"
)

func benchParse(b *testing.B, name string, parse func(string, []byte, Limits) (*File, error)) {
	data, err := os.ReadFile(filepath.Join("testdata", "bench", name))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parse(name, data, Limits{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseJSON parses a 1.9 KB DeepSpeed config.
func BenchmarkParseJSON(b *testing.B) { benchParse(b, "ds_config.json", ParseJSON) }

// BenchmarkParseYAML parses a 2.1 KB Kubernetes LeaderWorkerSet manifest.
func BenchmarkParseYAML(b *testing.B) { benchParse(b, "lws.yaml", ParseYAML) }

// BenchmarkEdits sets one existing and one new key in the DeepSpeed config
// (including the re-parse that checks the result).
func BenchmarkEdits(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("testdata", "bench", "ds_config.json"))
	if err != nil {
		b.Fatal(err)
	}
	f, err := ParseJSON("ds_config.json", data, Limits{})
	if err != nil {
		b.Fatal(err)
	}
	ops := []Op{
		{Kind: Set, Path: []any{"train_batch_size"}, Value: 64},
		{Kind: Set, Path: []any{"bf16", "enabled"}, Value: true},
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.Edits(0, ops); err != nil {
			b.Fatal(err)
		}
	}
}
