#include "harness/run/progress.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <set>

#include "harness/run/runner.hpp"

namespace moe {

namespace {

constexpr const char* kGreen = "32", *kRed = "31", *kYellow = "33", *kBoldRed = "1;31";

std::string paint(bool colour, const char* sgr, const std::string& text) {
  return colour ? fmt::format("\x1b[{}m{}\x1b[0m", sgr, text) : text;
}

const char* status_colour(Status status) {
  return status == Status::pass ? kGreen : status == Status::skip ? kYellow : status == Status::fail ? kRed : kBoldRed;
}

std::string upper(std::string s) {
  for (char& c : s) c = char(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

std::size_t terminal_width(std::FILE* f) {
  winsize w{};
  if (::ioctl(fileno(f), TIOCGWINSZ, &w) == 0 && w.ws_col >= 40) return w.ws_col;
  return 120;
}

}  // namespace

TerminalStyle terminal_style(std::FILE* f) {
  TerminalStyle s;
  s.live = ::isatty(fileno(f)) == 1;
  const char* no_colour = std::getenv("NO_COLOR");  // https://no-color.org: set and non-empty turns colour off
  const char* term = std::getenv("TERM");
  s.colour = s.live && !(no_colour && *no_colour) && !(term && std::strcmp(term, "dumb") == 0);
  return s;
}

std::string format_duration(double s) {
  if (s < 60) return fmt::format("{:.1f} s", s);
  const long t = long(s + 0.5);
  if (t < 3600) return fmt::format("{} min {:02} s", t / 60, t % 60);
  return fmt::format("{} h {:02} min", t / 3600, (t % 3600) / 60);
}

ProgressListener::ProgressListener(std::FILE* out, bool verbose)
    : out_(out), style_(terminal_style(out)), verbose_(verbose), t0_(std::chrono::steady_clock::now()),
      last_log_(t0_), case_t0_(t0_) {}

ProgressListener::~ProgressListener() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (ticker_.joinable()) ticker_.join();
}

double ProgressListener::elapsed_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
}

void ProgressListener::OnTestProgramStart(const testing::UnitTest& unit) {
  std::lock_guard<std::mutex> lock(mu_);
  t0_ = last_log_ = std::chrono::steady_clock::now();
  // GoogleTest has applied --gtest_filter and sharding by now; --gtest_repeat multiplies, -1 repeats for ever.
  const int repeat = GTEST_FLAG_GET(repeat);
  endless_ = repeat < 0;
  total_ = std::size_t(std::max(0, unit.test_to_run_count())) * std::size_t(std::max(1, repeat));
  if (verbose_) return;
  if (style_.live) {
    draw(false);
  } else {
    std::fprintf(out_, "moe-harness: %s test(s) to run; a progress line every %.0f s\n",
                 endless_ ? "endless" : std::to_string(total_).c_str(), kProgressLogInterval);
    std::fflush(out_);
  }
  ticker_ = std::thread([this] { tick(); });
}

void ProgressListener::OnTestProgramEnd(const testing::UnitTest&) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (ticker_.joinable()) ticker_.join();
  std::lock_guard<std::mutex> lock(mu_);
  running_.clear();
  draw(true);
}

void ProgressListener::case_started(const std::string& kernel, const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  running_ = kernel + " " + id;
  case_t0_ = std::chrono::steady_clock::now();
  if (style_.live && !verbose_) draw(false);
}

void ProgressListener::case_done(const CaseRecord& r, double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  ++done_;
  pass_ += r.status == Status::pass;
  fail_ += r.status == Status::fail;
  skip_ += r.status == Status::skip;
  error_ += r.status == Status::error;
  running_.clear();
  const std::string total = endless_ ? std::string("?") : std::to_string(total_);
  if (verbose_) {
    std::fprintf(out_, "[%zu/%s] %-5s %s %s (%.2f s)%s%s\n", done_, total.c_str(), to_string(r.status).c_str(), r.kernel.c_str(),
                 r.id.c_str(), seconds, r.reason.empty() ? "" : ": ", first_line(r.reason).c_str());
  } else if (r.status == Status::fail || r.status == Status::error) {
    // A failure is news: a line of its own, above the live line.
    if (style_.live) std::fputs("\r\x1b[K", out_);
    std::fprintf(out_, "%s %s %s: %s\n", paint(style_.colour, status_colour(r.status), upper(to_string(r.status))).c_str(),
                 r.kernel.c_str(), r.id.c_str(), first_line(r.reason).c_str());
  }
  if (style_.live && !verbose_) draw(false);
  std::fflush(out_);
}

std::string ProgressListener::status_line(bool final) const {
  const bool c = style_.colour;
  std::string s = fmt::format("[{}/{}] ", done_, endless_ ? std::string("?") : std::to_string(total_));
  s += paint(c && pass_, kGreen, fmt::format("{} pass", pass_)) + ", ";
  s += paint(c && fail_, kRed, fmt::format("{} fail", fail_)) + ", ";
  s += paint(c && skip_, kYellow, fmt::format("{} skip", skip_));
  if (error_) s += ", " + paint(c, kBoldRed, fmt::format("{} error", error_));
  const double t = elapsed_s();
  s += " | " + format_duration(t);
  if (!final && !endless_ && done_ > 0 && total_ > done_) s += ", ETA " + format_duration(t / double(done_) * double(total_ - done_));
  return s;
}

