"""The device probes on Python kernels on a GPU (run by results/runs/2026-12-06-h200-python-graphs/call.sh under the
pytest plugin with --moe-device cuda): the torch example, capturable, passes both probes on every case, and each graph
mutant of kernels/external/torch_graph_mutants.py fails the probe MUTANTS names on every case where its defect is
live, and passes where it is not (nothing else may catch it).

Live: default_stream_launch on every case (its whole output waits behind the held default stream);
graph_baked_weights where some token's router weights differ from the next token's (the rotated replay gives token
i the weights of the capture's token i); graph_stale_workspace from 2 tokens (the rotated replay's rows are other
tokens', where rotating the clean output's rows changes any). MOE_GRAPH_MUTANT picks one mutant (default: all, one test each)."""
import os

import numpy as np
import pytest
import torch

from torch_graph_mutants import MUTANTS, graph_mutant
from torch_moe import TorchMoe

NAMES = [os.environ["MOE_GRAPH_MUTANT"]] if os.environ.get("MOE_GRAPH_MUTANT") else sorted(MUTANTS)


def probes(v):
    return dict(v.probes)


def test_clean_passes_both_probes(moe_case, moe_session):
    moe_session.provenance["torch"] = torch.__version__
    v = moe_case.run(TorchMoe(device="cuda", capturable=True))
    p = probes(v)
    assert (p.get("stream_order"), p.get("graph_replay")) == ("ran", "ran"), p


def live(name, case):
    if name == "default_stream_launch":
        return True
    fx = case.fixture()
    if name == "graph_baked_weights":  # some token's slot to a local expert weighed with the previous token's weight
        shape = case.spec["shape"]
        ids, w = np.asarray(fx["topk_ids"]), np.asarray(fx["topk_weights"])
        nxt_ids, nxt_w = np.roll(ids, -1, axis=0), np.roll(w, -1, axis=0)
        local = (nxt_ids >= shape["first_local_expert"]) & (nxt_ids < shape["first_local_expert"] + shape["local_experts"])
        return bool((local & (w != nxt_w)).any())
    out = case.new_output()  # the stale workspace replays the capture's rows: live where rotating them changes any
    TorchMoe(device="cuda")(fx, out)
    rows = np.asarray(out).view(np.uint8).reshape(out.shape[0], -1)
    return bool((rows != np.roll(rows, -1, axis=0)).any())


@pytest.mark.parametrize("name", NAMES)
def test_graph_mutant_is_caught_by_its_probe_where_live(moe_case, moe_session, name):
    v = moe_session.run(moe_case.case, graph_mutant(name), device="cuda", require_device=True)  # in the report
    want = MUTANTS[name]
    p = probes(v)
    if live(name, moe_case.case):
        assert (v.status, v.failed_check) == ("fail", want), v.explain()
        assert p.get(want) == "ran", p
    else:
        assert v.status == "pass" and p.get(want) == "ran", v.explain()
