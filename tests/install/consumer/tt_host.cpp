// A C++ host written against the installed lightmetal/tt_metal.hpp: copies a
// buffer with the C++ kernel given on the command line. Exit 0 when the copy
// matches.
#include <cstdio>
#include <vector>

#include <lightmetal/tt_metal.hpp>

using namespace tt;
using namespace tt::tt_metal;

int main(int argc, char **argv) try {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s KERNEL.cpp\n", argv[0]);
        return 2;
    }
    auto mesh = distributed::MeshDevice::create_unit_mesh(0);
    auto &cq = mesh->mesh_command_queue();
    constexpr uint32_t pages = 6, page = 2048;
    distributed::DeviceLocalBufferConfig dram{.page_size = page, .buffer_type = BufferType::DRAM};
    auto src = distributed::MeshBuffer::create({.size = pages * page}, dram, mesh.get());
    auto dst = distributed::MeshBuffer::create({.size = pages * page}, dram, mesh.get());
    std::vector<uint32_t> in(pages * page / 4), out;
    for (uint32_t i = 0; i < in.size(); i++)
        in[i] = i * 2654435761u;
    distributed::EnqueueWriteMeshBuffer(cq, src, in, true);
    Program program = CreateProgram();
    CreateCircularBuffer(program, CoreCoord{0, 0},
                         CircularBufferConfig(2 * page, {{CBIndex::c_0, DataFormat::Float16_b}})
                             .set_page_size(CBIndex::c_0, page));
    std::vector<uint32_t> args;
    TensorAccessorArgs(*src).append_to(args);
    TensorAccessorArgs(*dst).append_to(args);
    auto k = CreateKernel(program, argv[1], CoreCoord{0, 0},
                          DataMovementConfig{.processor = DataMovementProcessor::RISCV_0,
                                             .noc = NOC::RISCV_0_default,
                                             .compile_args = args});
    SetRuntimeArgs(program, k, CoreCoord{0, 0}, {src->address(), dst->address(), pages});
    distributed::MeshWorkload workload;
    workload.add_program(distributed::MeshCoordinateRange(mesh->shape()), std::move(program));
    distributed::EnqueueMeshWorkload(cq, workload, true);
    distributed::EnqueueReadMeshBuffer(cq, out, dst, true);
    bool pass = out == in;
    std::printf("%s tt_host\n", pass ? "PASS" : "FAIL");
    return pass ? 0 : 1;
} catch (const std::exception &e) {
    std::fprintf(stderr, "tt_host: %s\n", e.what());
    return 1;
}
