#!/usr/bin/env python3
"""Runs one dsplan CLI test; ctest calls it once per case (tests/cli/CMakeLists.txt).

  run_cli_test.py --dsplan BIN golden CASE.json   args -> JSON, compared with "expect" within
                                                 tolerances (cli_harness.compare)
  run_cli_test.py --dsplan BIN error CASE.json    bad input: exit 2, message substrings, empty
                                                 stdout, no crash text, no output folder
  run_cli_test.py --dsplan BIN out                estimate --out DIR on good input: plan.json and
                                                 one folder per fitting config whose ds_config
                                                 batch sizes agree with the prediction
  run_cli_test.py --dsplan BIN properties         monotonicity properties of gpt-2.7b's memory
                                                 and the table/--json count agreement
Exit status 0 = pass, 1 = fail (every problem is printed).
"""
import argparse
import json
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cli_harness as h  # noqa: E402


def golden(dsplan, src, case_path):
    case = h.load_case(case_path)
    doc, problems = h.run_json_case(dsplan, case["args"], src)
    if doc is not None:
        problems += h.compare(case["expect"], doc, case.get("tolerance"), case.get("ignore"))
    for check in case.get("checks", []):  # structural facts the case exists to show
        problems += contract_check(check, doc)
    if problems:
        problems.append("if the change is intended, regenerate with: tests/cli/update_golden.py %s"
                        % os.path.splitext(os.path.basename(case_path))[0])
    return problems


