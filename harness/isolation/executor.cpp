#include "harness/isolation/executor.hpp"

#include "harness/isolation/case_context.hpp"
#include "harness/isolation/supervisor.hpp"

namespace moe {

CaseExecutor::CaseExecutor(const ExecConfig& config, const IsolationOptions& iso,
                           std::vector<std::shared_ptr<KernelUnderTest>> extra)
    : context_(std::make_unique<CaseContext>(config, extra)) {
  if (iso.isolated && extra.empty()) supervisor_ = std::make_unique<Supervisor>(config, *context_, iso.case_timeout_s);
}

CaseExecutor::~CaseExecutor() = default;

const std::vector<CaseSpec>& CaseExecutor::cases() const { return context_->cases(); }

std::vector<KernelUnderTest*> CaseExecutor::kernels() const {
  std::vector<KernelUnderTest*> v;
  for (const auto& k : context_->kernels()) v.push_back(k.get());
  return v;
}

const DeviceDetection& CaseExecutor::device() { return supervisor_ ? supervisor_->device() : context_->device(); }

CaseResult CaseExecutor::execute(const CaseRequest& r) {
  return supervisor_ ? supervisor_->execute(r) : context_->execute(r);
}

ExecStats CaseExecutor::stats() const { return supervisor_ ? supervisor_->stats() : context_->stats(); }

}  // namespace moe
