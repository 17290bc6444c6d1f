#!/usr/bin/env python3
"""Measure the peak GPU memory of small decoder LLMs for training, LoRA and
inference setups, so that gpulint's memory model (`gpulint estimate`) can be
checked against measurements it was not built from.

Models are built from their configs with random weights (no downloads): the
dimensions are those of gpulint's model catalog (tuner/catalog_data.go),
which cites each model's config.json or model card. Each setup runs in a fresh
subprocess (clean caching allocator, own CUDA context) and takes a few
optimizer steps on random token ids; the row records every input needed to
restate it as a `gpulint estimate` command.

Usage (on a machine with one CUDA GPU, PyTorch, transformers and peft):

    python3 bench/gpu/measure_memory.py --out $OUT/results.jsonl

The parent process never touches CUDA: it schedules the subprocesses (a few
at once, within a memory budget; a setup that runs out of memory while others
shared the GPU is run again alone), keeps to --time-budget, and appends one
JSON line per finished setup as soon as it finishes, plus a TSV summary.
Run with --list to see the grid, --only REGEX to run part of it, and --fake
to test the scheduling without a GPU.
"""

import argparse
import collections
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback

GiB = 1 << 30
MiB = 1 << 20

# Dimensions from gpulint's catalog (tuner/catalog_data.go at 722743c), which
# cites each model's config.json / model card. All five tie their embeddings.
CATALOG_SRC = "gpulint tuner/catalog_data.go @722743c (from the models' config.json)"
MODELS = {
    "Qwen/Qwen2.5-0.5B": dict(short="q05", arch="qwen2", hidden=896, layers=24, heads=14, kv_heads=2,
                              head_dim=64, intermediate=4864, vocab=151936, max_pos=32768, tie=True,
                              qkv_bias=True),
    "Qwen/Qwen2.5-1.5B": dict(short="q15", arch="qwen2", hidden=1536, layers=28, heads=12, kv_heads=2,
                              head_dim=128, intermediate=8960, vocab=151936, max_pos=32768, tie=True,
                              qkv_bias=True),
    "Qwen/Qwen2.5-3B": dict(short="q3", arch="qwen2", hidden=2048, layers=36, heads=16, kv_heads=2,
                            head_dim=128, intermediate=11008, vocab=151936, max_pos=32768, tie=True,
                            qkv_bias=True),
    "meta-llama/Llama-3.2-1B": dict(short="l1", arch="llama", hidden=2048, layers=16, heads=32, kv_heads=8,
                                    head_dim=64, intermediate=8192, vocab=128256, max_pos=131072, tie=True,
                                    qkv_bias=False),
    "meta-llama/Llama-3.2-3B": dict(short="l3", arch="llama", hidden=3072, layers=28, heads=24, kv_heads=8,
                                    head_dim=128, intermediate=8192, vocab=128256, max_pos=131072, tie=True,
                                    qkv_bias=False),
}
SHORT = {v["short"]: k for k, v in MODELS.items()}

# Capacities (bytes) that gpulint's GPU catalog gives the cards emulated by the
# max-micro-batch searches (`gpulint estimate --gpu NAME --format json` .capacity).
EMULATED = {"A100-40GB": 42283827200, "L4": 23790605515}

LORA_R, LORA_ALPHA = 16, 32


# --------------------------------------------------------------------------
# The grid
# --------------------------------------------------------------------------

def job(model, workload, precision, mb, seq, ckpt=False, attn="sdpa", opt="foreach", lora=None, ltk=0,
        steps=None):
    m = MODELS[SHORT[model]]
    parts = [model, workload if workload != "train" else precision, f"mb{mb}", f"s{seq}"]
    if workload == "lora":
        parts.insert(2, lora)
    if ckpt:
        parts.append("ckpt")
    if attn != "sdpa":
        parts.append(attn)
    if opt != "foreach":
        parts.append(opt)
    if workload == "inference" and ltk:
        parts.append(f"ltk{ltk}")
    spec = dict(id="-".join(parts), kind=workload, model=SHORT[model], workload=workload, precision=precision,
                micro_batch=mb, seq_len=seq, checkpointing=ckpt, attn=attn, optimizer="adamw", optimizer_impl=opt,
                lora_targets=lora, logits_to_keep=ltk,
                steps=steps or (2 if workload == "inference" else 3))
    if workload == "inference":
        spec.update(optimizer=None, optimizer_impl=None, checkpointing=False)
    if workload != "lora":
        spec["lora_targets"] = None
    spec["arch"] = m["arch"]
    return spec


def T(model, prec, mb, seq, **kw):
    return job(model, "train", prec, mb, seq, **kw)


def L(model, targets, mb, seq, **kw):
    return job(model, "lora", "bf16", mb, seq, lora=targets, **kw)


def I(model, bs, seq=2048, **kw):
    return job(model, "inference", "bf16", bs, seq, **kw)


