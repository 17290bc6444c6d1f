package lint

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/gpulint/gpulint/internal/config"
	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/kube"
	"github.com/gpulint/gpulint/internal/normalize"
	"github.com/gpulint/gpulint/internal/recipe"
	"github.com/gpulint/gpulint/tuner"
)

// Target is the hardware and model a document is checked against, with
// where each part came from: a flag, the project file, or the configs.
type Target struct {
	GPU     *tuner.GPU
	GPUFrom string
	MIG     *tuner.MIGProfile
	// Parents, when the GPU came from a MIG profile name alone
	// (GPUFrom "mig-profile"), names every catalog GPU with that profile:
	// the verdict holds on each.
	Parents []string
	// Candidates, when the GPU came from a node label whose value several
	// catalog GPUs report (nvidia.com/gpu.memory), are all of them, the
	// least first (GPU is that one); CandidatesBy names the label and its
	// value. Each is estimated, and a verdict stands only where all agree.
	Candidates   []*tuner.GPU
	CandidatesBy string
	GPUs         int
	GPUsFrom     string
	// GPUsAt locates the world size in a related file (an Accelerate
	// config launching this DeepSpeed file), when it came from one.
	GPUsAt *relatedPath
	// GPUsRange locates the GPU count in this manifest (the container's
	// resource limits), when it came from there.
	GPUsRange *finding.Range
	// GPUAt and ModelAt locate the GPU and the model where they were read:
	// the node label or instance type in this manifest, or a related file
	// (the manifest or launch command that gave them); nil when they came
	// from a flag, the project file or the catalog.
	GPUAt, ModelAt *finding.Range
	Nodes          int
	Model          *tuner.Model
	ModelID        string
	// ModelSource says where Model's architecture was read: "catalog",
	// the config.json of a Hugging Face cache snapshot or of a model
	// directory (its path).
	ModelSource string
	// ModelByName is set when nothing held ModelID and Model is the
	// catalog model its name alone suggests (tuner.Catalog.ModelByName,
	// or a catalog name a file's path to unreadable weights ends in): an
	// assumed input, so every verdict resting on it is at most info.
	ModelByName bool
	// ModelNamedBy, when ModelByName is set and the name came from a hint
	// rather than the model the file states (the pod's ai.gke.io/model
	// label), says what gave the name.
	ModelNamedBy string
	// ModelFrom says where ModelID came from: flag, project, manifest or
	// config.
	ModelFrom string
	// Stated is the project file's target for this path: the inputs a
	// file may leave to its script (seq_len, micro_batch, method,
	// model_dtype, optimizer, attention, ...), each with its line.
	Stated config.TargetRule
	// VLLMRelease is the vLLM release the container states (its image tag
	// or a pip pin), "" when it states none; VLLMReleaseFrom says which
	// and VLLMReleaseAt where. The serving estimate follows it
	// (tuner.Workload.VLLMVersion).
	VLLMRelease     string
	VLLMReleaseFrom string
	VLLMReleaseAt   *finding.Range
	// Headroom is the share of capacity a workload must leave free (the
	// project's vram-overcommit headroom); 0 means the default.
	Headroom float64
	// Overridden lists the flag and project targets the file's own
	// statements overrode, and what a recipe's comment states that a
	// stated source contradicts.
	Overridden []Override
	// Comment is the hardware a recipe's leading comment states, nil when
	// it states none: assumed inputs, taken only for what nothing else
	// states (the GPU, and the world size with its sharding).
	Comment *commentTarget
	// Launched is the config the launch of a recipe passes: the DeepSpeed
	// config on its command line, else its Accelerate config (accelerate
	// launch --config_file, trl --accelerate_config); its sharding is the
	// recipe's where the recipe states none.
	Launched *relatedDoc
}

// launchedWork is the workload of the Accelerate config the launch
// passes, nil when there is none.
func (t Target) launchedWork() *normalize.Workload {
	if t.Launched == nil {
		return nil
	}
	return t.Launched.work
}

// commentTarget is a recipe comment's hardware statement, where it is, and
// which parts the target took: the GPU, and the GPU count with the
// sharding (the two divide the model states together, so they are taken
// together, and only when no launcher, flag or project file gives a GPU
// count).
type commentTarget struct {
	hw recipe.Hardware
	at finding.Range
	// gpus of hw.Variants, resolved when the target takes the GPU.
	variantGPUs []*tuner.GPU
	// setups are the alternatives a comment naming several setups states
	// (hw.Or), one per catalog GPU each may mean, resolved when the target
	// takes them; the target's GPU and count are the first's.
	setups   []commentSetup
	gpu      bool
	gpus     bool
	sharding bool
}

// commentSetup is one setup a recipe's comment names: its statement,
// narrowed to one catalog GPU, and that GPU.
type commentSetup struct {
	hw  recipe.Hardware
	gpu *tuner.GPU
}

// setupsTaken are the setups the target took from a comment that names
// several; nil otherwise.
func (c *commentTarget) setupsTaken() []commentSetup {
	if c == nil || !c.gpu {
		return nil
	}
	return c.setups
}

// says names the comment as evidence does: "as the recipe's comment at
// line 13 says".
func (c *commentTarget) says() string {
	return fmt.Sprintf("as the recipe's comment at line %d says", c.hw.Line)
}

