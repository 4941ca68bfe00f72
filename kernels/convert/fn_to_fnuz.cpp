#include "kernels/convert/fn_to_fnuz.hpp"

#include "fixtures/error.hpp"

namespace moe {

FnuzConversionReport convert_fn_to_fnuz_in_place(Tensor& weight, std::span<Tensor* const> scales) {
  if (weight.dtype() != DType::e4m3fn)
    throw_harness_error("fn->fnuz conversion of " + weight.name(),
                        "expected an e4m3fn tensor, got " + std::string(dtype_name(weight.dtype())),
                        "convert each checkpoint tensor exactly once");
  for (Tensor* s : scales)
    if (s->dtype() != DType::f32)
      throw_harness_error("fn->fnuz conversion of " + weight.name(), "scale tensor " + s->name() + " is not f32");
  FnuzConversionReport rep;
  for (std::uint8_t& b : weight.span<std::uint8_t>()) {
    if (b == 0x80) { b = 0x00; ++rep.negative_zeros_zeroed; }
    else if ((b & 0x7F) == 0x7F) ++rep.nan_codes_now_finite;
  }
  weight.reinterpret(DType::e4m3fnuz);
  for (Tensor* s : scales) {
    for (float& v : s->span<float>()) v *= 2.0f;
    rep.scales_doubled += s->numel();
  }
  return rep;
}

}  // namespace moe
