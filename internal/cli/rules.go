package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/gpulint/gpulint/internal/ruledoc"
	"github.com/gpulint/gpulint/internal/rules"
)

// NewCmdRules builds `gpulint rules`: the catalog as a table, JSON or
// Markdown (the README table, or with --full the docs/rules.md page).
func NewCmdRules(f *Factory) *cobra.Command {
	var format string
	var full bool
	cmd := &cobra.Command{
		Use:   "rules",
		Short: "List the rules",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "text" && format != "json" && format != "markdown" {
				return &usageError{fmt.Errorf("unknown --format %q (want text, json or markdown)", format)}
			}
			deps, err := f.Deps()
			if err != nil {
				return err
			}
			out := f.IO.Out
			switch format {
			case "json":
				type jr struct {
					*rules.Rule
					Severity string `json:"severity"`
					DocURL   string `json:"doc_url"`
				}
				var all []jr
				for _, r := range deps.Catalog.All() {
					all = append(all, jr{Rule: r, Severity: r.Severity.String(), DocURL: r.DocURL()})
				}
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(all)
			case "markdown":
				if full {
					_, err = fmt.Fprint(out, ruledoc.Reference(deps.Catalog))
				} else {
					_, err = fmt.Fprint(out, ruledoc.Table(deps.Catalog))
				}
				return err
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tSLUG\tSEVERITY\tFIX\tKINDS\tTITLE")
			for _, r := range deps.Catalog.All() {
				fix := ""
				if r.Fixable {
					fix = "yes"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Slug, r.Severity, fix, strings.Join(r.Kinds, ","), r.Title)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "output format: text, json or markdown")
	cmd.Flags().BoolVar(&full, "full", false, "with --format markdown: the whole reference page, not only the table")
	return cmd
}

// NewCmdExplain builds `gpulint explain ID|SLUG`.
func NewCmdExplain(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "explain ID|SLUG",
		Short: "Explain a rule: why it matters and how to fix it",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			deps, err := f.Deps()
			if err != nil {
				return err
			}
			r, ok := deps.Catalog.Lookup(args[0])
			if !ok {
				msg := fmt.Sprintf("unknown rule %q", args[0])
				if s := deps.SuggestRule(args[0]); s != "" {
					msg += fmt.Sprintf(" (did you mean %s?)", s)
				}
				return &usageError{fmt.Errorf("%s; `gpulint rules` lists them", msg)}
			}
			_, err = fmt.Fprint(f.IO.Out, ruledoc.Explain(r))
			return err
		},
	}
}
