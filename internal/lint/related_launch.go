package lint

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/gpulint/gpulint/internal/cmdline"
	"github.com/gpulint/gpulint/internal/config"
	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/kube"
	"github.com/gpulint/gpulint/internal/normalize"
	"github.com/gpulint/gpulint/internal/recipe"
	"github.com/gpulint/gpulint/internal/source"
)

// The launch graph: the shell scripts and Kubernetes manifests of the
// repository whose launch commands (torchrun, deepspeed, accelerate
// launch, a Trainer script, a recipe CLI, cmdline.LaunchesInScript)
// name a config file, so the DeepSpeed file, the Accelerate config or the
// recipe is sized with the GPU, process count and model of the command
// and the pod that runs it. Scripts and manifests are context: read, never
// reported on.
//
// Which directories are read: the config's own directory and each one
// above it up to the lint root, each with its direct subdirectories (a
// scripts/ or k8s/ folder beside the configs). The root is Options.Root,
// else the repository within rootLevels above the config (repoBoundary:
// the nearest directory holding .git, else the outermost holding a
// project file), else the config's own directory.

const (
	rootLevels     = 3
	maxScriptBytes = 256 << 10
	maxDirEntries  = 256
)

// launchEdge is one launch command in a script or a manifest's container.
type launchEdge struct {
	src    relatedSource
	launch *cmdline.TrainLaunch
	// pod is the GPU of the pod whose container runs the command; nil in
	// a script.
	pod *podGPU
	// mounted are the config options whose file the container sees
	// through a ConfigMap volume: such a file links only through a
	// ConfigMap source the repository states (related_configmap.go),
	// never by its name.
	mounted map[string]configMapRef
}

// podGPU is what a pod says about the hardware its containers run on.
type podGPU struct {
	src       relatedSource
	product   string
	productAt finding.Range
	gpus      int
	gpusAt    finding.Range
	// hinted is the one GPU the pod's other node hints (GKE accelerator,
	// instance type, or a gpu.memory total only one catalog GPU has: nodeGPU)
	// agree on when it names no product, at hintedAt.
	hinted   string
	hintedAt finding.Range
}

// launchLink is what the launch graph says about one config file, each
// value with its location.
type launchLink struct {
	by      relatedSource // the script or manifest holding the launch
	launch  *cmdline.TrainLaunch
	pod     *podGPU
	gpus    int // the world size the launch gives
	gpusAt  finding.Range
	gpusMsg string
	model   string
	modelAt finding.Range
	perNode bool // gpus counts one node's GPUs (a pod's limit)
	// gpusIn is the file gpusAt points into when it is not the launching
	// script or manifest: the Accelerate config whose num_processes gave
	// the world size.
	gpusIn *relatedSource
	// accelerate is the Accelerate config the launch passes
	// (accelerate launch --config_file, trl --accelerate_config), read
	// and normalized; nil when it names none or it could not be read.
	accelerate *relatedDoc
	// deepspeed is the DeepSpeed config the launch passes (the script's
	// --deepspeed, accelerate's --deepspeed_config_file), read; nil when
	// it names none or it could not be read.
	deepspeed *relatedDoc
	relative  []relatedSource
	// packed is the script or kustomization that packs the config into
	// the ConfigMap the launching container reads it from; nil when the
	// launch names the file by its path.
	packed *configMapSource
}

// repoRoot returns the repository above abs: Options.Root when it holds
// abs, else repoBoundary at any depth, else rootFor's answer. A cluster's
// node pools and ComputeClasses are the whole repository's (infra/ beside
// blueprints/inference/gpu/<app>/), and an overlay's bases lie beside its
// directory, so those lookups reach the repository root even where the
// launch graph, bounded by rootLevels, does not.
func (l *Linter) repoRoot(abs string) string {
	if l.related == nil {
		return l.findRepoRoot(abs)
	}
	key := "repo\x00" + filepath.Dir(abs)
	l.related.rootMu.Lock()
	r, ok := l.related.roots[key]
	l.related.rootMu.Unlock()
	if !ok {
		r = l.findRepoRoot(abs)
		l.related.rootMu.Lock()
		l.related.roots[key] = r
		l.related.rootMu.Unlock()
	}
	return r
}

