// Package ray reads what Ray's Kubernetes resources (KubeRay's RayService,
// RayJob and RayCluster) say about the LLM engines they run: the Serve
// config a RayService holds as a YAML string, the vLLM engine arguments and
// model of each Ray Serve LLM application in it, and the Ray resources each
// worker group advertises. It returns plain data with paths; parsing the
// embedded YAML and locating paths in bytes is the caller's business.
package ray

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/gpulint/gpulint/internal/value"
)

// ServeConfigPath is where a RayService holds its Serve config: a YAML
// document written as a string (KubeRay ray-operator/apis/ray/v1/
// rayservice_types.go at 007412988d06, RayServiceSpec.ServeConfigV2:
// "should be a YAML multi-line scalar string").
func ServeConfigPath(doc any) ([]any, string, bool) {
	m, _ := doc.(map[string]any)
	if value.String(m["kind"]) != "RayService" || !strings.HasPrefix(value.String(m["apiVersion"]), "ray.io/") {
		return nil, "", false
	}
	p := []any{"spec", "serveConfigV2"}
	s, ok := lookup(doc, p).(string)
	return p, s, ok && strings.TrimSpace(s) != ""
}

// Arg is one vLLM engine option an application states: its vLLM name
// (kebab-case, as the CLI spells it), value, and where it is written.
// Assumed, when set, says why the value is inferred rather than stated
// (read from a name the application's own code gives meaning to, or a
// model named by the directory that holds its weights).
type Arg struct {
	Name    string
	Value   any
	At      Loc
	Assumed string
}

// Loc is where a value is written: a path in one of the YAML documents a
// Ray resource holds as strings (In "serve": a RayService's
// serveConfigV2; "runtime_env": a RayJob's runtimeEnvYAML), or byte
// offsets in the entrypoint script (In "script").
type Loc struct {
	In       string
	Path     []any
	Off, End int
}

func serveAt(p []any) Loc { return Loc{In: "serve", Path: p} }

// Engine is one vLLM engine a Serve application runs.
type Engine struct {
	// App is where the application (or the script's config call) is.
	App  Loc
	Args []Arg
	// Accelerator is the Ray accelerator_type the engine asks for (Ray's
	// accelerator names: L4, A10G, L40S, H100, ...), with its path.
	Accelerator   string
	AcceleratorAt Loc
	// AcceleratorAssumed, when set, says why the accelerator_type is
	// inferred rather than stated (as Arg.Assumed).
	AcceleratorAssumed string
	// Unknown names the options (vLLM names) set from an expression the
	// reader does not evaluate: their values are unknown, not defaults.
	Unknown []string
}

// Arg returns the engine's option by vLLM name.
func (e Engine) Arg(name string) (Arg, bool) {
	for _, a := range e.Args {
		if a.Name == name {
			return a, true
		}
	}
	return Arg{}, false
}

// Engines reads the vLLM engines of a parsed Serve config
// (ray python/ray/serve/schema.py ServeDeploySchema: applications[] with
// import_path, args and runtime_env). Two shapes are read:
//
//   - Ray Serve LLM (import_path ray.serve.llm:build_openai_app or
//     build_llm_deployment): args.llm_configs[] are LLMConfig objects
//     (ray python/ray/llm/_internal/serve/configs/server_models.py at
//     d3212e29ca4e): model_loading_config {model_id, model_source},
//     accelerator_type and engine_kwargs, vLLM's EngineArgs by field name.
//     model_source defaults to model_id as a Hugging Face id; a bucket or
//     local path names the model only by its last directory (assumed).
//   - An application of its own that installs vLLM (runtime_env.pip) and
//     passes the model in runtime_env.env_vars under a conventional name
//     (MODEL_ID, MODEL_NAME, MODEL): the model and a TENSOR_PARALLELISM
//     or TENSOR_PARALLEL_SIZE are inferred from the names (assumed).
func Engines(serve any) []Engine {
	var out []Engine
	for i, app := range value.List(lookup(serve, []any{"applications"})) {
		am, _ := app.(map[string]any)
		if am == nil {
			continue
		}
		base := []any{"applications", i}
		llm := false
		for j, c := range value.List(lookup(am, []any{"args", "llm_configs"})) {
			cm, ok := c.(map[string]any)
			if !ok {
				continue // a path to an LLMConfig file, not read
			}
			llm = true
			if e, ok := llmEngine(cm, append(clone(base), "args", "llm_configs", j)); ok {
				out = append(out, e)
			}
		}
		if llm {
			continue
		}
		if e, ok := envEngine(am, base); ok {
			out = append(out, e)
		}
	}
	return out
}

