# moe_add_gpu_shard_tests(PREFIX p HARNESS exe SHARDS n SUITE s [KERNEL id] [FILTERS glob...] [OUT dir] [ARGS ...])
# Registers n CTest tests `p.shard.<i>`, each running GoogleTest shard i of n of suite s on ONE GPU that CTest reserves
# for it (RESOURCE_GROUPS "gpus:1", mapped to the visible device by ci/gpu-shard), and `p.merge`, which runs after
# them and merges the shard reports into one, failing when a case is missing or duplicated:
#   ctest -L gpu-shards --resource-spec-file ci/resources/gpus-8.json -j 8
# Used by ci/shards (which ci/nightly configures), and by the test that proves the allocation works.
function(moe_add_gpu_shard_tests)
  cmake_parse_arguments(S "" "PREFIX;HARNESS;SHARDS;SUITE;KERNEL;OUT;SCRIPT" "ARGS;FILTERS" ${ARGN})
  if(NOT S_KERNEL)
    set(S_KERNEL gpu-fused-moe)
  endif()
  set(filters)
  foreach(f IN LISTS S_FILTERS)
    list(APPEND filters --filter ${f})
  endforeach()
  if(NOT S_OUT)
    set(S_OUT ${CMAKE_CURRENT_BINARY_DIR}/${S_PREFIX}-shards)
  endif()
  if(NOT S_SCRIPT)
    set(S_SCRIPT ${MOE_ROOT}/ci/gpu-shard)
  endif()
  math(EXPR last "${S_SHARDS} - 1")
  set(reports)
  foreach(i RANGE ${last})
    add_test(NAME ${S_PREFIX}.shard.${i}
             COMMAND bash ${S_SCRIPT} ${S_HARNESS} ${i} ${S_SHARDS} ${S_OUT}/${i} --
                     --suite ${S_SUITE} --kernel ${S_KERNEL} ${filters} ${S_ARGS})
    set_tests_properties(${S_PREFIX}.shard.${i} PROPERTIES RESOURCE_GROUPS "gpus:1" LABELS gpu-shards
                         FIXTURES_SETUP ${S_PREFIX}-shards)
    list(APPEND reports ${S_OUT}/${i}/report.json)
  endforeach()
  add_test(NAME ${S_PREFIX}.merge
           COMMAND ${S_HARNESS} merge ${reports} --out ${S_OUT}/merged.json --expect-suite ${S_SUITE}
                   --kernel ${S_KERNEL} ${filters})
  set_tests_properties(${S_PREFIX}.merge PROPERTIES LABELS gpu-shards FIXTURES_REQUIRED ${S_PREFIX}-shards)
endfunction()
