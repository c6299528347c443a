// lightmetal — tt-metal's host API, the single-device subset its programming
// examples use, as a header-only C++17 layer over the C API, so that a
// tt-metal example's host file ports by changing its includes:
//
//   #include <lightmetal/tt_metal.hpp>   // for <tt-metalium/host_api.hpp>,
//                                        // distributed.hpp, bfloat16.hpp, ...
//   using namespace tt::tt_metal;
//   auto mesh = distributed::MeshDevice::create_unit_mesh(0);
//   ...
//
// Every call forwards to a lightmetal C function (lm_*): this layer holds no
// logic of its own beyond type conversions, so what it creates is captured
// and replayed by Light Metal like any C program's objects. Errors are thrown
// as std::runtime_error carrying the C API's message (tt-metal throws too).
//
// What differs from tt-metal: a MeshDevice is one simulated device (a 1x1
// mesh); CreateProgram() makes the program on the most recently created
// MeshDevice of the thread (tt-metal programs are device-free until
// enqueued; lightmetal programs belong to a device); buffers are freed when
// their last shared_ptr goes, programs when their Program (or the workload
// holding it) goes.
//
// Thread-safety: as the C API (objects may be used from any thread; the
// current-device choice of CreateProgram is per thread).
#ifndef LIGHTMETAL_TT_METAL_HPP
#define LIGHTMETAL_TT_METAL_HPP

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <map>
#include <array>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <tuple>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "lightmetal/lightmetal.h"

namespace lm_cxx {
// Throws the call's message; a failed kernel build's carries the compiler's
// whole output (lm_last_error may hold only its diagnostic lines).
inline void check(lm_status st) {
    if (st == LM_OK) return;
    std::string what = lm_last_error();
    if (st == LM_ERR_COMPILE && *lm_last_compile_log() &&
        what.find("lm_last_compile_log") != what.npos)
        what = what.substr(0, what.find('\n')) + "\n" + lm_last_compile_log();
    throw std::runtime_error(what);
}
} // namespace lm_cxx

// ---- cores ----
struct CoreCoord {
    std::size_t x = 0, y = 0;
    constexpr CoreCoord() = default;
    constexpr CoreCoord(std::size_t x_, std::size_t y_) : x(x_), y(y_) {}
    bool operator==(const CoreCoord &o) const { return x == o.x && y == o.y; }
    bool operator!=(const CoreCoord &o) const { return !(*this == o); }
    bool operator<(const CoreCoord &o) const { return y < o.y || (y == o.y && x < o.x); }
    std::string str() const { return "(x=" + std::to_string(x) + ",y=" + std::to_string(y) + ")"; }
};

struct CoreRange {
    CoreCoord start_coord, end_coord;
    CoreRange(CoreCoord c) : start_coord(c), end_coord(c) {}
    CoreRange(CoreCoord s, CoreCoord e) : start_coord(s), end_coord(e) {}
    std::size_t size() const {
        return (end_coord.x - start_coord.x + 1) * (end_coord.y - start_coord.y + 1);
    }
    bool contains(CoreCoord c) const {
        return c.x >= start_coord.x && c.x <= end_coord.x && c.y >= start_coord.y &&
               c.y <= end_coord.y;
    }
    bool operator<(const CoreRange &o) const {
        return start_coord < o.start_coord ||
               (start_coord == o.start_coord && end_coord < o.end_coord);
    }
};

class CoreRangeSet {
  public:
    CoreRangeSet() = default;
    CoreRangeSet(CoreRange r) : ranges_{r} {}
    CoreRangeSet(const std::vector<CoreRange> &r) : ranges_(r) {}
    CoreRangeSet(const std::set<CoreRange> &r) : ranges_(r.begin(), r.end()) {}
    const std::vector<CoreRange> &ranges() const { return ranges_; }
    std::size_t num_cores() const {
        std::size_t n = 0;
        for (const CoreRange &r : ranges_)
            n += r.size();
        return n;
    }
    bool contains(CoreCoord c) const {
        for (const CoreRange &r : ranges_)
            if (r.contains(c)) return true;
        return false;
    }
    CoreRangeSet merge(const CoreRangeSet &o) const {
        std::vector<CoreRange> all = ranges_;
        all.insert(all.end(), o.ranges_.begin(), o.ranges_.end());
        return CoreRangeSet(all);
    }

  private:
    std::vector<CoreRange> ranges_;
};