void ProgressListener::draw(bool final) {
  std::string line = status_line(final);
  if (!final && !running_.empty()) {
    const double for_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - case_t0_).count();
    std::string tail = " | " + running_ + (style_.live ? "" : " (running for " + format_duration(for_s) + ")");
    if (style_.live) {  // one terminal line: the running case is cut to what fits
      std::size_t visible = 0;
      for (std::size_t i = 0; i < line.size(); ++i) {
        if (line[i] == '\x1b') { while (i < line.size() && line[i] != 'm') ++i; continue; }
        ++visible;
      }
      // Case ids share their head (model, shape), so a cut keeps the end, where they differ.
      const std::size_t width = terminal_width(out_), room = visible + 8 < width ? width - 1 - visible : 0;
      if (tail.size() > room) tail = room ? " | ..." + tail.substr(tail.size() - (room - 6)) : std::string();
    }
    line += tail;
  }
  if (style_.live) std::fputs("\r\x1b[K", out_);
  std::fputs(line.c_str(), out_);
  if (final || !style_.live) std::fputc('\n', out_);
  std::fflush(out_);
}

void ProgressListener::tick() {
  const auto period = std::chrono::duration<double>(style_.live ? 1.0 : kProgressLogInterval);
  std::unique_lock<std::mutex> lock(mu_);
  while (!wake_.wait_for(lock, period, [this] { return stop_; })) {
    const auto now = std::chrono::steady_clock::now();
    if (style_.live || now - last_log_ >= period) {
      draw(false);
      last_log_ = now;
    }
  }
}

std::string shell_quote(const std::string& s) {
  const bool plain = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("_./+=:,@%-", c);
  });
  if (plain) return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string RerunRecipe::command(const std::string& kernel, const std::string& case_id) const {
  const auto k = kernel_args.find(kernel);
  if (k == kernel_args.end()) return "";
  std::string filters;
  if (sequence)
    for (const std::string& id : suite_ids) {
      filters += " --filter " + shell_quote(id);
      if (id == case_id) break;
    }
  else
    filters = " --filter " + shell_quote(case_id);
  return head + filters + " " + k->second + tail;
}

std::size_t RerunRecipe::also_selected(const std::string& case_id) const {
  std::size_t n = 0;
  for (const auto& id : suite_ids) n += id != case_id && case_selected({case_id}, id);
  return n;
}

std::string skip_group_key(const CaseRecord& r) {
  std::string key = r.kernel + '\n';
  const std::string& s = r.reason;
  for (std::size_t i = 0; i < s.size();) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) { key += s[i++]; continue; }
    // A number: digits and decimal points, then an optional exponent (3.77e+07).
    while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
    if (i + 1 < s.size() && (s[i] == 'e' || s[i] == 'E')) {
      std::size_t j = i + 1 + (s[i + 1] == '+' || s[i + 1] == '-');
      if (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) {
        while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
        i = j;
      }
    }
    key += '#';
  }
  return key;
}

// Failures whose verdict the recap prints in full; a run with many prints the rest one line each.
constexpr std::size_t kRecapExplained = 10;

void print_recap(std::FILE* out, const std::vector<CaseRecord>& cases, const RerunRecipe& rerun) {
  const bool c = terminal_style(out).colour;
  struct Group { std::string key; const CaseRecord* first; std::size_t n; std::set<std::string> reasons; };
  std::vector<Group> groups;
  for (const CaseRecord& r : cases) {
    if (r.status != Status::skip) continue;
    const std::string key = skip_group_key(r);
    auto g = std::find_if(groups.begin(), groups.end(), [&](const Group& x) { return x.key == key; });
    if (g == groups.end()) g = groups.insert(groups.end(), Group{key, &r, 0, {}});
    ++g->n;
    g->reasons.insert(r.reason);
  }
  for (const Group& g : groups)
    std::fprintf(out, "  %s  %s: %s%s\n", paint(c, kYellow, fmt::format("{} skipped", g.n)).c_str(),
                 g.first->kernel.c_str(), first_line(g.first->reason).c_str(),
                 g.reasons.size() > 1 ? " (the first; the numbers differ per case: report.json has each)" : "");
  std::size_t explained = 0;
  for (const CaseRecord& r : cases) {
    if (r.status != Status::fail && r.status != Status::error) continue;
    std::fprintf(out, "%s %s %s: %s%s\n", paint(c, status_colour(r.status), upper(to_string(r.status))).c_str(),
                 r.kernel.c_str(), r.id.c_str(), first_line(r.reason).c_str(),
                 r.failed_check == Check::none ? "" : (" [" + to_string(r.failed_check) + "]").c_str());
    // The verdict as pytest prints it: the case's place and its details (metrics, worst tokens with their experts
    // and weights, worst elements, the systematic statistics with the failed ones marked, the probes); the first
    // kRecapExplained failures in full, the rest in one line each (report.json and report.html have them all).
    if (explained++ < kRecapExplained) {
      if (!r.source.empty()) std::fprintf(out, "  case: %s\n", r.source.c_str());
      if (!r.details.empty()) std::fprintf(out, "%s%s", r.details.c_str(), r.details.back() == '\n' ? "" : "\n");
    } else if (explained == kRecapExplained + 1) {
      std::fprintf(out, "  (the details of this and later failures: report.json and report.html)\n");
    }
    const std::string cmd = rerun.command(r.kernel, r.id);
    if (cmd.empty()) continue;
    const std::size_t also = rerun.also_selected(r.id);
    std::fprintf(out, "  rerun: %s\n", cmd.c_str());
    if (also) std::fprintf(out, "  (that filter also selects %zu other case(s) of the suite)\n", also);
  }
}

}  // namespace moe