// llmEngine reads one LLMConfig.
func llmEngine(cm map[string]any, at []any) (Engine, bool) {
	e := Engine{App: serveAt(at)}
	mlc, _ := cm["model_loading_config"].(map[string]any)
	src, srcOK := mlc["model_source"].(string)
	id, idOK := mlc["model_id"].(string)
	mlcAt := append(clone(at), "model_loading_config")
	switch {
	case srcOK && src != "":
		if name, remote := remoteName(src); remote {
			if name == "" {
				return Engine{}, false
			}
			e.Args = append(e.Args, Arg{Name: "model", Value: name, At: serveAt(append(clone(mlcAt), "model_source")),
				Assumed: "named by the last directory of model_source " + src})
		} else {
			e.Args = append(e.Args, Arg{Name: "model", Value: src, At: serveAt(append(clone(mlcAt), "model_source"))})
		}
	case idOK && id != "":
		// model_source omitted: model_id is the Hugging Face id.
		e.Args = append(e.Args, Arg{Name: "model", Value: id, At: serveAt(append(clone(mlcAt), "model_id"))})
	default:
		return Engine{}, false
	}
	if s, ok := cm["accelerator_type"].(string); ok && s != "" {
		e.Accelerator, e.AcceleratorAt = s, serveAt(append(clone(at), "accelerator_type"))
	}
	kw, _ := cm["engine_kwargs"].(map[string]any)
	for _, k := range value.SortedKeys(kw) {
		switch kw[k].(type) {
		case map[string]any, []any, nil:
			continue
		}
		name := strings.ReplaceAll(k, "_", "-")
		if name == "model" {
			continue // LLMConfig sets the engine's model from model_loading_config
		}
		e.Args = append(e.Args, Arg{Name: name, Value: kw[k], At: serveAt(append(clone(at), "engine_kwargs", k))})
	}
	return e, true
}

// modelEnvNames and tpEnvNames are the env var names an application's own
// code commonly reads its model and tensor parallel size from; they are a
// convention of such code, not Ray's, so what they give is assumed.
var (
	modelEnvNames = []string{"MODEL_ID", "MODEL_NAME", "MODEL"}
	tpEnvNames    = []string{"TENSOR_PARALLELISM", "TENSOR_PARALLEL_SIZE"}
)

// envEngine reads an application that installs vLLM and names its model
// in runtime_env.env_vars.
func envEngine(am map[string]any, at []any) (Engine, bool) {
	re, _ := am["runtime_env"].(map[string]any)
	vllm := false
	for _, p := range value.List(re["pip"]) {
		if s := strings.ToLower(strings.TrimSpace(value.String(p))); s == "vllm" || strings.HasPrefix(s, "vllm=") ||
			strings.HasPrefix(s, "vllm>") || strings.HasPrefix(s, "vllm<") || strings.HasPrefix(s, "vllm[") || strings.HasPrefix(s, "vllm~") {
			vllm = true
		}
	}
	env, _ := re["env_vars"].(map[string]any)
	if !vllm || env == nil {
		return Engine{}, false
	}
	envAt := append(clone(at), "runtime_env", "env_vars")
	e := Engine{App: serveAt(at)}
	for _, n := range modelEnvNames {
		if s, ok := env[n].(string); ok && s != "" && !strings.Contains(s, "$") {
			e.Args = append(e.Args, Arg{Name: "model", Value: s, At: serveAt(append(clone(envAt), n)),
				Assumed: "read from runtime_env env var " + n + ", which the application's code reads"})
			break
		}
	}
	if len(e.Args) == 0 {
		return Engine{}, false
	}
	for _, n := range tpEnvNames {
		if v, ok := value.Int(env[n]); ok && v > 0 {
			e.Args = append(e.Args, Arg{Name: "tensor-parallel-size", Value: v, At: serveAt(append(clone(envAt), n)),
				Assumed: "read from runtime_env env var " + n})
			break
		}
	}
	return e, true
}

