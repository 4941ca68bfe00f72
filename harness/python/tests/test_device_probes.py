"""The device probes' Python side (moe_harness._device_probes, docs/python.md "Device probes") on this machine's
CPU torch: the reasons they do not run, and the bookkeeping of a probe run (inputs copied into the storage the
capture read, the output reset to the sentinel before each replay, the default-stream gate retried longer) through a
fake device whose "graph" replays the recorded call; and TorchCuda's order of calls (the gate, the call on the
probes' stream, the read-back) and its capture errors against a recording stand-in for torch. The comparisons and checks are the harness's
(harness/pipeline/tests/device_probes_test.cpp, DrivenDeviceProbes); the real device is the H200 run's
(results/runs/2026-12-06-h200-python-graphs)."""
import contextlib
import sys

import numpy as np
import pytest
import torch

import moe_harness
from moe_harness import _device_probes
from moe_harness.torch import DeviceTensor, to_torch


def smoke_case():
    return moe_harness.suite("smoke", filter="*T7*")[0]


class FakeGraph:
    def __init__(self, call):
        self.call = call


class FakeSide:
    """A CPU "device": uploads are copies, the graph replays the call it recorded (capture runs nothing, as a CUDA
    capture computes nothing), `held` says which gate lengths hold the default stream."""

    def __init__(self, held=lambda cycles: True):
        self.held, self.gates, self.syncs = held, [], 0

    def upload(self, host):
        return host.clone()

    def on_stream(self):
        return contextlib.nullcontext()

    def synchronize(self):
        self.syncs += 1

    def read_back(self, dev):
        return dev.clone()

    def gated(self, call, dev_out, cycles):
        self.gates.append(cycles)
        call()
        return dev_out.clone(), self.held(cycles)

    def capture(self, call):
        return FakeGraph(call)

    def replay(self, graph):
        graph.call()


@pytest.fixture
def fake(monkeypatch):
    side = FakeSide()
    monkeypatch.setattr(_device_probes, "backend", lambda: side)
    return side


class CopiesX:
    """out = x in the output dtype (x and out are both [T, H]); records what each call read."""

    graph_safe = True  # takes device tensors: the probes run on it

    def __init__(self):
        self.seen = []

    def __call__(self, fx, out):
        x = to_torch(fx["x"])
        self.seen.append((x.data_ptr(), x.float().clone()))
        to_torch(out).copy_(x.to(to_torch(out).dtype))


def output_array(out):
    return to_torch(out).float().numpy().copy()


