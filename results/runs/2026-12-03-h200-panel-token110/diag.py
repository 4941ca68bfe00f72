"""Token 110 of qwen3.5-35b-a3b/tp4/*+sh.fp8ch.tok/silu/T128/prefill at seed 1 (issue 33): the shared expert of the
vLLM-style panel member computed once with NumPy GEMMs (t110.npz, written on the CPU) and once on the fp8 matrix units
(panel_torch.TorchVllmStyle._fp8_dot), stage by stage: which intermediate differs, where, and by how much."""
import os, sys
import numpy as np
here = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(here, "../../../kernels/panel")]
from panel_formats import round_to
from panel_members import VllmStyle, _act
from panel_quant import quantize
from panel_torch import TorchVllmStyle

d = np.load(os.path.join(here, "t110.npz"))
t = 110
spec = {"activation": {"kind": "silu", "layout": "gate_up"}}
q = {"act": "fp8_token", "flavor": "fn", "qmax": 0.0, "scale_pow2": False, "amax_floor": 1e-10}
m = TorchVllmStyle()
print("device", m.device, m.version, "fp8 units", m.fp8_units)
f = VllmStyle.formula
dot = m._fp8_dot if m.fp8_units else (lambda a, w: (a @ w.T).astype(np.float32))  # the CPU: a dry run
exact1 = d["qav"].astype(np.float64) @ d["v13"].T.astype(np.float64)
mm1 = dot(d["qav"], d["v13"])
bound1 = np.abs(d["qav"]).astype(np.float64) @ np.abs(d["v13"]).T.astype(np.float64)
e1 = np.abs(mm1 - exact1) / bound1
np32 = (d["qav"] @ d["v13"].T).astype(np.float64)
print("GEMM1 fp8 units vs exact: max |err|/sum|a w|", e1.max(), "row t", e1[t].max(),
      "| numpy fp32:", (np.abs(np32 - exact1) / bound1).max())
h = mm1 * d["qas"][:, :1] * d["s13"][None, :]
hb, hb0 = round_to(h.astype(np.float32), "bf16"), round_to(d["h"], "bf16")
fl = np.argwhere(hb != hb0)
print("bf16 h flips", len(fl), "rows", sorted(set(fl[:, 0].tolist())), "row t cols", fl[fl[:, 0] == t, 1].tolist())
z = round_to(_act(hb, spec, True), "bf16")
zf = np.argwhere(z != d["z"])
print("z diffs", len(zf), "row t", [(int(c), float(d["z"][t, c]), float(z[t, c])) for c in zf[zf[:, 0] == t, 1]])
qz = quantize(z, q, f)
print("z scale row t", float(d["qzs"][t, 0]), float(qz.s[t, 0]))
cf = np.argwhere(qz.v != d["qzv"])
print("z code flips", len(cf), "row t", [(int(c), float(d["qzv"][t, c]), float(qz.v[t, c])) for c in cf[cf[:, 0] == t, 1]])
exact2 = qz.v.astype(np.float64) @ d["v2"].T.astype(np.float64)
mm2 = dot(qz.v, d["v2"])
bound2 = np.abs(qz.v).astype(np.float64) @ np.abs(d["v2"]).T.astype(np.float64)
print("GEMM2 fp8 units vs exact: max |err|/sum|a w|", (np.abs(mm2 - exact2) / bound2).max())
y = mm2 * qz.s[:, :1] * d["s2"][None, :]
rel = np.linalg.norm(y - d["y"], axis=1) / np.linalg.norm(d["out"], axis=1)
o = np.argsort(rel)[::-1][:5]
print("shared y vs numpy, rel to the token's output: worst rows", o.tolist(), rel[o].tolist())
