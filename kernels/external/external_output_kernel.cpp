#include "kernels/external/external_output_kernel.hpp"

#include <cstring>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "fixtures/error.hpp"
#include "fixtures/safetensors.hpp"

namespace moe {

ExternalOutputKernel::ExternalOutputKernel(std::string id, const std::filesystem::path& path,
                                           const std::string& tensor_name, const ProblemSpec& p)
    : id_(std::move(id)), path_(path) {
  SafetensorsFile f = read_safetensors(path);  // structural problems: bad_input naming the file
  const std::string where = path.string();
  Tensor* t = nullptr;
  for (Tensor& x : f.tensors) if (x.name() == tensor_name) t = &x;
  if (!t) {
    std::string names;
    for (const Tensor& x : f.tensors) names += (names.empty() ? "" : ", ") + x.name();
    throw_bad_input(where, tensor_name, "no tensor '" + tensor_name + "' in the output file (it has: " + names + ")",
                    "write the kernel's output as '" + tensor_name + "' or pass --tensor NAME");
  }
  check_output_tensor(t->shape(), t->dtype(), p, where, tensor_name);
  if (auto it = f.metadata.find(kFixtureFingerprintKey); it != f.metadata.end()) {
    std::uint64_t v = 0;
    const std::string& s = it->second;
    char* end = nullptr;
    v = std::strtoull(s.c_str(), &end, 16);
    if (s.size() != 16 || !end || *end != '\0')
      throw_bad_input(where, std::string("__metadata__.") + kFixtureFingerprintKey,
                      "'" + s + "' is not 16 hex digits", "copy the value from fixture.safetensors unchanged");
    fingerprint_ = v;
  }
  output_ = std::move(*t);
}

void ExternalOutputKernel::check_fixture(std::uint64_t case_fingerprint, const std::string& case_id, bool allow_missing) {
  const std::string key = std::string("__metadata__.") + kFixtureFingerprintKey;
  if (!fingerprint_) {
    if (!allow_missing)
      throw_bad_input(path_.string(), key,
                      "the output records no fixture fingerprint, so nothing shows it was computed from case " +
                          case_id + "'s fixture",
                      std::string("copy ") + kFixtureFingerprintKey + " from the exported fixture.safetensors into the "
                          "output's metadata, or pass " + kAllowMissingFingerprintFlag + " to judge it unchecked (the "
                          "report then says the fingerprint was not checked)");
    fingerprint_waived_ = true;
    return;
  }
  if (*fingerprint_ != case_fingerprint)
    throw_bad_input(path_.string(), key,
                    "the output was computed from fixture " + fingerprint_hex(*fingerprint_) + " but case " + case_id +
                        " has fixture " + fingerprint_hex(case_fingerprint) +
                        " (another case, another seed or suite, or an export from another harness version)",
                    "re-export the case with this harness and rerun the program on it");
  fingerprint_matched_ = true;
}

std::vector<std::pair<std::string, std::string>> ExternalOutputKernel::input_checks() const {
  if (fingerprint_matched_) return {{"fixture_fingerprint", "ran"}};
  return {{"fixture_fingerprint",
           fingerprint_waived_ ? std::string("not run: the output records no fixture fingerprint (judged with ") +
                                     kAllowMissingFingerprintFlag + ")"
                               : std::string("not run: never compared with the case's fixture")}};
}

RunInfo ExternalOutputKernel::run(const ProblemSpec& p, const Checkpoint&, const RoutingResult&, Tensor& out) {
  std::memcpy(out.bytes(), output_.bytes(), out.nbytes());
  return {"external file " + path_.string(), 0.0, 0, 0.0, 0.0};
}

}  // namespace moe
