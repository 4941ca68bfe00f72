# Sanitizers and fuzzing, for every C and C++ target of the build (the `asan` preset).
#   MOE_SANITIZE  e.g. "address,undefined": compiled and linked into everything; -fno-sanitize-recover=all makes
#                 every UBSan finding fatal, so a test that triggers one fails.
#   MOE_FUZZ      ON: clang's libFuzzer. Every target gets coverage instrumentation (-fsanitize=fuzzer-no-link) and
#                 moe_add_fuzzer() links its targets with the libFuzzer driver (-fsanitize=fuzzer). OFF: the same
#                 targets are built as replay programs (fuzz/replay_main.cpp), run by CTest over their committed
#                 corpus and regression inputs, so every build replays every crash ever found.
set(MOE_SANITIZE "" CACHE STRING "sanitizers for every C/C++ target, e.g. address,undefined (empty: none)")
option(MOE_FUZZ "build the parsers' libFuzzer targets (clang only)" OFF)

if(MOE_SANITIZE)
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=${MOE_SANITIZE};-fno-sanitize-recover=all;-fno-omit-frame-pointer>")
  add_link_options("$<$<LINK_LANGUAGE:C,CXX>:-fsanitize=${MOE_SANITIZE}>")
  message(STATUS "moe-harness sanitizers: ${MOE_SANITIZE} (fatal on the first finding)")
endif()
if(MOE_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "MOE_FUZZ needs clang's libFuzzer (configure with the asan preset, or CXX=clang++); "
                        "this compiler is ${CMAKE_CXX_COMPILER_ID}")
  endif()
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=fuzzer-no-link>")
  message(STATUS "moe-harness fuzz targets: libFuzzer")
endif()

# moe_add_fuzzer(NAME name SOURCE file.cpp LIBS lib... CORPUS dir REGRESSIONS dir)
# One parser's fuzz target. Its source defines LLVMFuzzerTestOneInput; with MOE_FUZZ it is a libFuzzer binary, else
# a replay program. Either way the CTest test `fuzz.replay.<name>` runs it over every file of CORPUS and
# REGRESSIONS: a crash, a sanitizer report or an exception other than moe::Error fails it.
function(moe_add_fuzzer)
  cmake_parse_arguments(F "" "NAME;SOURCE;CORPUS;REGRESSIONS" "LIBS" ${ARGN})
  add_executable(${F_NAME} ${F_SOURCE})
  target_link_libraries(${F_NAME} PRIVATE ${F_LIBS})
  if(MOE_FUZZ)
    target_link_options(${F_NAME} PRIVATE -fsanitize=fuzzer)
    # -runs=0: libFuzzer runs every input of the directories once, then stops (non-zero on the first failure).
    add_test(NAME fuzz.replay.${F_NAME} COMMAND ${F_NAME} -runs=0 ${F_CORPUS} ${F_REGRESSIONS})
  else()
    target_sources(${F_NAME} PRIVATE ${MOE_ROOT}/fixtures/fuzz/replay_main.cpp)
    add_test(NAME fuzz.replay.${F_NAME} COMMAND ${F_NAME} ${F_CORPUS} ${F_REGRESSIONS})
  endif()
  set_tests_properties(fuzz.replay.${F_NAME} PROPERTIES LABELS "unit;fuzz-replay")
endfunction()
