// Kernel printing in tt-metal's C++ styles, over lm_print (one print ecall
// per piece; the host joins the pieces of a line):
//   DPRINT << "x = " << x << ENDL();            stream style (older kernels)
//   DEVICE_PRINT("x = {}, y = {:#x}\n", x, y);  format style (fmt's fields)
//   DPRINT("x = {}\n", x);                      2026 DPRINT: DEVICE_PRINT
//   DPRINT("x = %u\n", x);                      the C style (lm_kernel_common.h)
// DPRINT(fmt, ...) picks by its format: a {} field (any of fmt's replacement
// fields), or no '%' at all, makes it DEVICE_PRINT; a '%' with no field makes
// it the C style. Integers print in decimal (HEX()/DEC() switch the stream),
// floats with %f (SETPRECISION(n) sets the digits after the point), bool as
// 0/1 in a stream and true/false in a field, pointers in hex, strings as
// text. TileSlice (TSLICE) prints elements of a tile in a circular buffer,
// in a stream or in a field.
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

// ---- format style: DEVICE_PRINT, and DPRINT with {} fields ----
// tt-metal's DEVICE_PRINT reads fmt's replacement fields,
//   {[index][:[[fill]align][sign][#][0][width][.precision][type]]}
// with "{{" and "}}" for single braces. A field without a spec prints its
// argument as the stream style does (integers in decimal, floats with %f),
// except bool, which prints true/false as fmt does. With a spec, integers
// and text are laid out here as fmt lays them out (types d x X b B o c s);
// floats go to the host's %f with the sign, #, 0, width and precision (every
// float type prints as f; fill characters other than ' ' and centering do
// not apply to floats). Other arguments (TileSlice, ...) ignore the spec.
struct print_field {
    bool has_spec = false; // a ':' was given
    bool indexed = false;
    uint32_t index = 0;
    char fill = ' ';
    char align = 0; // '<', '>', '^', or 0: fmt's default (numbers right, text left)
    char sign = 0;  // '+', ' ', or 0 ('-' is the default)
    bool alt = false, zero = false;
    uint32_t width = 0;
    int32_t precision = -1;
    char type = 0;
};

constexpr bool is_digit_(char c) {
    return c >= '0' && c <= '9';
}
constexpr bool is_align_(char c) {
    return c == '<' || c == '>' || c == '^';
}
constexpr bool is_field_type_(char c) {
    for (const char *t = "aAbBcdeEfFgGopsxX?"; *t; t++)
        if (*t == c) return true;
    return false;
}
// Caps keep a kernel's typo from printing pages of padding.
inline constexpr uint32_t print_width_max_ = 128;

// The field starting at f (a '{'): its end (after the '}') and *out, or
// nullptr when f starts no valid field.
inline const char *parse_field(const char *f, print_field *out) {
    print_field s;
    f++;
    if (is_digit_(*f)) {
        s.indexed = true;
        while (is_digit_(*f))
            s.index = s.index * 10 + static_cast<uint32_t>(*f++ - '0');
    }
    if (*f == ':') {
        s.has_spec = true;
        f++;
        if (*f && *f != '{' && *f != '}' && is_align_(f[1])) {
            s.fill = f[0];
            s.align = f[1];
            f += 2;
        } else if (is_align_(*f)) {
            s.align = *f++;
        }
        if (*f == '+' || *f == ' ') s.sign = *f;
        if (*f == '+' || *f == '-' || *f == ' ') f++;
        if (*f == '#') s.alt = true, f++;
        if (*f == '0') s.zero = true, f++;
        while (is_digit_(*f))
            s.width = s.width * 10 + static_cast<uint32_t>(*f++ - '0');
        if (s.width > print_width_max_) s.width = print_width_max_;
        if (*f == '.' && is_digit_(f[1])) {
            f++;
            s.precision = 0;
            while (is_digit_(*f))
                s.precision = s.precision * 10 + (*f++ - '0');
            if (s.precision > 20) s.precision = 20;
        }
        if (*f == 'L') f++;
        if (is_field_type_(*f)) s.type = *f++;
    }
    if (*f != '}') return nullptr;
    *out = s;
    return f + 1;
}

