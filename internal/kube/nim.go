package kube

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/gpulint/gpulint/internal/value"
)

// nimRegistry is where NVIDIA publishes NIM containers: one image per
// model, nvcr.io/nim/<publisher>/<model>:<tag> (NVIDIA/k8s-nim-operator
// docs/nimservice.md @ f63f74d7, "nvcr.io/nim/meta/llama3-8b-instruct";
// docs.nvidia.com/nim/large-language-models, getting started).
const nimRegistry = "nvcr.io/nim/"

// NIM is what a deployment of an NVIDIA NIM for LLMs container states
// about the server NIM runs: the model its image is built for, the GPUs
// the container gets, where it is scheduled, and the environment NIM
// reads to pick its profile and context length. Whatever it leaves
// unstated NIM chooses at start from the GPUs it detects (automatic
// profile selection, docs.nvidia.com/nim/large-language-models/latest/
// profiles.html): a profile with a backend (TensorRT-LLM preferred over
// vLLM), a precision (lower preferred: fp8 where the GPU and the
// model's manifest have one) and a tensor-parallel size.
type NIM struct {
	// Image is the image as written, at ImageAt; Model its
	// "<publisher>/<model>" part, a NIM name (meta/llama-3.1-8b-instruct),
	// not a Hugging Face id.
	Image   string
	ImageAt []any
	Model   string
	// ModelID is the Hugging Face model a model-free NIM (one image for
	// any model) is pointed at by NIM_MODEL_PATH=hf://<org>/<model>, at
	// ModelIDAt; a stated model, unlike Model.
	ModelID   string
	ModelIDAt []any
	// NotLLM says why the image is not an LLM NIM (an embedding or
	// reranking NIM): such a NIM serves no KV cache to size.
	NotLLM string
	// GPUs is the container's nvidia.com/gpu limit at GPUsAt (0 when not
	// a whole number).
	GPUs   int64
	GPUsAt []any
	// Pod holds the scheduling fields (nodeSelector, affinity) as a pod
	// does, so a GPU is read from them as from any pod.
	Pod Pod
	// MaxModelLen is NIM_MAX_MODEL_LEN at MaxModelLenAt (0 when unset).
	MaxModelLen   int64
	MaxModelLenAt []any
	// Profile is the profile the deployment pins, at ProfileAt: the
	// NIMService's storage.nimCache.profile (the operator passes it as
	// NIM_MODEL_PROFILE) or the NIM_MODEL_PROFILE env entry.
	Profile   string
	ProfileAt []any
	// MultiNode is set when the NIMService spreads the model over a
	// LeaderWorkerSet (spec.multiNode): its parallel sizes are the
	// operator's, not the pod's GPUs.
	MultiNode bool
}

// NIMImage reads a NIM container image: the "<publisher>/<model>" of
// nvcr.io/nim/<publisher>/<model>[:tag][@digest]; false for any other
// image or one with a template variable.
func NIMImage(image string) (string, bool) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(image), nimRegistry)
	if !ok || IsPlaceholder(image) {
		return "", false
	}
	if i := strings.IndexAny(rest, ":@"); i >= 0 {
		rest = rest[:i]
	}
	parts := strings.Split(rest, "/")
	if len(parts) != 2 || parts[0] == "" || parts[1] == "" || strings.ContainsAny(rest, "${}") {
		return "", false
	}
	return strings.ToLower(rest), true
}

// nimNotLLM says why a NIM name is not an LLM NIM: NVIDIA's retrieval
// NIMs are named for what they do (nvidia/nv-embedqa-e5-v5,
// nvidia/llama-3.2-nv-embedqa-1b-v2, nvidia/llama-3.2-nv-rerankqa-1b-v2;
// docs.nvidia.com/nim/nemo-retriever/text-embedding and
// .../text-reranking, supported models), and the NIM Operator's
// NIMService type field named them (api/apps/v1alpha1/nimservice_types.go
// @ d7030c10: Enum=llm;embedding;reranking). Their names can hold an LLM's
// (llama-3.2 ... 1b), which must not be sized as that LLM.
func nimNotLLM(model, typ string) string {
	switch t := strings.ToLower(typ); t {
	case "", "llm":
	default:
		return "spec.type " + t
	}
	for _, w := range []string{"embed", "rerank", "retriever"} {
		if strings.Contains(model, w) {
			return "an " + w + " NIM"
		}
	}
	return ""
}

