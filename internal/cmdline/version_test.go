package cmdline

import "testing"

func TestStatedVersion(t *testing.T) {
	tests := []struct {
		name string
		ct   Container
		want string // "" when no release is stated
	}{
		{name: "image tag with v", ct: Container{Image: "docker.io/vllm/vllm-openai:v0.10.0"}, want: "v0.10.0"},
		{name: "image tag without v", ct: Container{Image: "vllm/vllm-openai:0.9.2"}, want: "v0.9.2"},
		{name: "post release", ct: Container{Image: "vllm/vllm-openai:v0.8.5.post1"}, want: "v0.8.5"},
		{name: "vendor suffix", ct: Container{Image: "registry.example/aibrix/vllm-openai:v0.10.2-aibrix-v0.5.0"}, want: "v0.10.2"},
		{name: "latest", ct: Container{Image: "vllm/vllm-openai:latest"}},
		{name: "digest", ct: Container{Image: "vllm/vllm-openai@sha256:abcd"}},
		{name: "registry port, no tag", ct: Container{Image: "localhost:5000/vllm/vllm-openai"}},
		{name: "not a vllm image", ct: Container{Image: "python:3.11"}},
		{name: "pip pin in script", ct: Container{Image: "python:3.11", Args: []Arg{{Text: "pip install vllm==0.9.2 && vllm serve m"}}}, want: "v0.9.2"},
		{name: "pip pin with extras and quotes", ct: Container{Args: []Arg{{Text: `pip install "vllm[tensorizer]==0.11" && vllm serve m`}}}, want: "v0.11.0"},
		{name: "other package pin", ct: Container{Args: []Arg{{Text: "pip install myvllm==1.2.3"}}}},
		{name: "image wins over pip", ct: Container{Image: "vllm/vllm-openai:v0.12.0", Args: []Arg{{Text: "pip install vllm==0.9.2"}}}, want: "v0.12.0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := stated(tc.ct)
			got := ""
			if v.Known() {
				got = v.String()
			}
			if got != tc.want {
				t.Errorf("stated(%+v) = %q, want %q", tc.ct, got, tc.want)
			}
		})
	}
}

func TestRemovalPresent(t *testing.T) {
	r, ok := RemovalOf("--swap_space")
	if !ok {
		t.Fatal("swap-space has no removal entry")
	}
	for _, tc := range []struct {
		v    Version
		want bool
	}{
		{Version{Minor: 10}, true},
		{Version{Minor: 17, Patch: 9}, true},
		{Version{Minor: 18}, false},
		{Version{Major: 1}, false},
	} {
		if got := r.Present(tc.v); got != tc.want {
			t.Errorf("swap-space present in %s = %v, want %v", tc.v, got, tc.want)
		}
	}
	if _, ok := RemovalOf("tensor-parallel-size"); ok {
		t.Error("tensor-parallel-size reported as removed")
	}
}
