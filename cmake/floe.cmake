# floe_module(NAME SOURCES ... DEPS ...): one static library per module, includes from src/.
function(floe_module name)
  cmake_parse_arguments(M "" "" "SOURCES;DEPS" ${ARGN})
  add_library(floe_${name} STATIC ${M_SOURCES})
  target_include_directories(floe_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(floe_${name} PUBLIC ${M_DEPS})
endfunction()

# floe_test(NAME SOURCES ... DEPS ... [PREFIX P] [DEFINITIONS D...] [PROPERTIES ...]): one
# GoogleTest binary, registered with CTest. Nothing when FLOE_BUILD_TESTS is off. The tests are
# listed when CTest runs (PRE_TEST), so building never runs a test binary.
function(floe_test name)
  cmake_parse_arguments(T "" "PREFIX" "SOURCES;DEPS;DEFINITIONS;PROPERTIES" ${ARGN})
  if(NOT FLOE_BUILD_TESTS)
    return()
  endif()
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_DEPS} GTest::gtest GTest::gtest_main)
  if(T_DEFINITIONS)
    target_compile_definitions(${name} PRIVATE ${T_DEFINITIONS})
  endif()
  gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST DISCOVERY_TIMEOUT 60 TEST_PREFIX "${T_PREFIX}"
    PROPERTIES TIMEOUT 600 ${T_PROPERTIES})
endfunction()