def build_grid():
    """Setups in priority order: a first pass covers every kind of setup, a
    second fills in. The scheduler starts them in this order, so a time-out
    loses the tail."""
    a = [
        # full fine-tuning, AMP (fp32 master weights + bf16 autocast), SDPA
        T("q05", "amp", 1, 512), T("q05", "amp", 1, 2048), T("q05", "amp", 4, 2048), T("q05", "amp", 8, 2048),
        T("q05", "amp", 8, 2048, ckpt=True), T("q05", "amp", 1, 2048, ckpt=True),
        T("l1", "amp", 1, 2048), T("l1", "amp", 4, 2048), T("l1", "amp", 8, 2048, ckpt=True),
        T("l1", "amp", 1, 2048, ckpt=True),
        # pure bf16 weights and AdamW states
        T("q05", "pure-bf16", 8, 2048), T("l1", "pure-bf16", 4, 2048), T("l3", "pure-bf16", 4, 2048),
        T("l1", "pure-bf16", 8, 2048, ckpt=True),
        # LoRA r=16 on a frozen bf16 base, bf16 autocast
        L("q15", "all-linear", 8, 2048), L("q15", "qv", 8, 2048), L("l3", "all-linear", 1, 2048),
        L("l3", "qv", 8, 2048), L("l3", "all-linear", 8, 2048, ckpt=True),
        # inference prefill (+1 decode step), bf16, KV cache
        I("q05", 8), I("l1", 1), I("l1", 8), I("l3", 8), I("q15", 8), I("l3", 8, ltk=1),
        # eager attention
        T("q05", "amp", 1, 2048, attn="eager"), T("l1", "amp", 1, 2048, attn="eager"),
        T("q05", "amp", 4, 512, attn="eager"),
        # larger models, AMP
        T("q15", "amp", 1, 2048), T("q15", "amp", 4, 2048, ckpt=True), T("l3", "amp", 1, 2048),
        T("l3", "amp", 4, 2048, ckpt=True),
        # fused AdamW twins of foreach rows above
        T("l1", "amp", 1, 2048, ckpt=True, opt="fused"), T("q05", "amp", 4, 2048, opt="fused"),
    ]
    b = [
        T("q05", "amp", 4, 512), T("q05", "amp", 8, 512), T("q05", "amp", 1, 512, ckpt=True),
        T("q05", "amp", 8, 512, ckpt=True), T("q05", "amp", 4, 2048, ckpt=True),
        T("l1", "amp", 8, 2048), T("l1", "amp", 4, 2048, ckpt=True), T("l1", "amp", 1, 512), T("l1", "amp", 8, 512),
        T("q05", "pure-bf16", 1, 2048), T("q05", "pure-bf16", 8, 2048, ckpt=True), T("l1", "pure-bf16", 1, 2048),
        T("q15", "pure-bf16", 4, 2048), T("l3", "pure-bf16", 8, 2048, ckpt=True),
        L("q15", "all-linear", 1, 2048), L("q15", "qv", 1, 2048), L("l3", "qv", 1, 2048),
        L("q15", "all-linear", 8, 2048, ckpt=True),
        I("q05", 1), I("q15", 1), I("l3", 1), I("l1", 8, ltk=1), I("q3", 8),
        T("l1", "amp", 4, 512, attn="eager"), T("q15", "amp", 1, 2048, attn="eager"),
        T("q05", "pure-bf16", 1, 2048, attn="eager"),
        T("q15", "amp", 1, 2048, ckpt=True), T("q15", "amp", 4, 2048), T("l3", "amp", 8, 2048, ckpt=True),
        T("q3", "amp", 1, 2048, ckpt=True),
        T("l1", "pure-bf16", 1, 2048, ckpt=True, opt="fused"), T("l1", "pure-bf16", 1, 2048, ckpt=True),
        T("l3", "amp", 1, 2048, ckpt=True), T("l3", "amp", 1, 2048, ckpt=True, opt="fused"),
    ]
    for j in a:
        j["tier"] = 1
    for j in b:
        j["tier"] = 2
    grid = a + b
    ids = [j["id"] for j in grid]
    dup = [x for x, n in collections.Counter(ids).items() if n > 1]
    if dup:
        raise SystemExit(f"duplicate job ids: {dup}")
    return grid


def build_searches():
    """Largest micro batch that fits under an allocator cap that emulates a
    smaller card: cap = gpulint's capacity for that card minus the CUDA
    context measured here (the context lives outside the allocator)."""
    return [
        dict(name="search-l1-amp-s2048-A100-40GB", card="A100-40GB",
             base=T("l1", "amp", 1, 2048)),
        dict(name="search-q05-amp-s2048-ckpt-L4", card="L4",
             base=T("q05", "amp", 1, 2048, ckpt=True)),
    ]


# --------------------------------------------------------------------------
# Rough size of a setup, for scheduling only (conservative on purpose)
# --------------------------------------------------------------------------

def n_params(m):
    h, H, kv, hd, i = m["hidden"], m["heads"], m["kv_heads"], m["head_dim"], m["intermediate"]
    attn = h * H * hd + 2 * h * kv * hd + H * hd * h + ((H * hd + 2 * kv * hd) if m["qkv_bias"] else 0)
    per_layer = attn + 3 * h * i + 2 * h
    return m["vocab"] * h + m["layers"] * per_layer + h + (0 if m["tie"] else m["vocab"] * h)


def n_lora(m, targets, r=LORA_R):
    h, H, kv, hd, i = m["hidden"], m["heads"], m["kv_heads"], m["head_dim"], m["intermediate"]
    per = r * (h + H * hd) + r * (h + kv * hd)
    if targets == "all-linear":
        per += r * (h + kv * hd) + r * (H * hd + h) + 3 * r * (h + i)
    return m["layers"] * per


def rough_bytes(spec):
    m = MODELS[spec["model"]]
    P = n_params(m)
    h, H, kv, hd, i, V, Lr = (m["hidden"], m["heads"], m["kv_heads"], m["head_dim"], m["intermediate"],
                              m["vocab"], m["layers"])
    mb, s = spec["micro_batch"], spec["seq_len"]
    tok = mb * s
    if spec["workload"] == "inference":
        logits = 2 * (tok if not spec.get("logits_to_keep") else mb) * V + 4 * mb * V
        kvc = 2 * Lr * kv * hd * 2 * tok
        act = tok * (6 * i + 6 * h)
        return int(1.2 * (2 * P + logits + kvc + act) + 1.5 * GiB)
    if spec["workload"] == "lora":
        states = 2 * P + 20 * n_lora(m, spec["lora_targets"])
    elif spec["precision"] == "amp":
        states = 22 * P
    else:
        states = 10 * P
    per_tok_layer = 16 * h + 2 * (2 * H * hd + 2 * kv * hd) + 8 * i + 4 * H
    if spec["precision"] == "amp":
        per_tok_layer *= 1.25
    if spec["checkpointing"]:
        act = Lr * 2 * h * tok + per_tok_layer * tok
    else:
        act = Lr * per_tok_layer * tok
    if spec["attn"] == "eager":
        act += (1 if spec["checkpointing"] else Lr) * 8 * H * s * tok
    logits = 12 * tok * V
    return int(1.1 * (states + act + logits) + 1.5 * GiB)


