// Block matmul with operand reuse and multicast, tt-metal's host API: as
// matmul_multicore_reuse, but each A block is read from DRAM once per grid row
// (by its first core) and multicast along the row, each B block once per grid
// column and multicast down it, with semaphores for the handshake. Prints PASS
// within tolerance of a float64 reference.
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <cstdio>
#include <vector>

#include "tt_example.hpp"

using namespace tt;
using namespace tt::tt_metal;

int main(int argc, char **argv) try {
    const std::string capture = tt_example::capture_path(argc, argv);
    constexpr uint32_t M = 256, K = 192, N = 256;
    constexpr uint32_t Mt = M / 32, Kt = K / 32, Nt = N / 32;
    constexpr uint32_t per_core_M = 2, per_core_N = 4, block_w = 2;
    constexpr uint32_t grid_x = Nt / per_core_N, grid_y = Mt / per_core_M;

    std::vector<bfloat16> a(M * K), b(K * N);
    uint32_t seed = 9;
    auto next = [&seed] {
        seed = seed * 1664525u + 1013904223u;
        return static_cast<float>(seed >> 8) / 16777216.0f * 2.0f - 1.0f;
    };
    for (bfloat16 &v : a)
        v = bfloat16(next());
    for (bfloat16 &v : b)
        v = bfloat16(next());

    auto mesh = distributed::MeshDevice::create_unit_mesh(0);
    distributed::MeshCommandQueue &cq = mesh->mesh_command_queue();
    tt_example::begin(*mesh, capture);
    const uint32_t tile = tile_size(DataFormat::Float16_b);
    distributed::DeviceLocalBufferConfig dram{.page_size = tile, .buffer_type = BufferType::DRAM};
    auto da = distributed::MeshBuffer::create({.size = M * K * 2}, dram, mesh.get());
    auto db = distributed::MeshBuffer::create({.size = K * N * 2}, dram, mesh.get());
    auto dc = distributed::MeshBuffer::create({.size = M * N * 2}, dram, mesh.get());
    tt_example::input(da, "a", capture);
    tt_example::input(db, "b", capture);
    distributed::EnqueueWriteMeshBuffer(cq, da, tilize_nfaces(a, M, K), false);
    distributed::EnqueueWriteMeshBuffer(cq, db, tilize_nfaces(b, K, N), false);

    Program program = CreateProgram();
    const CoreRange cores({0, 0}, {grid_x - 1, grid_y - 1});
    const uint32_t a_block = per_core_M * block_w, b_block = block_w * per_core_N;
    const uint32_t c_block = per_core_M * per_core_N;
    CreateCircularBuffer(
        program, cores,
        CircularBufferConfig(2 * a_block * tile, {{CBIndex::c_0, DataFormat::Float16_b}})
            .set_page_size(CBIndex::c_0, tile));
    CreateCircularBuffer(
        program, cores,
        CircularBufferConfig(2 * b_block * tile, {{CBIndex::c_1, DataFormat::Float16_b}})
            .set_page_size(CBIndex::c_1, tile));
    CreateCircularBuffer(
        program, cores,
        CircularBufferConfig(c_block * tile, {{CBIndex::c_16, DataFormat::Float16_b}})
            .set_page_size(CBIndex::c_16, tile));
    std::vector<uint32_t> reader_args = {Kt, Nt, per_core_M, per_core_N, block_w};
    TensorAccessorArgs(*da).append_to(reader_args);
    TensorAccessorArgs(*db).append_to(reader_args);
    std::vector<uint32_t> writer_args = {Nt, per_core_M, per_core_N};
    TensorAccessorArgs(*dc).append_to(writer_args);
    std::map<std::string, uint32_t> sems;
    for (const char *name : {"a_ready", "a_valid", "b_ready", "b_valid"})
        sems[name] = CreateSemaphore(program, cores, 0);
    auto reader = CreateKernel(program, tt_example::kernel("reader_mcast.cpp"), cores,
                               DataMovementConfig{.processor = DataMovementProcessor::RISCV_1,
                                                  .noc = NOC::RISCV_1_default,
                                                  .compile_args = reader_args,
                                                  .named_compile_args = sems});
    auto writer = CreateKernel(program, tt_example::kernel("writer_block.cpp"), cores,
                               DataMovementConfig{.processor = DataMovementProcessor::RISCV_0,
                                                  .noc = NOC::RISCV_0_default,
                                                  .compile_args = writer_args});
    CreateKernel(program, tt_example::kernel("bmm_reuse.cpp"), cores,
                 ComputeConfig{.fp32_dest_acc_en = true,
                               .compile_args = {Kt, Nt, per_core_M, per_core_N, block_w}});
    for (uint32_t y = 0; y < grid_y; y++)
        for (uint32_t x = 0; x < grid_x; x++) {
            const uint32_t m0 = y * per_core_M, n0 = x * per_core_N;
            CoreCoord noc = mesh->worker_core_from_logical_core({x, y});
            SetRuntimeArgs(program, reader, CoreCoord{x, y},
                           {da->address(), db->address(), static_cast<uint32_t>(noc.x),
                            static_cast<uint32_t>(noc.y), grid_x, grid_y});
            SetRuntimeArgs(program, writer, CoreCoord{x, y}, {dc->address(), m0, n0});
        }
    distributed::MeshWorkload workload;
    workload.add_program(distributed::MeshCoordinateRange(mesh->shape()), std::move(program));
    distributed::EnqueueMeshWorkload(cq, workload, false);
    std::vector<bfloat16> c_tiles;
    distributed::EnqueueReadMeshBuffer(cq, c_tiles, dc, true);
    tt_example::output(cq, dc, "c", capture);
    tt_example::end(*mesh, capture);
    std::vector<bfloat16> c = untilize_nfaces(c_tiles, M, N);

    uint32_t outside = 0;
    for (uint32_t i = 0; i < M; i++)
        for (uint32_t j = 0; j < N; j++) {
            double ref = 0, mag = 0;
            for (uint32_t k = 0; k < K; k++) {
                double p = static_cast<double>(a[i * K + k].to_float()) * b[k * N + j].to_float();
                ref += p;
                mag += std::fabs(p);
            }
            outside +=
                std::fabs(c[i * N + j].to_float() - ref) > std::fabs(ref) * 0x1p-8 + mag * 0x1p-16;
        }
    std::printf("%s matmul_multicore_reuse_mcast: %ux%ux%u in %ux%u-tile blocks on %ux%u cores, %u "
                "values outside tolerance\n",
                outside ? "FAIL" : "PASS", M, K, N, per_core_M, per_core_N, grid_x, grid_y,
                outside);
    return outside ? 1 : 0;
} catch (const std::exception &e) {
    std::fprintf(stderr, "matmul_multicore_reuse_mcast: %s\n", e.what());
    return 1;
}
