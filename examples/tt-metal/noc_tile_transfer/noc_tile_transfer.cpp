// A tile moved from one core's L1 to another's over the NoC, with a semaphore
// handshake, using tt-metal's host API. Prints PASS when the tile arrives
// intact in the output buffer.
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
    auto src = distributed::MeshBuffer::create({.size = tile_bytes}, dram, mesh.get());
    auto dst = distributed::MeshBuffer::create({.size = tile_bytes}, dram, mesh.get());
    tt_example::input(src, "in", capture);
    std::vector<bfloat16> tile(constants::TILE_HW);
    for (uint32_t i = 0; i < constants::TILE_HW; i++)
        tile[i] = bfloat16(static_cast<float>(i) * 0.25f - 100.0f);
    distributed::EnqueueWriteMeshBuffer(cq, src, tile, false);

    Program program = CreateProgram();
    const CoreCoord core0 = {0, 0}, core1 = {3, 2};
    const CoreRangeSet both(std::vector<CoreRange>{CoreRange(core0), CoreRange(core1)});
    constexpr uint32_t cb = CBIndex::c_0;
    CreateCircularBuffer(program, both,
                         CircularBufferConfig(tile_bytes, {{cb, DataFormat::Float16_b}})
                             .set_page_size(cb, tile_bytes));
    const uint32_t sem = CreateSemaphore(program, both, 0);
    CoreCoord noc0 = mesh->worker_core_from_logical_core(core0);
    CoreCoord noc1 = mesh->worker_core_from_logical_core(core1);
    auto k0 = CreateKernel(program, tt_example::kernel("reader0.cpp"), core0,
                           DataMovementConfig{.processor = DataMovementProcessor::RISCV_0,
                                              .noc = NOC::RISCV_0_default,
                                              .compile_args = {cb, sem}});
    auto k1 = CreateKernel(program, tt_example::kernel("reader1.cpp"), core1,
                           DataMovementConfig{.processor = DataMovementProcessor::RISCV_0,
                                              .noc = NOC::RISCV_0_default,
                                              .compile_args = {cb, sem}});
    SetRuntimeArgs(program, k0, core0,
                   {src->address(), static_cast<uint32_t>(noc1.x), static_cast<uint32_t>(noc1.y)});
    SetRuntimeArgs(program, k1, core1,
                   {dst->address(), static_cast<uint32_t>(noc0.x), static_cast<uint32_t>(noc0.y)});
    distributed::MeshWorkload workload;
    workload.add_program(distributed::MeshCoordinateRange(mesh->shape()), std::move(program));
    distributed::EnqueueMeshWorkload(cq, workload, false);
    std::vector<bfloat16> out;
    distributed::EnqueueReadMeshBuffer(cq, out, dst, true);
    tt_example::output(cq, dst, "out", capture);
    tt_example::end(*mesh, capture);
    bool pass = out == tile;
    std::printf("%s noc_tile_transfer: core (0,0) -> core (3,2) over the NoC\n",
                pass ? "PASS" : "FAIL");
    return pass ? 0 : 1;
} catch (const std::exception &e) {
    std::fprintf(stderr, "noc_tile_transfer: %s\n", e.what());
    return 1;
}
