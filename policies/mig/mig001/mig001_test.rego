package gpulint.rules.mig001_test

import data.gpulint.rules.mig001

at := ["spec", "containers", 0, "resources", "limits", "nvidia.com/mig-1g.5gb"]

k8s(m, pod) := {"pods": [object.union({"path": ["spec"], "containers": [{"name": "llm", "mig": [object.union({"count": 1, "path": at}, m)]}]}, pod)]}

test_profile_missing_on_target if {
	fs := mig001.findings with input as {"k8s": k8s({"profile": "1g.5gb", "known": false, "gpu": "H100-80GB", "gpu_profiles": ["1g.10gb", "7g.80gb"]}, {})}
	count(fs) == 1
	some f in fs
	f.path == at
	f.message == "H100-80GB has no MIG profile 1g.5gb (its profiles: 1g.10gb, 7g.80gb), so nvidia.com/mig-1g.5gb is never advertised and container \"llm\" stays Pending"
}

test_gpu_without_mig if {
	some f in mig001.findings with input as {"k8s": k8s({"profile": "1g.5gb", "known": false, "gpu": "L4", "gpu_profiles": []}, {})}
	contains(f.message, "it does not support MIG")
}

test_known_profile_quiet if {
	count(mig001.findings) == 0 with input as {"k8s": k8s({"profile": "1g.5gb", "known": true, "gpu": "A100-40GB", "gpu_profiles": ["1g.5gb"]}, {})}
}

test_unknown_gpu_quiet if {
	count(mig001.findings) == 0 with input as {"k8s": k8s({"profile": "3g.40gb"}, {})}
}

test_plus_in_resource_name if {
	some f in mig001.findings with input as {"k8s": k8s({"profile": "1g.10gb+me"}, {})}
	contains(f.message, "advertises 1g.10gb+me as nvidia.com/mig-1g.10gb.me")
}

test_malformed_profile if {
	some f in mig001.findings with input as {"k8s": k8s({"profile": "1g.10g"}, {})}
	contains(f.message, "is not a MIG profile")
}

test_single_strategy_product_label if {
	some f in mig001.findings with input as {"k8s": k8s({"profile": "1g.5gb"}, {"product": "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", "product_path": ["p"]})}
	contains(f.message, "run the single MIG strategy")
	f.related == [["p"]]
}

test_strategy_label_none if {
	some f in mig001.findings with input as {"k8s": k8s({"profile": "1g.5gb"}, {"mig_strategy": "none", "mig_strategy_path": ["s"]})}
	contains(f.message, "advertise whole GPUs only")
}

test_mixed_strategy_quiet if {
	count(mig001.findings) == 0 with input as {"k8s": k8s({"profile": "1g.5gb"}, {"mig_strategy": "mixed"})}
}
