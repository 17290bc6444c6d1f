package kube

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNodeHints(t *testing.T) {
	affinity := func(key string, vals ...any) map[string]any {
		return map[string]any{"affinity": map[string]any{"nodeAffinity": map[string]any{
			"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{"nodeSelectorTerms": []any{
				map[string]any{"matchExpressions": []any{map[string]any{"key": key, "operator": "In", "values": vals}}},
			}}}}}
	}
	tests := []struct {
		name string
		spec map[string]any
		want []NodeHint
	}{
		{
			name: "gke accelerator selector",
			spec: map[string]any{"nodeSelector": map[string]any{"cloud.google.com/gke-accelerator": "nvidia-l4"}},
			want: []NodeHint{{Label: gkeAcceleratorLabel, Values: []string{"nvidia-l4"}, GPUs: []string{"L4"},
				Sources: []string{"https://cloud.google.com/kubernetes-engine/docs/how-to/gpus"}, Path: []any{"nodeSelector", gkeAcceleratorLabel}}},
		},
		{
			name: "instance type with its count, SageMaker prefix",
			spec: map[string]any{"nodeSelector": map[string]any{"beta.kubernetes.io/instance-type": "ml.p4d.24xlarge"}},
			want: []NodeHint{{Label: betaInstanceTypeLabel, Values: []string{"ml.p4d.24xlarge"}, GPUs: []string{"A100-40GB"}, Count: 8,
				Sources: []string{"https://aws.amazon.com/ec2/instance-types/p4/"}, Path: []any{"nodeSelector", betaInstanceTypeLabel}}},
		},
		{
			name: "unlisted size falls back to its family, which states no count",
			spec: map[string]any{"nodeSelector": map[string]any{"node.kubernetes.io/instance-type": "g6e.96xlarge"}},
			want: []NodeHint{{Label: instanceTypeLabel, Values: []string{"g6e.96xlarge"}, GPUs: []string{"L40S"},
				Sources: []string{"https://aws.amazon.com/ec2/instance-types/g6e/"}, Path: []any{"nodeSelector", instanceTypeLabel}}},
		},
		{
			name: "affinity In naming two GPUs keeps both candidates",
			spec: affinity(instanceTypeLabel, "g6.xlarge", "Standard_ND96isr_H100_v5"),
			want: []NodeHint{{Label: instanceTypeLabel, Values: []string{"g6.xlarge", "Standard_ND96isr_H100_v5"}, GPUs: []string{"L4", "H100-80GB"},
				Sources: []string{"https://aws.amazon.com/ec2/instance-types/g6/", "https://learn.microsoft.com/en-us/azure/virtual-machines/sizes/gpu-accelerated/ndh100v5-series"},
				Path:    []any{"affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms", 0, "matchExpressions", 0, "values", 0}}},
		},
		{
			name: "karpenter gpu name a100 is ambiguous",
			spec: map[string]any{"nodeSelector": map[string]any{"karpenter.k8s.aws/instance-gpu-name": "a100"}},
			want: []NodeHint{{Label: karpenterGPUName, Values: []string{"a100"}, GPUs: []string{"A100-40GB", "A100-80GB"},
				Sources: []string{"https://karpenter.sh/docs/reference/instance-types/"}, Path: []any{"nodeSelector", karpenterGPUName}}},
		},
		{
			name: "azure whole-GPU A10 size states its count",
			spec: map[string]any{"nodeSelector": map[string]any{"node.kubernetes.io/instance-type": "Standard_NV72ads_A10_v5"}},
			want: []NodeHint{{Label: instanceTypeLabel, Values: []string{"Standard_NV72ads_A10_v5"}, GPUs: []string{"A10"}, Count: 2,
				Sources: []string{"https://learn.microsoft.com/en-us/azure/virtual-machines/sizes/gpu-accelerated/nvadsa10v5-series"}, Path: []any{"nodeSelector", instanceTypeLabel}}},
		},
		{
			name: "azure A10 vGPU slice size names no GPU",
			spec: map[string]any{"nodeSelector": map[string]any{"node.kubernetes.io/instance-type": "Standard_NV6ads_A10_v5"}},
			want: []NodeHint{{Label: instanceTypeLabel, Values: []string{"Standard_NV6ads_A10_v5"}, Path: []any{"nodeSelector", instanceTypeLabel}}},
		},
		{
			name: "gke rtx pro 6000",
			spec: map[string]any{"nodeSelector": map[string]any{"cloud.google.com/gke-accelerator": "nvidia-rtx-pro-6000"}},
			want: []NodeHint{{Label: gkeAcceleratorLabel, Values: []string{"nvidia-rtx-pro-6000"}, GPUs: []string{"RTX-PRO-6000"},
				Sources: []string{"https://cloud.google.com/kubernetes-engine/docs/how-to/gpus"}, Path: []any{"nodeSelector", gkeAcceleratorLabel}}},
		},
		{
			name: "gpu.memory names every GPU NVML reports with that total as candidates",
			spec: map[string]any{"nodeSelector": map[string]any{"nvidia.com/gpu.memory": "81559"}},
			want: []NodeHint{{Label: GPUMemoryLabel, Values: []string{"81559"}, GPUs: []string{"H100-80GB", "H100-PCIe", "H800"},
				Sources: []string{"https://github.com/NVIDIA/k8s-device-plugin/blob/aaccdfd2dc80554d3b67474d027923ccde39cb50/internal/lm/resource.go"}, Path: []any{"nodeSelector", GPUMemoryLabel}}},
		},
		{
			name: "gpu.memory is matched exactly: A100 80GB's totals are not H100's",
			spec: affinity(GPUMemoryLabel, "81920", "81251"),
			want: []NodeHint{{Label: GPUMemoryLabel, Values: []string{"81920", "81251"}, GPUs: []string{"A100-80GB", "A100-80GB-PCIe", "A800-80GB"},
				Sources: []string{"https://github.com/NVIDIA/k8s-device-plugin/blob/aaccdfd2dc80554d3b67474d027923ccde39cb50/internal/lm/resource.go"},
				Path:    []any{"affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms", 0, "matchExpressions", 0, "values", 0}}},
		},
		{
			name: "gpu.memory value no GPU reports",
			spec: map[string]any{"nodeSelector": map[string]any{"nvidia.com/gpu.memory": "81000"}},
			want: []NodeHint{{Label: GPUMemoryLabel, Values: []string{"81000"}, Path: []any{"nodeSelector", GPUMemoryLabel}}},
		},
		{
			name: "unknown value is kept, with no GPU",
			spec: map[string]any{"nodeSelector": map[string]any{"cloud.google.com/gke-accelerator": "nvidia-tesla-k80"}},
			want: []NodeHint{{Label: gkeAcceleratorLabel, Values: []string{"nvidia-tesla-k80"}, Path: []any{"nodeSelector", gkeAcceleratorLabel}}},
		},
		{
			name: "labels that say nothing of the GPU",
			spec: map[string]any{"nodeSelector": map[string]any{"karpenter.sh/nodepool": "gpu"}},
		},
		{
			name: "several affinity terms are ORed: none settles the node",
			spec: map[string]any{"affinity": map[string]any{"nodeAffinity": map[string]any{
				"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{"nodeSelectorTerms": []any{
					map[string]any{"matchExpressions": []any{map[string]any{"key": instanceTypeLabel, "operator": "In", "values": []any{"g5.xlarge"}}}},
					map[string]any{"matchExpressions": []any{map[string]any{"key": instanceTypeLabel, "operator": "In", "values": []any{"p5.48xlarge"}}}},
				}}}}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, nodeHints(tc.spec, nil)); diff != "" {
				t.Errorf("nodeHints (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLookupHardwareKubeAIProfile(t *testing.T) {
	rows := LookupHardware("kubeai-profile", "nvidia-gpu-l4:2")
	if len(rows) != 1 || rows[0].GPU != "L4" {
		t.Errorf("LookupHardware(kubeai-profile, nvidia-gpu-l4:2) = %v, want one L4 row", rows)
	}
}
