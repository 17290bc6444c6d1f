package tuner

import (
	"strings"
	"testing"
)

// T5-family configs as the checkpoints publish them (trimmed to the
// architecture): t5-small (original T5: ReLU MLP, tied embeddings, no
// feed_forward_proj key) and google/flan-t5-base (T5 v1.1: gated GeLU,
// untied lm_head, d_kv × num_heads = d_model).
var t5Configs = map[string]string{
	"t5-small": `{"_name_or_path": "t5-small", "model_type": "t5", "d_model": 512, "d_ff": 2048, "d_kv": 64,
		"num_heads": 8, "num_layers": 6, "vocab_size": 32128, "n_positions": 512, "dropout_rate": 0.1,
		"relative_attention_num_buckets": 32}`,
	"flan-t5-base": `{"_name_or_path": "google/flan-t5-base", "model_type": "t5", "d_model": 768, "d_ff": 2048,
		"d_kv": 64, "num_heads": 12, "num_layers": 12, "num_decoder_layers": 12, "vocab_size": 32128,
		"feed_forward_proj": "gated-gelu", "tie_word_embeddings": false, "dropout_rate": 0.1,
		"relative_attention_num_buckets": 32, "torch_dtype": "float32"}`,
	"mt0-large": `{"_name_or_path": "bigscience/mt0-large", "model_type": "mt5", "d_model": 1024, "d_ff": 2816,
		"d_kv": 64, "num_heads": 16, "num_layers": 24, "num_decoder_layers": 24, "vocab_size": 250112,
		"feed_forward_proj": "gated-gelu", "tie_word_embeddings": false}`,
	"umt5-small": `{"model_type": "umt5", "d_model": 512, "d_ff": 1024, "d_kv": 64, "num_heads": 6,
		"num_layers": 8, "vocab_size": 256384, "tie_word_embeddings": false}`,
}

// TestT5Params holds the encoder-decoder parameter count to the totals
// transformers reports (model.num_parameters(), tied weights once):
// t5-small 60,506,624 and flan-t5-base 247,577,856. UMT5 repeats the
// relative-bias table in every block: 6 heads × 32 buckets × 16 blocks.
func TestT5Params(t *testing.T) {
	for _, tc := range []struct {
		name string
		want int64
	}{
		{"t5-small", 60_506_624},
		{"flan-t5-base", 247_577_856},
		// embeddings + lm_head 2 × 256384 × 512; 8 encoder blocks of
		// 4·512·384 + 3·512·1024 + 2·512; 8 decoder blocks of 2·4·512·384 +
		// 3·512·1024 + 3·512; 2 final norms; 16 bias tables of 32 × 6.
		{"umt5-small", 2*256384*512 + 8*(4*512*384+3*512*1024+2*512) + 8*(8*512*384+3*512*1024+3*512) + 2*512 + 16*32*6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := ModelFromHFConfig([]byte(t5Configs[tc.name]))
			if err != nil {
				t.Fatal(err)
			}
			if got := m.Params(); got != tc.want {
				t.Errorf("Params() = %d, want %d", got, tc.want)
			}
			if !m.EncoderDecoder() {
				t.Error("EncoderDecoder() = false")
			}
		})
	}
}

// TestT5LoRAParams holds LoRA on an encoder-decoder to PEFT's own count:
// huggingface/peft README.md (commit 0032f32) prints, for bigscience/mt0-large
// with LoraConfig(r=8) on PEFT's T5 default targets q and v, "trainable
// params: 2359296 || all params: 1231940608". The decoder's q and v sit in
// both its self- and its cross-attention.
func TestT5LoRAParams(t *testing.T) {
	m, err := ModelFromHFConfig([]byte(t5Configs["mt0-large"]))
	if err != nil {
		t.Fatal(err)
	}
	lora := loraParams(m, 8, []string{"q", "v"})
	if lora != 2_359_296 {
		t.Errorf("loraParams = %d, want 2359296", lora)
	}
	if all := m.Params() + lora; all != 1_231_940_608 {
		t.Errorf("Params + adapters = %d, want 1231940608", all)
	}
}

// TestT5TargetLen: the decoder and the logits run over the target length,
// the encoder over the source length. A longer target with the source fixed
// must add at least the loss's fp32 logits for the extra target tokens.
func TestT5TargetLen(t *testing.T) {
	m, err := ModelFromHFConfig([]byte(t5Configs["flan-t5-base"]))
	if err != nil {
		t.Fatal(err)
	}
	tg := Target{Name: "80 GiB", Capacity: 80 * GiB}
	w := Workload{Kind: Train, Precision: BF16, MicroBatch: 4, SeqLen: 512, TargetLen: 8, Attention: EagerAttention}
	short := estimate(t, m, tg, w)
	w.TargetLen = 512
	long := estimate(t, m, tg, w)
	logits := int64(12 * 4 * (512 - 8) * m.Vocab)
	if d := long.PerGPU.Activations - short.PerGPU.Activations; d < logits {
		t.Errorf("activations grew by %d bytes from target 8 to 512, want at least the logits' %d", d, logits)
	}
	if short.Workload.TargetLen != 8 {
		t.Errorf("resolved TargetLen = %d, want 8", short.Workload.TargetLen)
	}
	w.TargetLen = 0
	if e := estimate(t, m, tg, w); e.Workload.TargetLen != 512 {
		t.Errorf("default TargetLen = %d, want the source length 512", e.Workload.TargetLen)
	}
}

// TestT5Refused: the serving model and pipeline stages do not cover
// encoder-decoders; the estimate says so instead of sizing a decoder-only
// stand-in.
func TestT5Refused(t *testing.T) {
	m, err := ModelFromHFConfig([]byte(t5Configs["t5-small"]))
	if err != nil {
		t.Fatal(err)
	}
	tg := Target{Name: "80 GiB", Capacity: 80 * GiB}
	for _, tc := range []struct {
		name string
		w    Workload
		want string
	}{
		{"serve", Workload{Kind: Serve}, "encoder-decoder"},
		{"pipeline", Workload{Kind: Train, PipelineParallel: 2, DataParallel: 1}, "pipeline parallelism"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := EstimateMemory(m, tg, tc.w)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("EstimateMemory error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}