# --------------------------------------------------------------------------
# gpulint restatement
# --------------------------------------------------------------------------

def gpulint_gpu(name, total_bytes):
    n = (name or "").upper()
    if "H200" in n:
        return "H200-NVL" if "NVL" in n else "H200"
    if "H100" in n:
        if "NVL" in n:
            return "H100-NVL"
        if "PCIE" in n:
            return "H100-PCIe"
        return "H100-80GB"
    if "A100" in n:
        big = total_bytes and total_bytes > 60 * GiB
        return ("A100-80GB" if big else "A100-40GB") + ("-PCIe" if "PCIE" in n else "")
    return name


def gpulint_restate(spec, gpu):
    """The `gpulint estimate` arguments for a row, and the inputs of the row
    that the CLI cannot express."""
    args = ["--model", spec["model"], "--gpu", gpu, "--workload", spec["workload"],
            "--precision", spec["precision"], "--micro-batch", str(spec["micro_batch"]),
            "--seq-len", str(spec["seq_len"])]
    if spec.get("checkpointing"):
        args.append("--checkpointing")
    if spec["workload"] == "lora":
        args += ["--lora-rank", str(LORA_R)]
    gaps = []
    if spec.get("attn") == "eager":
        gaps.append("attention=eager (the CLI assumes flash/SDPA)")
    if spec["workload"] == "lora" and spec.get("lora_targets") == "qv":
        gaps.append("lora targets q_proj,v_proj (the CLI adapts all seven projections)")
    if spec["workload"] == "lora":
        gaps.append("lora adapters fp32 under bf16 autocast (what the CLI assumes)")
    if spec.get("optimizer_impl") == "fused":
        gaps.append("AdamW fused=True (the CLI has no optimizer-implementation input)")
    elif spec.get("optimizer_impl") == "foreach":
        gaps.append("AdamW foreach=True (the CLI has no optimizer-implementation input)")
    if spec["workload"] == "inference" and spec.get("logits_to_keep"):
        gaps.append(f"logits_to_keep={spec['logits_to_keep']} (generate()-style prefill; the CLI counts all prompt logits)")
    if spec.get("cap_bytes"):
        gaps.append(f"allocator capped at {spec['cap_bytes']} bytes (emulating {spec.get('card')})")
    return args, gaps


# --------------------------------------------------------------------------
# Child: one setup in a fresh process
# --------------------------------------------------------------------------

_NVML = {}


def nvml_proc_used():
    """This process's device memory as the driver reports it (NVML)."""
    try:
        import pynvml
        if "h" not in _NVML:
            pynvml.nvmlInit()
            _NVML["h"] = pynvml.nvmlDeviceGetHandleByIndex(0)
            try:
                _NVML["driver"] = pynvml.nvmlSystemGetDriverVersion()
            except Exception:
                pass
        pid = os.getpid()
        for p in pynvml.nvmlDeviceGetComputeRunningProcesses(_NVML["h"]):
            if p.pid == pid:
                u = p.usedGpuMemory
                return int(u) if u is not None else None
        return None
    except Exception:
        return None


def mem_snapshot(torch):
    free, total = torch.cuda.mem_get_info()
    return dict(device_used=total - free, device_free=free, allocated=torch.cuda.memory_allocated(),
                reserved=torch.cuda.memory_reserved(), nvml_proc_used=nvml_proc_used())


def peaks(torch):
    return torch.cuda.max_memory_allocated(), torch.cuda.max_memory_reserved()


def build_model(spec, torch, res):
    import transformers
    m = MODELS[spec["model"]]
    common = dict(vocab_size=m["vocab"], hidden_size=m["hidden"], intermediate_size=m["intermediate"],
                  num_hidden_layers=m["layers"], num_attention_heads=m["heads"],
                  num_key_value_heads=m["kv_heads"], max_position_embeddings=m["max_pos"],
                  tie_word_embeddings=m["tie"])
    if m["arch"] == "llama":
        cfg = transformers.LlamaConfig(head_dim=m["head_dim"], **common)
    else:
        cfg = transformers.Qwen2Config(**common)
    dtype = torch.float32 if spec["precision"] == "amp" else torch.bfloat16
    how = None
    with torch.device("cuda"):
        for kw in ("dtype", "torch_dtype"):
            try:
                model = transformers.AutoModelForCausalLM.from_config(
                    cfg, attn_implementation=spec["attn"], **{kw: dtype})
                how = kw
                break
            except TypeError as e:
                res.setdefault("build_notes", []).append(f"from_config({kw}=...) TypeError: {e}")
        else:
            model = transformers.AutoModelForCausalLM.from_config(cfg, attn_implementation=spec["attn"])
            how = "none"
    res["build_dtype_kwarg"] = how
    p0 = next(model.parameters())
    if p0.device.type != "cuda":
        res.setdefault("build_notes", []).append(f"model built on {p0.device}; moved to cuda")
        model.to("cuda")
    if next(model.parameters()).dtype != dtype:
        res.setdefault("build_notes", []).append(f"model built in {next(model.parameters()).dtype}; cast")
        model.to(dtype)
    res["attn_impl_actual"] = getattr(model.config, "_attn_implementation", None)
    res["param_dtype"] = str(next(model.parameters()).dtype).replace("torch.", "")
    res["params_counted"] = sum(p.numel() for p in model.parameters())
    res["params_formula"] = n_params(m)
    return model


