package tuner

import "sort"

// OptimizerChoice is an optimizer named by the estimate's --optimizer flag
// or a project file's targets.optimizer: the optimizer the memory model
// sizes, whether its states are paged, and, for an optimizer the model has
// no regime for, the name it is sized as.
type OptimizerChoice struct {
	Optimizer Optimizer
	Paged     bool
	// FP32States says the optimizer keeps fp32 states whatever the
	// parameters' dtype (Workload.FP32OptimizerStates): bitsandbytes'
	// 32-bit PagedAdamW, which "paged-adamw" names.
	FP32States bool
	// StandIn is set when the named optimizer is sized as another one: the
	// estimate then rests on that assumption and must say so.
	StandIn string
}

// optimizerNames are the names --optimizer and targets.optimizer accept.
//
// GaLore (jiaweizzhao/GaLore, galore_torch GaLoreAdamW, GaLoreAdamW8bit,
// GaLoreAdafactor; transformers TrainingArguments optim "galore_adamw",
// "galore_adamw_8bit", "galore_adafactor", src/transformers/training_args.py
// OptimizerNames) keeps its moments in a low-rank projection of each
// projected matrix's gradient, so its states are smaller than the
// optimizer it wraps. The memory model has no projection regime: it sizes
// GaLore as the wrapped optimizer, an upper bound on the states.
var optimizerNames = map[string]OptimizerChoice{
	"adamw": {Optimizer: AdamW}, "adamw-foreach": {Optimizer: AdamWForeach},
	"adamw-fused": {Optimizer: AdamWFused}, "adamw-forloop": {Optimizer: AdamWForLoop},
	"adam8bit": {Optimizer: Adam8bit}, "adamw8bit": {Optimizer: Adam8bit},
	"paged-adamw": {Optimizer: AdamW, Paged: true, FP32States: true}, "paged-adamw8bit": {Optimizer: Adam8bit, Paged: true},
	"paged-adam8bit": {Optimizer: Adam8bit, Paged: true},
	"sgd":            {Optimizer: SGD}, "adafactor": {Optimizer: Adafactor},
	"galore-adamw":     {Optimizer: AdamW, StandIn: "adamw"},
	"galore-adamw8bit": {Optimizer: Adam8bit, StandIn: "adam8bit"},
	"galore-adafactor": {Optimizer: Adafactor, StandIn: "adafactor"},
}

// OptimizerByName looks up an optimizer name as --optimizer and
// targets.optimizer spell it.
func OptimizerByName(name string) (OptimizerChoice, bool) {
	c, ok := optimizerNames[name]
	return c, ok
}

// Set gives w the chosen optimizer: its regime, whether its states are
// paged and whether they stay fp32 over 16-bit parameters.
func (c OptimizerChoice) Set(w *Workload) {
	w.Optimizer, w.PagedOptimizer, w.FP32OptimizerStates = c.Optimizer, c.Paged, c.FP32States
}

// OptimizerNames lists the accepted optimizer names, sorted.
func OptimizerNames() []string {
	out := make([]string, 0, len(optimizerNames))
	for k := range optimizerNames {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// StandInBasis says, for an input list, why an optimizer sized as another
// is an assumption.
func (c OptimizerChoice) StandInBasis(name string) string {
	if c.StandIn == "" {
		return ""
	}
	return "sized as " + c.StandIn + ": the memory model has no regime for " + name + "'s states (an upper bound)"
}