// The C form of a core spec (a core, a range or a set of ranges).
namespace lm_cxx {
inline lm_core_range_set to_c(const CoreRangeSet &s) {
    lm_core_range_set out{};
    if (s.ranges().size() > LM_MAX_CORE_RANGES)
        throw std::runtime_error("CoreRangeSet: more than " + std::to_string(LM_MAX_CORE_RANGES) +
                                 " ranges");
    for (const CoreRange &r : s.ranges())
        out.ranges[out.count++] = {
            {static_cast<uint32_t>(r.start_coord.x), static_cast<uint32_t>(r.start_coord.y)},
            {static_cast<uint32_t>(r.end_coord.x), static_cast<uint32_t>(r.end_coord.y)}};
    return out;
}
inline lm_core to_c(CoreCoord c) {
    return {static_cast<uint32_t>(c.x), static_cast<uint32_t>(c.y)};
}
inline std::vector<CoreCoord> cores_of(const CoreRangeSet &s) {
    std::vector<CoreCoord> out;
    for (const CoreRange &r : s.ranges())
        for (std::size_t y = r.start_coord.y; y <= r.end_coord.y; y++)
            for (std::size_t x = r.start_coord.x; x <= r.end_coord.x; x++)
                out.push_back({x, y});
    return out;
}
} // namespace lm_cxx

enum class MathFidelity : uint8_t { LoFi = 0, HiFi2 = 2, HiFi3 = 3, HiFi4 = 4, Invalid = 0xff };

namespace tt {
enum CBIndex : uint8_t {
    c_0,
    c_1,
    c_2,
    c_3,
    c_4,
    c_5,
    c_6,
    c_7,
    c_8,
    c_9,
    c_10,
    c_11,
    c_12,
    c_13,
    c_14,
    c_15,
    c_16,
    c_17,
    c_18,
    c_19,
    c_20,
    c_21,
    c_22,
    c_23,
    c_24,
    c_25,
    c_26,
    c_27,
    c_28,
    c_29,
    c_30,
    c_31,
    SIZE
};
enum class DataFormat : uint8_t {
    Float32 = LM_DATA_FORMAT_FLOAT32,
    Float16_b = LM_DATA_FORMAT_FLOAT16_B,
    Bfp8_b = LM_DATA_FORMAT_BFP8_B,
    UInt32 = LM_DATA_FORMAT_UINT32,
    Int32 = LM_DATA_FORMAT_INT32,
    Invalid = LM_DATA_FORMAT_INVALID,
};
namespace constants {
inline constexpr uint32_t TILE_HEIGHT = 32;
inline constexpr uint32_t TILE_WIDTH = 32;
inline constexpr uint32_t TILE_HW = 1024;
inline constexpr uint32_t FACE_HEIGHT = 16;
inline constexpr uint32_t FACE_WIDTH = 16;
} // namespace constants
// Tile size in bytes of a data format.
inline uint32_t tile_size(DataFormat f) {
    return static_cast<uint32_t>(lm_tile_size(static_cast<lm_data_format>(f)));
}
} // namespace tt

namespace tt::tt_metal {

using tt::DataFormat;

enum class BufferType : uint8_t { DRAM, L1 };
// tt-metal's allocator Statistics, per bank, and the peak of
// total_allocated_bytes (lm_memory_stats).
struct Statistics {
    size_t total_allocatable_size_bytes = 0;
    size_t total_allocated_bytes = 0;
    size_t total_free_bytes = 0;
    size_t largest_free_block_bytes = 0;
    size_t peak_allocated_bytes = 0;
};
enum class DataMovementProcessor : uint8_t { RISCV_0, RISCV_1 };
enum class NOC : uint8_t { RISCV_0_default = 0, RISCV_1_default = 1, NOC_0 = 0, NOC_1 = 1 };
using KernelHandle = uint32_t;
using CBHandle = uintptr_t;

struct DataMovementConfig {
    DataMovementProcessor processor = DataMovementProcessor::RISCV_0;
    NOC noc = NOC::RISCV_0_default;
    std::vector<uint32_t> compile_args;
    std::map<std::string, std::string> defines;
    std::map<std::string, uint32_t> named_compile_args;
};
struct ReaderDataMovementConfig : DataMovementConfig {
    ReaderDataMovementConfig(std::vector<uint32_t> args = {},
                             std::map<std::string, std::string> defs = {}) {
        processor = DataMovementProcessor::RISCV_1;
        noc = NOC::RISCV_1_default;
        compile_args = std::move(args);
        defines = std::move(defs);
    }
};
struct WriterDataMovementConfig : DataMovementConfig {
    WriterDataMovementConfig(std::vector<uint32_t> args = {},
                             std::map<std::string, std::string> defs = {}) {
        processor = DataMovementProcessor::RISCV_0;
        noc = NOC::RISCV_0_default;
        compile_args = std::move(args);
        defines = std::move(defs);
    }
};
struct ComputeConfig {
    MathFidelity math_fidelity = MathFidelity::HiFi4;
    bool fp32_dest_acc_en = false;
    bool dst_full_sync_en = false;
    bool math_approx_mode = false;
    std::vector<uint32_t> compile_args;
    std::map<std::string, std::string> defines;
    std::map<std::string, uint32_t> named_compile_args;
};

class CircularBufferConfig {
  public:
    CircularBufferConfig(uint32_t total_size, const std::map<uint8_t, tt::DataFormat> &formats)
        : total_size_(total_size) {
        for (const auto &f : formats)
            indices_.push_back({f.first, f.second, 0});
    }
    template <class I> CircularBufferConfig &set_page_size(I index, uint32_t page_size) {
        for (Index &i : indices_)
            if (i.index == static_cast<uint8_t>(index)) i.page_size = page_size;
        return *this;
    }
    CircularBufferConfig &set_total_size(uint32_t size) {
        total_size_ = size;
        return *this;
    }
    // The circular buffer lives in an L1 buffer's space (a dynamic one).
    template <class B> CircularBufferConfig &set_globally_allocated_address(const B &buffer) {
        global_ = buffer.handle();
        return *this;
    }
    uint32_t total_size() const { return total_size_; }
    lm_circular_buffer_config to_c() const {
        lm_circular_buffer_config c;
        lm_circular_buffer_config_init(&c);
        c.total_size = total_size_;
        c.globally_allocated = global_;
        for (const Index &i : indices_) {
            if (c.index_count == LM_MAX_CB_INDICES) break;
            c.indices[c.index_count++] = {i.index, static_cast<lm_data_format>(i.format),
                                          i.page_size};
        }
        return c;
    }

