#include "kernels/plugin/plugin_kernel.hpp"

#include <dlfcn.h>

#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "fixtures/error.hpp"
#include "kernels/common/throughput.hpp"
#include "kernels/plugin/plugin_checks.hpp"
#include "kernels/plugin/plugin_probe.hpp"
#ifdef MOE_HAVE_GPU_RUNTIME
#include "kernels/plugin/plugin_device_run.hpp"
#endif

namespace moe {

std::int32_t to_plugin_dtype(DType t) { return dtype_info(t).plugin_abi; }

// The ABI's C enums keep their values (plugins built against ABI 1 must still load); the format tables carry them.
static_assert(dtype_info(DType::f32).plugin_abi == MOE_DTYPE_F32 && dtype_info(DType::f16).plugin_abi == MOE_DTYPE_F16 &&
              dtype_info(DType::bf16).plugin_abi == MOE_DTYPE_BF16 && dtype_info(DType::i32).plugin_abi == MOE_DTYPE_I32 &&
              dtype_info(DType::u8).plugin_abi == MOE_DTYPE_U8 && dtype_info(DType::e4m3fn).plugin_abi == MOE_DTYPE_E4M3FN &&
              dtype_info(DType::e4m3fnuz).plugin_abi == MOE_DTYPE_E4M3FNUZ &&
              dtype_info(DType::e5m2).plugin_abi == MOE_DTYPE_E5M2 &&
              dtype_info(DType::e5m2fnuz).plugin_abi == MOE_DTYPE_E5M2FNUZ &&
              dtype_info(DType::e8m0).plugin_abi == MOE_DTYPE_E8M0 &&
              dtype_info(DType::e2m1x2).plugin_abi == MOE_DTYPE_E2M1X2);
static_assert(weight_format_info(WeightFormat::bf16).plugin_abi == MOE_WEIGHT_BF16 &&
              weight_format_info(WeightFormat::fp16).plugin_abi == MOE_WEIGHT_FP16 &&
              weight_format_info(WeightFormat::fp8_tensor).plugin_abi == MOE_WEIGHT_FP8_TENSOR &&
              weight_format_info(WeightFormat::fp8_channel).plugin_abi == MOE_WEIGHT_FP8_CHANNEL &&
              weight_format_info(WeightFormat::fp8_block).plugin_abi == MOE_WEIGHT_FP8_BLOCK &&
              weight_format_info(WeightFormat::mxfp8).plugin_abi == MOE_WEIGHT_MXFP8 &&
              weight_format_info(WeightFormat::mxfp4).plugin_abi == MOE_WEIGHT_MXFP4);

namespace {

moe_quant to_plugin_quant(const QuantScheme& q) {
  moe_quant m{};
  m.weight_format = weight_format_info(q.weight).plugin_abi;
  m.act_format = std::int32_t(q.act) + MOE_ACTQ_NONE;          // same order as ActFormat
  m.fnuz = q.flavor == Fp8Flavor::fnuz;
  m.qmax = q.act_qmax;
  m.amax_floor = q.act_amax_floor;
  m.scale_pow2 = q.act_scale_pow2;
  m.mx_mode = std::int32_t(q.mx_mode) + MOE_MX_FLOOR;
  m.e8m0_edges = std::int32_t(q.e8m0_edges) + MOE_E8M0_OCP;
  return m;
}
static_assert(int(ActFormat::mxfp8) + 1 == MOE_ACTQ_MXFP8);
static_assert(int(Activation::gelu_erf) + 1 == MOE_ACT_GELU_ERF && int(GateUpLayout::interleaved) + 1 == MOE_LAYOUT_INTERLEAVED);
static_assert(int(ReduceMode::per_k) + 1 == MOE_REDUCE_PER_K && int(MxScaleMode::even) + 1 == MOE_MX_EVEN);

struct CTensors {
  std::vector<moe_tensor> views;
  explicit CTensors(const std::vector<const Tensor*>& ts) {
    for (const Tensor* t : ts)
      views.push_back({t->name().c_str(), to_plugin_dtype(t->dtype()), std::int32_t(t->shape().size()),
                       t->shape().data(), const_cast<std::byte*>(t->bytes()), t->nbytes()});
  }
};

// A plugin's per-case text (a decline reason, an error): readable in the report even when it is not valid UTF-8.
std::string message(const char* buf, const char* fallback) { return buf[0] ? sanitize_utf8(buf) : std::string(fallback); }

constexpr std::size_t kMaxPluginString = 256;

#ifdef MOE_HAVE_GPU_RUNTIME
constexpr bool kGpuBuild = true;
#else
constexpr bool kGpuBuild = false;
#endif

}  // namespace

moe_problem to_plugin_problem(const ProblemSpec& p) {
  moe_problem m{};
  m.tokens = p.tokens; m.hidden = p.hidden; m.inter_local = p.local_inter(); m.experts = p.experts;
  m.local_experts = p.local_experts(); m.first_local_expert = p.first_local_expert(); m.topk = p.topk;
  m.n_shared = p.n_shared; m.shared_inter_local = p.local_shared_inter(); m.ep_rank = p.ep_rank;
  m.activation = std::int32_t(p.activation) + MOE_ACT_SILU;
  m.layout = std::int32_t(p.layout) + MOE_LAYOUT_GATE_UP;
  m.swiglu_alpha = p.swiglu_alpha; m.swiglu_limit = p.swiglu_limit;
  m.clamp_shared = p.clamp_shared; m.biases = p.biases;
  m.router_weight_on = p.router_weight_on == RouterWeightOn::output ? MOE_ROUTER_WEIGHT_ON_OUTPUT : MOE_ROUTER_WEIGHT_ON_INPUT;
  m.quant = to_plugin_quant(p.quant);
  m.shared_quant = to_plugin_quant(p.shared_quant);
  m.input_dtype = to_plugin_dtype(p.input_dtype);
  m.intermediate_dtype = p.intermediate == IntermediateDtype::bf16 ? MOE_DTYPE_BF16
                         : p.intermediate == IntermediateDtype::f16 ? MOE_DTYPE_F16 : MOE_DTYPE_F32;
  m.output_dtype = to_plugin_dtype(p.output_dtype);
  m.reduce = std::int32_t(p.reduce) + MOE_REDUCE_ATOMIC;
  m.split_k = p.split_k;
  return m;
}

void check_plugin_path(const std::filesystem::path& path) {
  const std::string where = path.string();
  if (!path.has_parent_path())
    throw_bad_input(where, "--plugin", "a plugin must be given by a path, not a bare library name (no search path is used)",
                    "pass ./" + where + " or an absolute path");
  check_plugin_file(path);  // a complete shared object of this machine: dlopen would map a truncated one and fault
}

PluginKernel::PluginKernel(const std::filesystem::path& path, std::uint32_t host_abi_version, bool probed)
    : path_(path) {
  const std::string where = path.string();
  check_plugin_path(path);
  if (!probed)  // its load-time code may exit, fault or hang: first in a probe process
    if (const auto failed = probe_plugin_load(path))
      throw_bad_input(where, "--plugin", "loading the library " + failed->how + " (its load-time code ran in a probe process)",
                      "fix the library's load-time code (ELF constructors, static initializers): loading must return");
  handle_ = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_)
    throw_bad_input(where, "--plugin", std::string("cannot load the library: ") + ::dlerror(),
                    "build it as a shared library for this machine with its dependencies resolvable");
  auto entry = reinterpret_cast<moe_plugin_entry_fn>(::dlsym(handle_, MOE_PLUGIN_ENTRY_SYMBOL));
  auto fail = [&](const std::string& problem, const std::string& fix) {
    ::dlclose(handle_);
    handle_ = nullptr;
    throw_bad_input(where, "--plugin", problem, fix);
  };
  if (!entry)
    fail(std::string("not a moe-harness plugin: no symbol ") + MOE_PLUGIN_ENTRY_SYMBOL,
         "export `const moe_plugin_api* moe_plugin_entry(uint32_t)` with C linkage (kernels/plugin/moe_plugin.h)");
  try {
    check_plugin_entry_is_code(reinterpret_cast<const void*>(entry), where);
  } catch (const Error& e) {
    fail(e.problem(), e.fix());
  }
  if (host_abi_version < MOE_PLUGIN_ABI_MIN_VERSION || host_abi_version > MOE_PLUGIN_ABI_VERSION)
    throw_harness_error(where, fmt::format("PluginKernel: host ABI version {} is outside {} to {}", host_abi_version,
                                           MOE_PLUGIN_ABI_MIN_VERSION, MOE_PLUGIN_ABI_VERSION));
  // Negotiation (moe_plugin.h): the host's version first, then each older one, so that a plugin which answers
  // only the version it was built against (as version 1's example did) still loads.
  std::uint32_t asked = host_abi_version;
  for (; !api_ && asked >= MOE_PLUGIN_ABI_MIN_VERSION; --asked) api_ = entry(asked);
  ++asked;
  const std::string speaks = host_abi_version == MOE_PLUGIN_ABI_MIN_VERSION
                                 ? fmt::format("version {}", host_abi_version)
                                 : fmt::format("versions {} to {}", MOE_PLUGIN_ABI_MIN_VERSION, host_abi_version);
  if (!api_)
    fail(fmt::format("the plugin declined ABI {} (moe_plugin_entry returned NULL for each)", speaks),
         "rebuild the plugin against this harness's kernels/plugin/moe_plugin.h");
  if (api_->abi_version < MOE_PLUGIN_ABI_MIN_VERSION || api_->abi_version > asked)
    fail(fmt::format("plugin ABI version {} but this harness speaks {}{}", api_->abi_version, speaks,
                     asked < host_abi_version ? fmt::format(" and asked for {}", asked) : std::string()),
         "rebuild the plugin against this harness's kernels/plugin/moe_plugin.h");
  const std::size_t needed = api_->abi_version >= 2 ? MOE_PLUGIN_API_V2_SIZE : MOE_PLUGIN_API_V1_SIZE;
  if (api_->struct_size < needed)
    fail(fmt::format("the plugin's table is {} bytes, version {} needs {}", api_->struct_size, api_->abi_version, needed),
         "set struct_size to sizeof(moe_plugin_api) and rebuild against this harness's kernels/plugin/moe_plugin.h");
  if (api_->abi_version >= 2) {
    memory_ = api_->memory;
    if (memory_ != MOE_MEMORY_HOST && memory_ != MOE_MEMORY_DEVICE)
      fail(fmt::format("the plugin's memory is {}, neither MOE_MEMORY_HOST (0) nor MOE_MEMORY_DEVICE (1)", memory_),
           "set memory to MOE_MEMORY_HOST or MOE_MEMORY_DEVICE (kernels/plugin/moe_plugin.h)");
    rounding_contract_ = api_->rounding_contract;
  }
  if (memory_ == MOE_MEMORY_DEVICE && !api_->run_device)
    fail("the plugin's table declares device memory but lacks run_device", "fill run_device (kernels/plugin/moe_plugin.h)");
  if (!api_->id || !api_->id[0] || !api_->version || !api_->supports || (memory_ == MOE_MEMORY_HOST && !api_->run))
    fail("the plugin's table lacks id, version, supports or run", "fill every required field of moe_plugin_api");
  // The id names the plugin's tests and report records, the version its provenance: bounded, UTF-8, printable.
  for (const auto& [field, text] : {std::pair{"id", api_->id}, std::pair{"version", api_->version}}) {
    const std::size_t n = ::strnlen(text, kMaxPluginString + 1);
    if (n > kMaxPluginString)
      fail(fmt::format("the plugin's {} is longer than {} bytes (or not NUL-terminated)", field, kMaxPluginString),
           fmt::format("return a NUL-terminated {} of at most {} bytes", field, kMaxPluginString));
    if (!is_clean_utf8(std::string_view(text, n)))
      fail(fmt::format("the plugin's {} '{}' is not UTF-8 text (invalid bytes or control characters)", field,
                       sanitize_utf8(std::string_view(text, n))),
           fmt::format("return a UTF-8 {} without control characters (kernels/plugin/moe_plugin.h: all strings are UTF-8)", field));
  }
  // Optional symbols (moe_plugin.h): absent in plugins built before them, which load as before.
  if (void* sym = rounding_contract_ ? nullptr : ::dlsym(handle_, MOE_PLUGIN_ROUNDING_CONTRACT_SYMBOL)) {
    try {
      check_plugin_entry_is_code(sym, where);
    } catch (const Error& e) {
      fail(std::string(MOE_PLUGIN_ROUNDING_CONTRACT_SYMBOL) + ": " + e.problem(), e.fix());
    }
    rounding_contract_ = reinterpret_cast<moe_plugin_rounding_contract_fn>(sym);
  }
}

