# floe_module(NAME SOURCES ... DEPS ...): one static library per module, includes from src/.
function(floe_module name)
  cmake_parse_arguments(M "" "" "SOURCES;DEPS" ${ARGN})
  add_library(floe_${name} STATIC ${M_SOURCES})
  target_include_directories(floe_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(floe_${name} PUBLIC ${M_DEPS})
endfunction()

# floe_test(NAME SOURCES ... DEPS ...): one GoogleTest binary per module, registered with CTest.
function(floe_test name)
  cmake_parse_arguments(T "" "" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_DEPS} GTest::gtest GTest::gtest_main)
  include(GoogleTest)
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 600)
endfunction()
