package lint

import (
	"fmt"

	"github.com/gpulint/gpulint/internal/cmdline"
	"github.com/gpulint/gpulint/internal/normalize"
)

// judgeRemovals holds the schema's "was removed" notes on vLLM options to
// the release the file states (cmdline.Removal): an option the stated
// release still has is no finding; one it lacks stays a warning naming the
// release; with no release stated (a config file, an image tagged latest
// or by digest) the note drops to info and says it assumes the newest
// vLLM.
func judgeRemovals(s *subject, vs []normalize.Violation) []normalize.Violation {
	var v cmdline.Version
	if s.argv != nil && s.argv.cmd != nil {
		v = s.argv.cmd.Version
	}
	out := vs[:0:0]
	for _, x := range vs {
		r, ok := removalNote(x)
		switch {
		case !ok:
		case v.Known() && r.Present(v):
			continue
		case v.Known():
			x.Message += fmt.Sprintf(" (the file runs %s, from %s)", v, v.From)
		default:
			x.Severity = normalize.SeverityInfo
			x.Message += "; assumes the newest vLLM, as the file states no release: pin the image tag (vllm/vllm-openai:vX.Y.Z) to settle this"
		}
		out = append(out, x)
	}
	return out
}

// removalNote finds the release facts behind the schema's note on a
// removed top-level option.
func removalNote(x normalize.Violation) (cmdline.Removal, bool) {
	if !x.Removed || len(x.Path) != 1 {
		return cmdline.Removal{}, false
	}
	name, _ := x.Path[0].(string)
	return cmdline.RemovalOf(name)
}
