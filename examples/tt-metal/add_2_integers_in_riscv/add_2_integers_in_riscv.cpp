// Two vectors of integers added by a data movement kernel, with tt-metal's
// host API. Prints PASS when every sum is right.
#include <cstdint>
#include <cstdio>
#include <vector>

#include "tt_example.hpp"

using namespace tt;
using namespace tt::tt_metal;

int main(int argc, char **argv) try {
    const std::string capture = tt_example::capture_path(argc, argv);
    constexpr uint32_t n = 16;
    auto mesh = distributed::MeshDevice::create_unit_mesh(0);
    distributed::MeshCommandQueue &cq = mesh->mesh_command_queue();
    tt_example::begin(*mesh, capture);
    distributed::DeviceLocalBufferConfig dram{.page_size = n * 4, .buffer_type = BufferType::DRAM};
    auto a = distributed::MeshBuffer::create({.size = n * 4}, dram, mesh.get());
    auto b = distributed::MeshBuffer::create({.size = n * 4}, dram, mesh.get());
    auto c = distributed::MeshBuffer::create({.size = n * 4}, dram, mesh.get());
    tt_example::input(a, "a", capture);
    tt_example::input(b, "b", capture);
    std::vector<uint32_t> va(n), vb(n);
    for (uint32_t i = 0; i < n; i++) {
        va[i] = 1000 * i + 14;
        vb[i] = 7 * i + 0x80000000u;
    }
    distributed::EnqueueWriteMeshBuffer(cq, a, va, false);
    distributed::EnqueueWriteMeshBuffer(cq, b, vb, false);

    Program program = CreateProgram();
    constexpr CoreCoord core = {0, 0};
    for (uint32_t cb : {CBIndex::c_0, CBIndex::c_1})
        CreateCircularBuffer(
            program, core,
            CircularBufferConfig(n * 4, {{static_cast<uint8_t>(cb), DataFormat::UInt32}})
                .set_page_size(cb, n * 4));
    KernelHandle add =
        CreateKernel(program, tt_example::kernel("reader_writer_add_in_riscv.cpp"), core,
                     DataMovementConfig{.processor = DataMovementProcessor::RISCV_0,
                                        .noc = NOC::RISCV_0_default,
                                        .compile_args = {n}});
    SetRuntimeArgs(program, add, core, {a->address(), b->address(), c->address()});
    distributed::MeshWorkload workload;
    workload.add_program(distributed::MeshCoordinateRange(mesh->shape()), std::move(program));
    distributed::EnqueueMeshWorkload(cq, workload, false);
    std::vector<uint32_t> vc;
    distributed::EnqueueReadMeshBuffer(cq, vc, c, true);
    tt_example::output(cq, c, "c", capture);
    tt_example::end(*mesh, capture);
    uint32_t wrong = 0;
    for (uint32_t i = 0; i < n; i++)
        wrong += vc[i] != va[i] + vb[i];
    std::printf("%s add_2_integers_in_riscv: %u sums, %u wrong (e.g. %u + %u = %u)\n",
                wrong ? "FAIL" : "PASS", n, wrong, va[1], vb[1], vc[1]);
    return wrong ? 1 : 0;
} catch (const std::exception &e) {
    std::fprintf(stderr, "add_2_integers_in_riscv: %s\n", e.what());
    return 1;
}
