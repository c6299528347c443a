# Shared compile settings for every target of the project.

set(LM_WARNINGS -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
    -Wpointer-arith -Wformat=2 -Wvla -Wno-unused-parameter)
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

# lm_add_fuzzer(<name> SOURCES ... LIBS ... CORPUS <dir> [MAX_LEN n]):
# the fuzz target always runs over its committed regression corpus as a test
# (test_<name>_corpus, any compiler, sanitizers included). With clang and
# LM_FUZZ it is also a libFuzzer binary, and <name>_bounded runs a seeded fuzz
# session of LM_FUZZ_RUNS inputs (a count, not a time limit). New inputs go to
# a scratch directory in the build tree; promote finds by copying them over.
option(LM_FUZZ "Build libFuzzer targets (clang only) and run bounded fuzz tests" ON)
set(LM_FUZZ_RUNS 20000 CACHE STRING "Inputs each bounded fuzz test tries")
function(lm_add_fuzzer name)
  cmake_parse_arguments(F "" "CORPUS;MAX_LEN" "SOURCES;LIBS" ${ARGN})
  if(NOT F_MAX_LEN)
    set(F_MAX_LEN 65536)
  endif()
  lm_add_test(test_${name}_corpus SOURCES ${F_SOURCES}
              ${PROJECT_SOURCE_DIR}/tests/fuzz_corpus_main.c LIBS ${F_LIBS})
  target_compile_definitions(test_${name}_corpus PRIVATE LM_FUZZ_CORPUS_DIR="${F_CORPUS}")
  if(NOT (LM_FUZZ AND CMAKE_C_COMPILER_ID STREQUAL "Clang"))
    return()
  endif()
  include(CheckCSourceCompiles)
  set(CMAKE_REQUIRED_FLAGS "-fsanitize=fuzzer")
  check_c_source_compiles("#include <stdint.h>
    #include <stddef.h>
    int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }"
    LM_HAVE_LIBFUZZER)
  unset(CMAKE_REQUIRED_FLAGS)
  if(NOT LM_HAVE_LIBFUZZER)
    return()
  endif()
  add_executable(${name} ${F_SOURCES})
  lm_apply_settings(${name})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests ${PROJECT_SOURCE_DIR}/src
                             ${CMAKE_CURRENT_SOURCE_DIR})
  target_compile_options(${name} PRIVATE -fsanitize=fuzzer)
  target_link_options(${name} PRIVATE -fsanitize=fuzzer)
  if(NOT LM_SANITIZE)
    target_compile_options(${name} PRIVATE -fsanitize=address,undefined)
    target_link_options(${name} PRIVATE -fsanitize=address,undefined)
  endif()
  target_link_libraries(${name} PRIVATE ${F_LIBS})
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  set(work ${CMAKE_CURRENT_BINARY_DIR}/${name}_work)
  add_test(NAME ${name}_bounded COMMAND ${CMAKE_COMMAND} -E env
    sh -c "mkdir -p '${work}' && exec '$<TARGET_FILE:${name}>' -runs=${LM_FUZZ_RUNS} -seed=1 -max_len=${F_MAX_LEN} '${work}' '${F_CORPUS}'")
  set_tests_properties(${name}_bounded PROPERTIES TIMEOUT 600 LABELS fuzz)
endfunction()
