# The build stamp: what source tree a binary was built from, written at every build (not at configure time, which a
# later commit or edit would leave stale). MOE_BUILD_COMMIT is the checkout's commit, plus "+dirty.<12 hex>" when the
# tree differs from it: the first 12 hex digits of the SHA-256 of `git diff HEAD` followed by a line for each
# untracked, not-ignored path git lists: "untracked PATH SHA256" for a regular file, "untracked PATH -> TARGET" for a
# symbolic link (what git would record: a venv's lib64 -> lib is a link to a directory, never read as a file); so two
# builds of the same edits get the same stamp. Nothing else is read (git lists no directories, FIFOs or sockets). "unknown" where the
# source root is not the top of a git checkout: no git, a tarball, or a copy inside another repository (whose commit
# says nothing about these sources). OUT is rewritten only when its text changes, so an unchanged tree recompiles
# nothing.
# Usage: cmake -DMOE_ROOT=<source root> -DOUT=<header> -P build_stamp.cmake
execute_process(COMMAND git -C "${MOE_ROOT}" rev-parse --show-toplevel
                OUTPUT_VARIABLE top OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
set(commit "")
if(rc EQUAL 0 AND NOT top STREQUAL "")
  file(REAL_PATH "${top}" top)
  file(REAL_PATH "${MOE_ROOT}" root)
  if(top STREQUAL root)
    execute_process(COMMAND git -C "${MOE_ROOT}" rev-parse --short=12 HEAD
                    OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
  endif()
endif()
if(NOT rc EQUAL 0 OR commit STREQUAL "")
  set(stamp "unknown")
else()
  execute_process(COMMAND git -C "${MOE_ROOT}" diff HEAD --binary --no-ext-diff --no-color
                  OUTPUT_VARIABLE changes ERROR_QUIET)
  execute_process(COMMAND git -C "${MOE_ROOT}" ls-files --others --exclude-standard
                  OUTPUT_VARIABLE untracked OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT untracked STREQUAL "")
    string(REPLACE "\n" ";" untracked "${untracked}")
    foreach(f IN LISTS untracked)
      if(IS_SYMLINK "${MOE_ROOT}/${f}")
        file(READ_SYMLINK "${MOE_ROOT}/${f}" target)
        string(APPEND changes "untracked ${f} -> ${target}\n")
      elseif(EXISTS "${MOE_ROOT}/${f}" AND NOT IS_DIRECTORY "${MOE_ROOT}/${f}")
        file(SHA256 "${MOE_ROOT}/${f}" h)
        string(APPEND changes "untracked ${f} ${h}\n")
      endif()
    endforeach()
  endif()
  if(changes STREQUAL "")
    set(stamp "${commit}")
  else()
    string(SHA256 h "${changes}")
    string(SUBSTRING "${h}" 0 12 h)
    set(stamp "${commit}+dirty.${h}")
  endif()
endif()
set(text "// Written by cmake/build_stamp.cmake at every build; do not edit.\n#define MOE_BUILD_COMMIT \"${stamp}\"\n")
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
