// DRAM -> L1 -> DRAM loopback with tt-metal's host API (lightmetal/tt_metal.hpp):
// one data movement kernel copies a 50-page buffer through one page of L1.
// Prints PASS when the copy matches. `--capture FILE` records a Light Metal
// binary of the run.
#include <cstdint>
#include <cstdio>
#include <vector>

#include "tt_example.hpp"

using namespace tt;
using namespace tt::tt_metal;

int main(int argc, char **argv) try {
    const std::string capture = tt_example::capture_path(argc, argv);
    auto mesh = distributed::MeshDevice::create_unit_mesh(0);
    distributed::MeshCommandQueue &cq = mesh->mesh_command_queue();
    tt_example::begin(*mesh, capture);

    constexpr uint32_t page_size = 2048, num_pages = 50;
    distributed::DeviceLocalBufferConfig dram{.page_size = page_size,
                                              .buffer_type = BufferType::DRAM};
    distributed::DeviceLocalBufferConfig l1{.page_size = page_size, .buffer_type = BufferType::L1};
    auto src = distributed::MeshBuffer::create({.size = page_size * num_pages}, dram, mesh.get());
    auto dst = distributed::MeshBuffer::create({.size = page_size * num_pages}, dram, mesh.get());
    auto scratch = distributed::MeshBuffer::create({.size = page_size}, l1, mesh.get());
    tt_example::input(src, "in", capture);

    std::vector<uint32_t> input(page_size * num_pages / 4);
    uint32_t seed = 7;
    for (uint32_t &v : input)
        v = seed = seed * 1664525u + 1013904223u;
    distributed::EnqueueWriteMeshBuffer(cq, src, input, false);

    Program program = CreateProgram();
    constexpr CoreCoord core = {0, 0};
    std::vector<uint32_t> compile_args = {page_size};
    TensorAccessorArgs(*src).append_to(compile_args);
    TensorAccessorArgs(*dst).append_to(compile_args);
    KernelHandle copy = CreateKernel(program, tt_example::kernel("loopback_dram_copy.cpp"), core,
                                     DataMovementConfig{.processor = DataMovementProcessor::RISCV_0,
                                                        .noc = NOC::RISCV_0_default,
                                                        .compile_args = compile_args});
    SetRuntimeArgs(program, copy, core,
                   {scratch->address(), src->address(), dst->address(), num_pages});

    distributed::MeshWorkload workload;
    workload.add_program(distributed::MeshCoordinateRange(mesh->shape()), std::move(program));
    distributed::EnqueueMeshWorkload(cq, workload, false);
    distributed::Finish(cq);

    std::vector<uint32_t> output;
    distributed::EnqueueReadMeshBuffer(cq, output, dst, true);
    tt_example::output(cq, dst, "out", capture);
    tt_example::end(*mesh, capture);
    bool pass = output == input;
    std::printf("%s loopback: %u pages through L1\n", pass ? "PASS" : "FAIL", num_pages);
    return pass ? 0 : 1;
} catch (const std::exception &e) {
    std::fprintf(stderr, "loopback: %s\n", e.what());
    return 1;
}
