"""The device probes' device work on a Python kernel (docs/python.md "Device probes"). The harness
(harness/pipeline/device_probes.cpp, through harness/python/native/python_kernel.cpp) makes the replays' inputs,
compares every output with the judged run's and judges; this module runs the kernel's calls on the device, as a
serving engine does:

  begin(kernel, fixture)  every tensor of the judged call's fixture uploaded once to the device (the fixture the
                          calls below get: moe_harness.torch.DeviceTensor's, .spec and .case as on the fixture),
                          or the reason the probes cannot run here (a str: no torch, no CUDA device, a native kernel
                          of this build, whose device work `run` drives itself);
  stream_order(out)       kernel(fixture, device out) on a stream of its own (non-blocking), the default stream held
                          busy by a sleep kernel queued before it, the output read back on that stream only, then
                          checked that the default stream was still busy then (else again with a longer sleep);
  capture()               one call captured into a torch CUDA graph on that stream (torch.cuda.graph(g, stream=s));
                          the framework's exception when it refuses (a host sync, a copy from pageable memory);
  replay(x, ids, w, out)  the new x and routing copied into the storage the capture read, the device output reset
                          to the sentinel, the graph replayed, its output read back;
  close()                 drops the graph and the device copies.

`out` is a host moe_harness.Tensor holding the sentinel; the output is copied into it. `backend` makes the device
side (TorchCuda); the tests put a fake there.
"""
import contextlib

from moe_harness import _moe_harness as _native
from moe_harness.torch import DeviceTensor, to_torch

# Sleep lengths (GPU clock cycles) tried in turn to hold the default stream busy through a stream_order run: about
# 0.05 s at 2 GHz first; longer only when the gate ended before the output was read back.
GATE_CYCLES = (10 ** 8, 10 ** 9, 10 ** 10)


class TorchCuda:
    """The device side on torch's current CUDA device."""

    def __init__(self, torch):
        self.torch = torch
        self.device = torch.device("cuda", torch.cuda.current_device())
        self.stream = torch.cuda.Stream(device=self.device)  # a pool stream: created non-blocking
        self._pinned = None

    def upload(self, host):
        return host.to(self.device)

    def on_stream(self):
        return self.torch.cuda.stream(self.stream)

    def synchronize(self):
        self.torch.cuda.synchronize(self.device)

    def _pinned_like(self, dev):
        """One page-locked host buffer for the output, made outside any gate (allocating page-locked memory is an
        implicit synchronization point between streams, which would wait the gate out)."""
        if self._pinned is None or self._pinned.shape != dev.shape or self._pinned.dtype != dev.dtype:
            self._pinned = self.torch.empty(dev.shape, dtype=dev.dtype, pin_memory=True)
        return self._pinned

    def read_back(self, dev):
        """dev copied to the host on the probes' stream, waiting for that stream only."""
        pinned = self._pinned_like(dev)
        with self.on_stream():
            pinned.copy_(dev, non_blocking=True)
        self.stream.synchronize()
        return pinned.clone()

    def gated(self, call, dev_out, cycles):
        """call() on the probes' stream behind a sleep of `cycles` on the default stream; (its output read back on
        the probes' stream, whether the default stream was still busy after that read)."""
        self._pinned_like(dev_out)
        self.synchronize()
        with self.torch.cuda.stream(self.torch.cuda.default_stream(self.device)):
            self.torch.cuda._sleep(int(cycles))
        with self.on_stream():
            call()
        host = self.read_back(dev_out)
        held = not self.torch.cuda.default_stream(self.device).query()
        self.synchronize()  # the sleep, and whatever the kernel put behind it, ends before the next step
        return host, held

    def capture(self, call):
        graph = self.torch.cuda.CUDAGraph()
        failed = None
        try:
            with self.torch.cuda.graph(graph, stream=self.stream):
                try:
                    call()
                except BaseException as e:  # the capture's end then fails too: the call's error is the one to say
                    failed = e
        except BaseException:
            if failed is None:
                raise
        if failed is not None:
            raise failed
        return graph

    def replay(self, graph):
        with self.on_stream():
            graph.replay()


def _torch_cuda():
    try:
        import torch
    except ImportError as e:
        return f"torch is not importable ({e}): a Python kernel's device work is driven through torch"
    if not torch.cuda.is_available():
        return f"torch {torch.__version__} has no CUDA device here (torch.cuda.is_available() is False)"
    return TorchCuda(torch)


backend = _torch_cuda


def begin(kernel, fixture):
    if isinstance(kernel, _native.NativeKernel):
        return "a native kernel of this build: `moe-harness run` drives its device work itself"
    if not hasattr(kernel, "graph_safe"):
        # The probes hand the kernel device tensors; a kernel that reads its fixture on the host (NumPy) cannot take
        # them, so only a kernel that says how it runs on the device (graph_safe True or False) is probed.
        return ("the kernel declares no graph_safe: the device probes call it with device tensors, which a kernel "
                "reading its fixture on the host cannot take; declare graph_safe = True (or False: stream_order only)")
    side = backend()
    if isinstance(side, str):
        return side
    return ProbeRun(kernel, fixture, side)


class _DeviceFixture:
    """The fixture of the probes' calls: name -> DeviceTensor, with the host fixture's spec, case, fingerprint."""

    def __init__(self, fixture, side):
        self._tensors = {name: DeviceTensor(fixture[name].format, side.upload(to_torch(fixture[name])))
                         for name in fixture.keys()}
        self.spec = getattr(fixture, "spec", None)
        self.case = getattr(fixture, "case", None)
        self.fingerprint = fixture.fingerprint

    def __getitem__(self, name):
        try:
            return self._tensors[name]
        except KeyError:
            raise KeyError(f"fixture has no tensor '{name}'; it has {', '.join(self._tensors)}") from None

    def __contains__(self, name):
        return name in self._tensors

    def keys(self):
        return list(self._tensors)

    def __iter__(self):
        return iter(self._tensors)

    def __len__(self):
        return len(self._tensors)


class ProbeRun:
    def __init__(self, kernel, fixture, side):
        self.kernel, self.side = kernel, side
        self.fx = _DeviceFixture(fixture, side)
        self.out = None  # the device output, made from the first sentinel output handed in
        self.graph = None
        side.synchronize()

    def _reset(self, out):
        """The device output set to the sentinel `out` holds (the same storage every time: the graph writes it)."""
        host = to_torch(out)
        if self.out is None:
            self.out = DeviceTensor(out.format, self.side.upload(host))
        else:
            self.out.tensor.copy_(host)
        self.side.synchronize()

    def _call(self):
        self.kernel(self.fx, self.out)

    def stream_order(self, out):
        host = None
        for cycles in GATE_CYCLES:
            self._reset(out)
            host, held = self.side.gated(self._call, self.out.tensor, cycles)
            if held:
                break
        # Not held even by the longest sleep: the kernel waited for the default stream itself (a device-wide
        # synchronize), so its output is ordered; the comparison stands.
        to_torch(out).copy_(host)

    def capture(self):
        self.side.synchronize()
        self.graph = self.side.capture(self._call)

    def replay(self, x, topk_ids, topk_weights, out):
        for name, value in (("x", x), ("topk_ids", topk_ids), ("topk_weights", topk_weights)):
            self.fx[name].tensor.copy_(to_torch(value))  # into the storage the capture read
        self._reset(out)
        self.side.replay(self.graph)
        to_torch(out).copy_(self.side.read_back(self.out.tensor))

    def close(self):
        self.graph = None
        self.fx = self.out = None
        with contextlib.suppress(Exception):
            self.side.synchronize()