// setupsString lists the setups a comment names, as it states them.
func (c *commentTarget) setupsString() string {
	var ss []string
	for _, h := range append([]recipe.Hardware{c.hw}, c.hw.Or...) {
		h.Or = nil
		ss = append(ss, h.String())
	}
	return joinOr(ss)
}

// variants are the catalog GPUs the comment may mean when it names a GPU
// without its memory and the target took its GPU (the least of them);
// nil otherwise.
func (c *commentTarget) variants() []string {
	if c == nil || !c.gpu || len(c.variantGPUs) < 2 {
		return nil
	}
	return c.hw.Variants
}

// gpusTaken is the world size the comment gives the memory model, 0 when
// the target did not take the comment's count.
func (c *commentTarget) gpusTaken() int {
	if c == nil || !c.gpus {
		return 0
	}
	return c.hw.GPUs()
}

// shardingTaken is the sharding the comment gives the memory model, none
// when the recipe states its own or the count was not taken.
func (c *commentTarget) shardingTaken() recipe.Sharding {
	if c == nil || !c.sharding {
		return recipe.Sharding{}
	}
	return c.hw.Sharding
}

// targetHints are what a manifest says about the hardware a container
// runs on.
type targetHints struct {
	Product string // nvidia.com/gpu.product node label
	// Hints are the pod's other statements of its nodes' GPU (GKE
	// accelerator, instance type, Karpenter labels), each located by At.
	Hints    []kube.NodeHint
	At       func(path []any) finding.Range
	GPUs     int    // the container's GPU limit, or a launcher's world size
	GPUsFrom string // where GPUs came from (default "manifest")
	GPUsAt   *relatedPath
	// GPUsRange locates GPUs in this manifest (the container's resource
	// limits), when it came from there.
	GPUsRange  *finding.Range
	MIGProfile string // the container's nvidia.com/mig-<profile> resource
	Model      string
	// ProductAt and ModelAt locate Product and Model: in this manifest, or
	// in another file (the launch graph's manifest or script).
	ProductAt, ModelAt *finding.Range
	// ModelName is a short name of the model a label gives (GKE's
	// ai.gke.io/model), located by ModelNameAt, and By names the label:
	// a name-only hint, taken through the catalog's name mapping when the
	// model the file states is unknown, and a conflict to report when it
	// maps to another model than the one stated.
	ModelName   string
	ModelNameAt *finding.Range
	ModelNameBy string
	// Comment is the hardware statement of a recipe's leading comment.
	Comment *commentTarget
	// Launched is the DeepSpeed or Accelerate config a recipe's launch
	// passes.
	Launched *relatedDoc
}

// TargetResolver resolves targets against the GPU and model catalogs. It
// is safe for concurrent use.
type TargetResolver struct {
	cat *tuner.Catalog
	// hfCache is the Hugging Face hub cache directory read before the
	// catalog; empty when there is none.
	hfCache string
	mu      sync.Mutex
	models  map[string]resolvedModel // cache snapshots and model directories read once
}

// resolvedModel is a model read from disk and the config.json it came
// from; a nil model with a source records a cache miss.
type resolvedModel struct {
	m      *tuner.Model
	source string
}

// NewTargetResolver loads the embedded catalogs.
func NewTargetResolver() (*TargetResolver, error) {
	cat, err := tuner.LoadCatalog()
	if err != nil {
		return nil, fmt.Errorf("load catalogs: %w", err)
	}
	return &TargetResolver{cat: cat, models: map[string]resolvedModel{}}, nil
}

// Catalog returns the GPU and model catalog.
func (r *TargetResolver) Catalog() *tuner.Catalog { return r.cat }

// CheckFlags validates --gpu and --model up front, so an unknown name is a
// usage error with a suggestion rather than a silent no-op.
func (r *TargetResolver) CheckFlags(gpu, model string) error {
	if gpu != "" {
		if _, ok := r.gpu(gpu); !ok {
			msg := fmt.Sprintf("unknown GPU %q", gpu)
			if s := r.cat.Suggest(gpu); s != "" {
				msg += fmt.Sprintf(" (did you mean %s?)", s)
			}
			return fmt.Errorf("%s; `gpulint estimate --list-gpus` lists the catalog", msg)
		}
	}
	if model != "" {
		if _, _, err := r.model(model, true); err != nil {
			return err
		}
	}
	return nil
}

// gpu finds a GPU by catalog name, alias or node label (with -MIG- or
// -SHARED suffixes).
func (r *TargetResolver) gpu(name string) (tuner.ProductLabel, bool) {
	// A single-strategy label names the slice: the catalog's name lookup
	// would read past the -MIG- suffix and give the whole GPU.
	if pl, ok := r.cat.ParseProductLabel(name); ok && pl.MIGProfileName != "" {
		return pl, true
	}
	if g, ok := r.cat.GPU(name); ok {
		return tuner.ProductLabel{GPU: g}, true
	}
	return r.cat.ParseProductLabel(name)
}

