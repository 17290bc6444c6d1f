package lint

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/normalize"
	"github.com/gpulint/gpulint/internal/recipe"
	"github.com/gpulint/gpulint/internal/rules"
	"github.com/gpulint/gpulint/tuner"
)

// The evidence of a verdict (STYLE §1.8, §5): each input a memory, fit,
// batch or precision rule rests on, with where it came from. A rule names
// the inputs it may rest on in its metadata (inputs:) and a finding may
// narrow them (lib.with_inputs); the pipeline records them and keeps a
// finding that rests on an assumed input at info, naming how to state it.

// inputs returns the subject's target inputs by name: those the file, a
// flag or the project file state, and the defaults the memory model
// assumes for the rest. An input the subject has no use for (a sequence
// length for a vLLM server, a model nothing names) is absent.
func (s *subject) inputs() map[string]finding.Input {
	if s.evidence != nil {
		return s.evidence
	}
	t, w := s.tgt, s.work
	out := map[string]finding.Input{}
	stated := func(name string, v any, src finding.Source, settle string) {
		in := finding.Input{Name: name, Value: fmt.Sprint(v), Source: src, Settle: settle}
		// A project-file input names the line of its key under the
		// matching targets entry (the key is the input's name), as the
		// inputs statedInputs adds do.
		if pos, ok := t.Stated.At[name]; ok && src == finding.SourceProject {
			in.Range = &finding.Range{File: t.Stated.File, Start: pos, End: pos}
		}
		out[name] = in
	}
	fromFile := func(name string, v any, field string) {
		in := finding.Input{Name: name, Value: fmt.Sprint(v), Source: finding.SourceFile}
		if p := w.Paths[field]; len(p) > 0 {
			r := s.locate(p)
			in.Range = &r
			in.Value += s.writtenAs(p)
		}
		out[name] = in
	}
	if t.GPU != nil {
		v := fmt.Sprintf("%s (%s usable, catalog)", t.GPU.Name, gib(t.GPU.UsableBytes))
		if t.MIG != nil {
			v = fmt.Sprintf("%s %s slice (%s, catalog)", t.GPU.Name, t.MIG.Name, gib(t.MIG.MemoryBytes))
		}
		if t.GPUFrom == "mig-profile" {
			v = fmt.Sprintf("a %s slice of any of %s (at most %s, catalog)", t.MIG.Name, strings.Join(t.Parents, ", "), gib(t.MIG.MemoryBytes))
		}
		if len(t.Candidates) > 1 {
			names := make([]string, len(t.Candidates))
			for i, g := range t.Candidates {
				names[i] = g.Name
			}
			v = fmt.Sprintf("%s, the least of the GPUs the node selector %s MiB may mean (%s; each is estimated)",
				v, t.CandidatesBy, strings.Join(names, ", "))
		}
		if t.GPUFrom == "manifest" && t.GPUAt != nil && s.viaConfigMap != "" && t.GPUAt.File != s.file.Path {
			v += "; " + s.viaConfigMap
		}
		stated("gpu", v, sourceOf(t.GPUFrom), "")
		if t.GPUFrom == "comment" {
			v += ", " + t.Comment.says()
			if vs := t.Comment.variants(); len(vs) > 1 {
				v = fmt.Sprintf("%s, the least of the GPUs the recipe's comment may mean by %q (%s; it states no memory)",
					strings.TrimSuffix(v, ", "+t.Comment.says()), t.Comment.hw.Written, strings.Join(vs, ", "))
			}
			if t.Comment.setupsTaken() != nil {
				v = fmt.Sprintf("%s, the first of the setups the recipe's comment names (%s; each is estimated)",
					strings.TrimSuffix(v, ", "+t.Comment.says()), t.Comment.setupsString())
			}
			out["gpu"] = finding.Input{Name: "gpu", Value: v, Source: finding.SourceAssumed,
				Range: t.GPUAt, Settle: "confirm with --gpu or targets.gpu"}
		}
		if t.GPUAt != nil && (t.GPUFrom == "manifest" || t.GPUFrom == "mig-profile") {
			in := out["gpu"]
			in.Range = t.GPUAt
			out["gpu"] = in
		}
	}
	switch {
	case t.GPUs > 0 && t.GPUsAt != nil && s.launcher != nil:
		r := s.launcher.locate(t.GPUsAt.path)
		out["gpus"] = finding.Input{Name: "gpus", Value: fmt.Sprint(t.GPUs) + s.launchNote(), Source: finding.SourceFile, Range: &r}
	case t.GPUs > 0 && t.GPUsFrom == "config":
		fromFile("gpus", t.GPUs, "parallel.world_size")
	case t.GPUs > 0:
		stated("gpus", t.GPUs, sourceOf(t.GPUsFrom), "")
		if t.GPUsRange != nil && t.GPUsFrom == "manifest" {
			in := out["gpus"]
			in.Range = t.GPUsRange
			out["gpus"] = in
		}
	case t.Comment.gpusTaken() > 0:
		c := t.Comment
		v := fmt.Sprintf("%d (%d node × %d, %s)", c.hw.GPUs(), c.hw.Nodes, c.hw.GPUsPerNode, c.says())
		switch {
		case c.hw.Total > 0:
			v = fmt.Sprintf("%d (over machines it does not count, %s)", c.hw.GPUs(), c.says())
		case c.hw.Nodes > 1:
			v = fmt.Sprintf("%d (%d nodes × %d, %s)", c.hw.GPUs(), c.hw.Nodes, c.hw.GPUsPerNode, c.says())
		}
		if c.setupsTaken() != nil {
			v = fmt.Sprintf("%d, the first of the setups the recipe's comment names (%s; each is estimated)", c.hw.GPUs(), c.setupsString())
		}
		if sh := c.shardingTaken(); sh.Scheme != "" {
			v = strings.TrimSuffix(v, ")") + ", sharded by " + sh.String() + ")"
		}
		at := c.at
		out["gpus"] = finding.Input{Name: "gpus", Value: v, Source: finding.SourceAssumed, Range: &at,
			Settle: "confirm with the launch: an Accelerate or DeepSpeed config and a launch script that name this recipe, or targets.gpus"}
	case sharded(w):
		// Sharding divides states by the world size: one GPU is the
		// largest per-GPU estimate, and a guess.
		stated("gpus", 1, finding.SourceAssumed, "set --gpus or targets.gpus")
	}
	if t.ModelID != "" && t.ModelByName && t.Model != nil {
		// The model is a guess from its name: assumed, at the place the
		// file names it.
		weights, bound := "", ""
		if q := t.Model.Quant; q != nil {
			// The weight format is read from the name too
			// (tuner.Catalog.ModelByName): which modules the checkpoint
			// keeps in 16 bits, the name cannot say.
			weights = fmt.Sprintf(" with %s weights (%d-bit)", q.Method, q.Bits)
			bound = "; the name cannot say which modules the checkpoint keeps in 16 bits, so its weights are a lower bound"
		}
		from := "from " + cmp.Or(t.ModelNamedBy, "the name")
		if t.ModelNamedBy == "" && weightsPath(t.ModelID) {
			from = "mapped by name from the path"
		}
		in := finding.Input{Name: "model", Source: finding.SourceAssumed,
			Value:  fmt.Sprintf("%s (%.1fB parameters, catalog)%s %s %s, state the model to confirm%s", t.Model.ID, float64(t.Model.Params())/1e9, weights, from, t.ModelID, bound),
			Settle: "set --model or targets.model to a catalog id or a model directory"}
		switch {
		case t.ModelFrom == "config" && len(w.Paths["model"]) > 0:
			r := s.locate(w.Paths["model"])
			in.Range = &r
		case t.ModelAt != nil && t.ModelFrom == "manifest":
			in.Range = t.ModelAt
		}
		out["model"] = in
	} else if t.ModelID != "" {
		v := t.ModelID
		if t.Model != nil {
			v = fmt.Sprintf("%s (%.1fB parameters, %s)", t.ModelID, float64(t.Model.Params())/1e9, cmp.Or(t.ModelSource, "catalog"))
		}
		if t.ModelFrom == "config" {
			fromFile("model", v, "model")
		} else {
			stated("model", v, sourceOf(t.ModelFrom), "")
			if t.ModelAt != nil && t.ModelFrom == "manifest" {
				in := out["model"]
				in.Range = t.ModelAt
				out["model"] = in
			}
		}
	}
	if role, _ := w.Get("role"); role == "train" {
		s.trainingInputs(out, fromFile, stated)
	}
	t.statedInputs(w, out)
	if fw, _ := w.Get("framework"); t.VLLMRelease != "" && fw == "vllm" && t.GPU != nil && t.Model != nil {
		// The release the serving estimate followed (withRelease).
		out["vllm_version"] = finding.Input{Name: "vllm_version", Value: fmt.Sprintf("%s (%s)", t.VLLMRelease, t.VLLMReleaseFrom),
			Source: finding.SourceFile, Range: t.VLLMReleaseAt}
	}
	for name, why := range s.assumed {
		if in, ok := out[name]; ok && in.Source == finding.SourceFile {
			in.Source, in.Settle = finding.SourceAssumed, why
			out[name] = in
		}
	}
	for _, in := range s.defaults {
		out[in.Name] = in
	}
	s.evidence = out
	return out
}

