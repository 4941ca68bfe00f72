#include "harness/isolation/worker.hpp"

#include <unistd.h>

#include <cstdio>
#include <memory>

#include "fixtures/error.hpp"
#include "harness/isolation/case_context.hpp"
#include "harness/isolation/wire.hpp"
#include "kernels/runtime/device_fault.hpp"
#include "kernels/runtime/device_lock.hpp"
#include "reports/record_json.hpp"

namespace moe {
namespace {

using nlohmann::json;

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

}  // namespace

DeviceLockHooks supervisor_device_lock(wire::LineReader& in, int record_fd) {
  DeviceLockHooks h;
  h.acquire = [&in, record_fd] {
    std::string reply;
    if (!wire::write_line(record_fd, R"({"type":"device","op":"acquire"})") || !in.read_line(reply)) ::_exit(0);
    if (reply != R"({"type":"device_granted"})")
      throw_harness_error("worker", "the supervisor answered a device lock request with: " + reply);
  };
  h.release = [record_fd] { wire::write_line(record_fd, R"({"type":"device","op":"release"})"); };
  return h;
}

int run_worker(int request_fd, int record_fd) {
  wire::LineReader in(request_fd);
  std::string line;
  if (!in.read_line(line)) return 0;
  std::unique_ptr<CaseContext> ctx;
  try {
    const ExecConfig config = wire::exec_config(json::parse(line));
    if (config.device_lock) install_device_lock(supervisor_device_lock(in, record_fd));
    ctx = std::make_unique<CaseContext>(config);
    json kernels = json::array();
    for (const auto& k : ctx->kernels()) kernels.push_back(k->id());
    const json ready = {{"type", "ready"}, {"device", wire::to_json(ctx->device())}, {"kernels", kernels},
                        {"cases", ctx->cases().size()}};
    if (!wire::write_line(record_fd, dump(ready))) return 0;
  } catch (const Error& e) {
    wire::write_line(record_fd, dump({{"type", "fatal"}, {"code", int(e.code())}, {"message", e.what()}}));
    return int(e.code());
  } catch (const std::exception& e) {
    wire::write_line(record_fd, dump({{"type", "fatal"}, {"code", int(ExitCode::harness_error)}, {"message", e.what()}}));
    return int(ExitCode::harness_error);
  }
  while (in.read_line(line)) {
    CaseResult res;
    try {
      res = ctx->execute(wire::case_request(json::parse(line)));
    } catch (const std::exception& e) {  // a request it cannot serve (execute_case itself never throws)
      wire::write_line(record_fd, dump({{"type", "fatal"}, {"code", int(ExitCode::harness_error)}, {"message", e.what()}}));
      return int(ExitCode::harness_error);
    }
    std::string exit_after;
    if (const auto& lost = sticky_device_error()) {
      exit_after = *lost;
      CaseRecord& rec = res.record;
      rec.status = Status::error;
      rec.failed_check = Check::crash;
      rec.reason = "crash: a sticky GPU error left the context unusable (" + *lost +
                   "); the worker exited and a new one judges the next case";
    }
    // ordered_json, as case_record_to_json writes it: the record's probes keep their order on the wire.
    const nlohmann::ordered_json reply = {{"type", "record"}, {"record", case_record_to_json(res.record)},
                        {"ref", wire::floats_hex(res.ref)}, {"out", wire::floats_hex(res.out)},
                        {"stats", wire::to_json(ctx->stats())}, {"cached_weight_bytes", ctx->cached_weight_bytes()},
                        {"exit_after", exit_after}};
    if (!wire::write_line(record_fd, reply.dump(-1, ' ', false, json::error_handler_t::replace))) return 0;
    if (!exit_after.empty()) {
      std::fflush(nullptr);
      ::_exit(0);  // no teardown of a poisoned runtime
    }
  }
  return 0;
}

}  // namespace moe
