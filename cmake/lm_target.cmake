# Shared compile settings for every target of the project.

set(LM_WARNINGS -Wall -Wextra -Wshadow $<$<COMPILE_LANGUAGE:C>:-Wstrict-prototypes>
    $<$<COMPILE_LANGUAGE:C>:-Wmissing-prototypes> -Wpointer-arith -Wformat=2 -Wvla
    -Wno-unused-parameter
    # C++ (the tt-metal examples): aggregates filled with designated
    # initialisers leave members to their defaults on purpose.
    $<$<COMPILE_LANGUAGE:CXX>:-Wno-missing-field-initializers>)
if(LM_WERROR)
  list(APPEND LM_WARNINGS -Werror)
endif()

# POSIX 2008 for mmap, pthreads and friends; nothing GNU-only.
set(LM_DEFINES _POSIX_C_SOURCE=200809L)

if(LM_SANITIZE)
  set(LM_SAN_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=all
      -fno-omit-frame-pointer)
  add_compile_options(${LM_SAN_FLAGS})
  add_link_options(${LM_SAN_FLAGS})
endif()

find_package(Threads REQUIRED)

# lm_apply_settings(<target>): warnings and defines used by all project code.
function(lm_apply_settings target)
  target_compile_options(${target} PRIVATE ${LM_WARNINGS})
  target_compile_definitions(${target} PRIVATE ${LM_DEFINES})
endfunction()

# lm_add_test(<name> SOURCES ... [LIBS ...] [TIMEOUT s]): one test binary, one ctest.
function(lm_add_test name)
  cmake_parse_arguments(T "" "TIMEOUT" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  lm_apply_settings(${name})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests
                             ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(${name} PRIVATE ${T_LIBS})
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  add_test(NAME ${name} COMMAND ${name})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  set_tests_properties(${name} PROPERTIES TIMEOUT ${T_TIMEOUT})
endfunction()

# lm_add_bench(<name> SOURCES ... [LIBS ...]): a benchmark that prints `name: value` lines.
function(lm_add_bench name)
  cmake_parse_arguments(B "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${B_SOURCES})
  lm_apply_settings(${name})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/bench
                             ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(${name} PRIVATE ${B_LIBS})
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
endfunction()