// ReadNIMService reads an NVIDIA NIM Operator NIMService
// (apps.nvidia.com/v1alpha1; NVIDIA/k8s-nim-operator
// api/apps/v1alpha1/nimservice_types.go @ f63f74d7 NIMServiceSpec):
// spec.image.repository, spec.resources, spec.nodeSelector and
// spec.affinity (copied to the Deployment's pod), spec.env,
// spec.storage.nimCache.profile (older releases: spec.nimCache.profile,
// @ d7030c10), passed to NIM as NIM_MODEL_PROFILE
// (internal/controller/platform/standalone/nimservice.go), and
// spec.multiNode. false for any other document or an image that is not a
// NIM's.
func ReadNIMService(doc any) (NIM, bool) {
	m, _ := doc.(map[string]any)
	if value.String(m["kind"]) != "NIMService" || !strings.HasPrefix(value.String(m["apiVersion"]), "apps.nvidia.com/") {
		return NIM{}, false
	}
	spec, _ := m["spec"].(map[string]any)
	n, ok := ReadNIMSpec(spec, []any{"spec"})
	if !ok {
		return NIM{}, false
	}
	n.NotLLM = nimNotLLM(n.Model, value.String(spec["type"]))
	for _, at := range [][]any{{"storage", "nimCache", "profile"}, {"nimCache", "profile"}} {
		if p := value.String(LookupAt(spec, at)); p != "" && !IsPlaceholder(p) {
			n.Profile, n.ProfileAt = p, append([]any{"spec"}, at...)
			break
		}
	}
	n.MultiNode = spec["multiNode"] != nil
	return n, true
}

// ReadNIMSpec reads a map at path laid out as a NIMService's spec:
// image.repository, resources, nodeSelector, affinity and env (a
// NIMService's spec; the nim-llm chart's values, internal/helm). false
// when the image is not a NIM's.
func ReadNIMSpec(spec map[string]any, path []any) (NIM, bool) {
	img, _ := spec["image"].(map[string]any)
	repo := value.String(img["repository"])
	model, ok := NIMImage(repo)
	if !ok {
		return NIM{}, false
	}
	n := NIM{Image: repo, ImageAt: append(clone(path), "image", "repository"), Model: model, NotLLM: nimNotLLM(model, "")}
	n.GPUs, n.GPUsAt = nimGPUs(spec["resources"], append(clone(path), "resources"))
	n.Pod = schedulingPod(spec, path)
	n.readEnv(spec["env"], append(clone(path), "env"))
	return n, true
}

// NIMContainer reads a pod's container that runs a NIM image (a plain
// Deployment or StatefulSet, or a chart's rendered pod): the same facts
// as a NIMService states, from the container and its pod. false when the
// image is not a NIM's.
func NIMContainer(doc any, p Pod, c Container) (NIM, bool) {
	model, ok := NIMImage(c.Image)
	if !ok {
		return NIM{}, false
	}
	n := NIM{Image: c.Image, ImageAt: append(clone(c.Path), "image"), Model: model, NotLLM: nimNotLLM(model, ""), Pod: p}
	if c.GPU > 0 {
		n.GPUs, n.GPUsAt = c.GPU, c.GPUPath
	}
	cm, _ := LookupAt(doc, c.Path).(map[string]any)
	n.readEnv(cm["env"], append(clone(c.Path), "env"))
	return n, true
}

// nimGPUs is the nvidia.com/gpu limit (else request) of a resources map.
func nimGPUs(res any, path []any) (int64, []any) {
	rm, _ := res.(map[string]any)
	for _, sec := range []string{"limits", "requests"} {
		s, _ := rm[sec].(map[string]any)
		if n, integer := QuantityInt(s["nvidia.com/gpu"]); integer && n > 0 {
			return n, append(clone(path), sec, "nvidia.com/gpu")
		}
	}
	return 0, nil
}