// Model finds a model by id: a snapshot in the Hugging Face cache, the
// catalog, or a local directory holding a Hugging Face config.json.
// strict makes an unknown id an error.
func (r *TargetResolver) Model(id string, strict bool) (*tuner.Model, error) {
	m, _, err := r.model(id, strict)
	return m, err
}

// ModelWithSource is Model that also says where the architecture was
// read: "catalog" or the path of the config.json.
func (r *TargetResolver) ModelWithSource(id string, strict bool) (*tuner.Model, string, error) {
	return r.model(id, strict)
}

func (r *TargetResolver) model(id string, strict bool) (*tuner.Model, string, error) {
	// A snapshot that cannot be read is an error for a flag; for what a
	// file names, the catalog answers instead.
	switch m, src, ok, err := r.cachedModel(id); {
	case err != nil && strict:
		return nil, "", err
	case ok && err == nil:
		return m, src, nil
	}
	if m, ok := r.cat.Model(id); ok {
		return m, "catalog", nil
	}
	if st, err := os.Stat(id); err == nil && st.IsDir() {
		abs, _ := filepath.Abs(id)
		r.mu.Lock()
		defer r.mu.Unlock()
		if rm, ok := r.models[abs]; ok {
			return rm.m, rm.source, nil
		}
		m, err := tuner.ModelFromDir(os.DirFS(abs))
		if err != nil {
			return nil, "", fmt.Errorf("model %s: %w", id, err)
		}
		rm := resolvedModel{m, filepath.Join(abs, "config.json")}
		r.models[abs] = rm
		return rm.m, rm.source, nil
	}
	if strict {
		return nil, "", r.modelError(id)
	}
	return nil, "", nil
}

// cachedModel reads id from the Hugging Face cache, once per run: ok is
// false when the cache has no snapshot of it.
func (r *TargetResolver) cachedModel(id string) (*tuner.Model, string, bool, error) {
	if r.hfCache == "" || !strings.Contains(id, "/") {
		return nil, "", false, nil
	}
	key := "hf:" + id
	r.mu.Lock()
	defer r.mu.Unlock()
	if rm, ok := r.models[key]; ok {
		return rm.m, rm.source, rm.m != nil, nil
	}
	m, dir, ok, err := tuner.ModelFromHFCache(os.DirFS(r.hfCache), id)
	if err != nil {
		return nil, "", true, fmt.Errorf("model %s: %w", id, err)
	}
	rm := resolvedModel{}
	if ok {
		rm = resolvedModel{m, filepath.Join(r.hfCache, filepath.FromSlash(dir), "config.json")}
	}
	r.models[key] = rm
	return rm.m, rm.source, ok, nil
}

// modelError says that id is neither a catalog model nor a model
// directory, with the closest catalog id.
func (r *TargetResolver) modelError(id string) error {
	msg := fmt.Sprintf("unknown model %q", id)
	var ids []string
	for _, m := range r.cat.Models() {
		ids = append(ids, m.ID)
	}
	if s := normalize.DidYouMean(id, ids); s != "" {
		msg += fmt.Sprintf(" (did you mean %s?)", s)
	}
	return fmt.Errorf("%s: not in the catalog and not a directory with a config.json", msg)
}

