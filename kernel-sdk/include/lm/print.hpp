// Kernel printing in tt-metal's two C++ styles, over lm_print (one print
// ecall per piece; the host joins the pieces of a line):
//   DPRINT << "x = " << x << ENDL();            stream style (older kernels)
//   DEVICE_PRINT("x = {}, y = {}\n", x, y);     format style, {} per argument
// and the C style DPRINT("x = %u\n", x) of lm_kernel_common.h. Integers print
// in decimal (HEX()/DEC() switch), floats with %f (SETPRECISION(n) sets the
// digits after the point), bool as 0/1, pointers in hex, strings as text.
// TileSlice (TSLICE) prints elements of a tile in a circular buffer.
#pragma once

#include <stddef.h>
#include <stdint.h>

struct TileSlice;

namespace lm {

inline void print_value(const TileSlice &s);
struct print_endl {};
struct print_precision {
    uint32_t digits;
};
struct print_hex {};
struct print_dec {};
struct print_fixed {};
struct print_defaultfloat {};
struct print_bf16 {
    uint16_t bits;
};

// The stream's state, per kernel (a kernel runs on one processor).
inline uint32_t print_digits_ = 0xFFFFFFFFu; // none set: %f's default
inline bool print_hex_ = false;

inline void print_text(const char *s) {
    uint32_t a = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(s));
    lm_print("%s", &a, 1);
}
inline void print_u32(uint32_t v) {
    lm_print(print_hex_ ? "%x" : "%u", &v, 1);
}
inline void print_i32(int32_t v) {
    uint32_t a = static_cast<uint32_t>(v);
    lm_print(print_hex_ ? "%x" : "%d", &a, 1);
}
// 64-bit values without 64-bit division (RV32IM has none, and kernels link
// no runtime library): long division in 16-bit steps.
inline uint32_t divmod_u64_(uint64_t *v, uint32_t base) {
    uint32_t r = 0;
    uint64_t q = 0;
    for (int shift = 48; shift >= 0; shift -= 16) {
        uint32_t cur = r << 16 | static_cast<uint32_t>(*v >> shift & 0xFFFF);
        q |= static_cast<uint64_t>(cur / base) << shift;
        r = cur % base;
    }
    *v = q;
    return r;
}
inline void print_u64(uint64_t v) {
    if (v >> 32 == 0) return print_u32(static_cast<uint32_t>(v));
    char buf[24];
    char *p = buf + sizeof buf;
    *--p = '\0';
    uint32_t base = print_hex_ ? 16 : 10;
    do {
        uint32_t d = divmod_u64_(&v, base);
        *--p = static_cast<char>(d < 10 ? '0' + d : 'a' + d - 10);
    } while (v);
    print_text(p);
}
inline void print_float(float f) {
    uint32_t bits;
    __builtin_memcpy(&bits, &f, 4);
    if (print_digits_ == 0xFFFFFFFFu) return lm_print("%f", &bits, 1);
    char fmt[8] = {'%', '.', 0, 0, 'f', 0};
    uint32_t d = print_digits_ > 20 ? 20 : print_digits_;
    if (d >= 10) {
        fmt[2] = static_cast<char>('0' + d / 10);
        fmt[3] = static_cast<char>('0' + d % 10);
    } else {
        fmt[2] = static_cast<char>('0' + d);
        fmt[3] = 'f';
        fmt[4] = '\0';
    }
    lm_print(fmt, &bits, 1);
}
inline float bf16_to_float(uint16_t b) {
    uint32_t bits = static_cast<uint32_t>(b) << 16;
    float f;
    __builtin_memcpy(&f, &bits, 4);
    return f;
}

// One value, by type.
inline void print_value(const char *s) {
    print_text(s ? s : "(null)");
}
inline void print_value(char *s) {
    print_text(s ? s : "(null)");
}
inline void print_value(char c) {
    uint32_t a = static_cast<unsigned char>(c);
    lm_print("%c", &a, 1);
}
inline void print_value(bool b) {
    print_u32(b ? 1 : 0);
}
inline void print_value(signed char v) {
    print_i32(v);
}
inline void print_value(unsigned char v) {
    print_u32(v);
}
inline void print_value(short v) {
    print_i32(v);
}
inline void print_value(unsigned short v) {
    print_u32(v);
}
inline void print_value(int v) {
    print_i32(v);
}
inline void print_value(unsigned v) {
    print_u32(v);
}
inline void print_value(long v) {
    print_i32(static_cast<int32_t>(v));
}
inline void print_value(unsigned long v) {
    print_u32(static_cast<uint32_t>(v));
}
inline void print_value(long long v) {
    if (v < 0) {
        print_text("-");
        print_u64(0 - static_cast<uint64_t>(v));
    } else {
        print_u64(static_cast<uint64_t>(v));
    }
}
inline void print_value(unsigned long long v) {
    print_u64(v);
}
inline void print_value(float f) {
    print_float(f);
}
inline void print_value(double d) {
    print_float(static_cast<float>(d));
}
inline void print_value(print_bf16 b) {
    print_float(bf16_to_float(b.bits));
}
inline void print_value(const volatile void *p) {
    uint32_t a = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(p));
    lm_print("0x%x", &a, 1);
}
inline void print_value(print_endl) {
    lm_print("\n", nullptr, 0);
}
inline void print_value(print_precision p) {
    print_digits_ = p.digits;
}
inline void print_value(print_hex) {
    print_hex_ = true;
}
inline void print_value(print_dec) {
    print_hex_ = false;
}
inline void print_value(print_fixed) {}
inline void print_value(print_defaultfloat) {
    print_digits_ = 0xFFFFFFFFu;
}
template <typename E, typename = decltype(static_cast<uint32_t>(E{}))>
inline void print_value(E e) {
    print_u32(static_cast<uint32_t>(e));
}