  private:
    struct Index {
        uint8_t index;
        tt::DataFormat format;
        uint32_t page_size;
    };
    uint32_t total_size_;
    std::vector<Index> indices_;
    lm_buffer global_{};
};

namespace lm_detail {
inline thread_local lm_device *current_device = nullptr;
} // namespace lm_detail

// A program; released with its kernels, CBs and semaphores when destroyed.
class Program {
  public:
    Program() {
        if (!lm_detail::current_device)
            throw std::runtime_error("CreateProgram: no MeshDevice on this thread (create one "
                                     "with distributed::MeshDevice::create_unit_mesh first)");
        lm_cxx::check(lm_create_program(lm_detail::current_device, &p_));
    }
    Program(Program &&o) noexcept : p_(o.p_) { o.p_ = {}; }
    Program &operator=(Program &&o) noexcept {
        std::swap(p_, o.p_);
        return *this;
    }
    Program(const Program &) = delete;
    Program &operator=(const Program &) = delete;
    ~Program() {
        if (p_.id) lm_release_program(p_);
    }
    lm_program handle() const { return p_; }
    // Kernel handles are small integers, as in tt-metal; this maps them back.
    KernelHandle add_kernel(lm_kernel k) {
        kernels_.push_back(k);
        return static_cast<KernelHandle>(kernels_.size() - 1);
    }
    lm_kernel kernel(KernelHandle h) const {
        if (h >= kernels_.size())
            throw std::runtime_error("kernel handle " + std::to_string(h) +
                                     " is not a kernel of "
                                     "this program");
        return kernels_[h];
    }

