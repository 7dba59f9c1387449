# neodb_add_test(<name> SOURCES a.cc b.cc LIBS lib... [LABELS slow gpu ...] [TIMEOUT s])
# One GoogleTest binary registered as one CTest test (its output names every
# failing case). Registered per binary rather than per case because
# gtest_discover_tests splits list-valued properties (LABELS, ENVIRONMENT)
# into bogus property names. A binary labelled `gpu` whose output shows
# GTEST_SKIP (no CUDA device) is reported by CTest as skipped, not passed.
function(neodb_add_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gmock GTest::gtest_main)
  neodb_target_defaults(${name})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 900)
  endif()
  add_test(NAME ${name} COMMAND ${name} --gtest_color=no)
  set_tests_properties(${name} PROPERTIES
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    LABELS "${ARG_LABELS}"
    TIMEOUT ${ARG_TIMEOUT}
    ENVIRONMENT "NEODB_SOURCE_DIR=${PROJECT_SOURCE_DIR};NEODB_BINARY_DIR=${PROJECT_BINARY_DIR}")
  if("gpu" IN_LIST ARG_LABELS)
    set_tests_properties(${name} PROPERTIES SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")
  endif()
endfunction()
