"""The panel's own format tables and quantizers against values the specifications state (OCP FP8 E4M3, AMD's fnuz
variant, OCP MX v1.0 E2M1 / E8M0, bfloat16 round-to-nearest-even), never against the harness's codecs."""
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from panel_formats import E2M1, E4M3, e2m1_unpack, e8m0_values, round_bf16, round_e4m3  # noqa: E402
from panel_quant import Fp8Formula, quantize  # noqa: E402


def test_e4m3_tables_match_the_spec():
    fn, fnuz = E4M3["e4m3fn"], E4M3["e4m3fnuz"]
    assert fn[0x7E] == 448 and fn[0x01] == 2.0 ** -9 and fn[0x08] == 2.0 ** -6 and fn[0x38] == 1.0
    assert math.isnan(fn[0x7F]) and math.isnan(fn[0xFF]) and fn[0x80] == 0 and math.copysign(1, fn[0x80]) < 0
    assert fnuz[0x7F] == 240 and fnuz[0x01] == 2.0 ** -10 and math.isnan(fnuz[0x80])
    # every code but the NaNs: value_fnuz = value_fn / 2
    for c in range(256):
        if c not in (0x7F, 0xFF, 0x80):
            assert fnuz[c] == fn[c] / 2, hex(c)


def test_e2m1_e8m0_and_nibble_order():
    assert list(E2M1[:8]) == [0, 0.5, 1, 1.5, 2, 3, 4, 6] and E2M1[0xF] == -6
    assert list(e2m1_unpack(np.array([[0x21]], np.uint8))[0]) == [1, 2]  # the even element in the low nibble
    ocp, tri = e8m0_values("ocp"), e8m0_values("triton")
    assert ocp[127] == 1 and ocp[0] == 2.0 ** -127 and math.isnan(ocp[255])
    assert tri[0] == 0 and math.isinf(tri[255])


def test_rounding_to_nearest_even():
    assert round_bf16(np.float32(1 + 2 ** -8))[()] == 1.0  # a tie goes to the even mantissa
    assert round_bf16(np.float32(1 + 3 * 2 ** -8))[()] == 1 + 2 ** -6
    v = np.array([0.25, 464, 470, -1.0625, 2 ** -10, 3 * 2 ** -11], np.float32)
    assert list(round_e4m3(v, "fn")) == [0.25, 448, 448, -1.0, 0, 2 ** -9]


def test_quantizer_formulas():
    # s = max(amax, floor) / qmax: amax 4 -> codes 56, -112, 224, 448 (x / s exact)
    x = np.array([[0.5, -1.0, 2.0, 4.0]], np.float32)
    q = {"act": "fp8_token", "flavor": "fn", "qmax": 0, "amax_floor": 1e-10, "scale_pow2": False}
    z = quantize(x, q, Fp8Formula())
    assert z.s[0, 0] == np.float32(4.0) / np.float32(448) and list(z.v[0]) == [56, -112, 224, 448]
    # vLLM's per-token floor 1 / 512: an all-small row takes the floor's scale
    tiny = np.full((1, 4), 1e-4, np.float32)
    assert quantize(tiny, q, Fp8Formula(token_floor=1 / 512)).s[0, 0] == np.float32(1 / 512) / np.float32(448)
    # x / s and x * (1 / s) on a tie (formats/tests/fp8_quant_test.cpp's hand-computed case): 1.125 and 1.25
    t = np.array([[3.5624997615814209, 1344.0]], np.float32)
    assert quantize(t, q, Fp8Formula()).v[0, 0] == 1.125
    assert quantize(t, q, Fp8Formula(reciprocal=True)).v[0, 0] == 1.25