def contract_check(check, doc):
    """Named checks a golden case can ask for on top of the comparison."""
    if doc is None:
        return []
    configs = doc.get("configs", [])
    if check == "pinned_fits" or check == "pinned_does_not_fit":
        want = check == "pinned_fits"
        if len(configs) != 1:
            return ["%s: configs must hold exactly the pinned config, has %d" % (check, len(configs))]
        c = configs[0]
        out = [] if c["fits"] is want else ["%s: fits is %r" % (check, c["fits"])]
        if want and c["reasons"]:
            out.append("%s: a fitting config has reasons %r" % (check, c["reasons"]))
        if not want and not c["reasons"]:
            out.append("%s: a config that does not fit must say why (reasons is empty)" % check)
        return out
    if check == "all_includes_unfit":
        if not any(not c["fits"] for c in configs):
            return ["--all: no config that does not fit was listed"]
        return ["--all: unfit config %d has no reasons" % i for i, c in enumerate(configs)
                if not c["fits"] and not c["reasons"]]
    if check == "global_batch_fixed":
        gb = {c["global_batch"] for c in configs}
        bad = [i for i, c in enumerate(configs)
               if c["micro_batch"] * c["grad_accum"] * c["dp"] != c["global_batch"]]
        return (["--global-batch: configs have global batches %s" % sorted(gb)] if len(gb) != 1 else []) + \
               ["config %d: micro x gas x dp != global_batch" % i for i in bad]
    if check == "best_first_latency":
        steps = [c["time"]["step_s"] for c in configs if c["fits"]]
        return [] if steps == sorted(steps) else ["--metric latency: step_s not ascending: %s" % steps]
    if check == "best_first_throughput":
        rates = [c["throughput"]["samples_per_s"] for c in configs if c["fits"]]
        return [] if rates == sorted(rates, reverse=True) else ["samples/s not descending: %s" % rates]
    if check == "megatron_stages_not_offered":
        # Megatron has no ZeRO-2 (Megatron-FSDP's optim_grads is not modelled): that stage is
        # null (not offered), not 0 (nothing fits); the offered stages (0, 1 and 3, the
        # distributed optimizer and Megatron-FSDP) carry a whole number.
        m = doc.get("search", {}).get("max_micro_batch", {})
        out = ["max_micro_batch.%s is %r, want null" % (k, m.get(k, "missing")) for k in ("zero2",)
               if m.get(k, "missing") is not None]
        return out + ["max_micro_batch.%s is %r, want an integer > 0" % (k, m.get(k))
                      for k in ("zero0", "zero1", "zero3") if not isinstance(m.get(k), int) or m.get(k) <= 0]
    if check == "cross_entropy_jit_fused":
        # --cross-entropy jit-fused reaches every config and is stated once in the assumptions.
        bad = [i for i, c in enumerate(configs) if c.get("cross_entropy") != "jit-fused"]
        notes = [a for a in doc.get("assumptions", []) if "jit-fused cross-entropy" in a]
        return ["config %d lacks cross_entropy jit-fused" % i for i in bad] + \
            ([] if len(notes) == 1 else ["want one jit-fused assumption, got %d" % len(notes)])
    if check == "fp8_linears":
        # --precision fp8 reaches every config (written back as "fp8", which a plan reads as
        # bf16 + FP8 linears) and is stated once in the assumptions.
        bad = [i for i, c in enumerate(configs)
               if c.get("precision") != "fp8" or c.get("fp8_recipe") not in ("delayed", "tensorwise", "mxfp8")]
        notes = [a for a in doc.get("assumptions", []) if a.startswith("fp8: Transformer Engine")]
        return ["config %d has precision %r, fp8_recipe %r" % (i, configs[i].get("precision"),
                                                               configs[i].get("fp8_recipe")) for i in bad] + \
            ([] if len(notes) == 1 else ["want one fp8 assumption, got %d" % len(notes)])
    if check == "tf32":
        # --precision tf32 reaches every config (written back as "tf32", which a plan reads as
        # fp32 + TF32 matmuls), is stated once, and its MFU is against the TF32 peak: fp32's
        # vector peak would put it above 1.
        bad = [i for i, c in enumerate(configs)
               if c.get("precision") != "tf32" or not 0 < c["throughput"]["mfu"] < 1]
        notes = [a for a in doc.get("assumptions", []) if a.startswith("tf32: fp32 weights")]
        return ["config %d: precision %r, mfu %r" % (i, configs[i].get("precision"),
                                                     configs[i]["throughput"]["mfu"]) for i in bad] + \
            ([] if len(notes) == 1 else ["want one tf32 assumption, got %d" % len(notes)])
    if check == "pure16":
        # --precision bf16-pure reaches every config (written back as "bf16-pure"), under DDP or
        # FSDP, stated once; Adam's states cost 8 B/param (2 + 2 + 4), not mixed precision's 16.
        bad = [i for i, c in enumerate(configs)
               if c.get("precision") != "bf16-pure" or c["framework"] not in ("ddp", "fsdp")]
        notes = [a for a in doc.get("assumptions", []) if a.startswith("bf16-pure: the model cast")]
        return ["config %d: precision %r, framework %r" % (i, configs[i].get("precision"),
                                                          configs[i]["framework"]) for i in bad] + \
            ([] if len(notes) == 1 else ["want one bf16-pure assumption, got %d" % len(notes)])
    if check == "context_parallel":
        # --cp 2 reaches every config: cp 2, flash on, one GPU count tp x pp x cp x dp for
        # all of them, and the assumption stated once.
        sizes = {c["tp"] * c["pp"] * c.get("cp", 1) * c["dp"] for c in configs}
        bad = [i for i, c in enumerate(configs) if c.get("cp") != 2 or not c.get("flash_attention")]
        if len(sizes) > 1:
            return ["configs span GPU counts %s" % sorted(sizes)]
        notes = [a for a in doc.get("assumptions", []) if a.startswith("context parallelism 2")]
        return ["config %d: cp %r, flash %r, layout tp%d pp%d dp%d" %
                (i, configs[i].get("cp"), configs[i].get("flash_attention"), configs[i]["tp"],
                 configs[i]["pp"], configs[i]["dp"]) for i in bad] + \
            ([] if len(notes) == 1 else ["want one context-parallelism assumption, got %d" % len(notes)])
    if check == "moe":
        # A mixture-of-experts plan: Megatron, every config's ep divides the model's experts and
        # tp x cp x dp (no extra GPUs: tp x pp x cp x dp is the GPU count), sequence parallel
        # when tp > 1, and the Megatron-Core assumption stated once.
        experts = doc["model"].get("experts", 0)
        sizes = {c["tp"] * c["pp"] * c.get("cp", 1) * c["dp"] for c in configs}
        bad = [i for i, c in enumerate(configs)
               if c["framework"] != "megatron" or experts % c.get("ep", 1) != 0
               or (c["tp"] * c.get("cp", 1) * c["dp"]) % c.get("ep", 1) != 0
               or (c["tp"] > 1 and not c["sequence_parallel"])]
        notes = [a for a in doc.get("assumptions", []) if a.startswith("mixture of experts: Megatron-Core")]
        return (["model has no experts"] if experts <= 0 else []) + \
            (["configs span GPU counts %s" % sorted(sizes)] if len(sizes) > 1 else []) + \
            ["config %d breaks an expert-parallel rule: %r" % (i, {k: configs[i].get(k) for k in
             ("framework", "tp", "dp", "ep", "sequence_parallel")}) for i in bad] + \
            ([] if len(notes) == 1 else ["want one MoE assumption, got %d" % len(notes)])
    if check == "blackwell":
        # A B200 plan: the Blackwell preset, its borrowed kernel efficiencies stated once,
        # Megatron's flash configs on Transformer Engine's cuDNN attention stated once, and
        # every fitting config quoting a Blackwell evidence band (docs/model.md §2 "B200").
        arch = doc.get("hardware", {}).get("gpu", {}).get("arch")
        borrowed = [a for a in doc.get("assumptions", []) if "Hopper's kernel efficiencies" in a]
        cudnn = [a for a in doc.get("assumptions", []) if a.startswith("flash attention on Blackwell")]
        bad = [i for i, c in enumerate(configs)
               if c["fits"] and not c.get("evidence", {}).get("regime", "").startswith("blackwell")]
        return (["hardware arch is %r, want blackwell" % arch] if arch != "blackwell" else []) + \
            ([] if len(borrowed) == 1 else ["want one borrowed-efficiency assumption, got %d" % len(borrowed)]) + \
            ([] if len(cudnn) == 1 else ["want one Blackwell attention assumption, got %d" % len(cudnn)]) + \
            ["config %d quotes no Blackwell evidence band" % i for i in bad]
    if check == "mxfp8":
        # --fp8-recipe mxfp8 on Blackwell: every config carries the recipe, and the one fp8
        # assumption names MXFP8's scales.
        bad = [i for i, c in enumerate(configs) if c.get("fp8_recipe") != "mxfp8"]
        notes = [a for a in doc.get("assumptions", []) if a.startswith("fp8: Transformer Engine's MXFP8")]
        return ["config %d has fp8_recipe %r" % (i, configs[i].get("fp8_recipe")) for i in bad] + \
            ([] if len(notes) == 1 else ["want one MXFP8 assumption, got %d" % len(notes)])
    if check == "nvfp4":
        # --precision nvfp4 on Blackwell: every config is written back as precision "nvfp4"
        # (which a plan reads as bf16 + NVFP4 linears) with no FP8 recipe, the one NVFP4
        # assumption is stated, and the GPU's FP4 peak is in the hardware.
        bad = [i for i, c in enumerate(configs) if c.get("precision") != "nvfp4" or "fp8_recipe" in c]
        notes = [a for a in doc.get("assumptions", []) if a.startswith("nvfp4: Transformer Engine's NVFP4")]
        fp4 = doc.get("hardware", {}).get("gpu", {}).get("fp4_tc_flop_per_clk_sm", 0)
        return ["config %d has precision %r, fp8_recipe %r" % (i, configs[i].get("precision"),
                                                               configs[i].get("fp8_recipe")) for i in bad] + \
            ([] if len(notes) == 1 else ["want one NVFP4 assumption, got %d" % len(notes)]) + \
            ([] if fp4 > 0 else ["hardware.gpu.fp4_tc_flop_per_clk_sm is %r" % fp4])
    if check == "nvl72_racks":
        # A GB200 (or GB300) NVL72 plan: the node is the 72-GPU rack (its NVLink domain), the
        # hardware line counts racks, and every config spans whole racks only through its data-
        # or pipeline-parallel groups: tp x cp (the groups that talk every layer) stays in a rack.
        hw = doc.get("hardware", {})
        racks = [a for a in doc.get("assumptions", []) if a.startswith("hardware: ") and "-nvl72" in a]
        bad = [i for i, c in enumerate(configs) if 72 % (c["tp"] * c.get("cp", 1)) != 0]
        return (["gpus_per_node is %r, want 72" % hw.get("gpus_per_node")] if hw.get("gpus_per_node") != 72
                else []) + \
            ([] if len(racks) == 1 else ["want one NVL72 hardware line, got %d" % len(racks)]) + \
            ["config %d: tp x cp = %d does not divide a rack" % (i, configs[i]["tp"] * configs[i].get("cp", 1))
             for i in bad]
    if check == "attention_sinks":
        # gpt-oss: the model carries its sinks, the plan says once how they train, and every
        # flash config runs the one kernel that trains them (Transformer Engine's cuDNN
        # attention, which Megatron's auto picks).
        notes = [a for a in doc.get("assumptions", []) if a.startswith("attention sinks")]
        bad = [i for i, c in enumerate(configs)
               if c.get("flash_attention") and (c["framework"] != "megatron" or
                                                c.get("attention", "auto") not in ("auto", "cudnn"))]
        return (["model has no attention_sinks"] if not doc["model"].get("attention_sinks") else []) + \
            ([] if len(notes) == 1 else ["want one attention-sinks assumption, got %d" % len(notes)]) + \
            ["config %d runs flash with kernel %r" % (i, configs[i].get("attention")) for i in bad] + \
            (["no flash config"] if not any(c.get("flash_attention") for c in configs) else [])
    if check == "accounted_split":
        # 126 layers divide over none of the pp offered (8, 16) but 128 units do: every config
        # counts the embedding and the loss as layers, its GPUs tp x pp x dp.
        bad = [i for i, c in enumerate(configs)
               if c.get("pp_split") != "embedding+loss" or c["tp"] * c["pp"] * c["dp"] != 1024]
        return (["no configs"] if not configs else []) + \
            ["config %d: pp %d, pp_split %r" % (i, configs[i]["pp"], configs[i].get("pp_split")) for i in bad]
    if check == "cp_searched":
        # --cp 1,2,4 is a search dimension: the ranking mixes degrees, one GPU count for all.
        cps = {c.get("cp", 1) for c in configs}
        sizes = {c["tp"] * c["pp"] * c.get("cp", 1) * c["dp"] for c in configs}
        return ([] if len(cps) >= 2 else ["want configs of at least two cp degrees, got %s" % sorted(cps)]) + \
            ([] if len(sizes) == 1 else ["configs span GPU counts %s" % sorted(sizes)])
    if check == "host_bound_note":
        # The best config's step is set by the host (the profile's 33.6 us per kernel), and
        # the assumptions say so with that rate; its step is well above the GPU work it names.
        notes = [a for a in doc.get("assumptions", []) if a.startswith("host-bound:")]
        if len(notes) != 1:
            return ["want one host-bound note, got %d: %s" % (len(notes), doc.get("assumptions"))]
        m = re.search(r"step is ([0-9.]+) ms .* at ([0-9.]+) us each .* against ([0-9.]+) ms of GPU work",
                      notes[0])
        if not m or float(m.group(2)) < 30 or float(m.group(1)) < 1.1 * float(m.group(3)):
            return ["host-bound note lacks the step, the profile's rate or the GPU work: %s" % notes[0]]
        step = configs[0]["time"]["step_s"] * 1e3 if configs else 0
        return [] if abs(step - float(m.group(1))) < 0.1 else \
            ["host-bound note says %s ms, the best config's step_s is %.1f ms" % (m.group(1), step)]
    return ["unknown check %r in the case file" % check]


