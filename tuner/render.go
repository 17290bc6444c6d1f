package tuner

import (
	"fmt"
	"io"
	"strings"
)

// RenderOptions controls RenderEstimateText.
type RenderOptions struct {
	// Color adds a bar per component and colors the verdict; set it only when
	// the output is a terminal.
	Color bool
}

const (
	barWidth  = 24
	ansiRed   = "\x1b[31m"
	ansiGreen = "\x1b[32m"
	ansiDim   = "\x1b[2m"
	ansiReset = "\x1b[0m"
)

// RenderEstimateText writes a readable table of e: one row per component
// with GiB and its share of the total, the overhead's parts, serving figures,
// notes, and a final verdict line naming the capacity and the headroom. The
// output depends only on e and opts.
func RenderEstimateText(w io.Writer, e Estimate, opts RenderOptions) error {
	var b strings.Builder
	fmt.Fprintf(&b, "memory per GPU on %s (capacity %s)\n\n", e.Target, formatGiB(e.Capacity))
	nameWidth := 22
	for _, o := range e.Overheads {
		nameWidth = max(nameWidth, len([]rune(o.Name))+2)
	}
	fmt.Fprintf(&b, "  %-*s %10s %7s\n", nameWidth, "component", "GiB", "share")
	rows := []struct {
		name string
		v    int64
	}{
		{"weights", e.PerGPU.Weights},
		{"gradients", e.PerGPU.Gradients},
		{"optimizer states", e.PerGPU.OptimizerStates},
		{"activations", e.PerGPU.Activations},
		{"kv cache", e.PerGPU.KVCache},
		{"overhead", e.PerGPU.Overhead},
	}
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
	if s := e.Serve; s != nil {
		fmt.Fprintf(&b, "\n  vLLM: gpu_memory_utilization %.2f → budget %s; max_num_batched_tokens %d, max_num_seqs %d, block size %d\n",
			s.GPUMemoryUtilization, formatGiB(s.Budget), s.MaxNumBatchedTokens, s.MaxNumSeqs, s.BlockSize)
		fmt.Fprintf(&b, "  KV cache: %d bytes per token, %s tokens, maximum concurrency %.2fx at max_model_len %d\n",
			s.KVBytesPerToken, thousands(s.KVCacheTokens), s.MaxConcurrency, s.MaxModelLen)
		fmt.Fprintf(&b, "  outside the budget for the CUDA context and graphs: %s left\n", formatGiB(s.GraphHeadroom))
	}
	if e.Host > 0 {
		fmt.Fprintf(&b, "\n  host memory per node: %s\n", formatGiB(e.Host))
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
	case e.Fits:
		verdict = fmt.Sprintf("fits: %s of %s on %s, headroom %s",
			formatGiB(e.PerGPU.Total), formatGiB(e.Capacity), e.Target, formatGiB(e.Headroom))
	case e.Headroom < 0:
		verdict = fmt.Sprintf("does not fit: %s needed, %s has %s (short by %s)",
			formatGiB(e.PerGPU.Total), e.Target, formatGiB(e.Capacity), formatGiB(-e.Headroom))
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
