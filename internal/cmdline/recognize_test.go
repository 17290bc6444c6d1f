package cmdline

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// summary renders a Command compactly: launch|model|flags|extra|dynamic,
// with "sh:" before the launch for shell scripts and "!" before negated
// flags.
func summary(c *Command) string {
	if c == nil {
		return "<nil>"
	}
	var b strings.Builder
	if c.Shell {
		b.WriteString("sh:")
	}
	b.WriteString(c.Launch.String() + "|" + c.Model + "|")
	for i, f := range c.Flags {
		if i > 0 {
			b.WriteByte(' ')
		}
		if f.Negated {
			b.WriteByte('!')
		}
		b.WriteString(f.Name)
		if f.HasValue {
			b.WriteString("=" + f.Value)
		}
	}
	b.WriteString("|")
	for i, w := range c.Extra {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w.Text)
	}
	b.WriteString("|")
	for i, w := range c.Dynamic {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w.Text)
	}
	return b.String()
}

// checkSpans slices the file at every exact span and compares with what
// the parser says is there.
func checkSpans(t *testing.T, f *yfile, c *Command) {
	t.Helper()
	if c == nil {
		return
	}
	src := f.src
	for _, fl := range c.Flags {
		if s := fl.NameSpan; s.Exact {
			if got := string(src[s.Start:s.End]); got != fl.Spelled {
				t.Errorf("%s: file[NameSpan] = %q, want %q", fl.Name, got, fl.Spelled)
			}
		}
		if s := fl.ValueSpan; s.Exact && fl.HasValue {
			if got := decodeRaw(t, c, fl.ArgIndex, string(src[s.Start:s.End])); got != fl.Value {
				t.Errorf("%s: file[ValueSpan] decodes to %q, want %q", fl.Name, got, fl.Value)
			}
		}
	}
	if s := c.ModelSpan; s.Exact && c.Model != "" {
		if got := decodeRaw(t, c, -1, string(src[s.Start:s.End])); got != c.Model {
			t.Errorf("file[ModelSpan] decodes to %q, want %q", got, c.Model)
		}
	}
}

