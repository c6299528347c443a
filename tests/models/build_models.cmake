# ctest's setup of the fixture onnx_models (cmake -P): reports a missing
# prerequisite of scripts/make_onnx_models.py and make_onnx_zoo.py in words, then builds the
# target onnx_models (which does nothing when the models are up to date).
# -DPYTHON3=<interpreter or ...-NOTFOUND> -DDATA=<Fashion-MNIST dir>
# -DBINARY_DIR=<build tree>
set(fix "run scripts/install-deps.sh (it installs python3-torch, python3-torchvision, \
python3-numpy, python3-onnx and dataset-fashion-mnist)")

if(NOT PYTHON3)
  message(FATAL_ERROR "onnx_models: no python3 found (/usr/bin/python3 expected): ${fix}, "
                      "then reconfigure the build")
endif()
execute_process(COMMAND ${PYTHON3} -c "import torch, torchvision, numpy, onnx"
                RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  # The traceback's last line says which module is missing.
  string(STRIP "${err}" err)
  string(REGEX REPLACE ".*\n" "" err "${err}")
  message(FATAL_ERROR "onnx_models: ${PYTHON3} cannot import torch, torchvision, numpy and onnx "
                      "(${err}): ${fix}")
endif()
foreach(f train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte
          t10k-labels-idx1-ubyte)
  if(NOT EXISTS ${DATA}/${f}.gz AND NOT EXISTS ${DATA}/${f})
    message(FATAL_ERROR "onnx_models: the Fashion-MNIST file ${DATA}/${f}.gz is missing: ${fix}")
  endif()
endforeach()

execute_process(COMMAND ${CMAKE_COMMAND} --build ${BINARY_DIR} --target onnx_models
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "onnx_models: building the ONNX test models failed (see above)")
endif()