func (l *Linter) findRepoRoot(abs string) string {
	if l.opts.Root != "" {
		if r, err := filepath.Abs(l.opts.Root); err == nil && within(filepath.Dir(abs), r) {
			return r
		}
	}
	if r := repoBoundary(filepath.Dir(abs), -1, l.home()); r != "" {
		return r
	}
	return l.rootFor(abs)
}

// repoBoundary returns the directory that bounds the repository holding
// dir, looking at most levels above it (levels < 0: up to the walk's
// ceiling, below): the nearest directory holding .git; when none does,
// the outermost one holding a project file; "" when neither.
//
// A project file is not a repository's edge. It states settings for the
// files below it (the nearest one above each file applies, README "The
// target"), and a repository may hold several: one at its root and one
// per team under train/ or serve/. The manifests in k8s/ still launch the
// recipes in train/, so stopping at train/.gpulint.yaml would cut that
// edge and lose the manifest's sizing. Only .git (a directory, or the
// file of a worktree or submodule) says where a repository ends; without
// one, the outermost project file is the widest directory the user has
// claimed as one project.
//
// The walk has a ceiling, so that a stray project file (or a dotfiles
// .git) far above the linted tree cannot make the node-pool and
// ComputeClass walks cover a whole home directory or disk: it never
// reaches the user's home directory (home, when not empty) nor anything
// above it, never the filesystem root, and never a directory on another
// filesystem than dir (a mount point is where a checkout copied or
// mounted into a container or onto a data disk ends). A user keeps a
// project in a directory below home, not home itself, and a repository
// root stays in reach: a monorepo without .git whose root holds the
// project file still links across, whatever the lint arguments.
// Bounding at the lint arguments' common ancestor instead would cut the
// case project files exist for: one Job linted alone in k8s/ must reach
// the recipe in train/ through the root's project file.
func repoBoundary(dir string, levels int, home string) string {
	outer := ""
	d := dir
	dev, devOK := deviceOf(dir)
	for i := 0; levels < 0 || i <= levels; i++ {
		up := filepath.Dir(d)
		if up == d || (home != "" && d == home) {
			break
		}
		if dv, ok := deviceOf(d); devOK && ok && dv != dev {
			break
		}
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		for _, name := range config.FileNames {
			if st, err := os.Stat(filepath.Join(d, name)); err == nil && st.Mode().IsRegular() {
				outer = d
				break
			}
		}
		d = up
	}
	return outer
}

// rootFor returns the lint root above path, found once per directory
// and run (a warm run asks it for each lookup a cached result re-checks).
func (l *Linter) rootFor(abs string) string {
	dir := filepath.Dir(abs)
	if l.related == nil {
		return l.findRoot(dir)
	}
	l.related.rootMu.Lock()
	r, ok := l.related.roots[dir]
	l.related.rootMu.Unlock()
	if !ok {
		r = l.findRoot(dir)
		l.related.rootMu.Lock()
		l.related.roots[dir] = r
		l.related.rootMu.Unlock()
	}
	return r
}

func (l *Linter) findRoot(dir string) string {
	if l.opts.Root != "" {
		if r, err := filepath.Abs(l.opts.Root); err == nil && within(dir, r) {
			return r
		}
	}
	if r := repoBoundary(dir, rootLevels, l.home()); r != "" {
		return r
	}
	return dir
}

// home is Options.Home, absolute and clean; "" when unset.
func (l *Linter) home() string {
	if l.opts.Home == "" {
		return ""
	}
	h, err := filepath.Abs(l.opts.Home)
	if err != nil {
		return ""
	}
	return h
}

func within(p, root string) bool {
	return p == root || strings.HasPrefix(p, root+string(filepath.Separator))
}

// launchEdges returns the launches of dir and its direct subdirectories,
// read once per run.
func (l *Linter) launchEdges(dir string) []launchEdge {
	ri := l.related
	ri.mu.Lock()
	defer ri.mu.Unlock()
	if es, ok := ri.edges[dir]; ok {
		return es
	}
	es, cms, pools := l.scanLaunchDir(dir)
	entries, _ := os.ReadDir(dir)
	for i, e := range entries {
		if i >= maxDirEntries {
			break
		}
		if e.IsDir() && !skipDirs[e.Name()] && !strings.HasPrefix(e.Name(), ".") {
			sub, subCMs, subPools := l.scanLaunchDir(filepath.Join(dir, e.Name()))
			es, cms, pools = append(es, sub...), append(cms, subCMs...), append(pools, subPools...)
		}
	}
	ri.edges[dir], ri.configMaps[dir], ri.nodePools[dir] = es, cms, pools
	return es
}