  private:
    lm_program p_{};
    std::vector<lm_kernel> kernels_;
};
inline Program CreateProgram() {
    return Program();
}

using CoreSpec = std::variant<CoreCoord, CoreRange, CoreRangeSet>;
namespace lm_detail {
inline CoreRangeSet as_set(const CoreSpec &s) {
    if (auto c = std::get_if<CoreCoord>(&s)) return CoreRangeSet(CoreRange(*c));
    if (auto r = std::get_if<CoreRange>(&s)) return CoreRangeSet(*r);
    return std::get<CoreRangeSet>(s);
}
inline void fill_common(lm_kernel_config &c, const std::vector<uint32_t> &args,
                        const std::map<std::string, std::string> &defines,
                        const std::map<std::string, uint32_t> &named,
                        std::vector<lm_kernel_define> &defs,
                        std::vector<lm_named_compile_arg> &names) {
    c.compile_args = args.data();
    c.compile_arg_count = static_cast<uint32_t>(args.size());
    for (const auto &d : defines)
        defs.push_back({d.first.c_str(), d.second.empty() ? nullptr : d.second.c_str()});
    for (const auto &n : named)
        names.push_back({n.first.c_str(), n.second});
    c.defines = defs.data();
    c.define_count = static_cast<uint32_t>(defs.size());
    c.named_compile_args = names.data();
    c.named_compile_arg_count = static_cast<uint32_t>(names.size());
}
} // namespace lm_detail

inline KernelHandle CreateKernel(Program &program, const std::string &file, const CoreSpec &cores,
                                 const std::variant<DataMovementConfig, ComputeConfig> &config) {
    lm_kernel_config c;
    std::vector<lm_kernel_define> defs;
    std::vector<lm_named_compile_arg> names;
    if (auto dm = std::get_if<DataMovementConfig>(&config)) {
        lm_kernel_config_init(&c, dm->processor == DataMovementProcessor::RISCV_0
                                      ? LM_PROCESSOR_DM0
                                      : LM_PROCESSOR_DM1);
        c.noc = dm->noc == NOC::NOC_1 ? LM_NOC_1 : LM_NOC_0;
        lm_detail::fill_common(c, dm->compile_args, dm->defines, dm->named_compile_args, defs,
                               names);
    } else {
        const ComputeConfig &cc = std::get<ComputeConfig>(config);
        lm_kernel_config_init(&c, LM_PROCESSOR_COMPUTE);
        c.math_fidelity = cc.math_fidelity == MathFidelity::LoFi
                              ? LM_MATH_FIDELITY_LOFI
                              : static_cast<lm_math_fidelity>(cc.math_fidelity);
        c.fp32_dest_acc_en = cc.fp32_dest_acc_en;
        c.math_approx_mode = cc.math_approx_mode;
        lm_detail::fill_common(c, cc.compile_args, cc.defines, cc.named_compile_args, defs, names);
    }
    lm_core_range_set set = lm_cxx::to_c(lm_detail::as_set(cores));
    lm_kernel k;
    lm_cxx::check(lm_create_kernel(program.handle(), file.c_str(), &set, &c, &k));
    return program.add_kernel(k);
}

inline CBHandle CreateCircularBuffer(Program &program, const CoreSpec &cores,
                                     const CircularBufferConfig &config) {
    lm_core_range_set set = lm_cxx::to_c(lm_detail::as_set(cores));
    lm_circular_buffer_config c = config.to_c();
    lm_circular_buffer cb;
    lm_cxx::check(lm_create_circular_buffer(program.handle(), &set, &c, &cb));
    return cb.id;
}

template <class B>
inline void UpdateDynamicCircularBufferAddress(Program &program, CBHandle cb, const B &buffer) {
    lm_cxx::check(lm_update_dynamic_circular_buffer_address(
        program.handle(), lm_circular_buffer{static_cast<uint64_t>(cb)}, buffer.handle()));
}
inline void UpdateCircularBufferTotalSize(Program &program, CBHandle cb, uint32_t total_size) {
    lm_cxx::check(lm_update_circular_buffer_total_size(
        program.handle(), lm_circular_buffer{static_cast<uint64_t>(cb)}, total_size));
}
inline void UpdateCircularBufferPageSize(Program &program, CBHandle cb, uint8_t index,
                                         uint32_t page_size) {
    lm_cxx::check(lm_update_circular_buffer_page_size(
        program.handle(), lm_circular_buffer{static_cast<uint64_t>(cb)}, index, page_size));
}

inline uint32_t CreateSemaphore(Program &program, const CoreSpec &cores, uint32_t initial_value) {
    lm_core_range_set set = lm_cxx::to_c(lm_detail::as_set(cores));
    uint32_t id;
    lm_cxx::check(lm_create_semaphore(program.handle(), &set, initial_value, &id));
    return id;
}

inline void SetRuntimeArgs(const Program &program, KernelHandle kernel, const CoreSpec &cores,
                           const std::vector<uint32_t> &args) {
    lm_core_range_set set = lm_cxx::to_c(lm_detail::as_set(cores));
    lm_cxx::check(lm_set_runtime_args_range(program.handle(), program.kernel(kernel), &set,
                                            args.data(), static_cast<uint32_t>(args.size())));
}
inline void SetRuntimeArgs(const Program &program, KernelHandle kernel, const CoreSpec &cores,
                           std::initializer_list<uint32_t> args) {
    SetRuntimeArgs(program, kernel, cores, std::vector<uint32_t>(args));
}
// One vector per core, in the order of `cores`.
inline void SetRuntimeArgs(const Program &program, KernelHandle kernel,
                           const std::vector<CoreCoord> &cores,
                           const std::vector<std::vector<uint32_t>> &args) {
    if (cores.size() != args.size())
        throw std::runtime_error("SetRuntimeArgs: " + std::to_string(cores.size()) + " cores but " +
                                 std::to_string(args.size()) + " argument vectors");
    std::vector<lm_core> c;
    std::vector<const uint32_t *> words;
    std::vector<uint32_t> counts;
    for (std::size_t i = 0; i < cores.size(); i++) {
        c.push_back(lm_cxx::to_c(cores[i]));
        words.push_back(args[i].data());
        counts.push_back(static_cast<uint32_t>(args[i].size()));
    }
    lm_cxx::check(lm_set_runtime_args_each(program.handle(), program.kernel(kernel), c.data(),
                                           static_cast<uint32_t>(c.size()), words.data(),
                                           counts.data()));
}

// A kernel's runtime args on one core, updated in place (GetRuntimeArgs):
// writes are what the next launch of the program sees.
class RuntimeArgsData {
  public:
    RuntimeArgsData(uint32_t *w, uint32_t n) : w_(w), n_(n) {}
    uint32_t &operator[](std::size_t i) { return w_[i]; }
    uint32_t &at(std::size_t i) {
        if (i >= n_)
            throw std::out_of_range("RuntimeArgsData: index " + std::to_string(i) + " of " +
                                    std::to_string(n_));
        return w_[i];
    }
    std::size_t size() const { return n_; }
    uint32_t *data() { return w_; }

