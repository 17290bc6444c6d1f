package lint

import (
	"github.com/gpulint/gpulint/internal/cmdline"
	"github.com/gpulint/gpulint/internal/config"
	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/kube"
	"github.com/gpulint/gpulint/internal/normalize"
	"github.com/gpulint/gpulint/internal/source"
)

// kubeAISubjects derives the vLLM subject of a KubeAI Model with the VLLM
// engine (kube.ReadKubeAIModel): its args are vLLM flags, its model the
// hf:// url, its GPU and GPU count the resource profile's.
func (l *Linter) kubeAISubjects(s *subject, proj *config.Project) ([]*subject, []finding.Finding) {
	m, ok := kube.ReadKubeAIModel(s.value)
	if !ok {
		return nil, nil
	}
	root := s.file.Docs[s.doc].Root
	spec := root.Get("spec")
	if spec == nil || spec.Kind != source.MapNode {
		return nil, nil
	}
	argsNode := spec.Get("args")
	var list cmdline.ListAppender
	if argsNode != nil {
		list = listEditor{file: s.file, doc: s.doc, path: clone(m.ArgsAt)}
	}
	cmd := cmdline.ParseArgList(s.file.Path, argsOf(s.file, argsNode), list)
	value := cmd.Config()
	at := map[string]finding.Range{}
	if m.Model != "" {
		value["model"] = m.Model
		at["model"] = s.locate(m.ModelAt)
	}
	vs := &subject{
		lookups: s.lookups,
		kind:    string(source.KindVLLM),
		file:    s.file,
		doc:     s.doc,
		root:    spec,
		prefix:  []any{"spec"},
		value:   value,
		argv: &argvSubject{file: s.file, cmd: cmd, whole: finding.Range{File: s.file.Path, Start: spec.Start, End: spec.End},
			doc: s.doc, path: []any{"spec"}, inline: true, at: at},
	}
	vs.work = normalize.VLLM(value)
	h := targetHints{At: s.locate}
	if len(m.GPUs) == 1 {
		r := s.locate(m.ProfileAt)
		h.Product, h.ProductAt = m.GPUs[0], &r
	}
	if m.Count > 0 {
		r := s.locate(m.ProfileAt)
		h.GPUs, h.GPUsRange = int(m.Count), &r
	}
	vs.tgt = l.resolveTarget(s.file.Path, proj, vs.work, h)
	if sizesUnknown(cmd) || offloadsWeights(value) {
		vs.tgt.Model = nil
	}
	return []*subject{vs}, l.schemaFindings(vs, "vllm")
}
