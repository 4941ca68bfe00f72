#include "harness/weight_cache.hpp"

#include <cstdio>
#include <fmt/format.h>

#include "fixtures/error.hpp"
#include "fixtures/safetensors.hpp"
#include "harness/reference_cache.hpp"

namespace moe {
namespace {
std::size_t bytes_of(const Checkpoint& c) {
  std::size_t n = 0;
  for (const Tensor* t : c.tensors()) n += t->nbytes();
  return n;
}
void clone_weights(const ExpertWeights& from, ExpertWeights& to) {
  to.w13 = from.w13.clone(); to.w13_scale = from.w13_scale.clone();
  to.w2 = from.w2.clone(); to.w2_scale = from.w2_scale.clone();
  to.w13_bias = from.w13_bias.clone(); to.w2_bias = from.w2_bias.clone();
}
std::vector<std::pair<std::string, Tensor*>> slots(Checkpoint& c) {
  std::vector<std::pair<std::string, Tensor*>> v;
  for (auto [prefix, w] : {std::pair{"", &c.routed}, std::pair{"shared_", &c.shared}})
    for (auto [n, t] : {std::pair{"w13", &w->w13}, std::pair{"w13_scale", &w->w13_scale}, std::pair{"w2", &w->w2},
                        std::pair{"w2_scale", &w->w2_scale}, std::pair{"w13_bias", &w->w13_bias},
                        std::pair{"w2_bias", &w->w2_bias}})
      v.emplace_back(std::string(prefix) + n, t);
  return v;
}
}  // namespace

Checkpoint WeightCache::generate_or_load(const ProblemSpec& p, const std::string& key) {
  if (disk_dir_.empty()) return generate_expert_weights(p);
  const std::string full = key + "|ref=" + reference_version();
  const auto file = disk_dir_ / fmt::format("weights-{:016x}.safetensors", hash_bytes(full.data(), full.size()));
  std::error_code ec;
  if (std::filesystem::exists(file, ec)) {
    try {
      SafetensorsFile f = read_safetensors(file);
      Checkpoint c;
      std::size_t found = 0;
      for (auto& [n, slot] : slots(c))
        for (Tensor& t : f.tensors)
          if (t.name() == n) { *slot = std::move(t); ++found; }
      if (found == f.tensors.size() && f.metadata["moe.weights_key"] == full &&
          f.metadata["moe.weights_fingerprint"] == fmt::format("{:016x}", c.fingerprint())) {
        ++disk_hits_;
        return c;
      }
    } catch (const Error&) {
      // truncated or foreign: regenerate below and overwrite it
    }
  }
  Checkpoint c = generate_expert_weights(p);
  std::vector<const Tensor*> ts;
  for (auto& [n, slot] : slots(c))
    if (!slot->empty()) ts.push_back(slot);  // generated under these names (fixtures/checkpoint.cpp)
  try {
    write_safetensors(file, ts, {{"moe.weights_key", full}, {"moe.weights_fingerprint", fmt::format("{:016x}", c.fingerprint())}});
  } catch (const Error& e) {  // a full or read-only disk costs the cache, never the case
    std::fprintf(stderr, "reference cache: weights not stored (%s)\n", e.what());
  }
  return c;
}

Checkpoint WeightCache::checkpoint_for(const ProblemSpec& p) {
  const std::string key = weights_key(p);
  auto it = entries_.begin();
  for (; it != entries_.end(); ++it) if (it->key == key) break;
  if (it == entries_.end()) {
    ++misses_;
    Checkpoint w = generate_or_load(p, key);
    const std::size_t b = bytes_of(w);
    while (!entries_.empty() && bytes_ + b > max_bytes_) {
      bytes_ -= entries_.back().bytes;
      entries_.pop_back();
    }
    entries_.push_front({key, std::move(w), b});
    bytes_ += b;
    it = entries_.begin();
  } else {
    ++hits_;
    entries_.splice(entries_.begin(), entries_, it);
    it = entries_.begin();
  }
  Checkpoint c;
  clone_weights(it->weights.routed, c.routed);
  clone_weights(it->weights.shared, c.shared);
  generate_inputs(p, c);
  return c;
}

}  // namespace moe
