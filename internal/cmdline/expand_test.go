package cmdline

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestExpandFromEnv(t *testing.T) {
	env := map[string]string{"PORT": "8000", "MAX_SEQ_LEN": "512", "MODEL_ID": "/models/llama", "TP": "2", "UTIL": "0.9"}
	argv := func(ss ...string) []Arg {
		out := make([]Arg, len(ss))
		for i, s := range ss {
			out[i] = Arg{Text: s}
		}
		return out
	}
	tests := []struct {
		name        string
		ct          Container
		want        map[string]any
		wantUnknown []string
	}{
		{
			name: "bash -c script: $VAR and ${VAR} from env",
			ct: Container{Command: argv("/bin/bash", "-exc", "set -x\npython -m vllm.entrypoints.openai.api_server \\\n  --port ${PORT} --model ${MODEL_ID} \\\n  --max-model-len $MAX_SEQ_LEN --gpu-memory-utilization=\"$UTIL\"\n"),
				Env: env},
			want: map[string]any{"port": int64(8000), "model": "/models/llama", "max-model-len": int64(512), "gpu-memory-utilization": 0.9},
		},
		{
			name: "kubernetes $(VAR) in args and in a script",
			ct:   Container{Command: argv("sh", "-c", "vllm serve $(MODEL_ID) -tp $(TP)"), Env: env},
			want: map[string]any{"model": "/models/llama", "tensor-parallel-size": int64(2)},
		},
		{
			name: "kubernetes $(VAR) in a plain argv",
			ct:   Container{Command: argv("vllm", "serve", "m", "--port", "$(PORT)", "--max-model-len=$(MAX_SEQ_LEN)"), Env: env},
			want: map[string]any{"model": "m", "port": int64(8000), "max-model-len": int64(512)},
		},
		{
			name: "variable inside a longer value",
			ct:   Container{Command: argv("sh", "-c", "vllm serve /mnt/${MODEL_ID}-awq --served-model-name \"x-$PORT\""), Env: env},
			want: map[string]any{"model": "/mnt//models/llama-awq", "served-model-name": []any{"x-8000"}},
		},
		{
			name: "valueFrom, unknown variable, command substitution and defaults are unknown",
			ct: Container{Command: argv("sh", "-c", "vllm serve $SECRET_MODEL --port $(get_port) --max-model-len ${LEN:-4096} -tp $NOPE --dtype half"),
				Env: env},
			want:        map[string]any{"dtype": "half"},
			wantUnknown: []string{"model", "port", "max-model-len", "tensor-parallel-size"},
		},
		{
			name: "single quotes keep $ literal",
			ct:   Container{Command: argv("sh", "-c", "vllm serve m --served-model-name '$PORT'"), Env: env},
			want: map[string]any{"model": "m", "served-model-name": []any{"$PORT"}},
		},
		{
			name: "kubernetes $$ escapes in a plain argv",
			ct: Container{Command: argv("vllm", "serve", "m", "--served-model-name", "$$(PORT)", "--chat-template", "a$$b", "--port", "$$$(PORT)"),
				Env: env},
			want: map[string]any{"model": "m", "served-model-name": []any{"$(PORT)"}, "chat-template": "a$b", "port": "$8000"},
		},
		{
			name: "$$ in a script is the shell's PID, unknown",
			ct:   Container{Command: argv("sh", "-c", "vllm serve m --seed $$"), Env: env},
			want: map[string]any{"model": "m"}, wantUnknown: []string{"seed"},
		},
		{
			name:        "no env: every variable is unknown",
			ct:          Container{Command: argv("sh", "-c", "vllm serve m --port ${PORT}")},
			want:        map[string]any{"model": "m"},
			wantUnknown: []string{"port"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := Recognize(tc.ct)
			if c == nil {
				t.Fatal("not recognised")
			}
			if diff := cmp.Diff(tc.want, c.Config()); diff != "" {
				t.Errorf("Config (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantUnknown, c.Unknown()); diff != "" {
				t.Errorf("Unknown (-want +got):\n%s", diff)
			}
		})
	}
}

func TestContainerEnv(t *testing.T) {
	tests := []struct {
		name    string
		vars    []EnvVar
		envFrom bool
		want    map[string]string
	}{
		{
			name: "reference to an earlier variable resolves",
			vars: []EnvVar{{Name: "HOST", Value: "0.0.0.0"}, {Name: "PORT", Value: "8000"}, {Name: "ADDR", Value: "$(HOST):$(PORT)"}},
			want: map[string]string{"HOST": "0.0.0.0", "PORT": "8000", "ADDR": "0.0.0.0:8000"},
		},
		{
			name: "reference to a later or undeclared variable stays as written",
			vars: []EnvVar{{Name: "A", Value: "$(B)-$(NOPE)"}, {Name: "B", Value: "b"}},
			want: map[string]string{"A": "$(B)-$(NOPE)", "B": "b"},
		},
		{
			name: "escape and malformed references stay literal",
			vars: []EnvVar{{Name: "X", Value: "x"}, {Name: "A", Value: "$$(X) $(X $ $X"}},
			want: map[string]string{"X": "x", "A": "$(X) $(X $ $X"},
		},
		{
			name: "valueFrom and what names it are unknown",
			vars: []EnvVar{{Name: "TOKEN", FromSource: true}, {Name: "AUTH", Value: "Bearer $(TOKEN)"}, {Name: "M", Value: "m"}},
			want: map[string]string{"M": "m"},
		},
		{
			name:    "with envFrom an undeclared name may be defined",
			vars:    []EnvVar{{Name: "A", Value: "$(FROM_CONFIGMAP)"}, {Name: "B", Value: "b"}},
			envFrom: true,
			want:    map[string]string{"B": "b"},
		},
		{
			name: "service link variables are unknown",
			vars: []EnvVar{{Name: "URL", Value: "http://$(REDIS_SERVICE_HOST):$(REDIS_SERVICE_PORT)"}},
			want: map[string]string{},
		},
		{
			name: "a later definition wins",
			vars: []EnvVar{{Name: "A", FromSource: true}, {Name: "A", Value: "1"}, {Name: "B", Value: "$(A)"}, {Name: "B", FromSource: true}},
			want: map[string]string{"A": "1"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ContainerEnv(tc.vars, tc.envFrom)); diff != "" {
				t.Errorf("ContainerEnv (-want +got):\n%s", diff)
			}
		})
	}
}
