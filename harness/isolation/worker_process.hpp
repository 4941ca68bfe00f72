// One worker process of the supervisor (harness/isolation/supervisor.hpp): the harness binary in worker mode,
// started with fork + exec of /proc/self/exe in its own process group and killed with the supervisor by
// PR_SET_PDEATHSIG; requests on a pipe, records back as JSON lines on another (wire.hpp), stdout and stderr on a
// third, echoed here line by line (several workers' lines never interleave mid-line) and its last 64 KiB kept for a
// crash record. Non-blocking once started: the supervisor polls the pipes of all its workers together.
#pragma once
#include <sys/types.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "harness/isolation/wire.hpp"

namespace moe {

class WorkerProcess {
 public:
  WorkerProcess() = default;
  ~WorkerProcess();
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  // Starts the worker (with OMP_NUM_THREADS=threads in its environment; 0: the supervisor's environment as it is),
  // sends it the config line and waits for its first reply (at most `limit_s`): true with `ready` the parsed
  // ready line; false with `why` in words (the worker could not start, or sent a fatal line, whose message it is).
  bool start(const std::string& config_line, int threads, double limit_s, nlohmann::json& ready, std::string& why);
  bool running() const { return pid_ >= 0; }
  bool send(const std::string& line);  // false when the worker is gone

  int record_fd() const { return rec_fd_; }
  int stderr_fd() const { return err_fd_; }
  // After poll() said the pipe is readable: one read(2). read_records returns false at end of file.
  bool read_records();
  void read_stderr();
  // What the output pipe holds now (until_eof: until the worker's end, at most 1 s: a grandchild may hold it open).
  void drain_stderr(bool until_eof);
  bool next_line(std::string& line);  // the next whole record-pipe line, if one is buffered

  std::size_t resident_bytes() const;  // of the worker process, from /proc
  // Waits for the worker to end (killing its process group first when kill_first, or when it does not exit within
  // 10 s), drains what it wrote, closes the pipes; what became of it, in words.
  std::string reap(bool kill_first);

  // The worker's stdout and stderr since clear_tail(), the last 64 KiB (echoed as it came).
  const std::string& tail() const { return tail_; }
  void clear_tail() { tail_.clear(); }

 private:
  void kill_group();
  void add_output(const char* p, std::size_t n);
  void flush_echo();  // what is left of an unfinished line

  pid_t pid_ = -1;
  int req_fd_ = -1, rec_fd_ = -1, err_fd_ = -1;
  std::unique_ptr<wire::LineReader> records_;
  std::string tail_, echo_;
};

// The last 40 lines of a worker's output, as valid UTF-8 (the report is JSON).
std::string worker_tail_lines(const std::string& s);
inline constexpr int kWorkerTailLines = 40;

}  // namespace moe
