#include "harness/weight_cache.hpp"

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
}  // namespace

Checkpoint WeightCache::checkpoint_for(const ProblemSpec& p) {
  const std::string key = weights_key(p);
  auto it = entries_.begin();
  for (; it != entries_.end(); ++it) if (it->key == key) break;
  if (it == entries_.end()) {
    ++misses_;
    Checkpoint w = generate_expert_weights(p);
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