  private:
    uint32_t *w_;
    uint32_t n_;
};
inline RuntimeArgsData GetRuntimeArgs(const Program &program, KernelHandle kernel, CoreCoord core) {
    uint32_t *w = nullptr, n = 0;
    lm_cxx::check(
        lm_get_runtime_args(program.handle(), program.kernel(kernel), lm_cxx::to_c(core), &w, &n));
    return RuntimeArgsData(w, n);
}

// tt-metal's split_work_to_cores: (num_cores, all_cores, core_group_1,
// core_group_2, units_per_core_group_1, units_per_core_group_2).
namespace lm_detail {
inline CoreRangeSet from_c(const lm_core_range_set &s) {
    std::vector<CoreRange> r;
    for (uint32_t i = 0; i < s.count; i++)
        r.emplace_back(CoreCoord{s.ranges[i].start.x, s.ranges[i].start.y},
                       CoreCoord{s.ranges[i].end.x, s.ranges[i].end.y});
    return CoreRangeSet(r);
}
} // namespace lm_detail
inline std::tuple<uint32_t, CoreRangeSet, CoreRangeSet, CoreRangeSet, uint32_t, uint32_t>
split_work_to_cores(CoreCoord grid_size, uint32_t units_to_divide, bool row_wise = false) {
    lm_work_split w;
    lm_cxx::check(lm_split_work_to_cores(lm_cxx::to_c(grid_size), units_to_divide, row_wise, &w));
    return {w.num_cores,
            lm_detail::from_c(w.all_cores),
            lm_detail::from_c(w.core_group_1),
            lm_detail::from_c(w.core_group_2),
            w.units_per_core_group_1,
            w.units_per_core_group_2};
}
inline void SetCommonRuntimeArgs(const Program &program, KernelHandle kernel,
                                 const std::vector<uint32_t> &args) {
    lm_cxx::check(lm_set_common_runtime_args(program.handle(), program.kernel(kernel), args.data(),
                                             static_cast<uint32_t>(args.size())));
}

enum class TensorMemoryLayout : uint8_t {
    INTERLEAVED,
    HEIGHT_SHARDED,
    WIDTH_SHARDED,
    BLOCK_SHARDED
};
enum class ShardOrientation : uint8_t { ROW_MAJOR, COL_MAJOR };

// A shard's cores and shape in elements (rows, columns), as tt-metal's.
struct ShardSpec {
    CoreRangeSet grid;
    std::array<uint32_t, 2> shape;
    ShardOrientation orientation = ShardOrientation::ROW_MAJOR;
};
// The same with the page shape and the tensor's shape in pages.
struct ShardSpecBuffer {
    ShardSpec tensor_shard_spec;
    std::array<uint32_t, 2> page_shape;
    std::array<uint32_t, 2> tensor2d_shape_in_pages;
    ShardSpecBuffer(const ShardSpec &spec, std::array<uint32_t, 2> page_shape_,
                    std::array<uint32_t, 2> tensor2d_shape_in_pages_)
        : tensor_shard_spec(spec), page_shape(page_shape_),
          tensor2d_shape_in_pages(tensor2d_shape_in_pages_) {}
};
struct BufferShardingArgs {
    std::optional<ShardSpecBuffer> shard_spec;
    TensorMemoryLayout layout = TensorMemoryLayout::INTERLEAVED;
    BufferShardingArgs() = default;
    BufferShardingArgs(const ShardSpecBuffer &spec, TensorMemoryLayout l)
        : shard_spec(spec), layout(l) {}
};

namespace distributed {

// One simulated device, seen as a 1x1 mesh.
class MeshDevice;
class MeshCommandQueue {
  public:
    explicit MeshCommandQueue(lm_command_queue *q) : q_(q) {}
    lm_command_queue *handle() const { return q_; }

