package cmdline

import "strings"

// kserveServerFlags are the options of KServe's Hugging Face model server
// and of its base model-server parser, which it reads besides vLLM's
// engine options (kserve python/huggingfaceserver/huggingfaceserver/
// __main__.py @ f205bbff; kserve.model_server.parser). They are dropped
// from the vLLM options the rules see.
var kserveServerFlags = map[string]bool{
	"model-dir": true, "model-id": true, "model-revision": true, "tokenizer-revision": true,
	"max-length": true, "disable-lower-case": true, "disable-special-tokens": true,
	"tensor-input-names": true, "backend": true, "return-token-type-ids": true,
	"return-probabilities": true, "task": true, "max-log-len": true, "model-name": true,
	"http-port": true, "grpc-port": true, "workers": true, "max-threads": true,
	"max-asyncio-workers": true, "enable-grpc": true, "predictor-host": true,
	"predictor-protocol": true, "predictor-use-ssl": true, "predictor-request-timeout-seconds": true,
	"configure-logging": true, "log-config-file": true, "access-log-format": true,
	"enable-latency-logging": true, "enable-docs-url": true,
}

// vllmEngineFlags are vLLM options that only make sense to its engine: a
// KServe Hugging Face predictor with --backend auto that sets one runs
// vLLM.
var vllmEngineFlags = map[string]bool{
	"tensor-parallel-size": true, "pipeline-parallel-size": true, "gpu-memory-utilization": true,
	"max-num-seqs": true, "max-num-batched-tokens": true, "enforce-eager": true,
	"kv-cache-dtype": true, "enable-prefix-caching": true, "quantization": true,
	"enable-chunked-prefill": true, "block-size": true,
}

// KServeVLLM reads the vLLM engine a KServe Hugging Face predictor runs:
// a predictor.model with modelFormat huggingface (or predictor.huggingface)
// whose args pick the vLLM backend (--backend vllm, or the default auto
// with vLLM engine options; KServe falls back to the transformers backend
// for models vLLM does not support). The model is --model_id, else an
// hf:// storageUri's id, else the storageUri itself, a path to weights. key is the predictor field holding the container
// (model, huggingface, ...), spec its map. nil when the container is not
// one.
func KServeVLLM(file, key string, spec map[string]any, ct Container) (*Command, map[string]any) {
	str := func(v any) string { s, _ := v.(string); return s }
	format, _ := spec["modelFormat"].(map[string]any)
	if !(key == "huggingface" || (key == "model" && strings.EqualFold(str(format["name"]), "huggingface"))) {
		return nil, nil
	}
	if len(ct.Command) > 0 || len(ct.Args) == 0 {
		return nil, nil
	}
	cmd := ParseArgList(file, ct.Args, ct.ArgsList)
	value := cmd.Config()
	backend := strings.ToLower(str(value["backend"]))
	engine := false
	for k := range value {
		engine = engine || vllmEngineFlags[k]
	}
	if backend != "vllm" && !((backend == "" || backend == "auto") && engine) {
		return nil, nil
	}
	model := str(value["model-id"])
	if uri := str(spec["storageUri"]); model == "" && uri != "" {
		if id, ok := strings.CutPrefix(uri, "hf://"); ok {
			model = id
			if i := strings.IndexByte(model, ':'); i >= 0 {
				model = model[:i] // hf://org/name:revision
			}
		} else {
			// KServe's storage initializer copies the weights at the URI
			// (pvc://, s3://, gs://, ...) into /mnt/models, which the
			// server loads (kserve docs: storage-containers, "storageUri").
			// The URI is where the weights are, not a model id.
			model = uri
		}
	}
	if ml, ok := value["max-length"]; ok && value["max-model-len"] == nil {
		value["max-model-len"] = ml // --max_length is KServe's alias for --max_model_len
	}
	for k := range value {
		if kserveServerFlags[k] {
			delete(value, k)
		}
	}
	if model != "" {
		value["model"] = model
	}
	return cmd, value
}
