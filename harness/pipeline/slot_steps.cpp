#include "harness/pipeline/slot_steps.hpp"

#include <exception>
#include <map>
#include <memory>
#include <utility>

#include "reference/moe/band_explain.hpp"
#include "reference/moe/ensemble.hpp"

namespace moe {

bool narrow_accumulation(const ProblemSpec& p) {
  return gemm_accum_bits(p, p.quant) < 24 || (p.n_shared > 0 && gemm_accum_bits(p, p.shared_quant) < 24);
}

SystematicInput::SlotSteps case_slot_steps(const ProblemSpec& p, const Checkpoint* weights, const RoutingResult& routing,
                                           std::vector<std::int64_t> rows) {
  if (!weights || !narrow_accumulation(p)) return {};
  using Steps = std::vector<std::vector<double>>;
  auto memo = std::make_shared<std::map<std::pair<std::int64_t, std::int64_t>, Steps>>();
  auto one = [&p, weights, &routing, memo](std::int64_t token, std::int64_t slot) -> const Steps& {
    auto it = memo->find({token, slot});
    if (it == memo->end()) {
      Steps steps;
      try {
        steps = slot_scale_steps(p, *weights, routing, token, slot);
      } catch (const std::exception&) {
        steps.clear();  // the statistics never throw (verdict/systematic.hpp): no explanation
      }
      it = memo->emplace(std::pair{token, slot}, std::move(steps)).first;
    }
    return it->second;
  };
  return [one, rows = std::move(rows), k = routing.k, shared = p.ep_rank == 0 ? p.n_shared : 0](std::int64_t row,
                                                                                              std::int64_t slot) {
    const std::int64_t token = rows.empty() ? row : rows.at(std::size_t(row));
    if (slot >= 0) return one(token, slot);
    Steps all;
    for (std::int64_t j = 0; j < k + shared; ++j)
      for (const auto& v : one(token, j)) all.push_back(v);
    return all;
  };
}

}  // namespace moe
