package cmdline

import "testing"

// TestDropped: Llama 3.2 Vision is refused from v0.11.0 on, served by
// v0.10.2 and earlier, and an unstated release says nothing.
func TestDropped(t *testing.T) {
	tests := []struct {
		name      string
		modelType string
		v         Version
		want      bool
	}{
		{"mllama on v0.11.0", "mllama", Version{Minor: 11, From: "image vllm/vllm-openai:v0.11.0"}, true},
		{"mllama on v0.12.1", "mllama", Version{Minor: 12, Patch: 1, From: "pip install vllm==0.12.1"}, true},
		{"mllama on v0.10.2", "mllama", Version{Minor: 10, Patch: 2, From: "image vllm/vllm-openai:v0.10.2"}, false},
		{"mllama, release unstated", "mllama", Version{}, false},
		{"llama on v0.11.0", "llama", Version{Minor: 11, From: "image vllm/vllm-openai:v0.11.0"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, got := Dropped(tc.modelType, tc.v)
			if got != tc.want {
				t.Fatalf("Dropped(%q, %v) = %v, want %v", tc.modelType, tc.v, got, tc.want)
			}
			if got && (d.Architecture != "MllamaForConditionalGeneration" || d.Last != "v0.10.2") {
				t.Errorf("drop %+v, want MllamaForConditionalGeneration last served by v0.10.2", d)
			}
		})
	}
}

// TestStatedRelease reads the release forms --vllm-version takes.
func TestStatedRelease(t *testing.T) {
	for in, want := range map[string]Version{
		"0.11.0":  {Minor: 11, From: "flag"},
		"v0.10.2": {Minor: 10, Patch: 2, From: "flag"},
		"0.9":     {Minor: 9, From: "flag"},
		"latest":  {},
		"":        {},
	} {
		if got := StatedRelease(in, "flag"); got != want {
			t.Errorf("StatedRelease(%q) = %+v, want %+v", in, got, want)
		}
	}
}
