package cli_test

import (
	"os"
	"strings"
	"testing"
)

// qloraAxolotl is a small axolotl QLoRA recipe on which two rules carry a
// fix: FT004 (load the 8B base in 16 bits on an H100) and TUNE001 (a
// larger micro batch, sized for the 4-bit base).
const qloraAxolotl = `base_model: meta-llama/Llama-3.1-8B
load_in_8bit: false
load_in_4bit: true
adapter: qlora
lora_r: 16
lora_target_linear: true
sequence_len: 2048
micro_batch_size: 1
gradient_accumulation_steps: 4
bf16: auto
gradient_checkpointing: true
dataloader_num_workers: 4
`

// TestFixTuneReplansAfterRuleFixes: fix --tune applies FT004's fix and
// TUNE001's plan made again on its result, writes a file the final lint
// accepts (a second fix --tune changes nothing), and keeps micro batch ×
// accumulation at the recipe's 4.
func TestFixTuneReplansAfterRuleFixes(t *testing.T) {
	dir := t.TempDir()
	path := write(t, dir, "qlora.yml", qloraAxolotl)
	args := []string{"fix", "--tune", "--write", "--gpu", "H100", "--fail-on", "never", path}
	_, stderr, code := run(t, false, nil, args...)
	if code != 0 || strings.Contains(stderr, "nothing written") || strings.Contains(stderr, "still reported") {
		t.Fatalf("exit code %d; stderr:\n%s", code, stderr)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	for _, want := range []string{"load_in_4bit: false\n", "adapter: lora\n", "micro_batch_size: 2\n", "gradient_accumulation_steps: 2\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("fixed file lacks %q:\n%s", want, got)
		}
	}
	_, stderr, code = run(t, false, nil, args...)
	if code != 0 || !strings.Contains(stderr, "gpulint: fixed 0 findings in 0 files\n") {
		t.Errorf("a second fix --tune: exit code %d; stderr:\n%s", code, stderr)
	}
}
