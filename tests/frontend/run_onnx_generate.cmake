# The test example_onnx_generate: compiles the zoo's fixed-cache decoder step
# (llama_static_cache) with the CLI, without and with --trace (each step one
# trace launch), runs examples/onnx_generate on the prompts of the case's
# generate.txt, and checks that each sequence's tokens are PyTorch's greedy
# ones there (scripts/make_onnx_zoo.py makes them with
# the same model, one token a step, and refuses a reference whose two best
# tokens are within 1e-3 at any step). Then feeds it bad arguments and a
# binary of another interface, each refused with its message.
#
# -DCLI=lightmetal -DGENERATE=onnx_generate -DZOO=DIR -DWORK=DIR
foreach(var CLI GENERATE ZOO WORK)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_onnx_generate.cmake: -D${var}= is missing")
  endif()
endforeach()

file(MAKE_DIRECTORY ${WORK})
set(lmb ${WORK}/decoder.lmb)
file(STRINGS ${ZOO}/llama_static_cache/generate.txt lines)
set(args)
set(want)
foreach(line ${lines})
  if(line MATCHES "^prompt (.+)$")
    list(APPEND args --prompt ${CMAKE_MATCH_1})
  elseif(line MATCHES "^tokens ")
    string(APPEND want "${line}\n")
  endif()
endforeach()
if(NOT args OR NOT want)
  message(FATAL_ERROR "${ZOO}/llama_static_cache/generate.txt holds no prompts or tokens")
endif()

foreach(trace "" --trace)
  set(step ${WORK}/decoder${trace}.lmb)
  execute_process(COMMAND ${CLI} compile ${ZOO}/llama_static_cache/model.onnx -o ${step} -q ${trace}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "lightmetal compile ${trace} failed (${rc}):\n${out}")
  endif()
  execute_process(COMMAND ${GENERATE} ${step} ${args}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("${trace} ${out}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "onnx_generate ${trace} failed (${rc}): ${err}")
  endif()
  string(REGEX MATCHALL "tokens [0-9]+:[ 0-9]*\n" got "${out}")
  string(REPLACE ";" "" got "${got}")
  if(NOT got STREQUAL want)
    message(FATAL_ERROR "onnx_generate's tokens (${step}):\n${got}PyTorch's:\n${want}")
  endif()
endforeach()

# Bad arguments and a binary that is not a decoder step: exit 2 and a message.
execute_process(COMMAND ${CLI} compile ${ZOO}/gpt/model.onnx -o ${WORK}/gpt.lmb -q
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "lightmetal compile of the zoo's gpt failed (${rc}):\n${out}")
endif()
set(bad_1 ${lmb} --prompt 3,17,5,9)
set(want_1 "1 prompts for a binary compiled for a batch of 2")
set(bad_2 ${lmb} --prompt 3,17 --prompt 4)
set(want_2 "prompts of 2 and 1 tokens")
set(bad_3 ${lmb} --prompt 3,64 --prompt 4,5)
set(want_3 "token 1 of prompt 0 is 64; the vocabulary is 0..63")
set(bad_4 ${lmb} --prompt 1,2,3,4,5,6,7,8,9,10 --prompt 1,2,3,4,5,6,7,8,9,10)
set(want_4 "10 prompt tokens and 8 generated need 17 positions; the cache holds 16")
set(bad_5 ${lmb} --prompt 3,,4 --prompt 1,2)
set(want_5 "--prompt takes comma-separated token ids")
set(bad_6 ${lmb} --prompt 3 --prompt 4 --tokens 0)
set(want_6 "--tokens takes 1..1024, not '0'")
set(bad_7 ${WORK}/gpt.lmb --prompt 3 --prompt 4)
set(want_7 "the binary has no input named 'ids'")
set(bad_8 ${WORK}/missing.lmb --prompt 3)
set(want_8 "missing.lmb")
foreach(i RANGE 1 8)
  execute_process(COMMAND ${GENERATE} ${bad_${i}} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  string(FIND "${err}" "${want_${i}}" at)
  if(NOT rc EQUAL 2 OR at EQUAL -1)
    message(FATAL_ERROR "onnx_generate ${bad_${i}}: exit ${rc}, '${err}' (want exit 2 and "
                        "'${want_${i}}')")
  endif()
endforeach()
message("onnx_generate: PyTorch's greedy tokens, with and without --trace; 8 bad uses refused")
