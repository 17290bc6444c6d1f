package ray

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEngines(t *testing.T) {
	llm := func(mlc map[string]any, extra map[string]any) any {
		c := map[string]any{"model_loading_config": mlc}
		for k, v := range extra {
			c[k] = v
		}
		return map[string]any{"applications": []any{map[string]any{
			"import_path": "ray.serve.llm:build_openai_app",
			"args":        map[string]any{"llm_configs": []any{c}},
		}}}
	}
	at := []any{"applications", 0, "args", "llm_configs", 0}
	p := func(tail ...any) []any { return append(append([]any(nil), at...), tail...) }
	env := []any{"applications", 0, "runtime_env", "env_vars"}
	tests := []struct {
		name  string
		serve any
		want  []Engine
	}{
		{
			name: "llm config with a Hugging Face source and engine kwargs",
			serve: llm(map[string]any{"model_id": "llama", "model_source": "meta-llama/Llama-3.1-8B-Instruct"},
				map[string]any{"accelerator_type": "L4", "engine_kwargs": map[string]any{
					"tensor_parallel_size": int64(2), "max_model_len": int64(8192), "model_loader_extra_config": map[string]any{"concurrency": int64(32)},
				}}),
			want: []Engine{{App: serveAt(at), Accelerator: "L4", AcceleratorAt: serveAt(p("accelerator_type")), Args: []Arg{
				{Name: "model", Value: "meta-llama/Llama-3.1-8B-Instruct", At: serveAt(p("model_loading_config", "model_source"))},
				{Name: "max-model-len", Value: int64(8192), At: serveAt(p("engine_kwargs", "max_model_len"))},
				{Name: "tensor-parallel-size", Value: int64(2), At: serveAt(p("engine_kwargs", "tensor_parallel_size"))},
			}}},
		},
		{
			name:  "model_source omitted: model_id is the Hugging Face id",
			serve: llm(map[string]any{"model_id": "Qwen/Qwen2.5-7B-Instruct"}, nil),
			want: []Engine{{App: serveAt(at), Args: []Arg{
				{Name: "model", Value: "Qwen/Qwen2.5-7B-Instruct", At: serveAt(p("model_loading_config", "model_id"))},
			}}},
		},
		{
			name:  "a bucket source names the model by its directory, assumed",
			serve: llm(map[string]any{"model_id": "r1", "model_source": "s3://bucket/models/deepseek-r1-distill-llama-8b/"}, nil),
			want: []Engine{{App: serveAt(at), Args: []Arg{
				{Name: "model", Value: "deepseek-r1-distill-llama-8b", At: serveAt(p("model_loading_config", "model_source")),
					Assumed: "named by the last directory of model_source s3://bucket/models/deepseek-r1-distill-llama-8b/"},
			}}},
		},
		{
			name:  "a bucket source whose directory is a template variable names nothing",
			serve: llm(map[string]any{"model_id": "r1", "model_source": "s3://bucket/models/$MODEL"}, nil),
		},
		{
			name: "an application of its own that installs vLLM and names its model in env vars",
			serve: map[string]any{"applications": []any{map[string]any{
				"import_path": "serve:model",
				"runtime_env": map[string]any{"pip": []any{"vllm==0.4.3"}, "env_vars": map[string]any{
					"MODEL_ID": "mistralai/Mistral-7B-Instruct-v0.3", "TENSOR_PARALLELISM": "2"}},
			}}},
			want: []Engine{{App: serveAt([]any{"applications", 0}), Args: []Arg{
				{Name: "model", Value: "mistralai/Mistral-7B-Instruct-v0.3", At: serveAt(append(append([]any(nil), env...), "MODEL_ID")),
					Assumed: "read from runtime_env env var MODEL_ID, which the application's code reads"},
				{Name: "tensor-parallel-size", Value: int64(2), At: serveAt(append(append([]any(nil), env...), "TENSOR_PARALLELISM")),
					Assumed: "read from runtime_env env var TENSOR_PARALLELISM"},
			}}},
		},
		{
			name: "env vars without vLLM installed are no engine",
			serve: map[string]any{"applications": []any{map[string]any{
				"import_path": "serve:model",
				"runtime_env": map[string]any{"pip": []any{"torch"}, "env_vars": map[string]any{"MODEL_ID": "gpt2"}},
			}}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Engines(tc.serve)); diff != "" {
				t.Errorf("Engines (-want +got):\n%s", diff)
			}
		})
	}
}