  private:
    lm_command_queue *q_;
};

struct MeshShape {
    uint32_t rows = 1, cols = 1;
};
struct MeshCoordinateRange {
    explicit MeshCoordinateRange(MeshShape) {}
};

class MeshDevice {
  public:
    // Opens a simulated device with lightmetal's defaults (device_id is
    // accepted for tt-metal's signature: there is one device).
    static std::shared_ptr<MeshDevice> create_unit_mesh(int device_id = 0,
                                                        const lm_device_options *opts = nullptr) {
        (void)device_id;
        lm_device *d = nullptr;
        lm_cxx::check(lm_device_open(opts, &d));
        return std::shared_ptr<MeshDevice>(new MeshDevice(d));
    }
    ~MeshDevice() { close(); }
    MeshDevice(const MeshDevice &) = delete;
    MeshDevice &operator=(const MeshDevice &) = delete;
    bool close() {
        if (!d_) return true;
        if (lm_detail::current_device == d_) lm_detail::current_device = nullptr;
        lm_status st = lm_device_close(d_);
        d_ = nullptr;
        return st == LM_OK;
    }
    lm_device *handle() const { return d_; }
    MeshCommandQueue &mesh_command_queue(uint32_t cq_id = 0) {
        if (cq_id >= queues_.size() || !queues_[cq_id].handle())
            throw std::runtime_error("mesh_command_queue: no command queue " +
                                     std::to_string(cq_id));
        return queues_[cq_id];
    }
    MeshShape shape() const { return {}; }
    CoreCoord compute_with_storage_grid_size() const { return {info_.grid_x, info_.grid_y}; }
    CoreCoord logical_grid_size() const { return compute_with_storage_grid_size(); }
    uint32_t num_dram_channels() const { return info_.dram_banks; }
    // The DRAM banks as a grid of logical DRAM cores: bank b at (b, 0), where
    // a DRAM-sharded buffer's ShardSpec places its shards.
    CoreCoord dram_grid_size() const { return {info_.dram_banks, 1}; }
    uint32_t l1_size_per_core() const { return static_cast<uint32_t>(info_.l1_size); }
    // The allocator's statistics of one buffer type, per bank (the peak
    // too: lm_device_get_memory_stats).
    Statistics get_memory_allocation_statistics(BufferType type) const {
        lm_memory_stats ms;
        lm_cxx::check(lm_device_get_memory_stats(
            d_, type == BufferType::DRAM ? LM_BUFFER_DRAM : LM_BUFFER_L1, &ms));
        return {ms.total_allocatable_bytes, ms.total_allocated_bytes, ms.total_free_bytes,
                ms.largest_free_block_bytes, ms.peak_allocated_bytes};
    }
    // Worker cores' NoC coordinates equal their logical ones on the
    // simulated chip.
    CoreCoord worker_core_from_logical_core(CoreCoord logical) const {
        lm_core noc;
        lm_cxx::check(lm_worker_core_from_logical_core(d_, lm_cxx::to_c(logical), &noc));
        return {noc.x, noc.y};
    }
    CoreCoord virtual_core_from_logical_core(CoreCoord logical, int = 0) const {
        return worker_core_from_logical_core(logical);
    }

  private:
    explicit MeshDevice(lm_device *d) : d_(d) {
        lm_cxx::check(lm_device_get_info(d_, &info_));
        for (uint32_t i = 0; i < info_.num_command_queues; i++)
            queues_.emplace_back(lm_device_command_queue(d_, i));
        lm_detail::current_device = d_;
    }
    lm_device *d_;
    lm_device_info info_{};
    std::vector<MeshCommandQueue> queues_;
};

struct DeviceLocalBufferConfig {
    uint64_t page_size = 0;
    BufferType buffer_type = BufferType::DRAM;
    BufferShardingArgs sharding_args = {};
    bool bottom_up = true;
};
struct ReplicatedBufferConfig {
    uint64_t size = 0;
};

class MeshBuffer {
  public:
    static std::shared_ptr<MeshBuffer> create(const ReplicatedBufferConfig &global,
                                              const DeviceLocalBufferConfig &local,
                                              MeshDevice *device) {
        lm_buffer_config c;
        lm_buffer_config_init(&c);
        c.type = local.buffer_type == BufferType::DRAM ? LM_BUFFER_DRAM : LM_BUFFER_L1;
        c.size = global.size;
        c.page_size = local.page_size;
        const BufferShardingArgs &sa = local.sharding_args;
        if (sa.layout != TensorMemoryLayout::INTERLEAVED) {
            if (!sa.shard_spec)
                throw std::runtime_error("MeshBuffer::create: a sharded layout needs a shard spec");
            const ShardSpecBuffer &sb = *sa.shard_spec;
            const ShardSpec &ss = sb.tensor_shard_spec;
            if (!sb.page_shape[0] || !sb.page_shape[1] || ss.shape[0] % sb.page_shape[0] ||
                ss.shape[1] % sb.page_shape[1])
                throw std::runtime_error(
                    "MeshBuffer::create: the shard shape is not a whole number of pages");
            c.layout = static_cast<lm_buffer_layout>(static_cast<int>(sa.layout) + 1);
            c.shard.cores = lm_cxx::to_c(ss.grid);
            c.shard.shard_height = ss.shape[0] / sb.page_shape[0];
            c.shard.shard_width = ss.shape[1] / sb.page_shape[1];
            c.shard.tensor_height = sb.tensor2d_shape_in_pages[0];
            c.shard.tensor_width = sb.tensor2d_shape_in_pages[1];
            c.shard.col_major = ss.orientation == ShardOrientation::COL_MAJOR;
        }
        lm_buffer b;
        lm_cxx::check(lm_create_buffer(device->handle(), &c, &b));
        return std::shared_ptr<MeshBuffer>(new MeshBuffer(b, c));
    }
    ~MeshBuffer() { lm_deallocate_buffer(b_); }
    MeshBuffer(const MeshBuffer &) = delete;
    MeshBuffer &operator=(const MeshBuffer &) = delete;
    uint32_t address() const {
        uint64_t a = 0;
        lm_cxx::check(lm_buffer_address(b_, &a));
        return static_cast<uint32_t>(a);
    }
    uint64_t size() const { return cfg_.size; }
    uint64_t page_size() const { return cfg_.page_size; }
    BufferType buffer_type() const {
        return cfg_.type == LM_BUFFER_DRAM ? BufferType::DRAM : BufferType::L1;
    }
    lm_buffer handle() const { return b_; }

