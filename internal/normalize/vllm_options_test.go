package normalize

import (
	"os"
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

// TestVLLMSchemaKnowsFrontendOptions holds the vLLM schema to the frontend
// options of a pinned vLLM commit (testdata/vllm_frontend_options.txt names
// it): each is a top-level key of the schema and an option of the
// command-line parser's table, so a real flag is never reported unknown and
// an abbreviation is judged against the option strings vLLM registers.
func TestVLLMSchemaKnowsFrontendOptions(t *testing.T) {
	data, err := os.ReadFile("testdata/vllm_frontend_options.txt")
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	for _, n := range planVllm().Names {
		keys[n] = true
	}
	n := 0
	for line := range strings.Lines(string(data)) {
		name := strings.TrimSpace(line)
		if name == "" || strings.HasPrefix(name, "#") {
			continue
		}
		n++
		if !keys[name] {
			t.Errorf("vLLM option --%s is not a key of schemas/vllm.cue", name)
		}
		if _, ok := cmdline.LookupOption(name); !ok {
			t.Errorf("vLLM option --%s is not in internal/cmdline's option table", name)
		}
	}
	if n == 0 {
		t.Fatal("the option list names no option")
	}
}
