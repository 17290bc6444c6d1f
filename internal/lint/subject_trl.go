package lint

import (
	"errors"

	"github.com/gpulint/gpulint/internal/cmdline"
	"github.com/gpulint/gpulint/internal/config"
	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/kube"
	"github.com/gpulint/gpulint/internal/normalize"
	"github.com/gpulint/gpulint/internal/source"
)

// trlSubject derives a fine-tuning recipe subject from a container that
// runs a trl CLI training command with its recipe as options
// (cmdline.RecognizeTRL): the options are the Trainer recipe's keys, the
// pod's GPUs its hardware. Each key is located at its option in the
// manifest; nil when the container runs none, or the options name no
// model.
func (l *Linter) trlSubject(s *subject, pod kube.Pod, c kube.Container, cn *source.Node, ct cmdline.Container, proj *config.Project) *subject {
	t := cmdline.RecognizeTRL(ct)
	if t == nil {
		return nil
	}
	value, from := t.Recipe()
	if m, _ := value["model_name_or_path"].(string); m == "" {
		return nil
	}
	whole := finding.Range{File: s.file.Path, Start: cn.Start, End: cn.End}
	argv := append(append([]cmdline.Arg(nil), ct.Command...), ct.Args...)
	at := map[string]finding.Range{}
	for key, o := range from {
		at[key] = finding.Range{File: s.file.Path, Start: s.file.PosAt(argv[o.Arg].Raw.Start), End: s.file.PosAt(argv[o.Last].Raw.End)}
	}
	ts := &subject{lookups: s.lookups, kind: string(source.KindFinetune), file: s.file, doc: s.doc, root: cn, prefix: clone(c.Path),
		value: value, optAt: at, whole: &whole}
	ts.work = normalize.Normalize(string(source.KindFinetune), value)
	h := l.podHints(s, pod)
	h.GPUs = int(c.GPU)
	if c.GPUPath != nil {
		r := s.locate(c.GPUPath)
		h.GPUsRange = &r
	}
	migAt := migHint(s, pod, c, &h)
	ts.tgt = l.migParents(l.resolveTarget(s.file.Path, proj, ts.work, h), ts.work, h.MIGProfile, migAt)
	if cmdline.TRLLaunchOptions(from) {
		// The world size or the sharding comes from options the trl CLI
		// hands to accelerate launch, not from the pod's GPU count: no
		// memory verdict sized on the pod holds.
		ts.tgt.Model = nil
	}
	return ts
}

// errOptionEdit refuses edits to a recipe read from a command line's
// options: a patch names recipe keys, which written as YAML keys beside
// the container's args would break the manifest, not change the run.
var errOptionEdit = errors.New("no edits to a recipe stated as command-line options")
