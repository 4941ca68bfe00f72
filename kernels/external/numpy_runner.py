#!/usr/bin/env python3
"""An example external runner: a plain NumPy MoE that reads the fixture `moe-harness export CASE --out DIR` wrote and
writes its output for `moe-harness judge CASE --output OUT`. It stands for any program outside the harness (a Triton
kernel, a vendor library): it only sees the exported files, never the harness's memory.

Usage: numpy_runner.py EXPORT_DIR OUT.safetensors [--bug NAME] [--round POINTS]
  Handles expert weights the fixture stores unscaled as BF16 or F16 (routed and shared), without activation
  quantization: silu, gelu_tanh, gelu_erf and swiglu_oai in their exported layouts, expert biases, the router weight
  on the output or the input, EP and shared experts (fused or on a separate path). Anything else exits 2 saying so.
  --bug injects one realistic defect (swap_gate_up, drop_last_token, no_router_weight; dead_channel: hidden channel
  H/2 zero for every token; gain_3pct and gain_0.3pct: the output 3 % or 0.3 % too large; truncate_output: the
  output truncated toward zero instead of rounded to nearest even) so the tests can show that judge catches it.
  Rounding points (docs/numerics.md): the case's gate_up, slot and reduce dtypes (case.json dtypes.*), or those
  --round names instead ("gate_up=bf16,slot=bf16": vLLM's pipeline), which judge must then be told with --contract.

Output: tensor "out" [T, H] in the case's output dtype, and the fixture's fingerprint copied into the metadata so that
judge refuses an output computed from another fixture.
"""
import json
import struct
import sys

import numpy as np

DTYPES = {"BF16": np.uint16, "F16": np.float16, "F32": np.float32, "I32": np.int32, "U8": np.uint8,
          "F8_E4M3": np.uint8, "F8_E5M2": np.uint8}  # fp8 kept as raw codes


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    meta = header.pop("__metadata__", {})
    tensors = {}
    for name, t in header.items():
        a, b = t["data_offsets"]
        tensors[name] = (t["dtype"], np.frombuffer(data[a:b], dtype=DTYPES[t["dtype"]]).reshape(t["shape"]))
    return tensors, meta


def write_safetensors(path, tensors, meta):
    header, blobs, off = {"__metadata__": meta}, [], 0
    for name, (dtype, arr) in tensors.items():
        raw = np.ascontiguousarray(arr).tobytes()
        header[name] = {"dtype": dtype, "shape": list(arr.shape), "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def bf16_to_f32(u16):
    return (u16.astype(np.uint32) << 16).view(np.float32)


def f32_to_bf16(x):
    """Round to nearest even; NaN stays a quiet NaN (0x7FC0)."""
    u = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(x), np.uint16(0x7FC0), r)


def to_f32(dtype, arr):
    return bf16_to_f32(arr) if dtype == "BF16" else arr.astype(np.float32)


def round_to(dtype_name, x):
    """Round f32 values to a case dtype and back (what storing them in that dtype does)."""
    if dtype_name == "bf16":
        return bf16_to_f32(f32_to_bf16(x))
    if dtype_name == "f16":
        return x.astype(np.float16).astype(np.float32)
    return x.astype(np.float32)


def activation(h, case, clamp):
    act, layout, inter = case["activation"]["kind"], case["activation"]["layout"], h.shape[-1] // 2
    if layout == "gate_up":
        g, u = h[..., :inter], h[..., inter:]
    elif layout == "up_gate":
        u, g = h[..., :inter], h[..., inter:]
    else:
        g, u = h[..., 0::2], h[..., 1::2]
    g, u = g.astype(np.float64), u.astype(np.float64)
    if act == "silu":
        return g / (1 + np.exp(-g)) * u
    if act == "gelu_tanh":
        return 0.5 * g * (1 + np.tanh(np.sqrt(2 / np.pi) * (g + 0.044715 * g ** 3))) * u
    if act == "gelu_erf":
        from math import erf
        return 0.5 * g * (1 + np.vectorize(erf)(g / np.sqrt(2))) * u
    if act == "swiglu_oai":
        alpha, limit = case["activation"]["swiglu_alpha"], case["activation"]["swiglu_limit"]
        if clamp:
            g, u = np.minimum(g, limit), np.clip(u, -limit, limit)
        return (u + 1) * g / (1 + np.exp(-alpha * g))
    raise SystemExit(f"numpy_runner: activation {act} is not handled here")


def expert(x, w13, w2, b13, b2, case, clamp, bug):
    """x [n, H] f32 -> [n, H]: gate-up GEMM (+bias) -> gate_up rounding -> activation -> intermediate rounding ->
    down GEMM (+bias)."""
    h = x.astype(np.float64) @ w13.T.astype(np.float64)
    if b13 is not None:
        h += b13
    if case["dtypes"]["gate_up"] != "f32":
        h = round_to(case["dtypes"]["gate_up"], h.astype(np.float32)).astype(np.float64)
    if bug == "swap_gate_up":
        inter = h.shape[-1] // 2
        h = np.concatenate([h[:, inter:], h[:, :inter]], axis=1)
    y = round_to(case["dtypes"]["intermediate"], activation(h, case, clamp).astype(np.float32))
    o = y.astype(np.float64) @ w2.T.astype(np.float64)
    if b2 is not None:
        o += b2
    return o