def error(dsplan, src, case_path):
    case = h.load_case(case_path)
    problems = []
    with tempfile.TemporaryDirectory(prefix="dsplan-cli-") as tmp:
        for pre in case.get("create", []):  # files or folders that must exist beforehand
            p = h.expand([pre], src, tmp)[0]
            os.makedirs(p, exist_ok=True)
        before = sorted(os.listdir(tmp))
        code, out, err = h.run_dsplan(dsplan, case["args"], src, tmp)
        want = case.get("exit", 2)
        if code != want:
            problems.append("exit status %d, expected %d" % (code, want))
        for s in case["stderr"]:
            if s not in err:
                problems.append("stderr lacks %r" % s)
        for s in case.get("stderr_absent", []):  # e.g. a third-party library's internals
            if s in err:
                problems.append("stderr contains %r" % s)
        n_errors = len(re.findall(r"^dsplan: error:", err, re.M))
        if n_errors != case.get("errors", 1):
            problems.append("%d 'dsplan: error:' lines, expected %d" % (n_errors, case.get("errors", 1)))
        if out.strip():
            problems.append("stdout must be empty on bad input, got:\n" + out[:1000])
        problems += ["stderr contains %r" % m for m in h.crash_markers(err)]
        for path in case.get("absent", []):  # e.g. the --out folder
            p = h.expand([path], src, tmp)[0]
            if os.path.exists(p):
                problems.append("%s was created" % path)
        after = sorted(os.listdir(tmp))
        if after != before:
            problems.append("files appeared in the working folder: %s" % sorted(set(after) - set(before)))
        if problems:
            problems.append("stderr was:\n" + err)
    return problems


