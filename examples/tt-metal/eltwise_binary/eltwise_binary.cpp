// Eltwise add of two bfloat16 tensors on one core, with tt-metal's host API
// (lightmetal/tt_metal.hpp). The reader uses the experimental (Device 2.0)
// objects; the C host of this example uses the classic reader. Prints PASS
// when every element is bf16(a + b).
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

    constexpr uint32_t n_tiles = 16, elems = n_tiles * constants::TILE_HW;
    const uint32_t tile_bytes = tile_size(DataFormat::Float16_b);
    distributed::DeviceLocalBufferConfig dram{.page_size = tile_bytes,
                                              .buffer_type = BufferType::DRAM};
    distributed::ReplicatedBufferConfig size{.size = n_tiles * tile_bytes};
    auto a = distributed::MeshBuffer::create(size, dram, mesh.get());
    auto b = distributed::MeshBuffer::create(size, dram, mesh.get());
    auto c = distributed::MeshBuffer::create(size, dram, mesh.get());
    tt_example::input(a, "a", capture);
    tt_example::input(b, "b", capture);

    std::vector<bfloat16> va(elems), vb(elems);
    uint32_t seed = 1;
    for (uint32_t i = 0; i < elems; i++) {
        seed = seed * 1664525u + 1013904223u;
        va[i] = bfloat16(static_cast<float>(seed >> 16) / 65536.0f * 8.0f - 4.0f);
        seed = seed * 1664525u + 1013904223u;
        vb[i] = bfloat16(static_cast<float>(seed >> 16) / 65536.0f * 8.0f - 4.0f);
    }
    distributed::EnqueueWriteMeshBuffer(cq, a, va, false);
    distributed::EnqueueWriteMeshBuffer(cq, b, vb, false);

    Program program = CreateProgram();
    constexpr CoreCoord core = {0, 0};
    for (uint32_t cb : {CBIndex::c_0, CBIndex::c_1, CBIndex::c_16})
        CreateCircularBuffer(program, core,
                             CircularBufferConfig(2 * tile_bytes, {{static_cast<uint8_t>(cb),
                                                                    DataFormat::Float16_b}})
                                 .set_page_size(cb, tile_bytes));
    std::vector<uint32_t> reader_args;
    TensorAccessorArgs(*a).append_to(reader_args);
    TensorAccessorArgs(*b).append_to(reader_args);
    KernelHandle reader =
        CreateKernel(program, tt_example::kernel("read_tiles_experimental.cpp"), core,
                     DataMovementConfig{.processor = DataMovementProcessor::RISCV_1,
                                        .noc = NOC::RISCV_1_default,
                                        .compile_args = reader_args});
    KernelHandle writer = CreateKernel(
        program, tt_example::kernel("write_tiles.cpp"), core,
        DataMovementConfig{.processor = DataMovementProcessor::RISCV_0,
                           .noc = NOC::RISCV_0_default,
                           .compile_args = TensorAccessorArgs(*c).get_compile_time_args()});
    KernelHandle compute = CreateKernel(program, tt_example::kernel("tiles_add.cpp"), core,
                                        ComputeConfig{.math_fidelity = MathFidelity::HiFi4});
    SetRuntimeArgs(program, reader, core, {a->address(), b->address(), n_tiles});
    SetRuntimeArgs(program, writer, core, {c->address(), n_tiles});
    SetRuntimeArgs(program, compute, core, {n_tiles});

    distributed::MeshWorkload workload;
    workload.add_program(distributed::MeshCoordinateRange(mesh->shape()), std::move(program));
    distributed::EnqueueMeshWorkload(cq, workload, false);
    std::vector<bfloat16> vc;
    distributed::EnqueueReadMeshBuffer(cq, vc, c, true);
    tt_example::output(cq, c, "c", capture);
    tt_example::end(*mesh, capture);

    uint32_t bad = 0;
    for (uint32_t i = 0; i < elems; i++)
        bad += !(vc[i] == bfloat16(va[i].to_float() + vb[i].to_float()));
    std::printf("%s eltwise_binary: %u bf16 tiles added, %u wrong\n", bad ? "FAIL" : "PASS",
                n_tiles, bad);
    return bad ? 1 : 0;
} catch (const std::exception &e) {
    std::fprintf(stderr, "eltwise_binary: %s\n", e.what());
    return 1;
}