// Resolve combines flags, the project file and what the document and its
// manifest say. What the file states for itself (its manifest's GPU label
// or node hints, its GPU count, the model it serves or trains) wins for
// that file: flags and the project file are defaults for what a file does
// not state, and a default that disagrees with the file is recorded in
// Overridden. Otherwise flags win over the project file, which wins over
// the rest of what the configs say.
func (l *Linter) resolveTarget(path string, proj *config.Project, w *normalize.Workload, h targetHints) Target {
	r := l.deps.Targets
	var t Target
	pt := proj.Target(path)
	setGPU := func(name, from string) bool {
		pl, ok := r.gpu(name)
		if !ok {
			return false
		}
		if pl.MIGProfileName != "" && pl.MIG == nil {
			// A slice the GPU does not have: no node carries the label
			// (mig-profile-invalid reports it), and the whole GPU is not
			// what the pod would get.
			return false
		}
		t.GPU, t.GPUFrom = pl.GPU, from
		if pl.MIG != nil {
			t.MIG = pl.MIG
		}
		return true
	}
	// The default the flags or the project file give, and where from.
	gpuDefault, gpuDefaultFrom := "", ""
	switch {
	case l.opts.GPU != "":
		gpuDefault, gpuDefaultFrom = l.opts.GPU, "flag"
	case pt != nil && pt.GPU != "":
		gpuDefault, gpuDefaultFrom = pt.GPU, "project"
	}
	switch {
	case h.Product != "" && setGPU(h.Product, "manifest"):
		t.GPUAt = h.ProductAt
	default:
		if name, at, ok := hintedGPU(h.Hints); ok && setGPU(name, "manifest") && h.At != nil {
			r := h.At(at)
			t.GPUAt = &r
		} else if !ok {
			r.takeMemoryCandidates(&t, h)
		}
	}
	r.checkMemoryLabel(&t, h)
	if t.GPU != nil && gpuDefault != "" {
		if pl, ok := r.gpu(gpuDefault); ok && pl.GPU.Name != t.GPU.Name {
			t.Overridden = append(t.Overridden, Override{Name: "GPU", File: t.GPU.Name, At: t.GPUAt, Default: pl.GPU.Name, From: gpuDefaultFrom})
		}
	}
	if t.GPU == nil && gpuDefault != "" {
		setGPU(gpuDefault, gpuDefaultFrom)
	}
	if t.GPU != nil && h.MIGProfile != "" {
		if p, ok := t.GPU.MIGProfile(h.MIGProfile); ok {
			t.MIG = p
		}
	}
	gpusDefault, gpusDefaultFrom := 0, ""
	switch {
	case l.opts.GPUs > 0:
		gpusDefault, gpusDefaultFrom = l.opts.GPUs, "flag"
	case pt != nil && pt.GPUs > 0:
		gpusDefault, gpusDefaultFrom = pt.GPUs, "project"
	}
	switch {
	case h.GPUs > 0:
		t.GPUs, t.GPUsFrom, t.GPUsAt, t.GPUsRange = h.GPUs, cmp.Or(h.GPUsFrom, "manifest"), h.GPUsAt, h.GPUsRange
		if gpusDefault > 0 && gpusDefault != h.GPUs {
			t.Overridden = append(t.Overridden, Override{Name: "GPU count", File: fmt.Sprint(h.GPUs), At: h.GPUsRange,
				Default: fmt.Sprint(gpusDefault), From: gpusDefaultFrom})
		}
	case gpusDefault > 0:
		t.GPUs, t.GPUsFrom = gpusDefault, gpusDefaultFrom
	default:
		if v, ok := w.Get("parallel.world_size"); ok {
			if n, ok := v.(int64); ok && n > 0 {
				t.GPUs, t.GPUsFrom = int(n), "config"
			}
		}
	}
	t.Launched = h.Launched
	if h.Comment != nil {
		l.takeComment(&t, w, h.Comment)
	}
	if pt != nil {
		t.Nodes = pt.Nodes
	}
	if pt != nil {
		t.Stated = *pt
		t.applyStatedGPUMemory()
	}
	modelDefault, modelDefaultFrom := "", ""
	switch {
	case l.opts.Model != "":
		modelDefault, modelDefaultFrom = l.opts.Model, "flag"
	case pt != nil && pt.Model != "":
		modelDefault, modelDefaultFrom = pt.Model, "project"
	}
	modelID, modelFrom := "", ""
	var modelAt *finding.Range
	var modelPath []any
	switch {
	case h.Model != "":
		modelID, modelFrom = h.Model, "manifest"
		t.ModelAt, modelAt = h.ModelAt, h.ModelAt
	default:
		if v, ok := w.Get("model"); ok {
			if id, _ := v.(string); id != "" {
				modelID, modelFrom = id, "config"
				modelPath = w.Paths["model"]
			}
		}
	}
	switch {
	case modelID != "" && modelDefault != "":
		if modelDefault != modelID {
			t.Overridden = append(t.Overridden, Override{Name: "model", File: modelID, At: modelAt, Path: modelPath, Default: modelDefault, From: modelDefaultFrom})
		}
	case modelDefault != "":
		modelID, modelFrom = modelDefault, modelDefaultFrom
	}
	if modelID != "" {
		t.ModelID, t.ModelFrom = modelID, modelFrom
		t.Model, t.ModelSource, _ = r.model(modelID, false)
		if t.Model != nil && t.ModelSource == "catalog" && (modelFrom == "manifest" || modelFrom == "config") && mappedByLastName(t.Model, modelID) {
			// The catalog matched only the id's last component: a path to
			// weights gpulint cannot read ("/data/llama-3.2-11b-vision-
			// instruct"), or another organisation's repository of that
			// name ("acme/Llama-3.2-11B-Vision-Instruct"). The name, not a
			// config.json, says which model it holds, so the model is
			// assumed as any name mapping is (tuner.Catalog.ModelByName). A
			// flag or project file naming it states it.
			t.ModelByName = true
		}
		if t.Model == nil {
			if m, _, ok := r.cat.ModelByName(modelID); ok {
				t.Model, t.ModelSource, t.ModelByName = m, "catalog", true
			}
		}
	}
	r.modelLabel(&t, h, modelFrom == "flag" || modelFrom == "project", modelID == "" || weightsPath(modelID))
	return t
}

// modelLabel weighs a label's model name (targetHints.ModelName) against
// the target's model. When nothing gave a model gpulint knows, the one
// catalog model the label's name maps to (tuner.Catalog.ModelByName) is
// assumed, located at the label. When a model is known and the label maps
// to another, the stated model wins and the disagreement is recorded
// (Overridden, From "label"). A flag or the project file that names the
// model settles it: the label is not read. unnamed is set when the file
// names no model id (none, or only a path to its weights): only then may
// the label supply one; a model id the catalog lacks stays unknown.
func (r *TargetResolver) modelLabel(t *Target, h targetHints, given, unnamed bool) {
	if h.ModelName == "" || given {
		return
	}
	m, _, ok := r.cat.ModelByName(h.ModelName)
	if !ok {
		return
	}
	switch {
	case t.Model == nil && unnamed:
		t.ModelID, t.ModelFrom, t.ModelAt = h.ModelName, "manifest", h.ModelNameAt
		t.Model, t.ModelSource, t.ModelByName, t.ModelNamedBy = m, "catalog", true, h.ModelNameBy
	case t.Model != nil && m != t.Model:
		t.Overridden = append(t.Overridden, Override{Name: "model", File: t.ModelID, At: h.ModelNameAt,
			Default: h.ModelName, From: "label", By: h.ModelNameBy, Maps: m.ID})
	}
}

