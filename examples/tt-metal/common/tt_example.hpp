// What the C++ hosts of the tt-metal examples share: `--capture FILE`
// handling around tt_metal.hpp's Light Metal calls, and naming buffers for
// replay (the C API: tt-metal has no such call).
#ifndef LM_TT_EXAMPLE_HPP
#define LM_TT_EXAMPLE_HPP

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>

#include "lightmetal/tt_metal.hpp"

namespace tt_example {

// The FILE of `--capture FILE`, or "" (exits with 2 on other arguments).
inline std::string capture_path(int argc, char **argv) {
    std::string path;
    for (int i = 1; i < argc; i++) {
        if (!std::strcmp(argv[i], "--capture") && i + 1 < argc && argv[i + 1][0]) {
            path = argv[++i];
        } else {
            std::fprintf(stderr, "usage: %s [--capture FILE]\n", argv[0]);
            std::exit(2);
        }
    }
    return path;
}

inline void begin(tt::tt_metal::distributed::MeshDevice &dev, const std::string &path) {
    if (!path.empty()) tt::tt_metal::LightMetalBeginCapture(dev);
}

// Names an input buffer for replay (lightmetal run --input NAME=...).
inline void input(const std::shared_ptr<tt::tt_metal::distributed::MeshBuffer> &b, const char *name,
                  const std::string &path) {
    if (!path.empty()) lm_cxx::check(lm_capture_name_buffer(b->handle(), name));
}

// Names an output buffer and records what it holds now as the golden replay
// compares with.
inline void output(tt::tt_metal::distributed::MeshCommandQueue &cq,
                   const std::shared_ptr<tt::tt_metal::distributed::MeshBuffer> &b,
                   const char *name, const std::string &path) {
    if (path.empty()) return;
    lm_cxx::check(lm_capture_name_buffer(b->handle(), name));
    lm_cxx::check(lm_capture_compare_to_capture(cq.handle(), b->handle()));
}

inline void end(tt::tt_metal::distributed::MeshDevice &dev, const std::string &path) {
    if (path.empty()) return;
    tt::tt_metal::LightMetalBinary bin = tt::tt_metal::LightMetalEndCapture(dev);
    std::ofstream f(path, std::ios::binary);
    f.write(reinterpret_cast<const char *>(bin.data()), static_cast<std::streamsize>(bin.size()));
    if (!f) throw std::runtime_error("cannot write " + path);
    std::printf("captured to %s\n", path.c_str());
}

// The kernel file `name` of this example.
inline std::string kernel(const char *name) {
    return std::string(LM_EXAMPLE_DIR "/kernels/") + name;
}

} // namespace tt_example

#endif
