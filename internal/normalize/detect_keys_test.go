package normalize

import (
	"slices"
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"github.com/google/go-cmp/cmp"

	"github.com/gpulint/gpulint/internal/source"
)

// TestDetectionKnowsDeepSpeedTopLevel holds the key table kind detection
// counts as DeepSpeed's to the top-level fields of #DeepSpeed: a key the
// schema accepts but detection calls foreign would turn a real DeepSpeed
// config into an unknown file.
func TestDetectionKnowsDeepSpeedTopLevel(t *testing.T) {
	def := builtSchemas(t)["deepspeed"].Def
	it, err := def.Fields(cue.Optional(true))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for it.Next() {
		if name := it.Selector().String(); !strings.HasPrefix(name, "_") {
			want = append(want, strings.TrimSuffix(name, "?"))
		}
	}
	if len(want) < 10 {
		t.Fatalf("#DeepSpeed lists only %d fields", len(want))
	}
	slices.Sort(want)
	if diff := cmp.Diff(want, source.DeepSpeedTopLevelKeys()); diff != "" {
		t.Errorf("source.DeepSpeedTopLevelKeys differs from #DeepSpeed's fields (-schema +detection):\n%s", diff)
	}
}
