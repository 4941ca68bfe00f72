#include "harness/pipeline/reference_cache.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "fixtures/error.hpp"
#include "fixtures/safetensors.hpp"
#include "fixtures/tensor.hpp"
#include "fixtures/tensor_element.hpp"
#include "harness/case/case_json.hpp"
#include "harness/pipeline/envelope_sim.hpp"

#ifndef MOE_REFERENCE_VERSION
#error "MOE_REFERENCE_VERSION must be set by harness/CMakeLists.txt (a hash of the formats, reference and fixture sources)"
#endif

namespace moe {

std::string reference_version() { return MOE_REFERENCE_VERSION; }

namespace {
// A contract reference of all zeros where the ideal one is not, because an activation amax floor sets the per-token
// (or group) scales so high that the activations round to 0 in fp8 (the input's, or the intermediate's at the second
// GEMM), and everything after them. The floor is the cause when the same contract with the default floor gives a
// reference that is not all zeros: then bad input of the case (CaseInputError, exit 2) naming the floor's key, never
// the judge's all-zeros error that would send the user to the seed. refuse_zeroing_floor() finds the floors that zero
// every possible input before the fixture exists; this finds the rest, once the reference is computed.
void refuse_floor_zeroed_reference(const ResolvedContract& rc, const Checkpoint& pristine, const ReferenceSet& r) {
  const ProblemSpec& p = rc.problem;
  auto zero = [](const auto& v) { return std::all_of(v.begin(), v.end(), [](auto f) { return f == 0; }); };
  if (!zero(r.contract) || zero(r.ideal)) return;
  const float default_floor = QuantScheme{}.act_amax_floor;
  ProblemSpec lowered = p;
  const QuantScheme* raised = nullptr;  // the first scheme whose floor is above the default: the one named
  for (const auto& [q, l] : {std::pair{&p.quant, &lowered.quant}, std::pair{&p.shared_quant, &lowered.shared_quant}}) {
    const bool per_token = q->act == ActFormat::fp8_token || q->act == ActFormat::fp8_group128;
    if (!per_token || q->act_amax_floor <= default_floor || (q == &p.shared_quant && p.n_shared == 0)) continue;
    l->act_amax_floor = default_floor;
    if (!raised) raised = q;
  }
  if (!raised) return;
  if (zero(reference_moe(lowered, pristine, r.routing, ReferenceKind::contract, Precision::fp32, nullptr))) return;
  float amax = 0;
  for (std::int64_t i = 0, n = pristine.x.numel(); i < n; ++i) amax = std::max(amax, std::fabs(element_as_f32(pristine.x, i)));
  const bool declared = floor_declared(rc.record);
  const std::string key = declared ? "rounding_contract" : raised == &p.quant ? "quant.amax_floor" : "shared_quant.amax_floor";
  throw CaseInputError(declared ? "the kernel's declared contract " + rc.record.declared : "case", key,
                       fmt::format("the activation amax floor {:g} ({}) rounds every activation to 0 in fp8 (the "
                                   "largest |x| of the case is {:g}): the contract reference is all zeros, and with the "
                                   "default floor 1e-10 it is not, so it proves nothing about a kernel",
                                   raised->act_amax_floor, key, amax),
                       fmt::format("{} well below the case's largest |x|, {:g}, and its intermediate's (the default "
                                   "is 1e-10; vLLM's per-token quantizer uses 0.001953125)",
                                   declared ? "declare a token_floor / group_floor" : "lower " + key, amax));
}
}  // namespace

ReferenceSet compute_references(const ResolvedContract& rc, const Checkpoint& pristine, bool envelope) {
  ReferenceSet r;
  r.routing = route(rc.problem, pristine);
  const ProblemSpec& p = rc.problem;
  const bool keep_slots = p.tokens * std::int64_t(r.routing.k) * p.hidden <= kMaxSlotValues;
  r.contract = reference_moe(p, pristine, r.routing, ReferenceKind::contract, Precision::fp32,
                             keep_slots ? &r.slots : nullptr);
  r.ideal = reference_moe(rc.problem, pristine, r.routing, ReferenceKind::ideal);
  r.rounding = rc.record;
  refuse_floor_zeroed_reference(rc, pristine, r);
  if (envelope) r.envelope = simulate_envelope(p, pristine, r.routing, r.contract, r.ideal, r.slots);
  return r;
}

ReferenceSet compute_references(const ProblemSpec& p, const Checkpoint& pristine, bool envelope) {
  return compute_references(case_contract(p), pristine, envelope);
}

ReferenceCache::ReferenceCache(std::filesystem::path dir) : dir_(std::move(dir)) {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec)
    throw_bad_input(dir_.string(), "--reference-cache", "cannot create the reference cache directory: " + ec.message(),
                    "give a writable directory");
}

std::string ReferenceCache::key(const CaseSpec& c, const std::string& contract, std::uint64_t fingerprint) {
  // Every field of the canonical case except where it was written (moving a case in its file keeps its entry).
  nlohmann::json j = nlohmann::json::parse(case_to_json_text(c));
  j.erase("source");
  const std::string canon = j.dump();
  return fmt::format("{}|ref={}|case={:016x}|contract={}|fixture={:016x}", c.id, reference_version(),
                     hash_bytes(canon.data(), canon.size()), contract, fingerprint);
}