// configMapSources returns the ConfigMap sources launchEdges read for
// dir.
func (l *Linter) configMapSources(dir string) []configMapSource {
	l.launchEdges(dir)
	ri := l.related
	ri.mu.Lock()
	defer ri.mu.Unlock()
	return ri.configMaps[dir]
}

// scanLaunchDir reads the shell scripts, GPU manifests and
// kustomizations of one directory, small files only, each checked for a
// launcher's name (or a ConfigMap's) before it is parsed.
func (l *Linter) scanLaunchDir(dir string) ([]launchEdge, []configMapSource, []nodePoolSource) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, nil
	}
	var out []launchEdge
	var cms []configMapSource
	var pools []nodePoolSource
	lim, _ := l.limits(nil)
	for i, e := range entries {
		if i >= maxDirEntries {
			break
		}
		if !e.Type().IsRegular() {
			continue
		}
		p := filepath.Join(dir, e.Name())
		switch strings.ToLower(filepath.Ext(e.Name())) {
		case ".sh", ".bash":
			data, err := readLimited(p, maxScriptBytes)
			if err != nil {
				continue
			}
			f := &source.File{Path: p, Data: data}
			cms = append(cms, scriptConfigMaps(p, f)...)
			if !mentionsLauncher(data) {
				continue
			}
			for _, la := range cmdline.LaunchesInScript(p, string(data)) {
				out = append(out, launchEdge{src: relatedSource{path: p, file: f}, launch: la})
			}
		case ".yaml", ".yml":
			data, err := readLimited(p, min(lim.MaxBytes, 1<<20))
			if err != nil {
				continue
			}
			if isKustomization(e.Name()) {
				cms = append(cms, kustomizeConfigMaps(p, data, lim)...)
				continue
			}
			if bytes.Contains(data, []byte("NodePool")) {
				pools = append(pools, nodePools(p, data, lim)...)
			}
			if !bytes.Contains(data, []byte("apiVersion")) || !mentionsLauncher(data) {
				continue
			}
			out = append(out, manifestLaunches(p, data, lim)...)
		}
	}
	return out, cms, pools
}

// launcherWords are the cheap content check before a file is parsed.
var launcherWords = [][]byte{[]byte("torchrun"), []byte("deepspeed"), []byte("accelerate"), []byte("axolotl"),
	[]byte("llamafactory-cli"), []byte("tune run"), []byte(".sh"), []byte("torch.distributed"), []byte("--model_name_or_path"),
	[]byte("trl "), []byte("--config")}

func mentionsLauncher(data []byte) bool {
	for _, w := range launcherWords {
		if bytes.Contains(data, w) {
			return true
		}
	}
	return false
}

// manifestLaunches reads the launch commands of a manifest's containers,
// each with its pod's GPU.
func manifestLaunches(p string, data []byte, lim source.Limits) []launchEdge {
	f, err := source.Parse(p, data, lim)
	if err != nil || source.Detect(f) != source.KindKubernetes {
		return nil
	}
	rs := relatedSource{path: p, file: f}
	var out []launchEdge
	for di, d := range f.Docs {
		if d.Root == nil {
			continue
		}
		value, err := d.Root.ToValue(lim.MaxNodes)
		if err != nil {
			continue
		}
		at := func(path []any) finding.Range {
			node, entry, matched := d.Root.Lookup(path)
			if node == nil || matched == 0 {
				return d.Root.Range(p)
			}
			if entry.Key != nil {
				return finding.Range{File: p, Start: entry.Key.Start, End: node.End}
			}
			return node.Range(p)
		}
		_ = di
		for _, pod := range kube.FindPods(value) {
			for _, c := range pod.Containers {
				cn, _, matched := d.Root.Lookup(c.Path)
				if matched != len(c.Path) || cn.Kind != source.MapNode {
					continue
				}
				ct := cmdline.Container{File: p, Image: c.Image,
					Command: argsOf(f, cn.Get("command")), Args: argsOf(f, cn.Get("args"))}
				launches := cmdline.LaunchesInContainer(ct)
				if len(launches) == 0 {
					continue
				}
				pg := &podGPU{src: rs, product: pod.Product, gpus: int(c.GPU)}
				if pod.Product != "" {
					pg.productAt = at(pod.ProductAt)
				} else if name, hp, ok := nodeGPU(pod.Hints); ok {
					pg.hinted, pg.hintedAt = name, at(hp)
				}
				if c.GPU > 0 {
					pg.gpusAt = at(c.GPUPath)
				}
				for _, la := range launches {
					out = append(out, launchEdge{src: rs, launch: la, pod: pg, mounted: mountedConfigs(c, la, at)})
				}
			}
		}
	}
	return out
}

