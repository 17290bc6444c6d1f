package lint

import (
	"context"
	"fmt"
	"slices"

	"github.com/gpulint/gpulint/internal/edit"
	"github.com/gpulint/gpulint/internal/finding"
)

// FixOutcome is what fixing one file produced. New equals Old when
// nothing was applied or the result was refused.
type FixOutcome struct {
	Path     string
	Old, New []byte
	// Found are the findings of Old that the fixes came from.
	Found []finding.Finding
	// Applied are the findings whose fix is in New.
	Applied []finding.Finding
	// Skipped explains fixes that were not applied.
	Skipped []string
	// Remaining are the findings of New.
	Remaining []finding.Finding
	// Refused, when set, says why New was discarded: the result did not
	// parse, or a fixed finding was still reported.
	Refused string
}

// Changed reports whether the fix changes the file.
func (o FixOutcome) Changed() bool { return o.Refused == "" && string(o.New) != string(o.Old) }

// maxFixRounds bounds how often fixes are re-applied to reach a fixed
// point: one fix can make room for another (a lower ZeRO stage frees
// memory for a larger micro batch).
const maxFixRounds = 4

// Fix applies the fixes of a file's findings (rule fixes always, tuner
// fixes only with tune), lints the result and repeats until nothing more
// changes, so a second run is a no-op. A round whose result does not
// parse, still reports a fixed finding, or reports a new error is
// refused; the rounds before it are kept.
//
// Fix never trusts edits from the result cache, which anyone who can
// write the cache directory could forge: a cached result with findings is
// linted again from its bytes first, and only those edits are applied.
func (l *Linter) Fix(ctx context.Context, fr FileResult, tune bool) (FixOutcome, error) {
	if fr.cached && len(fr.Findings) > 0 {
		fresh, err := l.LintBytes(ctx, fr.Path, fr.Data)
		if err != nil {
			return FixOutcome{Path: fr.Path, Old: fr.Data, New: fr.Data, Found: fr.Findings, Remaining: fr.Findings}, err
		}
		fr = fresh
	}
	out := FixOutcome{Path: fr.Path, Old: fr.Data, New: fr.Data, Found: fr.Findings, Remaining: fr.Findings}
	cur := fr
	for round := 0; round < maxFixRounds; round++ {
		step, err := l.fixOnce(ctx, cur, tune)
		if err != nil {
			return out, err
		}
		out.Skipped = append(out.Skipped, step.Skipped...)
		if step.Refused != "" {
			if round == 0 {
				out.Refused = step.Refused
			}
			break
		}
		if !step.Changed() {
			break
		}
		out.Applied = append(out.Applied, step.Applied...)
		out.New, out.Remaining = step.New, step.Remaining
		cur = FileResult{Path: fr.Path, Kind: fr.Kind, Data: step.New, Findings: step.Remaining}
	}
	return out, nil
}

// fixOnce applies one round of fixes.
//
// The tuner's plan is sized on the file as it is: a rule's fix that
// changes what the plan rests on (FT004 loading the base in 16 bits
// instead of 4, a lower ZeRO stage) makes the plan stale, and applying
// both leaves the re-planned TUNE finding reported after its own fix. So
// a round with rule fixes applies only those; the tuner's fixes wait for
// the next round, planned again on the fixed file, and what is written is
// what the final lint accepts. maxFixRounds leaves room for that round.
func (l *Linter) fixOnce(ctx context.Context, fr FileResult, tune bool) (FixOutcome, error) {
	out := FixOutcome{Path: fr.Path, Old: fr.Data, New: fr.Data, Remaining: fr.Findings}
	var cands, tuned []edit.Candidate
	for i, f := range fr.Findings {
		for _, fx := range f.Fixes {
			if fx.Tune && !tune {
				continue
			}
			c := edit.Candidate{FindingIndex: i, Fix: fx}
			if fx.Tune {
				tuned = append(tuned, c)
			} else {
				cands = append(cands, c)
			}
			break // alternatives: at most one is applied, the first
		}
	}
	// A rule fix that edits the same settings as the tuner's plan (a
	// larger micro batch, the plan attached to vram-overcommit) waits: the
	// plan sizes those settings together with the rest, and is applied
	// when no other rule fix is left.
	cands = slices.DeleteFunc(cands, func(c edit.Candidate) bool {
		return slices.ContainsFunc(tuned, func(t edit.Candidate) bool { return edit.Conflict(c.Fix, t.Fix) })
	})
	if len(cands) == 0 {
		cands = tuned
	}
	if len(cands) == 0 {
		return out, nil
	}
	applied, skipped, data, err := edit.Merge(fr.Path, fr.Data, cands)
	if err != nil {
		return out, fmt.Errorf("fix %s: %w", fr.Path, err)
	}
	for _, s := range skipped {
		f := fr.Findings[s.Candidate.FindingIndex]
		if s.Err != nil {
			return out, fmt.Errorf("rule %s produced an invalid fix for %s:%d: %w", f.Rule, fr.Path, f.Range.Start.Line, s.Err)
		}
		out.Skipped = append(out.Skipped, fmt.Sprintf("%s:%d: %s: fix %q not applied: %s", fr.Path, f.Range.Start.Line, f.Slug, s.Candidate.Fix.Message, s.Reason))
	}
	if len(applied) == 0 {
		return out, nil
	}
	re, err := l.LintBytes(ctx, fr.Path, data)
	if err != nil {
		return out, err
	}
	for _, f := range re.Findings {
		if f.Slug == "parse-error" && !slices.ContainsFunc(fr.Findings, func(o finding.Finding) bool { return o.Slug == "parse-error" }) {
			out.Refused = fmt.Sprintf("the fixed file would not parse (%s:%d:%d: %s); nothing written", fr.Path, f.Range.Start.Line, f.Range.Start.Col, f.Message)
			return out, nil
		}
	}
	// A fix must not trade one problem for a worse one: fixes of separate
	// findings can interact (a larger micro batch and a lower ZeRO stage
	// each fit alone), so a result with a new error is refused.
	for _, nf := range re.Findings {
		if nf.Severity < finding.SeverityError {
			continue
		}
		if !slices.ContainsFunc(fr.Findings, func(o finding.Finding) bool { return o.Rule == nf.Rule }) {
			out.Refused = fmt.Sprintf("the fixes together would introduce %s (%s:%d: %s); nothing written", nf.Slug, nf.Range.File, nf.Range.Start.Line, nf.Message)
			return out, nil
		}
	}
	for _, a := range applied {
		f := fr.Findings[a.FindingIndex]
		out.Applied = append(out.Applied, f)
		if slices.ContainsFunc(re.Findings, func(o finding.Finding) bool {
			return o.Rule == f.Rule && finding.PathString(o.Path) == finding.PathString(f.Path) && !adviceAfterTune(a.Fix, o)
		}) {
			out.Refused = fmt.Sprintf("%s is still reported after its fix (%q); nothing written", f.Slug, a.Fix.Message)
			out.Applied = nil
			return out, nil
		}
	}
	out.New, out.Remaining = data, re.Findings
	return out, nil
}

// adviceAfterTune reports whether o, found again after the tuner's fix
// applied, is advice that fix --tune would not write (a larger micro batch
// held back because it would change the global batch): with no tuner fix
// on it, fixing again changes nothing, so the fix has converged.
func adviceAfterTune(applied finding.Fix, o finding.Finding) bool {
	return applied.Tune && !slices.ContainsFunc(o.Fixes, func(fx finding.Fix) bool { return fx.Tune })
}
