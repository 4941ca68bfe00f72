# `cmake --install` of the public API: libmoe_harness_api.so as MoeHarness::api, the API headers
# (include/moe_harness/), and the project headers they include, found by following their #include "..." lines at
# configure time, installed under include/moe-harness/ with their paths from the project root (the API re-exports
# the harness's own types, so a client compiles against the same declarations the library was built from).

# OUT: every project header reachable from FILES through #include "..." lines (paths relative to MOE_ROOT).
function(moe_header_closure out)
  set(todo ${ARGN})
  set(seen)
  while(todo)
    list(POP_FRONT todo f)
    file(STRINGS ${f} lines REGEX "^#include \"[^\"]+\"")
    foreach(line IN LISTS lines)
      string(REGEX REPLACE "^#include \"([^\"]+)\".*" "\\1" inc "${line}")
      if(EXISTS ${MOE_ROOT}/${inc} AND NOT inc IN_LIST seen)
        list(APPEND seen ${inc})
        list(APPEND todo ${MOE_ROOT}/${inc})
      elseif(EXISTS ${MOE_ROOT}/harness/include/${inc})
        # another API header: scanned as a root of its own
      elseif(NOT EXISTS ${MOE_ROOT}/${inc})
        message(FATAL_ERROR "${f}: #include \"${inc}\" is neither a project header nor an API header")
      endif()
    endforeach()
  endwhile()
  set(${out} ${seen} PARENT_SCOPE)
endfunction()

file(GLOB MOE_API_HEADERS CONFIGURE_DEPENDS ${MOE_ROOT}/harness/include/moe_harness/*.hpp)
moe_header_closure(MOE_API_INTERNAL_HEADERS ${MOE_API_HEADERS})
foreach(h IN LISTS MOE_API_INTERNAL_HEADERS)
  get_filename_component(d ${h} DIRECTORY)
  install(FILES ${MOE_ROOT}/${h} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/moe-harness/${d})
endforeach()
install(FILES ${MOE_API_HEADERS} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/moe_harness)
install(TARGETS moe_harness_api_shared EXPORT MoeHarnessTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT MoeHarnessTargets NAMESPACE MoeHarness:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/MoeHarness)
