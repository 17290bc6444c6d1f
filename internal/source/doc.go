// Package source reads configuration files and keeps where everything is:
// it detects a file's kind by content (DeepSpeed JSON, Accelerate YAML,
// vLLM config, Kubernetes manifests, MIG layouts, fine-tuning recipes),
// parses JSON and YAML into nodes that carry their byte ranges (YAML in
// the common shape through the fast reader in yamlfast.go, held to
// yaml.v3 by the tests, the rest through yaml.v3), maps canonical paths
// back to source ranges, and renders structural patches as text edits on
// the original bytes. A syntax error becomes a finding at its position.
package source
