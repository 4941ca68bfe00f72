#include "harness/case/case_spec.hpp"

#include "harness/case/case_fields.hpp"

namespace moe {
namespace {

// The id's spelling of a number (harness/case/case_fields.hpp).
std::string num(float v) { return id_number(v); }

}  // namespace

bool is_decode(const ProblemSpec& p) { return p.tokens <= 64; }

std::string quant_short_name(const QuantScheme& q) {
  const WeightFormatInfo& f = weight_format_info(q.weight);
  std::string w = f.id_fragment;
  const bool fp8a = q.act == ActFormat::fp8_token || q.act == ActFormat::fp8_group128;
  if ((f.case_flavor || fp8a) && q.flavor == Fp8Flavor::fnuz) w += "-fnuz";
  switch (q.act) {
    case ActFormat::none: w += ".a16"; break;
    case ActFormat::fp8_token: w += ".tok"; break;
    case ActFormat::fp8_group128: w += ".g128"; break;
    case ActFormat::mxfp8: w += ".mx8"; break;
  }
  if (q.act_qmax > 0) w += "-q" + num(q.act_qmax);
  if (q.act_scale_pow2) w += "-ue8m0";
  if ((q.act == ActFormat::fp8_token || q.act == ActFormat::fp8_group128) && q.act_amax_floor != QuantScheme{}.act_amax_floor)
    w += "-fl" + num(q.act_amax_floor);
  if (is_mx(f) || q.act == ActFormat::mxfp8) {
    w += "-" + std::string(name(q.mx_mode));
    if (q.e8m0_edges == E8m0Edges::triton) w += "-tri";
  }
  return w;
}

}  // namespace moe