// spanRange maps a launch span to a range of the file holding it.
func spanRange(f *source.File, sp cmdline.Span) finding.Range {
	return finding.Range{File: f.Path, Start: f.PosAt(sp.Start), End: f.PosAt(sp.End)}
}

// names reports whether a path a launch writes refers to target (an
// absolute, clean path): relative paths are tried from the launching
// file's directory and every directory above it up to root (a script is
// usually run from the repository's top); an absolute path, a container
// mount, matches a target whose path below root ends with the same
// components.
func names(written, from, root, target string) bool {
	if written == "" || strings.ContainsAny(written, "$`*?") {
		return false
	}
	w := filepath.Clean(filepath.FromSlash(written))
	if !filepath.IsAbs(w) {
		for d := filepath.Dir(from); within(d, root); d = filepath.Dir(d) {
			if filepath.Join(d, w) == target {
				return true
			}
			if d == root {
				break
			}
		}
		return false
	}
	parts := strings.Split(strings.TrimPrefix(w, string(filepath.Separator)), string(filepath.Separator))
	for i := range parts {
		suffix := filepath.Join(parts[i:]...)
		if strings.HasSuffix(target, string(filepath.Separator)+suffix) && len(target)-len(suffix)-1 >= len(root) {
			return true
		}
	}
	return false
}

// configOpts are the launch options that name a config file.
var configOpts = []string{cmdline.OptDeepSpeed, cmdline.OptConfigFile, cmdline.OptRecipe, cmdline.OptScriptConfig}

// launchLinkFor finds the launch that names the config at path and reads
// what it and the pod that runs it say. The first launch in path order
// wins; nil when none names it. A --config given to a launched Python
// script links only where scriptConfig says the file is what such a
// script reads (a Trainer recipe, by its content).
func (l *Linter) launchLinkFor(path string, scriptConfig bool) *launchLink {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil
	}
	root := l.rootFor(abs)
	var edges []launchEdge
	for d := filepath.Dir(abs); ; d = filepath.Dir(d) {
		edges = append(edges, l.launchEdges(d)...)
		if d == root || !within(d, root) || d == filepath.Dir(d) {
			break
		}
	}
	sort.SliceStable(edges, func(i, j int) bool { return edges[i].src.path < edges[j].src.path })
	var cms []configMapSource
	for d := filepath.Dir(abs); ; d = filepath.Dir(d) {
		cms = append(cms, l.configMapSources(d)...)
		if d == root || !within(d, root) || d == filepath.Dir(d) {
			break
		}
	}
	for _, e := range edges {
		for _, opt := range configOpts {
			o, ok := e.launch.Opts[opt]
			if !ok || !o.Known || (opt == cmdline.OptScriptConfig && !scriptConfig) {
				continue
			}
			var packed *configMapSource
			if ref, ok := e.mounted[opt]; ok {
				// The container reads the file from a ConfigMap: it is
				// this one only where the repository packs it there.
				if packed = ref.packs(cms, root, abs); packed == nil {
					continue
				}
			} else if !names(o.Value, e.src.path, root, abs) {
				continue
			}
			if scriptConfig && len(recipe.OverriddenOnCommandLine(slices.Collect(maps.Keys(e.launch.ScriptFlags)))) > 0 {
				// The command line replaces recipe values the memory model
				// reads: the recipe as written is not what this launch
				// runs, so the launch sizes nothing.
				return nil
			}
			pod := e.pod
			if pod == nil {
				pod = podRunning(edges, cms, e.src.path, root)
			}
			lk := linkOf(e, pod)
			if packed != nil {
				lk.relative = append(lk.relative, packed.src)
				lk.packed = packed
			}
			if opt == cmdline.OptRecipe || opt == cmdline.OptScriptConfig {
				l.launchAccelerate(lk, root)
				l.launchDeepSpeedFlag(lk, root)
			}
			return lk
		}
	}
	return nil
}