  private:
    MeshBuffer(lm_buffer b, lm_buffer_config c) : b_(b), cfg_(c) {}
    lm_buffer b_;
    lm_buffer_config cfg_;
};

// Returns once the data is on the device, whatever `blocking` says: tt-metal
// copies the data during the call, so its callers may pass a temporary or
// reuse the vector at once; a queued copy from it here could read freed memory.
template <class T>
void EnqueueWriteMeshBuffer(MeshCommandQueue &cq, const std::shared_ptr<MeshBuffer> &buffer,
                            const std::vector<T> &data, bool blocking = false) {
    static_assert(std::is_trivially_copyable_v<T>, "EnqueueWriteMeshBuffer: plain data only");
    if (data.size() * sizeof(T) != buffer->size())
        throw std::runtime_error(
            "EnqueueWriteMeshBuffer: " + std::to_string(data.size() * sizeof(T)) +
            " bytes for a buffer of " + std::to_string(buffer->size()));
    (void)blocking;
    lm_cxx::check(lm_enqueue_write_buffer(cq.handle(), buffer->handle(), data.data(), true));
}
// Reads the whole buffer into `out` (resized to fit).
template <class T>
void EnqueueReadMeshBuffer(MeshCommandQueue &cq, std::vector<T> &out,
                           const std::shared_ptr<MeshBuffer> &buffer, bool blocking = true) {
    static_assert(std::is_trivially_copyable_v<T>, "EnqueueReadMeshBuffer: plain data only");
    out.resize((buffer->size() + sizeof(T) - 1) / sizeof(T));
    lm_cxx::check(lm_enqueue_read_buffer(cq.handle(), buffer->handle(), out.data(), blocking));
}

class MeshWorkload {
  public:
    void add_program(const MeshCoordinateRange &, Program &&program) {
        programs_.push_back(std::move(program));
    }
    std::vector<Program> &get_programs() { return programs_; }

  private:
    std::vector<Program> programs_;
};

inline void EnqueueMeshWorkload(MeshCommandQueue &cq, MeshWorkload &workload, bool blocking) {
    for (Program &p : workload.get_programs())
        lm_cxx::check(lm_enqueue_program(cq.handle(), p.handle(), blocking));
}
inline void Finish(MeshCommandQueue &cq) {
    lm_cxx::check(lm_finish(cq.handle()));
}

} // namespace distributed

// The compile-time arguments of a kernel's TensorAccessorArgs<N> for a buffer.
class TensorAccessorArgs {
  public:
    explicit TensorAccessorArgs(const distributed::MeshBuffer &b) : b_(b.handle()) {}
    explicit TensorAccessorArgs(const std::shared_ptr<distributed::MeshBuffer> &b)
        : b_(b->handle()) {}
    void append_to(std::vector<uint32_t> &compile_args) const {
        uint32_t words[LM_TENSOR_ACCESSOR_MAX_ARGS], n = 0;
        lm_cxx::check(lm_tensor_accessor_args(b_, words, LM_TENSOR_ACCESSOR_MAX_ARGS, &n));
        compile_args.insert(compile_args.end(), words, words + n);
    }
    std::vector<uint32_t> get_compile_time_args() const {
        std::vector<uint32_t> v;
        append_to(v);
        return v;
    }

  private:
    lm_buffer b_;
};

} // namespace tt::tt_metal

// ---- host-side data ----
// bfloat16 with tt-metal's accessors; conversions are the C API's.
class bfloat16 {
  public:
    bfloat16() = default;
    bfloat16(float f) { lm_float_to_bfloat16(&f, &bits_, 1); }
    static bfloat16 from_bits(uint16_t b) {
        bfloat16 v;
        v.bits_ = b;
        return v;
    }
    float to_float() const {
        float f;
        lm_bfloat16_to_float(&bits_, &f, 1);
        return f;
    }
    operator float() const { return to_float(); }
    uint16_t to_uint16() const { return bits_; }
    bool operator==(const bfloat16 &o) const { return bits_ == o.bits_; }