// decodeRaw undoes YAML double-quote escapes and line folding and, inside
// a shell script, shell quoting (values of several words are joined with
// spaces).
func decodeRaw(t *testing.T, c *Command, arg int, raw string) string {
	t.Helper()
	quote := byte(0)
	if c.script >= 0 {
		quote = c.args[c.script].Quote
	} else if arg >= 0 && arg < len(c.args) {
		quote = c.args[arg].Quote
	}
	if quote == '"' {
		raw = strings.NewReplacer(`\"`, `"`, `\\`, `\`).Replace(raw)
	}
	if quote == '\'' {
		raw = strings.ReplaceAll(raw, "''", "'")
	}
	if !c.Shell {
		return raw
	}
	toks, err := ParseShell(raw)
	if err != nil {
		t.Errorf("relex %q: %v", raw, err)
	}
	var words []string
	for _, tk := range toks {
		if !tk.Op {
			words = append(words, tk.Text)
		}
	}
	return strings.Join(words, " ")
}

func TestRecognize(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want string
	}{
		{
			name: "aibrix argv with --model",
			yaml: "command:\n  - vllm\n  - serve\n  - --host\n  - \"0.0.0.0\"\n  - --port\n  - \"8000\"\n  - --model\n  - deepseek-ai/DeepSeek-R1-Distill-Llama-8B\n  - --dtype\n  - half\n  - --max-model-len\n  - \"12288\"\n",
			want: "vllm serve|deepseek-ai/DeepSeek-R1-Distill-Llama-8B|host=0.0.0.0 port=8000 model=deepseek-ai/DeepSeek-R1-Distill-Llama-8B dtype=half max-model-len=12288||",
		},
		{
			name: "api_server split over command and args",
			yaml: "image: \"lmcache/vllm-openai:2025-05-05-v1\"\ncommand: [\"python3\", \"-m\", \"vllm.entrypoints.openai.api_server\"]\nargs:\n- \"--model\"\n- \"meta-llama/Llama-3.2-1B-Instruct\"\n- \"--max-num-seq\"\n- \"1024\"\n- \"--compilation-config\"\n- \"3\"\n- \"--enable-lora\"\n",
			want: "api_server|meta-llama/Llama-3.2-1B-Instruct|model=meta-llama/Llama-3.2-1B-Instruct max-num-seqs=1024 compilation-config=3 enable-lora||",
		},
		{
			name: "api_server with equals and bool",
			yaml: "command:\n- python3\n- -m\n- vllm.entrypoints.openai.api_server\n- --model\n- microsoft/phi-2\n- --tensor-parallel-size=2\n- --trust-remote-code\n",
			want: "api_server|microsoft/phi-2|model=microsoft/phi-2 tensor-parallel-size=2 trust-remote-code||",
		},
		{
			name: "HAMi folded sh -c",
			yaml: "image: vllm/vllm-openai:latest\ncommand:\n  - /bin/sh\n  - -c\nargs:\n  - >\n    vllm serve Qwen/Qwen2.5-3B-Instruct\n    --host 0.0.0.0\n    --tensor-parallel-size 2\n    --max-model-len 32768\n    --enable-prefix-caching\n    --disable-custom-all-reduce\n",
			want: "sh:vllm serve|Qwen/Qwen2.5-3B-Instruct|host=0.0.0.0 tensor-parallel-size=2 max-model-len=32768 enable-prefix-caching disable-custom-all-reduce||",
		},
		{
			name: "LWS leader double-quoted multi-line script",
			yaml: "command:\n  - sh\n  - -c\n  - \"bash /vllm-workspace/examples/online_serving/multi-node-serving.sh leader --ray_cluster_size=$(LWS_GROUP_SIZE); \n     python3 -m vllm.entrypoints.openai.api_server --port 8080 --model meta-llama/Llama-3.1-405B-Instruct --tensor-parallel-size 8 --pipeline_parallel_size 2\"\n",
			want: "sh:api_server|meta-llama/Llama-3.1-405B-Instruct|port=8080 model=meta-llama/Llama-3.1-405B-Instruct tensor-parallel-size=8 pipeline-parallel-size=2||",
		},
		{
			name: "ray head bash -lc -- with expansions",
			yaml: "command: [\"/bin/bash\", \"-lc\", \"--\"]\nargs: [\"ulimit -n 65536; echo head; $KUBERAY_GEN_RAY_START_CMD; vllm serve deepseek-ai/DeepSeek-R1 --served-model-name deepseek-r1-671b --tensor-parallel-size 16 --distributed-executor-backend ray\"]\n",
			want: "sh:vllm serve|deepseek-ai/DeepSeek-R1|served-model-name=deepseek-r1-671b tensor-parallel-size=16 distributed-executor-backend=ray||",
		},
		{
			name: "literal block with continuations, --no- and JSON",
			yaml: "command: [\"sh\", \"-c\"]\nargs:\n  - |\n    vllm serve \\\n      --host \"0.0.0.0\" \\\n      --model /models/Qwen3-32B \\\n      --swap-space \"0\" \\\n      --no-enable-chunked-prefill \\\n      --kv-transfer-config '{\"kv_connector\":\"NixlConnector\",\"kv_role\":\"kv_producer\"}' \\\n      --tensor-parallel-size=2\n",
			want: "sh:vllm serve|/models/Qwen3-32B|host=0.0.0.0 model=/models/Qwen3-32B swap-space=0 !enable-chunked-prefill kv-transfer-config={\"kv_connector\":\"NixlConnector\",\"kv_role\":\"kv_producer\"} tensor-parallel-size=2||",
		},
		{
			name: "kserve template with go template value and $VLLM_ADDITIONAL_ARGS",
			yaml: "command: [\"/bin/sh\", \"-c\"]\nargs:\n  - >\n    vllm serve /mnt/models\n    --served-model-name \"{{ .Spec.Model.Name }}\"\n    --port 8000\n    --disable-log-requests\n    $VLLM_ADDITIONAL_ARGS\n",
			want: "sh:vllm serve|/mnt/models|served-model-name={{ .Spec.Model.Name }} port=8000 disable-log-requests||$VLLM_ADDITIONAL_ARGS",
		},
		{
			name: "image entrypoint, model first",
			yaml: "image: vllm/vllm-openai:v0.6.2\nargs: [\"meta-llama/Llama-3.1-8B-Instruct\", \"--tensor-parallel-size\", \"2\"]\n",
			want: "image entrypoint|meta-llama/Llama-3.1-8B-Instruct|tensor-parallel-size=2||",
		},
		{
			name: "image entrypoint, model by flag, registry and digest",
			yaml: "image: registry.example.com/mirror/vllm-openai@sha256:abc\nargs: [\"--model\", \"m\", \"--gpu-memory-utilization\", \"0.95\"]\n",
			want: "image entrypoint|m|model=m gpu-memory-utilization=0.95||",
		},
		{
			name: "image entrypoint without args",
			yaml: "image: docker.io/vllm/vllm-openai-cpu:v0.23.0\nname: main\n",
			want: "image entrypoint||||",
		},
		{
			name: "serve repeated in args is taken literally",
			yaml: "image: vllm/vllm-openai\nargs: [serve, m]\n",
			want: "image entrypoint|serve||m|",
		},
		{
			name: "wrappers and assignments in a script",
			yaml: "command: [bash, -c, \"cd /w && HF_HOME=/c exec env A=1 vllm serve m --seed -1 > /log 2>&1\"]\n",
			want: "sh:vllm serve|m|seed=-1||",
		},
		{
			name: "tini argv wrapper and path to vllm",
			yaml: "command: [tini, --, /usr/local/bin/vllm, serve, m, -tp, \"4\", -pp=2, -dp, \"2\", -q, fp8, -O3, -ep]\n",
			want: "vllm serve|m|tensor-parallel-size=4 pipeline-parallel-size=2 data-parallel-size=2 quantization=fp8 optimization-level=3 enable-expert-parallel||",
		},
		{
			name: "abbreviations, multi values, dotted JSON key",
			yaml: "command: [vllm, serve, m, --max-num-batched-token=16384, --served-model-name, a, b, --compilation-config.level, \"3\", --enable-chunked-prefill, \"false\"]\n",
			want: "vllm serve|m|max-num-batched-tokens=16384 served-model-name=a b compilation-config.level=3 enable-chunked-prefill=false||",
		},
		{
			name: "cli main module",
			yaml: "command: [python, -u, -m, vllm.entrypoints.cli.main, serve, m, --unknown-flag, v, --other]\n",
			want: "vllm serve|m|unknown-flag=v other||",
		},
		{
			name: "stray positional after a boolean",
			yaml: "command: [vllm, serve, m, --enforce-eager, extra]\n",
			want: "vllm serve|m|enforce-eager|extra|",
		},
		{
			name: "long shell options before -c",
			yaml: "command: [bash, --login, -c, 'vllm serve m']\n",
			want: "sh:vllm serve|m|||",
		},
		{
			name: "multi-valued flag stops at an expansion",
			yaml: "command: [sh, -c, 'vllm serve m --served-model-name a $EXTRA']\n",
			want: "sh:vllm serve|m|served-model-name=a||$EXTRA",
		},
		{name: "LWS ray worker", yaml: "image: vllm/vllm-openai:v0.8.5\ncommand: [sh, -c, \"bash /vllm-workspace/examples/online_serving/multi-node-serving.sh worker --ray_address=$(LWS_LEADER_ADDRESS)\"]\n", want: "<nil>"},
		{name: "preStop metrics loop", yaml: "command: [/bin/sh, -c, \"RUNNING=$(curl -s http://localhost:8000/metrics | grep 'vllm:num_requests_running')\"]\n", want: "<nil>"},
		{name: "vllm mock app", yaml: "image: aibrix/vllm-mock:nightly\ncommand: [python3, app.py, --api_key, k]\n", want: "<nil>"},
		{name: "ray worker script", yaml: "image: aibrix/vllm-openai:v0.7.3\ncommand: [\"/bin/bash\", \"-lc\", \"--\"]\nargs: [\"ulimit -n 65536; echo head; $KUBERAY_GEN_RAY_START_CMD;\"]\n", want: "<nil>"},
		{name: "sglang", yaml: "image: lmsysorg/sglang:latest\ncommand: [python3, -m, sglang.launch_server, --model-path, m, --tp, \"2\"]\n", want: "<nil>"},
		{name: "other vllm subcommand", yaml: "command: [vllm, bench, serve]\n", want: "<nil>"},
		{name: "bench server image", yaml: "image: <your-registry>/vllm-bench-server:latest\n", want: "<nil>"},
		{name: "init container on a vllm image", yaml: "image: lmcache/vllm-openai:latest-nightly\ncommand: [/bin/sh, -c]\nargs: [\"timeout 60 bash -c 'sleep 1'\"]\n", want: "<nil>"},
		{name: "shell without -c", yaml: "command: [bash, /start.sh, vllm, serve]\n", want: "<nil>"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, f := recognizeYAML(t, tc.yaml)
			if diff := cmp.Diff(tc.want, summary(c)); diff != "" {
				t.Errorf("summary (-want +got):\n%s", diff)
			}
			checkSpans(t, f, c)
		})
	}
}

func TestExtent(t *testing.T) {
	tests := []struct{ name, yaml, want string }{
		{"script", "command: [sh, -c, 'cd /x && exec vllm serve m --port 1 > /log; echo']\n", "vllm serve m --port 1"},
		{"argv over two lists", "command: [python3, -m, vllm.entrypoints.openai.api_server]\nargs: [--model, m]\n", "python3, -m, vllm.entrypoints.openai.api_server]\nargs: [--model, m"},
		{"folded script", "command: [sh, -c]\nargs:\n  - >\n    vllm serve m\n    --port 1\n", "vllm serve m\n    --port 1"},
		{"image without args", "image: vllm/vllm-openai\n", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, f := recognizeYAML(t, tc.yaml)
			s := c.Extent()
			if got := string(f.src[s.Start:s.End]); got != tc.want || (tc.want != "" && !s.Exact) {
				t.Errorf("Extent = %+v %q, want %q", s, got, tc.want)
			}
		})
	}
}

func TestIsVLLMImage(t *testing.T) {
	tests := map[string]bool{
		"vllm/vllm-openai":                         true,
		"vllm/vllm-openai:v0.8.5":                  true,
		"docker.io/vllm/vllm-openai-cpu:v0.23.0":   true,
		"lmcache/vllm-openai:2025-05-27-v1":        true,
		"vllm/vllm-tpu:nightly":                    true,
		"localhost:5000/vllm/vllm-openai":          true,
		"aibrix/vllm-openai:v0.7.3.self.post1":     true,
		"aibrix/vllm-cpu-env:macos":                false,
		"<your-registry>/vllm-bench-server:latest": false,
		"hiyouga/verl:ngc-th2.6.0-cu126-vllm0.8.4": false,
		"ghcr.io/llm-d/llm-d-cuda:v0.9.0":          false,
		"rocm/vllm:latest":                         false,
	}
	for img, want := range tests {
		if got := IsVLLMImage(img); got != want {
			t.Errorf("IsVLLMImage(%q) = %v, want %v", img, got, want)
		}
	}
}
