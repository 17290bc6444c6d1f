// Package policies embeds gpulint's built-in Rego rules. Each rule lives in
// its own directory with its metadata, logic, unit tests and golden cases;
// lib/ holds the helpers rules share.
package policies

import "embed"

// FS holds every policy file, tests and testdata included; loaders skip
// what they do not need.
//
//go:embed lib core gpu ds acc vllm k8s mig ft
var FS embed.FS
