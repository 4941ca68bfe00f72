# The C++ libraries the build needs, as find_package arguments: one list for the build (top-level CMakeLists.txt,
# REQUIRED) and for ci/install-deps's probe (ci/deps-probe, QUIET), so the two can never disagree.
set(MOE_LIBRARY_PACKAGES "Eigen3 3.4 NO_MODULE" "fmt" "GTest" "yaml-cpp" "nlohmann_json 3" "CLI11" "benchmark")