def out_folder(dsplan, src):
    """--out on good input, then --out into a folder that is not a dsplan folder."""
    problems = []
    with tempfile.TemporaryDirectory(prefix="dsplan-cli-") as tmp:
        # A fixed global batch, so gradient accumulation > 1 shows in the product checked below.
        args = ["estimate", "--model", "gpt-2.7b", "--gpus", "16", "--global-batch", "256", "--top", "4",
                "--out", "{tmp}/plan"]
        code, out, err = h.run_dsplan(dsplan, args, src, tmp)
        if code != 0:
            return ["estimate --out exit status %d: %s" % (code, err)]
        d = os.path.join(tmp, "plan")
        if sorted(os.listdir(tmp)) != ["plan"]:
            problems.append("--out left other files beside the folder: %s" % os.listdir(tmp))
        with open(os.path.join(d, "plan.json")) as f:
            plan = json.load(f)
        fitting = [c for c in plan["configs"] if c["fits"]]
        folders = sorted(e for e in os.listdir(d) if os.path.isdir(os.path.join(d, e)))
        if len(folders) != len(fitting) or not folders:
            problems.append("%d config folders for %d fitting configs" % (len(folders), len(fitting)))
        for name in folders:
            problems += check_config_folder(os.path.join(d, name), name, 256)
        if not any(c["grad_accum"] > 1 for c in fitting):
            problems.append("no top config accumulates gradients; the batch check is weaker than meant")
        # Rewriting a dsplan --out folder is allowed; a foreign non-empty folder is refused and kept.
        # The half-written temporary folder of a run killed while writing (its pid is past
        # pid_max, so no such process lives) is removed on the way.
        stale = os.path.join(tmp, ".dsplan-tmp-99999999")
        os.makedirs(os.path.join(stale, "1_partial"))
        code, _, err = h.run_dsplan(dsplan, args, src, tmp)
        if code != 0:
            problems.append("rewriting an earlier --out folder failed: " + err)
        if os.path.exists(stale):
            problems.append("--out left a killed run's temporary folder in place: " + stale)
        foreign = os.path.join(tmp, "foreign")
        os.makedirs(foreign)
        with open(os.path.join(foreign, "keep.txt"), "w") as f:
            f.write("user data\n")
        code, out, err = h.run_dsplan(dsplan, args[:-1] + ["{tmp}/foreign"], src, tmp)
        if code != 2 or "--out" not in err and "output folder" not in err:
            problems.append("--out into a foreign folder: exit %d, stderr %r" % (code, err))
        if os.listdir(foreign) != ["keep.txt"]:
            problems.append("--out into a foreign folder changed it: %s" % os.listdir(foreign))
        # A folder that merely holds a file named plan.json is not a dsplan folder either: the
        # user's other files must survive (an earlier check looked for plan.json alone).
        lookalike = os.path.join(tmp, "lookalike")
        os.makedirs(os.path.join(lookalike, "src"))
        open(os.path.join(lookalike, "plan.json"), "w").close()
        with open(os.path.join(lookalike, "src", "main.py"), "w") as f:
            f.write("user code\n")
        code, _, err = h.run_dsplan(dsplan, args[:-1] + ["{tmp}/lookalike"], src, tmp)
        if code != 2 or not os.path.isfile(os.path.join(lookalike, "src", "main.py")):
            problems.append("--out into a folder with an empty plan.json and user files: exit %d, %s left; %r"
                            % (code, sorted(os.listdir(lookalike)), err))
        # Nor is one whose plan.json merely has an estimate document's top-level keys, nor a
        # symbolic link (it would be replaced by a real folder).
        keys_only = os.path.join(tmp, "keys_only")
        os.makedirs(keys_only)
        with open(os.path.join(keys_only, "plan.json"), "w") as f:
            f.write('{"model": 1, "configs": 1, "search": 1, "mine": "precious"}')
        code, _, err = h.run_dsplan(dsplan, args[:-1] + ["{tmp}/keys_only"], src, tmp)
        with open(os.path.join(keys_only, "plan.json")) as f:
            kept = "precious" in f.read()
        if code != 2 or not kept:
            problems.append("--out over a look-alike plan.json: exit %d, kept %s; %r" % (code, kept, err))
        os.symlink("plan", os.path.join(tmp, "link"))
        code, _, err = h.run_dsplan(dsplan, args[:-1] + ["{tmp}/link"], src, tmp)
        if code != 2 or not os.path.islink(os.path.join(tmp, "link")):
            problems.append("--out naming a symbolic link: exit %d; %r" % (code, err))
        # A file the user added to an earlier --out folder stops the rewrite, and is kept.
        added = os.path.join(d, "my_notes.txt")
        with open(added, "w") as f:
            f.write("mine\n")
        code, _, err = h.run_dsplan(dsplan, args, src, tmp)
        if code != 2 or not os.path.isfile(added):
            problems.append("--out over an earlier folder holding a user file: exit %d; %r" % (code, err))
        if os.path.exists(added):
            os.remove(added)
        # A trailing separator names the same folder; the working folder cannot be the target.
        code, _, err = h.run_dsplan(dsplan, args[:-1] + ["{tmp}/plan/"], src, tmp)
        if code != 0 or not os.path.isfile(os.path.join(d, "plan.json")):
            problems.append("--out DIR/ over an earlier folder: exit %d; %r" % (code, err))
        for bad in ["", "."]:
            code, out, err = h.run_dsplan(dsplan, args[:-1] + [bad], src, tmp)
            if code != 2 or out.strip():
                problems.append("--out %r: exit %d, stdout %r, stderr %r" % (bad, code, out[:80], err))
        leftovers = [e for e in os.listdir(tmp) if "tmp" in e or "old" in e]
        if leftovers:
            problems.append("temporary folders left behind: %s" % leftovers)
    return problems