// schedulingPod reads a map's pod scheduling fields (nodeSelector,
// affinity) at path into a Pod with no containers.
func schedulingPod(spec map[string]any, path []any) Pod {
	p := Pod{Path: path, Replicas: 1}
	if ns, ok := spec["nodeSelector"].(map[string]any); ok {
		if s := value.String(ns[gpuProductLabel]); s != "" {
			p.Product, p.ProductAt = s, append(clone(path), "nodeSelector", gpuProductLabel)
		}
		p.NodeSelector = map[string]string{}
		for k, v := range ns {
			if sv := value.String(v); sv != "" {
				p.NodeSelector[k] = sv
			}
		}
		p.NodeSelectorAt = append(clone(path), "nodeSelector")
	}
	if p.Product == "" {
		p.Product, p.ProductAt = affinityProduct(spec, path)
	}
	p.Hints = nodeHints(spec, path)
	return p
}

// readEnv reads the env entries NIM documents for what it sizes
// (docs.nvidia.com/nim/large-language-models/1.10.0/configuration.html,
// Environment Variables): NIM_MAX_MODEL_LEN, the model's context length,
// NIM_MODEL_PROFILE, the profile to run instead of the one NIM picks, and
// NIM_MODEL_PATH, the model a model-free NIM serves.
func (n *NIM) readEnv(env any, path []any) {
	for i, e := range value.List(env) {
		em, _ := e.(map[string]any)
		v := value.String(em["value"])
		if v == "" || IsPlaceholder(v) {
			continue
		}
		at := append(clone(path), i)
		switch value.String(em["name"]) {
		case "NIM_MAX_MODEL_LEN":
			if x, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil && x > 0 {
				n.MaxModelLen, n.MaxModelLenAt = x, at
			}
		case "NIM_MODEL_PROFILE":
			n.Profile, n.ProfileAt = v, at
		case "NIM_MODEL_PATH":
			// docs.nvidia.com/nim/large-language-models/latest/deployment/
			// model-free-nim.html: hf://<org>/<model> names a Hugging Face
			// model; ngc://, s3://, gs:// and paths name no id.
			if id, ok := strings.CutPrefix(strings.TrimSpace(v), "hf://"); ok && strings.Count(id, "/") == 1 && !strings.ContainsAny(id, ":@ ") {
				n.ModelID, n.ModelIDAt = id, at
			}
		}
	}
}

// NIMProfile is what a NIM profile's readable name says: its backend,
// precision and parallel sizes (docs.nvidia.com/nim/large-language-models/
// latest/profiles.html: "tensorrt_llm-A100-fp16-tp2-latency",
// "vllm-fp16-tp1"; deployment/model-profiles-and-selection.html:
// <backend>-<precision>-tp<N>-pp<M>[-lora]). A profile given by its hash
// ID names none of them (Known false).
type NIMProfile struct {
	Backend, Precision string
	TP, PP             int
	Known              bool
}

var (
	nimProfileID = regexp.MustCompile(`^[0-9a-f]{64}$`)
	nimParallel  = regexp.MustCompile(`^(tp|pp)([0-9]+)$`)
)

// ParseNIMProfile reads a profile's readable name.
func ParseNIMProfile(name string) NIMProfile {
	name = strings.ToLower(strings.TrimSpace(name))
	if name == "" || nimProfileID.MatchString(name) {
		return NIMProfile{}
	}
	var p NIMProfile
	for i, tok := range strings.Split(name, "-") {
		switch {
		case i == 0 && (tok == "tensorrt_llm" || tok == "trtllm" || tok == "vllm" || tok == "sglang"):
			p.Backend = tok
		case tok == "bf16" || tok == "fp16" || tok == "fp8" || tok == "nvfp4" || tok == "mxfp4" || tok == "int4_awq" || tok == "int8wo":
			p.Precision = tok
		default:
			if m := nimParallel.FindStringSubmatch(tok); m != nil {
				k, _ := strconv.Atoi(m[2])
				if m[1] == "tp" {
					p.TP = k
				} else {
					p.PP = k
				}
			}
		}
	}
	p.Known = p.Precision != "" && p.TP > 0
	return p
}