// launchNote names, after a recipe's GPU count, what the Accelerate
// config its launch passes gives it and where that config states it: the
// sharding where the recipe states none, the mixed precision where its
// own flags enable none; "" when the launch passes no config.
func (s *subject) launchNote() string {
	t, w := s.tgt, s.work
	if !isFinetune(w) || t.Launched == nil {
		return ""
	}
	out := ""
	if at, ok := launchedShardingAt(t.Launched); ok && recipe.StatedSharding(w).Scheme == "" && recipe.DeepSpeedPath(w) == "" {
		where := fmt.Sprintf("%s:%d", filepath.Base(at.File), at.Start.Line)
		if sh := recipe.StatedSharding(t.Launched.work); sh.Scheme != "" {
			out = fmt.Sprintf(", sharded by %s (%s)", sh, where)
		} else if d, _ := t.Launched.work.Get("distributed_type"); strings.EqualFold(fmt.Sprint(d), "MULTI_GPU") {
			out = fmt.Sprintf(", unsharded data parallel (%s)", where)
		}
	}
	if at := s.launchPrecision; at.File != "" {
		p, _ := w.Get("precision")
		out += fmt.Sprintf(", %v mixed precision (%s:%d)", p, filepath.Base(at.File), at.Start.Line)
	}
	return out
}