struct print_stream {
    template <typename T> const print_stream &operator<<(const T &v) const {
        print_value(v);
        return *this;
    }
    const print_stream &operator<<(const char *s) const {
        print_value(s);
        return *this;
    }
    // The C style: DPRINT("x = %u\n", x), each argument one 32-bit word.
    template <typename... A> void operator()(const char *fmt, A... args) const {
        const uint32_t words[] = {0, word(args)...};
        lm_print(fmt, words + 1, sizeof...(A));
    }

  private:
    template <typename T> static uint32_t word(T v) {
        if constexpr (sizeof(T) == 4 && !__is_integral(T) && !__is_pointer(T) && !__is_enum(T)) {
            uint32_t w;
            __builtin_memcpy(&w, &v, 4);
            return w;
        } else if constexpr (__is_pointer(T)) {
            return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(v));
        } else {
            return static_cast<uint32_t>(v);
        }
    }
};

// DEVICE_PRINT: the text up to each "{}" (a "{{" or "}}" prints one brace),
// then the next argument.
inline const char *print_until_field(const char *f) {
    char buf[64];
    size_t n = 0;
    for (; *f; f++) {
        if ((f[0] == '{' && f[1] == '{') || (f[0] == '}' && f[1] == '}')) {
            f++;
        } else if (f[0] == '{' && f[1] == '}') {
            break;
        }
        buf[n++] = *f;
        if (n == sizeof buf - 1) {
            buf[n] = '\0';
            print_text(buf);
            n = 0;
        }
    }
    buf[n] = '\0';
    if (n) print_text(buf);
    return f;
}
inline void device_print(const char *f) {
    print_until_field(f);
}
template <typename T, typename... R>
void device_print(const char *f, const T &v, const R &...rest) {
    f = print_until_field(f);
    if (!*f) return; // more arguments than fields: the rest are not shown
    print_value(v);
    device_print(f + 2, rest...);
}

} // namespace lm

// DPRINT is an object: `DPRINT << x` and `DPRINT("fmt", x)` both work.
inline constexpr lm::print_stream DPRINT{};
inline lm::print_endl ENDL() {
    return {};
}
inline lm::print_precision SETPRECISION(uint32_t digits) {
    return {digits};
}
inline lm::print_fixed FIXED() {
    return {};
}
inline lm::print_defaultfloat DEFAULTFLOAT() {
    return {};
}
inline lm::print_hex HEX() {
    return {};
}
inline lm::print_dec DEC() {
    return {};
}
inline uint8_t U8(uint8_t v) {
    return v;
}
inline uint16_t U16(uint16_t v) {
    return v;
}
inline uint32_t U32(uint32_t v) {
    return v;
}
inline uint64_t U64(uint64_t v) {
    return v;
}
inline int8_t I8(int8_t v) {
    return v;
}
inline int16_t I16(int16_t v) {
    return v;
}
inline int32_t I32(int32_t v) {
    return v;
}
inline float F32(float v) {
    return v;
}
inline lm::print_bf16 BF16(uint16_t bits) {
    return {bits};
}

#define DEVICE_PRINT(...) lm::device_print(__VA_ARGS__)

// Per-processor forms: the statement runs only on that processor. The one
// compute processor of the simulated core runs the MATH, PACK and UNPACK ones.
#if LM_PROCESSOR == LM_PROC_DM0
#define DPRINT_DATA0(x) x
#define DEVICE_PRINT_DATA0(...) DEVICE_PRINT(__VA_ARGS__)
#else
#define DPRINT_DATA0(x)
#define DEVICE_PRINT_DATA0(...)
#endif
#if LM_PROCESSOR == LM_PROC_DM1
#define DPRINT_DATA1(x) x
#define DEVICE_PRINT_DATA1(...) DEVICE_PRINT(__VA_ARGS__)
#else
#define DPRINT_DATA1(x)
#define DEVICE_PRINT_DATA1(...)
#endif
#if LM_PROCESSOR == LM_PROC_COMPUTE
#define DPRINT_MATH(x) x
#define DPRINT_PACK(x) x
#define DPRINT_UNPACK(x) x
#define DEVICE_PRINT_MATH(...) DEVICE_PRINT(__VA_ARGS__)
#define DEVICE_PRINT_PACK(...) DEVICE_PRINT(__VA_ARGS__)
#define DEVICE_PRINT_UNPACK(...) DEVICE_PRINT(__VA_ARGS__)
#else
#define DPRINT_MATH(x)
#define DPRINT_PACK(x)
#define DPRINT_UNPACK(x)
#define DEVICE_PRINT_MATH(...)
#define DEVICE_PRINT_PACK(...)
#define DEVICE_PRINT_UNPACK(...)
#endif

