// The validators of every numeric command-line option (docs/cli.md gives the ranges). CLI11's own conversions
// accept what a verdict must not: "nan" and "inf" for reals (a NaN drift margin compares false, so nothing ever
// drifts), "-1" for an unsigned seed (read as 2^64 - 1), a seed past 2^64 - 1 (clamped to it), and base-prefixed
// integers ("010" is 8). Each validator is a transform: it parses the text strictly as a decimal number, refuses
// anything out of range (a CLI::ValidationError: exit 2 naming the option), and rewrites the text as the value it
// checked, so the conversion that follows reads exactly that value.
#pragma once
#include <CLI/CLI.hpp>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

namespace moe::cli {
namespace detail {
inline std::string g17(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}
inline std::string g(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}
// Decimal digits with an optional '-': what from_chars reads whole, and nothing else. A '+' is refused: a seed or a
// count has one spelling, the one reports and rerun commands print.
template <class T>
bool parse_decimal(const std::string& s, T& v, bool& out_of_range) {
  const std::size_t digits = !s.empty() && s.front() == '-' ? 1 : 0;
  if (s.size() == digits || s.find_first_not_of("0123456789", digits) != std::string::npos) return false;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  out_of_range = r.ec == std::errc::result_out_of_range;
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}
}  // namespace detail

// A finite real number in [lo, hi], or in (lo, hi] when lo_open ("nan", "inf" and hex floats refused).
inline CLI::Validator real_in(double lo, double hi, bool lo_open = false) {
  const std::string range = (lo_open ? "(" : "[") + detail::g(lo) + ", " + detail::g(hi) + "]";
  return CLI::Validator(
      [lo, hi, lo_open, range](std::string& s) -> std::string {
        const std::string t = !s.empty() && s.front() == '+' ? s.substr(1) : s;
        double v = 0;
        const auto r = std::from_chars(t.data(), t.data() + t.size(), v, std::chars_format::general);
        if (t.empty() || r.ec != std::errc() || r.ptr != t.data() + t.size() || !std::isfinite(v))
          return "'" + s + "' is not a finite number: write a decimal number in " + range;
        if (!(v >= lo && v <= hi) || (lo_open && v == lo)) return "value " + s + " outside " + range;
        s = detail::g17(v);
        return {};
      },
      "REAL in " + range, "real_in");
}

// A finite real number above 0, at most hi.
inline CLI::Validator positive_real(double hi) { return real_in(0.0, hi, true); }

// A decimal whole number in [lo, hi].
inline CLI::Validator count_in(std::int64_t lo, std::int64_t hi) {
  const std::string range = "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  return CLI::Validator(
      [lo, hi, range](std::string& s) -> std::string {
        std::int64_t v = 0;
        bool past = false;
        if (!detail::parse_decimal(s, v, past))
          return past ? "value " + s + " outside " + range : "'" + s + "' is not a whole number: write one in " + range;
        if (v < lo || v > hi) return "value " + s + " outside " + range;
        s = std::to_string(v);
        return {};
      },
      "INT in " + range, "count_in");
}

// An unsigned 64-bit seed: a decimal whole number in [0, 2^64 - 1]; "-1" is refused, not wrapped.
inline CLI::Validator seed_u64() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        const std::string range = "[0, 18446744073709551615]";
        std::uint64_t v = 0;
        bool past = false;
        if (s.find('-') != std::string::npos)
          return "value " + s + " is negative: a seed is an unsigned 64-bit integer in " + range + " (never wrapped)";
        if (!detail::parse_decimal(s, v, past))
          return past ? "value " + s + " outside " + range : "'" + s + "' is not a whole number: write one in " + range;
        s = std::to_string(v);
        return {};
      },
      "UINT64 in [0, 2^64 - 1]", "seed_u64");
}

}  // namespace moe::cli