// trainingInputs adds what a training run's memory and precision rest on:
// sequence length, micro batch, method and the model's load dtype.
func (s *subject) trainingInputs(out map[string]finding.Input, fromFile func(string, any, string), stated func(string, any, finding.Source, string)) {
	t, w := s.tgt, s.work
	finetune := isFinetune(w)
	seqKey := "targets.seq_len"
	if finetune {
		seqKey = "the recipe's sequence length or targets.seq_len"
	}
	gen, _ := w.Get("ppo.max_generated_tokens")
	switch n, _ := w.Get("seq_len"); {
	case isInt(n) && isInt(gen):
		// A PPO recipe's sequence is its prompt and response: the prompt
		// is truncated to max_seq_len and padded to the batch's longest,
		// so the bound stands for a length the data decides.
		fromFile("seq_len", fmt.Sprintf("%d (a prompt at its bound of %d tokens + %d generated)",
			n.(int64)+gen.(int64), n, gen), "seq_len")
		in := out["seq_len"]
		in.Source, in.Settle = finding.SourceAssumed, "the prompts' length: the batch pads to its longest prompt, which the dataset decides; lower tokenizer.max_seq_len to the longest prompt to state it"
		out["seq_len"] = in
	case isInt(n):
		fromFile("seq_len", n, "seq_len")
	case t.Stated.SeqLen > 0:
		stated("seq_len", t.Stated.SeqLen, finding.SourceProject, "")
	default:
		seq := 2048
		if t.Model != nil && t.Model.MaxPositions > 0 {
			seq = min(seq, t.Model.MaxPositions)
		}
		stated("seq_len", seq, finding.SourceAssumed, "set "+seqKey)
	}
	switch n, _ := w.Get("batch.micro"); {
	case isInt(n):
		fromFile("micro_batch", n, "batch.micro")
	case t.Stated.MicroBatch > 0:
		stated("micro_batch", t.Stated.MicroBatch, finding.SourceProject, "")
	default:
		stated("micro_batch", 1, finding.SourceAssumed, "set the micro batch or targets.micro_batch")
	}
	if b, _ := w.Get("activation_offloading"); b == true {
		// The recipe moves saved activations to host memory: the GPU
		// figure rests on it (tuner.Workload.ActivationOffloading).
		fromFile("activation_offloading", true, "activation_offloading")
	}
	switch m, ok := methodInFile(w); {
	case ok:
		fromFile("method", m, "adapter.type")
	case t.Stated.Method != "":
		stated("method", t.Stated.Method, finding.SourceProject, "")
	default:
		stated("method", "full", finding.SourceAssumed, "set targets.method: full, lora or qlora")
	}
	switch o, _ := w.Get("optimizer"); {
	case o != nil && o != "":
		// Listed only when the model sizes it as another optimizer: the
		// verdict then rests on that stand-in.
		if name, _ := o.(string); recipe.OptimizerStandIn(name) != "" {
			stated("optimizer", name, finding.SourceAssumed, recipe.OptimizerStandIn(name))
		}
	case t.Stated.Optimizer != "":
		c, _ := tuner.OptimizerByName(t.Stated.Optimizer)
		if basis := c.StandInBasis(t.Stated.Optimizer); basis != "" {
			stated("optimizer", t.Stated.Optimizer, finding.SourceAssumed, basis)
		} else {
			stated("optimizer", t.Stated.Optimizer, finding.SourceProject, "")
		}
	}
	switch d, _ := w.Get("model_dtype"); {
	case d != nil && d != "":
		fromFile("model_dtype", d, "model_dtype")
	case t.Stated.ModelDtype != "":
		stated("model_dtype", t.Stated.ModelDtype, finding.SourceProject, "")
	default:
		stated("model_dtype", "float32", finding.SourceAssumed,
			"the script's load dtype: set targets.model_dtype")
	}
}

