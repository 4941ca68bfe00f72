// The kinds of rows of the case-field table (harness/case/case_fields.cpp): how a row reaches its member of CaseSpec,
// reads its value from YAML and writes it to case.json. Only that table includes this header.
#pragma once
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <type_traits>

#include "harness/case/case_fields.hpp"

namespace moe::fields {

template <auto M, auto... Rest, class T>
constexpr auto& walk(T& obj) {
  if constexpr (sizeof...(Rest) == 0) return obj.*M;
  else return walk<Rest...>(obj.*M);
}

// The member a row lands in: a chain of member pointers from CaseSpec.
template <auto First, auto... Rest>
struct At {
  static auto& get(CaseSpec& c) { return walk<First, Rest...>(c); }
  static const auto& get(const CaseSpec& c) { return walk<First, Rest...>(c); }
  static constexpr bool problem = std::is_same_v<decltype(First), ProblemSpec CaseSpec::*>;
};
template <auto... M>
using InProblem = At<&CaseSpec::problem, M...>;

template <class A>
using ValueOf = std::remove_cvref_t<decltype(A::get(std::declval<CaseSpec&>()))>;

template <class T>
nlohmann::ordered_json json_value(const T& v);
template <class T>
nlohmann::ordered_json json_value(const std::optional<T>& v) {
  return v ? json_value(*v) : nlohmann::ordered_json(nullptr);
}
template <class T>
nlohmann::ordered_json json_value(const T& v) {
  if constexpr (std::is_same_v<T, DType>) return dtype_name(v);
  else if constexpr (std::is_enum_v<T>) return name(v);
  else return v;
}

using IdFn = std::string (*)(const CaseSpec&, const IdBase&);
struct Id {
  int order = 0;
  IdFn fn = nullptr;
};

// Modifiers of a row.
inline CaseField preset(CaseField f) {
  f.preset = true;
  return f;
}
inline CaseField with_range(CaseField f, std::int64_t lo, std::int64_t hi) {
  f.lo = lo;
  f.hi = hi;
  return f;
}
inline CaseField then(CaseField f, decltype(CaseField::after) after) {
  f.after = after;
  return f;
}

template <class A>
void read_integer(const CaseField& f, const Reader& r, const CaseNode& v, CaseSpec& c) {
  A::get(c) = ValueOf<A>(r.integer(v, f.key, f.lo, f.hi));
}
template <class A>
void read_unsigned(const CaseField& f, const Reader& r, const CaseNode& v, CaseSpec& c) {
  A::get(c) = r.unsigned64(v, f.key);
}
template <class A>
void read_number(const CaseField& f, const Reader& r, const CaseNode& v, CaseSpec& c) {
  A::get(c) = ValueOf<A>(r.number(v, f.key));
}
template <class A>
void read_boolean(const CaseField& f, const Reader& r, const CaseNode& v, CaseSpec& c) {
  A::get(c) = r.boolean(v, f.key);
}
template <class A>
void read_strings(const CaseField& f, const Reader& r, const CaseNode& v, CaseSpec& c) {
  A::get(c) = r.strings(v, f.key);
}
// Free text (tab and newline allowed), up to 4096 bytes.
template <class A>
void read_text(const CaseField& f, const Reader& r, const CaseNode& v, CaseSpec& c) {
  A::get(c) = r.string(v, f.key, 4096, true);
}
// An enum by its name in fixtures/problem.cpp's tables; an unknown name lists the accepted ones.
template <class A>
void read_choice(const CaseField& f, const Reader& r, const CaseNode& v, CaseSpec& c) {
  using E = ValueOf<A>;
  const std::string s = r.string(v, f.key);
  const auto e = parse_enum<E>(s);
  if (!e) r.fail(v.mark(), f.key, "unknown value '" + printable(s) + "'", "use one of: " + enum_names<E>());
  A::get(c) = *e;
}
template <class A>
void read_dtype(const CaseField& f, const Reader& r, const CaseNode& v, CaseSpec& c) {
  const std::string s = r.string(v, f.key);
  const auto d = parse_dtype(s);
  if (!d) r.fail(v.mark(), f.key, "unknown dtype '" + printable(s) + "'", "use bf16, f16 or f32");
  A::get(c) = *d;
}

// A row whose reading, JSON or both are its own.
inline CaseField custom(std::string key, std::string json, bool problem, decltype(CaseField::read) read,
                        decltype(CaseField::to_json) to_json, Id id = {}) {
  CaseField f;
  f.key = std::move(key);
  f.json = std::move(json);
  f.problem = problem;
  f.read = read;
  f.to_json = to_json;
  f.id_order = id.order;
  f.id = id.fn;
  return f;
}
// A row of the member A, read by `read`; case.json (under `json`, unless empty) holds the member's value.
template <class A>
CaseField row(std::string key, std::string json, decltype(CaseField::read) read, Id id) {
  decltype(CaseField::to_json) to_json = nullptr;
  if (!json.empty()) to_json = [](const CaseSpec& c, nlohmann::ordered_json& j) { j = json_value(A::get(c)); };
  return custom(std::move(key), std::move(json), A::problem, read, to_json, id);
}
template <class A>
CaseField integer(std::string key, std::string json, std::int64_t lo, std::int64_t hi, Id id = {}) {
  return with_range(row<A>(std::move(key), std::move(json), &read_integer<A>, id), lo, hi);
}
template <class A>
CaseField unsigned64(std::string key, std::string json, Id id = {}) {
  return row<A>(std::move(key), std::move(json), &read_unsigned<A>, id);
}
template <class A>
CaseField number(std::string key, std::string json, Id id = {}) {
  return row<A>(std::move(key), std::move(json), &read_number<A>, id);
}
template <class A>
CaseField boolean(std::string key, std::string json, Id id = {}) {
  return row<A>(std::move(key), std::move(json), &read_boolean<A>, id);
}
template <class A>
CaseField choice(std::string key, std::string json, Id id = {}) {
  return row<A>(std::move(key), std::move(json), &read_choice<A>, id);
}
template <class A>
CaseField dtype(std::string key, std::string json, Id id = {}) {
  return row<A>(std::move(key), std::move(json), &read_dtype<A>, id);
}
template <class A>
CaseField strings(std::string key, std::string json) {
  return row<A>(std::move(key), std::move(json), &read_strings<A>, {});
}
template <class A>
CaseField text(std::string key) {
  return row<A>(std::move(key), "", &read_text<A>, {});
}
// A case.json entry no key sets (a derived size, the tie-break rule).
inline CaseField derived(std::string json, decltype(CaseField::to_json) to_json) {
  return custom("", std::move(json), false, nullptr, to_json);
}
// A key whose value is a mapping of the keys in the rows after it.
CaseField mapping(std::string key, bool problem, Id id = {}, decltype(CaseField::after) after = nullptr);

}  // namespace moe::fields
