package lint

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/gpulint/gpulint/internal/check"
	"github.com/gpulint/gpulint/internal/cmdline"
	"github.com/gpulint/gpulint/internal/config"
	"github.com/gpulint/gpulint/internal/edit"
	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/kube"
	"github.com/gpulint/gpulint/internal/normalize"
	"github.com/gpulint/gpulint/internal/source"
)

// argvSubject resolves the paths of a vLLM config derived from a command
// line: each top-level key names an option, located at the flag's tokens.
type argvSubject struct {
	file  *source.File
	cmd   *cmdline.Command
	whole finding.Range
	// doc and path locate the container, so an edit can be checked by
	// re-reading the command line from the edited file.
	doc  int
	path []any
	// inline marks a command read from KServe's inline fields, which
	// verify cannot re-read the same way.
	inline bool
	// at locates options the resource states outside its command line (a
	// KubeAI Model's url is its --model).
	at map[string]finding.Range
}

func (a *argvSubject) span(sp cmdline.Span) finding.Range {
	return finding.Range{File: a.file.Path, Start: a.file.PosAt(sp.Start), End: a.file.PosAt(sp.End)}
}

// locate maps ["option", ...] to the flag as written.
func (a *argvSubject) locate(path []any) (finding.Range, bool) {
	if len(path) == 0 {
		return finding.Range{}, false
	}
	name, ok := path[0].(string)
	if !ok {
		return finding.Range{}, false
	}
	if r, ok := a.at[name]; ok {
		return r, true
	}
	if name == "model" && a.cmd.Model != "" {
		return a.span(a.cmd.ModelSpan), true
	}
	fl, ok := a.cmd.Lookup(name)
	if !ok {
		// The option's value may be built from dotted sub-keys alone.
		if fl, ok = a.cmd.LookupDotted(name); !ok {
			return finding.Range{}, false
		}
	}
	end := fl.NameSpan
	if fl.HasValue && fl.ValueSpan.End > end.End {
		end = fl.ValueSpan
	}
	return finding.Range{File: a.file.Path, Start: a.file.PosAt(fl.NameSpan.Start), End: a.file.PosAt(end.End)}, true
}

// edits turns option-level patches into edits of the command line.
func (a *argvSubject) edits(ops []check.Op) ([]finding.Edit, error) {
	var out []finding.Edit
	for _, o := range ops {
		if len(o.Path) != 1 {
			return nil, fmt.Errorf("command-line patch path %v: only top-level options can be changed", o.Path)
		}
		name, _ := o.Path[0].(string)
		var es []finding.Edit
		var err error
		if o.Op == "remove" {
			es, err = a.cmd.RemoveFlag(name)
		} else {
			es, err = a.cmd.SetFlag(name, flagText(o.Value))
		}
		if err != nil {
			return nil, err
		}
		out = append(out, es...)
	}
	if err := a.file.CheckEdits(out); err != nil {
		return nil, err
	}
	if err := a.verify(out, ops); err != nil {
		return nil, err
	}
	return out, nil
}

// verify applies edits to a copy of the file, reads the command line again
// from the edited file and checks every change took effect, so a fix that
// would garble a script is never offered.
func (a *argvSubject) verify(edits []finding.Edit, ops []check.Op) error {
	if a.inline || a.path == nil {
		return nil
	}
	data, err := edit.Apply(a.file.Data, edits)
	if err != nil {
		return err
	}
	f, err := source.Parse(a.file.Path, data, source.DefaultLimits())
	if err != nil {
		return fmt.Errorf("the edited command line does not parse: %w", err)
	}
	if a.doc >= len(f.Docs) || f.Docs[a.doc].Root == nil {
		return errors.New("the edited file lost the container")
	}
	cn, _, matched := f.Docs[a.doc].Root.Lookup(a.path)
	if matched != len(a.path) || cn.Kind != source.MapNode {
		return errors.New("the edited file lost the container")
	}
	var image string
	if n := cn.Get("image"); n != nil {
		image, _ = n.Value.(string)
	}
	cmd := cmdline.Recognize(cmdline.Container{File: f.Path, Image: image, Command: argsOf(f, cn.Get("command")), Args: argsOf(f, cn.Get("args"))})
	if cmd == nil {
		return errors.New("the edited command line is no longer a vLLM launch")
	}
	for _, o := range ops {
		name, _ := o.Path[0].(string)
		got, present := cmd.Lookup(name)
		switch {
		case o.Op == "remove" && present:
			return fmt.Errorf("--%s is still there after removing it", name)
		case o.Op == "set" && name == "model":
			if cmd.Model != flagText(o.Value) {
				return errors.New("the model did not change as intended")
			}
		case o.Op == "set":
			want := flagText(o.Value)
			if b, ok := o.Value.(bool); ok {
				if present == b && (!b || !got.Negated) {
					continue
				}
				return fmt.Errorf("--%s did not change as intended", name)
			}
			if !present || got.Value != want {
				return fmt.Errorf("--%s %s did not take effect", name, want)
			}
		}
	}
	return nil
}

