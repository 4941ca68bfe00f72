// Expert weights shared by the cases of a run: cases that differ only in tokens, reduce mode, stage or activation
// layout use the same checkpoint weights (fixtures/checkpoint.hpp weights_key), generated once and kept, least
// recently used first out, under a byte budget. Entries are never handed out mutable: each case gets a clone.
#pragma once
#include <cstdint>
#include <list>
#include <string>

#include "fixtures/checkpoint.hpp"

namespace moe {

class WeightCache {
 public:
  explicit WeightCache(std::size_t max_bytes = std::size_t(6) << 30) : max_bytes_(max_bytes) {}
  // A fresh pristine checkpoint for p: cached weights (cloned) plus p's inputs.
  Checkpoint checkpoint_for(const ProblemSpec& p);
  std::size_t hits() const { return hits_; }
  std::size_t misses() const { return misses_; }

 private:
  struct Entry { std::string key; Checkpoint weights; std::size_t bytes; };
  std::list<Entry> entries_;
  std::size_t bytes_ = 0, max_bytes_, hits_ = 0, misses_ = 0;
};

}  // namespace moe