def test_without_cuda_the_probes_say_so_with_the_reason(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    case = smoke_case()
    why = _device_probes.begin(CopiesX(), case.fixture())
    assert why == f"torch {torch.__version__} has no CUDA device here (torch.cuda.is_available() is False)"


def test_without_torch_the_probes_say_so_with_the_reason(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch raises ImportError
    why = _device_probes._torch_cuda()
    assert why.startswith("torch is not importable (") and "driven through torch" in why, why


def test_a_kernel_without_graph_safe_is_left_alone_with_the_reason(fake):
    """A kernel that says nothing of the device (the panel's NumPy members) reads its fixture on the host: the
    probes, which hand it device tensors, say not run."""
    why = _device_probes.begin(lambda fx, out: None, smoke_case().fixture())
    assert isinstance(why, str) and "declares no graph_safe" in why, why


def test_a_native_kernel_of_this_build_is_left_to_run_with_the_reason(fake):
    why = _device_probes.begin(moe_harness.native_kernel("host"), smoke_case().fixture())
    assert why == "a native kernel of this build: `moe-harness run` drives its device work itself"


def test_the_device_fixture_holds_every_tensor_once_with_the_fixtures_attributes(fake):
    case = smoke_case()
    fx = case.fixture()
    run = _device_probes.begin(CopiesX(), fx)
    assert sorted(run.fx.keys()) == sorted(fx.keys())
    assert run.fx.spec == case.spec and run.fx.case is case and run.fx.fingerprint == fx.fingerprint
    x = run.fx["x"]
    assert isinstance(x, DeviceTensor) and x.format == fx["x"].format
    assert to_torch(x) is x.tensor  # no copy: what a graph captures is this storage
    np.testing.assert_array_equal(x.tensor.float().numpy(), to_torch(fx["x"]).float().numpy())
    with pytest.raises(KeyError, match="fixture has no tensor 'nosuch'; it has "):
        run.fx["nosuch"]


def test_replays_read_the_new_inputs_in_the_storage_the_capture_read(fake):
    case = smoke_case()
    fx = case.fixture()
    kernel = CopiesX()
    run = _device_probes.begin(kernel, fx)
    run.stream_order(case.new_output())
    run.capture()
    assert len(kernel.seen) == 1  # the capture ran nothing
    x = to_torch(fx["x"]).float().numpy()
    rolled = np.roll(x, -1, axis=0)  # row i is token (i + 1) mod T, as the harness's first replay
    x_rot = case.new_output()  # a [T, H] host tensor of x's dtype in this case (bf16 in, bf16 out)
    assert x_rot.format == fx["x"].format
    to_torch(x_rot).copy_(torch.from_numpy(rolled).to(to_torch(x_rot).dtype))
    out = case.new_output()
    run.replay(x_rot, fx["topk_ids"], fx["topk_weights"], out)
    ptrs = {p for p, _ in kernel.seen}
    assert len(ptrs) == 1, "every call read the same device storage"
    np.testing.assert_array_equal(kernel.seen[-1][1].numpy(), rolled)
    np.testing.assert_array_equal(output_array(out), rolled)


def test_each_replay_starts_from_the_sentinel(fake):
    case = smoke_case()
    fx = case.fixture()
    calls = []

    def writes_twice_only(fixture, out):
        calls.append(1)
        if len(calls) <= 2:  # the stream_order run and the first replay
            to_torch(out).fill_(1.0)
    writes_twice_only.graph_safe = True
    run = _device_probes.begin(writes_twice_only, fx)
    run.stream_order(case.new_output())
    run.capture()
    first, second = case.new_output(), case.new_output()
    run.replay(fx["x"], fx["topk_ids"], fx["topk_weights"], first)
    run.replay(fx["x"], fx["topk_ids"], fx["topk_weights"], second)
    assert (output_array(first) == 1.0).all()
    assert np.isnan(output_array(second)).all(), "the second replay wrote nothing: the sentinel, not replay 1's rows"


def test_a_gate_that_ended_before_the_read_is_tried_again_longer(monkeypatch):
    side = FakeSide(held=lambda cycles: cycles >= _device_probes.GATE_CYCLES[1])
    monkeypatch.setattr(_device_probes, "backend", lambda: side)
    case = smoke_case()
    run = _device_probes.begin(CopiesX(), case.fixture())
    out = case.new_output()
    run.stream_order(out)
    assert side.gates == list(_device_probes.GATE_CYCLES[:2])
    np.testing.assert_array_equal(output_array(out), to_torch(case.fixture()["x"]).float().numpy())


def test_a_capture_the_framework_refuses_raises_its_own_error(fake):
    def refuses(call):
        raise RuntimeError("operation not permitted when stream is capturing")
    fake.capture = refuses
    case = smoke_case()
    run = _device_probes.begin(CopiesX(), case.fixture())
    with pytest.raises(RuntimeError, match="operation not permitted when stream is capturing"):
        run.capture()


class RecordingTorch:
    """Enough of torch's CUDA API for TorchCuda, recording the order of what it does: the stream_order run's order is
    what makes the gate hold (the CUDA programming guide, "Implicit Synchronization": a page-locked host allocation
    between two streams' commands keeps them from overlapping, so it must come before the sleep is queued)."""

    def __init__(self, graph_end_error=None):
        self.log, self.current, self.graph_end_error = [], "default", graph_end_error
        outer = self

        class Stream:
            def __init__(self, name="probe", device=None):
                self.name = name

            def synchronize(self):
                outer.log.append(f"sync {self.name}")

            def query(self):
                outer.log.append(f"query {self.name}")
                return False  # still busy: the gate held

        @contextlib.contextmanager
        def stream(s):
            before, outer.current = outer.current, s.name
            yield
            outer.current = before

        @contextlib.contextmanager
        def graph(g, stream):
            outer.log.append("capture begin")
            yield
            if outer.graph_end_error:
                raise outer.graph_end_error
            outer.log.append("capture end")

        self.cuda = type("cuda", (), {
            "Stream": Stream, "stream": staticmethod(stream), "graph": staticmethod(graph),
            "current_device": staticmethod(lambda: 0),
            "default_stream": staticmethod(lambda device=None: Stream("default")),
            "synchronize": staticmethod(lambda device=None: outer.log.append("sync device")),
            "_sleep": staticmethod(lambda cycles: outer.log.append(f"sleep {cycles} on {outer.current}")),
            "CUDAGraph": type("CUDAGraph", (), {}),
        })
        self.device = lambda kind, index: f"{kind}:{index}"

    def empty(self, shape, dtype, pin_memory):
        self.log.append("allocate page-locked")
        outer = self

        class Pinned:
            def __init__(self):
                self.shape, self.dtype = shape, dtype

            def copy_(self, src, non_blocking):
                outer.log.append(f"copy back on {outer.current}")

            def clone(self):
                return "host copy"
        return Pinned()


class DeviceOut:
    shape, dtype = (3, 4), "bf16"


def test_the_gate_is_queued_after_the_page_locked_buffer_and_before_the_call_on_the_probes_stream():
    t = RecordingTorch()
    side = _device_probes.TorchCuda(t)
    host, held = side.gated(lambda: t.log.append(f"kernel on {t.current}"), DeviceOut(), 7)
    assert (host, held) == ("host copy", True)
    assert t.log == ["allocate page-locked", "sync device", "sleep 7 on default", "kernel on probe",
                     "copy back on probe", "sync probe", "query default", "sync device"]


def test_a_refused_capture_raises_the_calls_error_not_the_captures_end():
    t = RecordingTorch(graph_end_error=RuntimeError("operation failed due to a previous error during capture"))
    side = _device_probes.TorchCuda(t)

    def host_sync():
        raise RuntimeError("operation not permitted when stream is capturing")
    with pytest.raises(RuntimeError, match="operation not permitted when stream is capturing"):
        side.capture(host_sync)
    # And an end that fails on its own (the call returned) is raised as itself.
    with pytest.raises(RuntimeError, match="previous error during capture"):
        side.capture(lambda: None)