// flagText renders a patch value as a command-line argument.
func flagText(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case bool:
		return strconv.FormatBool(t)
	case int64:
		return strconv.FormatInt(t, 10)
	case int:
		return strconv.Itoa(t)
	case float64:
		return strconv.FormatFloat(t, 'g', -1, 64)
	}
	return fmt.Sprint(v)
}

// listEditor adds and removes items of one YAML sequence through the
// source tree's patcher, in the list's own style.
type listEditor struct {
	file *source.File
	doc  int
	path []any // path of the sequence from the document root
}

func (le listEditor) seq() *source.Node {
	n, _, matched := le.file.Docs[le.doc].Root.Lookup(le.path)
	if matched != len(le.path) || n.Kind != source.SeqNode {
		return nil
	}
	return n
}

// Append adds values at the end of the list.
func (le listEditor) Append(values ...string) ([]finding.Edit, error) {
	n := le.seq()
	if n == nil {
		return nil, fmt.Errorf("list %s not found", finding.PathString(le.path))
	}
	ops := make([]source.Op, len(values))
	for i, v := range values {
		ops[i] = source.Op{Kind: source.Set, Path: append(clone(le.path), len(n.Items)+i), Value: v}
	}
	return le.file.Edits(le.doc, ops)
}

// Remove deletes items [from, to).
func (le listEditor) Remove(from, to int) ([]finding.Edit, error) {
	var ops []source.Op
	for i := to - 1; i >= from; i-- {
		ops = append(ops, source.Op{Kind: source.Remove, Path: append(clone(le.path), i)})
	}
	return le.file.Edits(le.doc, ops)
}

// argsOf reads a container's command or args list as cmdline Args.
func argsOf(f *source.File, list *source.Node) []cmdline.Arg {
	if list == nil || list.Kind != source.SeqNode {
		return nil
	}
	out := make([]cmdline.Arg, 0, len(list.Items))
	for _, it := range list.Items {
		if it.Kind != source.ScalarNode {
			out = append(out, cmdline.Arg{})
			continue
		}
		out = append(out, cmdline.ScalarArg(f.Data, it.Start.Offset, it.End.Offset, it.Text))
	}
	return out
}

// vllmContainerSubjects derives a vLLM subject from every container that
// launches a vLLM server, so the vLLM rules run on manifests too.
func (l *Linter) vllmContainerSubjects(s *subject, pods []kube.Pod, proj *config.Project) ([]*subject, []finding.Finding) {
	root := s.file.Docs[s.doc].Root
	var out []*subject
	var fs []finding.Finding
	for _, pod := range pods {
		for _, c := range pod.Containers {
			cn, _, matched := root.Lookup(c.Path)
			if matched != len(c.Path) || cn.Kind != source.MapNode {
				continue
			}
			ct := cmdline.Container{
				File:    s.file.Path,
				Image:   c.Image,
				Command: argsOf(s.file, cn.Get("command")),
				Args:    argsOf(s.file, cn.Get("args")),
				Env:     literalEnv(cn),
			}
			ct.EnvUnknown = envUnknown(cn, ct.Env)
			if cn.Get("command") != nil {
				ct.CommandList = listEditor{file: s.file, doc: s.doc, path: append(clone(c.Path), "command")}
			}
			if cn.Get("args") != nil {
				ct.ArgsList = listEditor{file: s.file, doc: s.doc, path: append(clone(c.Path), "args")}
			}
			cmd := cmdline.Recognize(ct)
			var value map[string]any
			if cmd != nil {
				value = cmd.Config()
			} else if cmd, value = kserveVLLM(s, c, ct); cmd == nil {
				if ts := l.tgiSubject(s, pod, c, cn, ct, proj); ts != nil {
					out = append(out, ts)
				} else if ts := l.trlSubject(s, pod, c, cn, ct, proj); ts != nil {
					out = append(out, ts)
				}
				continue
			}
			vs := &subject{
				lookups: s.lookups,
				kind:    string(source.KindVLLM),
				file:    s.file,
				doc:     s.doc,
				root:    cn,
				prefix:  clone(c.Path),
				value:   value,
				argv: &argvSubject{file: s.file, cmd: cmd, whole: finding.Range{File: s.file.Path, Start: cn.Start, End: cn.End},
					doc: s.doc, path: clone(c.Path), inline: ct.Command == nil && ct.Args == nil},
			}
			if uri, _ := kube.LookupAt(s.value, append(clone(c.Path), "storageUri")).(string); uri != "" && value["model"] == uri {
				// The model is the KServe predictor's storageUri.
				vs.argv.at = map[string]finding.Range{"model": s.locate(append(clone(c.Path), "storageUri"))}
			}
			vs.work = normalize.VLLM(value)
			h := l.podHints(s, pod)
			h.GPUs = int(c.GPU)
			if c.GPU > 0 {
				at := s.locate(append(clone(c.Path), "resources", "limits"))
				h.GPUsRange = &at
			}
			migAt := migHint(s, pod, c, &h)
			vs.tgt = l.resolveTarget(s.file.Path, proj, vs.work, h)
			if !sizesUnknown(cmd) {
				vs.tgt = l.migParents(vs.tgt, vs.work, h.MIGProfile, migAt)
			}
			if sizesUnknown(cmd) || offloadsWeights(value) {
				// A flag that sizes memory is set at run time from a value
				// the manifest does not state, or weights sit in CPU memory:
				// no memory verdict can hold.
				vs.tgt.Model = nil
			}
			fs = append(fs, l.schemaFindings(vs, "vllm")...)
			out = append(out, vs)
		}
	}
	return out, fs
}

