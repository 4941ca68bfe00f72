#include "reports/verdict.hpp"

#include <array>
#include <utility>

namespace moe {

namespace {
constexpr std::array<std::pair<Status, std::string_view>, 4> kStatuses = {
    {{Status::pass, "pass"}, {Status::fail, "fail"}, {Status::skip, "skip"}, {Status::error, "error"}}};
constexpr std::array<std::pair<Check, std::string_view>, 31> kChecks = {{
    {Check::none, ""},
    {Check::unwritten, "unwritten"},
    {Check::non_finite, "non_finite"},
    {Check::zero_output, "zero_output"},
    {Check::bitwise, "bitwise"},
    {Check::min_cos, "min_cos"},
    {Check::max_rel, "max_rel"},
    {Check::mismatch_fraction, "mismatch_fraction"},
    {Check::gain, "gain"},
    {Check::channel, "channel"},
    {Check::rounding_bias, "rounding_bias"},
    {Check::expert, "expert"},
    {Check::offset, "offset"},
    {Check::token_gain, "token_gain"},
    {Check::expert_partial, "expert_partial"},
    {Check::slot_direction, "slot_direction"},
    {Check::channel_group, "channel_group"},
    {Check::rerun, "rerun"},
    {Check::linearity, "linearity"},
    {Check::token_isolation, "token_isolation"},
    {Check::red_zone, "red_zone"},
    {Check::token_permutation, "token_permutation"},
    {Check::expert_relabeling, "expert_relabeling"},
    {Check::stream_order, "stream_order"},
    {Check::graph_replay, "graph_replay"},
    {Check::gating, "gating"},
    {Check::harness_error, "harness_error"},
    {Check::out_of_memory, "out_of_memory"},
    {Check::crash, "crash"},
    {Check::timeout, "timeout"},
    {Check::bad_input, "bad_input"},
}};
static_assert(std::size_t(Check::bad_input) + 1 == kChecks.size(), "every Check has a spelling");
}  // namespace

std::string_view name(Status s) {
  for (const auto& [v, n] : kStatuses)
    if (v == s) return n;
  return "?";
}
std::string_view name(Check c) {
  for (const auto& [v, n] : kChecks)
    if (v == c) return n;
  return "?";
}
std::optional<Status> parse_status(std::string_view s) {
  for (const auto& [v, n] : kStatuses)
    if (n == s) return v;
  return std::nullopt;
}
std::optional<Check> parse_check(std::string_view s) {
  for (const auto& [v, n] : kChecks)
    if (n == s) return v;
  return std::nullopt;
}
std::string check_names_list() {
  std::string s;
  for (const auto& [v, n] : kChecks)
    if (v != Check::none) s += (s.empty() ? "" : ", ") + std::string(n);
  return s;
}

}  // namespace moe