// remoteName reports whether a model source is a bucket or local path
// rather than a Hugging Face id, and the model name its last directory
// gives ("" when that is a template variable).
func remoteName(src string) (string, bool) {
	s := strings.TrimRight(src, "/")
	remote := strings.Contains(s, "://") || strings.HasPrefix(s, "/") || strings.HasPrefix(s, ".")
	if !remote {
		return "", false
	}
	name := path.Base(s)
	if strings.Contains(name, "$") || strings.Contains(name, "{") || name == "." || name == "/" {
		return "", true
	}
	return name, true
}

func lookup(v any, p []any) any {
	for _, k := range p {
		switch t := v.(type) {
		case map[string]any:
			s, _ := k.(string)
			v = t[s]
		case []any:
			i, ok := k.(int)
			if !ok || i < 0 || i >= len(t) {
				return nil
			}
			v = t[i]
		default:
			return nil
		}
	}
	return v
}

func clone(p []any) []any { return append([]any(nil), p...) }

// JobEntrypoint reads what a RayJob runs: the Python script its
// spec.entrypoint names (the first word ending in .py) and its
// spec.runtimeEnvYAML, a runtime_env written as a YAML string (KubeRay
// ray-operator/apis/ray/v1/rayjob_types.go at f6ef3f7b3263: Entrypoint,
// RuntimeEnvYAML).
func JobEntrypoint(doc any) (script string, envPath []any, envText string, ok bool) {
	m, _ := doc.(map[string]any)
	if value.String(m["kind"]) != "RayJob" || !strings.HasPrefix(value.String(m["apiVersion"]), "ray.io/") {
		return "", nil, "", false
	}
	for _, w := range strings.Fields(value.String(lookup(doc, []any{"spec", "entrypoint"}))) {
		if strings.HasSuffix(w, ".py") {
			script = w
			break
		}
	}
	envPath = []any{"spec", "runtimeEnvYAML"}
	envText, _ = lookup(doc, envPath).(string)
	return script, envPath, envText, script != ""
}

// MountedConfigMaps lists the ConfigMaps a resource's pods mount as
// volumes (volumes[].configMap.name), where an entrypoint script may live.
func MountedConfigMaps(doc any) []string {
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch t := v.(type) {
		case map[string]any:
			for _, vol := range value.List(t["volumes"]) {
				if n := value.String(lookup(vol, []any{"configMap", "name"})); n != "" {
					out = append(out, n)
				}
			}
			for _, k := range value.SortedKeys(t) {
				walk(t[k])
			}
		case []any:
			for _, x := range t {
				walk(x)
			}
		}
	}
	walk(doc)
	return out
}

