// Kernels printing on every processor of one core, in both of tt-metal's print
// styles, with tt-metal's host API. The lines are collected through the
// device's print callback and checked. Prints PASS when all arrived.
#include <cstdio>
#include <string>
#include <vector>

#include "tt_example.hpp"

using namespace tt;
using namespace tt::tt_metal;

static void collect(void *user, uint32_t x, uint32_t y, const char *processor, const char *line) {
    auto *lines = static_cast<std::vector<std::string> *>(user);
    lines->push_back("(" + std::to_string(x) + "," + std::to_string(y) + ") " + processor + ": " +
                     line);
    std::printf("[core (%u,%u) %s] %s\n", x, y, processor, line);
}

int main(int argc, char **argv) try {
    const std::string capture = tt_example::capture_path(argc, argv);
    std::vector<std::string> lines;
    lm_device_options opts;
    lm_device_options_init(&opts);
    opts.print = collect;
    opts.print_user = &lines;
    auto mesh = distributed::MeshDevice::create_unit_mesh(0, &opts);
    distributed::MeshCommandQueue &cq = mesh->mesh_command_queue();
    tt_example::begin(*mesh, capture);

    Program program = CreateProgram();
    constexpr CoreCoord core = {2, 1};
    CreateKernel(program, tt_example::kernel("hello_dm0.cpp"), core,
                 DataMovementConfig{.processor = DataMovementProcessor::RISCV_0,
                                    .noc = NOC::RISCV_0_default});
    CreateKernel(program, tt_example::kernel("hello_dm1.cpp"), core,
                 DataMovementConfig{.processor = DataMovementProcessor::RISCV_1,
                                    .noc = NOC::RISCV_1_default});
    CreateKernel(program, tt_example::kernel("hello_compute.cpp"), core, ComputeConfig{});
    distributed::MeshWorkload workload;
    workload.add_program(distributed::MeshCoordinateRange(mesh->shape()), std::move(program));
    distributed::EnqueueMeshWorkload(cq, workload, false);
    distributed::Finish(cq);
    tt_example::end(*mesh, capture);

    const char *want[] = {
        "(2,1) DM0: Hello, Core {2, 1} on DM0", "(2,1) DM1: Hello, Core {2, 1} on DM1",
        "(2,1) DM1: value 7 and 2.500000",      "(2,1) COMPUTE: Hello from UNPACK",
        "(2,1) COMPUTE: Hello from MATH",       "(2,1) COMPUTE: Hello from PACK"};
    uint32_t missing = 0;
    for (const char *w : want) {
        bool found = false;
        for (const std::string &l : lines)
            found |= l == w;
        if (!found) std::printf("missing: %s\n", w);
        missing += !found;
    }
    bool pass = missing == 0 && lines.size() == 6;
    std::printf("%s hello_world: %zu lines from DM0, DM1 and COMPUTE\n", pass ? "PASS" : "FAIL",
                lines.size());
    return pass ? 0 : 1;
} catch (const std::exception &e) {
    std::fprintf(stderr, "hello_world: %s\n", e.what());
    return 1;
}
