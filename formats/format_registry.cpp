#include "formats/format_registry.hpp"

#include "formats/e8m0.hpp"
#include "formats/minifloat.hpp"

namespace moe {
namespace {
struct Entry { ElementFormat f; std::string_view name; const MinifloatSpec* spec; };
constexpr Entry kEntries[] = {
    {ElementFormat::e4m3fn, "e4m3fn", &kE4M3Fn}, {ElementFormat::e4m3fnuz, "e4m3fnuz", &kE4M3Fnuz},
    {ElementFormat::e5m2, "e5m2", &kE5M2},       {ElementFormat::e5m2fnuz, "e5m2fnuz", &kE5M2Fnuz},
    {ElementFormat::e8m0, "e8m0", nullptr},      {ElementFormat::e2m1, "e2m1", &kE2M1},
};
const Entry& entry(ElementFormat f) {
  for (auto& e : kEntries) if (e.f == f) return e;
  return kEntries[0];
}
}  // namespace

std::optional<ElementFormat> parse_element_format(std::string_view name) {
  for (auto& e : kEntries) if (e.name == name) return e.f;
  return std::nullopt;
}
std::string_view element_format_name(ElementFormat f) { return entry(f).name; }
std::string_view element_format_names_list() { return "e4m3fn, e4m3fnuz, e5m2, e5m2fnuz, e8m0, e2m1"; }
int element_format_code_count(ElementFormat f) { return f == ElementFormat::e2m1 ? 16 : 256; }
float element_format_decode(ElementFormat f, std::uint32_t code) {
  if (f == ElementFormat::e8m0) return e8m0_decode(std::uint8_t(code));
  return minifloat_decode(*entry(f).spec, code);
}

}  // namespace moe
