// Package recipe holds what only fine-tuning recipes know (Hugging Face
// Trainer/TRL, axolotl, LLaMA-Factory, torchtune, gpt-neox), once
// normalize has read a recipe into its workload model:
//
//   - deepspeed.go: where the DeepSpeed config a recipe names may lie, and
//     how its ZeRO settings join the recipe's workload;
//   - workload.go: the recipe as the memory model's workload (full
//     fine-tune, LoRA, QLoRA), and the alternatives its advice rules
//     compare against;
//   - tune.go: where each recipe family writes a tuned setting;
//   - hardware.go: the hardware a recipe's leading comment states (nodes ×
//     GPUs, the GPU, a named sharding, or several setups as alternatives),
//     which the linter takes as an assumed input;
//   - statement.go: the hardware a comment anywhere else in a recipe
//     states ("Max size tested on A6000", "up to 8k will work on a single
//     H100"), read when the leading block states none.
//
// It returns plain data (paths, values, tuner workloads); the linter turns
// them into rule input, findings and edits.
package recipe
