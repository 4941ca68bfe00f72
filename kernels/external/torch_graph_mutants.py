"""Graph and stream mutants of the torch example (kernels/external/torch_moe.py) for the device probes of Python
kernels (docs/python.md "Device probes"): each is TorchMoe on a device, capturable, with one defect of the kind CUDA
graphs and streams expose in serving engines. Every eager call on the default stream is right, so the judged run
and every host-side probe pass; only its device probe can catch it:

  graph_baked_weights    the router weights read as Python floats while the kernel is not capturing (its previous
                         call's) and launched as constants (one fill_ each) inside the captured call: a graph replays
                         the capture's weights. graph_replay, on the rotated replay, wherever rotating the tokens by
                         one changes some token's weights.
  graph_stale_workspace  while capturing, the kernel allocates its workspace inside the captured region and fills it
                         from the result of its last eager call instead of computing the layer (a cache that trusts
                         a graph to be replayed on the inputs it was captured with): replays read that stale one.
                         graph_replay, on the rotated replay, from 2 tokens.
  default_stream_launch  every launch on the default stream, whatever stream is current: right in eager use, where
                         the current stream is the default one. stream_order, on every case.

graph_mutant(NAME, device="cuda") makes one; MUTANTS names them with the probe that must catch each.
"""
import contextlib

import torch

from moe_harness.torch import DeviceTensor, to_torch
from torch_moe import TorchMoe

MUTANTS = {"graph_baked_weights": "graph_replay", "graph_stale_workspace": "graph_replay",
           "default_stream_launch": "stream_order"}


def _capturing():
    return torch.cuda.is_available() and torch.cuda.is_current_stream_capturing()


class _WeightsAsFloats:
    """The fixture with topk_weights replaced (the other tensors as given)."""

    def __init__(self, fx, weights):
        self._fx, self._weights = fx, weights
        self.spec = fx.spec

    def __contains__(self, name):
        return name in self._fx

    def __getitem__(self, name):
        return self._weights if name == "topk_weights" else self._fx[name]


class GraphBakedWeights(TorchMoe):
    id = "torch-moe~graph_baked_weights"

    def __call__(self, fx, out):
        w = to_torch(fx["topk_weights"], self.device)
        if not _capturing():
            self._floats = w.reshape(-1).tolist()  # a host sync: never while capturing
        baked = torch.empty_like(w).reshape(-1)
        for i, value in enumerate(self._floats):
            baked[i].fill_(value)  # the value is the launch's argument: a graph keeps it
        fmt = fx["topk_weights"].format
        return super().__call__(_WeightsAsFloats(fx, DeviceTensor(fmt, baked.view_as(w))), out)


class GraphStaleWorkspace(TorchMoe):
    id = "torch-moe~graph_stale_workspace"

    def __call__(self, fx, out):
        target = to_torch(out)
        if _capturing():
            workspace = torch.empty_like(self._last)  # from the graph's pool: allocated inside the captured region
            workspace.copy_(self._last)               # the last eager result, copied on every replay
            target.copy_(workspace)
            return self.variant()
        variant = super().__call__(fx, out)
        self._last = target.detach().clone()
        return variant


class DefaultStreamLaunch(TorchMoe):
    id = "torch-moe~default_stream_launch"

    def __call__(self, fx, out):
        on_cpu = torch.device(self.device).type == "cpu"  # the CPU tests' eager check: no stream there
        with contextlib.nullcontext() if on_cpu else torch.cuda.stream(torch.cuda.default_stream()):
            return super().__call__(fx, out)


_CLASSES = {"graph_baked_weights": GraphBakedWeights, "graph_stale_workspace": GraphStaleWorkspace,
            "default_stream_launch": DefaultStreamLaunch}


def graph_mutant(name, device="cuda"):
    if name not in _CLASSES:
        raise ValueError(f"torch_graph_mutants: unknown mutant {name!r}; one of {', '.join(_CLASSES)}")
    k = _CLASSES[name](device=device, capturable=True)
    k.version += f" mutant {name}"
    return k
