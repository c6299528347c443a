// One core multicasts a tile to a 3x2 rectangle of receivers, which each store
// it to their own page of the output, with tt-metal's host API. Prints PASS
// when all six copies are intact.
#include <algorithm>
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
    const CoreCoord sender = {0, 0};
    const CoreRange receivers({1, 0}, {3, 1});
    const uint32_t num_dests = static_cast<uint32_t>(receivers.size());
    distributed::DeviceLocalBufferConfig dram{.page_size = tile_bytes,
                                              .buffer_type = BufferType::DRAM};
    auto src = distributed::MeshBuffer::create({.size = tile_bytes}, dram, mesh.get());
    auto dst = distributed::MeshBuffer::create({.size = num_dests * tile_bytes}, dram, mesh.get());
    tt_example::input(src, "in", capture);
    std::vector<bfloat16> tile(constants::TILE_HW);
    for (uint32_t i = 0; i < constants::TILE_HW; i++)
        tile[i] = bfloat16(static_cast<float>(i % 97) - 48.0f);
    distributed::EnqueueWriteMeshBuffer(cq, src, tile, false);

    Program program = CreateProgram();
    const CoreRangeSet all(std::vector<CoreRange>{CoreRange(sender), receivers});
    CreateCircularBuffer(program, all,
                         CircularBufferConfig(tile_bytes, {{CBIndex::c_0, DataFormat::Float16_b}})
                             .set_page_size(CBIndex::c_0, tile_bytes));
    const uint32_t sem = CreateSemaphore(program, all, 0);
    std::vector<uint32_t> sender_args = {sem}, receiver_args = {sem};
    TensorAccessorArgs(*src).append_to(sender_args);
    TensorAccessorArgs(*dst).append_to(receiver_args);
    auto coordinator = CreateKernel(program, tt_example::kernel("coordinator.cpp"), sender,
                                    DataMovementConfig{.processor = DataMovementProcessor::RISCV_0,
                                                       .noc = NOC::RISCV_0_default,
                                                       .compile_args = sender_args});
    auto receiver = CreateKernel(program, tt_example::kernel("receiver.cpp"), receivers,
                                 DataMovementConfig{.processor = DataMovementProcessor::RISCV_1,
                                                    .noc = NOC::RISCV_1_default,
                                                    .compile_args = receiver_args});
    CoreCoord first = mesh->worker_core_from_logical_core(receivers.start_coord);
    CoreCoord last = mesh->worker_core_from_logical_core(receivers.end_coord);
    SetRuntimeArgs(program, coordinator, sender,
                   {src->address(), static_cast<uint32_t>(first.x), static_cast<uint32_t>(first.y),
                    static_cast<uint32_t>(last.x), static_cast<uint32_t>(last.y), num_dests});
    std::vector<CoreCoord> cores;
    std::vector<std::vector<uint32_t>> args;
    for (std::size_t y = receivers.start_coord.y; y <= receivers.end_coord.y; y++)
        for (std::size_t x = receivers.start_coord.x; x <= receivers.end_coord.x; x++) {
            args.push_back({dst->address(), static_cast<uint32_t>(cores.size())});
            cores.push_back({x, y});
        }
    SetRuntimeArgs(program, receiver, cores, args);

    distributed::MeshWorkload workload;
    workload.add_program(distributed::MeshCoordinateRange(mesh->shape()), std::move(program));
    distributed::EnqueueMeshWorkload(cq, workload, false);
    std::vector<bfloat16> out;
    distributed::EnqueueReadMeshBuffer(cq, out, dst, true);
    tt_example::output(cq, dst, "out", capture);
    tt_example::end(*mesh, capture);
    uint32_t intact = 0;
    for (uint32_t r = 0; r < num_dests; r++)
        intact += std::equal(tile.begin(), tile.end(), out.begin() + r * constants::TILE_HW);
    bool pass = intact == num_dests;
    std::printf("%s multicast: %u of %u receivers got the tile\n", pass ? "PASS" : "FAIL", intact,
                num_dests);
    return pass ? 0 : 1;
} catch (const std::exception &e) {
    std::fprintf(stderr, "multicast: %s\n", e.what());
    return 1;
}