// kserveVLLM reads the vLLM engine of a KServe predictor's inline runtime
// container (predictor.<key>); nil when it runs none.
func kserveVLLM(s *subject, c kube.Container, ct cmdline.Container) (*cmdline.Command, map[string]any) {
	if len(c.Path) < 2 || c.Path[len(c.Path)-2] != "predictor" {
		return nil, nil
	}
	key, _ := c.Path[len(c.Path)-1].(string)
	spec, _ := kube.LookupAt(s.value, c.Path).(map[string]any)
	return cmdline.KServeVLLM(s.file.Path, key, spec, ct)
}

// literalEnv reads a container's env list (cn's env and envFrom): the
// variables whose value is known, each expanded as Kubernetes expands
// $(NAME) references to earlier ones (cmdline.ContainerEnv), which
// Kubernetes and a shell in the container expand in command and args. A
// variable set from valueFrom, or naming one whose value is unknown, is
// left out.
func literalEnv(cn *source.Node) map[string]string {
	list := cn.Get("env")
	if list == nil || list.Kind != source.SeqNode {
		return nil
	}
	var vars []cmdline.EnvVar
	for _, it := range list.Items {
		if it.Kind != source.MapNode {
			continue
		}
		n, v := it.Get("name"), it.Get("value")
		if n == nil || n.Kind != source.ScalarNode {
			continue
		}
		ev := cmdline.EnvVar{Name: n.Text, FromSource: it.Get("valueFrom") != nil}
		switch {
		case v != nil && v.Kind == source.ScalarNode && v.Value != nil:
			ev.Value = v.Text
		case v != nil && v.Kind != source.ScalarNode:
			ev.FromSource = true // not a value Kubernetes accepts
		}
		vars = append(vars, ev)
	}
	return cmdline.ContainerEnv(vars, cn.Get("envFrom") != nil)
}

// envUnknown reports, for a container node, whether a variable missing
// from its known env may be set all the same: declared in env with a value
// the manifest does not state, or possibly set by envFrom.
func envUnknown(cn *source.Node, known map[string]string) func(string) bool {
	declared := map[string]bool{}
	if list := cn.Get("env"); list != nil && list.Kind == source.SeqNode {
		for _, it := range list.Items {
			if n := it.Get("name"); it.Kind == source.MapNode && n != nil && n.Kind == source.ScalarNode {
				declared[n.Text] = true
			}
		}
	}
	envFrom := cn.Get("envFrom") != nil
	return func(name string) bool {
		if _, ok := known[name]; ok {
			return false
		}
		return envFrom || declared[name]
	}
}

// memoryFlags are the vLLM options a memory estimate rests on.
var memoryFlags = map[string]bool{
	"model": true, "max-model-len": true, "tensor-parallel-size": true, "pipeline-parallel-size": true,
	"data-parallel-size": true, "gpu-memory-utilization": true, "max-num-seqs": true,
	"max-num-batched-tokens": true, "quantization": true, "dtype": true, "kv-cache-dtype": true,
	"cpu-offload-gb": true, "kv-cache-memory": true,
}

// offloadsWeights reports a vLLM server that keeps part of its weights in
// CPU memory (--cpu-offload-gb, GiB per GPU; reference vllm.md): the
// memory model does not count that, so its per-GPU estimate would be too
// high and no memory verdict is given.
func offloadsWeights(value map[string]any) bool {
	f, ok := floatOf(value["cpu-offload-gb"])
	return ok && f > 0
}

// floatOf reads a number or a string holding one.
func floatOf(v any) (float64, bool) {
	switch t := v.(type) {
	case int64:
		return float64(t), true
	case float64:
		return t, true
	case string:
		f, err := strconv.ParseFloat(t, 64)
		return f, err == nil
	}
	return 0, false
}

// sizesUnknown reports whether an option a memory estimate rests on is set
// from a variable whose value the manifest does not state.
func sizesUnknown(cmd *cmdline.Command) bool {
	for _, name := range cmd.Unknown() {
		if memoryFlags[name] {
			return true
		}
	}
	return false
}
