package check_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io/fs"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpulint/gpulint/internal/check"
	"github.com/gpulint/gpulint/internal/rules"
	"github.com/gpulint/gpulint/policies"
)

func builtinModules(t testing.TB) ([]rules.Module, *rules.Catalog) {
	t.Helper()
	mods, cat, err := rules.LoadFS(policies.FS)
	if err != nil {
		t.Fatal(err)
	}
	return mods, cat
}

// TestBundleCurrent holds the committed bundle equal to one built from the
// policy sources now; `go generate ./...` rewrites it.
func TestBundleCurrent(t *testing.T) {
	mods, cat := builtinModules(t)
	got, err := check.BuildBundle(mods)
	if err != nil {
		t.Fatal(err)
	}
	again, err := check.BuildBundle(mods)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, again) {
		t.Fatal("BuildBundle is not deterministic")
	}
	want, err := fs.ReadFile(policies.FS, policies.BundleFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("policies/%s is out of date with the policy sources (%d bytes built, %d committed): run go generate ./...",
			policies.BundleFile, len(got), len(want))
	}
	e, err := check.New(mods, cat, check.WithBundle(want))
	if err != nil {
		t.Fatal(err)
	}
	if !e.Precompiled() {
		t.Fatal("the committed bundle was not taken")
	}
	// Every module's metadata comes from the bundle, and the catalog built
	// from it is the one built from the YAML.
	hits := 0
	cache := check.BundleMetadata(want)
	counting := func(file string, sum [sha256.Size]byte) ([]byte, bool) {
		b, ok := cache(file, sum)
		if ok {
			hits++
		}
		return b, ok
	}
	cached, err := rules.ParseModulesCached(policies.FS, false, counting)
	if err != nil {
		t.Fatal(err)
	}
	if hits != len(mods) {
		t.Fatalf("bundle metadata served %d of %d modules", hits, len(mods))
	}
	cc, err := rules.Load(cached)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cc.All(), cat.All()) {
		t.Fatal("catalog from the bundle's metadata differs from the YAML's")
	}
}

// TestBundleStale: a bundle built from other sources, or damaged, is
// ignored and the engine compiles from source.
func TestBundleStale(t *testing.T) {
	mods, cat := builtinModules(t)
	good, err := check.BuildBundle(mods)
	if err != nil {
		t.Fatal(err)
	}
	edited := append([]rules.Module(nil), mods...)
	edited[len(edited)-1].Source += "\n# edited\n"
	truncated := good[:len(good)-10]
	flipped := append([]byte(nil), good...)
	flipped[len(flipped)/2] ^= 0xff
	cases := []struct {
		name   string
		mods   []rules.Module
		bundle []byte
		want   bool
	}{
		{"matching", mods, good, true},
		{"source edited", edited, good, false},
		{"truncated", mods, truncated, false},
		{"not a bundle", mods, []byte("hello"), false},
		{"empty", mods, nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e, err := check.New(tc.mods, cat, check.WithBundle(tc.bundle))
			if err != nil {
				t.Fatal(err)
			}
			if e.Precompiled() != tc.want {
				t.Fatalf("Precompiled() = %v, want %v", e.Precompiled(), tc.want)
			}
		})
	}
	// A byte flipped inside a module body passes the index checks; the
	// damage must surface as an error from evaluation, never a panic or a
	// silently different rule set: each evaluation either fails or gives
	// what the policies compiled from source give.
	e, err := check.New(mods, cat, check.WithBundle(flipped))
	if err != nil {
		t.Fatal(err)
	}
	ref, err := check.New(mods, cat)
	if err != nil {
		t.Fatal(err)
	}
	if ref.Precompiled() {
		t.Fatal("the reference engine took a bundle; it must compile from source")
	}
	inputs := map[string]map[string]any{ // DS001 fires on this one
		"deepspeed": {
			"kind":     "deepspeed",
			"workload": map[string]any{"batch": map[string]any{"global": 48, "micro": 8, "accumulation": 2}},
			"paths": map[string]any{"batch.global": []any{"train_batch_size"}, "batch.micro": []any{"train_micro_batch_size_per_gpu"},
				"batch.accumulation": []any{"gradient_accumulation_steps"}},
			"target": map[string]any{"gpus": 4},
		},
	}
	fired := 0
	for _, kind := range []string{"deepspeed", "kubernetes", "vllm", "accelerate", "mig", "finetune"} {
		input, ok := inputs[kind]
		if !ok {
			input = map[string]any{"kind": kind}
		}
		want, err := ref.Eval(context.Background(), kind, input)
		if err != nil {
			t.Fatalf("%s: the policies from source: %v", kind, err)
		}
		fired += len(want)
		got, err := e.Eval(context.Background(), kind, input)
		if err != nil {
			continue // the damage surfaced
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: the damaged bundle evaluated without an error but differently (-source +bundle):\n%s", kind, diff)
		}
	}
	if fired == 0 {
		t.Fatal("no rule fired on the inputs: the comparison above proves nothing")
	}
}
