// Package schemas holds gpulint's CUE schemas: one file per document kind
// (deepspeed.cue, accelerate.cue, vllm.cue, kubernetes.cue, mig.cue), the
// canonical workload model (workload.cue), the project file (config.cue)
// and the GPU catalog (gpu.cue).
//
// Each file is self-contained (package schemas, no imports of the others).
// The CUE is the single source of truth: internal/normalize/internal/planbuild
// compiles each definition with cuelang.org/go and derives the Go checks
// the validator runs (committed as internal/normalize/plans_gen.go, held
// to the schemas by TestGeneratedPlans; `go generate ./...` rewrites it). A constraint the checks cannot express fails the build
// of the checks instead of passing silently.
//
// Besides plain CUE, the schemas use one attribute, @gpulint(...):
//
// As a declaration inside a struct:
//
//	unknown=error|warning|info  severity of a key the struct does not allow
//	                            (default error; only closed structs reject keys)
//	note="..."                  appended to the unknown-key message
//	auto=dropped|unresolved     how the framework treats a value "auto" where
//	                            the schema does not allow it (DeepSpeed)
//	exclusive="a b"             at most one of the keys a, b may be set; the
//	                            struct's own CUE (a comprehension) must say so
//	                            too: the builder probes it and takes the
//	                            error's place and message from CUE
//
// On a field:
//
//	severity=warning|info       severity of a bad value (default error)
//	want="..."                  how to describe the allowed values
//	msg="..."                   the message when the value is rejected
//	deprecated="..."            info when the key is present ("use X")
//	removed="..."               warning when the key is present
//	when=bool|struct|...        restrict deprecated/removed to a value kind
package schemas

import "embed"

// FS holds the schema files at its root.
//
//go:embed *.cue
var FS embed.FS