// methodInFile is the training method a fine-tuning recipe states, or
// leaves to a default its own tool documents. A Hugging Face Trainer
// recipe without adapter keys leaves it to the script (which may wrap
// the model in PEFT itself), and a DeepSpeed or Accelerate file never
// says.
func methodInFile(w *normalize.Workload) (string, bool) {
	if !isFinetune(w) {
		return "", false
	}
	a, _ := w.Get("adapter.type")
	m := map[any]string{"none": "full", "lora": "lora", "qlora": "qlora"}[a]
	if m == "" {
		return "", false
	}
	if len(w.Paths["adapter.type"]) == 0 {
		if r, _ := w.Get("recipe"); r == normalize.RecipeTrainer {
			return "", false
		}
	}
	return m, true
}

// sharded reports whether the workload partitions its states over the
// data-parallel ranks (a ZeRO stage or an FSDP strategy).
func sharded(w *normalize.Workload) bool {
	if n, _ := w.Get("zero.stage"); isInt(n) {
		return true
	}
	sh, _ := w.Get("fsdp.sharding")
	return sh != nil && sh != "" && sh != "no_shard"
}

func isFinetune(w *normalize.Workload) bool {
	k, _ := w.Get("kind")
	return k == "finetune"
}

func isInt(v any) bool {
	n, ok := v.(int64)
	return ok && n > 0
}

// sourceOf maps where Target says a value came from to an input source:
// a manifest or a launcher is a file.
func sourceOf(from string) finding.Source {
	switch from {
	case "flag":
		return finding.SourceFlag
	case "project":
		return finding.SourceProject
	case "", "comment":
		return finding.SourceAssumed
	}
	return finding.SourceFile
}

// inputsInput renders the inputs for the rules (input.target.inputs):
// each name's value and source, so a rule can tell a stated input from
// an assumed one.
func inputsInput(in map[string]finding.Input) map[string]any {
	out := make(map[string]any, len(in))
	for k, v := range in {
		out[k] = map[string]any{"value": v.Value, "source": string(v.Source)}
	}
	return out
}

// attachEvidence records the inputs a finding's verdict rests on (names,
// else the rule's metadata inputs) and, when any of them was assumed,
// keeps the finding at info and names in its message the assumed inputs
// and how to state them: such a verdict may not hold for the value the
// run really uses.
func attachEvidence(f *finding.Finding, r *rules.Rule, names []string, in map[string]finding.Input) {
	if r == nil || len(r.Inputs) == 0 {
		return
	}
	if names == nil {
		names = r.Inputs
	}
	var ev []finding.Input
	for _, n := range r.Inputs {
		if x, ok := in[n]; ok && slices.Contains(names, n) {
			ev = append(ev, x)
		}
	}
	f.Evidence = ev
	assumed := finding.Assumed(ev)
	if len(assumed) == 0 {
		return
	}
	f.Severity = min(f.Severity, finding.SeverityInfo)
	f.Message += "; " + AssumedNote(assumed)
}