// launchAccelerate reads the Accelerate config a launch passes
// (accelerate launch --config_file, trl --accelerate_config) when it lies
// in the repository: the world size its num_processes gives where the
// command line gives none (a --num_processes flag overrides the file,
// accelerate launch.py), and the config itself for the recipe's sharding.
func (l *Linter) launchAccelerate(lk *launchLink, root string) {
	o, ok := lk.launch.Opts[cmdline.OptConfigFile]
	if !ok || !o.Known || (lk.launch.Tool != "accelerate" && lk.launch.Tool != "trl") {
		return
	}
	p := existing(o.Value, lk.by.path, root)
	if p == "" {
		return
	}
	lim, _ := l.limits(nil)
	data, err := readLimited(p, min(lim.MaxBytes, 1<<20))
	if err != nil {
		return
	}
	f, err := source.Parse(p, data, lim)
	if err != nil || len(f.Docs) == 0 || f.Docs[0].Root == nil || source.Detect(f) != source.KindAccelerate {
		return
	}
	value, err := f.Docs[0].Root.ToValue(lim.MaxNodes)
	if err != nil {
		return
	}
	acc := &relatedDoc{relatedSource: relatedSource{path: p, file: f}, value: value, work: normalize.Accelerate(value)}
	lk.accelerate = acc
	lk.relative = append(lk.relative, acc.relatedSource)
	if ds := l.launchDeepSpeed(acc, lk.by.path, root); ds != nil {
		// The config's deepspeed_config_file: DeepSpeedPlugin opens it as
		// written, from the directory accelerate launch runs in (the
		// script's, or one above it); its ZeRO settings are the run's.
		recipe.MergeDeepSpeed(acc.work, ds.work)
		lk.relative = append(lk.relative, ds.relatedSource)
	}
	if _, set := lk.launch.Opts[cmdline.OptNumProcesses]; set || lk.gpus > 0 {
		return
	}
	if n, ok := acc.work.Get("parallel.world_size"); ok {
		if n, ok := n.(int64); ok && n > 0 {
			lk.gpus, lk.gpusAt, lk.gpusIn = int(n), acc.locate(acc.work.Paths["parallel.world_size"]), &acc.relatedSource
			lk.gpusMsg = fmt.Sprintf("num_processes %d in the Accelerate config the launch passes", n)
		}
	}
}

// launchDeepSpeedFlag reads the DeepSpeed config a recipe's launch
// passes on its command line: TrainingArguments' --deepspeed (a command
// line value overrides the recipe's, TrlParser), or accelerate launch's
// --deepspeed_config_file.
func (l *Linter) launchDeepSpeedFlag(lk *launchLink, root string) {
	o, ok := lk.launch.Opts[cmdline.OptDeepSpeed]
	if !ok || !o.Known {
		return
	}
	if ds := l.readDeepSpeed(existing(o.Value, lk.by.path, root)); ds != nil {
		lk.deepspeed = ds
		lk.relative = append(lk.relative, ds.relatedSource)
	}
}

// launchDeepSpeed reads the DeepSpeed config an Accelerate config names
// in deepspeed_config_file, resolved as a launch's paths are; nil when it
// names none or the file is not in the repository or not a DeepSpeed
// config.
func (l *Linter) launchDeepSpeed(acc *relatedDoc, from, root string) *relatedDoc {
	v, _ := acc.work.Get("deepspeed_config_file")
	written, _ := v.(string)
	return l.readDeepSpeed(existing(written, from, root))
}