// n characters of s (which may hold no NUL within them), in pieces.
inline void print_text_n(const char *s, uint32_t n) {
    char buf[64];
    while (n) {
        uint32_t k = n < sizeof buf - 1 ? n : sizeof buf - 1;
        for (uint32_t i = 0; i < k; i++)
            buf[i] = s[i];
        buf[k] = '\0';
        print_text(buf);
        s += k, n -= k;
    }
}
inline void print_fill_(char c, uint32_t n) {
    char buf[32];
    for (uint32_t i = 0; i < sizeof buf; i++)
        buf[i] = c;
    while (n) {
        uint32_t k = n < sizeof buf ? n : sizeof buf;
        print_text_n(buf, k);
        n -= k;
    }
}
// text[0, len) padded to the field's width by its fill and alignment.
inline void print_padded_(const char *text, uint32_t len, const print_field &s, char align) {
    uint32_t pad = s.width > len ? s.width - len : 0;
    if (s.align) align = s.align;
    uint32_t left = align == '>' ? pad : align == '^' ? pad / 2 : 0;
    print_fill_(s.fill, left);
    print_text_n(text, len);
    print_fill_(s.fill, pad - left);
}
inline void print_text_field(const char *t, const print_field &s) {
    if (!t) t = "(null)";
    uint32_t len = 0;
    while (t[len] && (s.precision < 0 || len < static_cast<uint32_t>(s.precision)))
        len++;
    print_padded_(t, len, s, '<');
}
// An integer of magnitude mag (negative when neg) as fmt formats it.
inline void print_int_field(uint64_t mag, bool neg, const print_field &s) {
    if (s.type == 'c') {
        char c = static_cast<char>(mag);
        return print_padded_(&c, 1, s, '<');
    }
    const uint32_t base = s.type == 'x' || s.type == 'X'   ? 16
                          : s.type == 'b' || s.type == 'B' ? 2
                          : s.type == 'o'                  ? 8
                                                           : 10;
    char digits[64];
    char *d = digits + sizeof digits;
    do {
        uint32_t v = divmod_u64_(&mag, base);
        *--d = static_cast<char>(v < 10 ? '0' + v : (s.type == 'X' ? 'A' : 'a') + v - 10);
    } while (mag);
    uint32_t nd = static_cast<uint32_t>(digits + sizeof digits - d);
    char out[64 + print_width_max_ + 4];
    uint32_t n = 0;
    if (neg || s.sign) out[n++] = neg ? '-' : s.sign;
    if (s.alt && base != 10) {
        if (base == 8) {
            if (*d != '0') out[n++] = '0';
        } else {
            out[n++] = '0';
            out[n++] = base == 16 ? s.type : s.type == 'B' ? 'B' : 'b';
        }
    }
    // '0' pads between the sign or prefix and the digits, unless aligned.
    if (s.zero && !s.align)
        while (n + nd < s.width)
            out[n++] = '0';
    for (uint32_t i = 0; i < nd; i++)
        out[n++] = d[i];
    print_padded_(out, n, s, '>');
}
inline void print_float_field(float f, const print_field &s) {
    char spec[16] = {'%'};
    uint32_t n = 1;
    if (s.align == '<') spec[n++] = '-';
    if (s.sign) spec[n++] = s.sign;
    if (s.alt) spec[n++] = '#';
    if (s.zero && !s.align) spec[n++] = '0';
    uint32_t w = s.width > 99 ? 99 : s.width;
    if (w >= 10) spec[n++] = static_cast<char>('0' + w / 10);
    if (w) spec[n++] = static_cast<char>('0' + w % 10);
    if (s.precision >= 0) {
        spec[n++] = '.';
        if (s.precision >= 10) spec[n++] = static_cast<char>('0' + s.precision / 10);
        spec[n++] = static_cast<char>('0' + s.precision % 10);
    }
    spec[n++] = 'f';
    spec[n] = '\0';
    uint32_t bits;
    __builtin_memcpy(&bits, &f, 4);
    lm_print(spec, &bits, 1);
}

template <class T> struct is_text_ { static constexpr bool value = false; };
template <> struct is_text_<char *> { static constexpr bool value = true; };
template <> struct is_text_<const char *> { static constexpr bool value = true; };

