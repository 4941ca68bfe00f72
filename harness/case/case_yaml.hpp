// Reading case YAML: the merged view of a case's sources (CaseNode) and the typed, validated reads of its values
// (Reader). Every problem is a moe::Error(bad_input) naming the file, the line, the key and a fix; no yaml-cpp
// exception leaves a Reader.
#pragma once
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace moe {

struct SpecProblem;  // fixtures/problem.hpp

// One value of a case as the deep merge of its sources, lowest precedence first: the suite's defaults, the case
// entry, then each sweep axis's value at its dotted path. A mapping merges key by key with the mappings below it;
// any other value replaces what lower layers had; a null value sets nothing. Nothing is copied or built: the view
// points into the parsed document (building merged yaml-cpp nodes merges their memory pools, quadratic in the file).
class CaseNode {
 public:
  struct Layer {
    YAML::Node node;
    std::vector<std::string> path;                // non-empty: `node` sits at this path below this level
    YAML::Mark key_mark = YAML::Mark::null_mark();  // a path layer's sweep key, for messages
    const std::set<std::string>* skip = nullptr;  // keys this mapping does not contribute (a preset's keys)
    // A mapping layer's scalar keys and their values in file order, read once by the constructor: a case reads
    // every case key from every layer, and each yaml-cpp lookup that misses formats an error text through a
    // std::stringstream (that was most of a suite's load time).
    std::shared_ptr<const std::vector<std::pair<std::string, YAML::Node>>> entries;
  };
  CaseNode() = default;
  explicit CaseNode(std::vector<Layer> layers);
  CaseNode operator[](const std::string& key) const;
  explicit operator bool() const { return !layers_.empty(); }
  bool is_map() const;
  const YAML::Node& node() const { return layers_.back().node; }  // the winning value (a path layer: its leaf)
  YAML::Mark mark() const;
  const std::vector<Layer>& layers() const { return layers_; }

 private:
  std::vector<Layer> layers_;
};

bool valid_utf8(std::string_view s);
// A user's text as it may be echoed in a message: invalid UTF-8 and control bytes as \xNN, cut at `max` bytes.
std::string printable(std::string_view s, std::size_t max = 80);

class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}
  const std::string& file() const { return file_; }
  // Nodes without a mark report the line of the case entry being read.
  void set_origin(const YAML::Mark& m) const { origin_ = m; }
  std::string where(const YAML::Mark& m) const;
  std::string where(const YAML::Node& n) const { return where(n.Mark()); }
  std::string where(const CaseNode& n) const { return where(n.mark()); }
  [[noreturn]] void fail(const YAML::Mark& m, const std::string& key, const std::string& problem,
                         const std::string& fix) const;

  // A mapping whose keys are scalars, valid UTF-8, in `known`, each written once.
  void keys(const YAML::Node& map, const std::set<std::string>& known, const std::string& prefix) const;
  void keys(const CaseNode& map, const std::set<std::string>& known, const std::string& prefix) const;
  // The scalar text of a mapping key (bad input for a mapping or sequence used as a key).
  std::string key_text(const YAML::Node& key, const std::string& prefix) const;

  // Decimal integers only ("2.5", "1e3", "0x10" are refused), in [lo, hi].
  std::int64_t integer(const YAML::Node& n, const std::string& key, std::int64_t lo, std::int64_t hi) const;
  std::uint64_t unsigned64(const YAML::Node& n, const std::string& key) const;  // [0, 2^64 - 1], no wrap of -1
  double number(const YAML::Node& n, const std::string& key) const;              // finite (.nan, .inf refused)
  bool boolean(const YAML::Node& n, const std::string& key) const;
  // A scalar of valid UTF-8 without control characters (tab and newline allowed when `text`), up to max_bytes.
  std::string string(const YAML::Node& n, const std::string& key, std::size_t max_bytes = 4096, bool text = false) const;
  std::vector<std::string> strings(const YAML::Node& n, const std::string& key) const;  // a scalar or a list of them
  // The same reads of a merged view's value (bad input when the view is a mapping).
  std::int64_t integer(const CaseNode& n, const std::string& key, std::int64_t lo, std::int64_t hi) const {
    return integer(value(n, key, "a whole number"), key, lo, hi);
  }
  std::uint64_t unsigned64(const CaseNode& n, const std::string& key) const { return unsigned64(value(n, key, "a whole number"), key); }
  double number(const CaseNode& n, const std::string& key) const { return number(value(n, key, "a number"), key); }
  bool boolean(const CaseNode& n, const std::string& key) const { return boolean(value(n, key, "true or false"), key); }
  std::string string(const CaseNode& n, const std::string& key, std::size_t max_bytes = 4096, bool text = false) const {
    return string(value(n, key, "a string"), key, max_bytes, text);
  }
  std::vector<std::string> strings(const CaseNode& n, const std::string& key) const { return strings(value(n, key, "a list"), key); }
  const YAML::Node& value(const CaseNode& n, const std::string& key, const char* what) const;

 private:
  std::string file_;
  mutable YAML::Mark origin_ = YAML::Mark::null_mark();
};

// A problem found on the whole case `n` (validate() and friends), reported at the line of the key it names when
// the case sets that key, else at the case's line.
[[noreturn]] void fail_at(const Reader& r, const CaseNode& n, const SpecProblem& p);

}  // namespace moe