// readDeepSpeed reads and normalizes the DeepSpeed config at p; nil when p
// is empty or the file is not one.
func (l *Linter) readDeepSpeed(p string) *relatedDoc {
	if p == "" {
		return nil
	}
	lim, _ := l.limits(nil)
	data, err := readLimited(p, min(lim.MaxBytes, 1<<20))
	if err != nil {
		return nil
	}
	f, err := source.Parse(p, data, lim)
	if err != nil || len(f.Docs) == 0 || f.Docs[0].Root == nil || source.Detect(f) != source.KindDeepSpeed {
		return nil
	}
	value, err := f.Docs[0].Root.ToValue(lim.MaxNodes)
	if err != nil {
		return nil
	}
	return &relatedDoc{relatedSource: relatedSource{path: p, file: f}, value: value, work: normalize.DeepSpeed(value)}
}

// existing returns the file a launch's written path names, tried as
// names() tries it: a relative path from the launching file's directory
// and each one above it up to root, an absolute one (a container mount)
// by its trailing components below root. "" when none exists.
func existing(written, from, root string) string {
	if written == "" || strings.ContainsAny(written, "$`*?") {
		return ""
	}
	w := filepath.Clean(filepath.FromSlash(written))
	regular := func(p string) bool {
		st, err := os.Stat(p)
		return err == nil && st.Mode().IsRegular() && within(p, root)
	}
	if !filepath.IsAbs(w) {
		for d := filepath.Dir(from); within(d, root); d = filepath.Dir(d) {
			if p := filepath.Join(d, w); regular(p) {
				return p
			}
			if d == root {
				break
			}
		}
		return ""
	}
	parts := strings.Split(strings.TrimPrefix(w, string(filepath.Separator)), string(filepath.Separator))
	for i := range parts {
		if p := filepath.Join(root, filepath.Join(parts[i:]...)); regular(p) {
			return p
		}
	}
	return ""
}

// podRunning finds the manifest container that runs a script: by its
// path, or, where the container reads the script from a ConfigMap, through
// the repository's statement of what the ConfigMap holds.
func podRunning(edges []launchEdge, cms []configMapSource, script, root string) *podGPU {
	for _, e := range edges {
		if e.pod == nil {
			continue
		}
		o, ok := e.launch.Opts[cmdline.OptScript]
		if !ok || !o.Known {
			continue
		}
		if ref, ok := e.mounted[cmdline.OptScript]; ok {
			if ref.packs(cms, root, script) != nil {
				return e.pod
			}
			continue
		}
		if names(o.Value, e.src.path, root, script) {
			return e.pod
		}
	}
	return nil
}

// linkOf reads the world size and model of a launch.
func linkOf(e launchEdge, pod *podGPU) *launchLink {
	f := e.src.file
	lk := &launchLink{by: e.src, launch: e.launch, pod: pod, relative: []relatedSource{e.src}}
	if pod != nil && pod.src.path != e.src.path {
		lk.relative = append(lk.relative, pod.src)
	}
	opts := e.launch.Opts
	intOpt := func(name string) (int, bool, bool) {
		o, ok := opts[name]
		if !ok {
			return 0, false, false
		}
		n, err := strconv.Atoi(o.Value)
		return n, o.Known && err == nil && n > 0, true
	}
	nodes, nodesOK, nodesSet := intOpt(cmdline.OptNodes)
	if !nodesSet {
		nodes, nodesOK = 1, true // every launcher's default is one node
	}
	_, multiHost := opts[cmdline.OptHostfile]
	switch {
	case e.launch.Tool == "accelerate" || e.launch.Tool == "trl":
		// trl hands --num_processes to accelerate launch.
		if n, ok, _ := intOpt(cmdline.OptNumProcesses); ok {
			lk.gpus, lk.gpusAt = n, spanRange(f, opts[cmdline.OptNumProcesses].Span)
			lk.gpusMsg = fmt.Sprintf("--num_processes %d in the command that launches this file", n)
		}
	case nodesOK && !(multiHost && !nodesSet):
		if n, ok, _ := intOpt(cmdline.OptNprocPerNode); ok {
			lk.gpus, lk.gpusAt = n*nodes, spanRange(f, opts[cmdline.OptNprocPerNode].Span)
			lk.gpusMsg = fmt.Sprintf("%d processes per node in the command that launches this file", n)
			if nodes > 1 {
				lk.gpusMsg = fmt.Sprintf("%d processes per node × %d nodes in the command that launches this file", n, nodes)
			}
		} else if e.launch.Tool == "deepspeed" && pod != nil && pod.gpus > 0 && nodes == 1 {
			// The deepspeed launcher without --num_gpus starts one
			// process per visible GPU (runner.py).
			lk.gpus, lk.gpusAt, lk.perNode = pod.gpus, pod.gpusAt, true
			lk.gpusMsg = fmt.Sprintf("%d GPUs of the pod whose deepspeed launcher uses all of them", pod.gpus)
		}
	}
	if o, ok := opts[cmdline.OptModel]; ok && o.Known && o.Value != "" {
		lk.model, lk.modelAt = o.Value, spanRange(f, o.Span)
	}
	return lk
}

