"""Diagnostic (results/runs/2026-12-06-mma-emulation/RUN.md): the vllm member with its fp8 x fp8 GEMMs through an emulated fast-accumulating fp8 matrix unit (each
32-wide K slice's exact dot added to an accumulator kept to BITS significant bits toward zero), judged with
accum=mma14 declared and the envelope always; prints each systematic statistic's z and effect per seed."""
import json, sys, time
import numpy as np
sys.path.insert(0, "kernels/panel")
import moe_harness
from panel_members import VllmStyle
from panel_weights import block_rows

SLICE = 32


def keep_rz(x, bits):
    m, e = np.frexp(x)
    return np.ldexp(np.trunc(np.ldexp(m, bits)), e - bits)


class Emu(VllmStyle):
    id = "emu-mma"
    bits = 14

    def rounding_contract(self, case):
        return super().rounding_contract(case) + ",accum=mma14"

    def dot(self, a, w):
        acc = np.zeros((a.shape[0], w.shape[0]))
        a64, w64 = a.astype(np.float64), w.astype(np.float64)
        for s in range(0, a.shape[1], SLICE):
            acc = keep_rz(acc + a64[:, s:s + SLICE] @ w64[:, s:s + SLICE].T, self.bits)
        return acc.astype(np.float32)

    def _gemm(self, a, vals, scale, name):
        if scale is None or isinstance(a, np.ndarray) or scale[0] == "mx":
            return super()._gemm(a, vals, scale, name)
        kind, s = scale
        if kind in ("tensor", "channel") and a.group == a.v.shape[1]:
            ws = np.full(vals.shape[0], s, np.float32) if kind == "tensor" else s
            return self.dot(a.v, vals) * a.s[:, :1] * ws[None, :]
        if kind == "block":
            k = vals.shape[1]
            ws = block_rows(s, vals.shape[0], name == "w13")
            acc = np.zeros((a.v.shape[0], vals.shape[0]), np.float32)
            for kb in range(-(-k // 128)):
                sl = slice(kb * 128, min(k, kb * 128 + 128))
                acc += self.dot(a.v[:, sl], vals[:, sl]) * a.s[:, kb:kb + 1] * ws[None, :, kb]
            return acc
        return super()._gemm(a, vals, scale, name)


def main():
    # Usage: emu_mma.py FILTER FIRST_SEED END_SEED BITS
    flt, seeds, bits = sys.argv[1], range(int(sys.argv[2]), int(sys.argv[3])), int(sys.argv[4])
    for seed in seeds:
        suite = moe_harness.suite("nightly", filter=flt, seed=seed)
        m = Emu(); m.bits = bits
        for case in suite:
            t = time.time()
            v = case.run(m, kernel_id=m.id, envelope="always", token_probes=False)
            print(json.dumps({"seed": seed, "id": case.id, "status": v.status, "bits": bits, "s": round(time.time() - t, 1),
                              "systematic": {s["name"]: [s["z"], s["effect"], s["z_threshold"]] for s in v.systematic}}),
                  flush=True)
        suite = case = v = None


main()
