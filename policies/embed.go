// Package policies embeds gpulint's built-in Rego rules. Each rule lives in
// its own directory with its metadata, logic, unit tests and golden cases;
// lib/ holds the helpers rules share.
package policies

import "embed"

// FS holds every policy file, tests and testdata included; loaders skip
// what they do not need. bundle.bin is the policies precompiled
// (internal/check.BuildBundle); `go generate ./...` rebuilds it after a
// policy changes (internal/check/internal/genbundle).
//
//go:embed lib core gpu ds acc vllm k8s mig ft ray bundle.bin
var FS embed.FS

// BundleFile is the name of the precompiled bundle in FS.
const BundleFile = "bundle.bin"
