#!/usr/bin/env python3
"""Malformed case files: `moe-harness list --suite FILE` exits 2 and stderr names the file, the line and the key.

Every row is a file that must be refused: a wrong value never loads silently (a NaN tolerance switches a check off),
and no input makes the harness crash or report an internal error (exit 3). Ranges and limits: docs/cases.md.

Usage: check_bad_case_files.py MOE_HARNESS WORK_DIR
"""
import os
import subprocess
import sys

HEAD = "suite: bad\ndefaults: {hidden: 64, inter: 64, experts: 8, topk: 2}\ncases:\n"
FP8 = "quant: {weight: fp8_channel, act: fp8_token"


def case(body):
    return HEAD + "  - {tokens: 1, " + body + "}\n"


def sweep_of(n_axes, n_values):
    axes = ["tokens", "seed", "split_k", "weight_std", "input.mean"][:n_axes]
    vals = {"tokens": [str(i + 1) for i in range(n_values)], "seed": [str(i) for i in range(n_values)],
            "split_k": [str(i + 1) for i in range(n_values)],
            "weight_std": [f"0.0{i + 1}" for i in range(n_values)],
            "input.mean": [f"0.{i}" for i in range(n_values)]}
    return HEAD + "  - sweep: {" + ", ".join(f"'{a}': [{', '.join(vals[a])}]" for a in axes) + "}\n"


