// The validators of every numeric command-line option (docs/cli.md gives the ranges). CLI11's own conversions
// accept what a verdict must not: "nan" and "inf" for reals (a NaN drift margin compares false, so nothing ever
// drifts), "-1" for an unsigned seed (read as 2^64 - 1), a seed past 2^64 - 1 (clamped to it), and base-prefixed
// integers ("010" is 8). Each validator is a transform: it reads the text with the one strict parser
// (fixtures/strict_number.hpp: decimal only, no '+', space or hex float, no wrap, bounds inclusive), refuses anything
// else (a CLI::ValidationError: exit 2 naming the option), and rewrites the text as the value it checked, so the
// conversion that follows reads exactly that value.
#pragma once
#include <CLI/CLI.hpp>

#include <cstdint>
#include <cstdio>
#include <string>

#include "fixtures/strict_number.hpp"

namespace moe::cli {
namespace detail {
inline std::string g17(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}
}  // namespace detail

// A finite real number in [lo, hi], or in (lo, hi] when lo_open.
inline CLI::Validator real_in(double lo, double hi, bool lo_open = false) {
  return CLI::Validator(
      [lo, hi, lo_open](std::string& s) -> std::string {
        double v = 0;
        if (const NumberProblem p = parse_real(s, lo, hi, v, lo_open)) return p.text();
        s = detail::g17(v);
        return {};
      },
      "REAL in " + range_text(lo, hi, lo_open), "real_in");
}

// A finite real number above 0, at most hi.
inline CLI::Validator positive_real(double hi) { return real_in(0.0, hi, true); }

// A decimal whole number in [lo, hi].
inline CLI::Validator count_in(std::int64_t lo, std::int64_t hi) {
  return CLI::Validator(
      [lo, hi](std::string& s) -> std::string {
        std::int64_t v = 0;
        if (const NumberProblem p = parse_whole(s, lo, hi, v)) return p.text();
        s = std::to_string(v);
        return {};
      },
      "INT in " + range_text(lo, hi), "count_in");
}

// An unsigned 64-bit seed: a decimal whole number in [0, 2^64 - 1]; "-1" is refused, not wrapped.
inline CLI::Validator seed_u64() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        std::uint64_t v = 0;
        if (const NumberProblem p = parse_unsigned64(s, v)) return p.text();
        s = std::to_string(v);
        return {};
      },
      "UINT64 in [0, 2^64 - 1]", "seed_u64");
}

}  // namespace moe::cli