def enable_ckpt(model, res):
    try:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        res["ckpt_impl"] = "HF gradient_checkpointing_enable(use_reentrant=False)"
    except TypeError:
        model.gradient_checkpointing_enable()
        res["ckpt_impl"] = "HF gradient_checkpointing_enable() (library default)"


def child_context(spec, res):
    """CUDA context and the kernels/workspaces a training process loads
    before its first real tensor."""
    import torch
    stages = {}
    torch.cuda.init()
    stages["after_init"] = mem_snapshot(torch)
    x = torch.ones(1, device="cuda")
    torch.cuda.synchronize()
    stages["after_first_tensor"] = mem_snapshot(torch)
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    b = a @ a
    torch.cuda.synchronize()
    stages["after_bf16_matmul"] = mem_snapshot(torch)
    q = torch.randn(2, 8, 1024, 64, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    o = torch.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)
    o.sum().backward()
    torch.cuda.synchronize()
    stages["after_sdpa_fwd_bwd"] = mem_snapshot(torch)
    del x, a, b, q, o
    res["stages"] = stages
    res["status"] = "ok"


def child_main(spec):
    t0 = time.time()
    res = dict(id=spec["id"], status="error", pid=os.getpid())
    where = "import"
    torch = None
    try:
        import torch
        res["t_import_torch_s"] = round(time.time() - t0, 2)
        if not torch.cuda.is_available():
            raise RuntimeError("torch.cuda.is_available() is False")
        props = torch.cuda.get_device_properties(0)
        env = dict(gpu_name=props.name, gpu_total_memory=props.total_memory, cc=f"{props.major}.{props.minor}",
                   sm_count=props.multi_processor_count, torch=torch.__version__, cuda=torch.version.cuda,
                   python=sys.version.split()[0],
                   alloc_conf=os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""))
        if spec.get("cap_bytes"):
            frac = spec["cap_bytes"] / props.total_memory
            torch.cuda.set_per_process_memory_fraction(frac, 0)
            env["memory_fraction"] = frac
        where = "cuda init"
        torch.cuda.init()
        res["mem_after_init"] = mem_snapshot(torch)  # mem_get_info creates the context
        env["driver"] = _NVML.get("driver")
        res["env"] = env
        if spec["kind"] == "context":
            where = "context"
            child_context(spec, res)
            for mod in ("transformers", "peft", "accelerate"):
                try:
                    env[mod] = __import__(mod).__version__
                except Exception as e:
                    env[mod] = f"unavailable: {e}"
            return res
        where = "import transformers"
        t1 = time.time()
        import transformers
        env["transformers"] = transformers.__version__
        transformers.logging.set_verbosity_error()
        res["t_import_transformers_s"] = round(time.time() - t1, 2)
        torch.manual_seed(0)
        where = "build"
        t1 = time.time()
        model = build_model(spec, torch, res)
        wl = spec["workload"]
        if wl in ("train", "lora") and spec["checkpointing"]:
            enable_ckpt(model, res)
        if wl == "lora":
            import peft
            env["peft"] = peft.__version__
            targets = ["q_proj", "v_proj"] if spec["lora_targets"] == "qv" else "all-linear"
            lcfg = peft.LoraConfig(r=LORA_R, lora_alpha=LORA_ALPHA, lora_dropout=0.0, target_modules=targets,
                                   task_type="CAUSAL_LM")
            model = peft.get_peft_model(model, lcfg)
            tp = [p for p in model.parameters() if p.requires_grad]
            res["adapter_dtype"] = str(tp[0].dtype).replace("torch.", "") if tp else None
        trainable = [p for p in model.parameters() if p.requires_grad] if wl != "inference" else []
        res["trainable_params"] = sum(p.numel() for p in trainable)
        if wl == "lora":
            res["trainable_formula"] = n_lora(MODELS[spec["model"]], spec["lora_targets"])
        res["t_build_s"] = round(time.time() - t1, 2)
        V = MODELS[spec["model"]]["vocab"]
        mb, seq = spec["micro_batch"], spec["seq_len"]
        ids = torch.randint(0, V, (mb, seq), device="cuda")
        opt = None
        if wl != "inference":
            okw = dict(lr=1e-5, weight_decay=0.01)
            if spec["optimizer_impl"] == "fused":
                okw["fused"] = True
            elif spec["optimizer_impl"] == "foreach":
                okw["foreach"] = True
            opt = torch.optim.AdamW(trainable, **okw)
            res["optimizer_defaults"] = {k: opt.defaults.get(k) for k in ("foreach", "fused", "lr", "weight_decay",
                                                                            "eps", "betas")}
        import gc
        gc.collect()
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        res["mem_before_steps"] = mem_snapshot(torch)
        steps = []
        res["steps"] = steps
        t1 = time.time()
        if wl == "inference":
            model.eval()
            ltk = spec.get("logits_to_keep") or 0
            with torch.inference_mode():
                for step in range(spec["steps"]):
                    st = {}
                    where = f"prefill step {step}"
                    torch.cuda.reset_peak_memory_stats()
                    try:
                        out = model(input_ids=ids, use_cache=True, logits_to_keep=ltk)
                    except TypeError:
                        res["logits_to_keep_ignored"] = True
                        out = model(input_ids=ids, use_cache=True)
                    torch.cuda.synchronize()
                    st["prefill"] = peaks(torch)
                    nxt = out.logits[:, -1:, :].argmax(-1)
                    pkv = out.past_key_values
                    del out
                    where = f"decode step {step}"
                    torch.cuda.reset_peak_memory_stats()
                    out = model(input_ids=nxt, past_key_values=pkv, use_cache=True)
                    torch.cuda.synchronize()
                    st["decode"] = peaks(torch)
                    del out, pkv, nxt
                    steps.append(st)
        else:
            model.train()
            amp = spec["precision"] == "amp" or wl == "lora"
            res["autocast_bf16"] = amp
            import contextlib
            for step in range(spec["steps"]):
                st = {}
                where = f"forward step {step}"
                torch.cuda.reset_peak_memory_stats()
                with (torch.autocast("cuda", dtype=torch.bfloat16) if amp else contextlib.nullcontext()):
                    loss = model(input_ids=ids, labels=ids, use_cache=False).loss
                torch.cuda.synchronize()
                st["forward"] = peaks(torch)
                where = f"backward step {step}"
                torch.cuda.reset_peak_memory_stats()
                loss.backward()
                torch.cuda.synchronize()
                st["backward"] = peaks(torch)
                st["loss"] = float(loss.detach().float().item())
                del loss
                where = f"optimizer step {step}"
                torch.cuda.reset_peak_memory_stats()
                opt.step()
                opt.zero_grad(set_to_none=True)
                torch.cuda.synchronize()
                st["optimizer"] = peaks(torch)
                steps.append(st)
        res["t_steps_s"] = round(time.time() - t1, 2)
        where = "after steps"
        res["mem_after_steps"] = mem_snapshot(torch)
        summarize_steps(res)
        stats = torch.cuda.memory_stats()
        res["alloc_retries"] = stats.get("num_alloc_retries")
        res["status"] = "ok"
    except Exception as e:  # noqa: BLE001 - every failure becomes a row
        msg = f"{type(e).__name__}: {e}"
        is_oom = torch is not None and (isinstance(e, getattr(torch, "OutOfMemoryError", ())) or
                                        "out of memory" in str(e).lower())
        res["status"] = "oom" if is_oom else "error"
        res["error"] = msg[:1500]
        res["error_where"] = where
        if not is_oom:
            res["traceback"] = traceback.format_exc()[-4000:]
        if torch is not None:
            try:
                if "steps" in res:
                    summarize_steps(res)
                pa, pr = peaks(torch)
                res["at_failure"] = dict(max_allocated=pa, max_reserved=pr, **mem_snapshot(torch))
            except Exception:
                pass
    res["t_total_s"] = round(time.time() - t0, 2)
    return res


