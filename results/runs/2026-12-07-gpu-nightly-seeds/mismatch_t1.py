#!/usr/bin/env python3
"""The seed-10 mismatch_fraction false alarms of the fast-accumulating GPU members (RUN.md), on the CPU: the `vllm`
member through the emulated truncating accumulator of results/runs/2026-12-06-mma-emulation (emu_mma.py, 16 and 14
bits, accum=mma14 declared) on the two T1 cases, printing its mismatch fraction beside the envelope's largest
member's and the derived limit. Run from the repository root with the cpu preset's module on PYTHONPATH."""
import sys

sys.path.insert(0, "kernels/panel")
import moe_harness  # noqa: E402

EMU = "results/runs/2026-12-06-mma-emulation/emu_mma.py"
ns = {"__name__": "emu_mma"}
exec(compile(open(EMU).read().replace("\nmain()\n", "\n"), EMU, "exec"), ns)  # its member, not its main()
for case_id in ["qwen3.5-35b-a3b/tp4/fp8ch-fnuz.tok-q224+sh.fp8ch.tok/silu/T1/decode/atomic",
                "qwen3.5-35b-a3b/tp4/mxfp4.a16-rceil+sh.fp8ch.tok/silu/T1/decode/atomic"]:
    for bits in (16, 14):
        for case in moe_harness.suite("nightly", filter=case_id, seed=10):
            m = ns["Emu"]()
            m.bits = bits
            v = case.run(m, kernel_id=m.id, envelope="always", token_probes=False)
            x = v.metrics
            print(f"{case_id} seed 10 bits {bits}: {v.status}, mismatch_fraction {x['mismatch_fraction']:.4e}, "
                  f"envelope members' largest {x['envelope_max_mismatch']:.4e}, limit {x['threshold_mismatch_fraction']:.4e}")
            case.release()
