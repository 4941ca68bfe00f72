// A kernel that ran somewhere else: outputs produced by any program (a Python/Triton kernel, a vendor library) from
// the fixture `moe-harness export` wrote, handed back as a safetensors file and judged by the same pipeline, verdict
// and reports as an in-process kernel (`moe-harness judge`). It never sees the harness's tensors: run() only copies
// the file's output tensor into the sentinel-filled buffer, so an element the program did not produce stays NaN.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "fixtures/tensor.hpp"
#include "kernels/kernel_under_test.hpp"
#include "verdict/output_checks.hpp"  // check_output_tensor, fingerprint_hex

namespace moe {

// Metadata key export writes into fixture.safetensors and a runner copies into its output: the pristine checkpoint's
// fingerprint (16 hex digits), so an output computed from another fixture (another seed, a stale export) is refused.
inline constexpr const char* kFixtureFingerprintKey = "moe.fixture_fingerprint";

class ExternalOutputKernel : public KernelUnderTest {
 public:
  // Reads `path` and takes its tensor `tensor_name`; throws moe::Error(bad_input) naming the file and the tensor
  // when it is missing or not [tokens, hidden] in the case's output dtype.
  ExternalOutputKernel(std::string id, const std::filesystem::path& path, const std::string& tensor_name,
                       const ProblemSpec& p);
  std::string id() const override { return id_; }
  std::string version() const override { return "file:" + path_.filename().string(); }
  bool needs_device() const override { return false; }
  // The shape and dtype were checked when the file was read.
  Support supports(const ProblemSpec&, const DeviceInfo*) const override { return Support::yes(); }
  void prepare(const ProblemSpec&, Checkpoint&) override {}
  RunInfo run(const ProblemSpec& p, const Checkpoint& working, const RoutingResult& routing, Tensor& out) override;
  // What the program that wrote the file declares about its rounding (`moe-harness judge --contract TEXT`); none:
  // it followed the case's contract (case.json names every point).
  void declare_contract(const RoundingContract& c) { declared_ = c; }
  RoundingContract rounding_contract(const ProblemSpec&) const override { return declared_; }
  // Re-reading the same file proves nothing: the inverse-sentinel rerun probe does not apply.
  bool rerunnable() const override { return false; }
  // The fixture fingerprint the producer recorded, if it did.
  const std::optional<std::uint64_t>& recorded_fingerprint() const { return fingerprint_; }
  // Compares the recorded fingerprint with the case's fixture (`moe-harness judge`, before anything runs): another
  // fixture's is bad input; none recorded is bad input unless `allow_missing`, and the probes then say so.
  void check_fixture(std::uint64_t case_fingerprint, const std::string& case_id, bool allow_missing);
  // ("fixture_fingerprint", "ran") once check_fixture matched; else "not run: <why>".
  std::vector<std::pair<std::string, std::string>> input_checks() const override;

 private:
  std::string id_;
  std::filesystem::path path_;
  Tensor output_;
  std::optional<std::uint64_t> fingerprint_;
  bool fingerprint_matched_ = false, fingerprint_waived_ = false;
  RoundingContract declared_;
};

// The `moe-harness judge` flag that accepts an output file without the fixture fingerprint.
inline constexpr const char* kAllowMissingFingerprintFlag = "--allow-missing-fingerprint";

}  // namespace moe