// unknownSettle says how to state the target inputs that inputs() leaves
// out when nothing names them: the GPU (lib.rego then assumes one with
// BF16) and the model. Other inputs are absent only where the subject has
// no use for them (a sequence length for a vLLM server, a GPU count for a
// run that shards nothing), so their absence withholds no fix.
var unknownSettle = map[string]string{
	"gpu":   "set --gpu or targets.gpu",
	"model": "set --model or targets.model",
}

// inputLabel names an input in a sentence.
var inputLabel = map[string]string{
	"gpu": "the GPU", "gpus": "the GPU count", "model": "the model", "seq_len": "the sequence length",
	"micro_batch": "the micro batch", "method": "the training method", "model_dtype": "the model's load dtype",
}

// withholdFix drops a finding's fixes when an input the rule's fix rests
// on (metadata fix_needs) is assumed or unknown: a bf16 fix breaks the run
// on a GPU without BF16, a memory fix sized on an assumed sequence length
// can run out of memory. The finding stays, and its message says what to
// state to get the fix.
func withholdFix(f *finding.Finding, r *rules.Rule, in map[string]finding.Input) {
	if r == nil || len(r.FixNeeds) == 0 || len(f.Fixes) == 0 {
		return
	}
	var labels, settle []string
	for _, n := range r.FixNeeds {
		x, ok := in[n]
		how := ""
		switch {
		case ok && x.Source == finding.SourceAssumed:
			if !slices.ContainsFunc(f.Evidence, func(e finding.Input) bool { return e.Name == n }) {
				how = x.Settle // else the message's "assumes" note says how
			}
		case !ok && unknownSettle[n] != "":
			how = unknownSettle[n]
		default:
			continue
		}
		labels = append(labels, inputLabel[n])
		if how != "" && !slices.Contains(settle, how) {
			settle = append(settle, how)
		}
	}
	if len(labels) == 0 {
		return
	}
	f.Fixes = nil
	verb := " is known"
	if len(labels) > 1 {
		verb = " are known"
	}
	note := "no fix until " + joinAnd(labels) + verb
	if len(settle) > 0 {
		note += ": " + strings.Join(settle, "; ")
	}
	f.Message += "; " + note
}

// joinAnd joins words as a sentence lists them: "a", "a and b", "a, b and c".
func joinAnd(w []string) string {
	if len(w) < 2 {
		return strings.Join(w, "")
	}
	return strings.Join(w[:len(w)-1], ", ") + " and " + w[len(w)-1]
}

// AssumedNote renders assumed inputs for a message: "assumes seq_len 2048
// (set targets.seq_len), micro_batch 1 (...)".
func AssumedNote(assumed []finding.Input) string {
	parts := make([]string, 0, len(assumed))
	for _, a := range assumed {
		p := a.Name + " " + a.Value
		if a.Settle != "" {
			p += " (" + a.Settle + ")"
		}
		parts = append(parts, p)
	}
	return "assumes " + strings.Join(parts, ", ")
}

// applyStated fills the workload inputs the file leaves open with those
// the project file states: sequence length, micro batch, method and the
// model's load dtype. What the file states wins.
func (t Target) applyStated(w *normalize.Workload, tw tuner.Workload) tuner.Workload {
	st := t.Stated
	if tw.Kind == tuner.Serve || tw.Kind == tuner.Inference {
		return tw
	}
	if st.SeqLen > 0 {
		if n, _ := w.Get("seq_len"); !isInt(n) {
			tw.SeqLen = st.SeqLen
		}
	}
	if st.MicroBatch > 0 {
		if n, _ := w.Get("batch.micro"); !isInt(n) {
			tw.MicroBatch = st.MicroBatch
		}
	}
	if _, ok := methodInFile(w); !ok && st.Method != "" {
		tw.Kind = map[string]tuner.WorkloadKind{"full": tuner.Train, "lora": tuner.LoRA, "qlora": tuner.QLoRA}[st.Method]
		if tw.Kind != tuner.Train && (tw.Precision == tuner.AMP || tw.Precision == tuner.PureBF16) {
			tw.Precision = tuner.BF16 // a frozen 16-bit base with adapters
		}
	}
	if d, _ := w.Get("model_dtype"); (d == nil || d == "") && st.ModelDtype == "bfloat16" &&
		tw.Kind == tuner.Train && tw.Precision == tuner.FP32 {
		// No mixed precision: training runs in the dtype the model was
		// loaded in, bf16 weights, gradients and optimizer states.
		tw.Precision = tuner.PureBF16
	}
	return tw
}
