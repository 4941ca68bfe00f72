#include "harness/cli/commands.hpp"

#include <cmath>
#include <cstdio>
#include <string>

#include "fixtures/error.hpp"
#include "formats/format_registry.hpp"

namespace moe::cli {

void add_formats_command(CLI::App& app, int& exit_code) {
  auto* formats = app.add_subcommand("formats", "Numeric format tables (a debugging aid)");
  formats->require_subcommand(1);
  auto* decode = formats->add_subcommand("decode", "Print every code of FORMAT and its value (%.9g)");
  auto name = std::make_shared<std::string>();
  decode->add_option("FORMAT", *name, std::string("one of ") + std::string(element_format_names_list()))->required();
  decode->callback([name, &exit_code] {
    const auto f = parse_element_format(*name);
    if (!f) throw_bad_input("command line", "FORMAT", "unknown format '" + *name + "'",
                            std::string("use one of ") + std::string(element_format_names_list()));
    const int n = element_format_code_count(*f);
    for (int c = 0; c < n; ++c) {
      const double v = element_format_decode(*f, std::uint32_t(c));
      if (std::isnan(v)) std::printf("0x%02x nan\n", c);  // one spelling for every NaN code, whatever its sign bit
      else std::printf("0x%02x %.9g\n", c, v);
    }
    exit_code = 0;
  });
}

}  // namespace moe::cli
