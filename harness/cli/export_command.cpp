// `moe-harness export CASE --out DIR`: the contract for external runners (README "Export").
#include <cstdio>
#include <filesystem>

#include <moe_harness/case.hpp>
#include <moe_harness/suite.hpp>

#include "fixtures/atomic_file.hpp"
#include "fixtures/safetensors.hpp"
#include "harness/cli/commands.hpp"
#include "kernels/external/external_output_kernel.hpp"  // kFixtureFingerprintKey, fingerprint_hex

namespace moe::cli {

void add_export_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("export", "Write a case's fixture, references and canonical case for an external runner");
  auto suite = std::make_shared<std::string>("smoke");
  auto id = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  cmd->add_option("CASE", *id, "canonical case id")->required();
  cmd->add_option("--suite", *suite, "suite name in cases/ or a .yaml path")->capture_default_str();
  cmd->add_option("--out", *out, "output directory")->required();
  cmd->callback([=, &exit_code] {
    check_output_dir(*out, "--out");
    const api::Suite s = api::load_suite(*suite);
    const api::CaseSpec* c = &api::find_case(s, *id);
    // Everything is computed before anything is written: a failure leaves no partial export behind.
    const api::Fixture f = api::make_fixture(*c);
    const api::ProblemSpec& p = f.problem;
    const api::Checkpoint& ck = f.pristine;
    const api::ReferenceSet refs = api::compute_references(*c, f);
    const api::RoutingResult& r = refs.routing;
    const auto& contract = refs.contract;
    const auto& ideal = refs.ideal;
    Tensor ids("topk_ids", DType::i32, {p.tokens, r.k}), wts("topk_weights", DType::f32, {p.tokens, r.k});
    std::copy(r.ids.begin(), r.ids.end(), ids.span<std::int32_t>().begin());
    std::copy(r.weights.begin(), r.weights.end(), wts.span<float>().begin());
    Tensor oc("out_contract", DType::f32, {p.tokens, p.hidden}), oi("out_ideal", DType::f32, {p.tokens, p.hidden});
    std::copy(contract.begin(), contract.end(), oc.span<float>().begin());
    std::copy(ideal.begin(), ideal.end(), oi.span<float>().begin());

    std::vector<const Tensor*> fixture;
    for (const Tensor* t : ck.tensors())
      if (t->name() != "topk_ids" && t->name() != "topk_weights") fixture.push_back(t);
    fixture.push_back(&ids);
    fixture.push_back(&wts);
    const std::map<std::string, std::string> meta = {
        {"moe.case_id", c->id}, {kFixtureFingerprintKey, fingerprint_hex(f.fingerprint)},
        {"moe.layout.w13", std::string(name(p.layout))},
        {"moe.layout.w13_rows", "[E_local, 2*I_local, H]; K (hidden) last"}, {"moe.layout.w2", "[E_local, H, I_local]; K (inter) last"},
        {"moe.weight_format", std::string(name(p.quant.weight))}, {"moe.fp8_flavor", std::string(name(p.quant.flavor))},
        {"moe.e2m1_packing", "even element in the low nibble; last dimension halved"},
        {"moe.topk", "reference routing (global expert ids; ties to the lower index)"}};
    const std::filesystem::path dir = *out;
    std::filesystem::create_directories(dir);
    write_safetensors(dir / "fixture.safetensors", fixture, meta);
    write_safetensors(dir / "reference.safetensors", {&oc, &oi}, {{"moe.case_id", c->id}});
    write_file_atomically(dir / "case.json", api::case_json(*c));
    std::printf("exported %s to %s (fixture.safetensors, reference.safetensors, case.json)\n", c->id.c_str(), dir.string().c_str());
    exit_code = 0;
  });
}

}  // namespace moe::cli
