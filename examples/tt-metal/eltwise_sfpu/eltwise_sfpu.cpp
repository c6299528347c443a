// exp() of a bfloat16 tensor on the SFPU with tt-metal's host API. Prints
// PASS when every element is within one bfloat16 rounding of exp(x).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "tt_example.hpp"

using namespace tt;
using namespace tt::tt_metal;

int main(int argc, char **argv) try {
    const std::string capture = tt_example::capture_path(argc, argv);
    constexpr uint32_t n_tiles = 8, elems = n_tiles * constants::TILE_HW;
    auto mesh = distributed::MeshDevice::create_unit_mesh(0);
    distributed::MeshCommandQueue &cq = mesh->mesh_command_queue();
    tt_example::begin(*mesh, capture);
    const uint32_t tile_bytes = tile_size(DataFormat::Float16_b);
    distributed::DeviceLocalBufferConfig dram{.page_size = tile_bytes,
                                              .buffer_type = BufferType::DRAM};
    auto in = distributed::MeshBuffer::create({.size = n_tiles * tile_bytes}, dram, mesh.get());
    auto out = distributed::MeshBuffer::create({.size = n_tiles * tile_bytes}, dram, mesh.get());
    tt_example::input(in, "in", capture);
    std::vector<bfloat16> x(elems);
    for (uint32_t i = 0; i < elems; i++)
        x[i] = bfloat16(static_cast<float>(static_cast<int>(i % 1601) - 800) / 100.0f);
    distributed::EnqueueWriteMeshBuffer(cq, in, x, false);

    Program program = CreateProgram();
    constexpr CoreCoord core = {0, 0};
    for (uint32_t cb : {CBIndex::c_0, CBIndex::c_16})
        CreateCircularBuffer(program, core,
                             CircularBufferConfig(2 * tile_bytes, {{static_cast<uint8_t>(cb),
                                                                    DataFormat::Float16_b}})
                                 .set_page_size(cb, tile_bytes));
    auto reader = CreateKernel(
        program, tt_example::kernel("read_tiles.cpp"), core,
        DataMovementConfig{.processor = DataMovementProcessor::RISCV_1,
                           .noc = NOC::RISCV_1_default,
                           .compile_args = TensorAccessorArgs(*in).get_compile_time_args()});
    auto writer = CreateKernel(
        program, tt_example::kernel("write_tiles.cpp"), core,
        DataMovementConfig{.processor = DataMovementProcessor::RISCV_0,
                           .noc = NOC::RISCV_0_default,
                           .compile_args = TensorAccessorArgs(*out).get_compile_time_args()});
    auto compute = CreateKernel(program, tt_example::kernel("exp_tiles.cpp"), core,
                                ComputeConfig{.math_approx_mode = false});
    SetRuntimeArgs(program, reader, core, {in->address(), n_tiles});
    SetRuntimeArgs(program, writer, core, {out->address(), n_tiles});
    SetRuntimeArgs(program, compute, core, {n_tiles});
    distributed::MeshWorkload workload;
    workload.add_program(distributed::MeshCoordinateRange(mesh->shape()), std::move(program));
    distributed::EnqueueMeshWorkload(cq, workload, false);
    std::vector<bfloat16> y;
    distributed::EnqueueReadMeshBuffer(cq, y, out, true);
    tt_example::output(cq, out, "out", capture);
    tt_example::end(*mesh, capture);
    uint32_t bad = 0;
    for (uint32_t i = 0; i < elems; i++) {
        double want = std::exp(static_cast<double>(x[i].to_float()));
        bad += std::fabs(y[i].to_float() - want) > want * 0x1p-8;
    }
    std::printf("%s eltwise_sfpu: exp of %u bf16 tiles, %u outside one bf16 rounding\n",
                bad ? "FAIL" : "PASS", n_tiles, bad);
    return bad ? 1 : 0;
} catch (const std::exception &e) {
    std::fprintf(stderr, "eltwise_sfpu: %s\n", e.what());
    return 1;
}
