package tuner

import (
	"errors"
	"fmt"
)

// PPOShape is what a PPO (RLHF) run adds to a training workload: the
// models beside the trained policy and the trajectory-generation step.
// The shape follows torchtune's single-device PPO recipe
// (pytorch/torchtune recipes/ppo_full_finetune_single_device.py @
// bd2a0fc):
//
//   - _setup_models instantiates four models in the recipe's dtype: the
//     policy and the reference policy from policy_model, the reward and
//     the value model from reward_and_value_model (a classifier_model, the
//     base decoder with a num_classes-wide output projection in place of
//     the LM head). The policy and the value model train; the reference
//     policy and the reward model are frozen ("p.requires_grad = False").
//   - _setup_optimizer builds one optimizer over the policy's and the
//     value model's parameters (one per parameter under optimizer_in_bwd).
//   - activation checkpointing wraps the policy and the value model only.
//   - ppo_step runs the policy's forward (fp32 logits over the whole
//     query+response: TransformerDecoder.unembed returns
//     "self.output(h).float()", torchtune/modules/transformer.py), then the
//     value model's forward, then one backward through both: both graphs
//     are alive at once, over ppo_batch_size / gradient_accumulation_steps
//     sequences.
//   - generate_trajectory runs under no_grad in chunks of
//     forward_batch_size: the policy generates max_generated_tokens with a
//     KV cache of context + max_generated_tokens positions when
//     enable_kv_cache (local_kv_cache), keeping the generated tokens'
//     logits, then the reference policy, value and reward models run one
//     forward each over the query+response.
//
// The run's peak is the model states of all four models plus the larger
// of the two phases' transient memory. No published memory figure for the
// recipe was found (torchtune's PR #1005 and its docs give none), so the
// estimate is unvalidated and says so in its notes.
type PPOShape struct {
	// ValueClasses is the value and reward models' head width
	// (classifier_model num_classes); default 1. Both are the policy's
	// architecture with that head in place of the LM head.
	ValueClasses int
	// GeneratedTokens is max_generated_tokens: the response length. The
	// workload's SeqLen is the whole query+response.
	GeneratedTokens int
	// ForwardBatch is forward_batch_size, the trajectory-generation batch;
	// default the workload's MicroBatch (the PPO backward batch).
	ForwardBatch int
	// KVCache is enable_kv_cache: generation keeps a KV cache of SeqLen
	// positions for ForwardBatch sequences.
	KVCache bool
}

// PPOParts is a PPO estimate's per-model breakdown, in bytes per GPU.
type PPOParts struct {
	Policy, Value     Breakdown // trained: weights, gradients, optimizer states, activations
	Reference, Reward int64     // frozen weights
	ValueParams       int64     // the value (and reward) model's parameter count
	GenerationKV      int64     // the generation step's KV cache
	GenerationForward int64     // the generation step's logits and forward transients
	PolicyLogits      int64     // the PPO step's policy logits
	TrainingPhasePeak bool      // the PPO step, not generation, holds the larger transient
	PolicyParams      int64
	BackwardBatch     int
	ForwardBatch, Seq int
	GeneratedTokens   int
	ValueHeadClasses  int
}

// valueModel is m as torchtune's classifier_model builds it: the same
// decoder with a classes-wide output projection instead of the LM head.
func valueModel(m *Model, classes int) *Model {
	v := *m
	v.ID = m.ID + " (value head)"
	v.ExactParams = m.Params() - m.LMHeadParams() + int64(m.Hidden)*int64(classes)
	return &v
}

