// Package tuner holds gpulint's GPU and model catalogs and its memory model.
//
// The catalogs are embedded data files (profiles/gpus.yaml and
// profiles/models.yaml) loaded into a Catalog. EstimateMemory turns a model,
// a target (a whole GPU, a MIG slice or a raw capacity) and a Workload into a
// per-GPU byte breakdown: weights, gradients, optimizer states, activations,
// KV cache and overhead. Every formula names its source in a comment; the
// shared reference is /work/shared/reference/memory-model.md (cited below as
// memory-model.md §N) and docs/validation.md compares the model with
// published measurements.
//
// The package is pure: no I/O except reading its embedded files and an
// fs.FS handed to ModelFromDir, no clock, no randomness. It imports nothing
// from gpulint's internal packages.
package tuner
