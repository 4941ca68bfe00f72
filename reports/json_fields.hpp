// Checked reads of the JSON documents the harness writes (report.json, the run journal, the worker's records): a
// field is present and of the wanted type, or the read is bad input naming the file and the field's full key
// ("cases[3].metrics.min_cos"). `null` is how a non-finite number is written (JSON has no NaN): it reads as NaN.
// Templated on the JSON type: report readers keep the document's key order (ordered_json), the others do not.
#pragma once
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "fixtures/error.hpp"

namespace moe {

enum class JsonWant { object, array, string, number, integer, boolean };  // number: a JSON number, or null

template <class Json>
class JsonFields {
 public:
  // `file`: where the document came from (a path, "journal.jsonl:7", "the worker's reply"); `fix`: what to pass.
  JsonFields(std::string file, std::string fix) : file_(std::move(file)), fix_(std::move(fix)) {}
  const std::string& file() const { return file_; }

  static std::string key(const std::string& path, const std::string& k) { return path.empty() ? k : path + "." + k; }

  const Json& get(const Json& parent, const std::string& path, const std::string& k, JsonWant w) const {
    if (!parent.contains(k)) fail(key(path, k), "missing");
    return check(parent[k], key(path, k), w);
  }
  const Json& check(const Json& v, const std::string& full, JsonWant w) const {
    if (!is(v, w)) fail(full, std::string("is ") + v.type_name() + " but must be " + name(w));
    return v;
  }
  std::string str(const Json& parent, const std::string& path, const std::string& k) const {
    return get(parent, path, k, JsonWant::string).template get<std::string>();
  }
  // An optional field: absent reads as `absent` (fields added to schema version 1 after it was first written).
  std::string str_or(const Json& parent, const std::string& path, const std::string& k, const std::string& absent) const {
    return parent.contains(k) ? str(parent, path, k) : absent;
  }
  double num(const Json& parent, const std::string& path, const std::string& k) const {
    return as_number(get(parent, path, k, JsonWant::number));
  }
  std::vector<double> numbers(const Json& parent, const std::string& path, const std::string& k) const {
    const Json& a = get(parent, path, k, JsonWant::array);
    std::vector<double> out;
    out.reserve(a.size());
    for (std::size_t i = 0; i < a.size(); ++i)
      out.push_back(as_number(check(a[i], key(path, k) + "[" + std::to_string(i) + "]", JsonWant::number)));
    return out;
  }
  // 16 lowercase hex digits, as the writer spells fingerprints and hashes.
  std::uint64_t hex64(const Json& parent, const std::string& path, const std::string& k) const {
    const std::string s = str(parent, path, k);
    if (s.size() != 16 || s.find_first_not_of("0123456789abcdef") != std::string::npos)
      fail(key(path, k), "'" + s.substr(0, 40) + "' is not 16 lowercase hex digits");
    return std::stoull(s, nullptr, 16);
  }
  [[noreturn]] void fail(const std::string& full, const std::string& problem) const {
    throw_bad_input(file_, full, problem, fix_);
  }
  static double as_number(const Json& v) {
    return v.is_null() ? std::numeric_limits<double>::quiet_NaN() : v.template get<double>();
  }

 private:
  static bool is(const Json& v, JsonWant w) {
    switch (w) {
      case JsonWant::object: return v.is_object();
      case JsonWant::array: return v.is_array();
      case JsonWant::string: return v.is_string();
      case JsonWant::number: return v.is_number() || v.is_null();
      case JsonWant::integer: return v.is_number_integer();
      case JsonWant::boolean: return v.is_boolean();
    }
    return false;
  }
  static const char* name(JsonWant w) {
    switch (w) {
      case JsonWant::object: return "an object";
      case JsonWant::array: return "an array";
      case JsonWant::string: return "a string";
      case JsonWant::number: return "a number (or null)";
      case JsonWant::integer: return "a whole number";
      case JsonWant::boolean: return "true or false";
    }
    return "";
  }
  std::string file_, fix_;
};

}  // namespace moe
