package normalize

import (
	"strings"
	"testing"

	"github.com/gpulint/gpulint/internal/cmdline"
)

// TestVLLMSchemaOptionsAreParserOptions holds the command-line parser's
// option table to the vLLM schema: every top-level key the schema knows is
// an option string the parser knows (a name, or the --no- form of a
// negatable boolean). The parser resolves abbreviations against those
// strings the way argparse does, so an option only the schema knew would
// let a prefix look unique to gpulint that vLLM rejects as ambiguous.
func TestVLLMSchemaOptionsAreParserOptions(t *testing.T) {
	root := planVllm()
	if len(root.Names) == 0 {
		t.Fatal("the vllm plan lists no top-level keys")
	}
	for _, name := range root.Names {
		if _, ok := cmdline.LookupOption(name); ok {
			continue
		}
		if base, ok := strings.CutPrefix(name, "no-"); ok {
			if o, ok := cmdline.LookupOption(base); ok && o.Negatable {
				continue
			}
		}
		t.Errorf("schema key %q is not an option string of internal/cmdline's table", name)
	}
}
