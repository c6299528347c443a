// Vector add on height-sharded L1 buffers with tt-metal's host API: each of
// four cores adds the shard it holds, its circular buffers placed on the
// shards themselves (globally allocated), so no tile crosses the NoC. Prints
// PASS when c = bf16(a + b) everywhere.
#include <cstdint>
#include <cstdio>
#include <vector>

#include "tt_example.hpp"

using namespace tt;
using namespace tt::tt_metal;

int main(int argc, char **argv) try {
    const std::string capture = tt_example::capture_path(argc, argv);
    constexpr uint32_t n_cores = 4, tiles_per_core = 4, n_tiles = n_cores * tiles_per_core;
    auto mesh = distributed::MeshDevice::create_unit_mesh(0);
    distributed::MeshCommandQueue &cq = mesh->mesh_command_queue();
    tt_example::begin(*mesh, capture);
    const uint32_t tile_bytes = tile_size(DataFormat::Float16_b);
    const CoreRange cores({0, 0}, {n_cores - 1, 0});
    ShardSpec shard{CoreRangeSet(cores), {tiles_per_core * 32, 32}, ShardOrientation::ROW_MAJOR};
    distributed::DeviceLocalBufferConfig l1{
        .page_size = tile_bytes,
        .buffer_type = BufferType::L1,
        .sharding_args = BufferShardingArgs(ShardSpecBuffer(shard, {32, 32}, {n_tiles, 1}),
                                            TensorMemoryLayout::HEIGHT_SHARDED)};
    distributed::ReplicatedBufferConfig size{.size = n_tiles * tile_bytes};
    auto a = distributed::MeshBuffer::create(size, l1, mesh.get());
    auto b = distributed::MeshBuffer::create(size, l1, mesh.get());
    auto c = distributed::MeshBuffer::create(size, l1, mesh.get());
    tt_example::input(a, "a", capture);
    tt_example::input(b, "b", capture);
    std::vector<bfloat16> va(n_tiles * constants::TILE_HW), vb(va.size());
    for (uint32_t i = 0; i < va.size(); i++) {
        va[i] = bfloat16(static_cast<float>(i % 301) / 8.0f);
        vb[i] = bfloat16(-static_cast<float>(i % 127) / 4.0f);
    }
    distributed::EnqueueWriteMeshBuffer(cq, a, va, false);
    distributed::EnqueueWriteMeshBuffer(cq, b, vb, false);

    Program program = CreateProgram();
    const uint32_t shard_bytes = tiles_per_core * tile_bytes;
    const std::shared_ptr<distributed::MeshBuffer> backing[] = {a, b, c};
    const uint8_t indices[] = {CBIndex::c_0, CBIndex::c_1, CBIndex::c_16};
    for (int i = 0; i < 3; i++)
        CreateCircularBuffer(
            program, cores,
            CircularBufferConfig(shard_bytes, {{indices[i], DataFormat::Float16_b}})
                .set_page_size(indices[i], tile_bytes)
                .set_globally_allocated_address(*backing[i]));
    auto reader = CreateKernel(program, tt_example::kernel("reader_sharded.cpp"), cores,
                               DataMovementConfig{.processor = DataMovementProcessor::RISCV_1,
                                                  .noc = NOC::RISCV_1_default});
    auto writer = CreateKernel(program, tt_example::kernel("writer_sharded.cpp"), cores,
                               DataMovementConfig{.processor = DataMovementProcessor::RISCV_0,
                                                  .noc = NOC::RISCV_0_default});
    auto compute =
        CreateKernel(program, tt_example::kernel("add_sharded.cpp"), cores, ComputeConfig{});
    for (KernelHandle k : {reader, writer, compute})
        SetRuntimeArgs(program, k, cores, {tiles_per_core});
    distributed::MeshWorkload workload;
    workload.add_program(distributed::MeshCoordinateRange(mesh->shape()), std::move(program));
    distributed::EnqueueMeshWorkload(cq, workload, false);
    std::vector<bfloat16> vc;
    distributed::EnqueueReadMeshBuffer(cq, vc, c, true);
    tt_example::output(cq, c, "c", capture);
    tt_example::end(*mesh, capture);
    uint32_t wrong = 0;
    for (uint32_t i = 0; i < va.size(); i++)
        wrong += !(vc[i] == bfloat16(va[i].to_float() + vb[i].to_float()));
    std::printf("%s sharded_vector_add: %u tiles on %u cores, %u elements wrong\n",
                wrong ? "FAIL" : "PASS", n_tiles, n_cores, wrong);
    return wrong ? 1 : 0;
} catch (const std::exception &e) {
    std::fprintf(stderr, "sharded_vector_add: %s\n", e.what());
    return 1;
}
