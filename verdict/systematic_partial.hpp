// The systematic statistics that look at part of the output (docs/judging.md "Systematic errors"): an error on some
// of an expert's tokens, one direction of every slot's error, and a gain on a group of channels. Each fills a
// StatisticRecord whose z threshold and floor are set (verdict/systematic.cpp registers them in kSystematicNames):
//   expert_partial  each local token-slot's own gain beta_tj = <e_t, s_tj> / <s_tj, s_tj> with its element-wise
//                   HC0 standard error; the largest |z| among them corrected for their number (Sidak,
//                   verdict/systematic_max.hpp); shown: a failing token-slot, else the closest to failing. Needs
//                   the slots.
//   slot_direction  the sign of every local token-slot's projection <e_t, s_tj>, pooled: a sign test (null: each
//                   sign +-1 with probability 1/2, the slots of a token clustered), effect the pooled slope
//                   sum <e, s> / sum <s, s>: an intermediate rounded toward zero shrinks every slot. Needs the slots.
//   channel_group   the gain of each group of channels (aligned blocks of 32, 64, 128 and H / 8 channels, the 32
//                   and the H / 8 channels of largest reference energy), its z as `gain`'s over the group's
//                   elements, corrected for the number of groups (Sidak).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "verdict/systematic.hpp"

namespace moe {

void expert_partial(const SystematicInput& in, StatisticRecord& s);
void slot_direction(const SystematicInput& in, StatisticRecord& s);
void channel_group(const SystematicInput& in, StatisticRecord& s);

// The channel groups channel_group tests for H channels and the reference's per-channel energy sum_t r_tc^2: each
// with a label for the report ("channels 256-511", "the 32 channels of largest reference energy"). Groups of fewer
// than 2 channels (`channel` tests single channels) or of all H (`gain`) are left out.
struct ChannelGroup {
  std::string label;
  std::vector<std::int64_t> channels;
};
std::vector<ChannelGroup> channel_groups(std::int64_t hidden, const std::vector<double>& energy);

}  // namespace moe
