package recipe

import "strings"

// standInFamilies are optimizer families a recipe may name (transformers
// TrainingArguments optim, src/transformers/training_args.py OptimizerNames:
// galore_*, apollo_*, lomo, adalomo, *lion*, rmsprop*, *ademamix*,
// schedule_free_*, grokadamw, adamw_torch_4bit; torchtune and LitGPT
// optimizer components by class name) whose states the memory model has no
// regime for. Workload sizes them as the optimizer their name contains
// (8-bit Adam, Adafactor, SGD) or else as AdamW.
var standInFamilies = []string{
	"galore", "apollo", "lomo", "lion", "rmsprop", "ademamix", "schedule_free",
	"grokadamw", "4bit", "muon", "sophia", "adan", "lamb", "adam_mini", "adammini", "soap",
}

// OptimizerStandIn says, for an optimizer name as a recipe writes it, what
// the memory model sizes it as when that is a stand-in ("sized as AdamW:
// ..."), or "" when the model sizes the optimizer itself.
func OptimizerStandIn(name string) string {
	n := strings.ToLower(name)
	if _, isBnb, _ := bnbOptimizerOf(n); isBnb {
		// Sized by its own states, or unsized (bnbOptimizerOf).
		return ""
	}
	for _, f := range standInFamilies {
		if strings.Contains(n, f) {
			return "sized as " + sizedAs(n) + ": the memory model has no regime for " + name + "'s states"
		}
	}
	return ""
}

// sizedAs names the optimizer Workload sizes a recipe's optimizer name as.
func sizedAs(n string) string {
	switch {
	case strings.Contains(n, "8bit"):
		return "8-bit Adam"
	case strings.Contains(n, "adafactor"):
		return "Adafactor"
	case strings.Contains(n, "sgd"):
		return "SGD"
	}
	return "AdamW"
}
