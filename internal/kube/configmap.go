package kube

import (
	"path"
	"strings"

	"github.com/gpulint/gpulint/internal/value"
)

// ConfigMapMount is a volume mounted into a container, read for what a
// ConfigMap volume puts there (ConfigMap empty for a volume of another
// kind). The
// files under MountPath are the ConfigMap's data keys, each named by its
// key, or, where the volume lists items, only the listed keys, each at its
// item path; a mount with a SubPath is the one file at that path of the
// volume (Kubernetes docs, Volumes, configMap, and "Using subPath":
// https://kubernetes.io/docs/concepts/storage/volumes/#configmap).
type ConfigMapMount struct {
	ConfigMap string // the ConfigMap's name; empty for another volume
	// Items maps an item's path in the volume to its key; nil when the
	// volume projects every key.
	Items     map[string]string
	MountPath string // cleaned
	SubPath   string
	Path      []any // the volumeMount's mountPath
}

// podVolumes are the volumes of a pod spec that its containers' mounts
// are read against.
type podVolumes struct {
	shm        map[string]bool // memory-backed emptyDir volumes
	configMaps map[string]ConfigMapMount
}

// configMapVolume reads a volume's configMap source.
func configMapVolume(c map[string]any) ConfigMapMount {
	m := ConfigMapMount{ConfigMap: value.String(c["name"])}
	for _, it := range value.List(c["items"]) {
		im, _ := it.(map[string]any)
		k, p := value.String(im["key"]), value.String(im["path"])
		if k == "" || p == "" {
			continue
		}
		if m.Items == nil {
			m.Items = map[string]string{}
		}
		m.Items[path.Clean(p)] = k
	}
	return m
}

// ConfigMapFile reports whether the container sees the file at an
// absolute path through a ConfigMap mount, and if so which ConfigMap and
// key it holds; key is empty where the path is inside the mount but names
// no key the volume projects. The deepest mount holding the path wins,
// as it hides the ones above it.
func (c Container) ConfigMapFile(file string) (m ConfigMapMount, key string, mounted bool) {
	if !path.IsAbs(file) {
		return ConfigMapMount{}, "", false
	}
	file = path.Clean(file)
	var deepest ConfigMapMount
	found := false
	for _, cm := range c.Mounts {
		var rel string
		switch {
		case cm.SubPath != "" && file == cm.MountPath:
			rel = path.Clean(cm.SubPath)
		case cm.SubPath == "" && strings.HasPrefix(file, strings.TrimSuffix(cm.MountPath, "/")+"/"):
			rel = strings.TrimPrefix(file, strings.TrimSuffix(cm.MountPath, "/")+"/")
		default:
			continue
		}
		if found && len(cm.MountPath) <= len(deepest.MountPath) {
			continue
		}
		deepest, found, key = cm, true, ""
		switch {
		case cm.Items != nil:
			key = cm.Items[rel]
		case !strings.Contains(rel, "/"):
			key = rel
		}
	}
	if !found || deepest.ConfigMap == "" {
		return ConfigMapMount{}, "", false
	}
	return deepest, key, true
}