// weightsPath reports a model argument that is a path to weights (a
// directory in the container, a volume or a bucket URI) rather than a
// model id.
func weightsPath(id string) bool {
	return strings.HasPrefix(id, "/") || strings.HasPrefix(id, "./") || strings.HasPrefix(id, "../") || strings.Contains(id, "://")
}

// Override is a flag or project-file target that a file's own statement
// overrode for that file: what (GPU, GPU count, model), the file's value
// and where it is stated (At in a manifest, else Path in the subject's
// document), and the default with where it came from (flag or project).
type Override struct {
	Name, File string
	At         *finding.Range
	Path       []any
	Default    string
	From       string
	// By names the source of File when From is "comment": what states the
	// value used instead of the comment's; when From is "label", the label;
	// when From is "memory", the nvidia.com/gpu.memory label and its value
	// (Default then lists the GPUs it names).
	By string
	// Maps is the catalog model a label's name maps to (From "label").
	Maps string
}

// hintedGPU is the one GPU the pod's hardware hints agree on, and where
// the first hint naming it is. Hints the table does not know are left
// out, and so is nvidia.com/gpu.memory, whose GPUs are candidates
// (memoryHint); hints naming different GPUs (several In values, or labels
// that disagree) settle nothing, and the disagreement is a rule's finding.
func hintedGPU(hints []kube.NodeHint) (string, []any, bool) {
	var gpu string
	var at []any
	for _, h := range hints {
		if h.Unknown() || h.Label == kube.GPUMemoryLabel {
			continue
		}
		if len(h.GPUs) != 1 || (gpu != "" && h.GPUs[0] != gpu) {
			return "", nil, false
		}
		if gpu == "" {
			gpu, at = h.GPUs[0], h.Path
		}
	}
	return gpu, at, gpu != ""
}

// memoryHint is what the pod's nvidia.com/gpu.memory statements say: the
// catalog GPUs every one of them names (a node selector and an affinity
// In on the label must both hold), where the first is, and the label with
// its values as evidence names them. ok is false when the pod states none
// the table knows.
func memoryHint(hints []kube.NodeHint) (gpus []string, at []any, by string, ok bool) {
	for _, h := range hints {
		if h.Label != kube.GPUMemoryLabel || h.Unknown() {
			continue
		}
		if !ok {
			gpus, at, by, ok = slices.Clone(h.GPUs), h.Path, h.Label+" "+strings.Join(h.Values, " or "), true
			continue
		}
		gpus = slices.DeleteFunc(gpus, func(g string) bool { return !slices.Contains(h.GPUs, g) })
	}
	return gpus, at, by, ok
}

// nodeGPU is the one GPU a pod's hardware hints settle: hintedGPU's, or,
// when the pod states no other hint the table knows, the one catalog GPU
// its nvidia.com/gpu.memory statements name (memoryHint), at the first of
// them. Several memory candidates settle no one GPU here: a Target takes
// them as candidates (takeMemoryCandidates).
func nodeGPU(hints []kube.NodeHint) (string, []any, bool) {
	if name, at, ok := hintedGPU(hints); ok {
		return name, at, true
	}
	for _, h := range hints {
		if !h.Unknown() && h.Label != kube.GPUMemoryLabel {
			return "", nil, false // other hints that disagree settle nothing
		}
	}
	if gpus, at, _, ok := memoryHint(hints); ok && len(gpus) == 1 {
		return gpus[0], at, true
	}
	return "", nil, false
}

// takeMemoryCandidates gives a target that no product label or other
// hint settles the GPUs its nvidia.com/gpu.memory selector names: the
// least of them as its GPU, all as candidates. GPUs that differ in what
// the rules read besides memory (vendor, BF16, FP8, FP4) give none: a
// precision verdict would hold on some candidates only.
func (r *TargetResolver) takeMemoryCandidates(t *Target, h targetHints) {
	names, at, by, ok := memoryHint(h.Hints)
	if !ok || len(names) == 0 {
		return
	}
	var gpus []*tuner.GPU
	for _, n := range names {
		pl, ok := r.gpu(n)
		if !ok || pl.MIG != nil {
			return // a GPU the catalog lost: judge none
		}
		gpus = append(gpus, pl.GPU)
	}
	first := gpus[0]
	for _, g := range gpus[1:] {
		if g.Vendor != first.Vendor || g.SupportsBF16() != first.SupportsBF16() ||
			g.SupportsFP8() != first.SupportsFP8() || g.SupportsFP4() != first.SupportsFP4() {
			return
		}
	}
	slices.SortStableFunc(gpus, func(a, b *tuner.GPU) int { return cmp.Compare(a.UsableBytes, b.UsableBytes) })
	t.GPU, t.GPUFrom = gpus[0], "manifest"
	if len(gpus) > 1 {
		t.Candidates, t.CandidatesBy = gpus, by
	}
	if h.At != nil {
		rg := h.At(at)
		t.GPUAt = &rg
	}
}