RoundingContract PluginKernel::rounding_contract(const ProblemSpec& p) const {
  if (!rounding_contract_) return fp32_stages();
  const moe_problem m = to_plugin_problem(p);
  const std::string case_contract = contract_text(p);
  char text[512] = {0};
  const int rc = rounding_contract_(&m, case_contract.c_str(), text, sizeof text);
  text[sizeof text - 1] = '\0';
  const std::string where = "plugin " + path_.string();
  if (rc != 0)
    throw_bad_input(where, MOE_PLUGIN_ROUNDING_CONTRACT_SYMBOL, "returned " + std::to_string(rc) + ": " + message(text, "(no message)"),
                    "return 0 with the contract's text (moe_plugin.h)");
  return parse_rounding_contract_or_throw(sanitize_utf8(text), where, MOE_PLUGIN_ROUNDING_CONTRACT_SYMBOL);
}

PluginKernel::~PluginKernel() {
  device_.reset();  // the device copies and the lock, before the plugin's code is unmapped
  if (handle_) ::dlclose(handle_);
}

bool PluginKernel::needs_device() const { return device_memory() && kGpuBuild; }

std::size_t PluginKernel::device_uploads() const {
#ifdef MOE_HAVE_GPU_RUNTIME
  if (device_) return device_->uploads();
#endif
  return 0;
}