func TestServeConfigPath(t *testing.T) {
	tests := []struct {
		name string
		doc  any
		ok   bool
	}{
		{"rayservice", map[string]any{"apiVersion": "ray.io/v1", "kind": "RayService", "spec": map[string]any{"serveConfigV2": "applications: []\n"}}, true},
		{"empty string", map[string]any{"apiVersion": "ray.io/v1", "kind": "RayService", "spec": map[string]any{"serveConfigV2": " "}}, false},
		{"another kind", map[string]any{"apiVersion": "ray.io/v1", "kind": "RayCluster", "spec": map[string]any{"serveConfigV2": "x: 1"}}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, ok := ServeConfigPath(tc.doc); ok != tc.ok {
				t.Errorf("ServeConfigPath ok = %v, want %v", ok, tc.ok)
			}
		})
	}
}

func TestGroupStart(t *testing.T) {
	group := func(params map[string]any) any {
		return map[string]any{"spec": map[string]any{"workerGroupSpecs": []any{map[string]any{
			"rayStartParams": params, "template": map[string]any{"spec": map[string]any{}},
		}}}}
	}
	pod := []any{"spec", "workerGroupSpecs", 0, "template", "spec"}
	at := []any{"spec", "workerGroupSpecs", 0, "rayStartParams"}
	g := []any{"spec", "workerGroupSpecs", 0}
	tests := []struct {
		name string
		doc  any
		want StartGPUs
		ok   bool
	}{
		{"num-gpus as a string", group(map[string]any{"num-gpus": "4"}),
			StartGPUs{Group: g, NumGPUs: 4, NumGPUsAt: append(append([]any(nil), at...), "num-gpus")}, true},
		{"resources JSON with shell quotes", group(map[string]any{"resources": `"{\"GPU\": 2, \"TPU\": 0}"`}),
			StartGPUs{Group: g, ResourceGPU: 2, ResourceAt: append(append([]any(nil), at...), "resources")}, true},
		{"resources without GPU", group(map[string]any{"resources": `{"custom": 1}`}), StartGPUs{}, false},
		{"nothing about GPUs", group(map[string]any{"dashboard-host": "0.0.0.0"}), StartGPUs{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := GroupStart(tc.doc, pod)
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if !ok {
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("GroupStart (-want +got):\n%s", diff)
			}
		})
	}
}

func TestScriptEngines(t *testing.T) {
	src := `import os
from ray.data.llm import build_processor, vLLMEngineProcessorConfig

MODEL_SOURCE = os.environ["MODEL_SOURCE"]
MAX_LEN = 4096  # not read: only literals and env lookups bind

def main():
    config = vLLMEngineProcessorConfig(
        model_source=MODEL_SOURCE,
        engine_kwargs=dict(
            dtype="bfloat16",
            max_model_len=8192,  # the context
            gpu_memory_utilization=0.92,
            enable_prefix_caching=True,
            tensor_parallel_size=int(os.environ.get("TP", "1")),
        ),
        accelerator_type="L40S",
        concurrency=1,
    )
`
	env := map[string]any{"env_vars": map[string]any{"MODEL_SOURCE": "meta-llama/Llama-3.1-8B-Instruct"}}
	got := ScriptEngines(src, env)
	if len(got) != 1 {
		t.Fatalf("ScriptEngines found %d engines, want 1", len(got))
	}
	e := got[0]
	at := func(s string) Loc {
		i := strings.Index(src, s)
		return Loc{In: "script", Off: i, End: i + len(strings.TrimSuffix(s, "("))}
	}
	want := Engine{
		App:           at("vLLMEngineProcessorConfig("),
		Accelerator:   "L40S",
		AcceleratorAt: at(`"L40S"`),
		Args: []Arg{
			{Name: "model", Value: "meta-llama/Llama-3.1-8B-Instruct", At: Loc{In: "runtime_env", Path: []any{"env_vars", "MODEL_SOURCE"}}},
			{Name: "dtype", Value: "bfloat16", At: at(`"bfloat16"`)},
			{Name: "enable-prefix-caching", Value: true, At: at("True")},
			{Name: "gpu-memory-utilization", Value: 0.92, At: at("0.92")},
			{Name: "max-model-len", Value: int64(8192), At: at("8192")},
			// int(...) of an env lookup converts its default when the
			// runtime_env does not set it: a value the image or the pod
			// may replace, so assumed.
			{Name: "tensor-parallel-size", Value: int64(1), At: at(`"1"`), Assumed: fallbackNote("TP")},
		},
	}
	if diff := cmp.Diff(want, e); diff != "" {
		t.Errorf("ScriptEngines (-want +got):\n%s", diff)
	}
}

func TestScriptEnginesSpreadKwargsAreUnknown(t *testing.T) {
	src := "from ray.data.llm import vLLMEngineProcessorConfig\n" +
		"base = dict(max_model_len=4096)\n" +
		"cfg = vLLMEngineProcessorConfig(model_source=\"org/m\", engine_kwargs=dict(**base, dtype=\"half\"))\n"
	got := ScriptEngines(src, nil)
	if len(got) != 1 {
		t.Fatalf("ScriptEngines found %d engines, want 1", len(got))
	}
	if diff := cmp.Diff([]string{"engine_kwargs"}, got[0].Unknown); diff != "" {
		t.Errorf("Unknown (-want +got):\n%s", diff)
	}
}