CASES = {
    # name: (file body, line (None: the file as a whole), key ('' for none), substring stderr must hold)
    "unknown_key": (HEAD + "  - {tokens: 1, tokenz: 2}\n", 4, "tokenz", ""),
    "wrong_type": (HEAD + "  - {tokens: two}\n", 4, "tokens", ""),
    "unknown_enum": (HEAD + "  - {tokens: 1, quant: {weight: int3}}\n", 4, "quant.weight", ""),
    "topk_gt_experts": (HEAD + "  - {tokens: 1, topk: 64}\n", 4, "topk", ""),
    "swiglu_chunked": (HEAD + "  - {tokens: 1, activation: swiglu_oai, layout: up_gate}\n", 4, "layout", ""),
    "mx_k_not_32": (HEAD + "  - {tokens: 1, hidden: 48, quant: {weight: mxfp8, act: mxfp8}}\n", 4, "quant.weight", ""),
    "duplicate_id": (HEAD + "  - {tokens: 1}\n  - {tokens: 1}\n", 5, "variant", ""),
    "loosened_without_reason": (HEAD + "  - {tokens: 1, tolerance: {max_rel: 0.5}}\n", 4, "tolerance.max_rel", ""),
    "yaml_syntax": (HEAD + "  - {tokens: [1, 2}\n", 4, "", ""),
    # Non-finite and out-of-range numbers: a NaN threshold compares false and would let any output pass.
    "nan_min_cos": (case("tolerance: {min_cos: .nan}"), 4, "tolerance.min_cos", "finite"),
    "nan_atol": (case("tolerance: {atol: .NaN}"), 4, "tolerance.atol", "finite"),
    "inf_rtol_with_reason": (case("tolerance: {rtol: .inf, reason: measured}"), 4, "tolerance.rtol", "finite"),
    "nan_max_mismatch_fraction": (case("tolerance: {max_mismatch_fraction: .nan}"), 4,
                                  "tolerance.max_mismatch_fraction", "finite"),
    "minus_inf_max_rel": (case("tolerance: {max_rel: -.inf}"), 4, "tolerance.max_rel", "finite"),
    "negative_atol": (case("tolerance: {atol: -1}"), 4, "tolerance.atol", "outside"),
    "mismatch_fraction_above_1": (case("tolerance: {max_mismatch_fraction: 2, reason: r}"), 4,
                                  "tolerance.max_mismatch_fraction", "outside"),
    "min_cos_below_minus_1": (case("tolerance: {min_cos: -2, reason: r}"), 4, "tolerance.min_cos", "outside"),
    "nan_qmax": (case(FP8 + ", qmax: .nan}"), 4, "quant.qmax", "finite"),
    "negative_qmax": (case(FP8 + ", qmax: -1}"), 4, "quant.qmax", ""),
    "qmax_above_fnuz_max": (case(FP8 + ", flavor: fnuz, qmax: 448}"), 4, "quant.qmax", "240"),
    "zero_amax_floor": (case(FP8 + ", amax_floor: 0}"), 4, "quant.amax_floor", "outside"),
    "nan_amax_floor": (case(FP8 + ", amax_floor: .nan}"), 4, "quant.amax_floor", "finite"),
    "nan_shared_qmax": (case("n_shared: 1, shared_inter: 64, shared_quant: {weight: fp8_channel, act: fp8_token, "
                             "qmax: .nan}"), 4, "shared_quant.qmax", "finite"),
    "negative_weight_std": (case("weight_std: -0.02"), 4, "weight_std", "outside"),
    "inf_weight_std": (case("weight_std: .inf"), 4, "weight_std", "finite"),
    "nan_input_mean": (case("input: {mean: .nan}"), 4, "input.mean", "finite"),
    "zero_input_std": (case("input: {std: 0}"), 4, "input.std", "outside"),
    "negative_input_std": (case("input: {std: -1}"), 4, "input.std", "outside"),
    "outlier_fraction_above_1": (case("input: {outlier_fraction: 1.5}"), 4, "input.outlier_fraction", "outside"),
    "inf_outlier_scale": (case("input: {outlier_fraction: 0.01, outlier_scale: .inf}"), 4, "input.outlier_scale",
                          "finite"),
    "f16_input_overflows": (case("input_dtype: f16, input: {mean: 5000, std: 1000, outlier_fraction: 0.01, "
                                 "outlier_scale: 20}"), 4, "input.outlier_scale", "65504"),
    "nan_routed_scaling": (case("routing: {kind: grouped_sigmoid, n_group: 2, topk_group: 1, routed_scaling: .nan}"),
                           4, "routing.routed_scaling", "finite"),
    "zero_routed_scaling": (case("routing: {kind: grouped_sigmoid, n_group: 2, topk_group: 1, routed_scaling: 0}"),
                            4, "routing.routed_scaling", "outside"),
    "nan_swiglu_alpha": (case("activation: swiglu_oai, swiglu: {alpha: .nan}"), 4, "swiglu.alpha", "finite"),
    "zero_swiglu_limit": (case("activation: swiglu_oai, swiglu: {limit: 0}"), 4, "swiglu.limit", "outside"),
    "inf_swiglu_limit": (case("activation: swiglu_oai, swiglu: {limit: .inf}"), 4, "swiglu.limit", "finite"),
    "float_for_an_integer": (case("split_k: 2.5"), 4, "split_k", "whole number"),
    "exponent_for_an_integer": (HEAD + "  - {tokens: 1e3}\n", 4, "tokens", "whole number"),
    "size_past_int64": (case("hidden: 99999999999999999999"), 4, "hidden", "outside"),
    "zero_size": (case("inter: 0"), 4, "inter", "outside"),
    "negative_size": (case("experts: -8"), 4, "experts", "outside"),
    # Seeds are unsigned 64-bit: -1 and 2^64 are refused, never wrapped.
    "negative_seed": (case("seed: -1"), 4, "seed", "unsigned"),
    "seed_past_2_64": (case("seed: 18446744073709551616"), 4, "seed", "18446744073709551615"),
    "seed_float": (case("seed: 1.5"), 4, "seed", "whole number"),
    # Element counts and host memory, checked before anything is allocated.
    "elements_overflow_int64": (case("hidden: 1099511627776, inter: 1099511627776, experts: 1024"), 4, "inter",
                                "int64"),
    "past_the_memory_budget": (case("hidden: 1048576, inter: 1048576, experts: 64"), 4, "inter", "GiB"),
    "router_logits_past_the_budget": (HEAD + "  - {tokens: 16777216, experts: 1048576}\n", 4, "tokens", "GiB"),
    # Malformed nodes: exit 2 naming the key, never an internal error.
    "sequence_as_key": (case("[a, b]: 3"), 4, "<sequence>", "scalar"),
    "mapping_as_nested_key": (case("quant: {{weight: bf16}: 1}"), 4, "quant.<mapping>", "scalar"),
    "sequence_key_in_defaults": ("suite: bad\ndefaults: {[hidden]: 64}\ncases:\n  - {tokens: 1}\n", 2,
                                 "defaults.<sequence>", "scalar"),
    "mapping_as_cu": (case("targets: {cu: {a: 1}}"), 4, "targets.cu", ""),
    "mapping_as_tag": (case("tags: [{a: 1}]"), 4, "tags", ""),
    "duplicate_key": (HEAD + "  - {tokens: 1, tokens: 2}\n", 4, "tokens", "twice"),
    "duplicate_nested_key": (case("quant: {weight: bf16, weight: fp16}"), 4, "quant.weight", "twice"),
    "non_utf8_variant": (HEAD.encode() + b"  - {tokens: 1, variant: \"a\xff\xfe\"}\n", 4, "variant", "UTF-8"),
    "non_utf8_tag": (HEAD.encode() + b"  - {tokens: 1, tags: [\"\xc3\x28\"]}\n", 4, "tags", "UTF-8"),
    "non_utf8_suite_name": (b"suite: \"b\xe2\x82\"\ncases:\n  - {tokens: 1, hidden: 64, inter: 64, experts: 8}\n", 1,
                            "suite", "UTF-8"),
    "slash_in_variant": (case("variant: a/b"), 4, "variant", "letters"),
    "unknown_dotted_sweep_key": (HEAD + "  - sweep: {quant.wieght: [bf16]}\n", 4, "sweep.quant.wieght", ""),
    "million_dot_sweep_key": (HEAD + "  - sweep:\n      ? quant" + ".x" * 1000000 + "\n      : [1]\n", 5, "", "quant"),
    # Limits (docs/cases.md "Limits"): a sweep that expands past the case limit, an alias bomb, 100k-deep nesting, big files.
    "sweep_past_the_case_limit": (sweep_of(5, 17), 4, "sweep", "1000000"),  # 17^5 = 1,419,857 cases
    "alias_bomb_sweep": (HEAD + "  - sweep: {tokens: &v [" + ", ".join(str(i) for i in range(1, 21)) + "], seed: *v, "
                                "split_k: *v, ep_rank: [0], 'input.mean': *v, 'input.std': *v, "
                                "weight_std: [0.01, 0.02, 0.03, 0.04, 0.05]}\n",
                         4, "sweep", "1000000"),  # 20^5 * 5 = 16,000,000 cases from a few lines
    "deep_flow_nesting": ("suite: bad\ncases: " + "[" * 100000 + "]" * 100000 + "\n", None, "", "2000 levels"),
    "deep_block_sequence": ("suite: bad\ncases:\n  " + "- " * 100000 + "x\n", None, "", "2000 levels"),
    "file_past_64_mib": (HEAD + "  - {tokens: 1}\n" + ("#" * 1023 + "\n") * (64 * 1024 + 1), None, "", "64 MiB"),
}


