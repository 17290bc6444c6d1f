package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gpulint/gpulint/internal/finding"
)

// The shared findings every golden file is rendered from: two files, an
// error with a fix, a warning with related locations, an info, and a
// finding whose message and fix carry Markdown, HTML, newlines, "::" and
// "%" to prove each format escapes them.

const dsPath = "configs/ds_config.json"

const dsSource = `{
  "train_batch_size": 48,
  "train_micro_batch_size_per_gpu": 8,
  "gradient_accumulation_steps": 2,
  "fp16": {"enabled": true}
}
`

// k8sPath has a space and a comma, which links, URIs and workflow command
// properties must encode.
const k8sPath = "k8s/vllm serve,prod.yaml"

const k8sSource = "apiVersion: apps/v1\n" +
	"kind: Deployment\n" +
	"metadata:\n" +
	"  name: vllm # café\n" +
	"spec:\n" +
	"  template:\n" +
	"    spec:\n" +
	"      containers:\n" +
	"        - name: vllm\n" +
	"          args: [\"--gpu-memory-utilization\", \"0.99\"]\n" +
	"          resources:\n" +
	"            limits:\n" +
	"              nvidia.com/gpu: 2\n"

// hostileMessage tries every trick a config value could play on a report.
const hostileMessage = "value `x` <b>bold</b> & <!-- gpulint:comment --> | *star* _u_ [link](http://e.example) @admin #1 100%\n" +
	"::error file=evil.yaml,line=1::injected\r\n## heading"

// rangeOf returns the range of the n-th (0-based) occurrence of sub in src.
func rangeOf(t testing.TB, file, src, sub string, n int) finding.Range {
	t.Helper()
	off := -1
	for i := 0; i <= n; i++ {
		j := strings.Index(src[off+1:], sub)
		if j < 0 {
			t.Fatalf("%q: occurrence %d of %q not found", file, n, sub)
		}
		off += 1 + j
	}
	return finding.Range{File: file, Start: posAt(src, off), End: posAt(src, off+len(sub))}
}

func posAt(src string, off int) finding.Pos {
	line := 1 + strings.Count(src[:off], "\n")
	col := off - (strings.LastIndexByte(src[:off], '\n') + 1) + 1
	return finding.Pos{Offset: off, Line: line, Col: col}
}

func replace(r finding.Range, text string) finding.Edit {
	return finding.Edit{File: r.File, Start: r.Start.Offset, End: r.End.Offset, NewText: text}
}

const docs = "https://github.com/gpulint/gpulint/blob/main/docs/rules.md#"

