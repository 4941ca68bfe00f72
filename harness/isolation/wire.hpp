// The supervisor <-> worker protocol: one JSON object per line, each way on its own pipe.
//   supervisor -> worker:  {"type":"config", ExecConfig}  once, then {"type":"case", CaseRequest} per case
//   worker -> supervisor:  {"type":"ready", device, kernels} after building the config, or {"type":"fatal", code,
//                          message} when it cannot (bad input); then per case {"type":"record", record, ...}
// With the device lock (ExecConfig::device_lock, several workers): during a case the worker sends
// {"type":"device","op":"acquire"} and waits for {"type":"device_granted"} on its request pipe, then sends
// {"type":"device","op":"release"} (kernels/runtime/device_lock.hpp).
// A record is in report.json's per-case form (reports/record_json.hpp). Captured float vectors travel as the hex of
// their bits (exact, NaN payloads included). The worker's stdout and stderr go to a third pipe, read by the
// supervisor (echoed, and the tail kept for a crash record).
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "harness/isolation/executor.hpp"
#include "kernels/runtime/device_info.hpp"

namespace moe::wire {

nlohmann::json dispatch_to_json(const gpu::DispatchOptions& d);  // also the journal's run options
gpu::DispatchOptions dispatch_options(const nlohmann::json& j);
nlohmann::json to_json(const ExecConfig& c);
ExecConfig exec_config(const nlohmann::json& j);
nlohmann::json to_json(const CaseRequest& r);
CaseRequest case_request(const nlohmann::json& j);
nlohmann::json to_json(const DeviceDetection& d);
DeviceDetection device_detection(const nlohmann::json& j);
nlohmann::json to_json(const ExecStats& s);
ExecStats exec_stats(const nlohmann::json& j);
std::string floats_hex(const std::vector<float>& v);
std::vector<float> hex_floats(const std::string& s);

// Writes the whole line (text + '\n') to fd, retrying short writes; false when the other end is gone.
bool write_line(int fd, const std::string& text);

// Lines from a file descriptor, buffered; the supervisor reads non-blocking (poll first), the worker blocking.
class LineReader {
 public:
  explicit LineReader(int fd) : fd_(fd) {}
  // Reads what is available (one read(2)); false on end of file or a read error.
  bool fill();
  // The next complete line (without '\n') if one is buffered.
  bool next(std::string& line);
  // Blocking: the next line, or false at end of file.
  bool read_line(std::string& line);

 private:
  int fd_;
  std::string buf_;
};

}  // namespace moe::wire