  private:
    uint16_t bits_ = 0;
};
static_assert(sizeof(bfloat16) == 2, "bfloat16 is two bytes");

namespace lm_cxx {
template <class T> constexpr lm_data_format format_of() {
    if constexpr (std::is_same_v<T, bfloat16>)
        return LM_DATA_FORMAT_FLOAT16_B;
    else if constexpr (std::is_same_v<T, float>)
        return LM_DATA_FORMAT_FLOAT32;
    else if constexpr (std::is_same_v<T, uint32_t>)
        return LM_DATA_FORMAT_UINT32;
    else if constexpr (std::is_same_v<T, int32_t>)
        return LM_DATA_FORMAT_INT32;
    else
        return LM_DATA_FORMAT_INVALID;
}
// Elements as the 4-byte values lm_tilize takes.
template <class T> std::vector<uint32_t> widen(const std::vector<T> &in) {
    std::vector<uint32_t> out(in.size());
    for (std::size_t i = 0; i < in.size(); i++) {
        if constexpr (std::is_same_v<T, bfloat16>) {
            float f = in[i].to_float();
            std::memcpy(&out[i], &f, 4);
        } else {
            std::memcpy(&out[i], &in[i], 4);
        }
    }
    return out;
}
} // namespace lm_cxx

// Row-major rows x cols -> tiles of 32x32 in tile layout (four 16x16 faces),
// tile after tile in row-major tile order, elements of the same type.
template <class T>
std::vector<T> tilize_nfaces(const std::vector<T> &in, uint64_t rows, uint64_t cols) {
    constexpr lm_data_format f = lm_cxx::format_of<T>();
    static_assert(f != LM_DATA_FORMAT_INVALID,
                  "tilize_nfaces: bfloat16, float, uint32_t or int32_t");
    std::vector<uint32_t> wide = lm_cxx::widen(in);
    std::vector<T> out(in.size());
    lm_cxx::check(lm_tilize(wide.data(), static_cast<uint32_t>(rows), static_cast<uint32_t>(cols),
                            f, out.data(), out.size() * sizeof(T)));
    return out;
}
template <class T>
std::vector<T> untilize_nfaces(const std::vector<T> &in, uint64_t rows, uint64_t cols) {
    constexpr lm_data_format f = lm_cxx::format_of<T>();
    static_assert(f != LM_DATA_FORMAT_INVALID,
                  "untilize_nfaces: bfloat16, float, uint32_t or int32_t");
    std::vector<uint32_t> wide(in.size());
    lm_cxx::check(lm_untilize(in.data(), in.size() * sizeof(T), f, static_cast<uint32_t>(rows),
                              static_cast<uint32_t>(cols), wide.data(), wide.size() * 4));
    std::vector<T> out(in.size());
    for (std::size_t i = 0; i < in.size(); i++) {
        if constexpr (std::is_same_v<T, bfloat16>) {
            float v;
            std::memcpy(&v, &wide[i], 4);
            out[i] = bfloat16(v);
        } else {
            std::memcpy(&out[i], &wide[i], 4);
        }
    }
    return out;
}

// ---- Light Metal capture ----
namespace tt::tt_metal {
namespace detail {
// Direct L1 access (slow, synchronous), for tests and set-up.
inline bool WriteToDeviceL1(distributed::MeshDevice *device, CoreCoord core, uint32_t address,
                            const std::vector<uint32_t> &data) {
    lm_cxx::check(lm_device_write_l1(device->handle(), lm_cxx::to_c(core), address, data.size() * 4,
                                     data.data()));
    return true;
}
inline bool ReadFromDeviceL1(distributed::MeshDevice *device, CoreCoord core, uint32_t address,
                             uint32_t size, std::vector<uint32_t> &out) {
    out.resize((size + 3) / 4);
    lm_cxx::check(
        lm_device_read_l1(device->handle(), lm_cxx::to_c(core), address, size, out.data()));
    return true;
}
} // namespace detail
using LightMetalBinary = std::vector<uint8_t>;
inline void LightMetalBeginCapture(distributed::MeshDevice &device) {
    lm_cxx::check(lm_light_metal_begin_capture(device.handle(), nullptr));
}
inline LightMetalBinary LightMetalEndCapture(distributed::MeshDevice &device) {
    lm_binary *b = nullptr;
    lm_cxx::check(lm_light_metal_end_capture(device.handle(), &b));
    const void *data = nullptr;
    uint64_t size = 0;
    lm_status st = lm_binary_data(b, &data, &size);
    LightMetalBinary out;
    if (st == LM_OK)
        out.assign(static_cast<const uint8_t *>(data), static_cast<const uint8_t *>(data) + size);
    lm_binary_free(b);
    lm_cxx::check(st);
    return out;
}
} // namespace tt::tt_metal

#endif
