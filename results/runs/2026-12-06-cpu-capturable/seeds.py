"""The torch and Triton examples, capturable and default, over smoke at the given seeds (SEEDS as 1,2,3,4; names
to run only some: torch-capturable torch-blocks triton-static triton-dynamic); each failing case with its reason."""
import sys, time
import moe_harness
from torch_moe import TorchMoe
from triton_moe import TritonMoe
kernels = {
    "torch-capturable": lambda: TorchMoe(capturable=True),
    "torch-blocks": lambda: TorchMoe(),
    "triton-static": lambda: TritonMoe(device="cpu", capturable=True),
    "triton-dynamic": lambda: TritonMoe(device="cpu"),
}
names = sys.argv[2:] or list(kernels)
for seed in [int(s) for s in sys.argv[1].split(",")]:
    for name in names:
        t = time.time()
        vs = [c.run(kernels[name]()) for c in moe_harness.suite("smoke", seed=seed)]
        bad = [v for v in vs if not v.passed]
        print(f"seed {seed} {name}: {len(vs)-len(bad)}/{len(vs)} pass ({time.time()-t:.0f} s)", flush=True)
        for v in bad:
            print(f"   {v.status} {v.id}: {v.reason[:300]}", flush=True)
