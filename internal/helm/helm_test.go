package helm

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestProductionStack(t *testing.T) {
	doc := map[string]any{"servingEngineSpec": map[string]any{"modelSpec": []any{
		map[string]any{
			"name": "m", "modelURL": "org/model", "requestGPU": int64(2),
			"vllmConfig": map[string]any{"maxModelLen": int64(4096), "tensorParallelSize": "2", "enablePrefixCaching": true,
				"extraArgs": []any{"--max-num-seqs", "8"}},
			"nodeSelectorTerms": []any{map[string]any{"matchExpressions": []any{}}},
		},
		map[string]any{"name": "mig", "modelURL": "org/small", "requestGPU": 1, "requestGPUType": "nvidia.com/mig-3g.40gb",
			"vllmConfig": map[string]any{"pipelineParallelSize": 2}, "nodeName": "n1", "nodeSelectorTerms": []any{map[string]any{}}},
		"not a map",
	}}}
	at := func(i int, tail ...any) []any { return append([]any{"servingEngineSpec", "modelSpec", i}, tail...) }
	want := []ModelSpec{
		{Path: at(0), Name: "m", Options: []Option{
			{"model", "org/model", at(0, "modelURL")},
			{"max-model-len", int64(4096), at(0, "vllmConfig", "maxModelLen")},
			{"tensor-parallel-size", "2", at(0, "vllmConfig", "tensorParallelSize")},
		}, ExtraArgs: at(0, "vllmConfig", "extraArgs"), GPUs: 2, GPUsAt: at(0, "requestGPU"), GPUType: "nvidia.com/gpu",
			Terms: []any{map[string]any{"matchExpressions": []any{}}}, TermsAt: at(0, "nodeSelectorTerms")},
		{Path: at(1), Name: "mig", Options: []Option{{"model", "org/small", at(1, "modelURL")}},
			GPUs: 1, GPUsAt: at(1, "requestGPU"), GPUType: "nvidia.com/mig-3g.40gb", Unread: []string{"pipeline-parallel-size"}},
	}
	if diff := cmp.Diff(want, ProductionStack(doc)); diff != "" {
		t.Errorf("ProductionStack (-want +got):\n%s", diff)
	}
	if got := ProductionStack(map[string]any{"replicaCount": 1}); got != nil {
		t.Errorf("ProductionStack of other values = %v, want nil", got)
	}
}

