// Package lint is gpulint's pipeline: read → detect → normalize → validate
// → evaluate → tune → resolve. It is the entry point for the CLI and for
// tests; it prints nothing. It wires steps together: what a format knows
// lives in that format's package (source, normalize, kube, mig, cmdline,
// recipe, config), and lint only calls it.
//
// The steps, and the file that holds each:
//
//   - collect.go: expand arguments into the config files to check.
//   - lint.go: Options, Linter, Run over files with a bounded pool, limits
//     and timeouts; project.go: the .gpulint.yaml that governs a file;
//     deps.go, warm.go: build the compiled assets once and warm them.
//   - file.go: read and detect one file, split it into subjects, normalize
//     each and validate it against its schema.
//   - subject.go: the subject the rules see, its rule input, evaluate (run
//     the rules) and resolve (canonical path → byte range, patch → edits);
//     subject_kube.go: pods and containers of Kubernetes manifests as
//     subjects (through kube); subject_mig.go: MIG layouts and embedded
//     mig-parted configs as rule input (through mig); subject_argv.go:
//     vLLM command lines as subjects, located and edited through cmdline.
//   - related.go: files read beside the linted one (the Accelerate config
//     that launches a DeepSpeed file); related_recipe.go: the DeepSpeed
//     config a fine-tuning recipe names (through recipe).
//   - target.go: the GPU, GPU count and model a subject is checked
//     against (flags, project file, manifest, catalog).
//   - estimate.go: the memory model's estimate as rule input, from the
//     tuner workload the formats build (normalize, recipe).
//   - tune.go: the tuner's plan as a TUNE finding, written in the file's
//     own spelling.
//   - suppress.go: ignore comments, their reasons and unused ones.
//   - fix.go: apply a file's fixes and re-lint to confirm them.
//   - cache.go: results stored by file content, project and related files;
//     probe.go: the context lookups a cached result is re-checked by.
package lint
