package tuner

import (
	"fmt"
	"io"
	"strings"
)

// RenderPlanText writes p as text: one table row per choice (setting,
// current value, proposed value, reason; a "*" marks a change), the notes,
// the verdict, then the estimate of the proposal as RenderEstimateText
// writes it. The output depends only on p.
func RenderPlanText(w io.Writer, p Plan) error {
	var b strings.Builder
	target := p.Estimate.Target
	fmt.Fprintf(&b, "plan for %s on %s (headroom %d%%)\n\n", p.Workload.Kind, target, int(p.Headroom*100+0.5))
	sw, fw, tw := len("setting"), len("current"), len("proposed")
	for _, c := range p.Choices {
		sw = max(sw, len(c.Setting))
		fw = max(fw, len([]rune(c.From)))
		tw = max(tw, len([]rune(c.To)))
	}
	fmt.Fprintf(&b, "    %-*s  %-*s  %-*s  %s\n", sw, "setting", fw, "current", tw, "proposed", "reason")
	for _, c := range p.Choices {
		mark := " "
		if c.Changed() {
			mark = "*"
		}
		fmt.Fprintf(&b, "  %s %-*s  %-*s  %-*s  %s\n", mark, sw, c.Setting, fw, c.From, tw, c.To, c.Reason)
	}
	if p.GlobalBatch > 0 {
		fmt.Fprintf(&b, "\n  global batch %d = micro batch %d × gradient accumulation %d × data parallel %d\n",
			p.GlobalBatch, p.Workload.MicroBatch, p.GradientAccumulation, max(p.Workload.DataParallel, 1))
	}
	if len(p.Notes) > 0 {
		b.WriteString("\n")
		for _, n := range p.Notes {
			fmt.Fprintf(&b, "  note: %s\n", n)
		}
	}
	fmt.Fprintf(&b, "\n%s\n\n", p.Verdict)
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	return RenderEstimateText(w, p.Estimate, RenderOptions{})
}
