/* `lightmetal compile` in a build without the ONNX frontend (LM_ENABLE_ONNX=OFF). */
#include "lmt.h"

const char lmt_compile_help[] = "usage: lightmetal compile MODEL.onnx -o FILE.lmb [options]\n"
                                "\n"
                                "This build of lightmetal has no ONNX compiler (configured with\n"
                                "LM_ENABLE_ONNX=OFF).\n";

int lmt_cmd_compile(int argc, char **argv) {
    (void)argc;
    (void)argv;
    lmt_error("compile", "this build has no ONNX compiler (configured with LM_ENABLE_ONNX=OFF)");
    return LMT_EXIT_INVALID;
}