// ScriptEngines reads the vLLM engines a Ray job's Python script
// configures with ray.data.llm's vLLMEngineProcessorConfig (ray
// python/ray/llm/_internal/batch/processor/vllm_engine_proc.py at
// 03c1c901b439: model_source is the engine's model, engine_kwargs go to
// vLLM as they are, accelerator_type picks the nodes). A keyword bound to
// os.environ is read from the job's runtime_env env_vars (runtimeEnv, the
// parsed runtimeEnvYAML).
func ScriptEngines(src string, runtimeEnv any) []Engine {
	env, _ := lookup(runtimeEnv, []any{"env_vars"}).(map[string]any)
	resolve := func(a pyArg) (any, Loc, string, bool) { return resolveArg(a, env, nil) }
	var out []Engine
	for _, call := range pyCalls(src, "vLLMEngineProcessorConfig") {
		kw := call.kw
		ms, ok := kw["model_source"]
		if !ok {
			continue
		}
		e := Engine{App: Loc{In: "script", Off: call.off, End: call.end}}
		v, at, fallback, ok := resolve(ms)
		src, _ := v.(string)
		if !ok || src == "" {
			continue
		}
		if n, remote := remoteName(src); remote {
			if n == "" {
				continue
			}
			e.Args = append(e.Args, Arg{Name: "model", Value: n, At: at,
				Assumed: joinNotes(fallback, "named by the last directory of model_source "+src)})
		} else {
			e.Args = append(e.Args, Arg{Name: "model", Value: src, At: at, Assumed: fallback})
		}
		if a, ok := kw["accelerator_type"]; ok {
			if v, at, fallback, ok := resolve(a); ok {
				if s, ok := v.(string); ok && s != "" {
					e.Accelerator, e.AcceleratorAt, e.AcceleratorAssumed = s, at, fallback
				}
			}
		}
		if a, ok := kw["engine_kwargs"]; ok {
			m, isMap := a.value.(map[string]pyArg)
			if _, spread := m["**"]; !isMap || spread {
				e.Unknown = append(e.Unknown, "engine_kwargs")
			}
			delete(m, "**")
			for _, k := range value.SortedKeys(m) {
				name := strings.ReplaceAll(k, "_", "-")
				if name == "model" {
					continue
				}
				if v, at, fallback, ok := resolve(m[k]); ok {
					e.Args = append(e.Args, Arg{Name: name, Value: v, At: at, Assumed: fallback})
				} else {
					e.Unknown = append(e.Unknown, name)
				}
			}
		}
		out = append(out, e)
	}
	return out
}

// resolveArg evaluates a keyword argument of a script: a literal, or an
// environment variable read from env (the runtime_env env_vars, located
// under envAt in the Serve config, or under ["env_vars"] of a job's
// runtime_env when envAt is nil), else its default; int(...) and
// float(...) convert the value as Python would. fallback is set when the
// value is the code's default for a variable env does not set: the
// container's image or environment may set it, so the value is assumed.
func resolveArg(a pyArg, env map[string]any, envAt []any) (v any, at Loc, fallback string, ok bool) {
	if c, ok := a.value.(convert); ok {
		v, at, fallback, ok := resolveArg(c.inner, env, envAt)
		if !ok {
			return nil, Loc{}, "", false
		}
		s := strings.TrimSpace(fmt.Sprint(v))
		if c.to == "int" {
			n, err := strconv.ParseInt(s, 10, 64)
			return n, at, fallback, err == nil
		}
		f, err := strconv.ParseFloat(s, 64)
		return f, at, fallback, err == nil
	}
	if ref, ok := a.value.(envRef); ok {
		if v, ok := env[ref.name]; ok {
			if envAt == nil {
				return v, Loc{In: "runtime_env", Path: []any{"env_vars", ref.name}}, "", true
			}
			return v, serveAt(append(clone(envAt), ref.name)), "", true
		}
		if ref.def == nil {
			return nil, Loc{}, "", false
		}
		a = *ref.def
		fallback = "from the code's default for env var " + ref.name + ", which runtime_env env_vars do not set (the image or the pod may)"
	}
	switch a.value.(type) {
	case string, int64, float64, bool:
		return a.value, Loc{In: "script", Off: a.off, End: a.end}, fallback, true
	}
	return nil, Loc{}, "", false
}