func sampleInput(t testing.TB) Input {
	t.Helper()
	batch := rangeOf(t, dsPath, dsSource, "48", 0)
	fp16 := rangeOf(t, dsPath, dsSource, `"enabled": true`, 0)
	util := rangeOf(t, k8sPath, k8sSource, `"0.99"`, 0)
	gpus := rangeOf(t, k8sPath, k8sSource, "nvidia.com/gpu: 2", 0)
	name := rangeOf(t, k8sPath, k8sSource, "vllm", 0)
	fs := []finding.Finding{
		{
			Rule: "DS001", Slug: "train-batch-mismatch", Severity: finding.SeverityError,
			Message: "train_batch_size is 48 but 8 × 2 × 4 = 64",
			Range:   batch, Path: []any{"train_batch_size"}, DocURL: docs + "ds001",
			Fixes: []finding.Fix{{Message: "set train_batch_size to 64", Edits: []finding.Edit{replace(batch, "64")}}},
		},
		{
			Rule: "GPU004", Slug: "fp16-where-bf16", Severity: finding.SeverityInfo,
			Message: longMessage,
			Summary: longSummary, Details: longDetails,
			Range: fp16, Path: []any{"fp16", "enabled"}, DocURL: docs + "gpu004",
			Memory: &finding.Memory{GPU: "H100-80GB", Total: 50 << 30, Capacity: 79 << 30, Parts: []finding.Part{
				{Name: "weights", Bytes: 15 << 30}, {Name: "gradients", Bytes: 15 << 29},
				{Name: "optimizer states", Bytes: 15 << 30}, {Name: "activations", Bytes: 10 << 30},
				{Name: "kv cache", Bytes: 0}, {Name: "overhead", Bytes: 5 << 29},
			}},
			Evidence: []finding.Input{
				{Name: "gpu", Value: "H100-80GB (79.1 GiB usable, catalog)", Source: finding.SourceProject},
				{Name: "micro_batch", Value: "8", Source: finding.SourceFile, Range: &batch},
				{Name: "seq_len", Value: "2048", Source: finding.SourceAssumed, Settle: "set targets.seq_len"},
			},
		},
		{
			Rule: "K8S009", Slug: "hostile-name", Severity: finding.SeverityWarning,
			Message: hostileMessage,
			Range:   name, Path: []any{"metadata", "name"}, DocURL: docs + "k8s009",
			Fixes: []finding.Fix{{
				Message: "rename to <x> & `y` @admin",
				Edits:   []finding.Edit{replace(name, "vllm-```-````")},
			}},
		},
		{
			Rule: "VLLM003", Slug: "no-memory-headroom", Severity: finding.SeverityWarning,
			Message: "gpu-memory-utilization 0.99 leaves no headroom for 2 GPUs' CUDA graphs",
			Range:   util, Path: []any{"spec", "template", "spec", "containers", 0, "args", 1}, DocURL: docs + "vllm003",
			Related: []finding.Related{
				{Range: gpus, Message: "2 GPUs requested here"},
				{Range: rangeOf(t, k8sPath, k8sSource, "vllm", 1)},
			},
			Fixes: []finding.Fix{
				{Message: "set gpu-memory-utilization to 0.92", Edits: []finding.Edit{replace(util, `"0.92"`)}},
				{Message: "set gpu-memory-utilization to 0.90", Tune: true, Edits: []finding.Edit{replace(util, `"0.90"`)}},
			},
		},
	}
	fs = finding.Sort(fs)
	return Input{
		Files: []File{
			{Path: dsPath, Kind: "deepspeed"},
			{Path: k8sPath, Kind: "kubernetes", Sizing: &Sizing{
				GPU: "L4", Model: "meta-llama/Llama-3.1-8B-Instruct", PerGPUBytes: 9 << 30, CapacityBytes: 20 << 30,
				NotStartable: "tensor-parallel-size 4 needs 4 GPUs but the server gets 2 (its nvidia.com/gpu limit)",
			}},
			{Path: "configs/clean.yaml", Kind: "accelerate"},
			{Path: "recipes/sft.yaml", Kind: "finetune", Sizing: &Sizing{
				GPU: "H100-80GB", Model: "meta-llama/Llama-3.1-8B", PerGPUBytes: 59 << 30, CapacityBytes: 85 << 30, Open: "sharding",
				Alternatives: []Alternative{{Value: "unsharded (DDP)", PerGPUBytes: 198 << 30}, {Value: "ZeRO-3", Fits: true, PerGPUBytes: 59 << 30}},
				Note:         "on 8× H100-80GB (79.1 GiB each) the estimate fits with ZeRO-3 at 55.4 GiB and does not fit unsharded (DDP) at 198.3 GiB; the recipe states no sharding, so its launcher decides",
			}},
		},
		Findings:    fs,
		Summary:     Summary{Files: 4, Errors: 1, Warnings: 2, Infos: 1},
		Sources:     map[string][]byte{dsPath: []byte(dsSource), k8sPath: []byte(k8sSource)},
		ToolVersion: "0.1.0-test",
		Rules: map[string]RuleDoc{
			"DS001": {
				Title:       "train_batch_size disagrees with micro batch x accumulation x world size",
				Rationale:   "DeepSpeed rejects the config at start-up, after the job got its GPUs.",
				Remediation: "Set train_batch_size to the product, or drop it and let it be derived.",
			},
			"GPU004": {Title: "fp16 where the GPU supports bf16", Rationale: "fp16 needs loss scaling; `bf16` does not (see *docs*)."},
		},
	}
}

// longMessage is too long for one line of text: text prints longSummary,
// --verbose adds longDetails (finding.Split's result, held here so the
// renderers' goldens do not depend on the split).
const longMessage = "fp16 on a GPU with bf16 support (H100-80GB, compute capability 9.0); bf16 avoids loss scaling and its overflow skips at the same speed; assumes seq_len 2048 (set targets.seq_len)"

const longSummary = "fp16 on a GPU with bf16 support; assumes seq_len 2048"

var longDetails = []string{
	"H100-80GB, compute capability 9.0",
	"bf16 avoids loss scaling and its overflow skips at the same speed",
	"assumes seq_len 2048 (set targets.seq_len)",
}

// render runs the named renderer from Renderers over in.
func render(t testing.TB, name string, in Input) string {
	t.Helper()
	r, ok := Renderers()[name]
	if !ok {
		t.Fatalf("renderer %q is not registered", name)
	}
	var buf bytes.Buffer
	if err := r(&buf, in, Options{}); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return buf.String()
}