def summarize_steps(res):
    pa = pr = 0
    phase_peaks = {}
    for st in res.get("steps", []):
        for ph, v in st.items():
            if ph == "loss":
                continue
            a, r = v
            pa, pr = max(pa, a), max(pr, r)
            pp = phase_peaks.setdefault(ph, [0, 0])
            pp[0], pp[1] = max(pp[0], a), max(pp[1], r)
    res["peak_allocated"] = pa
    res["peak_reserved"] = pr
    res["phase_peaks"] = phase_peaks


# --------------------------------------------------------------------------
# Fake child, to test the scheduler without a GPU
# --------------------------------------------------------------------------

def fake_child(spec):
    import random
    rnd = random.Random(spec["id"])
    time.sleep(0.05 + rnd.random() * 0.3 + float(os.environ.get("FAKE_SLEEP", "0")))
    res = dict(id=spec["id"], status="ok", pid=os.getpid(),
               env=dict(gpu_name="FAKE H200", gpu_total_memory=int(139.8 * GiB), torch="fake"))
    if spec["kind"] == "context":
        res["stages"] = {"after_sdpa_fwd_bwd": dict(device_used=600 * MiB, reserved=40 * MiB, allocated=1 * MiB,
                                                      nvml_proc_used=None, device_free=0)}
        return res
    est = rough_bytes(spec) - int(1.5 * GiB)
    # one setup "runs out of memory" while sharing the GPU, to exercise the solo rerun
    if "q05-amp-mb8-s512" in spec["id"] and not spec.get("retry_of_contaminated"):
        res.update(status="oom", error="fake contaminated OOM", at_failure=dict(device_free=1 * GiB))
        return res
    if spec.get("cap_bytes") and est > spec["cap_bytes"]:
        res.update(status="oom", error="fake OOM", error_where="backward step 0",
                   at_failure=dict(device_free=100 * GiB))
        return res
    if "fail" in spec["id"]:
        res.update(status="error", error="fake error", traceback="Traceback: fake")
        return res
    res.update(peak_allocated=int(est * 0.8), peak_reserved=int(est * 0.85),
               mem_after_steps=dict(device_used=int(est * 0.9), nvml_proc_used=None, reserved=int(est * 0.85)))
    return res


# --------------------------------------------------------------------------
# Parent: scheduling, searches, output
# --------------------------------------------------------------------------

