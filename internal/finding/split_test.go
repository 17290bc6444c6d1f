package finding

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestSplit(t *testing.T) {
	long := strings.Repeat("word ", 40) // 200 runes
	tests := []struct {
		name        string
		msg         string
		wantSummary string
		wantDetails []string
	}{
		{name: "short message stays whole", msg: "train_batch_size is 48 but 8 × 2 × 4 = 64"},
		{
			name:        "a $(VAR) reference is text, not an aside",
			msg:         "max_model_len 32768 → 22528 for gs://$(MODEL_BUCKET_NAME)/qwen/qwen3-32b (mapped by name from the path)" + strings.Repeat(", and more", 5) + "; assumes the model",
			wantSummary: "max_model_len 32768 → 22528 for gs://$(MODEL_BUCKET_NAME)/qwen/qwen3-32b" + strings.Repeat(", and more", 5) + "; assumes the model",
			wantDetails: []string{"mapped by name from the path", "assumes the model"},
		},
		{
			name:        "a dropped aside leaves no space before punctuation",
			msg:         "num-shard 4 needs 4 GPUs but the server gets 2 (its nvidia.com/gpu limit): TGI starts one shard per GPU" + strings.Repeat(", and more", 5) + "; and fails at start-up",
			wantSummary: "num-shard 4 needs 4 GPUs but the server gets 2: TGI starts one shard per GPU" + strings.Repeat(", and more", 5),
			wantDetails: []string{"its nvidia.com/gpu limit", "and fails at start-up"},
		},
		{
			name:        "arithmetic and later clauses move to details",
			msg:         "micro batch is 1 but A100-80GB holds 5 (weights 15.1 GiB + gradients 0.2 GiB + optimizer states 0.3 GiB + activations 10.0 GiB + overhead 1.0 GiB); accumulation (16 steps) runs serially",
			wantSummary: "micro batch is 1 but A100-80GB holds 5",
			wantDetails: []string{
				"weights 15.1 GiB + gradients 0.2 GiB + optimizer states 0.3 GiB + activations 10.0 GiB + overhead 1.0 GiB",
				"accumulation (16 steps) runs serially",
			},
		},
		{
			name:        "a semicolon inside parentheses does not split",
			msg:         "needs 90 GiB (a; b) on H100" + strings.Repeat(" and more", 12) + "; assumes seq_len 2048 (set targets.seq_len)",
			wantSummary: "needs 90 GiB on H100" + strings.Repeat(" and more", 12) + "; assumes seq_len 2048",
			wantDetails: []string{"a; b", "assumes seq_len 2048 (set targets.seq_len)"},
		},
		{
			name: "what the verdict assumes and a withheld fix stay in the summary, in short",
			msg: "holds a micro batch of 2 for this model (weights 2.8 GiB + activations 15.3 GiB); accumulation runs serially; " +
				"assumes seq_len 2048 (set targets.seq_len), method full (set targets.method: full, lora or qlora); no fix until the sequence length is known",
			wantSummary: "holds a micro batch of 2 for this model; assumes seq_len 2048, method full; no fix until the sequence length is known",
			wantDetails: []string{"weights 2.8 GiB + activations 15.3 GiB", "accumulation runs serially",
				"assumes seq_len 2048 (set targets.seq_len), method full (set targets.method: full, lora or qlora)",
				"no fix until the sequence length is known"},
		},
		{
			name:        "a first clause too long is cut at a word",
			msg:         long + "; tail",
			wantSummary: strings.TrimSpace(long[:155]) + "…",
			wantDetails: []string{long, "tail"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, d := Split(tc.msg)
			if s != tc.wantSummary {
				t.Errorf("summary = %q, want %q", s, tc.wantSummary)
			}
			if diff := cmp.Diff(tc.wantDetails, d); diff != "" {
				t.Errorf("details (-want +got):\n%s", diff)
			}
			body, _, _ := strings.Cut(s, "; assumes ") // the qualifiers ride along
			if n := utf8.RuneCountInString(body); n > LineWidth {
				t.Errorf("summary has %d runes, more than %d", n, LineWidth)
			}
		})
	}
}

func TestSplitAtColonOrComma(t *testing.T) {
	parts := strings.Repeat("part 1.0 GiB + ", 4) + "overhead 2.0 GiB"
	msg := "estimated 90.0 GiB per GPU exceeds L4's 22.0 GiB: " + parts + ", far over what any setting of its inputs would allow; assumes seq_len 2048"
	s, d := Split(msg)
	if want := "estimated 90.0 GiB per GPU exceeds L4's 22.0 GiB: " + parts + "; assumes seq_len 2048"; s != want {
		t.Errorf("summary = %q, want %q", s, want)
	}
	if diff := cmp.Diff([]string{"far over what any setting of its inputs would allow", "assumes seq_len 2048"}, d); diff != "" {
		t.Errorf("details (-want +got):\n%s", diff)
	}
	msg = "estimated 90.0 GiB per GPU exceeds L4's 22.0 GiB: " + parts + " " + parts + "; assumes seq_len 2048"
	s, d = Split(msg)
	if want := "estimated 90.0 GiB per GPU exceeds L4's 22.0 GiB; assumes seq_len 2048"; s != want {
		t.Errorf("summary = %q, want %q", s, want)
	}
	if diff := cmp.Diff([]string{parts + " " + parts, "assumes seq_len 2048"}, d); diff != "" {
		t.Errorf("details (-want +got):\n%s", diff)
	}
}
