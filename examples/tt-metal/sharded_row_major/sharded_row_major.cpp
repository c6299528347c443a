// A row-major bfloat16 tensor of 16 rows x 64 elements, width-sharded in
// 32-element pages over two cores with tt-metal's host API; each core doubles
// its shard in place through a sharded TensorAccessor. Prints PASS when every
// element is doubled.
#include <cstdint>
#include <cstdio>
#include <vector>

#include "tt_example.hpp"

using namespace tt;
using namespace tt::tt_metal;

int main(int argc, char **argv) try {
    const std::string capture = tt_example::capture_path(argc, argv);
    constexpr uint32_t rows = 16, cols = 64, page_elems = 32;
    auto mesh = distributed::MeshDevice::create_unit_mesh(0);
    distributed::MeshCommandQueue &cq = mesh->mesh_command_queue();
    tt_example::begin(*mesh, capture);
    const CoreRange cores({0, 0}, {1, 0});
    ShardSpec shard{CoreRangeSet(cores), {rows, page_elems}, ShardOrientation::ROW_MAJOR};
    distributed::DeviceLocalBufferConfig l1{
        .page_size = page_elems * 2,
        .buffer_type = BufferType::L1,
        .sharding_args =
            BufferShardingArgs(ShardSpecBuffer(shard, {1, page_elems}, {rows, cols / page_elems}),
                               TensorMemoryLayout::WIDTH_SHARDED)};
    auto t = distributed::MeshBuffer::create({.size = rows * cols * 2}, l1, mesh.get());
    std::vector<bfloat16> in(rows * cols);
    for (uint32_t i = 0; i < in.size(); i++)
        in[i] = bfloat16(static_cast<float>(i) * 0.5f + 1.0f);
    distributed::EnqueueWriteMeshBuffer(cq, t, in, false);

    Program program = CreateProgram();
    CreateCircularBuffer(
        program, cores,
        CircularBufferConfig(page_elems * 2, {{CBIndex::c_0, DataFormat::Float16_b}})
            .set_page_size(CBIndex::c_0, page_elems * 2));
    std::vector<uint32_t> args = TensorAccessorArgs(*t).get_compile_time_args();
    args.push_back(page_elems);
    args.push_back(rows);
    auto k = CreateKernel(program, tt_example::kernel("double_shard.cpp"), cores,
                          DataMovementConfig{.processor = DataMovementProcessor::RISCV_0,
                                             .noc = NOC::RISCV_0_default,
                                             .compile_args = args});
    SetRuntimeArgs(program, k, std::vector<CoreCoord>{{0, 0}, {1, 0}},
                   {{t->address(), 0}, {t->address(), 1}});
    distributed::MeshWorkload workload;
    workload.add_program(distributed::MeshCoordinateRange(mesh->shape()), std::move(program));
    distributed::EnqueueMeshWorkload(cq, workload, false);
    std::vector<bfloat16> out;
    distributed::EnqueueReadMeshBuffer(cq, out, t, true);
    tt_example::output(cq, t, "t", capture);
    tt_example::end(*mesh, capture);
    uint32_t wrong = 0;
    for (uint32_t i = 0; i < in.size(); i++)
        wrong += out[i].to_float() != 2.0f * in[i].to_float();
    std::printf("%s sharded_row_major: %ux%u elements over 2 cores, %u wrong\n",
                wrong ? "FAIL" : "PASS", rows, cols, wrong);
    return wrong ? 1 : 0;
} catch (const std::exception &e) {
    std::fprintf(stderr, "sharded_row_major: %s\n", e.what());
    return 1;
}
