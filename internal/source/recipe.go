package source

import "strings"

// Fine-tuning recipes are recognised by the keys their tools read. A
// recipe is open-ended (any TrainingArguments field, any axolotl option),
// so detection looks for a few keys only these formats use together.

// trainerKeys are Hugging Face TrainingArguments fields (transformers
// src/transformers/training_args.py), which TRL, alignment-handbook and
// LLaMA-Factory recipes set at the top level.
var trainerKeys = map[string]bool{
	"per_device_train_batch_size": true, "per_device_eval_batch_size": true,
	"gradient_accumulation_steps": true, "gradient_checkpointing": true,
	"learning_rate": true, "num_train_epochs": true, "max_steps": true,
	"output_dir": true, "dataloader_num_workers": true, "dataloader_pin_memory": true,
	"optim": true, "lr_scheduler_type": true, "warmup_ratio": true, "warmup_steps": true,
	"logging_steps": true, "save_steps": true, "save_strategy": true, "eval_strategy": true,
	"bf16": true, "fp16": true, "tf32": true, "deepspeed": true, "model_name_or_path": true,
	"weight_decay": true, "do_train": true, "do_eval": true, "report_to": true,
	"overwrite_output_dir": true, "push_to_hub": true, "hub_model_id": true, "seed": true,
}

// trainerStrongKeys are the TrainingArguments (and model-argument) fields
// a file must have one of to be taken as a recipe: no DeepSpeed,
// Accelerate or vLLM config uses them.
var trainerStrongKeys = map[string]bool{
	"per_device_train_batch_size": true, "per_device_eval_batch_size": true,
	"model_name_or_path": true, "gradient_checkpointing": true,
	"num_train_epochs": true, "dataloader_num_workers": true, "do_train": true,
}

// axolotlKeys are axolotl options (axolotl src/axolotl/utils/schemas)
// that go with base_model.
var axolotlKeys = map[string]bool{
	"micro_batch_size": true, "sequence_len": true, "adapter": true, "datasets": true,
	"load_in_4bit": true, "load_in_8bit": true, "sample_packing": true,
	"num_epochs": true, "lora_r": true, "gradient_accumulation_steps": true,
	"flash_attention": true, "output_dir": true, "val_set_size": true,
}

// neoxModelKeys are gpt-neox model-definition keys, written with dashes
// or underscores (gpt-neox configs/*.yml).
var neoxModelKeys = map[string]bool{
	"num_layers": true, "hidden_size": true, "num_attention_heads": true,
	"seq_length": true, "max_position_embeddings": true,
	"pipe_parallel_size": true, "model_parallel_size": true,
}

// isRecipe reports whether a document is a fine-tuning recipe.
func isRecipe(root *Node) bool {
	var trainer, strong, axolotl, neox int
	for _, e := range root.Entries {
		k := e.Key.Text
		if trainerKeys[k] {
			trainer++
		}
		if trainerStrongKeys[k] {
			strong++
		}
		if axolotlKeys[k] {
			axolotl++
		}
		if neoxModelKeys[strings.ReplaceAll(k, "-", "_")] {
			neox++
		}
		// torchtune: components named by _component_ (torchtune.models...,
		// torchtune.datasets..., torchtune.training...).
		if e.Value != nil && e.Value.Kind == MapNode {
			if c := e.Value.Get("_component_"); c != nil && c.Kind == ScalarNode && strings.HasPrefix(c.Text, "torchtune.") {
				return true
			}
		}
	}
	switch {
	case root.Get("base_model") != nil && axolotl >= 1:
		return true // axolotl
	case root.Get("finetuning_type") != nil || root.Get("quantization_bit") != nil ||
		(root.Get("cutoff_len") != nil && root.Get("model_name_or_path") != nil):
		return true // LLaMA-Factory
	case neox >= 3:
		return true // gpt-neox
	}
	return strong >= 1 && trainer >= 2
}
