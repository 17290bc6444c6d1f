package recipe

import (
	"strings"

	"github.com/gpulint/gpulint/tuner"
)

// bnbOptimizer is a bitsandbytes optimizer a recipe names, as the memory
// model sizes it.
type bnbOptimizer struct {
	optimizer  tuner.Optimizer
	paged      bool
	fp32States bool // 32-bit states: fp32 whatever the parameters' dtype
}

// bnbStates is how many states each bitsandbytes optimizer family keeps
// per parameter, by lower-cased class name without Paged and the 8bit or
// 32bit suffix (bitsandbytes-foundation/bitsandbytes bitsandbytes/optim/
// __init__.py @ 1b8772a8): Adam, AdamW and LAMB subclass Optimizer2State
// (adam.py, adamw.py, lamb.py); Lion, SGD (momentum only: "SGD without
// momentum is not supported!"), RMSprop, Adagrad and LARS subclass
// Optimizer1State (lion.py @ 19b9ef34, sgd.py @ 0b078403, rmsprop.py,
// adagrad.py, lars.py). An 8-bit class keeps tensors under
// min_8bit_size (4096 elements) in fp32 and adds block-wise absmax
// scales; like Adam8bit's 2 B/param, the model counts 1 byte per state.
// A class left out (AdEMAMix keeps a third, slow moment: state1 is a
// double buffer beside state2, ademamix.py @ 09118549 init_state;
// PytorchLARS is a torch optimizer; AdamE, and any class added later) has
// states the memory model does not know: the recipe is unsized rather
// than sized as a stand-in that could be smaller.
var bnbStates = map[string]int{
	"adam": 2, "adamw": 2, "lamb": 2,
	"lion": 1, "sgd": 1, "rmsprop": 1, "adagrad": 1, "lars": 1,
}

// bnbOptimizerOf reads opt, an optimizer name as normalize writes it
// (lower-cased), as a bitsandbytes optimizer: a component class
// "bitsandbytes.optim.<Class>" (torchtune, LitGPT), or a Trainer optim
// name transformers builds from bitsandbytes' Lion or RMSprop
// ("lion_32bit", "paged_lion_8bit", "rmsprop_bnb", "rmsprop_bnb_8bit",
// "ademamix_8bit";
// huggingface/transformers src/transformers/trainer.py
// get_optimizer_cls_and_kwargs: paged when the name holds "paged",
// optim_bits 8 when it holds "8bit", else 32). isBnb says the name is a
// bitsandbytes optimizer at all; ok that the memory model knows its states.
// A class without a bits suffix runs at its optim_bits default, 32.
func bnbOptimizerOf(opt string) (b bnbOptimizer, isBnb, ok bool) {
	var class string
	switch {
	case strings.HasPrefix(opt, "bitsandbytes.optim."):
		class = strings.TrimPrefix(opt, "bitsandbytes.optim.")
	case opt == "lion_32bit" || opt == "lion_8bit" || opt == "paged_lion_32bit" || opt == "paged_lion_8bit":
		class = strings.ReplaceAll(opt, "_", "")
	case opt == "rmsprop_bnb" || opt == "rmsprop_bnb_8bit" || opt == "rmsprop_bnb_32bit":
		class = strings.ReplaceAll(strings.Replace(opt, "_bnb", "", 1), "_", "")
	case opt == "ademamix" || opt == "ademamix_8bit" || opt == "paged_ademamix_32bit" || opt == "paged_ademamix_8bit":
		// bitsandbytes' AdEMAMix too (the same dispatch).
		class = strings.ReplaceAll(opt, "_", "")
	default:
		return b, false, false
	}
	class, b.paged = strings.CutPrefix(class, "paged")
	bits := 32
	if c, ok8 := strings.CutSuffix(class, "8bit"); ok8 {
		class, bits = c, 8
	} else {
		class = strings.TrimSuffix(class, "32bit")
	}
	n, known := bnbStates[class]
	if !known {
		return b, true, false
	}
	switch {
	case n == 2 && bits == 8:
		b.optimizer = tuner.Adam8bit
	case n == 2:
		// AdamW is the memory model's default regime: left unset.
		b.fp32States = true
	case bits == 8:
		b.optimizer = tuner.OneState8bit
	default:
		// One fp32 state per parameter: the bytes of SGD with momentum.
		b.optimizer, b.fp32States = tuner.SGD, true
	}
	return b, true, true
}
