package tuner

import "fmt"

// VisionTower is the image encoder and projector of a vision-language
// checkpoint. vLLM builds and loads it beside the language model (Gemma 3:
// vllm/model_executor/models/gemma3_mm.py builds SiglipVisionModel and
// Gemma3MultiModalProjector; Qwen2.5-VL: qwen2_5_vl.py
// Qwen2_5_VisionTransformer; LLaVA: llava.py init_vision_tower_for_llava and
// LlavaMultiModalProjector), so its weights are part of "Model loading
// took". Params counts what the checkpoint holds, read from config.json's
// vision_config with the module layout of transformers' modeling files.
type VisionTower struct {
	Type   string // vision_config model_type (siglip_vision_model, clip_vision_model, qwen2_5_vl)
	Params int64  // encoder and projector
}

// visionFromConfig sizes the vision tower of a multimodal config.json:
// outer is the whole config, vc its vision_config, textHidden the language
// model's hidden size the projector maps into. A vision_config of a type
// not listed here gives nil: the tower is then left out, as before.
func visionFromConfig(outer, vc hfConfig, textHidden int) (*VisionTower, error) {
	var errs []error
	need := func(keys ...string) int64 {
		v, ok, err := vc.int(keys...)
		if err != nil || !ok {
			errs = append(errs, fmt.Errorf("vision_config: missing %v", keys))
		}
		return int64(v)
	}
	opt := func(def int, keys ...string) int64 {
		v, ok, _ := vc.int(keys...)
		if !ok {
			return int64(def)
		}
		return int64(v)
	}
	th := int64(textHidden)
	mt := vc.str("model_type")
	if mt == "" && outer.str("model_type") == "qwen2_5_vl" {
		mt = "qwen2_5_vl"
	}
	var p int64
	switch mt {
	case "siglip_vision_model", "clip_vision_model":
		// transformers models/siglip and models/clip modeling files: each
		// encoder layer has q, k, v, out_proj with biases, fc1 and fc2 with
		// biases and two LayerNorms; the embeddings are a patch Conv2d
		// (SigLIP with bias, CLIP without) and learned positions (CLIP adds
		// a class token and its position); SigLIP ends with post_layernorm,
		// CLIP has pre_layrnorm and post_layernorm.
		h, i, l := need("hidden_size"), need("intermediate_size"), need("num_hidden_layers")
		patch, image, ch := need("patch_size"), need("image_size"), opt(3, "num_channels")
		layer := 4*(h*h+h) + 2*h*i + i + h + 4*h
		positions := (image / max(patch, 1)) * (image / max(patch, 1))
		p = l*layer + ch*patch*patch*h + positions*h + 2*h
		if mt == "clip_vision_model" {
			p += h /* class token */ + h /* its position */ + 2*h /* pre_layrnorm */
		} else {
			p += h // patch conv bias
		}
		switch outer.str("model_type") {
		case "gemma3":
			// Gemma3MultiModalProjector: mm_soft_emb_norm (RMSNorm over
			// the vision width) and mm_input_projection_weight (vision
			// width × text width), no bias.
			p += h + h*th
		case "llava":
			// LlavaMultiModalProjector: linear_1 (vision → text width) and
			// linear_2 (text → text), with biases unless
			// multimodal_projector_bias is false.
			p += h*th + th*th
			if outer.bool("multimodal_projector_bias", true) {
				p += 2 * th
			}
		}
	case "qwen2_5_vl":
		// transformers models/qwen2_5_vl/modeling_qwen2_5_vl.py: each
		// Qwen2_5_VLVisionBlock has norm1, norm2 (RMSNorm), attn.qkv and
		// attn.proj with biases and a gated MLP (gate_proj, up_proj,
		// down_proj with biases); the patch embedding is a Conv3d without
		// bias over temporal_patch_size × patch_size²; the merger is ln_q
		// (RMSNorm) and a two-layer MLP from hidden × spatial_merge_size²
		// to out_hidden_size, with biases.
		h, i, l := need("hidden_size", "embed_dim"), need("intermediate_size"), need("depth")
		patch, tp, ch := opt(14, "patch_size"), opt(2, "temporal_patch_size"), opt(3, "in_chans", "in_channels")
		merge := opt(2, "spatial_merge_size")
		out := opt(textHidden, "out_hidden_size")
		block := 2*h + (3*h*h + 3*h) + (h*h + h) + 2*(h*i+i) + i*h + h
		m := h * merge * merge
		p = l*block + ch*tp*patch*patch*h + h + (m*m + m) + (m*out + out)
	case "mllama_vision_model":
		// transformers models/mllama/modeling_mllama.py MllamaVisionModel:
		// patch Conv2d without bias, class_embedding, a gated positional
		// embedding (num_patches+1 positions, a gate, and a tile embedding
		// of (max_aspect_ratio_id+1) × max_num_tiles·(num_patches+1)·h),
		// gated pre- and post-tile aspect-ratio embeddings of
		// (max_aspect_ratio_id+1) × max_num_tiles·h, layernorm_pre and
		// layernorm_post; num_hidden_layers local and num_global_layers
		// gated encoder layers (q, k, v, o without bias, fc1 and fc2 with
		// bias, two LayerNorms; the global ones add gate_attn and
		// gate_ffn); MllamaForConditionalGeneration's multi_modal_projector
		// maps vision_output_dim to the text width with a bias.
		// max_aspect_ratio_id is len(supported_aspect_ratios)
		// (configuration_mllama.py), 8 in its default list for 4 tiles.
		h, i := need("hidden_size"), need("intermediate_size")
		local, global := need("num_hidden_layers"), need("num_global_layers")
		patch, image, ch := need("patch_size"), need("image_size"), opt(3, "num_channels")
		tiles, out := need("max_num_tiles"), need("vision_output_dim")
		ratios := int64(8)
		if l, ok := vc["supported_aspect_ratios"].([]any); ok {
			ratios = int64(len(l))
		}
		positions := (image/max(patch, 1))*(image/max(patch, 1)) + 1
		layer := 4*h*h + 2*h*i + i + h + 4*h
		p = ch*patch*patch*h + h // patch conv, class embedding
		p += 1 + positions*h + (ratios+1)*tiles*positions*h
		p += 2 * ((ratios+1)*tiles*h + 1)
		p += 2 * 2 * h // layernorm_pre, layernorm_post
		p += (local+global)*layer + 2*global
		p += out*th + th
	default:
		return nil, nil
	}
	if len(errs) > 0 {
		return nil, errs[0]
	}
	return &VisionTower{Type: mt, Params: p}, nil
}
