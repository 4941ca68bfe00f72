"""kernels/external/triton_moe.py on the CPU (its GEMM programs emulated block by block in torch): the alignment of
the slots against a hand-worked routing, clean over the smoke suite, and every injected defect caught on every smoke
case where it changes the output. The Triton programs themselves run on the GPU machine (ci/python-examples)."""
import pytest
import torch

import moe_harness
from triton_moe import BUGS, TritonMoe, align_block_size


def test_alignment_sorts_by_expert_and_pads_each_expert_to_whole_blocks():
    # Slots 0..5 of 3 tokens x top-2 go to experts 3, 1 | 1, 0 | 3, 2; blocks of 4, the sentinel is 6 (T * k).
    ids = torch.tensor([[3, 1], [1, 0], [3, 2]], dtype=torch.int32)
    sorted_ids, block_expert = align_block_size(ids, 0, 4, 4)
    assert sorted_ids.tolist() == [3, 6, 6, 6, 1, 2, 6, 6, 5, 6, 6, 6, 0, 4, 6, 6]
    assert block_expert.tolist() == [0, 1, 2, 3]
    # EP: local experts 1 and 2 (first local expert 1) keep slots 1, 2 (expert 1) and 5 (expert 2) only.
    sorted_ids, block_expert = align_block_size(ids, 1, 2, 4)
    assert sorted_ids.tolist() == [1, 2, 6, 6, 5, 6, 6, 6] and block_expert.tolist() == [0, 1]
    # A grid one block short loses the last expert's block.
    sorted_ids, block_expert = align_block_size(ids, 0, 4, 4, bug="drop_last_block")
    assert sorted_ids.tolist() == [3, 6, 6, 6, 1, 2, 6, 6, 5, 6, 6, 6] and block_expert.tolist() == [0, 1, 2]


def test_smoke_clean_passes():
    verdicts = [c.run(TritonMoe(device="cpu")) for c in moe_harness.suite("smoke")]
    failed = [v for v in verdicts if not v.passed]
    assert verdicts and not failed, "\n\n".join(v.explain() for v in failed)
    assert all(v.variant.startswith("triton-emulated/cpu/") for v in verdicts)


@pytest.mark.parametrize("bug", BUGS)
def test_every_injected_bug_is_caught_where_it_changes_the_output(bug):
    missed = []
    for case in moe_harness.suite("smoke"):
        fx = case.fixture()
        clean, out = case.new_output(), case.new_output()
        TritonMoe(device="cpu")(fx, clean)
        TritonMoe(bug=bug, device="cpu")(fx, out)
        if torch.equal(moe_harness.torch.to_torch(out), moe_harness.torch.to_torch(clean)):
            assert bug == "fp8_scale_ignored", f"{bug} changes every smoke case's output"
            continue
        v = case.judge(out)
        if v.status != "fail":
            missed.append(f"{case.id}: {v.status}")
    assert not missed, missed