void PluginKernel::end_case() {
#ifdef MOE_HAVE_GPU_RUNTIME
  if (device_) device_->end_case();
#endif
}

std::vector<std::string> PluginKernel::device_red_zone_violations(std::int64_t& bytes) const {
#ifdef MOE_HAVE_GPU_RUNTIME
  if (device_) return device_->red_zone_violations(bytes);
#endif
  (void)bytes;
  return {};
}

std::unique_ptr<DeviceRun> PluginKernel::device_run(const ProblemSpec& p, const Checkpoint& working,
                                                    const RoutingResult& routing, std::string& why_not) {
#ifdef MOE_HAVE_GPU_RUNTIME
  if (device_) return device_->device_run(to_plugin_problem(p), working, routing, p.output_dtype, why_not);
#endif
  why_not = device_memory() ? "no run on the device came first"
                            : "a host-memory plugin (ABI 1, or memory MOE_MEMORY_HOST): no device work to drive";
  return nullptr;
}

Support PluginKernel::supports(const ProblemSpec& p, const DeviceInfo*) const {
  if (device_memory() && !kGpuBuild)
    return Support::no_device_here("it computes in device memory (plugin ABI 2, memory MOE_MEMORY_DEVICE) and needs a "
                                   "GPU build of moe-harness (cmake --preset cuda or hip); this build has no GPU "
                                   "runtime");
  const moe_problem m = to_plugin_problem(p);
  char reason[512] = {0};
  if (api_->supports(&m, reason, sizeof reason)) return Support::yes();
  reason[sizeof reason - 1] = '\0';
  return Support::no(message(reason, "the plugin declined this case without a reason"));
}