def main():
    exe, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    bad = 0
    for name, (body, line, key, needle) in CASES.items():
        path = os.path.join(work, name + ".yaml")
        with open(path, "wb") as f:
            f.write(body if isinstance(body, bytes) else body.encode())
        try:
            p = subprocess.run([exe, "list", "--suite", path], capture_output=True, timeout=60)
            rc, err = p.returncode, p.stderr.decode("utf-8", "backslashreplace")
        except subprocess.TimeoutExpired:
            rc, err = "timeout (60 s)", ""
        want_where = f"{path}:{line}" if line else f"{path}"
        ok = (rc == 2 and want_where in err and (not key or f"'{key}'" in err) and "Fix:" in err
              and needle in err and "internal error" not in err)
        shown = err.strip()[:400]
        if not ok:
            bad += 1
            print(f"{name}: exit {rc}, stderr: {shown} (wanted exit 2, {want_where}, key {key!r}, {needle!r})")
        else:
            print(f"{name}: ok: {shown}")
        os.remove(path) if len(body) > 1 << 20 else None
    # The shape of the original report: 2 x 2^32 x 2^31 elements wrapped int64, std::length_error was thrown inside
    # the weight generator's OpenMP region and `export` aborted (exit 134). Now it is refused at load time.
    path = os.path.join(work, "export_wrapped_shape.yaml")
    with open(path, "w") as f:
        f.write("suite: bad\ncases:\n  - {tokens: 1, hidden: 2147483648, inter: 2147483648, experts: 2, topk: 1}\n")
    case_id = "custom-h2147483648i2147483648e2k1-softmax_topk/tp1/bf16.a16/silu/T1/decode/atomic"
    p = subprocess.run([exe, "export", case_id, "--suite", path, "--out", os.path.join(work, "export-out")],
                       capture_output=True, text=True, timeout=120)
    if p.returncode != 2 or f"{path}:3" not in p.stderr or "'inter'" not in p.stderr:
        bad += 1
        print(f"export_wrapped_shape: exit {p.returncode}, stderr: {p.stderr.strip()[:300]} (wanted exit 2, {path}:3, 'inter')")
    else:
        print(f"export_wrapped_shape: ok: {p.stderr.strip()[:300]}")
    missing = subprocess.run([exe, "list", "--suite", os.path.join(work, "nope.yaml")], capture_output=True, text=True)
    if missing.returncode != 2:
        bad += 1
        print(f"missing file: exit {missing.returncode}")
    print(f"{bad} of {len(CASES) + 2} checks failed" if bad else f"all {len(CASES) + 2} checks passed")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