// TestProductionStackUndeployedSpecs: the chart renders no Deployment for a
// spec with enabled: false, nor for any spec when enableEngine is false, so
// none is read; an unset enabled deploys.
func TestProductionStackUndeployedSpecs(t *testing.T) {
	spec := func(name string, kv ...any) map[string]any {
		m := map[string]any{"name": name, "modelURL": "org/" + name, "requestGPU": int64(1)}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	names := func(specs []ModelSpec) []string {
		var out []string
		for _, s := range specs {
			out = append(out, s.Name)
		}
		return out
	}
	tests := []struct {
		name string
		se   map[string]any
		want []string
	}{
		{"disabled spec left out", map[string]any{"modelSpec": []any{spec("off", "enabled", false), spec("on", "enabled", true), spec("unset")}}, []string{"on", "unset"}},
		{"engine off deploys none", map[string]any{"enableEngine": false, "modelSpec": []any{spec("a"), spec("b", "enabled", true)}}, nil},
		{"engine on", map[string]any{"enableEngine": true, "modelSpec": []any{spec("a")}}, []string{"a"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := names(ProductionStack(map[string]any{"servingEngineSpec": tc.se}))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("deployed specs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSubstratusVLLM(t *testing.T) {
	res := map[string]any{"limits": map[string]any{"nvidia.com/gpu": int64(2)}}
	doc := map[string]any{"model": "org/m-AWQ", "quantization": "awq", "dtype": "half", "maxModelLen": int64(8192),
		"gpuMemoryUtilization": "", "replicaCount": int64(1), "resources": res}
	gpus := []any{"resources", "limits", "nvidia.com/gpu"}
	want := &ModelSpec{Path: []any{}, GPUType: "nvidia.com/gpu", GPUs: 2, GPUsAt: gpus, Options: []Option{
		{"model", "org/m-AWQ", []any{"model"}},
		{"quantization", "awq", []any{"quantization"}},
		{"dtype", "half", []any{"dtype"}},
		{"max-model-len", int64(8192), []any{"maxModelLen"}},
		{"tensor-parallel-size", int64(2), gpus},
	}}
	if diff := cmp.Diff(want, SubstratusVLLM(doc, "")); diff != "" {
		t.Errorf("SubstratusVLLM by its keys (-want +got):\n%s", diff)
	}
	// DTYPE reaches vLLM only with QUANTIZATION (the image's entrypoint).
	plain := map[string]any{"model": "org/m", "dtype": "half", "resources": res,
		"env": []any{map[string]any{"name": "EXTRA_ARGS", "value": "--max-model-len 4096"}}}
	want = &ModelSpec{Path: []any{}, GPUType: "nvidia.com/gpu", GPUs: 2, GPUsAt: gpus, Options: []Option{
		{"model", "org/m", []any{"model"}},
		{"tensor-parallel-size", int64(2), gpus},
	}, Unread: []string{"EXTRA_ARGS"}}
	if diff := cmp.Diff(want, SubstratusVLLM(plain, ChartSubstratusVLLM)); diff != "" {
		t.Errorf("SubstratusVLLM by Chart.yaml (-want +got):\n%s", diff)
	}
	for name, c := range map[string]struct {
		doc   map[string]any
		chart string
	}{
		"no chart key, no Chart.yaml": {plain, ""},
		"TGI's chart":                 {doc, ChartSubstratusTGI},
		"TGI's quantize key":          {map[string]any{"model": "m", "quantize": "awq", "maxModelLen": 1, "resources": res}, ""},
		"no resources":                {map[string]any{"model": "m", "maxModelLen": 1}, ChartSubstratusVLLM},
		"model not a string":          {map[string]any{"model": map[string]any{}, "resources": res}, ChartSubstratusVLLM},
	} {
		if got := SubstratusVLLM(c.doc, c.chart); got != nil {
			t.Errorf("%s: SubstratusVLLM = %+v, want nil", name, got)
		}
	}
}

func TestSubstratusTGI(t *testing.T) {
	res := map[string]any{"limits": map[string]any{"nvidia.com/gpu": int64(2)}}
	doc := map[string]any{"model": "org/m", "quantize": "bitsandbytes-nf4", "resources": res,
		"image": map[string]any{"tag": "1.4.5"},
		"env": []any{map[string]any{"name": "MAX_TOTAL_TOKENS", "value": "4096"},
			map[string]any{"name": "HF_TOKEN", "valueFrom": map[string]any{}}}}
	gpus := []any{"resources", "limits", "nvidia.com/gpu"}
	want := &TGIValues{Options: []Option{
		{"model-id", "org/m", []any{"model"}},
		{"num-shard", int64(2), gpus},
		{"quantize", "bitsandbytes-nf4", []any{"quantize"}},
		{"max-total-tokens", "4096", []any{"env", 0}},
		{"hf-token", nil, []any{"env", 1}},
	}, GPUs: 2, GPUsAt: gpus, ImageTag: "1.4.5", ImageTagAt: []any{"image", "tag"}}
	if diff := cmp.Diff(want, SubstratusTGI(doc, "")); diff != "" {
		t.Errorf("SubstratusTGI by its quantize key (-want +got):\n%s", diff)
	}
	plain := map[string]any{"model": "org/m", "resources": res}
	if got := SubstratusTGI(plain, ChartSubstratusTGI); got == nil || len(got.Options) != 2 {
		t.Errorf("SubstratusTGI by Chart.yaml = %+v, want model-id and num-shard", got)
	}
	for name, c := range map[string]struct {
		doc   map[string]any
		chart string
	}{
		"no chart key, no Chart.yaml": {plain, ""},
		"the vllm chart":              {doc, ChartSubstratusVLLM},
		"a vllm chart key":            {map[string]any{"model": "m", "quantize": "awq", "maxModelLen": 1, "resources": res}, ""},
		"no resources":                {map[string]any{"model": "m"}, ChartSubstratusTGI},
	} {
		if got := SubstratusTGI(c.doc, c.chart); got != nil {
			t.Errorf("%s: SubstratusTGI = %+v, want nil", name, got)
		}
	}
}

// TestSubstratusTGIImageTagAsHelmRendersIt: an unquoted image.tag is a
// number to YAML, and Helm renders the number, not the text: tag: 2.0
// pulls :2, and 0.10 pulls :0.1.
func TestSubstratusTGIImageTagAsHelmRendersIt(t *testing.T) {
	res := map[string]any{"limits": map[string]any{"nvidia.com/gpu": int64(1)}}
	for _, tc := range []struct {
		tag  any
		want string
	}{{"1.4.5", "1.4.5"}, {2.0, "2"}, {0.1, "0.1"}, {1.4, "1.4"}, {int64(3), "3"}, {true, ""}} {
		doc := map[string]any{"model": "org/m", "resources": res, "image": map[string]any{"tag": tc.tag}}
		got := SubstratusTGI(doc, ChartSubstratusTGI)
		if got == nil || got.ImageTag != tc.want {
			t.Errorf("image.tag %v: ImageTag %+v, want %q", tc.tag, got, tc.want)
		}
	}
}
