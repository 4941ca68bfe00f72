#include "harness/isolation/executor.hpp"

#include <chrono>

#include "fixtures/error.hpp"
#include "harness/isolation/case_context.hpp"
#include "harness/isolation/supervisor.hpp"

namespace moe {

CaseExecutor::CaseExecutor(const ExecConfig& config, const IsolationOptions& iso,
                           std::vector<std::shared_ptr<KernelUnderTest>> extra)
    : context_(std::make_unique<CaseContext>(config, extra)) {
  ExecConfig worker_config = config;
  worker_config.plugin_load_failures = context_->plugin_load_failures();  // its workers never load those
  if (iso.isolated && extra.empty()) supervisor_ = std::make_unique<Supervisor>(worker_config, *context_, iso);
}

CaseExecutor::~CaseExecutor() = default;

const std::vector<CaseSpec>& CaseExecutor::cases() const { return context_->cases(); }

std::vector<KernelUnderTest*> CaseExecutor::kernels() const {
  std::vector<KernelUnderTest*> v;
  for (const auto& k : context_->kernels()) v.push_back(k.get());
  return v;
}

const DeviceDetection& CaseExecutor::device() { return supervisor_ ? supervisor_->device() : context_->device(); }

CaseExecutor::Ticket CaseExecutor::submit(const CaseRequest& r) {
  if (supervisor_) return supervisor_->submit(r);
  queued_.emplace(next_ticket_, r);
  return next_ticket_++;
}

std::optional<CaseResult> CaseExecutor::wait(Ticket t) {
  if (supervisor_) return supervisor_->wait(t);
  const auto it = queued_.find(t);
  if (it == queued_.end()) throw_harness_error("case executor", "a ticket waited for twice or never submitted");
  const CaseRequest r = it->second;
  queued_.erase(it);
  if (hold_back_ && hold_back_()) return std::nullopt;
  const auto t0 = std::chrono::steady_clock::now();
  CaseResult res = context_->execute(r);
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (completion_) completion_(t, res);
  return res;
}

bool CaseExecutor::started(Ticket t) const { return supervisor_ ? supervisor_->started(t) : false; }

void CaseExecutor::set_completion(Completion f) {
  if (supervisor_) supervisor_->set_completion(f);
  completion_ = std::move(f);
}

void CaseExecutor::set_hold_back(std::function<bool()> f) {
  if (supervisor_) supervisor_->set_hold_back(f);
  hold_back_ = std::move(f);
}

CaseResult CaseExecutor::execute(const CaseRequest& r) {
  std::optional<CaseResult> res = wait(submit(r));
  if (!res) throw_harness_error("case executor", "a request was dropped while the caller waited for it");
  return std::move(*res);
}

std::vector<std::string> CaseExecutor::abandoned() const {
  return supervisor_ ? supervisor_->abandoned() : std::vector<std::string>{};
}

ExecStats CaseExecutor::stats() const { return supervisor_ ? supervisor_->stats() : context_->stats(); }

std::size_t CaseExecutor::jobs() const { return supervisor_ ? supervisor_->jobs() : 1; }

}  // namespace moe
