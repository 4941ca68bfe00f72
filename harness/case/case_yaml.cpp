#include "harness/case/case_yaml.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <limits>

#include "fixtures/error.hpp"
#include "fixtures/problem.hpp"
#include "fixtures/strict_number.hpp"

namespace moe {

CaseNode::CaseNode(std::vector<Layer> layers) {
  std::vector<Layer> kept;
  for (Layer& l : layers)
    if (!l.path.empty() || (l.node.IsDefined() && !l.node.IsNull())) kept.push_back(std::move(l));
  if (kept.empty()) return;
  auto is_map_layer = [](const Layer& l) { return !l.path.empty() || l.node.IsMap(); };
  // A value that is not a mapping replaces everything below it; mappings merge down to the first non-mapping.
  std::size_t first = kept.size() - 1;
  if (is_map_layer(kept.back()))
    while (first > 0 && is_map_layer(kept[first - 1])) --first;
  layers_.assign(std::make_move_iterator(kept.begin() + std::ptrdiff_t(first)), std::make_move_iterator(kept.end()));
  for (Layer& l : layers_)
    if (l.path.empty() && !l.entries && l.node.IsMap()) {
      auto e = std::make_shared<std::vector<std::pair<std::string, YAML::Node>>>();
      for (auto it = l.node.begin(); it != l.node.end(); ++it)
        if (it->first.IsScalar()) e->emplace_back(it->first.Scalar(), it->second);  // in order: the first match wins
      l.entries = std::move(e);
    }
}

CaseNode CaseNode::operator[](const std::string& key) const {
  std::vector<Layer> out;
  if (!is_map()) return CaseNode();
  for (const Layer& l : layers_) {
    if (!l.path.empty()) {
      if (l.path.front() == key) out.push_back({l.node, {l.path.begin() + 1, l.path.end()}, l.key_mark, nullptr, {}});
      continue;
    }
    if (l.skip && l.skip->count(key)) continue;
    const auto hit = std::find_if(l.entries->begin(), l.entries->end(), [&](const auto& e) { return e.first == key; });
    if (hit != l.entries->end()) out.push_back({hit->second, {}, YAML::Mark::null_mark(), nullptr, {}});
  }
  return CaseNode(std::move(out));
}

bool CaseNode::is_map() const { return !layers_.empty() && (!layers_.back().path.empty() || layers_.back().node.IsMap()); }

YAML::Mark CaseNode::mark() const {
  if (layers_.empty()) return YAML::Mark::null_mark();
  return layers_.back().path.empty() ? layers_.back().node.Mark() : layers_.back().key_mark;
}

bool valid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    int n = c < 0x80 ? 0 : (c >> 5) == 0x6 ? 1 : (c >> 4) == 0xE ? 2 : (c >> 3) == 0x1E ? 3 : -1;
    if (n < 0 || (n > 0 && i + std::size_t(n) >= s.size())) return false;  // not a lead byte, or cut short
    std::uint32_t cp = n == 0 ? c : n == 1 ? c & 0x1F : n == 2 ? c & 0x0F : c & 0x07;
    for (int k = 1; k <= n; ++k) {
      const unsigned char d = static_cast<unsigned char>(s[i + std::size_t(k)]);
      if ((d >> 6) != 0x2) return false;
      cp = (cp << 6) | (d & 0x3F);
    }
    const std::uint32_t min_for[] = {0, 0x80, 0x800, 0x10000};
    if (cp < min_for[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;  // overlong, surrogate
    i += std::size_t(n) + 1;
  }
  return true;
}

std::string printable(std::string_view s, std::size_t max) {
  std::string out;
  for (std::size_t i = 0; i < s.size() && out.size() < max; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    std::size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (len > 1 && i + len <= s.size() && valid_utf8(s.substr(i, len))) {
      out.append(s.substr(i, len));
      i += len - 1;
    } else if (c >= 0x20 && c < 0x7F) {
      out += char(c);
    } else {
      char b[8];
      std::snprintf(b, sizeof b, "\\x%02X", c);
      out += b;
    }
  }
  if (out.size() >= max && s.size() > max) out += "...";
  return out;
}

std::string Reader::where(const YAML::Mark& m) const {
  const YAML::Mark at = m.is_null() ? origin_ : m;
  return at.is_null() ? file_ : file_ + ":" + std::to_string(at.line + 1);
}

void Reader::fail(const YAML::Mark& m, const std::string& key, const std::string& problem, const std::string& fix) const {
  throw_bad_input(where(m), key, problem, fix);
}

std::string Reader::key_text(const YAML::Node& key, const std::string& prefix) const {
  if (!key.IsScalar())
    fail(key.Mark(), prefix + (key.IsMap() ? "<mapping>" : key.IsSequence() ? "<sequence>" : "<null>"),
         "a key must be a scalar name", "write the key as a plain name followed by `:`");
  if (!valid_utf8(key.Scalar()))
    fail(key.Mark(), prefix + printable(key.Scalar()), "the key is not valid UTF-8", "write the key in UTF-8");
  return key.Scalar();
}

void Reader::keys(const YAML::Node& map, const std::set<std::string>& known, const std::string& prefix) const {
  const std::string self = prefix.empty() ? "" : prefix.substr(0, prefix.size() - 1);
  if (!map.IsMap()) fail(map.Mark(), self, "must be a mapping", "write it as `key: value` lines");
  std::set<std::string> seen;
  for (auto it = map.begin(); it != map.end(); ++it) {
    const std::string k = key_text(it->first, prefix);
    if (!known.count(k)) {
      std::string list;
      for (auto& s : known) list += (list.empty() ? "" : ", ") + s;
      fail(it->first.Mark(), prefix + printable(k), "unknown key", "use one of: " + list);
    }
    if (!seen.insert(k).second)
      fail(it->first.Mark(), prefix + k, "written twice in one mapping (YAML keys are unique)", "keep one of them");
    // `key:` or `key: null` is a value left out, never "use the default": the default would win silently. Only a
    // sweep entry's `case:` and the suite's `defaults:` may be empty (nothing added to the layers below).
    if (it->second.IsNull() && !(prefix.empty() && (k == "case" || k == "defaults")))
      fail(it->first.Mark(), prefix + k, "has no value (`" + k + ":` alone or null)",
           "write a value, or delete the line to take the default");
  }
}

void Reader::keys(const CaseNode& map, const std::set<std::string>& known, const std::string& prefix) const {
  if (!map.is_map()) {
    const std::string self = prefix.empty() ? "" : prefix.substr(0, prefix.size() - 1);
    fail(map.mark(), self, "must be a mapping", "write it as `key: value` lines");
  }
  for (const CaseNode::Layer& l : map.layers()) {
    if (l.path.empty()) keys(l.node, known, prefix);
    else if (!known.count(l.path.front())) fail(l.key_mark, prefix + printable(l.path.front()), "unknown key", "sweep over case keys only");
  }
}

void fail_at(const Reader& r, const CaseNode& n, const SpecProblem& p) {
  CaseNode v = n;
  for (std::size_t from = 0; v && from <= p.key.size();) {
    const std::size_t dot = std::min(p.key.find('.', from), p.key.size());
    v = v[p.key.substr(from, dot - from)];
    from = dot + 1;
  }
  r.fail(v ? v.mark() : YAML::Mark::null_mark(), p.key, p.problem, p.fix);
}

const YAML::Node& Reader::value(const CaseNode& n, const std::string& key, const char* what) const {
  if (n.is_map()) fail(n.mark(), key, std::string("expected ") + what + ", got a mapping", std::string("write ") + what);
  return n.node();
}

std::int64_t Reader::integer(const YAML::Node& n, const std::string& key, std::int64_t lo, std::int64_t hi) const {
  if (!n.IsScalar()) fail(n.Mark(), key, "expected a whole number", "write a whole number in " + range_text(lo, hi));
  std::int64_t v = 0;
  if (const NumberProblem p = parse_whole(n.Scalar(), lo, hi, v)) fail(n.Mark(), key, p.problem, p.fix);
  return v;
}

std::uint64_t Reader::unsigned64(const YAML::Node& n, const std::string& key) const {
  if (!n.IsScalar())
    fail(n.Mark(), key, "expected a whole number", "write an unsigned 64-bit integer in [0, 18446744073709551615]");
  std::uint64_t v = 0;
  if (const NumberProblem p = parse_unsigned64(n.Scalar(), v)) fail(n.Mark(), key, p.problem, p.fix);
  return v;
}

// A finite number; each key's range is checked where the key is known (fixtures/problem.cpp check_values).
double Reader::number(const YAML::Node& n, const std::string& key) const {
  if (!n.IsScalar()) fail(n.Mark(), key, "expected a number", "write a number such as 0.999");
  double v = 0;
  const double big = std::numeric_limits<double>::max();
  if (const NumberProblem p = parse_real(n.Scalar(), -big, big, v))
    fail(n.Mark(), key, p.problem, "write a finite decimal number such as 0.999");
  return v;
}

// `true` or `false` as plain scalars: a quoted "true" is a string (yaml-cpp tags it "!", a plain scalar "?", a node
// built in code ""; "!!str true" is a string too).
bool Reader::boolean(const YAML::Node& n, const std::string& key) const {
  bool v = false;
  if (!n.IsScalar()) fail(n.Mark(), key, "expected true or false", "write true or false");
  if (const std::string& tag = n.Tag(); tag != "?" && tag != "" && tag != "tag:yaml.org,2002:bool")
    fail(n.Mark(), key, "'" + printable(n.Scalar()) + "' is quoted: a quoted value is a string, not a boolean",
         "write true or false without quotes");
  if (const NumberProblem p = parse_bool(n.Scalar(), v)) fail(n.Mark(), key, p.problem, p.fix);
  return v;
}

std::string Reader::string(const YAML::Node& n, const std::string& key, std::size_t max_bytes, bool text) const {
  if (!n.IsScalar()) fail(n.Mark(), key, "expected a string", "write a plain value");
  const std::string& s = n.Scalar();
  if (!valid_utf8(s)) fail(n.Mark(), key, "'" + printable(s) + "' is not valid UTF-8", "write the value in UTF-8");
  for (char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if ((c < 0x20 && !(text && (c == '\n' || c == '\t' || c == '\r'))) || c == 0x7F)
      fail(n.Mark(), key, "'" + printable(s) + "' contains a control character", "remove it");
  }
  if (s.size() > max_bytes)
    fail(n.Mark(), key, "is " + std::to_string(s.size()) + " bytes long, past the limit of " + std::to_string(max_bytes),
         "shorten it");
  return s;
}

std::vector<std::string> Reader::strings(const YAML::Node& n, const std::string& key) const {
  if (n.IsScalar()) return {string(n, key)};
  if (!n.IsSequence()) fail(n.Mark(), key, "expected a list", "write [a, b]");
  std::vector<std::string> out;
  for (const auto& e : n) out.push_back(string(e, key));
  return out;
}

}  // namespace moe
