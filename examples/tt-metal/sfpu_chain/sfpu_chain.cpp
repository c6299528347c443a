// A chain of dst-to-dst binary SFPU operations in float32 (fp32_dest_acc_en)
// with tt-metal's host API. Each step rounds once to float32, as the host
// computation below does, so the check is exact.
#include <cstdint>
#include <cstdio>
#include <vector>

#include "tt_example.hpp"

using namespace tt;
using namespace tt::tt_metal;

int main(int argc, char **argv) try {
    const std::string capture = tt_example::capture_path(argc, argv);
    constexpr uint32_t n_tiles = 4, elems = n_tiles * constants::TILE_HW;
    auto mesh = distributed::MeshDevice::create_unit_mesh(0);
    distributed::MeshCommandQueue &cq = mesh->mesh_command_queue();
    tt_example::begin(*mesh, capture);
    const uint32_t tile_bytes = tile_size(DataFormat::Float32);
    distributed::DeviceLocalBufferConfig dram{.page_size = tile_bytes,
                                              .buffer_type = BufferType::DRAM};
    distributed::ReplicatedBufferConfig size{.size = n_tiles * tile_bytes};
    auto a = distributed::MeshBuffer::create(size, dram, mesh.get());
    auto b = distributed::MeshBuffer::create(size, dram, mesh.get());
    auto c = distributed::MeshBuffer::create(size, dram, mesh.get());
    tt_example::input(a, "a", capture);
    tt_example::input(b, "b", capture);
    std::vector<float> va(elems), vb(elems);
    uint32_t seed = 3;
    for (uint32_t i = 0; i < elems; i++) {
        seed = seed * 1664525u + 1013904223u;
        va[i] = static_cast<float>(static_cast<int>(seed >> 16) - 32768) / 1024.0f;
        seed = seed * 1664525u + 1013904223u;
        vb[i] = static_cast<float>(static_cast<int>(seed >> 16) - 32768) / 512.0f + 0.25f;
    }
    distributed::EnqueueWriteMeshBuffer(cq, a, va, false);
    distributed::EnqueueWriteMeshBuffer(cq, b, vb, false);

    Program program = CreateProgram();
    constexpr CoreCoord core = {1, 1};
    for (uint32_t cb : {CBIndex::c_0, CBIndex::c_1, CBIndex::c_16})
        CreateCircularBuffer(
            program, core,
            CircularBufferConfig(2 * tile_bytes, {{static_cast<uint8_t>(cb), DataFormat::Float32}})
                .set_page_size(cb, tile_bytes));
    std::vector<uint32_t> reader_args;
    TensorAccessorArgs(*a).append_to(reader_args);
    TensorAccessorArgs(*b).append_to(reader_args);
    auto reader = CreateKernel(program, tt_example::kernel("read_two.cpp"), core,
                               DataMovementConfig{.processor = DataMovementProcessor::RISCV_1,
                                                  .noc = NOC::RISCV_1_default,
                                                  .compile_args = reader_args});
    auto writer = CreateKernel(
        program, tt_example::kernel("write_tiles.cpp"), core,
        DataMovementConfig{.processor = DataMovementProcessor::RISCV_0,
                           .noc = NOC::RISCV_0_default,
                           .compile_args = TensorAccessorArgs(*c).get_compile_time_args()});
    auto compute = CreateKernel(program, tt_example::kernel("chain.cpp"), core,
                                ComputeConfig{.fp32_dest_acc_en = true});
    SetRuntimeArgs(program, reader, core, {a->address(), b->address(), n_tiles});
    SetRuntimeArgs(program, writer, core, {c->address(), n_tiles});
    SetRuntimeArgs(program, compute, core, {n_tiles});
    distributed::MeshWorkload workload;
    workload.add_program(distributed::MeshCoordinateRange(mesh->shape()), std::move(program));
    distributed::EnqueueMeshWorkload(cq, workload, false);
    std::vector<float> vc;
    distributed::EnqueueReadMeshBuffer(cq, vc, c, true);
    tt_example::output(cq, c, "c", capture);
    tt_example::end(*mesh, capture);
    uint32_t wrong = 0;
    for (uint32_t i = 0; i < elems; i++) {
        volatile float p = va[i] * vb[i];
        volatile float s = p + va[i];
        float m = s > vb[i] ? s : vb[i];
        volatile float want = m / vb[i];
        wrong += vc[i] != want;
    }
    std::printf("%s sfpu_chain: %u float32 tiles through mul, add, max, div in dst, %u wrong\n",
                wrong ? "FAIL" : "PASS", n_tiles, wrong);
    return wrong ? 1 : 0;
} catch (const std::exception &e) {
    std::fprintf(stderr, "sfpu_chain: %s\n", e.what());
    return 1;
}
