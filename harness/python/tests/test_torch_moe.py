"""kernels/external/torch_moe.py judged in-process: clean over the smoke suite (5 seeds) and a CPU-sized subset of
the nightly suite with no false alarm, and every injected defect caught on every smoke case where it changes the
output."""
import pytest

import moe_harness
from torch_moe import BUGS, TorchMoe

# Nightly cases a CPU runs in about a minute: every weight scheme on the Qwen3.5 TP4 shape, GPT-OSS (MXFP4 with
# bf16 and MXFP8 activations, SwiGLU-OAI, biases), DeepSeek-V3 fp8 blocks with the shared expert fused and
# separate, Mixtral, Llama-4 (weight on the input).
NIGHTLY_SUBSET = ["qwen3.5-35b-a3b/tp4/*/T1/decode/atomic", "gpt-oss-20b/*/T1/*", "gpt-oss-20b/*/a8w4",
                  "deepseek-v3/*/T1/*", "deepseek-v3/*-sep/*", "mixtral-8x7b/*/T2/*", "llama4-scout/*/T1/*"]

def failures(suite, kernel):
    verdicts = [case.run(kernel) for case in suite]
    assert verdicts, "the selection is empty"
    return verdicts, [v for v in verdicts if not v.passed]


@pytest.mark.parametrize("seed", range(5))
def test_smoke_clean_passes_every_seed(seed):
    _, failed = failures(moe_harness.suite("smoke", seed=seed), TorchMoe())
    assert not failed, "\n\n".join(v.explain() for v in failed)


def test_nightly_subset_clean_passes():
    verdicts, failed = failures(moe_harness.suite("nightly", filter=NIGHTLY_SUBSET), TorchMoe())
    assert len(verdicts) == 15
    assert not failed, "\n\n".join(v.explain() for v in failed)


def fp8_tensor_case(spec):
    """Whether the case stores a weight per-tensor-scaled fp8 (where fp8_scale_ignored changes anything)."""
    routed = spec["quant"]["weight"] == "fp8_tensor"
    shared = spec["shape"]["n_shared"] > 0 and spec["shared_quant"]["weight"] == "fp8_tensor"
    return routed or shared


@pytest.mark.parametrize("bug", BUGS)
def test_every_injected_bug_is_caught(bug):
    suite = moe_harness.suite("smoke")
    _, failed = failures(suite, TorchMoe(bug=bug))
    assert {v.status for v in failed} <= {"fail"}, "a defect must fail a check, never error"
    if bug == "fp8_scale_ignored":
        live = {c.id for c in suite if fp8_tensor_case(c.spec)}
        assert len(live) == 2
    else:  # every case: each routes slots to local experts, gates through a layout and weighs its slots
        live = {c.id for c in suite}
    assert {v.id for v in failed} == live


def test_contract_slot_bf16_declared_passes_and_is_named():
    """A kernel that rounds each slot to bf16 before the top-k sum (what kernels writing per-slot bf16 outputs do)
    passes every smoke case when it declares slot=bf16, the record naming the contract; undeclared, the exact-tier
    cases (where the judge demands the contract reference's bits) catch it."""
    suite = moe_harness.suite("smoke")
    declared = [c.run(TorchMoe(slot="bf16")) for c in suite]
    assert not [v for v in declared if not v.passed], "\n\n".join(v.explain() for v in declared if not v.passed)
    assert {v.contract["declared"] for v in declared} == {"slot=bf16"}
    assert all("slot=bf16" in v.contract["effective"] for v in declared)

    exact = moe_harness.suite("selftest", filter="*/exact")
    assert len(exact) == 8  # cases/selftest.yaml: the sweep of 6 schemes, the up_gate shared case, duplicate_id
    honest = [c.run(TorchMoe(slot="bf16")) for c in exact]
    assert not [v for v in honest if not v.passed], "\n\n".join(v.explain() for v in honest if not v.passed)
    undeclared = TorchMoe(slot="bf16")
    undeclared.rounding_contract = "default"
    assert {c.run(undeclared).status for c in exact} == {"fail"}


def test_a_contract_text_the_parser_refuses_is_an_error_before_anything_runs():
    kernel = TorchMoe()
    kernel.rounding_contract = "slot=bf17"
    with pytest.raises(moe_harness.Error, match="rounding_contract"):
        moe_harness.suite("smoke")[0].run(kernel)
