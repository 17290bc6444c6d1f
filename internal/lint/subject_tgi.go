package lint

import (
	"fmt"

	"github.com/gpulint/gpulint/internal/cmdline"
	"github.com/gpulint/gpulint/internal/config"
	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/kube"
	"github.com/gpulint/gpulint/internal/normalize"
	"github.com/gpulint/gpulint/internal/source"
)

// kindTGI is the subject kind of a Text Generation Inference launcher in a
// container: the memory model sizes the server (files[].sizing) from the
// options TGI reads, and only the core rules and the memory rules that
// name no vLLM option (vram-overcommit, mig-over-partitioned) read it.
const kindTGI = "tgi"

// tgiSubject derives a TGI subject from a container that runs
// text-generation-launcher, nil when it runs none or when what the memory
// estimate rests on is not stated (cmdline.TGI.ServeConfig). Each option
// is located where the manifest states it: the flag in args, or the env
// entry.
func (l *Linter) tgiSubject(s *subject, pod kube.Pod, c kube.Container, cn *source.Node, ct cmdline.Container, proj *config.Project) *subject {
	t := cmdline.RecognizeTGI(ct)
	if t == nil {
		return nil
	}
	cfg, from, assumed, err := t.ServeConfig(int(c.GPU))
	if err != nil {
		return nil
	}
	whole := finding.Range{File: s.file.Path, Start: cn.Start, End: cn.End}
	argv := append(append([]cmdline.Arg(nil), ct.Command...), ct.Args...)
	at := map[string]finding.Range{}
	for key, opt := range from {
		o := t.Options[opt]
		switch {
		case o.Arg >= 0 && o.Arg < len(argv):
			sp := argv[o.Arg].Raw
			at[key] = finding.Range{File: s.file.Path, Start: s.file.PosAt(sp.Start), End: s.file.PosAt(sp.End)}
			if o.Arg+1 < len(argv) && argv[o.Arg].Text == "--"+opt {
				at[key] = finding.Range{File: s.file.Path, Start: at[key].Start, End: s.file.PosAt(argv[o.Arg+1].Raw.End)}
			}
		case o.Env != "":
			if r, ok := envEntry(s.file, cn, o.Env); ok {
				at[key] = r
			}
		}
	}
	ts := &subject{lookups: s.lookups, kind: kindTGI, file: s.file, doc: s.doc, root: cn, prefix: clone(c.Path), value: cfg,
		optAt: at, whole: &whole}
	h := l.podHints(s, pod)
	h.GPUs = int(c.GPU)
	if c.GPU > 0 {
		r := s.locate(append(clone(c.Path), "resources", "limits"))
		h.GPUsRange = &r
	}
	migAt := migHint(s, pod, c, &h)
	resolve := func() {
		ts.work = normalize.TGI(cfg)
		ts.tgt = l.migParents(l.resolveTarget(s.file.Path, proj, ts.work, h), ts.work, h.MIGProfile, migAt)
	}
	resolve()
	if assumed == "" {
		return ts
	}
	// The launcher's default prefill is at most the model's
	// max_position_embeddings (launcher/src/main.rs @ db931fcf).
	if _, stated := from["max-num-batched-tokens"]; !stated && ts.tgt.Model != nil {
		if n := int64(ts.tgt.Model.MaxPositions); n > 0 && n < cfg["max-model-len"].(int64) {
			cfg["max-model-len"], cfg["max-num-batched-tokens"] = n, n
			resolve()
		}
	}
	// The sequence the estimate holds is the warmup's prefill, not a
	// budget the manifest states: an assumed input of every verdict that
	// rests on it, located at the option that states the prefill or else
	// at the container.
	r := whole
	if at, ok := at["max-num-batched-tokens"]; ok {
		r = at
	}
	ts.defaults = []finding.Input{{Name: "seq_len", Value: fmt.Sprint(cfg["max-model-len"]), Source: finding.SourceAssumed,
		Range: &r, Settle: assumed + "; set MAX_TOTAL_TOKENS"}}
	return ts
}

// envEntry locates the env entry named name in a container node: from its
// name to its value.
func envEntry(f *source.File, cn *source.Node, name string) (finding.Range, bool) {
	list := cn.Get("env")
	if list == nil || list.Kind != source.SeqNode {
		return finding.Range{}, false
	}
	for _, it := range list.Items {
		if it.Kind != source.MapNode {
			continue
		}
		if n := it.Get("name"); n != nil && n.Kind == source.ScalarNode && n.Text == name {
			end := n.End
			if v := it.Get("value"); v != nil {
				end = v.End
			}
			return finding.Range{File: f.Path, Start: it.Start, End: end}, true
		}
	}
	return finding.Range{}, false
}
