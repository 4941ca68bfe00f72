// The canonical id: the fragments of the case-field table's rows (harness/case/case_fields.cpp) in their id order.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "harness/case/case_fields.hpp"
#include "harness/case/model_presets.hpp"

namespace moe {

std::string id_number(float v) {
  char b[32];
  if (v == std::floor(v) && std::fabs(v) < 1e9f) {
    std::snprintf(b, sizeof b, "%.0f", double(v));
    return b;
  }
  for (int prec = 1; prec <= 9; ++prec) {
    std::snprintf(b, sizeof b, "%.*g", prec, double(v));
    if (float(std::strtod(b, nullptr)) == v) break;
  }
  return b;
}

std::string canonical_id(const CaseSpec& c) {
  static const std::vector<const CaseField*> in_id_order = [] {
    std::vector<const CaseField*> v;
    for (const CaseField& f : case_fields())
      if (f.id) v.push_back(&f);
    std::stable_sort(v.begin(), v.end(), [](const CaseField* a, const CaseField* b) { return a->id_order < b->id_order; });
    return v;
  }();
  IdBase base;
  base.is_preset = apply_model_preset(c.model, base.preset);
  std::string id;
  for (const CaseField* f : in_id_order) id += f->id(c, base);
  return id;
}

}  // namespace moe
