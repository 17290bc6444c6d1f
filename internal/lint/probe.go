package lint

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/gpulint/gpulint/internal/kube"
	"github.com/gpulint/gpulint/internal/kustomize"
)

// A result may rest on the answer of a context lookup - the Karpenter pool
// a pod's selector picks, the launch that names a config, the
// kustomization that composes a manifest - and that answer can change
// while the linted file does not: a pool's file appears, a second pool
// makes the selector ambiguous, a launch script is added. Each lookup a
// result consulted is recorded as a probe (a relatedFile with Probe set):
// what it asked and a digest of what it answered. A warm run asks again
// (Linter.stillValid) and takes the cached result only when every
// answer's digest is the same. Only the files that consulted a lookup
// carry its probe, so a warm run over files that never consult one does
// no more than before; one that does pays the lookup once per run (the
// directory scans behind it are shared, relatedIndex).

// Probe kinds.
const (
	// probeFile: the content of the file at Path, or its absence. Lookups
	// that try fixed places (the Chart.yaml above a values file, the
	// DeepSpeed file a recipe names, a Serve module beside a manifest)
	// record each place they tried.
	probeFile = "file"
	// probePool: poolGPU for the manifest at Path and the node selector
	// in Arg (JSON).
	probePool = "pool"
	// probeClass: classGPU, likewise.
	probeClass = "class"
	// probeLaunch: launchLinkFor for the config at Path; Arg "script"
	// when a launched script's --config may name it.
	probeLaunch = "launch"
	// probeKustomize: the kustomization of the directory of the file at
	// Path and every file its build reads.
	probeKustomize = "kustomize"
	// probeLaunched: the recipes the manifest at Path launches
	// (launchedTargets), with the ConfigMap statements that pack them.
	probeLaunched = "launched"
	// probeModelDir: the local model directory at Path, as given (from
	// the working directory, as TargetResolver.model tries it), or its
	// absence.
	probeModelDir = "modeldir"
	// probeProject: the project file that applies to the file at Path
	// (its path and digest), or none. The key holds only the linted
	// file's project; a file the result also linted (a launched recipe,
	// a file a kustomization composes) is linted under its own.
	probeProject = "project"
)

// lookupLog collects the probes of one file's result. The subjects of a
// file are built and evaluated in one goroutine; a nil log records
// nothing.
type lookupLog struct {
	probes []relatedFile
}

func (g *lookupLog) add(p relatedFile) {
	if g != nil {
		g.probes = append(g.probes, p)
	}
}

// absPath is the absolute form of a path for a probe; the path itself
// when it has none.
func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// answerSum is the digest of a lookup's answer, its parts in order.
func answerSum(parts ...any) [32]byte {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%#v\x00", p)
	}
	var s [32]byte
	h.Sum(s[:0])
	return s
}

// fileSum is the digest of a file's content, or of its absence (any
// read error).
func fileSum(p string) [32]byte {
	data, err := os.ReadFile(p)
	if err != nil {
		return answerSum("absent")
	}
	return answerSum("content", sha256.Sum256(data))
}

// fileProbe records that a result rests on the file at p as it is now,
// present or not.
func fileProbe(p string) relatedFile {
	p = absPath(p)
	return relatedFile{Probe: probeFile, Path: p, Sum: fileSum(p)}
}

// modelDirSum digests a local model directory as the salt does a
// --model directory (hashFS: its config and the size and time of every
// weights file), or its absence.
func modelDirSum(p string) [32]byte {
	st, err := os.Stat(p)
	if err != nil || !st.IsDir() {
		return answerSum("absent")
	}
	h := sha256.New()
	if err := hashFS(h, os.DirFS(p)); err != nil {
		return answerSum("unreadable", err.Error())
	}
	var s [32]byte
	h.Sum(s[:0])
	return s
}

// poolProbe records poolGPU's answer for a pod of manifest.
func (l *Linter) poolProbe(manifest string, sel map[string]string) relatedFile {
	arg, _ := json.Marshal(sel)
	p := relatedFile{Probe: probePool, Path: absPath(manifest), Arg: string(arg)}
	p.Sum = l.poolSum(p.Path, sel)
	return p
}

func (l *Linter) poolSum(manifest string, sel map[string]string) [32]byte {
	gpu, at, src, ok := l.poolGPU(manifest, kube.Pod{NodeSelector: sel})
	return sourcedSum(gpu, at, src, ok)
}

// classProbe records classGPU's answer for a pod of manifest.
func (l *Linter) classProbe(manifest string, sel map[string]string) relatedFile {
	arg, _ := json.Marshal(sel)
	p := relatedFile{Probe: probeClass, Path: absPath(manifest), Arg: string(arg)}
	p.Sum = l.classSum(p.Path, sel)
	return p
}

func (l *Linter) classSum(manifest string, sel map[string]string) [32]byte {
	gpu, at, src, ok := l.classGPU(manifest, kube.Pod{NodeSelector: sel})
	return sourcedSum(gpu, at, src, ok)
}

// sourcedSum digests a GPU found in another file.
func sourcedSum(gpu string, at any, src relatedSource, ok bool) [32]byte {
	if !ok {
		return answerSum("none")
	}
	return answerSum(gpu, at, src.path, sha256.Sum256(src.file.Data))
}

