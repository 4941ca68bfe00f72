// Expert weights shared by the cases of a run: cases that differ only in tokens, reduce mode, stage or activation
// layout use the same checkpoint weights (fixtures/checkpoint.hpp weights_key), generated once and kept, least
// recently used first out, under a byte budget. A case borrows them: checkpoint_for() moves the weights out of the
// cache into the case's pristine checkpoint (no copy), and give_back() returns them once the case has shown them
// unchanged (the pristine check after the kernel), with the seal that check proved, so the next case takes their
// fingerprints and digests from it instead of hashing them again (fixtures/content_seal.hpp). Weights never given back (the case stopped before that
// check, or the check failed) are generated again when next needed, so no case ever sees weights another wrote.
// With a disk directory (`run --reference-cache DIR`), generated weights are also kept there across runs, keyed by
// (weights key, reference version): a bisect step loads them instead of generating them again. A file whose bytes
// no longer match the fingerprint recorded when it was written is regenerated, never used.
#pragma once
#include <cstdint>
#include <filesystem>
#include <list>
#include <string>

#include "fixtures/checkpoint.hpp"
#include "fixtures/content_seal.hpp"

namespace moe {

class WeightCache {
 public:
  explicit WeightCache(std::size_t max_bytes = std::size_t(6) << 30, std::filesystem::path disk_dir = {})
      : max_bytes_(max_bytes), disk_dir_(std::move(disk_dir)) {}
  // The pristine checkpoint for p: the cached weights (lent) or freshly generated ones, plus p's inputs. `known`,
  // when given, receives the weights' seals that the case that gave them back proved (empty for new weights), for
  // seal_checkpoint (fixtures/content_seal.hpp): the weights are then not hashed again before the kernel.
  Checkpoint checkpoint_for(const ProblemSpec& p, KnownSeals* known = nullptr);
  // Returns a checkpoint's weights for p's later cases (its inputs are dropped). Only for a checkpoint that
  // checkpoint_for(p) gave and whose content the caller has seen unchanged since; `verified`, when given, is the
  // seal that changed_since() found the checkpoint equal to after the kernel: the weights' parts are kept with them.
  void give_back(const ProblemSpec& p, Checkpoint&& c, const CheckpointSeal* verified = nullptr);
  std::size_t hits() const { return hits_; }
  std::size_t misses() const { return misses_; }
  std::size_t disk_hits() const { return disk_hits_; }
  std::size_t bytes() const { return bytes_; }  // held now

 private:
  struct Entry { std::string key; Checkpoint weights; std::size_t bytes; KnownSeals seals; };
  Checkpoint generate_or_load(const ProblemSpec& p, const std::string& key);
  std::list<Entry> entries_;
  std::size_t bytes_ = 0, max_bytes_, hits_ = 0, misses_ = 0, disk_hits_ = 0;
  std::filesystem::path disk_dir_;
};

}  // namespace moe
