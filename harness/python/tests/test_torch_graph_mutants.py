"""The torch and Triton examples' capturable layers (TorchMoe(capturable=True): no data-dependent shape, no host sync) and its
graph mutants (kernels/external/torch_graph_mutants.py) on the CPU, judged by the harness against its reference:
the layer clean over smoke with every injected defect still caught where it changes the output, and each mutant
right in eager use (so that only its device probe can catch it: test_graph_mutants_device.py on the GPU)."""
import pytest
import torch

import moe_harness
from torch_graph_mutants import MUTANTS, graph_mutant
from torch_moe import BUGS, TorchMoe
from triton_moe import TritonMoe, align_block_size_static


def failed(kernel, seed=None):
    verdicts = [case.run(kernel) for case in moe_harness.suite("smoke", seed=seed)]
    assert len(verdicts) == 29, "smoke's cases"
    return [v for v in verdicts if not v.passed]


@pytest.mark.parametrize("seed", [0, 1])
def test_the_capturable_layer_is_clean_over_smoke(seed):
    bad = failed(TorchMoe(capturable=True), seed)
    assert not bad, "\n\n".join(v.explain() for v in bad)


@pytest.mark.parametrize("bug", BUGS)
def test_the_capturable_layer_keeps_every_injected_defect_caught(bug):
    bad = failed(TorchMoe(bug=bug, capturable=True))
    assert {v.status for v in bad} <= {"fail"}
    # As the sorted blocks (test_torch_moe.py): fp8_scale_ignored changes the 2 cases with a per-tensor fp8 weight,
    # every other defect every case.
    assert len(bad) == (2 if bug == "fp8_scale_ignored" else 29), [v.id for v in bad]


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_each_graph_mutant_is_right_in_eager_use(name):
    verdicts = [case.run(graph_mutant(name, device="cpu")) for case in moe_harness.suite("smoke")]
    bad = [v for v in verdicts if not v.passed]
    assert not bad, "\n\n".join(v.explain() for v in bad)
    # On the CPU the probe that catches the mutant cannot run (docs/python.md "Device probes": not run, with the
    # reason, on a host kernel): a passing case says so of both device probes, never "ran".
    for v in verdicts:
        probes = dict(v.probes)
        for probe in ("stream_order", "graph_replay"):
            assert probes[probe].startswith("not run: ") and "host kernel" in probes[probe], (v.id, probe, probes)


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_a_graph_mutant_on_a_machine_without_a_gpu_is_a_skip_never_a_pass(name):
    """graph_mutant(NAME) runs on cuda (needs_device): with no GPU here, gating skips the case naming why, and under
    require_device fails it (docs/adding-a-kernel.md, needs_device), so its device probe is never reported passed."""
    if torch.cuda.is_available():
        pytest.skip("a GPU here: test_graph_mutants_device.py judges the mutants on it")
    (case,) = moe_harness.suite("smoke", filter="*T7*")[:1]
    v = case.run(graph_mutant(name))
    assert v.status == "skip" and v.reason.startswith("no GPU") and not v.passed, (v.status, v.reason)
    assert not any(status == "ran" for _, status in v.probes), v.probes
    v = case.run(graph_mutant(name), require_device=True)
    assert v.status == "fail" and "no GPU" in v.reason, (v.status, v.reason)


def test_graph_safety_is_declared_where_the_layer_is_capturable():
    assert TorchMoe(device="cuda").graph_safe is True   # capturable by default on a device (TorchMoe's docstring)
    assert TorchMoe(device="cuda", capturable=False).graph_safe is False
    assert TorchMoe().graph_safe is False               # the CPU's sorted blocks: host loops
    assert TorchMoe(capturable=True).graph_safe is True
    assert TritonMoe(device="cuda", capturable=True).graph_safe is True   # the static alignment
    assert TritonMoe(device="cuda").graph_safe is True
    assert TritonMoe(device="cpu").graph_safe is False
    assert all(graph_mutant(n).graph_safe is True for n in MUTANTS)


def test_the_static_alignment_is_the_alignment_then_sentinel_blocks():
    # test_triton_moe.py's hand-worked routing: slots 0..5 of 3 tokens x top-2 to experts 3, 1 | 1, 0 | 3, 2; blocks
    # of 4, sentinel 6. Room for ceil(6 / 4) + 4 = 6 blocks: the 4 used blocks, then 2 of sentinels with expert 0.
    ids = torch.tensor([[3, 1], [1, 0], [3, 2]], dtype=torch.int32)
    sorted_ids, block_expert = align_block_size_static(ids, 0, 4, 4)
    assert sorted_ids.tolist() == [3, 6, 6, 6, 1, 2, 6, 6, 5, 6, 6, 6, 0, 4, 6, 6] + [6] * 8
    assert block_expert.tolist() == [0, 1, 2, 3, 0, 0]
    # EP, local experts 1 and 2: slots 1, 2 (expert 1) and 5 (expert 2); room for 2 + 2 blocks.
    sorted_ids, block_expert = align_block_size_static(ids, 1, 2, 4)
    assert sorted_ids.tolist() == [1, 2, 6, 6, 5, 6, 6, 6] + [6] * 8 and block_expert.tolist() == [0, 1, 0, 0]
    # drop_last_block: the last used block (expert 3's) all sentinels.
    sorted_ids, _ = align_block_size_static(ids, 0, 4, 4, bug="drop_last_block")
    assert sorted_ids.tolist() == [3, 6, 6, 6, 1, 2, 6, 6, 5, 6, 6, 6] + [6] * 12


@pytest.mark.parametrize("bug", [None] + list(BUGS))
def test_the_capturable_triton_layer_is_clean_and_keeps_every_defect_caught(bug):
    bad = failed(TritonMoe(bug=bug, device="cpu", capturable=True))
    assert {v.status for v in bad} <= {"fail"}
    want = 0 if bug is None else 2 if bug == "fp8_scale_ignored" else 29
    assert len(bad) == want, "\n\n".join(v.explain() for v in bad[:3])


def test_an_unknown_mutant_is_refused_naming_the_known_ones():
    with pytest.raises(ValueError, match="unknown mutant 'nosuch'; one of graph_baked_weights, "):
        graph_mutant("nosuch")
