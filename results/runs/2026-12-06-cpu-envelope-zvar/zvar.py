# Issue 45 item 5's test, on the CPU: the panel's vllm member (two roundings of silu_and_mul) judged WITHOUT declaring
# act_gate (one extra legitimate rounding the contract does not know) on the qwen3.5 TP4 bf16 T1 case, seeds 0..N-1:
# its gain z before and after the envelope's scale.
import sys, math
sys.path.insert(0, "kernels/panel")
import moe_harness, panel_members
class Undeclared(panel_members.VllmStyle):
    id = "vllm-undeclared-act-gate"
    def rounding_contract(self, case):
        return ",".join(p for p in super().rounding_contract(case).split(",") if not p.startswith("act_gate")) or "default"
n = int(sys.argv[1])
case_id = sys.argv[2]
raw, scaled, fails = [], [], 0
for seed in range(n):
    case = [c for c in moe_harness.suite("nightly", filter=case_id, seed=seed)][0]
    rec = case.run(Undeclared())
    stats = {s["name"]: s for s in rec.systematic}
    g = stats.get("gain")
    m = rec.metrics
    sc = m.get("envelope_z_scale_gain", 1.0)
    if g: raw.append(g["z"]); scaled.append(g["z"] / sc)
    fails += rec.status != "pass"
    print(seed, rec.status, g and round(g["z"], 2), round(sc, 2), g and g["effect"])
def sd(v): mu = sum(v)/len(v); return math.sqrt(sum((x-mu)**2 for x in v)/(len(v)-1))
print("raw z sd", round(sd(raw), 2), "scaled z sd", round(sd(scaled), 2), "fails", fails, "of", n)