// joinNotes joins the reasons a value is assumed, skipping empty ones.
func joinNotes(notes ...string) string {
	var out []string
	for _, n := range notes {
		if n != "" {
			out = append(out, n)
		}
	}
	return strings.Join(out, "; ")
}

// ImportModule is a Serve application whose import_path names a Python
// module of its own ("module:attribute"), with where its env_vars are:
// the code that decides what the application runs.
type ImportModule struct {
	App    Loc
	Module string // the dotted module name, "pkg.mod"
	Env    map[string]any
	EnvAt  []any
}

// ImportModules lists the applications of a parsed Serve config that
// import a module of their own and no engine Engines reads: neither Ray
// Serve LLM nor a runtime_env that installs vLLM. Where the module's
// code is, is for the caller to find.
func ImportModules(serve any) []ImportModule {
	var out []ImportModule
	for i, app := range value.List(lookup(serve, []any{"applications"})) {
		am, _ := app.(map[string]any)
		if am == nil || lookup(am, []any{"args", "llm_configs"}) != nil {
			continue
		}
		base := []any{"applications", i}
		if _, ok := envEngine(am, base); ok {
			continue
		}
		mod, _, ok := strings.Cut(value.String(am["import_path"]), ":")
		mod = strings.TrimSpace(mod)
		if !ok || mod == "" || strings.HasPrefix(mod, "ray.") {
			continue
		}
		re, _ := am["runtime_env"].(map[string]any)
		env, _ := re["env_vars"].(map[string]any)
		out = append(out, ImportModule{App: serveAt(base), Module: mod, Env: env,
			EnvAt: append(clone(base), "runtime_env", "env_vars")})
	}
	return out
}

// ModuleEngines reads the vLLM engines a Serve application's own module
// builds: the keyword arguments of AsyncEngineArgs(...) or
// EngineArgs(...) (vllm vllm/engine/arg_utils.py at 001999d2f360:
// EngineArgs, the dataclass AsyncEngineArgs extends, whose fields are
// the CLI flags with "_" for "-"), whose values may read the
// application's env_vars. A model argument is required; an argument the
// reader cannot evaluate is Unknown.
func ModuleEngines(src string, m ImportModule) []Engine {
	// A deployment's .bind(k=v) passes its keywords to the class's
	// __init__ (ray python/ray/serve/deployment.py, Deployment.bind):
	// a bare name in the engine's arguments is read from them.
	bound := map[string]pyArg{}
	for _, b := range pyCalls(src, "bind") {
		for k, a := range b.kw {
			if _, ok := a.value.(name); !ok {
				bound[k] = a
			}
		}
	}
	var out []Engine
	for _, fn := range []string{"AsyncEngineArgs", "EngineArgs"} {
		for _, call := range pyCalls(src, fn) {
			for k, a := range call.kw {
				if n, ok := a.value.(name); ok {
					if b, ok := bound[string(n)]; ok {
						call.kw[k] = b
					}
				}
			}
			ma, ok := call.kw["model"]
			if !ok {
				continue
			}
			v, at, fallback, ok := resolveArg(ma, m.Env, m.EnvAt)
			model, _ := v.(string)
			if !ok || model == "" || strings.Contains(model, "$") {
				continue
			}
			e := Engine{App: m.App}
			e.Args = append(e.Args, Arg{Name: "model", Value: model, At: at, Assumed: fallback})
			for _, k := range value.SortedKeys(call.kw) {
				if k == "model" || k == "**" {
					if k == "**" {
						e.Unknown = append(e.Unknown, "engine_kwargs")
					}
					continue
				}
				name := strings.ReplaceAll(k, "_", "-")
				if v, at, fallback, ok := resolveArg(call.kw[k], m.Env, m.EnvAt); ok {
					e.Args = append(e.Args, Arg{Name: name, Value: v, At: at, Assumed: fallback})
				} else {
					e.Unknown = append(e.Unknown, name)
				}
			}
			out = append(out, e)
		}
	}
	return out
}