// launchProbe records the launch graph's answer for the config at path.
func launchProbe(path string, scriptConfig bool, lk *launchLink) relatedFile {
	p := relatedFile{Probe: probeLaunch, Path: absPath(path)}
	if scriptConfig {
		p.Arg = "script"
	}
	p.Sum = linkSum(lk)
	return p
}

// linkSum digests what a launch link says: every value it gives and the
// content of every file it read them from.
func linkSum(lk *launchLink) [32]byte {
	if lk == nil {
		return answerSum("none")
	}
	parts := []any{lk.by.path, lk.gpus, lk.gpusAt, lk.gpusMsg, lk.model, lk.modelAt, lk.perNode}
	if lk.pod != nil {
		parts = append(parts, "pod", lk.pod.src.path, lk.pod.product, lk.pod.productAt, lk.pod.gpus, lk.pod.gpusAt, lk.pod.hinted, lk.pod.hintedAt)
	}
	for _, d := range []*relatedDoc{lk.accelerate, lk.deepspeed} {
		if d != nil {
			parts = append(parts, "doc", d.path)
		}
	}
	if lk.gpusIn != nil {
		parts = append(parts, "gpusIn", lk.gpusIn.path)
	}
	if lk.packed != nil {
		parts = append(parts, "packed", lk.packed.name, lk.packed.at, lk.packed.src.path)
	}
	for _, r := range lk.relative {
		parts = append(parts, r.path, sha256.Sum256(r.file.Data))
	}
	return answerSum(parts...)
}

// kustomizeProbe records the kustomization that composes the file at
// path, if any, and what its build read.
func (l *Linter) kustomizeProbe(path string) relatedFile {
	p := relatedFile{Probe: probeKustomize, Path: absPath(path)}
	p.Sum = l.kustomizeSum(p.Path)
	return p
}

func (l *Linter) kustomizeSum(abs string) [32]byte {
	k := kustomize.Find(filepath.Dir(abs))
	if k == "" {
		return answerSum("none")
	}
	lim, _ := l.limits(l.project(abs))
	b := l.kustomizeBuild(k, lim)
	parts := []any{k, fileSum(k), b.Patches, b.Unsure}
	files := slices.Clone(b.Files)
	slices.Sort(files)
	for _, f := range files {
		// Each file the build reads is also linted alone (aloneRules),
		// under its own project file.
		parts = append(parts, f, fileSum(f), l.projectSum(f))
	}
	return answerSum(parts...)
}

// projectSum digests the project file that applies to path: its path and
// content, or none.
func (l *Linter) projectSum(path string) [32]byte {
	p := l.project(path)
	if p == nil {
		return answerSum("none")
	}
	return answerSum(p.Path, p.Digest())
}

// withProjects adds to a result's dependencies rel, computed for the
// file at path, the project file of every other file they name: a
// recipe a manifest launches, the DeepSpeed file a recipe names, was
// linted under its own project file, which the cache key (the linted
// file's project only) does not hold.
func (l *Linter) withProjects(path string, rel []relatedFile) []relatedFile {
	seen := map[string]bool{absPath(path): true}
	out := rel
	for _, r := range rel {
		if r.Probe == probeProject || seen[r.Path] {
			continue
		}
		seen[r.Path] = true
		out = append(out, relatedFile{Probe: probeProject, Path: r.Path, Sum: l.projectSum(r.Path)})
	}
	return out
}

func launchedSum(ts []launchedTarget) [32]byte {
	parts := []any{len(ts)}
	for _, t := range ts {
		parts = append(parts, t.target, t.opt, t.line)
		if t.packed != nil {
			parts = append(parts, t.packed.src.path, t.packed.at, sha256.Sum256(t.packed.src.file.Data))
		}
	}
	return answerSum(parts...)
}

// stillValid reports whether every file a cached result depends on still
// has the recorded content, and every lookup it consulted still gives the
// recorded answer.
func (l *Linter) stillValid(rel []relatedFile) bool {
	for _, r := range rel {
		if !l.holds(r) {
			return false
		}
	}
	return true
}

func (l *Linter) holds(r relatedFile) bool {
	switch r.Probe {
	case "":
		data, err := os.ReadFile(r.Path)
		return err == nil && sha256.Sum256(data) == r.Sum
	case probeFile:
		return fileSum(r.Path) == r.Sum
	case probePool, probeClass:
		var sel map[string]string
		if err := json.Unmarshal([]byte(r.Arg), &sel); err != nil {
			return false
		}
		if r.Probe == probePool {
			return l.poolSum(r.Path, sel) == r.Sum
		}
		return l.classSum(r.Path, sel) == r.Sum
	case probeLaunch:
		return linkSum(l.launchLinkFor(r.Path, r.Arg == "script")) == r.Sum
	case probeKustomize:
		return l.kustomizeSum(r.Path) == r.Sum
	case probeLaunched:
		return launchedSum(l.launchedTargets(r.Path)) == r.Sum
	case probeModelDir:
		return modelDirSum(r.Path) == r.Sum
	case probeProject:
		return l.projectSum(r.Path) == r.Sum
	}
	// A probe this build does not know: an entry of another version.
	return false
}
