package kustomize

// Strategic merge, for the fields of a pod spec that size a workload
// (Kubernetes docs, "Update API Objects in Place Using kubectl patch",
// strategic merge patch: https://kubernetes.io/docs/tasks/manage-kubernetes-objects/update-api-object-kubectl-patch/;
// the merge keys are the patchMergeKey tags of k8s.io/api core/v1
// types.go, read at kubernetes/api v0.31.0):
//   - maps merge key by key (nodeSelector, resources.limits, labels); a
//     null value deletes the key;
//   - a list whose field has patchStrategy merge merges its items by the
//     merge key: containers and initContainers by name, env by name,
//     volumes by name, volumeMounts by mountPath, ports by containerPort,
//     imagePullSecrets by name; a patch item that carries
//     `$patch: delete` removes the item;
//   - any other list (args, command, envFrom, tolerations) is replaced
//     whole;
//   - a map carrying `$patch: replace` replaces the target map whole,
//     and `$patch: delete` removes it.

// mergeKeys maps a list field to its merge key.
var mergeKeys = map[string]string{
	"containers":       "name",
	"initContainers":   "name",
	"env":              "name",
	"volumes":          "name",
	"volumeMounts":     "mountPath",
	"ports":            "containerPort",
	"imagePullSecrets": "name",
}

// merge applies patch to base (both maps) and returns the result; base
// is not modified.
func merge(base, patch *Node) *Node {
	if patch == nil {
		return base.clone()
	}
	if base == nil || base.Kind != Map || patch.Kind != Map {
		return stripDirectives(patch.clone())
	}
	switch patch.Get("$patch").String() {
	case "replace":
		return stripDirectives(patch.clone())
	case "delete":
		return nil
	}
	out := base.clone()
	for _, e := range patch.Entries {
		if e.Key == "$patch" {
			continue
		}
		pv := e.Value
		if pv.Kind == Scalar && pv.Value == nil {
			out.remove(e.Key)
			continue
		}
		bv := out.Get(e.Key)
		switch {
		case bv != nil && bv.Kind == Map && pv.Kind == Map:
			m := merge(bv, pv)
			if m == nil {
				out.remove(e.Key)
			} else {
				out.set(e.Key, e.KeyAt, m)
			}
		case bv != nil && bv.Kind == Seq && pv.Kind == Seq && mergeKeys[e.Key] != "":
			out.set(e.Key, e.KeyAt, mergeList(bv, pv, mergeKeys[e.Key]))
		default:
			out.set(e.Key, e.KeyAt, stripDirectives(pv.clone()))
		}
	}
	return out
}

// mergeList merges a patch list into a base list by key: an item of the
// patch whose key matches a base item is merged into it, a new one is
// appended, one with `$patch: delete` removes its match.
func mergeList(base, patch *Node, key string) *Node {
	out := base.clone()
	for _, pi := range patch.Items {
		if pi.Kind != Map {
			continue
		}
		k := pi.Get(key)
		idx := -1
		for i, bi := range out.Items {
			if bk := bi.Get(key); bk != nil && k != nil && bk.Text == k.Text {
				idx = i
				break
			}
		}
		del := pi.Get("$patch").String() == "delete"
		switch {
		case idx >= 0 && del:
			out.Items = append(out.Items[:idx:idx], out.Items[idx+1:]...)
		case idx >= 0:
			if m := merge(out.Items[idx], pi); m != nil {
				out.Items[idx] = m
			}
		case !del:
			out.Items = append(out.Items, stripDirectives(pi.clone()))
		}
	}
	out.At = patch.At
	return out
}

// stripDirectives removes $patch keys from a value copied whole.
func stripDirectives(n *Node) *Node {
	if n == nil {
		return nil
	}
	if n.Kind == Map {
		n.remove("$patch")
		for _, e := range n.Entries {
			stripDirectives(e.Value)
		}
	}
	for _, it := range n.Items {
		stripDirectives(it)
	}
	return n
}