class Search:
    def __init__(self, d, max_mb=64):
        self.name, self.card, self.base = d["name"], d["card"], d["base"]
        self.capacity = EMULATED[self.card]
        self.cap = None  # allocator cap, set once the context is measured
        self.lo, self.hi, self.max_mb = 0, None, max_mb
        self.trials, self.in_flight, self.done, self.failed, self.written = [], False, False, None, False

    def next_mb(self):
        if self.done or self.in_flight or self.cap is None:
            return None
        if self.hi is None:
            mb = 1 if self.lo == 0 else self.lo * 2
            if mb > self.max_mb:
                self.done = True
                return None
            return mb
        if self.hi - self.lo <= 1:
            self.done = True
            return None
        return (self.lo + self.hi) // 2

    def trial_spec(self, mb):
        s = dict(self.base)
        s.update(micro_batch=mb, kind="search-trial", search=self.name, card=self.card, cap_bytes=self.cap,
                 id=f"{self.name}-mb{mb}")
        n = sum(1 for t in self.trials if t["micro_batch"] == mb)
        if n:
            s["id"] += f"-retry{n}"
        return s

    def record(self, mb, status, row_id):
        self.in_flight = False
        self.trials.append(dict(micro_batch=mb, status=status, id=row_id))
        if status == "ok":
            self.lo = max(self.lo, mb)
        elif status == "oom":
            self.hi = mb if self.hi is None else min(self.hi, mb)
        elif status == "retry":
            pass
        else:
            self.done, self.failed = True, status
        if self.hi is not None and self.hi - self.lo <= 1:
            self.done = True

    def summary(self):
        return dict(id=self.name, kind="search", status="ok" if not self.failed else "error",
                    card=self.card, capacity_bytes=self.capacity, cap_bytes=self.cap,
                    largest_fitting_micro_batch=self.lo, smallest_oom_micro_batch=self.hi,
                    complete=self.done and not self.failed, trials=self.trials,
                    spec={k: v for k, v in self.base.items() if k not in ("id", "kind")})


def nvidia_smi():
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,memory.total,memory.used,driver_version",
                              "--format=csv,noheader,nounits"], capture_output=True, text=True, timeout=30)
        name, total, used, drv = [x.strip() for x in out.stdout.strip().splitlines()[0].split(",")]
        return dict(name=name, total_mib=int(total), used_mib=int(used), driver=drv)
    except Exception as e:
        return dict(error=str(e))


TSV_COLS = ["id", "kind", "status", "model", "workload", "precision", "attn", "optimizer_impl", "micro_batch",
            "seq_len", "checkpointing", "lora_targets", "logits_to_keep", "cap_gib", "params", "trainable",
            "peak_allocated_gib", "peak_reserved_gib", "device_used_end_gib", "nvml_proc_end_gib",
            "concurrent_max", "seconds", "gpulint_args"]


def g(x):
    return "" if x is None else f"{x / GiB:.3f}"


def tsv_line(r):
    s = r.get("spec", {})
    end = r.get("mem_after_steps") or {}
    vals = dict(id=r["id"], kind=r.get("kind"), status=r.get("status"), model=s.get("model_id"),
                workload=s.get("workload"), precision=s.get("precision"), attn=s.get("attn"),
                optimizer_impl=s.get("optimizer_impl"), micro_batch=s.get("micro_batch"), seq_len=s.get("seq_len"),
                checkpointing=s.get("checkpointing"), lora_targets=s.get("lora_targets"),
                logits_to_keep=s.get("logits_to_keep"), cap_gib=g(s.get("cap_bytes")),
                params=r.get("params_counted"), trainable=r.get("trainable_params"),
                peak_allocated_gib=g(r.get("peak_allocated")), peak_reserved_gib=g(r.get("peak_reserved")),
                device_used_end_gib=g(end.get("device_used")), nvml_proc_end_gib=g(end.get("nvml_proc_used")),
                concurrent_max=r.get("concurrent_max"), seconds=r.get("wall_s"),
                gpulint_args=" ".join(r.get("gpulint_args") or []))
    return "\t".join("" if vals[c] is None else str(vals[c]) for c in TSV_COLS)


