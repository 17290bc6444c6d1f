package ray

import (
	"encoding/json"
	"math"
	"strings"

	"github.com/gpulint/gpulint/internal/value"
)

// StartGPUs is what a KubeRay group's rayStartParams tell Ray about the
// GPUs of each of its pods. KubeRay passes the container's nvidia.com/gpu
// limit to `ray start --num-gpus` itself; a num-gpus in rayStartParams
// overrides it, and Ray then accounts that many GPUs per pod "even if the
// container limits don't indicate the presence of GPU" (ray-project/ray
// doc/source/cluster/kubernetes/user-guides/gpu.rst at 0114562856870,
// "Overriding Ray GPU capacity"). rayStartParams values are strings
// (KubeRay ray-operator/apis/ray/v1/raycluster_types.go, RayStartParams
// map[string]string).
type StartGPUs struct {
	// Group is the group's path (headGroupSpec or workerGroupSpecs[i]).
	Group []any
	// NumGPUs is rayStartParams num-gpus when it is a number, at NumGPUsAt.
	NumGPUs   float64
	NumGPUsAt []any
	// ResourceGPU is the "GPU" entry of rayStartParams resources (a JSON
	// object in a string), at ResourceAt.
	ResourceGPU float64
	ResourceAt  []any
}

// GroupStart reads the rayStartParams of the KubeRay group a pod template
// at podPath belongs to; false when it is no Ray group's or its
// rayStartParams state no GPUs.
func GroupStart(doc any, podPath []any) (StartGPUs, bool) {
	var group []any
	for i, p := range podPath {
		switch p {
		case "headGroupSpec":
			group = clone(podPath[:i+1])
		case "workerGroupSpecs":
			if i+1 < len(podPath) {
				group = clone(podPath[:i+2])
			}
		}
		if group != nil {
			break
		}
	}
	if group == nil {
		return StartGPUs{}, false
	}
	params, _ := lookup(doc, append(clone(group), "rayStartParams")).(map[string]any)
	out := StartGPUs{Group: group}
	at := append(clone(group), "rayStartParams")
	if f, ok := value.Float(params["num-gpus"]); ok && f >= 0 && !math.IsInf(f, 0) {
		out.NumGPUs, out.NumGPUsAt = f, append(clone(at), "num-gpus")
	}
	if f, ok := resourceGPU(params["resources"]); ok {
		out.ResourceGPU, out.ResourceAt = f, append(clone(at), "resources")
	}
	return out, out.NumGPUsAt != nil || out.ResourceAt != nil
}

// resourceGPU reads the GPU entry of a rayStartParams resources value:
// a JSON object, often written with an extra pair of quotes and escaped
// inner quotes ('"{\"GPU\": 1}"') so that the shell ray start runs in
// keeps it one word.
func resourceGPU(v any) (float64, bool) {
	s := strings.TrimSpace(value.String(v))
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		s = s[1 : len(s)-1]
	}
	s = strings.ReplaceAll(s, `\"`, `"`)
	var m map[string]any
	if json.Unmarshal([]byte(s), &m) != nil {
		return 0, false
	}
	f, ok := value.Float(m["GPU"])
	return f, ok && f >= 0
}
