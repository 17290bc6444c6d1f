// Package schemas holds gpulint's CUE schemas: one file per document kind
// (deepspeed.cue, accelerate.cue, vllm.cue, kubernetes.cue, mig.cue), the
// canonical workload model (workload.cue), the project file (config.cue)
// and the GPU catalog (gpu.cue).
//
// Each file is self-contained (package schemas, no imports of the others)
// so that a run compiles only the files it needs. The Go validator in
// internal/normalize reads the compiled definitions once and derives its
// checks from them; the CUE is the single source of truth.
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
//	check=cue                   the struct has constraints across its fields
//	                            (comprehensions); the validator also unifies
//	                            the document with it in CUE
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
