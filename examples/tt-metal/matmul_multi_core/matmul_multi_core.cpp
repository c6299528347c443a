// C = A x B over the whole grid with tt-metal's host API: the Mt x Nt output
// tiles are split over the cores with split_work_to_cores (some cores get one
// more tile), each core computing its run of output tiles. bfloat16 in and
// out, float32 accumulation. Prints PASS within tolerance of float64.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "tt_example.hpp"

using namespace tt;
using namespace tt::tt_metal;

int main(int argc, char **argv) try {
    const std::string capture = tt_example::capture_path(argc, argv);
    constexpr uint32_t M = 256, K = 64, N = 320;
    constexpr uint32_t Mt = M / 32, Kt = K / 32, Nt = N / 32;

    std::vector<bfloat16> a(M * K), b(K * N);
    uint32_t seed = 5;
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
    const uint32_t tile_bytes = tile_size(DataFormat::Float16_b);
    distributed::DeviceLocalBufferConfig dram{.page_size = tile_bytes,
                                              .buffer_type = BufferType::DRAM};
    auto da = distributed::MeshBuffer::create({.size = M * K * 2}, dram, mesh.get());
    auto db = distributed::MeshBuffer::create({.size = K * N * 2}, dram, mesh.get());
    auto dc = distributed::MeshBuffer::create({.size = M * N * 2}, dram, mesh.get());
    tt_example::input(da, "a", capture);
    tt_example::input(db, "b", capture);
    distributed::EnqueueWriteMeshBuffer(cq, da, tilize_nfaces(a, M, K), false);
    distributed::EnqueueWriteMeshBuffer(cq, db, tilize_nfaces(b, K, N), false);

    CoreCoord grid = mesh->compute_with_storage_grid_size();
    auto [num_cores, all_cores, group_1, group_2, tiles_1, tiles_2] =
        split_work_to_cores(grid, Mt * Nt, true);

    Program program = CreateProgram();
    for (uint32_t cb : {CBIndex::c_0, CBIndex::c_1, CBIndex::c_16})
        CreateCircularBuffer(program, all_cores,
                             CircularBufferConfig(2 * tile_bytes, {{static_cast<uint8_t>(cb),
                                                                    DataFormat::Float16_b}})
                                 .set_page_size(cb, tile_bytes));
    std::vector<uint32_t> reader_args;
    TensorAccessorArgs(*da).append_to(reader_args);
    TensorAccessorArgs(*db).append_to(reader_args);
    auto reader = CreateKernel(
        program, tt_example::kernel("reader_mm_output_tiles_partitioned.cpp"), all_cores,
        DataMovementConfig{.processor = DataMovementProcessor::RISCV_1,
                           .noc = NOC::RISCV_1_default,
                           .compile_args = reader_args});
    auto writer = CreateKernel(
        program, tt_example::kernel("writer_unary_interleaved_start_id.cpp"), all_cores,
        DataMovementConfig{.processor = DataMovementProcessor::RISCV_0,
                           .noc = NOC::RISCV_0_default,
                           .compile_args = TensorAccessorArgs(*dc).get_compile_time_args()});
    auto compute =
        CreateKernel(program, tt_example::kernel("mm.cpp"), all_cores,
                     ComputeConfig{.math_fidelity = MathFidelity::HiFi4, .fp32_dest_acc_en = true});

    // Row-major over the grid, as split_work_to_cores numbered the cores.
    uint32_t first = 0;
    for (uint32_t i = 0; i < num_cores; i++) {
        CoreCoord core = {i % grid.x, i / grid.x};
        uint32_t n = group_1.contains(core) ? tiles_1 : tiles_2;
        SetRuntimeArgs(program, reader, core, {da->address(), db->address(), Kt, Nt, first, n});
        SetRuntimeArgs(program, writer, core, {dc->address(), n, first});
        SetRuntimeArgs(program, compute, core, {n, Kt});
        first += n;
    }

    distributed::MeshWorkload workload;
    workload.add_program(distributed::MeshCoordinateRange(mesh->shape()), std::move(program));
    distributed::EnqueueMeshWorkload(cq, workload, false);
    distributed::Finish(cq);
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
    std::printf("%s matmul_multi_core: %ux%ux%u on %u cores (%u with %u tiles, %u with %u), "
                "%u values outside tolerance\n",
                outside ? "FAIL" : "PASS", M, K, N, num_cores,
                static_cast<uint32_t>(group_1.num_cores()), tiles_1,
                static_cast<uint32_t>(group_2.num_cores()), tiles_2, outside);
    return outside ? 1 : 0;
} catch (const std::exception &e) {
    std::fprintf(stderr, "matmul_multi_core: %s\n", e.what());
    return 1;
}
