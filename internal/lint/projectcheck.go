package lint

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gpulint/gpulint/internal/config"
	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/normalize"
	"github.com/gpulint/gpulint/internal/source"
)

// CheckProject holds a project file to the catalogs: a GPU or model in
// targets that gpulint does not know, or a rule under rules or ignore that
// no loaded policy defines, would otherwise turn checks off without a word.
// Each problem is an error at its place in the file, with a did-you-mean.
func (d *Deps) CheckProject(p *config.Project) error {
	if p == nil {
		return nil
	}
	var errs []string
	bad := func(pos finding.Pos, msg string) {
		errs = append(errs, (&source.Error{File: p.Path, Pos: pos, Msg: msg}).Error())
	}
	for _, t := range p.Targets {
		if t.GPU != "" {
			if err := d.Targets.CheckFlags(t.GPU, ""); err != nil {
				bad(t.GPUAt, "targets: "+err.Error())
			}
		}
		if t.Model != "" {
			model := t.Model
			if !strings.HasPrefix(model, "/") && !strings.Contains(model, "://") {
				if _, ok := d.Targets.cat.Model(model); !ok {
					// A local model directory is relative to the project file.
					model = p.Root + "/" + model
				}
			}
			if err := d.Targets.CheckFlags("", model); err != nil {
				bad(t.ModelAt, "targets: "+d.Targets.modelError(t.Model).Error())
			}
		}
	}
	for _, k := range sortedRuleKeys(p.Rules) {
		if _, ok := d.Catalog.Lookup(k); !ok {
			bad(p.Rules[k].At, d.unknownRule("rules", k))
		}
	}
	for _, ig := range p.Ignore {
		if _, ok := d.Catalog.Lookup(ig.Rule); !ok {
			bad(ig.RuleAt, d.unknownRule("ignore", ig.Rule))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("invalid project file:\n  %s", strings.Join(errs, "\n  "))
}

// SuggestRule returns the rule id or slug closest to name, or "". Ids
// are compared upper-cased and slugs lower-cased, as Lookup ignores case.
func (d *Deps) SuggestRule(name string) string {
	if s := normalize.DidYouMean(strings.ToUpper(name), d.ruleNames()); s != "" {
		return s
	}
	return normalize.DidYouMean(strings.ToLower(name), d.ruleNames())
}

func (d *Deps) ruleNames() []string {
	var names []string
	for _, r := range d.Catalog.All() {
		names = append(names, r.ID, r.Slug)
	}
	return names
}

func (d *Deps) unknownRule(section, name string) string {
	msg := fmt.Sprintf("%s: unknown rule %q", section, name)
	if s := d.SuggestRule(name); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	return msg + "; `gpulint rules` lists them"
}

func sortedRuleKeys(m map[string]config.RuleSetting) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		pa, pb := m[a].At, m[b].At
		if pa.Line != pb.Line {
			return pa.Line - pb.Line
		}
		return strings.Compare(a, b)
	})
	return keys
}

// unusedIgnores reports the project files' ignore entries that cover a
// file of this run and silenced nothing in any of them. An entry whose
// glob matched no file of the run is not judged: the run did not look;
// nor is one with a wildcard unless the run walked the whole project.
func (l *Linter) unusedIgnores(results []FileResult) []finding.Finding {
	type key struct {
		p *config.Project
		i int
	}
	used, covered := map[key]bool{}, map[key]bool{}
	var order []key
	for _, fr := range results {
		p := l.project(fr.Path)
		if p == nil || len(p.Ignore) == 0 {
			continue
		}
		for _, i := range fr.ignored {
			used[key{p, i}] = true
		}
		whole := l.walkedWhole(p)
		for i, ig := range p.Ignore {
			k := key{p, i}
			if !whole && strings.ContainsAny(ig.Path, "*?[") {
				continue
			}
			if !covered[k] && p.IgnoreCovers(i, fr.Path) {
				covered[k] = true
				order = append(order, k)
			}
		}
	}
	r, _ := l.deps.Catalog.Lookup("suppression-unused")
	var out []finding.Finding
	for _, k := range order {
		if used[k] {
			continue
		}
		ig := k.p.Ignore[k.i]
		end := ig.At
		end.Col++
		end.Offset++
		out = append(out, l.stamp(r, finding.Finding{
			Message: fmt.Sprintf("ignore entry for %s on %s silences nothing in the files checked", ig.Rule, ig.Path),
			Range:   finding.Range{File: k.p.Path, Start: ig.At, End: end},
		}, ""))
	}
	return out
}

// walkedWhole reports whether the run walked a directory at or above the
// project file's.
func (l *Linter) walkedWhole(p *config.Project) bool {
	root, err := filepath.Abs(p.Root)
	if err != nil {
		return false
	}
	for _, w := range l.opts.Walked {
		if r, err := filepath.Rel(w, root); err == nil && filepath.IsLocal(r) {
			return true
		}
	}
	return false
}
