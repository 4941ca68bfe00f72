// What the plugin loader checks before it trusts a library: the file is a complete ELF shared object for this
// machine (a truncated file would be mapped past its end and fault on first touch), the entry symbol is code in an
// executable segment (calling data faults), and the strings the plugin hands back are UTF-8 (reports are JSON).
#pragma once
#include <filesystem>
#include <string>
#include <string_view>

namespace moe {

// Before dlopen: a regular file, an ELF shared object of this machine's class, byte order and architecture, whose
// program headers, segments and section headers all lie inside the file. Otherwise bad input naming `path`.
void check_plugin_file(const std::filesystem::path& path);

// After dlsym: `entry` must be a function symbol inside an executable segment of a loaded object. `where` names
// the plugin in the error.
void check_plugin_entry_is_code(const void* entry, const std::string& where);

// Whether `s` is well-formed UTF-8 without control characters (what an id or version may hold).
bool is_clean_utf8(std::string_view s);
// `s` with every byte that is not part of well-formed UTF-8 written as \xNN, so that a plugin's per-case text
// (a decline reason, a variant, an error message) reaches the report readable and valid.
std::string sanitize_utf8(std::string_view s);

}  // namespace moe