def main():
    args = sys.argv[1:]
    bug = None
    if "--bug" in args:
        i = args.index("--bug")
        bug = args[i + 1]
        del args[i:i + 2]
    points = {}
    if "--round" in args:
        i = args.index("--round")
        points = dict(item.split("=", 1) for item in args[i + 1].split(","))
        del args[i:i + 2]
        if not set(points) <= {"gate_up", "slot", "reduce"} or not set(points.values()) <= {"f32", "bf16", "f16"}:
            raise SystemExit("numpy_runner: --round takes gate_up, slot and reduce points of f32, bf16 or f16")
    if len(args) != 2:
        raise SystemExit(__doc__)
    export_dir, out_path = args
    case = json.load(open(f"{export_dir}/case.json"))
    case["dtypes"].update(points)
    slot_dt, reduce_dt = case["dtypes"]["slot"], case["dtypes"]["reduce"]

    def add(acc, y):
        """One slot into a sum: the slot rounded to its dtype, then the sum to the accumulator's (f32: kept)."""
        y = y if slot_dt == "f32" else round_to(slot_dt, y.astype(np.float32)).astype(np.float64)
        s = acc + y
        return s if reduce_dt == "f32" else round_to(reduce_dt, s.astype(np.float32)).astype(np.float64)
    t, meta = read_safetensors(f"{export_dir}/fixture.safetensors")
    shape, routing = case["shape"], case["routing"]
    # What this example handles is read from what export wrote: every expert weight stored as BF16 or F16 without a
    # scale tensor, and activations that are not quantized.
    sets = [("", case["quant"])] + ([("shared_", case["shared_quant"])] if shape["n_shared"] > 0 else [])
    for prefix, q in sets:
        dtypes = {t[f"{prefix}{w}"][0] for w in ("w13", "w2")}
        scaled = any(f"{prefix}{w}_scale" in t for w in ("w13", "w2"))
        if not dtypes <= {"BF16", "F16"} or scaled or q["act"] != "none":
            stored = "/".join(sorted(meta.get(f"moe.dtype.{prefix}{w}", t[f"{prefix}{w}"][0]) for w in ("w13", "w2")))
            print(f"numpy_runner: {'shared ' if prefix else ''}weights stored as {stored}{' with scales' if scaled else ''} and activations "
                  f"'{q['act']}' are not handled by this example (unscaled BF16/F16 weights, act none)", file=sys.stderr)
            sys.exit(2)
    x = to_f32(*t["x"])
    ids, wts = t["topk_ids"][1], t["topk_weights"][1]
    T, H = x.shape
    first = shape["first_local_expert"]
    out = np.zeros((T, H), dtype=np.float64)
    w13, w2 = to_f32(*t["w13"]), to_f32(*t["w2"])
    b13 = t["w13_bias"][1] if "w13_bias" in t else None
    b2 = t["w2_bias"][1] if "w2_bias" in t else None
    for tok in range(T):
        for j in range(ids.shape[1]):
            e = int(ids[tok, j]) - first
            if e < 0 or e >= shape["local_experts"]:
                continue  # EP: another rank owns this expert
            w = 1.0 if bug == "no_router_weight" else float(wts[tok, j])
            xi = x[tok:tok + 1]
            if routing["router_weight_on"] == "input":
                xi = round_to(case["dtypes"]["input"], (xi * np.float32(w)).astype(np.float32))
                w = 1.0
            out[tok] = add(out[tok], w * expert(xi, w13[e], w2[e], None if b13 is None else b13[e],
                                                None if b2 is None else b2[e], case, True, bug)[0])
    shared = np.zeros_like(out)
    if shape["n_shared"] > 0 and shape["ep_rank"] == 0:
        sw13, sw2 = to_f32(*t["shared_w13"]), to_f32(*t["shared_w2"])
        for s in range(sw13.shape[0]):
            y = expert(x, sw13[s], sw2[s], None, None, case, case["activation"]["clamp_shared"], bug)
            if case["execution"].get("shared_path") == "separate":
                shared = add(shared, y)
            else:
                out = add(out, y)
    od = case["dtypes"]["output"]
    if case["execution"].get("shared_path") == "separate":
        # The model adds two outputs, each stored in the output dtype.
        out = round_to(od, round_to(od, out.astype(np.float32)) + round_to(od, shared.astype(np.float32)))
    else:
        out = out.astype(np.float32)
    if bug == "drop_last_token":
        out[-1] = np.nan  # what an unwritten row looks like after the harness's NaN pre-fill
    if bug == "dead_channel":
        out[:, H // 2] = 0.0
    if bug in ("gain_3pct", "gain_0.3pct"):
        out = (out * np.float32(1.03 if bug == "gain_3pct" else 1.003)).astype(np.float32)
    if od == "bf16":
        tensor = ("BF16", f32_to_bf16(out))
    elif od == "f16":
        tensor = ("F16", out.astype(np.float16))
    else:
        tensor = ("F32", out)
    if bug == "truncate_output" and od in ("bf16", "f16"):
        # Round to nearest even, then one code toward zero wherever that rounded away from zero (sign-magnitude).
        codes = tensor[1].view(np.uint16).copy()
        back = bf16_to_f32(codes) if od == "bf16" else codes.view(np.float16).astype(np.float32)
        away = (np.abs(back) > np.abs(out)) & ((codes & 0x7FFF) != 0)
        codes[away] -= 1
        tensor = (tensor[0], codes if od == "bf16" else codes.view(np.float16))
    write_safetensors(out_path, {"out": tensor},
                      {"moe.case_id": case["id"], "moe.fixture_fingerprint": meta["moe.fixture_fingerprint"]})
    print(f"numpy_runner: wrote {out_path} ({T}x{H} {od})")


if __name__ == "__main__":
    main()
