package kube

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpulint/gpulint/internal/source"
)

// manifestValue parses a manifest's first document as gpulint does.
func manifestValue(t *testing.T, text string) any {
	t.Helper()
	f, err := source.Parse("m.yaml", []byte(text), source.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	v, err := f.Docs[0].Root.ToValue(source.DefaultLimits().MaxNodes)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// podSummary is what the group sizing says about one pod template.
type podSummary struct {
	Path                        string
	Group                       string
	Containers                  []string // container paths
	GPUs                        []int64
	GroupPods, GroupGPUs, World int64
}

func summarize(pods []Pod) []podSummary {
	var out []podSummary
	for _, p := range pods {
		s := podSummary{Path: pathKey(p.Path), Group: p.Group, GroupPods: p.GroupPods, GroupGPUs: p.GroupGPUs, World: p.WorldSize}
		for _, c := range p.Containers {
			s.Containers = append(s.Containers, pathKey(c.Path))
			s.GPUs = append(s.GPUs, c.GPU)
		}
		out = append(out, s)
	}
	return out
}

func TestFindPodsGroupSizes(t *testing.T) {
	p := func(elems ...any) string { return pathKey(elems) }
	tests := []struct {
		name     string
		manifest string
		want     []podSummary
	}{
		{
			name: "PyTorchJob master and workers with nprocPerNode",
			manifest: `apiVersion: kubeflow.org/v1
kind: PyTorchJob
spec:
  nprocPerNode: "4"
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers: [{name: pytorch, image: img, resources: {limits: {nvidia.com/gpu: 8}}}]
    Worker:
      replicas: 3
      template:
        spec:
          containers: [{name: pytorch, image: img, resources: {limits: {nvidia.com/gpu: 8}}}]
`,
			want: []podSummary{
				{Path: p("spec", "pytorchReplicaSpecs", "Master", "template", "spec"), Group: "kubeflow",
					Containers: []string{p("spec", "pytorchReplicaSpecs", "Master", "template", "spec", "containers", 0)}, GPUs: []int64{8},
					GroupPods: 4, GroupGPUs: 32, World: 16},
				{Path: p("spec", "pytorchReplicaSpecs", "Worker", "template", "spec"), Group: "kubeflow",
					Containers: []string{p("spec", "pytorchReplicaSpecs", "Worker", "template", "spec", "containers", 0)}, GPUs: []int64{8},
					GroupPods: 4, GroupGPUs: 32, World: 16},
			},
		},
		{
			name: "PyTorchJob workers counted by a template variable: sizes unknown",
			manifest: `apiVersion: kubeflow.org/v1
kind: PyTorchJob
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers: [{name: pytorch, image: img, resources: {limits: {nvidia.com/gpu: 8}}}]
    Worker:
      replicas: $NUM_WORKERS
      template:
        spec:
          containers: [{name: pytorch, image: img, resources: {limits: {nvidia.com/gpu: 8}}}]
`,
			want: []podSummary{
				{Path: p("spec", "pytorchReplicaSpecs", "Master", "template", "spec"), Group: "kubeflow",
					Containers: []string{p("spec", "pytorchReplicaSpecs", "Master", "template", "spec", "containers", 0)}, GPUs: []int64{8}},
				{Path: p("spec", "pytorchReplicaSpecs", "Worker", "template", "spec"), Group: "kubeflow",
					Containers: []string{p("spec", "pytorchReplicaSpecs", "Worker", "template", "spec", "containers", 0)}, GPUs: []int64{8}},
			},
		},
		{
			name: "PyTorchJob processes per pod a template variable: world size unknown",
			manifest: `apiVersion: kubeflow.org/v1
kind: PyTorchJob
spec:
  nprocPerNode: ${NPROC}
  pytorchReplicaSpecs:
    Worker:
      replicas: 2
      template:
        spec:
          containers: [{name: pytorch, image: img, resources: {limits: {nvidia.com/gpu: 8}}}]
`,
			want: []podSummary{
				{Path: p("spec", "pytorchReplicaSpecs", "Worker", "template", "spec"), Group: "kubeflow",
					Containers: []string{p("spec", "pytorchReplicaSpecs", "Worker", "template", "spec", "containers", 0)}, GPUs: []int64{8},
					GroupPods: 2, GroupGPUs: 16},
			},
		},
		{
			name: "LeaderWorkerSet size a mustache placeholder: sizes unknown",
			manifest: `apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
spec:
  leaderWorkerTemplate:
    size: {{GROUP_SIZE}}
    workerTemplate:
      spec:
        containers: [{name: worker, image: img, resources: {limits: {nvidia.com/gpu: "8"}}}]
`,
			want: []podSummary{
				{Path: p("spec", "leaderWorkerTemplate", "workerTemplate", "spec"), Group: "leader-worker-set",
					Containers: []string{p("spec", "leaderWorkerTemplate", "workerTemplate", "spec", "containers", 0)}, GPUs: []int64{8}},
			},
		},
		{
			name: "Ray worker GPUs a template variable: sizes unknown",
			manifest: `apiVersion: ray.io/v1
kind: RayCluster
spec:
  headGroupSpec:
    template:
      spec:
        containers: [{name: head, image: ray}]
  workerGroupSpecs:
    - groupName: a
      replicas: 2
      template:
        spec:
          containers: [{name: w, image: ray, resources: {limits: {nvidia.com/gpu: GPUS_PER_WORKER}}}]
`,
			want: []podSummary{
				{Path: p("spec", "headGroupSpec", "template", "spec"), Group: "ray",
					Containers: []string{p("spec", "headGroupSpec", "template", "spec", "containers", 0)}, GPUs: []int64{0}},
				{Path: p("spec", "workerGroupSpecs", 0, "template", "spec"), Group: "ray",
					Containers: []string{p("spec", "workerGroupSpecs", 0, "template", "spec", "containers", 0)}, GPUs: []int64{0}},
			},
		},
		{
			name: "LeaderWorkerSet group of size 4",
			manifest: `apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
spec:
  replicas: 2
  leaderWorkerTemplate:
    size: 4
    leaderTemplate:
      spec:
        containers: [{name: leader, image: img, resources: {limits: {nvidia.com/gpu: "8"}}}]
    workerTemplate:
      spec:
        containers: [{name: worker, image: img, resources: {limits: {nvidia.com/gpu: "8"}}}]
`,
			want: []podSummary{
				{Path: p("spec", "leaderWorkerTemplate", "leaderTemplate", "spec"), Group: "leader-worker-set",
					Containers: []string{p("spec", "leaderWorkerTemplate", "leaderTemplate", "spec", "containers", 0)}, GPUs: []int64{8},
					GroupPods: 4, GroupGPUs: 32, World: 32},
				{Path: p("spec", "leaderWorkerTemplate", "workerTemplate", "spec"), Group: "leader-worker-set",
					Containers: []string{p("spec", "leaderWorkerTemplate", "workerTemplate", "spec", "containers", 0)}, GPUs: []int64{8},
					GroupPods: 4, GroupGPUs: 32, World: 32},
			},
		},
		{
			name: "RayCluster head and worker groups",
			manifest: `apiVersion: ray.io/v1
kind: RayCluster
spec:
  headGroupSpec:
    template:
      spec:
        containers: [{name: head, image: ray}]
  workerGroupSpecs:
    - groupName: a
      replicas: 2
      template:
        spec:
          containers: [{name: w, image: ray, resources: {limits: {nvidia.com/gpu: 4}}}]
    - groupName: b
      minReplicas: 1
      numOfHosts: 2
      template:
        spec:
          containers: [{name: w, image: ray, resources: {limits: {nvidia.com/gpu: 1}}}]
`,
			want: []podSummary{
				{Path: p("spec", "headGroupSpec", "template", "spec"), Group: "ray",
					Containers: []string{p("spec", "headGroupSpec", "template", "spec", "containers", 0)}, GPUs: []int64{0},
					GroupPods: 5, GroupGPUs: 10, World: 10},
				{Path: p("spec", "workerGroupSpecs", 0, "template", "spec"), Group: "ray",
					Containers: []string{p("spec", "workerGroupSpecs", 0, "template", "spec", "containers", 0)}, GPUs: []int64{4},
					GroupPods: 5, GroupGPUs: 10, World: 10},
				{Path: p("spec", "workerGroupSpecs", 1, "template", "spec"), Group: "ray",
					Containers: []string{p("spec", "workerGroupSpecs", 1, "template", "spec", "containers", 0)}, GPUs: []int64{1},
					GroupPods: 5, GroupGPUs: 10, World: 10},
			},
		},
		{
			name: "TrainJob trainer with resourcesPerNode",
			manifest: `apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
spec:
  runtimeRef: {name: torch-distributed}
  trainer:
    numNodes: 2
    image: img
    command: [torchrun, train.py]
    resourcesPerNode:
      limits: {nvidia.com/gpu: "4"}
`,
			want: []podSummary{
				{Path: p("spec", "trainer"), Group: "kubeflow", Containers: []string{p("spec", "trainer")}, GPUs: []int64{4},
					GroupPods: 2, GroupGPUs: 8, World: 8},
			},
		},
		{
			name: "KServe predictor.model inline container",
			manifest: `apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
spec:
  predictor:
    model:
      modelFormat: {name: huggingface}
      args: [--model_name=llama]
      resources: {limits: {nvidia.com/gpu: "1"}}
`,
			want: []podSummary{
				{Path: p("spec", "predictor"), Containers: []string{p("spec", "predictor", "model")}, GPUs: []int64{1}},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := summarize(FindPods(manifestValue(t, tc.manifest)))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("pods (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFindPodsReplicasTemplateVariable(t *testing.T) {
	for text, want := range map[string]int64{
		"replicas: 3":               3,
		"replicas: ${NUM_REPLICAS}": 0,
		"replicas: {{REPLICAS}}":    0,
		"parallelism: $NUM_NODES":   0,
		"paused: true":              1,
	} {
		m := manifestValue(t, "apiVersion: apps/v1\nkind: Deployment\nspec:\n  "+text+"\n  template:\n    spec:\n      containers: [{name: c, image: img}]\n")
		pods := FindPods(m)
		if len(pods) != 1 || pods[0].Replicas != want {
			t.Errorf("%s: pods %+v, want one with Replicas %d", text, pods, want)
		}
	}
}

func TestTrainJobGPUPath(t *testing.T) {
	pods := FindPods(manifestValue(t, `apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
spec:
  trainer:
    numNodes: 1
    image: img
    resourcesPerNode: {limits: {nvidia.com/gpu: 2}}
`))
	if len(pods) != 1 || len(pods[0].Containers) != 1 {
		t.Fatalf("pods = %+v", pods)
	}
	c := pods[0].Containers[0]
	want := []any{"spec", "trainer", "resourcesPerNode", "limits", "nvidia.com/gpu"}
	if diff := cmp.Diff(want, c.GPUPath); diff != "" {
		t.Errorf("gpu path (-want +got):\n%s", diff)
	}
	if c.Name != "trainer" {
		t.Errorf("name = %q, want trainer", c.Name)
	}
}