// estimatePPO sums the parts of a PPO run (PPOShape): the trained policy
// and value model sized by the training model, the frozen reference policy
// and reward model as weights, and the larger of the PPO step's and the
// generation step's transient memory.
func estimatePPO(e *Estimate, m *Model, t Target, r resolved) error {
	if r.world != 1 {
		return errors.New("the PPO model covers torchtune's single-device recipe: one GPU")
	}
	if m.EncoderDecoder() || m.Encoder {
		return fmt.Errorf("%s is not a decoder-only model; the PPO model covers decoder-only policies", m.ID)
	}
	s := r.PPO
	classes := max(s.ValueClasses, 1)
	fb := s.ForwardBatch
	if fb == 0 {
		fb = r.MicroBatch
	}
	vm := valueModel(m, classes)

	// The policy's logits are counted here rather than by the training
	// model's loss term: ppo_step keeps the fp32 logits of the whole
	// query+response only until "del pi_logits", and the log-softmax of the
	// response's logits (rlhf.logits_to_logprobs: the logits over the
	// temperature and their log_softmax, both fp32) for backward.
	train := r
	train.Kind = Train
	train.Loss = FusedLoss
	var pol, val Estimate
	if err := estimateTraining(&pol, m, t, train); err != nil {
		return err
	}
	vr := train // a classes-wide head: no vocabulary-wide logits
	if err := estimateTraining(&val, vm, t, vr); err != nil {
		return err
	}
	ab := actElemBytes(r.Precision)
	ref := int64(ab * float64(m.Params()))
	rew := int64(ab * float64(vm.Params()))

	// Generation (no_grad): the policy's KV cache for the whole
	// query+response, the generated tokens' logits that generate returns
	// (fp32), and the largest single forward that follows: the reference
	// policy over the query+response, its bf16 logits and their fp32 copy.
	seq := float64(r.SeqLen)
	var kv int64
	if s.KVCache {
		kv = int64(float64(fb) * seq * float64(m.KVBytesPerToken(1, ab)))
	}
	// unembed's ".float()" copies 16-bit logits to fp32; the 16-bit ones
	// are freed once copied (fp32 runs return the same tensor).
	vocab := float64(m.Vocab)
	fullLogit := 4.0
	if ab < 4 {
		fullLogit += ab
	}
	fwd := int64(float64(fb)*float64(s.GeneratedTokens)*vocab*4 + float64(fb)*seq*vocab*fullLogit)

	// The PPO step: both graphs alive, the policy's full logits while it
	// upcasts them and the response's log-softmax kept for backward. The
	// full logits are freed before the layers' recomputation; counting
	// both is an upper bound.
	b := float64(r.MicroBatch)
	logits := int64(b*seq*vocab*fullLogit + b*float64(s.GeneratedTokens)*vocab*8)
	act := pol.PerGPU.Activations + val.PerGPU.Activations + logits
	gen := kv + fwd
	parts := &PPOParts{
		Policy: pol.PerGPU, Value: val.PerGPU, Reference: ref, Reward: rew,
		ValueParams: vm.Params(), PolicyParams: m.Params(),
		GenerationKV: kv, GenerationForward: fwd, PolicyLogits: logits, TrainingPhasePeak: act >= gen,
		BackwardBatch: r.MicroBatch, ForwardBatch: fb, Seq: r.SeqLen,
		GeneratedTokens: s.GeneratedTokens, ValueHeadClasses: classes,
	}
	e.PPO = parts
	e.PerGPU = Breakdown{
		Weights:         pol.PerGPU.Weights + val.PerGPU.Weights + ref + rew,
		Gradients:       pol.PerGPU.Gradients + val.PerGPU.Gradients,
		OptimizerStates: pol.PerGPU.OptimizerStates + val.PerGPU.OptimizerStates,
	}
	if parts.TrainingPhasePeak {
		e.PerGPU.Activations = act
	} else {
		e.PerGPU.Activations, e.PerGPU.KVCache = fwd, kv
	}
	e.addOverhead("CUDA context", contextBytes(r))
	reservePct := int64(allocatorPercent)
	if r.Checkpointing {
		reservePct = allocatorPercentCheckpointed
	}
	e.addOverhead(fmt.Sprintf("allocator reserve (%d%% of activations)", reservePct), e.PerGPU.Activations*reservePct/100)
	e.Notes = append(e.Notes,
		fmt.Sprintf("PPO: policy %s (trained) + value model %s (trained, the policy's architecture with a %d-wide head) + reference policy %s (frozen) + reward model %s (frozen)",
			formatGiB(pol.PerGPU.Weights+pol.PerGPU.Gradients+pol.PerGPU.OptimizerStates),
			formatGiB(val.PerGPU.Weights+val.PerGPU.Gradients+val.PerGPU.OptimizerStates), classes,
			formatGiB(ref), formatGiB(rew)),
		fmt.Sprintf("PPO step activations %s (policy %s + its logits %s + value %s at %d sequences of %d tokens); generation %s (KV cache %s + logits %s at %d sequences); the peak counts the larger",
			formatGiB(act), formatGiB(pol.PerGPU.Activations), formatGiB(logits), formatGiB(val.PerGPU.Activations), r.MicroBatch, r.SeqLen,
			formatGiB(gen), formatGiB(kv), formatGiB(fwd), fb),
		"PPO estimate unvalidated: no published memory figure for torchtune's PPO recipe")
	if r.PagedOptimizer {
		e.Notes = append(e.Notes, fmt.Sprintf("paged optimizer: %s of optimizer state counted on the GPU; under memory pressure paging can spill it to host at a speed cost",
			formatGiB(e.PerGPU.OptimizerStates)))
	}
	e.Notes = append(e.Notes, reserveBandNote(r.Checkpointing))
	return nil
}