def check_config_folder(folder, name, global_batch):
    problems = []
    for f in ["ds_config.json", "launch.sh", "megatron_args.txt", "prediction.json"]:
        if not os.path.isfile(os.path.join(folder, f)):
            problems.append("%s: %s missing" % (name, f))
    if problems:
        return problems
    with open(os.path.join(folder, "ds_config.json")) as f:
        ds = json.load(f)
    with open(os.path.join(folder, "prediction.json")) as f:
        pred = json.load(f)
    mbs, gas = ds["train_micro_batch_size_per_gpu"], ds["gradient_accumulation_steps"]
    dp = pred["dp"]
    if ds["train_batch_size"] != mbs * gas * dp:
        problems.append("%s: train_batch_size %d != micro %d x gas %d x dp %d"
                        % (name, ds["train_batch_size"], mbs, gas, dp))
    if ds["train_batch_size"] != global_batch:
        problems.append("%s: train_batch_size %d, --global-batch was %d" % (name, ds["train_batch_size"], global_batch))
    if (mbs, gas, ds["train_batch_size"]) != (pred["micro_batch"], pred["grad_accum"], pred["global_batch"]):
        problems.append("%s: ds_config batch sizes disagree with prediction.json" % name)
    stage = ds.get("zero_optimization", {}).get("stage", 0)
    if stage != pred["zero_stage"]:
        problems.append("%s: ds_config ZeRO stage %r, predicted config %r" % (name, stage, pred["zero_stage"]))
    return problems


