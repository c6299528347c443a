# Fuzzing. Every fuzz target (lm_add_fuzzer) replays its committed regression
# corpus as an ordinary test in every build, with any compiler.
#
# A fuzz build (LM_FUZZ_INSTRUMENT=ON, clang only; `make fuzz` configures one)
# compiles ALL project code with coverage instrumentation for libFuzzer
# (-fsanitize=fuzzer-no-link) and with AddressSanitizer and
# UndefinedBehaviorSanitizer, so the fuzzer is guided by the libraries' edges
# and comparisons, not only the harness's, and a memory error or undefined
# behaviour anywhere stops the run as a crash. Only there are the fuzz targets
# also libFuzzer binaries (target `fuzzers` builds them all): a harness
# linked against uninstrumented libraries fuzzes nearly blind.

option(LM_FUZZ_INSTRUMENT
       "Fuzz build: instrument all code for libFuzzer, with ASan and UBSan (clang only)" OFF)
set(LM_FUZZ_RUNS 20000 CACHE STRING "Inputs a bounded fuzz test tries, unless its target sets RUNS")

if(LM_FUZZ_INSTRUMENT)
  if(NOT CMAKE_C_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "LM_FUZZ_INSTRUMENT needs clang (configure with CC=clang)")
  endif()
  include(CheckCSourceCompiles)
  set(CMAKE_REQUIRED_FLAGS "-fsanitize=fuzzer")
  check_c_source_compiles("#include <stdint.h>
    #include <stddef.h>
    int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }"
    LM_HAVE_LIBFUZZER)
  unset(CMAKE_REQUIRED_FLAGS)
  if(NOT LM_HAVE_LIBFUZZER)
    message(FATAL_ERROR "LM_FUZZ_INSTRUMENT: clang cannot link -fsanitize=fuzzer "
                        "(Debian package libclang-rt-14-dev)")
  endif()
  # Recovering from a UBSan report would hide it from the fuzzer.
  set(LM_FUZZ_SAN_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=all
      -fno-omit-frame-pointer)
  add_compile_options(-fsanitize=fuzzer-no-link ${LM_FUZZ_SAN_FLAGS})
  add_link_options(${LM_FUZZ_SAN_FLAGS})
  add_custom_target(fuzzers)
endif()

# lm_add_fuzzer(<name> SOURCES ... LIBS ... CORPUS <dir> [MAX_LEN n] [RUNS n]):
# a fuzz target defining LLVMFuzzerTestOneInput. Always: test_<name>_corpus
# runs it over every file of <dir>. In a fuzz build, also: the libFuzzer
# binary <name>, a test <name>_bounded (label `fuzz`) trying RUNS inputs
# (default LM_FUZZ_RUNS; a count with a fixed seed, not a time limit) of at
# most MAX_LEN bytes, seeded from <dir>, and a description in
# <build>/fuzzers/<name> that scripts/fuzz-long.sh reads. New inputs go to a
# scratch directory in the build tree; promote finds by copying them to <dir>.
function(lm_add_fuzzer name)
  cmake_parse_arguments(F "" "CORPUS;MAX_LEN;RUNS" "SOURCES;LIBS" ${ARGN})
  if(NOT F_MAX_LEN)
    set(F_MAX_LEN 65536)
  endif()
  if(NOT F_RUNS)
    set(F_RUNS ${LM_FUZZ_RUNS})
  endif()
  lm_add_test(test_${name}_corpus SOURCES ${F_SOURCES}
              ${PROJECT_SOURCE_DIR}/tests/fuzz_corpus_main.c LIBS ${F_LIBS})
  target_compile_definitions(test_${name}_corpus PRIVATE LM_FUZZ_CORPUS_DIR="${F_CORPUS}")
  if(NOT LM_FUZZ_INSTRUMENT)
    return()
  endif()
  add_executable(${name} ${F_SOURCES})
  lm_apply_settings(${name})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests ${PROJECT_SOURCE_DIR}/src
                             ${CMAKE_CURRENT_SOURCE_DIR})
  target_compile_options(${name} PRIVATE -fsanitize=fuzzer)
  target_link_options(${name} PRIVATE -fsanitize=fuzzer)
  target_link_libraries(${name} PRIVATE ${F_LIBS})
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  add_dependencies(fuzzers ${name})
  set(work ${CMAKE_CURRENT_BINARY_DIR}/${name}_work)
  add_test(NAME ${name}_bounded COMMAND ${CMAKE_COMMAND} -E env
    sh -c "mkdir -p '${work}' && exec '$<TARGET_FILE:${name}>' -runs=${F_RUNS} -seed=1 -max_len=${F_MAX_LEN} '${work}' '${F_CORPUS}'")
  set_tests_properties(${name}_bounded PROPERTIES TIMEOUT 600 LABELS fuzz)
  file(GENERATE OUTPUT ${CMAKE_BINARY_DIR}/fuzzers/${name}
       CONTENT "binary='$<TARGET_FILE:${name}>'\ncorpus='${F_CORPUS}'\nmax_len=${F_MAX_LEN}\n")
endfunction()
