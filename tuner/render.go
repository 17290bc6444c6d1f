package tuner

import (
	"fmt"
	"io"
	"strings"
)

// RenderOptions controls RenderEstimateText.
type RenderOptions struct {
	// Color adds a bar per component and colors the verdict; set it only when
	// the output is a terminal and color is wanted.
	Color bool
	// Bar draws the per-GPU breakdown as one bar against the capacity; set
	// it only when the output is a terminal. Without Color its segments are
	// letters, so it reads the same without escape codes.
	Bar bool
}

const (
	barWidth  = 24
	ansiRed   = "\x1b[31m"
	ansiGreen = "\x1b[32m"
	ansiDim   = "\x1b[2m"
	ansiReset = "\x1b[0m"
)

// RenderEstimateText writes a readable table of e: the model and the inputs
// (given or assumed) when the caller filled them, one row per component that
// the workload can hold (with GiB and its share of the total), the overhead's
// parts, the breakdown as a bar when opts.Bar, serving figures, host memory,
// notes, and a final verdict line naming the capacity and the headroom. The
// output depends only on e and opts.
func RenderEstimateText(w io.Writer, e Estimate, opts RenderOptions) error {
	var b strings.Builder
	fmt.Fprintf(&b, "memory per GPU on %s (capacity %s)\n", e.Target, formatGiB(e.Capacity))
	if e.Model.ID != "" {
		fmt.Fprintf(&b, "model: %s (%s)\n", e.Model.ID, e.Model.From)
	}
	b.WriteString("\n")
	if len(e.Inputs) > 0 {
		renderInputs(&b, e.Inputs)
	}
	nameWidth := 22
	for _, o := range e.Overheads {
		nameWidth = max(nameWidth, len([]rune(o.Name))+2)
	}
	fmt.Fprintf(&b, "  %-*s %10s %7s\n", nameWidth, "component", "GiB", "share")
	rows := e.rows()
	for _, row := range rows {
		share := 0.0
		if e.PerGPU.Total > 0 {
			share = float64(row.v) / float64(e.PerGPU.Total)
		}
		fmt.Fprintf(&b, "  %-*s %10s %6.1f%%", nameWidth, row.name, gib(row.v), share*100)
		if opts.Color && row.v > 0 {
			n := int(share*barWidth + 0.5)
			b.WriteString("  " + strings.Repeat("█", max(n, 1)))
		}
		b.WriteString("\n")
		if row.name == "overhead" {
			for _, o := range e.Overheads {
				line := fmt.Sprintf("    %-*s %10s\n", nameWidth-2, o.Name, gib(o.Bytes))
				if opts.Color {
					line = ansiDim + strings.TrimSuffix(line, "\n") + ansiReset + "\n"
				}
				b.WriteString(line)
			}
		}
	}
	fmt.Fprintf(&b, "  %-*s %10s %6.1f%%\n", nameWidth, "total", gib(e.PerGPU.Total), 100.0)
	if opts.Bar {
		b.WriteString("\n")
		renderBar(&b, e, rows, opts.Color)
	}
	if s := e.Serve; s != nil {
		fmt.Fprintf(&b, "\n  vLLM: gpu_memory_utilization %.2f → budget %s; max_num_batched_tokens %d, max_num_seqs %d, block size %d\n",
			s.GPUMemoryUtilization, formatGiB(s.Budget), s.MaxNumBatchedTokens, s.MaxNumSeqs, s.BlockSize)
		fmt.Fprintf(&b, "  KV cache: %d bytes per token, %s tokens, maximum concurrency %.2fx at max_model_len %d\n",
			s.KVBytesPerToken, thousands(s.KVCacheTokens), s.MaxConcurrency, s.MaxModelLen)
		fmt.Fprintf(&b, "  outside the budget for %s: %s left\n", outsideBudget(s), formatGiB(s.GraphHeadroom))
	}
	switch {
	case e.Host > 0 && e.HostCapacity == 0:
		fmt.Fprintf(&b, "\n  host memory per node: %s needed; not judged (the node's RAM was not given)\n", formatGiB(e.Host))
	case e.Host > 0 && e.Host <= e.HostCapacity:
		fmt.Fprintf(&b, "\n  host memory per node: %s of %s, headroom %s\n", formatGiB(e.Host), formatGiB(e.HostCapacity), formatGiB(e.HostCapacity-e.Host))
	case e.Host > 0:
		fmt.Fprintf(&b, "\n  host memory per node: %s of %s, short by %s\n", formatGiB(e.Host), formatGiB(e.HostCapacity), formatGiB(e.Host-e.HostCapacity))
	}
	if len(e.Notes) > 0 {
		b.WriteString("\n")
		for _, n := range e.Notes {
			fmt.Fprintf(&b, "  note: %s\n", n)
		}
	}
	b.WriteString("\n")
	var verdict string
	switch {
	case e.Refused != "":
		verdict = fmt.Sprintf("does not start: %s; had it started, %s of %s on %s",
			e.Refused, formatGiB(e.PerGPU.Total), formatGiB(e.Capacity), e.Target)
	case e.Fits:
		verdict = fmt.Sprintf("fits: %s of %s on %s, headroom %s",
			formatGiB(e.PerGPU.Total), formatGiB(e.Capacity), e.Target, formatGiB(e.Headroom))
	case e.Headroom < 0:
		verdict = fmt.Sprintf("does not fit: %s needed, %s has %s (short by %s)",
			formatGiB(e.PerGPU.Total), e.Target, formatGiB(e.Capacity), formatGiB(-e.Headroom))
	case e.HostShort():
		verdict = fmt.Sprintf("does not fit: host memory %s needed per node, the node has %s (short by %s); GPU memory %s of %s",
			formatGiB(e.Host), formatGiB(e.HostCapacity), formatGiB(e.Host-e.HostCapacity), formatGiB(e.PerGPU.Total), formatGiB(e.Capacity))
	default:
		verdict = fmt.Sprintf("does not fit: the KV cache cannot hold one max_model_len request on %s (capacity %s, headroom %s)",
			e.Target, formatGiB(e.Capacity), formatGiB(e.Headroom))
	}
	if opts.Color {
		color := ansiRed
		if e.Fits {
			color = ansiGreen
		}
		verdict = color + verdict + ansiReset
	}
	b.WriteString(verdict + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

type estimateRow struct {
	name   string
	letter byte   // the bar's segment without color
	color  string // the bar's segment with color
	v      int64
}

// rows are the breakdown's components, less those that are always zero for
// the workload: no KV cache in training, no gradients or optimizer states
// in inference and serving. A component that is zero only for this setup
// (optimizer states offloaded to the CPU) keeps its row.
func (e Estimate) rows() []estimateRow {
	all := []estimateRow{
		{"weights", 'W', "\x1b[34m", e.PerGPU.Weights},
		{"gradients", 'G', "\x1b[35m", e.PerGPU.Gradients},
		{"optimizer states", 'O', "\x1b[33m", e.PerGPU.OptimizerStates},
		{"activations", 'A', "\x1b[36m", e.PerGPU.Activations},
		{"kv cache", 'K', "\x1b[32m", e.PerGPU.KVCache},
		{"overhead", 'X', "\x1b[37m", e.PerGPU.Overhead},
	}
	training := e.Workload.Kind == Train || e.Workload.Kind == LoRA || e.Workload.Kind == QLoRA
	serving := e.Workload.Kind == Inference || e.Workload.Kind == Serve
	var out []estimateRow
	for _, r := range all {
		never := (training && r.name == "kv cache") ||
			(serving && (r.name == "gradients" || r.name == "optimizer states"))
		if never && r.v == 0 {
			continue
		}
		out = append(out, r)
	}
	return out
}

// barCells is the width of the breakdown bar.
const barCells = 50

// renderBar draws the rows as one bar scaled to the capacity (or to the
// total when it exceeds the capacity, with | at the capacity), each
// component a run of its letter or, with color, of colored blocks; free
// memory is dots. A legend follows. Rounding gives each non-zero component
// at least one cell.
func renderBar(b *strings.Builder, e Estimate, rows []estimateRow, color bool) {
	scale := max(e.PerGPU.Total, e.Capacity)
	if scale <= 0 {
		return
	}
	cells := func(v int64) int { return int((v*barCells + scale/2) / scale) }
	var bar []string // one string per cell
	var legend []string
	for _, r := range rows {
		if r.v <= 0 {
			continue
		}
		cell, key := string(r.letter), string(r.letter)
		if color {
			cell, key = r.color+"█"+ansiReset, r.color+"█"+ansiReset
		}
		for range max(cells(r.v), 1) {
			bar = append(bar, cell)
		}
		legend = append(legend, key+" "+r.name)
	}
	for len(bar) < barCells {
		bar = append(bar, ".")
	}
	if e.PerGPU.Total > e.Capacity {
		// Everything right of | is what the GPU lacks.
		at := min(cells(e.Capacity), len(bar))
		bar = append(bar[:at], append([]string{"|"}, bar[at:]...)...)
		legend = append(legend, "| capacity")
	} else {
		legend = append(legend, ". free")
	}
	fmt.Fprintf(b, "  [%s]\n   %s\n", strings.Join(bar, ""), strings.Join(legend, "  "))
}

// renderInputs writes the inputs, one a line, each marked given, assumed
// (with the default's basis) or with the project file line it came from.
func renderInputs(b *strings.Builder, in []EstimateInput) {
	nw, vw := 0, 0
	for _, x := range in {
		nw = max(nw, len(x.Name))
		vw = max(vw, len([]rune(fmt.Sprint(x.Value))))
	}
	b.WriteString("  inputs\n")
	for _, x := range in {
		how := "given"
		switch {
		case x.Assumed:
			how = "assumed"
			if x.Basis != "" {
				how += ": " + x.Basis
			}
		case x.From != "":
			how = x.From
		}
		fmt.Fprintf(b, "    %-*s  %-*s  %s\n", nw, x.Name, vw, fmt.Sprint(x.Value), how)
	}
	b.WriteString("\n")
}

func gib(v int64) string { return fmt.Sprintf("%.2f", float64(v)/float64(GiB)) }

// Thousands writes n with comma separators (39024 -> "39,024"), as the
// estimate and plan texts do.
func Thousands(n int64) string { return thousands(n) }

// thousands formats n with comma separators, as vLLM prints token counts.
func thousands(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}