// checkMemoryLabel records a pod's nvidia.com/gpu.memory selector that
// names none of the GPU its product label or another hint names: no node
// carries both, one of the two is stale. The product (or hint) is used
// (Override, From "memory", at the memory label).
func (r *TargetResolver) checkMemoryLabel(t *Target, h targetHints) {
	if t.GPU == nil || t.GPUFrom != "manifest" || t.Candidates != nil {
		return
	}
	names, at, by, ok := memoryHint(h.Hints)
	if !ok || slices.Contains(names, t.GPU.Name) || h.At == nil {
		return
	}
	rg := h.At(at)
	what := "no GPU"
	if len(names) > 0 {
		what = joinOr(names)
	}
	t.Overridden = append(t.Overridden, Override{Name: "GPU", File: t.GPU.Name, At: &rg, Default: what, From: "memory", By: by})
}

// Input renders the target for the rules.
func (t Target) Input() map[string]any {
	out := map[string]any{}
	if t.GPU != nil {
		g := map[string]any{
			"name":     t.GPU.Name,
			"key":      t.GPU.Key,
			"vendor":   t.GPU.Vendor,
			"memory":   t.GPU.UsableBytes,
			"bf16":     t.GPU.SupportsBF16(),
			"fp8":      t.GPU.SupportsFP8(),
			"fp4":      t.GPU.SupportsFP4(),
			"mig":      t.GPU.MIGCapable(),
			"from":     t.GPUFrom,
			"cc_major": int64(t.GPU.CC.Major),
			"cc_minor": int64(t.GPU.CC.Minor),
			"cc":       t.GPU.CC.String(),
		}
		out["gpu"] = g
	}
	if t.MIG != nil {
		out["mig_profile"] = map[string]any{"name": t.MIG.Name, "memory": t.MIG.MemoryBytes, "compute_slices": int64(t.MIG.ComputeSlices)}
	}
	if t.Nodes > 0 {
		out["nodes"] = int64(t.Nodes)
	}
	if t.GPUs > 0 {
		out["gpus"] = int64(t.GPUs)
		out["gpus_from"] = t.GPUsFrom
		if t.GPUsAt != nil {
			out["gpus_related"] = map[string]any{"ref": t.GPUsAt.ref, "path": t.GPUsAt.path, "message": t.GPUsAt.message}
		}
	}
	if t.ModelID != "" {
		m := map[string]any{"id": t.ModelID}
		if t.Model != nil {
			m["params"] = t.Model.Params()
			m["heads"] = int64(t.Model.Heads)
			m["kv_heads"] = int64(t.Model.KVHeads)
			m["layers"] = int64(t.Model.Layers)
			m["max_positions"] = int64(t.Model.MaxPositions)
			m["known"] = true
			m["model_type"] = strings.ToLower(t.Model.ModelType)
			m["dtype"] = t.Model.Dtype
		}
		out["model"] = m
	}
	return out
}

// relatedPath names a location in a related file for the rules: ref is
// the name the rules give back in a finding's related list.
type relatedPath struct {
	ref     string
	path    []any
	message string
}

// overrideFindings reports each flag or project target the subject's file
// overrode, at the file's statement, naming both values and sources.
func (l *Linter) overrideFindings(s *subject) []finding.Finding {
	r, ok := l.deps.Catalog.Lookup("target-stated-in-file")
	if !ok {
		return nil
	}
	var out []finding.Finding
	for _, o := range s.tgt.Overridden {
		at := s.docStart()
		switch {
		case o.At != nil:
			at = *o.At
		case len(o.Path) > 0:
			at = s.locate(o.Path)
		}
		if o.From == "label" {
			f := finding.Finding{
				Message: fmt.Sprintf("%s names model %s, not the stated model %s; the stated model is used, correct whichever is stale (by name the label is %s)",
					o.By, o.Default, o.File, o.Maps),
				Range: at,
			}
			if w, ok := s.winnerAt(o.Name); ok {
				f.Related = []finding.Related{{Range: w, Message: fmt.Sprintf("model %s is stated here", o.File)}}
			}
			out = append(out, l.stamp(r, f, "info"))
			continue
		}
		if o.From == "memory" {
			f := finding.Finding{
				Message: fmt.Sprintf("%s MiB is the memory of %s, not of %s, which the node's GPU is taken to be; no node has both labels, correct whichever is stale",
					o.By, o.Default, o.File),
				Range: at,
			}
			if w, ok := s.winnerAt(o.Name); ok {
				f.Related = []finding.Related{{Range: w, Message: fmt.Sprintf("GPU %s is stated here", o.File)}}
			}
			out = append(out, l.stamp(r, f, "info"))
			continue
		}
		if o.From == "comment" {
			f := finding.Finding{
				Message: fmt.Sprintf("the comment states %s %s, but %s gives %s, which is used for it; correct whichever is stale",
					o.Name, o.Default, o.By, o.File),
				Range: at,
			}
			if w, ok := s.winnerAt(o.Name); ok {
				f.Related = []finding.Related{{Range: w, Message: fmt.Sprintf("%s %s is stated here", o.Name, o.File)}}
			}
			out = append(out, l.stamp(r, f, "info"))
			continue
		}
		from := map[string]string{"flag": "the --" + statedKeys[o.Name] + " flag", "project": "the project file's targets"}[o.From]
		f := finding.Finding{
			Message: fmt.Sprintf("this file states %s %s, which is used for it; %s gives %s", o.Name, o.File, from, o.Default),
			Range:   at,
		}
		if o.From == "project" {
			if p, ok := s.tgt.projectAt(o.Name); ok {
				f.Related = []finding.Related{{Range: p, Message: fmt.Sprintf("the project file gives %s %s here", o.Name, o.Default)}}
			}
		}
		out = append(out, l.stamp(r, f, ""))
	}
	return out
}