class Runner:
    def __init__(self, args):
        self.args = args
        self.t0 = time.time()
        self.out_path = args.out
        os.makedirs(os.path.dirname(os.path.abspath(self.out_path)) or ".", exist_ok=True)
        self.tsv_path = re.sub(r"\.jsonl$", "", self.out_path) + ".tsv"
        self.tmp = tempfile.mkdtemp(prefix="measure_memory_")
        self.rows = []
        self.running = {}  # Popen -> info
        self.smi = dict(name="FAKE H200", total_mib=143771, used_mib=0, driver="fake") if args.fake else nvidia_smi()
        total = self.smi.get("total_mib", 81559) * MiB
        self.budget_bytes = int(total * args.mem_frac) - self.smi.get("used_mib", 0) * MiB
        self.gpu = gpulint_gpu(self.smi.get("name"), total)
        self.context_done = False
        self.ctx_nontorch = None
        self.aborted = None
        open(self.out_path, "w").close()

    def elapsed(self):
        return time.time() - self.t0

    def log(self, msg):
        print(f"[{self.elapsed():6.1f}s] {msg}", flush=True)

    def write_row(self, row):
        self.rows.append(row)
        with open(self.out_path, "a") as f:
            f.write(json.dumps(row, sort_keys=True) + "\n")
        with open(self.tsv_path, "w") as f:
            f.write("\t".join(TSV_COLS) + "\n")
            for r in self.rows:
                f.write(tsv_line(r) + "\n")

    def launch(self, spec, solo=False):
        path = os.path.join(self.tmp, re.sub(r"[^A-Za-z0-9_.-]", "_", spec["id"]))
        cmd = [sys.executable, os.path.abspath(__file__), "--child", json.dumps(spec)]
        if self.args.fake:
            cmd.append("--fake")
        env = dict(os.environ, PYTHONUNBUFFERED="1", TOKENIZERS_PARALLELISM="false", HF_HUB_OFFLINE="1",
                   TRANSFORMERS_OFFLINE="1", TRANSFORMERS_VERBOSITY="error", OMP_NUM_THREADS="2")
        fo, fe = open(path + ".out", "w"), open(path + ".err", "w")
        p = subprocess.Popen(cmd, stdout=fo, stderr=fe, env=env, start_new_session=True)
        for info in self.running.values():
            info["concurrent_max"] = max(info["concurrent_max"], len(self.running))
        self.running[p] = dict(spec=spec, start=time.time(), path=path, files=(fo, fe),
                               est=rough_bytes(spec) if spec["kind"] != "context" else GiB,
                               concurrent_max=len(self.running), solo=solo)
        self.log(f"start {spec['id']} (running {len(self.running)}, est {rough_bytes(spec) / GiB:.1f} GiB)"
                 if spec["kind"] != "context" else f"start {spec['id']}")

    def kill(self, p):
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except Exception:
            pass
        p.wait()

    def reap(self):
        done = []
        now = time.time()
        for p, info in list(self.running.items()):
            rc = p.poll()
            if rc is None and now - info["start"] > self.args.job_timeout:
                self.kill(p)
                rc = "timeout"
            if rc is not None:
                done.append((p, info, rc))
        for p, info, rc in done:
            del self.running[p]
            for f in info["files"]:
                f.close()
            res = None
            out = open(info["path"] + ".out").read()
            err = open(info["path"] + ".err").read()
            for line in out.splitlines():
                if line.startswith("@@RESULT@@ "):
                    res = json.loads(line[len("@@RESULT@@ "):])
            if res is None:
                res = dict(id=info["spec"]["id"], status="timeout" if rc == "timeout" else "crash",
                           returncode=rc, stderr_tail=err[-3000:])
            elif res.get("status") == "error":
                res["stderr_tail"] = err[-2000:]
            res["wall_s"] = round(now - info["start"], 1)
            res["concurrent_max"] = info["concurrent_max"]
            yield info, res

    def finish_row(self, spec, res):
        row = dict(res)
        row["kind"] = spec["kind"]
        m = MODELS.get(spec.get("model") or "")
        sp = dict(spec)
        if m:
            sp["model_id"] = spec["model"]
            sp["model_dims"] = {k: v for k, v in m.items() if k != "short"}
            sp["model_dims_source"] = CATALOG_SRC
        row["spec"] = sp
        row["nvidia_smi"] = self.smi
        if spec["kind"] != "context":
            gpu = self.gpu
            args, gaps = gpulint_restate(spec, gpu)
            row["gpulint_args"] = args
            row["gpulint_cmd"] = "gpulint estimate " + " ".join(args) + " --format json"
            row["gpulint_gaps"] = gaps
            if spec["kind"] == "search-trial":
                a2, _ = gpulint_restate(dict(spec, cap_bytes=None), spec["card"])
                row["gpulint_args_emulated"] = a2
        return row

    def run(self, jobs, searches):
        a = self.args
        pending = collections.deque(jobs)
        retries = collections.deque()
        ctx_spec = dict(id="context", kind="context", model=None, workload=None, micro_batch=0, seq_len=0)
        finished_kinds = []
        self.log(f"GPU {self.smi}; gpulint --gpu {self.gpu}; memory budget {self.budget_bytes / GiB:.1f} GiB; "
                 f"{len(jobs)} setups + {len(searches)} searches; time budget {a.time_budget}s")
        self.launch(ctx_spec, solo=True)
        while True:
            for info, res in self.reap():
                spec = info["spec"]
                st = res.get("status")
                contaminated = st == "oom" and info["concurrent_max"] > 0 and not info["solo"]
                if spec["kind"] == "context":
                    self.context_done = True
                    stg = (res.get("stages") or {}).get("after_sdpa_fwd_bwd")
                    if stg:
                        base = self.smi.get("used_mib", 0) * MiB
                        self.ctx_nontorch = stg["device_used"] - stg["reserved"] - base
                        res["context_nontorch_bytes"] = self.ctx_nontorch
                    ctx = self.ctx_nontorch if self.ctx_nontorch and self.ctx_nontorch > 0 else 512 * MiB
                    for s in searches:
                        s.cap = s.capacity - ctx
                    self.log(f"context: {res.get('status')} non-torch {ctx / MiB:.0f} MiB; env {res.get('env')}")
                    if res.get("status") != "ok":
                        self.log(f"context failed: {res.get('error')} {res.get('traceback', '')}"
                                 f" {res.get('stderr_tail', '')}")
                if spec["kind"] == "search-trial":
                    srch = next(s for s in searches if s.name == spec["search"])
                    free = (res.get("at_failure") or {}).get("device_free", 0) or 0
                    # An OOM under the cap leaves the device's other memory free;
                    # one with little free memory was caused by other processes.
                    if st == "oom" and info["concurrent_max"] > 0 and free < 4 * GiB:
                        srch.record(spec["micro_batch"], "retry", res["id"])
                        res["status"] = "oom-contaminated"
                    else:
                        srch.record(spec["micro_batch"], st, res["id"])
                elif contaminated:
                    res["status"] = "oom-contaminated"
                    retries.append(dict(spec, retry_of_contaminated=True))
                if spec["kind"] in ("train", "lora", "inference") and res["status"] in ("ok", "oom", "error",
                                                                                       "crash"):
                    finished_kinds.append(res["status"])
                self.write_row(self.finish_row(spec, res))
                pa, pr = res.get("peak_allocated"), res.get("peak_reserved")
                self.log(f"done  {res['id']}: {res['status']} alloc {g(pa)} reserved {g(pr)} GiB "
                         f"({res.get('wall_s')}s, concurrent {info['concurrent_max']})"
                         + (f" -- {res.get('error', '')[:300]}" if res["status"] not in ("ok",) else ""))
                if res["status"] in ("error", "crash"):
                    self.log((res.get("traceback") or res.get("stderr_tail") or "")[-1500:])
                if spec["kind"] == "search-trial" and srch.done and not srch.written:
                    srch.written = True
                    self.write_row(srch.summary())
                    self.log(f"{srch.name}: largest fitting micro batch {srch.lo}, smallest OOM {srch.hi}")
            # fail fast: the first four setups all broke -> the script is wrong, stop
            if len(finished_kinds) >= 4 and all(s in ("error", "crash") for s in finished_kinds[:4]) \
                    and not self.aborted:
                self.aborted = "first four setups failed with errors; stopping"
                self.log(self.aborted)
                pending.clear()
                retries.clear()
                for s in searches:
                    s.done = True
            if self.elapsed() > a.time_budget:
                for p, info in list(self.running.items()):
                    self.kill(p)
                    for f in info["files"]:
                        f.close()
                    spec = info["spec"]
                    self.write_row(self.finish_row(spec, dict(id=spec["id"], status="killed-time-budget",
                                                              wall_s=round(time.time() - info["start"], 1))))
                    self.log(f"killed {spec['id']} at the time budget")
                self.running.clear()
                break
            self.schedule(pending, retries, searches)
            if not self.running and not pending and not retries and all(s.done for s in searches):
                break
            if not self.running and self.elapsed() > a.time_budget - a.min_job_s:
                break
            time.sleep(0.1)
        for s in searches:
            if not s.written and s.trials:
                self.write_row(dict(s.summary(), complete=False, status="incomplete"))
        left = [j["id"] for j in pending] + [j["id"] for j in retries]
        if left:
            self.log(f"not run (time budget): {len(left)}: {' '.join(left)}")
        self.print_summary()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def schedule(self, pending, retries, searches):
        a = self.args
        if not self.context_done or any(i["solo"] for i in self.running.values()):
            return
        if self.elapsed() > a.time_budget - a.min_job_s:
            return
        while len(self.running) < a.workers:
            used = sum(i["est"] for i in self.running.values())
            cands = []
            for s in searches:
                mb = s.next_mb()
                if mb is not None:
                    cands.append(("search", s, s.trial_spec(mb)))
            for k, spec in enumerate(list(pending)[:8]):
                cands.append(("pending", k, spec))
            picked = None
            for src, ref, spec in cands:
                est = rough_bytes(spec)
                if src == "search":
                    est = min(est, spec["cap_bytes"] + GiB)  # the cap bounds the process
                if not self.running or used + est <= self.budget_bytes:
                    picked = (src, ref, spec)
                    break
            if picked is None:
                if not pending and retries and not self.running and all(s.done or s.in_flight
                                                                         for s in searches):
                    spec = retries.popleft()
                    self.launch(spec, solo=True)
                return
            src, ref, spec = picked
            if src == "search":
                ref.in_flight = True
            else:
                del pending[ref]
            self.launch(spec)

    def print_summary(self):
        print("\n# summary: id | status | peak allocated GiB | peak reserved GiB | nvml/device GiB | s")
        for r in self.rows:
            if r.get("kind") == "search":
                print(f"{r['id']} | search | largest fitting mb {r.get('largest_fitting_micro_batch')} | "
                      f"smallest oom {r.get('smallest_oom_micro_batch')} | cap {g(r.get('cap_bytes'))} GiB")
                continue
            end = r.get("mem_after_steps") or {}
            print(f"{r['id']} | {r.get('status')} | {g(r.get('peak_allocated'))} | {g(r.get('peak_reserved'))}"
                  f" | {g(end.get('nvml_proc_used'))}/{g(end.get('device_used'))} | {r.get('wall_s')}")
        n = collections.Counter(r.get("status") for r in self.rows)
        print(f"# rows {len(self.rows)}: {dict(n)}; elapsed {self.elapsed():.0f}s; aborted: {self.aborted}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(os.environ.get("OUT", "."), "results.jsonl"),
                    help="JSONL output (a .tsv summary is written beside it); default $OUT/results.jsonl")
    ap.add_argument("--time-budget", type=float, default=380, help="seconds; no job starts after "
                    "budget - --min-job-s, and jobs still running at the budget are killed (default 380)")
    ap.add_argument("--min-job-s", type=float, default=20)
    ap.add_argument("--job-timeout", type=float, default=150, help="seconds per setup (default 150)")
    ap.add_argument("--workers", type=int, default=4, help="setups at once on the GPU (default 4)")
    ap.add_argument("--mem-frac", type=float, default=0.9,
                    help="fraction of device memory the concurrent setups' rough sizes may add up to")
    ap.add_argument("--only", help="regex on setup ids")
    ap.add_argument("--tier", type=int, default=2, help="run tiers up to this (1: first pass only)")
    ap.add_argument("--no-search", action="store_true")
    ap.add_argument("--list", action="store_true", help="print the grid and exit")
    ap.add_argument("--fake", action="store_true", help="fake children (no GPU), to test scheduling")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        spec = json.loads(a.child)
        res = fake_child(spec) if a.fake else child_main(spec)
        sys.stdout.write("@@RESULT@@ " + json.dumps(res) + "\n")
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
    jobs = [j for j in build_grid() if j["tier"] <= a.tier]
    if a.only:
        jobs = [j for j in jobs if re.search(a.only, j["id"])]
    searches = [] if a.no_search else [Search(d) for d in build_searches()]
    if a.only:
        searches = [s for s in searches if re.search(a.only, s.name)]
    if a.list:
        for j in jobs:
            print(f"{j['id']:45s} tier {j['tier']} rough {rough_bytes(j) / GiB:6.1f} GiB")
        for s in searches:
            print(f"{s.name:45s} search, capacity {s.capacity / GiB:.2f} GiB")
        print(f"{len(jobs)} setups, {len(searches)} searches")
        return
    Runner(a).run(jobs, searches)


if __name__ == "__main__":
    main()
