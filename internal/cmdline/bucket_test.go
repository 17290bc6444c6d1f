package cmdline

import "testing"

// TestModelBehindBucket: a model URL whose bucket alone is unknown names
// its model by the object path; anything else unknown leaves it unknown.
func TestModelBehindBucket(t *testing.T) {
	env := map[string]string{"MODEL_ID": "qwen/qwen3-32b"}
	unknown := func(name string) bool { return name == "BUCKET" || name == "PREFIX" }
	tests := []struct {
		name, arg   string
		wantModel   string
		wantUnknown bool
	}{
		{"bucket unknown, object path from env", "--model=gs://$(BUCKET)/$(MODEL_ID)", "gs://$(BUCKET)/qwen/qwen3-32b", false},
		{"separate form", "gs://$(BUCKET)/$(MODEL_ID)", "gs://$(BUCKET)/qwen/qwen3-32b", false},
		{"object path unknown", "--model=gs://$(BUCKET)/$(PREFIX)/m", "", true},
		{"no URL", "--model=$(BUCKET)/$(MODEL_ID)", "", true},
		{"bucket only", "--model=s3://$(BUCKET)/", "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := []Arg{{Text: "--port=8000"}, {Text: tc.arg}}
			if tc.name == "separate form" {
				args = []Arg{{Text: "--model"}, {Text: tc.arg}}
			}
			c := Recognize(Container{Image: "vllm/vllm-openai:v0.10.1", Command: []Arg{{Text: "vllm"}, {Text: "serve"}}, Args: args, Env: env, EnvUnknown: unknown})
			if c == nil {
				t.Fatal("not recognized")
			}
			gotUnknown := false
			for _, u := range c.Unknown() {
				gotUnknown = gotUnknown || u == "model"
			}
			if c.Model != tc.wantModel && !tc.wantUnknown || gotUnknown != tc.wantUnknown {
				t.Errorf("model %q unknown %v, want %q unknown %v", c.Model, gotUnknown, tc.wantModel, tc.wantUnknown)
			}
			if m, _ := c.Config()["model"].(string); !tc.wantUnknown && m != tc.wantModel {
				t.Errorf("Config model %q, want %q", m, tc.wantModel)
			}
		})
	}
}
