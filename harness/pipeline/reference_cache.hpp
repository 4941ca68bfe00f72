// Reference results kept on disk between runs, so a developer bisecting a regression (ci/bisect-run) or rerunning
// a nightly filter never recomputes a CPU reference it already has. Keyed by
//   (case id, reference version, canonical case hash, effective rounding contract, fixture fingerprint)
// where the reference version is a hash of every reference/ and fixtures/ source at configure time (so a commit
// that changes the oracle's math or the fixture generator misses the cache), the case hash covers every field of the
// canonical case, and the fingerprint the pristine tensors actually generated (a --seed override changes it); the contract is the one the
// case is judged against for this kernel (harness/pipeline/rounding_resolution.hpp), which a kernel's declaration may change.
// One safetensors file per entry holding routing ids and weights and both references, with the full key and the
// simulated envelope (verdict/envelope.hpp, as JSON) in its metadata (checked on load). An unreadable or mismatched entry is a miss, recomputed and rewritten, never an error.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "harness/case/case_spec.hpp"
#include "harness/pipeline/rounding_resolution.hpp"
#include "reference/moe/reference_moe.hpp"
#include "reference/routing/routing.hpp"
#include "verdict/envelope.hpp"

namespace moe {

struct ReferenceSet {
  RoutingResult routing;
  Values contract, ideal;
  // Each routed slot's contribution to the contract reference [T, k, H] (reference_moe's `slots`), kept where it
  // takes at most kMaxSlotValues values; else empty, and the per-expert statistic compares token groups instead.
  Values slots;
  ContractRecord rounding;  // the rounding contract `contract` was computed under, for the record
  // The simulated envelope of legitimate variation (verdict/envelope.hpp) the thresholds derive from; empty where it
  // was not simulated (case_pipeline.hpp needs_envelope: an output that passes at the case's own thresholds passes
  // with any envelope) or a reference file was written without one (the fixed thresholds then apply).
  Envelope envelope;
};

// Routing, contract and ideal references on the pristine checkpoint (no cache): of the effective contract's problem,
// or of p under its own contract.
inline constexpr std::int64_t kMaxSlotValues = std::int64_t(1) << 24;  // 64 MiB of fp32
// `envelope`: also simulate the envelope (export, which hands it to `judge --dir`); without it the pipeline simulates
// it only for an output that fails at the case's own thresholds (case_pipeline.hpp needs_envelope).
ReferenceSet compute_references(const ResolvedContract& rc, const Checkpoint& pristine, bool envelope = true);
ReferenceSet compute_references(const ProblemSpec& p, const Checkpoint& pristine, bool envelope = true);

std::string reference_version();  // hash of the oracle's sources, fixed at configure time

// The metadata key under which a reference file records the key it was computed under (ReferenceCache::key).
inline constexpr const char* kReferenceKeyMetadata = "moe.reference_cache_key";
inline constexpr const char* kEnvelopeMetadata = "moe.envelope";
// A reference file: routing ids and weights and both references of p, `key` in its metadata beside `metadata`
// (the cache's entries and `moe-harness export`'s reference.safetensors). Atomic.
void write_reference_file(const std::filesystem::path& file, const ReferenceSet& r, const ProblemSpec& p,
                          const std::string& key, const std::map<std::string, std::string>& metadata = {});
// The references of such a file when it records exactly `key` and holds p's tensors; nullopt otherwise (a missing,
// truncated, foreign or mismatched file). `rounding` is left empty: the caller's contract record goes there.
std::optional<ReferenceSet> read_reference_file(const std::filesystem::path& file, const std::string& key,
                                                const ProblemSpec& p);

class ReferenceCache {
 public:
  explicit ReferenceCache(std::filesystem::path dir);
  // From the cache when present under this key, else computed and stored; with `envelope`, an entry stored without
  // one gets it simulated and is rewritten with it.
  ReferenceSet get(const CaseSpec& c, const ResolvedContract& rc, const Checkpoint& pristine, std::uint64_t fingerprint,
                   bool envelope = true);
  // Rewrites the entry of (c, rc, fingerprint) with r, whose envelope the pipeline simulated after the fact.
  void store_envelope(const CaseSpec& c, const ResolvedContract& rc, std::uint64_t fingerprint, const ReferenceSet& r);
  std::size_t hits() const { return hits_; }
  std::size_t misses() const { return misses_; }
  const std::filesystem::path& dir() const { return dir_; }
  static std::string key(const CaseSpec& c, const std::string& contract, std::uint64_t fingerprint);

 private:
  std::filesystem::path file_of(const std::string& key) const;  // the entry's file: the key's hash, in dir_
  void store(const std::string& key, const ProblemSpec& p, const ReferenceSet& r) const;  // atomic; a failure is a notice
  std::filesystem::path dir_;
  std::size_t hits_ = 0, misses_ = 0;
};

}  // namespace moe
