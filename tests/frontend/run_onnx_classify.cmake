# The test example_onnx_classify: compiles the CNN of the ONNX test models
# with the CLI for one image (`lightmetal compile cnn.onnx --dim batch=1`),
# then runs examples/onnx_classify on test images and checks that the class
# it prints is the image's label.
#
# The images are ones the model classifies with a probability of 0.94 or more
# in PyTorch (of 0, 1, 2, 7, 8, 9, 10, 13, 18 and 19), one of each class: the
# model is about 89% accurate, so the images are chosen, not the first ten.
#
# With -DNM=nm it also checks that the program holds none of the compiler:
# no frontend (lmfe_, fe_, protobuf-c), no op library (lmnn_), no recorder.
#
# -DCLI=lightmetal -DCLASSIFY=onnx_classify -DMODELS=DIR -DWORK=DIR -DIMAGES="0;1;..." [-DNM=nm]
foreach(var CLI CLASSIFY MODELS WORK IMAGES)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_onnx_classify.cmake: -D${var}= is missing")
  endif()
endforeach()

if(NM)
  execute_process(COMMAND ${NM} ${CLASSIFY} RESULT_VARIABLE rc OUTPUT_VARIABLE syms ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NM} ${CLASSIFY} failed (${rc}): ${err}")
  endif()
  string(REGEX MATCHALL " [TtDdBbRr] (lmfe_|fe_onnx|protobuf_c_|lmnn_|lm_light_metal_begin_capture)[A-Za-z0-9_]*"
         found "${syms}")
  if(found)
    message(FATAL_ERROR "onnx_classify links the compiler, not only the replay library:${found}")
  endif()
endif()

file(MAKE_DIRECTORY ${WORK})
set(lmb ${WORK}/cnn_b1.lmb)
execute_process(COMMAND ${CLI} compile ${MODELS}/cnn.onnx -o ${lmb} --dim batch=1 -q
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "lightmetal compile failed (${rc}):\n${out}")
endif()

set(right 0)
foreach(image ${IMAGES})
  execute_process(COMMAND ${CLASSIFY} ${lmb} --image ${image}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("${out}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "onnx_classify --image ${image} failed (${rc}): ${err}")
  endif()
  if(NOT out MATCHES "label ([^\n]+)\nclass: ([^\n]+) \\(([0-9.]+)%\\)")
    message(FATAL_ERROR "onnx_classify --image ${image}: unexpected output")
  endif()
  if(NOT CMAKE_MATCH_1 STREQUAL CMAKE_MATCH_2)
    message(FATAL_ERROR "image ${image}: classified as ${CMAKE_MATCH_2}, label ${CMAKE_MATCH_1}")
  endif()
  math(EXPR right "${right} + 1")
endforeach()

# Bad arguments are refused with a message, not a crash.
execute_process(COMMAND ${CLASSIFY} ${lmb} --image 10000 RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "--image takes 0..9999")
  message(FATAL_ERROR "onnx_classify --image 10000: exit ${rc}, '${err}'")
endif()
message("onnx_classify: ${right} images classified as their labels")