def properties(dsplan, src):
    """Physical properties of the memory model seen through the CLI, for gpt-2.7b on 16 A100s."""
    problems = []
    base = ["estimate", "--model", "gpt-2.7b", "--gpus", "16", "--json", "--all", "--top", "100",
            "--tp", "1", "--pp", "1", "--vpp", "1", "--gas", "1", "--sp", "off", "--offload", "none"]

    def configs(extra):
        doc, errs = h.run_json_case(dsplan, base + extra, src)
        problems.extend(errs)
        return doc["configs"] if doc else []

    def device(c):
        return c["memory"]["device_gib"]

    # Memory grows with the micro-batch, all else equal (activations scale with it).
    by_mbs = sorted(configs(["--zero", "1", "--ckpt", "none", "--flash", "on", "--mbs", "1,2,4,8"]),
                    key=lambda c: c["micro_batch"])
    if [c["micro_batch"] for c in by_mbs] != [1, 2, 4, 8]:
        problems.append("micro-batch sweep returned %s" % [c["micro_batch"] for c in by_mbs])
    for a, b in zip(by_mbs, by_mbs[1:]):
        if not (device(b) > device(a) and b["memory"]["breakdown"]["activations_gib"]
                > a["memory"]["breakdown"]["activations_gib"]):
            problems.append("memory does not grow from mbs %d (%.2f GiB) to mbs %d (%.2f GiB)"
                            % (a["micro_batch"], device(a), b["micro_batch"], device(b)))
    # ZeRO-3 partitions parameters, gradients and optimizer states: less memory than ZeRO-0.
    by_zero = {c["zero_stage"]: c for c in configs(["--zero", "0,3", "--ckpt", "none", "--flash", "on",
                                                    "--mbs", "2"])}
    if set(by_zero) != {0, 3}:
        problems.append("ZeRO sweep returned stages %s" % sorted(by_zero))
    elif not device(by_zero[3]) < device(by_zero[0]):
        problems.append("ZeRO-3 (%.2f GiB) not below ZeRO-0 (%.2f GiB)" % (device(by_zero[3]), device(by_zero[0])))
    else:
        z0, z3 = by_zero[0]["memory"]["breakdown"], by_zero[3]["memory"]["breakdown"]
        if not z3["grads_gib"] < z0["grads_gib"]:
            problems.append("ZeRO-3 grads_gib not below ZeRO-0's")
        # In bf16 DeepSpeed's ZeRO-0 is BF16_Optimizer, which already partitions the fp32
        # master and Adam states over data parallelism: equal to ZeRO-3's, never more.
        if not z3["optimizer_gib"] <= z0["optimizer_gib"] + 1e-9:
            problems.append("ZeRO-3 optimizer_gib above ZeRO-0's")
    # Full activation checkpointing keeps only layer inputs: less memory than none.
    by_ckpt = {c["checkpointing"]: c for c in configs(["--zero", "1", "--ckpt", "none,selective,full",
                                                       "--flash", "off", "--mbs", "4"])}
    if set(by_ckpt) != {"none", "selective", "full"}:
        problems.append("checkpointing sweep returned %s" % sorted(by_ckpt))
    else:
        act = {k: v["memory"]["breakdown"]["activations_gib"] for k, v in by_ckpt.items()}
        if not device(by_ckpt["full"]) < device(by_ckpt["none"]):
            problems.append("full checkpointing (%.2f GiB) not below none (%.2f GiB)"
                            % (device(by_ckpt["full"]), device(by_ckpt["none"])))
        if not act["full"] < act["selective"] < act["none"]:
            problems.append("activations not ordered full < selective < none: %s" % act)
    # The table's "searched N configurations" is the JSON's search.evaluated.
    plain = ["estimate", "--model", "gpt-2.7b", "--gpus", "16"]
    doc, errs = h.run_json_case(dsplan, plain + ["--json"], src)
    problems += errs
    with tempfile.TemporaryDirectory(prefix="dsplan-cli-") as tmp:
        code, out, err = h.run_dsplan(dsplan, plain, src, tmp)
    m = re.search(r"searched (\d+) configurations.*?: (\d+) fit", out)
    if code != 0 or not m:
        problems.append("table run: exit %d, no 'searched N configurations' line:\n%s" % (code, out[:800]))
    elif doc:
        if int(m.group(1)) != doc["search"]["evaluated"]:
            problems.append("table says %s evaluated, --json %d" % (m.group(1), doc["search"]["evaluated"]))
        if int(m.group(2)) != doc["search"]["feasible"]:
            problems.append("table says %s fit, --json feasible %d" % (m.group(2), doc["search"]["feasible"]))
        rows = len(re.findall(r"^\d+\s+z\d", out, re.M))
        if rows != len(doc["configs"]):
            problems.append("table lists %d configs, --json %d" % (rows, len(doc["configs"])))
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dsplan", help="dsplan binary (default: $DSPLAN or the newest build*/dsplan)")
    ap.add_argument("mode", choices=["golden", "error", "out", "properties"])
    ap.add_argument("case", nargs="?", help="case file (golden, error)")
    a = ap.parse_args()
    dsplan, src = h.find_dsplan(a.dsplan), h.source_dir()
    if a.mode in ("golden", "error") and not a.case:
        ap.error("%s needs a case file" % a.mode)
    problems = {"golden": lambda: golden(dsplan, src, a.case), "error": lambda: error(dsplan, src, a.case),
                "out": lambda: out_folder(dsplan, src), "properties": lambda: properties(dsplan, src)}[a.mode]()
    for p in problems:
        print("FAIL " + p)
    if not problems:
        print("ok")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
