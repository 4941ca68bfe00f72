#include "kernels/runtime/device_info.hpp"

#include <cctype>

namespace moe {

std::string normalize_arch(const std::string& raw) {
  std::string s;
  for (char c : raw) {
    if (c == ':') break;  // target features (sramecc, xnack) are not part of the arch
    if (!std::isspace(static_cast<unsigned char>(c))) s += char(std::tolower(static_cast<unsigned char>(c)));
  }
  return s;
}

}  // namespace moe
