package lint

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gpulint/gpulint/internal/cmdline"
	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/normalize"
)

// vLLM reads its command line with Python's argparse, which takes a
// unique prefix of an option for the option and refuses a prefix of
// several ("ambiguous option: --x could match --xa, --xb"); vLLM never
// turns that off (internal/cmdline lookupLong cites the sources). The
// parser expands an abbreviation to the option it stands for; the
// functions here keep the spelling as written in what a finding shows.

// flagAt returns the vLLM flag that a canonical path's first key names,
// when the subject is a command line.
func (s *subject) flagAt(path []any) (cmdline.Flag, bool) {
	if s.argv == nil || s.argv.cmd == nil || len(path) == 0 {
		return cmdline.Flag{}, false
	}
	name, ok := path[0].(string)
	if !ok {
		return cmdline.Flag{}, false
	}
	if fl, ok := s.argv.cmd.Lookup(name); ok {
		return fl, true
	}
	return s.argv.cmd.LookupDotted(name)
}

// writtenAs says how the file spells an option it abbreviates, for the
// value of an input read from that option ("; written --max-num-seq, …");
// it is empty for an option written in full.
func (s *subject) writtenAs(path []any) string {
	fl, ok := s.flagAt(path)
	if !ok || !fl.Abbrev {
		return ""
	}
	return fmt.Sprintf("; written %s, %s", fl.Spelled, expandsTo(fl))
}

func expandsTo(fl cmdline.Flag) string {
	full := "--" + fl.Name
	if fl.Negated {
		full = "--no-" + fl.Name
	}
	return "which vLLM's argparse reads as " + full + ", the one option it abbreviates"
}

// showsAbbreviation adds to a finding located at an abbreviated flag the
// flag as written, so a reader who searches the file for the option's
// full name finds what the finding rests on.
func showsAbbreviation(f *finding.Finding, s *subject, path []any) {
	fl, ok := s.flagAt(path)
	if !ok || !fl.Abbrev {
		return
	}
	at := s.argv.span(fl.NameSpan)
	if slices.ContainsFunc(f.Evidence, func(e finding.Input) bool { return e.Range != nil && *e.Range == at }) {
		return
	}
	f.Evidence = append(f.Evidence, finding.Input{
		Name:   fl.Name,
		Value:  fmt.Sprintf("%s, %s", fl.Spelled, expandsTo(fl)),
		Source: finding.SourceFile,
		Range:  &at,
	})
}

// judgeAmbiguous rewrites the schema's "unknown key" note where vLLM's
// parser says something else: on a flag or config key that abbreviates
// several options, vLLM knows what it starts and refuses it as ambiguous;
// on a config key set to false that abbreviates a boolean, vLLM drops it
// (canonicalVLLM), so the option keeps its default. The severity stays
// the schema's for unknown options: the options a prefix may match come
// from gpulint's table, a union over releases without the release each
// appeared in, so one of them may be missing in the release the file
// runs, which would then read the prefix as the other.
func judgeAmbiguous(s *subject, vs []normalize.Violation) []normalize.Violation {
	for i, v := range vs {
		if len(v.Path) != 1 {
			continue
		}
		name, _ := v.Path[0].(string)
		written, amb := "", []string(nil)
		if fl, ok := s.flagAt(v.Path); ok {
			written, amb = fl.Spelled, fl.Ambiguous
		} else if k, ok := s.keyMap[name]; ok && s.argv == nil {
			written = k
			full, a := cmdline.ExpandLong(name)
			amb = a
			if val, _ := s.value.(map[string]any); full != "" && val[name] == false {
				vs[i].Message = fmt.Sprintf("%s: false has no effect: vLLM writes a false key as --no-%s only when that exact option exists, and otherwise drops the key, so %s keeps its default; write the option in full",
					k, name, strings.TrimPrefix(full, "no-"))
				continue
			}
		}
		if amb == nil {
			continue
		}
		vs[i].Message = fmt.Sprintf("%s could mean %s: vLLM's argparse refuses an ambiguous abbreviation and exits at start-up (\"ambiguous option: --%s could match %s\"); write the option in full",
			written, strings.Join(amb, " or "), name, strings.Join(amb, ", "))
	}
	return vs
}

// droppedFalseKeys reports the keys of a `vllm serve --config` file that
// vLLM drops although they are written false (droppedFalse), where that
// loses what the file asks for: the option is on by default
// (cmdline.Option.DefaultOn), so the feature the file turns off stays on.
// A false key of an option that is off by default asks for the default
// and loses nothing. The message names the newest parser: older releases
// passed "--key false" for their StoreBoolean options (vllm/utils.py @
// 509c60e), enable_chunked_prefill among them, and a file rarely says
// which release reads it.
func droppedFalseKeys(s *subject) []normalize.Violation {
	var out []normalize.Violation
	for _, ck := range s.dropped {
		o, ok := cmdline.LookupOption(ck)
		if !ok || !o.DefaultOn {
			continue
		}
		k := s.keyMap[ck]
		out = append(out, normalize.Violation{
			Path:     []any{ck},
			Severity: "warning",
			Message: fmt.Sprintf("%s: false has no effect in the newest vLLM, which drops the key, so %s stays on (its default); it writes a false key as --no-%s only when that exact option exists, and only --no-%s does; write %s: false",
				k, o.Name, k, o.Name, o.Name),
		})
	}
	return out
}
