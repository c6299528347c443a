// Two tiles of small integers (exact in bfloat16) added by the compute engine,
// with tt-metal's host API and late-2025 dialect kernels. Prints PASS when
// every element is the sum.
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
    const uint32_t tile_bytes = tile_size(DataFormat::Float16_b);
    distributed::DeviceLocalBufferConfig dram{.page_size = tile_bytes,
                                              .buffer_type = BufferType::DRAM};
    auto a = distributed::MeshBuffer::create({.size = tile_bytes}, dram, mesh.get());
    auto b = distributed::MeshBuffer::create({.size = tile_bytes}, dram, mesh.get());
    auto c = distributed::MeshBuffer::create({.size = tile_bytes}, dram, mesh.get());
    tt_example::input(a, "a", capture);
    tt_example::input(b, "b", capture);
    std::vector<bfloat16> va(constants::TILE_HW), vb(constants::TILE_HW);
    for (uint32_t i = 0; i < constants::TILE_HW; i++) {
        va[i] = bfloat16(static_cast<float>(i % 100));
        vb[i] = bfloat16(static_cast<float>(14 - static_cast<int>(i % 29)));
    }
    distributed::EnqueueWriteMeshBuffer(cq, a, va, false);
    distributed::EnqueueWriteMeshBuffer(cq, b, vb, false);

    Program program = CreateProgram();
    constexpr CoreCoord core = {0, 0};
    for (uint32_t cb : {CBIndex::c_0, CBIndex::c_1, CBIndex::c_16})
        CreateCircularBuffer(
            program, core,
            CircularBufferConfig(tile_bytes, {{static_cast<uint8_t>(cb), DataFormat::Float16_b}})
                .set_page_size(cb, tile_bytes));
    KernelHandle reader =
        CreateKernel(program, tt_example::kernel("reader_binary_1_tile.cpp"), core,
                     DataMovementConfig{.processor = DataMovementProcessor::RISCV_1,
                                        .noc = NOC::RISCV_1_default});
    KernelHandle writer =
        CreateKernel(program, tt_example::kernel("writer_1_tile.cpp"), core,
                     DataMovementConfig{.processor = DataMovementProcessor::RISCV_0,
                                        .noc = NOC::RISCV_0_default});
    CreateKernel(program, tt_example::kernel("add_2_tiles.cpp"), core, ComputeConfig{});
    SetRuntimeArgs(program, reader, core, {a->address(), b->address()});
    SetRuntimeArgs(program, writer, core, {c->address()});
    distributed::MeshWorkload workload;
    workload.add_program(distributed::MeshCoordinateRange(mesh->shape()), std::move(program));
    distributed::EnqueueMeshWorkload(cq, workload, false);
    std::vector<bfloat16> vc;
    distributed::EnqueueReadMeshBuffer(cq, vc, c, true);
    tt_example::output(cq, c, "c", capture);
    tt_example::end(*mesh, capture);
    uint32_t wrong = 0;
    for (uint32_t i = 0; i < constants::TILE_HW; i++)
        wrong += vc[i].to_float() != va[i].to_float() + vb[i].to_float();
    std::printf("%s add_2_integers_in_compute: %u sums, %u wrong\n", wrong ? "FAIL" : "PASS",
                constants::TILE_HW, wrong);
    return wrong ? 1 : 0;
} catch (const std::exception &e) {
    std::fprintf(stderr, "add_2_integers_in_compute: %s\n", e.what());
    return 1;
}