void write_reference_file(const std::filesystem::path& file, const ReferenceSet& r, const ProblemSpec& p,
                          const std::string& key, const std::map<std::string, std::string>& metadata) {
  Tensor ids("topk_ids", DType::i32, {r.routing.tokens, r.routing.k}), w("topk_weights", DType::f32, {r.routing.tokens, r.routing.k});
  std::copy(r.routing.ids.begin(), r.routing.ids.end(), ids.span<std::int32_t>().begin());
  std::copy(r.routing.weights.begin(), r.routing.weights.end(), w.span<float>().begin());
  Tensor oc("out_contract", DType::f32, {p.tokens, p.hidden}), oi("out_ideal", DType::f32, {p.tokens, p.hidden});
  std::copy(r.contract.begin(), r.contract.end(), oc.span<float>().begin());
  std::copy(r.ideal.begin(), r.ideal.end(), oi.span<float>().begin());
  std::map<std::string, std::string> meta = metadata;
  meta[kReferenceKeyMetadata] = key;
  if (!r.envelope.empty()) meta[kEnvelopeMetadata] = envelope_to_json(r.envelope);
  std::vector<const Tensor*> tensors{&ids, &w, &oc, &oi};
  std::optional<Tensor> os;
  if (!r.slots.empty()) {
    os.emplace("slots", DType::f32, std::vector<std::int64_t>{p.tokens, r.routing.k, p.hidden});
    std::copy(r.slots.begin(), r.slots.end(), os->span<float>().begin());
    tensors.push_back(&*os);
  }
  write_safetensors(file, tensors, meta);
}

std::optional<ReferenceSet> read_reference_file(const std::filesystem::path& file, const std::string& key,
                                                const ProblemSpec& p) {
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) return std::nullopt;
  try {
    const SafetensorsFile f = read_safetensors(file);
    auto it = f.metadata.find(kReferenceKeyMetadata);
    if (it == f.metadata.end() || it->second != key) return std::nullopt;
    const Tensor *ids = f.find("topk_ids"), *w = f.find("topk_weights"), *c = f.find("out_contract"),
                 *i = f.find("out_ideal");
    if (!ids || !w || !c || !i || ids->dtype() != DType::i32 || w->dtype() != DType::f32 ||
        c->dtype() != DType::f32 || i->dtype() != DType::f32 || ids->shape().size() != 2 || w->shape() != ids->shape() ||
        ids->dim(0) != p.tokens ||
        c->numel() != p.tokens * p.hidden || i->numel() != c->numel())
      return std::nullopt;
    ReferenceSet r;
    r.routing.tokens = p.tokens;
    r.routing.k = int(ids->dim(1));
    r.routing.ids.assign(ids->span<std::int32_t>().begin(), ids->span<std::int32_t>().end());
    r.routing.weights.assign(w->span<float>().begin(), w->span<float>().end());
    r.contract.assign(c->span<float>().begin(), c->span<float>().end());
    r.ideal.assign(i->span<float>().begin(), i->span<float>().end());
    if (auto env = f.metadata.find(kEnvelopeMetadata); env != f.metadata.end()) {
      r.envelope = envelope_from_json(env->second);
      if (r.envelope.empty() || r.envelope.tokens != p.tokens) return std::nullopt;  // unreadable: recompute
    }
    if (const Tensor* s = f.find("slots")) {
      if (s->dtype() != DType::f32 || s->numel() != p.tokens * std::int64_t(r.routing.k) * p.hidden) return std::nullopt;
      r.slots.assign(s->span<float>().begin(), s->span<float>().end());
    } else if (p.tokens * std::int64_t(r.routing.k) * p.hidden <= kMaxSlotValues) {
      return std::nullopt;  // written without the slots it should hold: recompute rather than judge differently
    }
    return r;
  } catch (const Error&) {
    return std::nullopt;  // a truncated or foreign file: the caller recomputes
  }
}

ReferenceSet ReferenceCache::get(const CaseSpec& c, const ResolvedContract& rc, const Checkpoint& pristine,
                                 std::uint64_t fingerprint, bool envelope) {
  const ProblemSpec& p = rc.problem;
  const std::string k = key(c, rc.record.effective, fingerprint);
  if (auto hit = read_reference_file(file_of(k), k, p)) {
    ++hits_;
    hit->rounding = rc.record;  // the same values for every kernel judged under this contract; its own record
    if (envelope && hit->envelope.empty()) {
      hit->envelope = simulate_envelope(p, pristine, hit->routing, hit->contract, hit->ideal, hit->slots);
      store(k, p, *hit);
    }
    return std::move(*hit);
  }
  ++misses_;
  ReferenceSet r = compute_references(rc, pristine, envelope);
  store(k, p, r);
  return r;
}

void ReferenceCache::store_envelope(const CaseSpec& c, const ResolvedContract& rc, std::uint64_t fingerprint,
                                    const ReferenceSet& r) {
  store(key(c, rc.record.effective, fingerprint), rc.problem, r);
}

std::filesystem::path ReferenceCache::file_of(const std::string& k) const {
  return dir_ / fmt::format("{:016x}.safetensors", hash_bytes(k.data(), k.size()));
}

void ReferenceCache::store(const std::string& k, const ProblemSpec& p, const ReferenceSet& r) const {
  try {
    write_reference_file(file_of(k), r, p, k);
  } catch (const Error& e) {  // a full or read-only disk costs the cache, never the case
    std::fprintf(stderr, "reference cache: not stored (%s)\n", e.what());
  }
}

}  // namespace moe
