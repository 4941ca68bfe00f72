#include "harness/pipeline/weight_cache.hpp"

#include <cstdio>
#include <utility>
#include <fmt/format.h>

#include "fixtures/error.hpp"
#include "fixtures/safetensors.hpp"
#include "harness/pipeline/reference_cache.hpp"

namespace moe {
namespace {
std::size_t bytes_of(const Checkpoint& c) {
  std::size_t n = 0;
  for (const Tensor* t : c.tensors()) n += t->nbytes();
  return n;
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
      const bool key_ok = f.metadata["moe.weights_key"] == full;
      const std::string recorded = f.metadata["moe.weights_fingerprint"];
      if (std::optional<Checkpoint> c = key_ok ? Checkpoint::from_tensors(std::move(f.tensors)) : std::nullopt;
          c && recorded == fmt::format("{:016x}", c->fingerprint())) {
        ++disk_hits_;
        return std::move(*c);
      }
    } catch (const Error&) {
      // truncated or foreign: regenerate below and overwrite it
    }
  }
  Checkpoint c = generate_expert_weights(p);
  const std::vector<const Tensor*> ts = std::as_const(c).tensors();  // under their generated names
  try {
    write_safetensors(file, ts, {{"moe.weights_key", full}, {"moe.weights_fingerprint", fmt::format("{:016x}", c.fingerprint())}});
  } catch (const Error& e) {  // a full or read-only disk costs the cache, never the case
    std::fprintf(stderr, "reference cache: weights not stored (%s)\n", e.what());
  }
  return c;
}

Checkpoint WeightCache::checkpoint_for(const ProblemSpec& p, KnownSeals* known) {
  if (known) known->clear();
  const std::string key = weights_key(p);
  auto it = entries_.begin();
  for (; it != entries_.end(); ++it) if (it->key == key) break;
  Checkpoint c;
  if (it == entries_.end()) {
    ++misses_;
    c = generate_or_load(p, key);
  } else {
    ++hits_;
    c = std::move(it->weights);  // lent: the entry leaves until the case gives the weights back
    if (known) *known = std::move(it->seals);
    bytes_ -= it->bytes;
    entries_.erase(it);
  }
  generate_inputs(p, c);
  return c;
}

void WeightCache::give_back(const ProblemSpec& p, Checkpoint&& c, const CheckpointSeal* verified) {
  for (Tensor* t : {&c.x, &c.router_logits, &c.score_bias, &c.topk_ids, &c.topk_weights}) *t = Tensor();
  KnownSeals seals;
  if (verified) {
    std::vector<std::string> names;
    for (const Tensor* t : std::as_const(c).tensors()) names.push_back(t->name());
    seals = known_seals(*verified, names);
  }
  const std::size_t b = bytes_of(c);
  while (!entries_.empty() && bytes_ + b > max_bytes_) {
    bytes_ -= entries_.back().bytes;
    entries_.pop_back();
  }
  entries_.push_front({weights_key(p), std::move(c), b, std::move(seals)});
  bytes_ += b;
}

}  // namespace moe
