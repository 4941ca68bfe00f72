"""The noisyX member of slot_requant.py and slot_se.py: the GPU members' pipeline (panel_torch.TorchVllmStyle) on the
CPU with its fp8 GEMMs as an fp64 product plus X * 2^-14 ||a|| ||w|| times a standard normal per output element."""
import numpy as np


def noisy(x):
    import panel_torch

    class Noisy(panel_torch.TorchVllmStyle):
        id = f"noisy{x}"

        def __init__(self):
            super().__init__("cpu")
            self.fp8_units, self.rng = True, np.random.default_rng(0)

        def _fp8_dot(self, a, w):
            a64, w64 = a.astype(np.float64), w.astype(np.float64)
            norm = np.linalg.norm(a64, axis=1)[:, None] * np.linalg.norm(w64, axis=1)[None, :]
            return (a64 @ w64.T + x * 2.0 ** -14 * self.rng.standard_normal((a.shape[0], w.shape[0])) * norm
                    ).astype(np.float32)

        def deterministic(self, case):
            return False
    return Noisy()
