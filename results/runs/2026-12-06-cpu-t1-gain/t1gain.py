import sys, numpy as np
import moe_harness
host = moe_harness.native_kernel("host")
def gained(g):
    def k(fx, out):
        host(fx, out)
        a = np.asarray(out)
        if out.format == "bf16":
            f = (a.astype(np.uint32) << 16).view(np.float32) * np.float32(1 + g)
            b = f.view(np.uint32)
            b = (b + 0x7FFF + ((b >> 16) & 1)) >> 16   # round to nearest even
            a[...] = b.astype(a.dtype)
        else:
            a *= (1 + g)
    return k
ids = ["qwen3.5-35b-a3b/tp4/bf16.a16+sh.bf16.a16/silu/T1/decode/atomic/one_stage",
       "qwen3.5-35b-a3b/tp4/fp8pt.tok+sh.fp8ch.tok/silu/T1/decode/atomic",
       "deepseek-v3/tp8/ep8r0/fp8blk.g128+sh.fp8blk.g128/silu/T1/decode/atomic",
       "qwen3.5-35b-a3b/tp4/bf16.a16+sh.bf16.a16/silu/T4/decode/atomic/one_stage"]
for cid in ids:
    for seed in (0, 1, 2):
        case = list(moe_harness.suite("nightly", filter=cid, seed=seed))[0]
        row = []
        for g in (2e-3, 3e-3, 5e-3, 1e-2):
            v = case.run(gained(g), kernel_id="gain", token_probes=False)
            gs = {s["name"]: s for s in v.systematic}["gain"]
            row.append(f"{g:g}:{v.status}/{v.failed_check or '-'} z={gs['z']:.1f} thr={gs['z_threshold']:.1f} eff={gs['effect']:.2e}")
        print(cid.split("/")[2], cid.split("/")[4], seed, " | ".join(row), flush=True)
