#!/usr/bin/env python3
"""Baselines for the GPU speed figures, run on the GPU machine beside `moe-harness run --suite bench`:
  1. device-to-device copy bandwidth (the ceiling for bandwidth-bound decode),
  2. a torch._grouped_mm MoE pipeline on the same shapes: sort (token, k) by expert, grouped gate-up GEMM,
     silu(gate) * up, grouped down GEMM, weighted scatter-add. Times with CUDA events: median of 20 after warm-up.
Not a test dependency; prints one JSON object.
"""
import json
import torch

SHAPES = [  # name, T, H, I (local), E, k
    ("qwen3-30b-a3b/T16", 16, 2048, 768, 128, 8),
    ("deepseek-v3-tp8/T4", 4, 7168, 256, 256, 8),
    ("deepseek-v3-tp8/T4096", 4096, 7168, 256, 256, 8),
    ("h2048-i128-e256-k8/T8192", 8192, 2048, 128, 256, 8),
]


def timed(fn, reps=20):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b))
    ts.sort()
    return ts[len(ts) // 2] * 1e3  # microseconds


def main():
    dev = torch.device("cuda")
    out = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__}
    n = 1 << 30
    src, dst = torch.empty(n, dtype=torch.uint8, device=dev), torch.empty(n, dtype=torch.uint8, device=dev)
    us = timed(lambda: dst.copy_(src))
    out["copy_tbps"] = 2 * n / (us * 1e-6) / 1e12  # read + write
    out["copy_read_tbps"] = n / (us * 1e-6) / 1e12
    g = torch.Generator(device=dev).manual_seed(0)
    for name, T, H, I, E, k in SHAPES:
        x = torch.randn(T, H, device=dev, dtype=torch.bfloat16, generator=g)
        w13 = torch.randn(E, 2 * I, H, device=dev, dtype=torch.bfloat16, generator=g) / H ** 0.5
        w2 = torch.randn(E, H, I, device=dev, dtype=torch.bfloat16, generator=g) / I ** 0.5
        logits = torch.randn(T, E, device=dev, generator=g)
        wts, ids = torch.topk(torch.softmax(logits, -1), k, dim=-1)
        wts = (wts / wts.sum(-1, keepdim=True)).to(torch.float32)

        def pipeline():
            flat = ids.flatten()
            order = torch.argsort(flat, stable=True)
            counts = torch.bincount(flat, minlength=E)
            offs = torch.cumsum(counts, 0).to(torch.int32)
            xs = x[order // k]
            h = torch._grouped_mm(xs, w13.transpose(1, 2), offs=offs)
            z = torch.nn.functional.silu(h[:, :I]) * h[:, I:]
            y = torch._grouped_mm(z, w2.transpose(1, 2), offs=offs)
            o = torch.zeros(T, H, device=dev, dtype=torch.float32)
            o.index_add_(0, order // k, y.float() * wts.flatten()[order, None])
            return o

        us = timed(pipeline)
        hit = torch.unique(ids).numel()
        weight_bytes = hit * 3 * H * I * 2
        flops = 2 * T * k * 3 * H * I
        out[name] = {"us": us, "weight_tbps": weight_bytes / (us * 1e-6) / 1e12, "tflops": flops / (us * 1e-6) / 1e12,
                     "experts_hit": hit}
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