// ---- tile slices ----
// np-style slice [h0:h1:hs, w0:w1:ws] of a 32x32 tile.
struct SliceRange {
    uint16_t h0, h1, hs, w0, w1, ws;
    static SliceRange hw0_32_16() { return {0, 32, 16, 0, 32, 16}; }
    static SliceRange hw0_32_8() { return {0, 32, 8, 0, 32, 8}; }
    static SliceRange hw0_32_4() { return {0, 32, 4, 0, 32, 4}; }
    static SliceRange h0_w0_32() { return {0, 1, 1, 0, 32, 1}; }
    static SliceRange h0_32_w0() { return {0, 32, 1, 0, 1, 1}; }
};
enum TSLICE_CB_TYPE : uint8_t { TSLICE_INPUT_CB, TSLICE_OUTPUT_CB };
enum TSLICE_PTR_TYPE : uint8_t { TSLICE_RD_PTR, TSLICE_WR_PTR };

// Elements of tile `tile` counted from the read pointer (TSLICE_RD_PTR, the
// front: what cb_wait_front made available) or the write pointer
// (TSLICE_WR_PTR, the back: what cb_reserve_back reserved) of circular buffer
// `cb`; one line per row of the slice when endl_rows. Float32 and bfloat16
// elements print as floats, UInt32/Int32 as integers; other formats print a
// message instead.
struct TileSlice {
    uint32_t cb, tile;
    SliceRange r;
    TSLICE_CB_TYPE cb_type;
    TSLICE_PTR_TYPE ptr_type;
    bool endl_rows, untilized;
    TileSlice(uint32_t cb_, uint32_t tile_, SliceRange r_, TSLICE_CB_TYPE t = TSLICE_INPUT_CB,
              TSLICE_PTR_TYPE p = TSLICE_RD_PTR, bool endl = true, bool untilize = true)
        : cb(cb_), tile(tile_), r(r_), cb_type(t), ptr_type(p), endl_rows(endl),
          untilized(untilize) {}
};
#define TSLICE TileSlice

namespace lm {
inline void print_value(const TileSlice &s) {
    if (s.cb >= LM_MAX_CBS) return print_text("<TileSlice: no such circular buffer>\n");
    const volatile uint32_t *cfg = lm_l1_word(LM_L1_CB_CONFIG + s.cb * LM_CB_CONFIG_STRIDE);
    uint32_t page = cfg[2], format = cfg[4];
    if (cfg[1] == 0) return print_text("<TileSlice: circular buffer not configured>\n");
    uint32_t base = s.ptr_type == TSLICE_WR_PTR ? get_write_ptr(s.cb) : get_read_ptr(s.cb);
    uint32_t addr = base + s.tile * page;
    uint32_t size = format == LM_DF_FLOAT16_B ? 2 : 4;
    if (format != LM_DF_FLOAT16_B && format != LM_DF_FLOAT32 && format != LM_DF_UINT32 &&
        format != LM_DF_INT32)
        return print_text("<TileSlice: data format not printable>\n");
    if (!s.r.hs || !s.r.ws || s.r.h1 > 32 || s.r.w1 > 32)
        return print_text("<TileSlice: bad SliceRange>\n");
    for (uint32_t h = s.r.h0; h < s.r.h1; h += s.r.hs) {
        for (uint32_t w = s.r.w0; w < s.r.w1; w += s.r.ws) {
            // Tile layout: four 16x16 faces, each row-major.
            uint32_t i = (h / 16 * 2 + w / 16) * 256 + h % 16 * 16 + w % 16;
            uint32_t at = addr + i * size;
            if (size == 2)
                print_float(bf16_to_float(*reinterpret_cast<volatile uint16_t *>(at)));
            else if (format == LM_DF_FLOAT32) {
                uint32_t bits = *lm_l1_word(at);
                lm_print("%f", &bits, 1);
            } else {
                uint32_t bits = *lm_l1_word(at);
                lm_print(format == LM_DF_INT32 ? "%d" : "%u", &bits, 1);
            }
            if (w + s.r.ws < s.r.w1) print_text(" ");
        }
        if (s.endl_rows) print_value(print_endl{});
    }
}
} // namespace lm
