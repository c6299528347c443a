// C = A x B on one core with tt-metal's host API: bfloat16 A (M x K) and B
// (K x N) tilized on the host (tilize_nfaces), float32 accumulation in dst,
// bfloat16 C. Prints PASS when C is within tolerance of a float64 reference.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "tt_example.hpp"

using namespace tt;
using namespace tt::tt_metal;

int main(int argc, char **argv) try {
    const std::string capture = tt_example::capture_path(argc, argv);
    constexpr uint32_t M = 64, K = 96, N = 64;
    constexpr uint32_t Mt = M / 32, Kt = K / 32, Nt = N / 32;

    std::vector<bfloat16> a(M * K), b(K * N);
    uint32_t seed = 42;
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

    Program program = CreateProgram();
    constexpr CoreCoord core = {0, 0};
    for (uint32_t cb : {CBIndex::c_0, CBIndex::c_1, CBIndex::c_16})
        CreateCircularBuffer(program, core,
                             CircularBufferConfig(2 * tile_bytes, {{static_cast<uint8_t>(cb),
                                                                    DataFormat::Float16_b}})
                                 .set_page_size(cb, tile_bytes));
    auto reader = CreateKernel(program, tt_example::kernel("reader_single_core_mm.cpp"), core,
                               DataMovementConfig{.processor = DataMovementProcessor::RISCV_1,
                                                  .noc = NOC::RISCV_1_default});
    auto writer = CreateKernel(program, tt_example::kernel("writer_single_core_mm.cpp"), core,
                               DataMovementConfig{.processor = DataMovementProcessor::RISCV_0,
                                                  .noc = NOC::RISCV_0_default});
    CreateKernel(program, tt_example::kernel("mm.cpp"), core,
                 ComputeConfig{.math_fidelity = MathFidelity::HiFi4,
                               .fp32_dest_acc_en = true,
                               .compile_args = {Mt, Kt, Nt}});
    SetRuntimeArgs(program, reader, core, {da->address(), db->address(), Mt, Kt, Nt});
    SetRuntimeArgs(program, writer, core, {dc->address(), Mt, Nt});

    distributed::MeshWorkload workload;
    workload.add_program(distributed::MeshCoordinateRange(mesh->shape()), std::move(program));
    distributed::EnqueueMeshWorkload(cq, workload, false);
    std::vector<bfloat16> c_tiles;
    distributed::EnqueueReadMeshBuffer(cq, c_tiles, dc, true);
    tt_example::output(cq, dc, "c", capture);
    tt_example::end(*mesh, capture);
    std::vector<bfloat16> c = untilize_nfaces(c_tiles, M, N);

    // float32 accumulation of exact bf16 products, then one bf16 rounding.
    uint32_t outside = 0;
    for (uint32_t i = 0; i < M; i++)
        for (uint32_t j = 0; j < N; j++) {
            double ref = 0, mag = 0;
            for (uint32_t k = 0; k < K; k++) {
                double p = static_cast<double>(a[i * K + k].to_float()) * b[k * N + j].to_float();
                ref += p;
                mag += std::fabs(p);
            }
            double err = std::fabs(c[i * N + j].to_float() - ref);
            outside += err > std::fabs(ref) * 0x1p-8 + mag * 0x1p-16;
        }
    std::printf("%s matmul_single_core: %ux%ux%u, %u values outside tolerance\n",
                outside ? "FAIL" : "PASS", M, K, N, outside);
    return outside ? 1 : 0;
} catch (const std::exception &e) {
    std::fprintf(stderr, "matmul_single_core: %s\n", e.what());
    return 1;
}