// takeComment fills the target with what a recipe's comment states and
// nothing else does: the GPU when no manifest, launch, flag or project
// file names one, and the GPU count with the comment's sharding when no
// launch, flag, project file or recipe key gives a count. A stated source
// that disagrees with the comment wins and the disagreement is recorded
// (Overridden, From "comment"), at the comment.
func (l *Linter) takeComment(t *Target, w *normalize.Workload, c *commentTarget) {
	t.Comment = c
	at := c.at
	conflict := func(name, used, by, stated string) {
		t.Overridden = append(t.Overridden, Override{Name: name, File: used, At: &at, Default: stated, From: "comment", By: by})
	}
	if len(c.hw.Or) > 0 {
		l.takeSetups(t, c, conflict)
		return
	}
	if pl, ok := l.deps.Targets.gpu(c.hw.GPU); ok {
		switch {
		case t.GPU == nil:
			t.GPU, t.GPUFrom, t.GPUAt, c.gpu = pl.GPU, "comment", &at, true
			c.variantGPUs = nil
			for _, name := range c.hw.Variants {
				if v, ok := l.deps.Targets.gpu(name); ok {
					c.variantGPUs = append(c.variantGPUs, v.GPU)
				}
			}
			if len(c.variantGPUs) != len(c.hw.Variants) {
				c.variantGPUs = nil // a variant the catalog lost: judge none
				t.GPU, t.GPUFrom, t.GPUAt, c.gpu = nil, "", nil, false
			}
		case !l.commentMeans(c.hw, pl.GPU.Name, t.GPU.Name):
			// A GPU named without its memory ("8xA100") agrees with
			// every variant it may mean.
			conflict("GPU", t.GPU.Name, statedBy(t.GPUFrom, "--gpu"), c.hw.Named())
		}
	}
	switch n := c.hw.GPUs(); {
	case n == 0:
		// A statement in the recipe's body may name the GPU alone.
	case t.GPUs > 0:
		if n != t.GPUs {
			conflict("GPU count", fmt.Sprint(t.GPUs), statedBy(t.GPUsFrom, "--gpus"),
				fmt.Sprintf("%d (%s)", n, c.hw.String()))
		}
	default:
		c.gpus = true
	}
	if c.hw.Sharding.Scheme == "" {
		return
	}
	own, by := recipe.StatedSharding(w), "the recipe's FSDP settings"
	if own.Scheme == "zero" {
		by = "the DeepSpeed config the recipe names"
	}
	if lw := t.launchedWork(); own.Scheme == "" && recipe.DeepSpeedPath(w) == "" && lw != nil {
		own, by = recipe.StatedSharding(lw), "the Accelerate config the launch passes"
		if k, _ := lw.Get("kind"); k == "deepspeed" {
			by = "the DeepSpeed config the launch passes"
		}
	}
	switch {
	case own.Scheme == "" && recipe.DeepSpeedPath(w) == "":
		c.sharding = c.gpus
	case own.Scheme != "" && !own.Agrees(c.hw.Sharding):
		conflict("sharding", own.String(), by, c.hw.Sharding.String())
	}
}

// commentMeans reports whether a comment's statement h, which resolved to
// the catalog GPU resolved, may mean the catalog GPU name: resolved itself
// or, for a GPU named without its memory, any of its variants.
func (l *Linter) commentMeans(h recipe.Hardware, resolved, name string) bool {
	if resolved == name {
		return true
	}
	for _, v := range h.Variants {
		if pl, ok := l.deps.Targets.gpu(v); ok && pl.GPU.Name == name {
			return true
		}
	}
	return false
}