// One argument in a field.
template <class T> void print_field_value(const T &v, const print_field &s) {
    if constexpr (__is_same(T, bool)) {
        if (s.type && s.type != 's') return print_int_field(v, false, s);
        print_text_field(v ? "true" : "false", s);
    } else if constexpr (__is_enum(T)) {
        print_field_value(static_cast<__underlying_type(T)>(v), s);
    } else if constexpr (__is_integral(T)) {
        if (!s.has_spec) return print_value(v);
        if constexpr (__is_same(T, char)) {
            if (!s.type || s.type == 'c') return print_padded_(&v, 1, s, '<');
        }
        if constexpr (__is_signed(T)) {
            if (v < 0) return print_int_field(0 - static_cast<uint64_t>(v), true, s);
        }
        print_int_field(static_cast<uint64_t>(v), false, s);
    } else if constexpr (__is_same(T, float) || __is_same(T, double)) {
        if (!s.has_spec) return print_value(v);
        print_float_field(static_cast<float>(v), s);
    } else if constexpr (__is_same(T, print_bf16)) {
        if (!s.has_spec) return print_value(v);
        print_float_field(bf16_to_float(v.bits), s);
    } else if constexpr (is_text_<T>::value) {
        if (!s.has_spec) return print_value(v);
        print_text_field(v, s);
    } else if constexpr (__is_pointer(T)) {
        if (!s.has_spec) return print_value(v);
        print_field h = s;
        h.type = 'x', h.alt = true;
        print_int_field(static_cast<uint32_t>(reinterpret_cast<uintptr_t>(v)), false, h);
    } else {
        print_value(v);
    }
}

// The arguments of one call, each with the function that prints its type.
struct print_arg {
    void (*print)(const void *, const print_field &);
    const void *value;
};
template <class T> void print_arg_(const void *p, const print_field &s) {
    print_field_value(*static_cast<const T *>(p), s);
}

// The format's text, each field replaced by its argument (the next one, or
// the one it names). A field with no argument, and a '{' that starts no
// valid field, print as written; arguments no field names are not shown.
inline void device_print_args(const char *f, const print_arg *args, uint32_t count) {
    char buf[64];
    uint32_t n = 0, next = 0;
    while (*f) {
        if ((f[0] == '{' && f[1] == '{') || (f[0] == '}' && f[1] == '}')) {
            f++;
        } else if (f[0] == '{') {
            print_field s;
            const char *end = parse_field(f, &s);
            uint32_t i = end && s.indexed ? s.index : next;
            if (end && i < count) {
                if (!s.indexed) next++;
                print_text_n(buf, n);
                n = 0;
                args[i].print(args[i].value, s);
                f = end;
                continue;
            }
        }
        buf[n++] = *f++;
        if (n == sizeof buf) {
            print_text_n(buf, n);
            n = 0;
        }
    }
    print_text_n(buf, n);
}
// Arguments by value, as tt-metal's DEVICE_PRINT takes them: volatile values
// and packed fields print, and arrays arrive as pointers.
template <typename... A> void device_print(const char *f, A... args) {
    const print_arg list[] = {{print_arg_<A>, &args}..., {nullptr, nullptr}};
    device_print_args(f, list, sizeof...(A));
}

// Whether DPRINT(fmt, ...) is format style: fmt has a replacement field, or
// no '%' (text alone prints the same either way, but for "{{" and "}}").
inline bool is_format_style(const char *f) {
    bool percent = false;
    for (; *f; f++) {
        print_field s;
        if (f[0] == '{' && f[1] == '{')
            f++;
        else if (f[0] == '{' && parse_field(f, &s))
            return true;
        else if (f[0] == '%')
            percent = true;
    }
    return !percent;
}

template <class T>
inline constexpr bool is_word_ = __is_arithmetic(T) || __is_enum(T) || __is_pointer(T) ||
                                 (sizeof(T) == 4 && __is_trivially_copyable(T));

// DPRINT is an object: `DPRINT << x` streams, and DPRINT(fmt, ...) is a
// call. tt-metal's 2026 DPRINT(fmt, ...) is DEVICE_PRINT; the SDK's C style
// is printf's. The format decides: one with a {} field (or no '%') prints as
// DEVICE_PRINT, one with a '%' and no field prints as printf (each argument
// one 32-bit word, as lm_kernel_common.h describes). Arguments that are not
// words (TileSlice, ...) make the call format style.
struct print_stream {
    template <typename T> const print_stream &operator<<(const T &v) const {
        print_value(v);
        return *this;
    }
    const print_stream &operator<<(const char *s) const {
        print_value(s);
        return *this;
    }
    template <typename... A> void operator()(const char *fmt, A... args) const {
        if constexpr ((is_word_<A> && ...)) {
            if (!is_format_style(fmt)) {
                const uint32_t words[] = {0, word(args)...};
                return lm_print(fmt, words + 1, sizeof...(A));
            }
        }
        device_print(fmt, args...);
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
