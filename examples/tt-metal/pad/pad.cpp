// Pads a 40 x 64 row-major bfloat16 tensor to 48 x 96 with a pad value, on
// both data movement processors of one core, with tt-metal's host API (named
// compile-time args carry the shapes). Prints PASS when the output is the
// input surrounded by the pad value.
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
    constexpr uint32_t H = 40, W = 64, Hp = 48, Wp = 96;
    const bfloat16 pad_value(-1.5f);
    auto mesh = distributed::MeshDevice::create_unit_mesh(0);
    distributed::MeshCommandQueue &cq = mesh->mesh_command_queue();
    tt_example::begin(*mesh, capture);
    auto src = distributed::MeshBuffer::create(
        {.size = H * W * 2}, {.page_size = W * 2, .buffer_type = BufferType::DRAM}, mesh.get());
    auto dst = distributed::MeshBuffer::create(
        {.size = Hp * Wp * 2}, {.page_size = Wp * 2, .buffer_type = BufferType::DRAM}, mesh.get());
    tt_example::input(src, "in", capture);
    std::vector<bfloat16> in(H * W);
    for (uint32_t i = 0; i < H * W; i++)
        in[i] = bfloat16(static_cast<float>(i % 251));
    distributed::EnqueueWriteMeshBuffer(cq, src, in, false);

    Program program = CreateProgram();
    constexpr CoreCoord core = {0, 0};
    CreateCircularBuffer(program, core,
                         CircularBufferConfig(2 * Wp * 2, {{CBIndex::c_0, DataFormat::Float16_b}})
                             .set_page_size(CBIndex::c_0, Wp * 2));
    std::vector<uint32_t> args;
    TensorAccessorArgs(*src).append_to(args);
    TensorAccessorArgs(*dst).append_to(args);
    std::map<std::string, uint32_t> shapes = {
        {"H", H}, {"W", W}, {"Hp", Hp}, {"Wp", Wp}, {"pad_bits", pad_value.to_uint16()}};
    KernelHandle k0 = CreateKernel(program, tt_example::kernel("pad_rows.cpp"), core,
                                   DataMovementConfig{.processor = DataMovementProcessor::RISCV_0,
                                                      .noc = NOC::RISCV_0_default,
                                                      .compile_args = args,
                                                      .named_compile_args = shapes});
    KernelHandle k1 = CreateKernel(program, tt_example::kernel("pad_rows.cpp"), core,
                                   DataMovementConfig{.processor = DataMovementProcessor::RISCV_1,
                                                      .noc = NOC::RISCV_1_default,
                                                      .compile_args = args,
                                                      .named_compile_args = shapes});
    SetRuntimeArgs(program, k0, core, {src->address(), dst->address(), 0, 2});
    SetRuntimeArgs(program, k1, core, {src->address(), dst->address(), 1, 2});
    distributed::MeshWorkload workload;
    workload.add_program(distributed::MeshCoordinateRange(mesh->shape()), std::move(program));
    distributed::EnqueueMeshWorkload(cq, workload, false);
    std::vector<bfloat16> out;
    distributed::EnqueueReadMeshBuffer(cq, out, dst, true);
    tt_example::output(cq, dst, "out", capture);
    tt_example::end(*mesh, capture);
    uint32_t wrong = 0;
    for (uint32_t r = 0; r < Hp; r++)
        for (uint32_t c = 0; c < Wp; c++)
            wrong += !(out[r * Wp + c] == (r < H && c < W ? in[r * W + c] : pad_value));
    std::printf("%s pad: %ux%u -> %ux%u, %u elements wrong\n", wrong ? "FAIL" : "PASS", H, W, Hp,
                Wp, wrong);
    return wrong ? 1 : 0;
} catch (const std::exception &e) {
    std::fprintf(stderr, "pad: %s\n", e.what());
    return 1;
}