// takeSetups fills the target from a comment that names several setups
// as alternatives ("tested on 8xA100 machine and 16xH100 machines"): one
// setup per catalog GPU each may mean, the target's GPU and count the
// first's, each estimated in turn (estimateSetups). A GPU or a count
// stated elsewhere wins: it is checked against the setups, a
// disagreement with all of them recorded, and no setup is taken; a stated
// GPU whose setups all give one count takes that count.
func (l *Linter) takeSetups(t *Target, c *commentTarget, conflict func(name, used, by, stated string)) {
	var setups []commentSetup
	for _, h := range append([]recipe.Hardware{c.hw}, c.hw.Or...) {
		names := h.Variants
		if len(names) == 0 {
			names = []string{h.GPU}
		}
		for _, n := range names {
			pl, ok := l.deps.Targets.gpu(n)
			if !ok || pl.MIG != nil {
				return // a GPU the catalog lost: judge none
			}
			one := h
			one.GPU, one.Variants, one.Or = pl.GPU.Name, nil, nil
			setups = append(setups, commentSetup{hw: one, gpu: pl.GPU})
		}
	}
	// matches reports whether a setup names the GPU stated elsewhere and,
	// with count, the stated GPU count too.
	matches := func(count bool) bool {
		for _, s := range setups {
			if (t.GPU == nil || s.gpu.Name == t.GPU.Name) && (!count || t.GPUs == 0 || s.hw.GPUs() == t.GPUs) {
				return true
			}
		}
		return false
	}
	switch {
	case !matches(false):
		conflict("GPU", t.GPU.Name, statedBy(t.GPUFrom, "--gpu"), c.setupsString())
	case !matches(true):
		conflict("GPU count", fmt.Sprint(t.GPUs), statedBy(t.GPUsFrom, "--gpus"), c.setupsString())
	}
	if t.GPU != nil && t.GPUs == 0 {
		// The stated GPU picks the setups that name it; when they all
		// give one count, the count is taken from them.
		var picked []commentSetup
		for _, s := range setups {
			if s.gpu.Name == t.GPU.Name {
				picked = append(picked, s)
			}
		}
		if len(picked) > 0 && !slices.ContainsFunc(picked, func(s commentSetup) bool { return s.hw.GPUs() != picked[0].hw.GPUs() }) {
			c.hw, c.gpus = picked[0].hw, true
		}
	}
	if t.GPU != nil || t.GPUs > 0 {
		return
	}
	at := c.at
	c.setups = setups
	t.GPU, t.GPUFrom, t.GPUAt, c.gpu, c.gpus = setups[0].gpu, "comment", &at, true, true
}

// statedBy names where a target value came from, in a sentence; flag is
// the flag that gives it.
func statedBy(from, flag string) string {
	switch from {
	case "flag":
		return "the " + flag + " flag"
	case "project":
		return "the project file's targets"
	case "config":
		return "the recipe's own settings"
	case "launcher", "accelerate":
		return "the command that launches this file"
	}
	return "the pod that launches this file"
}

// statedKeys are the project target's keys for what a file may state
// (Override.Name).
var statedKeys = map[string]string{"GPU": "gpu", "GPU count": "gpus", "model": "model"}

// projectAt locates the project target's key that gives what (GPU, GPU
// count or model): its value in the project file; false when the target
// does not set it.
func (t Target) projectAt(what string) (finding.Range, bool) {
	pos, ok := t.Stated.At[statedKeys[what]]
	if !ok || t.Stated.File == "" {
		return finding.Range{}, false
	}
	return finding.Range{File: t.Stated.File, Start: pos, End: pos}, true
}

// winnerAt locates the statement that won over a recipe comment's value
// (what: GPU, GPU count or sharding) where it is written: the pod's GPU
// label, the launch's process count, the DeepSpeed config's stage, the
// recipe's FSDP key or the project file's target key. false for a flag.
func (s *subject) winnerAt(what string) (finding.Range, bool) {
	t := s.tgt
	if from := map[string]string{"GPU": t.GPUFrom, "GPU count": t.GPUsFrom, "model": t.ModelFrom}[what]; from == "project" {
		return t.projectAt(what)
	}
	switch what {
	case "GPU":
		if t.GPUAt != nil && t.GPUFrom == "manifest" {
			return *t.GPUAt, true
		}
	case "GPU count":
		if s.launcher != nil && t.GPUsAt != nil {
			return s.launcher.locate(t.GPUsAt.path), true
		}
	case "model":
		if t.ModelAt != nil && t.ModelFrom == "manifest" {
			return *t.ModelAt, true
		}
		if p := s.work.Paths["model"]; len(p) > 0 && t.ModelFrom == "config" {
			return s.locate(p), true
		}
	case "sharding":
		if s.deepspeed != nil {
			return s.deepspeed.locate([]any{"zero_optimization", "stage"}), true
		}
		if p := s.work.Paths["fsdp.sharding"]; len(p) > 0 {
			return s.locate(p), true
		}
		if r, ok := launchedShardingAt(t.Launched); ok {
			return r, true
		}
	}
	return finding.Range{}, false
}

// launchedShardingAt locates the sharding an Accelerate config states:
// its ZeRO stage or FSDP strategy key, else its distributed_type.
func launchedShardingAt(acc *relatedDoc) (finding.Range, bool) {
	if acc == nil {
		return finding.Range{}, false
	}
	for _, f := range []string{"zero.stage", "fsdp.sharding", "distributed_type"} {
		if p := acc.work.Paths[f]; len(p) > 0 {
			return acc.locate(p), true
		}
	}
	return finding.Range{}, false
}

// mappedByLastName reports whether the catalog model m was found for id
// by id's last path component alone (tuner.Catalog.Model's fallback): id
// has a "/" and is none of m's id and aliases.
func mappedByLastName(m *tuner.Model, id string) bool {
	if !strings.Contains(id, "/") {
		return false
	}
	for _, n := range append([]string{m.ID}, m.Aliases...) {
		if strings.EqualFold(n, strings.TrimSpace(id)) {
			return false
		}
	}
	return true
}