void PluginKernel::prepare(const ProblemSpec& p, Checkpoint& working) {
  if (!api_->prepare) return;
  const moe_problem m = to_plugin_problem(p);
  std::vector<const Tensor*> ts;
  for (Tensor* t : working.tensors()) ts.push_back(t);  // the working clone: writable by the plugin
  CTensors c(ts);
  char err[1024] = {0};
  if (api_->prepare(&m, c.views.data(), std::int32_t(c.views.size()), err, sizeof err) != 0) {
    err[sizeof err - 1] = '\0';
    throw_harness_error("plugin " + path_.string(), "plugin prepare() failed: " + message(err, "(no message)"));
  }
}

bool PluginKernel::deterministic(const ProblemSpec& p) const {
  if (!api_->deterministic) return true;
  const moe_problem m = to_plugin_problem(p);
  return api_->deterministic(&m) != 0;
}

RunInfo PluginKernel::run(const ProblemSpec& p, const Checkpoint& working, const RoutingResult& routing, Tensor& out) {
  const moe_problem m = to_plugin_problem(p);
  if (device_memory()) {
#ifdef MOE_HAVE_GPU_RUNTIME
    if (!device_) device_ = std::make_shared<PluginDeviceRunner>(api_, "plugin " + path_.string());
    RunInfo info = device_->run(m, working, routing, out, timing_);
    if (info.median_us > 0) add_throughput(info, moe_work(p, working, routing));
    return info;
#else
    throw_harness_error("plugin " + path_.string(), "a device-memory plugin cannot run in a build without a GPU runtime",
                        "build moe-harness with the cuda or hip preset");
#endif
  }
  CTensors c(working.tensors());
  CTensors o({&out});
  char variant[256] = {0}, err[1024] = {0};
  if (api_->run(&m, c.views.data(), std::int32_t(c.views.size()), routing.ids.data(), routing.weights.data(),
                std::int32_t(routing.k), o.views.data(), variant, sizeof variant, err, sizeof err) != 0) {
    err[sizeof err - 1] = '\0';
    throw_harness_error("plugin " + path_.string(), "plugin run() failed: " + message(err, "(no message)"));
  }
  variant[sizeof variant - 1] = '\0';
  return {sanitize_utf8(variant), 0.0, 0, 0.0, 0.0};
}

}  // namespace moe
