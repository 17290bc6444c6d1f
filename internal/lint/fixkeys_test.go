package lint_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gpulint/gpulint/internal/cmdline"
	"github.com/gpulint/gpulint/internal/corpus"
	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/keyset"
	"github.com/gpulint/gpulint/internal/lint"
	"github.com/gpulint/gpulint/internal/normalize"
	"github.com/gpulint/gpulint/internal/source"
)

// TestFixWritesKnownKeys runs every fix, as plain `fix` and as
// `fix --tune`, on the evaluation set (testdata/realworld) and the
// development corpus (testdata/corpus), linted with no flags and for a
// stated target. Each fixed file parses, every key the fix adds is one its
// framework accepts in that place (internal/keyset; vLLM config keys are
// `vllm serve` options, internal/cmdline), and a second fix is a no-op
// (STYLE.md §5, "a fix never breaks the run"). Plain `fix` applies no
// tuner setting.
func TestFixWritesKnownKeys(t *testing.T) {
	if testing.Short() {
		t.Skip("set-wide fix in -short mode")
	}
	dir := corpus.Dir(t)
	files, err := lint.Collect([]string{dir, filepath.Join(filepath.Dir(dir), "realworld")})
	if err != nil {
		t.Fatal(err)
	}
	sets := map[string]*keyset.Set{}
	for _, name := range keyset.Names() {
		if sets[name], err = keyset.Load(name); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	for _, opts := range []lint.Options{{}, {GPU: "A100-40GB", GPUs: 4, Model: "meta-llama/Llama-3.1-8B"}} {
		l := newLinter(t, opts)
		res, err := l.Run(ctx, files)
		if err != nil {
			t.Fatal(err)
		}
		for _, tune := range []bool{false, true} {
			changed := map[source.Kind]int{}
			for _, fr := range res.Files {
				out, err := l.Fix(ctx, fr, tune)
				if err != nil {
					t.Errorf("%s: %v", fr.Path, err)
					continue
				}
				if !out.Changed() {
					continue
				}
				changed[fr.Kind]++
				if !tune {
					// Plain `fix` never applies tuner settings (STYLE.md §6).
					for _, f := range out.Applied {
						if !slices.ContainsFunc(f.Fixes, func(fx finding.Fix) bool { return !fx.Tune }) {
							t.Errorf("%s: plain fix applied the tuner's %s", fr.Path, f.Rule)
						}
					}
				}
				name := fr.Path + " (" + opts.GPU + tuneNote(tune) + ")"
				old, oerr := source.Parse(fr.Path, fr.Data, source.DefaultLimits())
				fixed, err := source.Parse(fr.Path, out.New, source.DefaultLimits())
				if err != nil {
					if oerr == nil {
						t.Errorf("%s: the fixed file does not parse: %v", name, err)
					}
					continue
				}
				for _, p := range addedKeys(old, fixed) {
					if msg := unknownKey(sets, fr.Kind, fixed, p); msg != "" {
						t.Errorf("%s: the fix writes %s, %s", name, strings.Join(p, "."), msg)
					}
				}
				again, err := l.LintBytes(ctx, fr.Path, out.New)
				if err != nil {
					t.Fatal(err)
				}
				out2, err := l.Fix(ctx, again, tune)
				if err != nil {
					t.Fatal(err)
				}
				if out2.Changed() {
					t.Errorf("%s: a second fix changed the file again", name)
				}
			}
			t.Logf("target %q%s: files changed by kind: %v", opts.GPU, tuneNote(tune), changed)
		}
	}
}

func tuneNote(tune bool) string {
	if tune {
		return " --tune"
	}
	return ""
}

// addedKeys lists the map-key paths of fixed that old does not have (list
// indices are left out of a path).
func addedKeys(old, fixed *source.File) [][]string {
	had := map[string]bool{}
	if old != nil {
		for _, d := range old.Docs {
			walkKeys(d.Root, nil, func(p []string) { had[strings.Join(p, "\x00")] = true })
		}
	}
	var out [][]string
	for _, d := range fixed.Docs {
		walkKeys(d.Root, nil, func(p []string) {
			if !had[strings.Join(p, "\x00")] {
				out = append(out, slices.Clone(p))
			}
		})
	}
	return out
}

func walkKeys(n *source.Node, at []string, visit func([]string)) {
	if n == nil {
		return
	}
	switch n.Kind {
	case source.MapNode:
		for _, e := range n.Entries {
			p := append(at, e.Key.Text)
			visit(p)
			walkKeys(e.Value, p, visit)
		}
	case source.SeqNode:
		for _, it := range n.Items {
			walkKeys(it, at, visit)
		}
	}
}

// unknownKey says why a framework would not accept the key at p, or "".
func unknownKey(sets map[string]*keyset.Set, kind source.Kind, f *source.File, p []string) string {
	set := ""
	switch kind {
	case source.KindDeepSpeed:
		set = "deepspeed"
	case source.KindAccelerate:
		set = "accelerate"
	case source.KindVLLM:
		if len(p) == 1 {
			if _, ok := cmdline.LookupOption(p[0]); !ok {
				return "which is not a vllm serve option"
			}
		}
		return ""
	case source.KindFinetune:
		if len(f.Docs) == 1 {
			doc, err := f.Docs[0].Root.ToValue(0)
			if err == nil {
				set = normalize.Flavour(doc)
			}
		}
	}
	s := sets[set]
	if s == nil {
		return ""
	}
	if ok, _ := s.Accepts(p); !ok {
		return "which " + set + " does not accept there (internal/keyset/data/" + set + ".txt)"
	}
	return ""
}
