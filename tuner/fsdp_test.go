package tuner

import (
	"testing"
)

// An FSDP workload is planned in FSDP's strategies: never a ZeRO stage or
// an optimizer-only offload, and under FSDP2 never NO_SHARD.
func TestPlanFSDPSpeaksFSDP(t *testing.T) {
	c := testCatalog(t)
	llama8 := mustModel(t, c, "meta-llama/Llama-3.1-8B")
	for _, tc := range []struct {
		name     string
		gpu      string
		gpus     int
		cur      Workload
		sharding string // the plan's fsdp_sharding
		offload  string // the plan's fsdp_offload
	}{
		{"FSDP1 NO_SHARD on 8 A100-40GB must shard fully", "A100-40GB", 8,
			Workload{Kind: Train, Precision: AMP, Sharding: FSDP1}, "FULL_SHARD", "off"},
		{"FSDP2 full sharding that fits on 8 H100 is kept", "H100-80GB", 8,
			Workload{Kind: Train, Precision: AMP, Sharding: FSDP2, ZeroStage: 3}, "FULL_SHARD", "off"},
		{"FSDP1 on one A100-40GB offloads with full sharding", "A100-40GB", 1,
			Workload{Kind: Train, Precision: AMP, Sharding: FSDP1, ZeroStage: 3}, "FULL_SHARD", "on"},
		{"hybrid sharding stays hybrid", "A100-80GB", 16,
			Workload{Kind: Train, Precision: AMP, Sharding: FSDP1, ZeroStage: 3, HybridShard: true}, "HYBRID_SHARD", "off"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := makePlan(t, PlanRequest{Model: llama8, GPU: mustGPU(t, c, tc.gpu), GPUs: tc.gpus, Current: tc.cur})
			got := map[string]string{}
			for _, ch := range p.Choices {
				switch ch.Setting {
				case SettingZeroStage, SettingOffloadOptimizer, SettingOffloadParam:
					t.Errorf("FSDP plan has a DeepSpeed choice %s %s → %s", ch.Setting, ch.From, ch.To)
				}
				got[ch.Setting] = ch.To
			}
			if got[SettingFSDPSharding] != tc.sharding || got[SettingFSDPOffload] != tc.offload {
				t.Errorf("plan: fsdp_sharding %q fsdp_offload %q, want %q %q (fits %v: %s)",
					got[SettingFSDPSharding], got[SettingFSDPOffload], tc.sharding, tc.offload, p.Fits, p.Verdict)
			}
		})
	}
}

func TestFSDPCandidates(t *testing.T) {
	for _, tc := range []struct {
		dp   int
		s    Sharding
		want []string
	}{
		{8, FSDP1, []string{"FSDP NO_SHARD", "FSDP SHARD_GRAD_OP", "FSDP FULL_SHARD", "FSDP FULL_SHARD with CPU offload"}},
		{8, FSDP2, []string{"FSDP SHARD_GRAD_OP", "FSDP FULL_SHARD", "FSDP FULL_SHARD with CPU offload"}},
		{1, FSDP1, []string{"FSDP NO_SHARD", "FSDP FULL_SHARD with CPU offload"}},
		{1, FSDP2, []string{"FSDP SHARD_GRAD_OP", "FSDP FULL_SHARD with CPU offload"}},
	} {
		var got []string
		for _, c := range fsdpCandidates(tc.dp, tc.s, false) {
			got = append(got, c.String())
		}
		if len(got) != len(tc.want) {
			t.Errorf("dp %d %s: %q, want %q", tc.dp, tc.s, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("dp %d %s: %q, want %q", tc.dp, tc.s, got, tc.want)
				break
			}
		}
	}
}

// FSDP's CPU offload keeps each rank's shard of parameters, gradients and
// optimizer states in host memory, so it reports host RAM; full sharding
// partitions over the shard group only (a node under hybrid sharding).
func TestEstimateFSDP(t *testing.T) {
	c := testCatalog(t)
	m := mustModel(t, c, "meta-llama/Llama-3.1-8B")
	tg := mustGPU(t, c, "A100-80GB").Target()
	base := Workload{Kind: Train, Precision: AMP, Sharding: FSDP1, ZeroStage: 3, DataParallel: 16, GPUsPerNode: 8}
	full := estimate(t, m, tg, base)
	if full.Host != 0 {
		t.Errorf("FULL_SHARD without offload: host %d, want 0", full.Host)
	}
	off := base
	off.OffloadParam = CPU // FSDP's CPUOffload takes the optimizer step with it
	oe := estimate(t, m, tg, off)
	// 16 B/param (fp32 weights, grads, Adam) over 16 ranks, 8 per node: 8 B/param per node.
	if want := 8 * m.Params(); oe.Host < want*95/100 || oe.Host > want*105/100 {
		t.Errorf("offload host %d, want about %d", oe.Host, want)
	}
	if oe.PerGPU.OptimizerStates != 0 || oe.PerGPU.Weights >= full.PerGPU.Weights {
		t.Errorf("offload keeps states on the GPU: %+v", oe.PerGPU)
	}
	hyb := base
	hyb.HybridShard = true
	he := estimate(t, m, tg, hyb)
	if he.PerGPU.OptimizerStates != 2*full.PerGPU.OptimizerStates {
		t.Errorf("hybrid over 8 of 16 ranks: optimizer %d, want twice %d", he.PerGPU.OptimizerStates, full.PerGPU.OptimizerStates)
	}
	if _, err := EstimateMemory(m, tg, Workload{Kind: Train, Sharding: FSDP2, ZeroStage: 1, DataParallel: 2}); err == nil {
		t.Error("FSDP at ZeRO stage 1 estimated; FSDP has no such strategy")
	}
}
