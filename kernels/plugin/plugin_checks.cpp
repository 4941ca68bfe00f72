#include "kernels/plugin/plugin_checks.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fmt/format.h>

#include "fixtures/error.hpp"
#include "fixtures/input_file.hpp"

namespace moe {
namespace {

#if defined(__x86_64__)
constexpr int kMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr int kMachine = EM_AARCH64;
#elif defined(__powerpc64__)
constexpr int kMachine = EM_PPC64;
#elif defined(__riscv)
constexpr int kMachine = EM_RISCV;
#else
constexpr int kMachine = -1;  // another architecture: e_machine is left to the dynamic loader
#endif
constexpr unsigned char kClass = sizeof(void*) == 8 ? ELFCLASS64 : ELFCLASS32;
constexpr unsigned char kData = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB;

[[noreturn]] void refuse(const std::string& where, const std::string& problem) {
  throw_bad_input(where, "--plugin", problem, "build the plugin as a shared library for this machine (gcc -shared -fPIC) and pass the complete file");
}

// [offset, offset + len) lies inside a file of `size` bytes (no overflow).
bool inside(std::uint64_t offset, std::uint64_t len, std::uint64_t size) { return offset <= size && len <= size - offset; }

bool read_at(int fd, void* buf, std::size_t n, std::uint64_t offset) {
  auto* p = static_cast<char*>(buf);
  while (n > 0) {
    const ssize_t got = ::pread(fd, p, n, off_t(offset));
    if (got <= 0) return false;
    p += got, n -= std::size_t(got), offset += std::uint64_t(got);
  }
  return true;
}

struct Fd {
  int fd;
  ~Fd() { if (fd >= 0) ::close(fd); }
};

}  // namespace

void check_plugin_file(const std::filesystem::path& path) {
  const std::string where = path.string();
  const std::uint64_t size = check_input_file(path, "plugin library");
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) refuse(where, std::string("cannot open the library: ") + std::strerror(errno));
  ElfW(Ehdr) eh{};
  const std::size_t head = std::size_t(std::min<std::uint64_t>(size, sizeof eh));
  if (!read_at(f.fd, &eh, head, 0)) refuse(where, std::string("cannot read the library: ") + std::strerror(errno));
  if (head < SELFMAG || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
    refuse(where, "not an ELF file (no ELF magic number): not a shared library");
  if (head < sizeof eh)
    refuse(where, fmt::format("truncated: {} bytes, shorter than an ELF header ({} bytes)", size, sizeof eh));
  if (eh.e_ident[EI_CLASS] != kClass)
    refuse(where, fmt::format("an ELF object of class {} but this harness is {}-bit", int(eh.e_ident[EI_CLASS]), 8 * sizeof(void*)));
  if (eh.e_ident[EI_DATA] != kData) refuse(where, "an ELF object of the other byte order");
  if (eh.e_type != ET_DYN)
    refuse(where, fmt::format("an ELF object of type {} ({}), not a shared object", eh.e_type,
                              eh.e_type == ET_EXEC ? "an executable" : eh.e_type == ET_REL ? "an object file" : "not loadable"));
  if (kMachine >= 0 && eh.e_machine != kMachine)
    refuse(where, fmt::format("built for ELF machine {}; this machine is {}", eh.e_machine, kMachine));
  if (eh.e_phentsize != sizeof(ElfW(Phdr)) || eh.e_phnum == 0)
    refuse(where, "malformed ELF program headers (none, or of the wrong size)");
  const std::uint64_t ph_bytes = std::uint64_t(eh.e_phnum) * sizeof(ElfW(Phdr));
  if (!inside(eh.e_phoff, ph_bytes, size))
    refuse(where, fmt::format("truncated: its program headers end at byte {} but the file has {} bytes", eh.e_phoff + ph_bytes, size));
  for (unsigned i = 0; i < eh.e_phnum; ++i) {
    ElfW(Phdr) ph{};
    if (!read_at(f.fd, &ph, sizeof ph, eh.e_phoff + std::uint64_t(i) * sizeof ph))
      refuse(where, "cannot read its program headers (file changed while reading?)");
    if (ph.p_type != PT_NULL && !inside(ph.p_offset, ph.p_filesz, size))
      refuse(where, fmt::format("truncated: segment {} (type {:#x}) ends at byte {} but the file has {} bytes", i, ph.p_type,
                                std::uint64_t(ph.p_offset) + ph.p_filesz, size));
  }
  if (eh.e_shoff != 0) {
    const std::uint64_t sh_bytes = std::uint64_t(eh.e_shnum) * eh.e_shentsize;
    if (!inside(eh.e_shoff, sh_bytes, size))
      refuse(where, fmt::format("truncated: its section headers end at byte {} but the file has {} bytes", eh.e_shoff + sh_bytes, size));
  }
}

void check_plugin_entry_is_code(const void* entry, const std::string& where) {
  Dl_info info{};
  void* sym_entry = nullptr;
  if (::dladdr1(entry, &info, &sym_entry, RTLD_DL_SYMENT) == 0)
    refuse(where, "the entry symbol lies in no loaded object");
  const auto* sym = static_cast<const ElfW(Sym)*>(sym_entry);
  const unsigned type = sym ? unsigned(sym->st_info) & 0xF : unsigned(STT_FUNC);  // ELF{32,64}_ST_TYPE
  if (type != STT_FUNC && type != STT_GNU_IFUNC)
    throw_bad_input(where, "--plugin",
                    fmt::format("the symbol moe_plugin_entry is not a function (ELF symbol type {}: data)", type),
                    "define `MOE_PLUGIN_EXPORT const moe_plugin_api* moe_plugin_entry(uint32_t)` as a function (kernels/plugin/moe_plugin.h)");
  struct Probe { std::uintptr_t addr; bool found, executable; } probe{reinterpret_cast<std::uintptr_t>(entry), false, false};
  ::dl_iterate_phdr([](dl_phdr_info* obj, std::size_t, void* data) -> int {
    auto* p = static_cast<Probe*>(data);
    for (unsigned i = 0; i < obj->dlpi_phnum; ++i) {
      const ElfW(Phdr)& ph = obj->dlpi_phdr[i];
      const std::uintptr_t begin = obj->dlpi_addr + ph.p_vaddr;
      if (ph.p_type == PT_LOAD && p->addr >= begin && p->addr - begin < ph.p_memsz) {
        p->found = true;
        p->executable = (ph.p_flags & PF_X) != 0;
        return 1;
      }
    }
    return 0;
  }, &probe);
  if (!probe.found || !probe.executable)
    throw_bad_input(where, "--plugin", "the symbol moe_plugin_entry is not in an executable segment (it is data, not code)",
                    "define `MOE_PLUGIN_EXPORT const moe_plugin_api* moe_plugin_entry(uint32_t)` as a function (kernels/plugin/moe_plugin.h)");
}

namespace {
// The length of the well-formed UTF-8 sequence at s[i] (RFC 3629: no overlong forms, no surrogates, at most
// U+10FFFF), or 0 when the bytes there are not one.
std::size_t utf8_sequence(std::string_view s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  std::size_t n = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k)
    if ((b(k) & 0xC0) != 0x80) return 0;
  if (c == 0xE0 && b(1) < 0xA0) return 0;   // overlong
  if (c == 0xED && b(1) > 0x9F) return 0;   // surrogates
  if (c == 0xF0 && b(1) < 0x90) return 0;   // overlong
  if (c == 0xF4 && b(1) > 0x8F) return 0;   // above U+10FFFF
  return n;
}
}  // namespace

bool is_clean_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = utf8_sequence(s, i);
    if (n == 0 || (n == 1 && (static_cast<unsigned char>(s[i]) < 0x20 || s[i] == 0x7F))) return false;
    i += n;
  }
  return true;
}

std::string sanitize_utf8(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = utf8_sequence(s, i);
    if (n == 0) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(s[i]));
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

}  // namespace moe
