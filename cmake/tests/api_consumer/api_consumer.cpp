// Loads the installed smoke suite, runs the host contract kernel on its first case through the public API and
// prints "CASE_ID STATUS failed_check=CHECK min_cos=X"; exit 0 when it passed.
#include <cstdio>
#include <moe_harness/moe_harness.hpp>

namespace api = moe::api;

int main() {
  try {
    const api::Suite suite = api::load_suite(std::string(MOE_INSTALLED_CASES) + "/smoke.yaml");
    if (suite.cases.empty()) return 4;
    const api::CaseSpec& c = suite.cases.front();
    const auto kernel = api::make_kernel("host");
    const api::CaseRecord rec = api::run_case(c, *kernel, api::detect_device());
    std::printf("%s %s failed_check=%s min_cos=%.6f\n", rec.id.c_str(), api::to_string(rec.status).c_str(),
                api::to_string(rec.failed_check).c_str(),
                rec.metrics.count("min_cos") ? rec.metrics.at("min_cos") : -2.0);
    return rec.status == api::Status::pass ? 0 : 1;
  } catch (const api::Error& e) {
    std::fprintf(stderr, "api_consumer: %s\n", e.what());
    return int(e.code());
  }
}
