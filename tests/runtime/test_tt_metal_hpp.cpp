// lightmetal/tt_metal.hpp beyond what the examples use: GetRuntimeArgs,
// split_work_to_cores, dynamic circular buffers, direct L1 access, DRAM
// sharding, and errors
// surfacing as std::runtime_error with the C API's message.
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "lightmetal/tt_metal.hpp"
#include "lm_test.h"

using namespace tt;
using namespace tt::tt_metal;

// The message of what `fn` throws, or "" when it does not throw.
template <class F> static std::string thrown(F fn) {
    try {
        fn();
    } catch (const std::runtime_error &e) {
        return e.what();
    }
    return "";
}

static void test_wrapper(void) {
    auto mesh = distributed::MeshDevice::create_unit_mesh(0);
    distributed::MeshCommandQueue &cq = mesh->mesh_command_queue();
    CHECK(mesh->compute_with_storage_grid_size() == CoreCoord(8, 8));

    // Direct L1 access.
    std::vector<uint32_t> words = {1, 2, 3, 0xdeadbeef}, back;
    CHECK(detail::WriteToDeviceL1(mesh.get(), {2, 3}, 0x40000, words));
    CHECK(detail::ReadFromDeviceL1(mesh.get(), {2, 3}, 0x40000, 16, back));
    CHECK(back == words);
    CHECK(thrown([&] {
              detail::ReadFromDeviceL1(mesh.get(), {9, 0}, 0x40000, 16, back);
          }).find("core (9,0) is outside the 8x8 grid") != std::string::npos);

    // split_work_to_cores as tt-metal returns it.
    auto [n, all, g1, g2, u1, u2] = split_work_to_cores({4, 4}, 21, true);
    CHECK(n == 16 && u1 == 2 && u2 == 1 && g1.num_cores() == 5 && g2.num_cores() == 11);
    CHECK(all.num_cores() == 16 && g1.contains({4 % 4, 1}) && !g1.contains({1, 1}));

    // GetRuntimeArgs: in-place updates reach the next launch.
    auto out = distributed::MeshBuffer::create(
        {.size = 64}, {.page_size = 64, .buffer_type = BufferType::DRAM}, mesh.get());
    auto l1 = distributed::MeshBuffer::create(
        {.size = 64 * 4096}, {.page_size = 4096, .buffer_type = BufferType::L1}, mesh.get());
    // The allocator's statistics: 64 bytes of DRAM take a 64-byte page in
    // bank 0's range (the same range in every bank); the L1 buffer 4096 per core.
    Statistics dstats = mesh->get_memory_allocation_statistics(BufferType::DRAM);
    Statistics l1s = mesh->get_memory_allocation_statistics(BufferType::L1);
    CHECK(dstats.total_allocated_bytes == 64 && dstats.peak_allocated_bytes == 64);
    CHECK(dstats.total_free_bytes == dstats.total_allocatable_size_bytes - 64);
    CHECK(l1s.total_allocated_bytes == 4096 && l1s.largest_free_block_bytes > 0);
    Program program = CreateProgram();
    const CoreCoord core = {1, 1};
    CBHandle cb =
        CreateCircularBuffer(program, core,
                             CircularBufferConfig(2048, {{CBIndex::c_0, DataFormat::Float32}})
                                 .set_page_size(CBIndex::c_0, 1024)
                                 .set_globally_allocated_address(*l1));
    // Writes arg 1 and CB 0's page size to the output.
    const char *src = "void kernel_main() {\n"
                      "    volatile uint32_t *v = reinterpret_cast<volatile uint32_t *>(0x50000);\n"
                      "    v[0] = get_arg_val<uint32_t>(1);\n"
                      "    v[1] = get_tile_size(0);\n"
                      "    const InterleavedAddrGen<true> o = {get_arg_val<uint32_t>(0), 64};\n"
                      "    noc_async_write_page(0, o, 0x50000);\n"
                      "    noc_async_write_barrier();\n"
                      "}\n";
    const std::string path = "test_tt_metal_hpp_kernel.cpp";
    FILE *f = std::fopen(path.c_str(), "w");
    CHECK(f && std::fputs(src, f) >= 0 && std::fclose(f) == 0);
    KernelHandle k = CreateKernel(program, path, core, WriterDataMovementConfig());
    SetRuntimeArgs(program, k, core, {out->address(), 5});
    RuntimeArgsData args = GetRuntimeArgs(program, k, core);
    CHECK(args.size() == 2 && args[1] == 5);
    args[1] = 77;
    UpdateCircularBufferPageSize(program, cb, CBIndex::c_0, 512);
    distributed::MeshWorkload workload;
    workload.add_program(distributed::MeshCoordinateRange(mesh->shape()), std::move(program));
    distributed::EnqueueMeshWorkload(cq, workload, true);
    std::vector<uint32_t> got;
    distributed::EnqueueReadMeshBuffer(cq, got, out, true);
    CHECK(got.size() == 16 && got[0] == 77 && got[1] == 512);
    std::remove(path.c_str());

    // A DRAM-sharded buffer: 24 pages in width shards of two columns, a
    // shard per bank of the DRAM grid, round trip through the host.
    const CoreCoord dram = mesh->dram_grid_size();
    CHECK(dram == CoreCoord(12, 1));
    ShardSpecBuffer dspec(ShardSpec{CoreRangeSet(CoreRange({0, 0}, {dram.x - 1, 0})), {32, 64}},
                          {32, 32}, {1, 24});
    auto sharded = distributed::MeshBuffer::create(
        {.size = 24 * 4096},
        {.page_size = 4096,
         .buffer_type = BufferType::DRAM,
         .sharding_args = BufferShardingArgs(dspec, TensorMemoryLayout::WIDTH_SHARDED)},
        mesh.get());
    std::vector<uint32_t> pages(24 * 1024), pages_back;
    for (size_t i = 0; i < pages.size(); i++)
        pages[i] = static_cast<uint32_t>(i * 2654435761u);
    distributed::EnqueueWriteMeshBuffer(cq, sharded, pages, true);
    distributed::EnqueueReadMeshBuffer(cq, pages_back, sharded, true);
    CHECK(pages_back == pages);
    CHECK(thrown([&] {
              ShardSpecBuffer wide(
                  ShardSpec{CoreRangeSet(CoreRange({0, 0}, {dram.x, 0})), {32, 64}}, {32, 32},
                  {1, 26});
              distributed::MeshBuffer::create(
                  {.size = 26 * 4096},
                  {.page_size = 4096,
                   .buffer_type = BufferType::DRAM,
                   .sharding_args = BufferShardingArgs(wide, TensorMemoryLayout::WIDTH_SHARDED)},
                  mesh.get());
          }).find("outside the 12x1 grid") != std::string::npos);

    // Errors carry the C API's messages.
    Program p2 = CreateProgram();
    CHECK(thrown([&] {
              CreateKernel(p2, "no/such/kernel.cpp", core, DataMovementConfig{});
          }).find("no/such/kernel.cpp") != std::string::npos);
    CHECK(thrown([&] { GetRuntimeArgs(p2, 3, core); }).find("kernel handle 3") !=
          std::string::npos);
    std::vector<uint32_t> wrong_size(3);
    CHECK(thrown([&] {
              distributed::EnqueueWriteMeshBuffer(cq, out, wrong_size, true);
          }).find("12 bytes for a buffer of 64") != std::string::npos);
    CHECK(mesh->close());
}

int main() {
    TEST_RUN(test_wrapper);
    return test_summary();
}