// linkLaunch fills what a subject's file leaves to its launcher from the
// launch graph: the world size (DeepSpeed, recipes) or the node's GPU
// count (an Accelerate config, whose num_processes ACC001 holds to it),
// the GPU product of the pod and the model the command names. What the
// Accelerate config beside a DeepSpeed file says stays first.
func (l *Linter) linkLaunch(s *subject, h *targetHints) {
	trainer := false
	if s.kind == string(source.KindFinetune) {
		r, _ := s.work.Get("recipe")
		trainer = r == normalize.RecipeTrainer
	}
	lk := l.launchLinkFor(s.file.Path, trainer)
	s.lookups.add(launchProbe(s.file.Path, trainer, lk))
	if lk == nil {
		return
	}
	if lk.accelerate != nil && s.kind == string(source.KindFinetune) {
		h.Launched = lk.accelerate
		if recipe.MergeLaunchPrecision(s.work, lk.accelerate.work) != "" {
			s.launchPrecision = lk.accelerate.locate(lk.accelerate.work.Paths["precision"])
		}
	}
	if lk.deepspeed != nil && s.kind == string(source.KindFinetune) {
		// The DeepSpeed config on the command line shards the run,
		// whatever the Accelerate config says.
		h.Launched = lk.deepspeed
	}
	s.linked = lk.relative
	if p := lk.packed; p != nil {
		s.viaConfigMap = fmt.Sprintf("the GPU of the pod in %s, which reads this file from ConfigMap %s (packed at %s:%d)",
			filepath.Base(lk.by.path), p.name, filepath.Base(p.src.path), p.at.Start.Line)
	}
	if h.GPUs == 0 {
		gpus, at, msg, from := lk.gpus, lk.gpusAt, lk.gpusMsg, "launcher"
		if s.kind == string(source.KindAccelerate) || lk.perNode {
			// An Accelerate config's num_processes is checked against
			// the GPUs of the node that runs it; a --num_processes on the
			// command line overrides the file, so it is not a GPU count.
			gpus, from = 0, "manifest"
			if lk.pod != nil && lk.pod.gpus > 0 {
				gpus, at = lk.pod.gpus, lk.pod.gpusAt
				msg = fmt.Sprintf("nvidia.com/gpu %d of the pod that launches this file", gpus)
			}
		}
		if gpus > 0 {
			h.GPUs, h.GPUsFrom = gpus, from
			h.GPUsAt = &relatedPath{ref: "launcher", path: []any{"gpus"}, message: msg}
			src := lk.by
			if lk.pod != nil && at.File == lk.pod.src.path {
				src = lk.pod.src
			}
			if lk.gpusIn != nil && at.File == lk.gpusIn.path {
				src = *lk.gpusIn
			}
			s.launcher = &launcher{relatedSource: src, ranges: map[string]finding.Range{"gpus": at}}
		}
	}
	if lk.pod != nil && lk.pod.product != "" && h.Product == "" {
		at := lk.pod.productAt
		h.Product, h.ProductAt = lk.pod.product, &at
	}
	if lk.pod != nil && lk.pod.hinted != "" && h.Product == "" && len(h.Hints) == 0 {
		at := lk.pod.hintedAt
		h.Product, h.ProductAt = lk.pod.hinted, &at
	}
	if lk.model != "" && h.Model == "" {
		if _, ok := s.work.Get("model"); !ok {
			at := lk.modelAt
			h.Model, h.ModelAt = lk.model, &at
		}
	}
}

// isShellScript reports whether a path names a shell script, which the
// launch graph reads as context and lint never checks as a config.
func isShellScript(path string) bool {
	ext := strings.ToLower(filepath.Ext(path))
	return ext == ".sh" || ext == ".bash"
}
