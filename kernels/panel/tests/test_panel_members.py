"""What the panel's members take from their pipelines' source (docs/numerics.md "Where production pipelines round"),
checked against values computed by hand: vLLM's two roundings around SiLU-and-mul, AITER's scale formula."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from panel_formats import round_to  # noqa: E402
from panel_members import AiterStyle, VllmStyle, _act  # noqa: E402
from panel_quant import Fp8Formula, quantize  # noqa: E402


def _spec(kind):
    return {"activation": {"kind": kind, "layout": "gate_up", "swiglu_alpha": 1.702, "swiglu_limit": 7.0},
            "shape": {"topk": 8, "n_shared": 0}}


def test_vllm_silu_rounds_the_gate_activation_before_the_up_multiply():
    # g = 1, u = 2.25. silu(1) = 1 / (1 + e^-1) = 0.7310585786; in bf16 (ulp 2^-8 on [0.5, 1)): 187.15 ulps -> 187,
    # 0.73046875. Times 2.25 = 1.6435546875 exactly; in bf16 (ulp 2^-7 on [1, 2)): 210.375 ulps -> 210 = 1.640625.
    # Rounded once instead: 0.7310585786 * 2.25 = 1.6448818019 -> 210.545 ulps -> 211 = 1.6484375.
    h = np.array([[1.0, 2.25]], np.float32)
    spec = _spec("silu")
    member = VllmStyle()
    assert member.act_gate(spec) == "bf16"
    assert round_to(_act(h, spec, True, member.act_gate(spec)), "bf16")[0, 0] == 1.640625
    assert round_to(_act(h, spec, True, "f32"), "bf16")[0, 0] == 1.6484375
    assert "act_gate=bf16" in member.contract_points(spec)


def test_vllm_swiglu_oai_keeps_one_rounding():
    # gpt-oss's SwiGLU does not go through silu_and_mul in vLLM: nothing to declare
    spec = _spec("swiglu_oai")
    assert VllmStyle().act_gate(spec) == "f32"
    assert not [p for p in VllmStyle().contract_points(spec) if p.startswith("act_gate")]


def test_aiter_scale_is_amax_times_the_reciprocal_of_qmax():
    # amax 3, qmax 448: 3 / 448 = 1.b6db6db6...p-8 rounds up to 0x1.b6db6ep-8. fp32(1 / 448) = 0x1.24924ap-9
    # (1.249249... rounded up); 3 * 0x1.24924ap-9 = 0x1.b6db6f p-8 exactly, a tie at 23 fraction bits that goes to
    # even: 0x1.b6db70p-8.
    x = np.array([[3.0, -1.5, 0.75, 0.0]], np.float32)
    q = {"act": "fp8_token", "flavor": "fn", "qmax": 0, "amax_floor": 1e-10, "scale_pow2": False}
    assert float(quantize(x, q, Fp8Formula()).s[0, 0]) == float.fromhex("0x1.b6db6ep-8")
    source = AiterStyle(source_scale=True).formula
    assert float(quantize(x, q, source).s[0, 0]) == float.fromhex("0x1.b6db70p-8")
    # the formula's declared points: the scale's form and the reciprocal codes; `aiter` declares the codes only
    assert source.contract_points() == ["token_scale_form=qmax_reciprocal", "group_scale_form=qmax_reciprocal",
                                        "token_scale=reciprocal", "group_scale=reciprocal"]
    assert AiterStyle().formula.contract_points() == ["token_scale=reciprocal", "group_scale=reciprocal"]


def test_aiter_scale_form_moves_codes_at_the_ties_bf16_values_make():
    # x = 0.6328125 and amax 2.625 (both bf16): s = 2.625 / 448 = 0.005859375 exactly (2.625 = 21 / 8, 448 = 7 * 64:
    # s = 3 / 512), x * fp32(1 / s) = 108 exactly (fp32(512 / 3) is 3e-8 relative high, under half an ulp of 108),
    # the midpoint of e4m3's 104 and 112 (spacing 8 on [64, 128)): ties to even, 112. fp32(1 / 448) is above 1 / 448,
    # so AITER's s is above 3 / 512 and x * fp32(1 / s) falls below 108 by more than half an ulp: 104.
    x = np.array([[0.6328125, 2.625]], np.float32)
    q = {"act": "fp8_token", "flavor": "fn", "qmax": 0, "amax_floor": 1e-10, "scale_pow2": False}
    assert quantize(x, q, AiterStyle().formula).v[0, 0] == 112
    assert quantize(x, q, AiterStyle(source_scale=True).formula).v[0, 0] == 104