func TestModuleEngines(t *testing.T) {
	serve := map[string]any{"applications": []any{
		map[string]any{"import_path": "vllm_serve:deployment", "runtime_env": map[string]any{
			"env_vars": map[string]any{"MODEL_ID": "mistralai/Mistral-7B-Instruct-v0.2", "MAX_MODEL_LEN": "8192"}}},
		map[string]any{"import_path": "ray.serve.llm:build_openai_app", "args": map[string]any{"llm_configs": []any{}}},
		map[string]any{"import_path": "app:d", "runtime_env": map[string]any{"pip": []any{"vllm"},
			"env_vars": map[string]any{"MODEL_ID": "x/y"}}},
	}}
	mods := ImportModules(serve)
	if len(mods) != 1 || mods[0].Module != "vllm_serve" {
		t.Fatalf("ImportModules = %+v, want the one module application vllm_serve", mods)
	}
	src := `from vllm.engine.arg_utils import AsyncEngineArgs
class D:
    def __init__(self):
        args = AsyncEngineArgs(
            model=os.getenv("MODEL_ID", "facebook/opt-125m"),
            gpu_memory_utilization=float(os.getenv("GPU_MEMORY_UTILIZATION", "0.8")),
            max_model_len=int(os.getenv("MAX_MODEL_LEN", "4096")),
            tensor_parallel_size=1,
            max_num_seqs=int(os.getenv("MAX_NUM_SEQ", compute())),
        )
`
	env := []any{"applications", 0, "runtime_env", "env_vars"}
	at := func(n string) Loc { return serveAt(append(append([]any(nil), env...), n)) }
	lit := func(s string) Loc { i := strings.Index(src, s); return Loc{In: "script", Off: i, End: i + len(s)} }
	want := []Engine{{App: serveAt([]any{"applications", 0}), Unknown: []string{"max-num-seqs"}, Args: []Arg{
		{Name: "model", Value: "mistralai/Mistral-7B-Instruct-v0.2", At: at("MODEL_ID")},
		{Name: "gpu-memory-utilization", Value: 0.8, At: lit(`"0.8"`), Assumed: fallbackNote("GPU_MEMORY_UTILIZATION")},
		{Name: "max-model-len", Value: int64(8192), At: at("MAX_MODEL_LEN")},
		{Name: "tensor-parallel-size", Value: int64(1), At: lit("1,")},
	}}}
	want[0].Args[3].At.End-- // the literal, not its comma
	if diff := cmp.Diff(want, ModuleEngines(src, mods[0])); diff != "" {
		t.Errorf("ModuleEngines (-want +got):\n%s", diff)
	}
	if got := ModuleEngines("args = AsyncEngineArgs(dtype='auto')\n", mods[0]); len(got) != 0 {
		t.Errorf("an engine with no model argument was read: %+v", got)
	}
}

// A deployment built with .bind(k=v) gets its engine arguments through
// __init__'s parameters: a bare name in AsyncEngineArgs reads the bound
// keyword.
func TestModuleEnginesThroughBind(t *testing.T) {
	m := ImportModule{App: serveAt([]any{"applications", 0}), Module: "vllm_serve",
		Env:   map[string]any{"MODEL_ID": "org/model"},
		EnvAt: []any{"applications", 0, "runtime_env", "env_vars"}}
	src := `class D:
    def __init__(self, model, max_model_len, other):
        engine_args = AsyncEngineArgs(model=model, max_model_len=max_model_len, swap_space=other)

deployment = D.bind(
    model=os.environ.get('MODEL_ID', 'x/y'),
    max_model_len=int(os.environ.get('MAX_MODEL_LEN', '8192')),
    other=other,
)
`
	i := strings.Index(src, "'8192'")
	want := []Engine{{App: m.App, Unknown: []string{"swap-space"}, Args: []Arg{
		{Name: "model", Value: "org/model", At: serveAt(append(append([]any(nil), m.EnvAt...), "MODEL_ID"))},
		{Name: "max-model-len", Value: int64(8192), At: Loc{In: "script", Off: i, End: i + len("'8192'")}, Assumed: fallbackNote("MAX_MODEL_LEN")},
	}}}
	if diff := cmp.Diff(want, ModuleEngines(src, m)); diff != "" {
		t.Errorf("ModuleEngines (-want +got):\n%s", diff)
	}
}

// fallbackNote is Arg.Assumed for the code's default of an env var the
// runtime_env does not set.
func fallbackNote(env string) string {
	return "from the code's default for env var " + env + ", which runtime_env env_vars do not set (the image or the pod may)"
}
