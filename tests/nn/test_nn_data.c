/* Data movement ops against host references: every output element is the
 * input element the op's map names (or the fill), compared bit for bit, in
 * every dtype and both layouts; bilinear upsampling against PyTorch's
 * formula in float32; tile padding stays zero; errors. */
#include <stdio.h>
#include <time.h>

#include "nn_test.h"

static int shape_eq(const lmnn_shape *a, const lmnn_shape *b) {
    if (a->rank != b->rank) return 0;
    for (uint32_t i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i]) return 0;
    return 1;
}

/* ---- host tensors ---- */

typedef struct cfg {
    lmnn_dtype dtype;
    lmnn_layout layout;
} cfg;

static const cfg all_cfgs[] = {
    {LMNN_FLOAT32, LMNN_ROW_MAJOR},  {LMNN_FLOAT32, LMNN_TILE},    {LMNN_BFLOAT16, LMNN_TILE},
    {LMNN_BFLOAT16, LMNN_ROW_MAJOR}, {LMNN_UINT32, LMNN_TILE},     {LMNN_INT32, LMNN_ROW_MAJOR},
    {LMNN_UINT16, LMNN_ROW_MAJOR},   {LMNN_UINT8, LMNN_ROW_MAJOR}, {LMNN_BFLOAT8_B, LMNN_TILE},
    {LMNN_INT32, LMNN_TILE},
};
#define NCFG (sizeof all_cfgs / sizeof *all_cfgs)

static size_t hsize(lmnn_dtype dt) {
    return lmnn_dtype_host_size(dt);
}

/* n host elements of `dt`: exact in the dtype (bfloat16-rounded floats;
 * small integers for bfloat8_b, exact whatever their block shares). */
static void *make_data(lmnn_dtype dt, size_t n, uint64_t seed) {
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 7;
    void *v = malloc(n * hsize(dt) + 1);
    for (size_t i = 0; i < n; i++) {
        uint32_t r = nn_rand_u32(&s);
        switch (dt) {
        case LMNN_FLOAT32:
            ((float *)v)[i] = (float)((int32_t)r % 100000) / 64.0f + 0.5f;
            break;
        case LMNN_BFLOAT16:
            ((float *)v)[i] = nn_bf16((float)((int32_t)r % 100000) / 64.0f + 0.5f);
            break;
        case LMNN_BFLOAT8_B:
            ((float *)v)[i] = (float)((int32_t)(r % 255) - 127);
            break;
        case LMNN_UINT16:
            ((uint16_t *)v)[i] = (uint16_t)r;
            break;
        case LMNN_UINT8:
            ((uint8_t *)v)[i] = (uint8_t)r;
            break;
        default:
            ((uint32_t *)v)[i] = r * 2654435761u;
            break;
        }
    }
    return v;
}

static lm_status up(const lmnn_shape *s, cfg c, const void *data, lmnn_tensor *out) {
    lmnn_tensor_options o;
    lmnn_tensor_options_init(&o);
    o.dtype = c.dtype;
    o.layout = c.layout;
    return lmnn_from_host(nn_dev(), s, data, lmnn_shape_volume(s) * hsize(c.dtype), &o, out);
}

static void *down(lmnn_tensor t) {
    size_t size;
    if (lmnn_tensor_host_size(t, &size)) return NULL;
    void *v = malloc(size + 1);
    if (v && lmnn_to_host(t, v, size)) {
        free(v);
        return NULL;
    }
    return v;
}

/* The tile tensor's padding, read raw, is all zero bits (any tile dtype). */
static int padding_is_zero(lmnn_tensor t) {
    lmnn_tensor_info info;
    if (lmnn_tensor_get_info(t, &info)) return 0;
    if (info.layout != LMNN_TILE) return 1;
    uint64_t size;
    lm_buffer_size(info.buffer, &size);
    uint8_t *raw = malloc(size);
    lm_enqueue_read_buffer(lm_device_command_queue(info.device, 0), info.buffer, raw, true);
    uint32_t r = info.shape.rank;
    uint32_t w = r ? info.shape.dims[r - 1] : 1, h = r > 1 ? info.shape.dims[r - 2] : 1;
    uint32_t wp = (w + 31) / 32 * 32, hp = (h + 31) / 32 * 32;
    lm_data_format f = info.dtype == LMNN_FLOAT32    ? LM_DATA_FORMAT_FLOAT32
                       : info.dtype == LMNN_BFLOAT16 ? LM_DATA_FORMAT_FLOAT16_B
                       : info.dtype == LMNN_UINT32   ? LM_DATA_FORMAT_UINT32
                       : info.dtype == LMNN_INT32    ? LM_DATA_FORMAT_INT32
                                                     : LM_DATA_FORMAT_BFP8_B;
    size_t tile = lm_tile_size(f), mat = (size_t)(hp / 32) * (wp / 32) * tile;
    uint64_t mats = size / mat;
    uint32_t *rm = malloc((size_t)wp * hp * 4);
    int ok = 1;
    for (uint64_t m = 0; m < mats && ok; m++) {
        lm_untilize(raw + m * mat, mat, f, hp, wp, rm, (size_t)wp * hp * 4);
        for (uint32_t i = 0; i < hp && ok; i++)
            for (uint32_t j = 0; j < wp; j++)
                if ((i >= h || j >= w) && rm[i * wp + j] != 0) ok = 0;
    }
    free(raw);
    free(rm);
    return ok;
}

/* ---- references: out[o] = in[src(o)], or the fill when src(o) < 0 ---- */

typedef int64_t (*src_fn)(const uint32_t *o, const void *ctx);

static void strides_of(const lmnn_shape *s, int64_t *st) {
    int64_t k = 1;
    for (int32_t d = (int32_t)s->rank - 1; d >= 0; d--) {
        st[d] = k;
        k *= s->dims[d];
    }
}

static void *reference(const lmnn_shape *os, size_t esize, const void *in, src_fn f,
                       const void *ctx, const void *fill) {
    size_t n = lmnn_shape_volume(os);
    uint8_t *out = malloc(n * esize + 1);
    uint32_t o[LMNN_MAX_DIMS] = {0};
    for (size_t i = 0; i < n; i++) {
        int64_t s = f(o, ctx);
        memcpy(out + i * esize, s < 0 ? fill : (const uint8_t *)in + s * esize, esize);
        for (int32_t d = (int32_t)os->rank - 1; d >= 0; d--) {
            if (++o[d] < os->dims[d]) break;
            o[d] = 0;
        }
    }
    return out;
}

/* Compares the device result with the reference, bit for bit; prints the
 * first difference. */
static int same(const void *got, const void *want, size_t n, size_t esize, const char *what) {
    if (!got) {
        printf("    %s: no result: %s\n", what, lm_last_error());
        return 0;
    }
    for (size_t i = 0; i < n; i++)
        if (memcmp((const uint8_t *)got + i * esize, (const uint8_t *)want + i * esize, esize)) {
            uint32_t g = 0, w = 0;
            memcpy(&g, (const uint8_t *)got + i * esize, esize);
            memcpy(&w, (const uint8_t *)want + i * esize, esize);
            printf("    %s: element %zu of %zu: got 0x%x, want 0x%x\n", what, i, n, g, w);
            return 0;
        }
    return 1;
}

static const char *cfg_name(cfg c, char *buf) {
    snprintf(buf, 64, "%s %s", lmnn_layout_name(c.layout), lmnn_dtype_name(c.dtype));
    return buf;
}

/* Runs `run` on a tensor of `in_shape` in config c, checks the result
 * against the reference from `f`; the output shape must be `out_shape`. */
typedef lm_status (*run_fn)(lmnn_tensor a, const void *ctx, lmnn_tensor *out);

static int check_op(const char *name, cfg c, const lmnn_shape *in_shape,
                    const lmnn_shape *out_shape, run_fn run, src_fn f, const void *ctx,
                    double fill_value, uint64_t seed) {
    char what[256], cb[64];
    snprintf(what, sizeof what, "%s (%s)", name, cfg_name(c, cb));
    size_t n = lmnn_shape_volume(in_shape), m = lmnn_shape_volume(out_shape), es = hsize(c.dtype);
    void *x = make_data(c.dtype, n, seed);
    lmnn_tensor a, o = {0};
    int ok = 1;
    if (up(in_shape, c, x, &a)) {
        printf("    %s: upload: %s\n", what, lm_last_error());
        free(x);
        return 0;
    }
    if (run(a, ctx, &o)) {
        printf("    %s: %s\n", what, lm_last_error());
        ok = 0;
    }
    lmnn_tensor_info info;
    if (ok && !lmnn_tensor_get_info(o, &info)) {
        if (!shape_eq(&info.shape, out_shape) || info.dtype != c.dtype || info.layout != c.layout) {
            printf("    %s: wrong output shape/dtype/layout\n", what);
            ok = 0;
        }
    }
    uint8_t fill[4] = {0};
    if (c.dtype == LMNN_FLOAT32 || c.dtype == LMNN_BFLOAT16 || c.dtype == LMNN_BFLOAT8_B) {
        float v = (float)fill_value;
        if (c.dtype == LMNN_BFLOAT16) v = nn_bf16(v);
        memcpy(fill, &v, 4);
    } else if (c.dtype == LMNN_INT32) {
        int32_t v = (int32_t)fill_value;
        memcpy(fill, &v, 4);
    } else {
        uint32_t v = fill_value <= 0 ? 0 : (uint32_t)fill_value; /* saturates */
        if (c.dtype == LMNN_UINT16) {
            uint16_t h = (uint16_t)v;
            memcpy(fill, &h, 2);
        } else if (c.dtype == LMNN_UINT8) {
            fill[0] = (uint8_t)v;
        } else {
            memcpy(fill, &v, 4);
        }
    }
    if (ok) {
        void *want = reference(out_shape, es, x, f, ctx, fill);
        void *got = down(o);
        ok = same(got, want, m, es, what);
        if (ok && !padding_is_zero(o)) {
            printf("    %s: padding is not zero\n", what);
            ok = 0;
        }
        free(want);
        free(got);
    }
    free(x);
    lmnn_tensor_free(a);
    lmnn_tensor_free(o);
    return ok;
}

/* ---- reshape ---- */

typedef struct shape_ctx {
    lmnn_shape in, out;
} shape_ctx;

static int64_t flat_src(const uint32_t *o, const void *ctx) {
    const shape_ctx *c = ctx;
    int64_t st[LMNN_MAX_DIMS] = {0}, k = 0;
    strides_of(&c->out, st);
    for (uint32_t d = 0; d < c->out.rank; d++)
        k += o[d] * st[d];
    return k;
}

static lm_status run_reshape(lmnn_tensor a, const void *ctx, lmnn_tensor *out) {
    const shape_ctx *c = ctx;
    return lmnn_reshape(a, &c->out, NULL, out);
}

/* Checks that the work queued since profiling was turned on was one launch
 * of `program`; turns profiling off. */
static void check_launched_once(const char *program) {
    lm_profile_program_entry *e;
    size_t n;
    CHECK_OK(lm_finish(lm_device_command_queue(nn_dev(), 0)));
    CHECK_OK(lm_device_get_program_profile(nn_dev(), &e, &n));
    CHECK(n == 1 && e[0].launches == 1 && !strcmp(e[0].program, program));
    lm_profile_program_free(e);
    CHECK_OK(lm_device_set_profiling(nn_dev(), false));
}

/* lmnn_reshape of a float32 tile tensor `in` to `to` (into `o`'s memory) is
 * one launch of `program` and keeps the elements. */
static void check_one_launch(const lmnn_shape *in, const lmnn_shape *to, const lmnn_output *o,
                             const char *program) {
    uint64_t count = lmnn_shape_volume(in);
    float *v = make_data(LMNN_FLOAT32, count, 5);
    lmnn_tensor a, b;
    CHECK_OK(nn_upload(in, v, LMNN_FLOAT32, LMNN_TILE, &a));
    CHECK_OK(lm_device_set_profiling(nn_dev(), true));
    CHECK_OK(lmnn_reshape(a, to, o, &b));
    check_launched_once(program);
    float *y = nn_download(b);
    CHECK(y && !memcmp(v, y, count * sizeof *y));
    free(y);
    free(v);
    lmnn_tensor_free(a);
    lmnn_tensor_free(b);
}

static void test_reshape(void) {
    shape_ctx cases[] = {
        {LMNN_SHAPE(2, 3, 4), LMNN_SHAPE(4, 6)},
        {LMNN_SHAPE(6, 4), LMNN_SHAPE(24)},
        {LMNN_SHAPE(70, 33), LMNN_SHAPE(33, 70)},
        {LMNN_SHAPE(2, 64, 96), LMNN_SHAPE(128, 96)},
        {LMNN_SHAPE(1), LMNN_SHAPE(1, 1, 1)},
        {LMNN_SHAPE(3, 5, 7), LMNN_SHAPE(3, 35)},
        {LMNN_SHAPE(4, 40, 50), LMNN_SHAPE(2, 2, 40, 50)},
        {LMNN_SHAPE(5000), LMNN_SHAPE(50, 100)},
        /* The last dim kept, the rows regrouped (tile_rows_reader.c): runs
         * across face halves, tile rows and matrices, both ways. */
        {LMNN_SHAPE(1, 14, 14, 40), LMNN_SHAPE(196, 40)},
        {LMNN_SHAPE(196, 40), LMNN_SHAPE(1, 14, 14, 40)},
        {LMNN_SHAPE(3, 45, 33), LMNN_SHAPE(5, 27, 33)},
        {LMNN_SHAPE(5, 7, 3), LMNN_SHAPE(35, 3)},
        {LMNN_SHAPE(2, 3, 14, 70), LMNN_SHAPE(7, 12, 70)},
        /* The last dim changed (tile_reshape_reader.c: runs read from the
         * input's tiles): a decoder's heads split and joined, pieces cut
         * at input and output face rows, matrices of rows that are not
         * whole tiles, 8,192 pieces; and 105,000 pieces, past the limit,
         * which go through rows. */
        {LMNN_SHAPE(2, 1, 32), LMNN_SHAPE(2, 1, 4, 8)},
        {LMNN_SHAPE(2, 1, 4, 8), LMNN_SHAPE(2, 1, 32)},
        {LMNN_SHAPE(6, 70), LMNN_SHAPE(10, 42)},
        {LMNN_SHAPE(3, 17, 5), LMNN_SHAPE(5, 51)},
        {LMNN_SHAPE(40, 45), LMNN_SHAPE(2, 36, 25)},
        {LMNN_SHAPE(64, 1024), LMNN_SHAPE(1024, 64)},
        {LMNN_SHAPE(35000, 2), LMNN_SHAPE(70000, 1)},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        for (size_t k = 0; k < NCFG; k++)
            CHECK(check_op("reshape", all_cfgs[k], &cases[i].in, &cases[i].out, run_reshape,
                           flat_src, &cases[i], 0, i * 31 + k));
    /* A regrouping is one launch of one program, also into L1; so is a
     * small reshape of the last dim. */
    lmnn_output l1 = {.memory = {.type = LM_BUFFER_L1, .layout = LM_BUFFER_INTERLEAVED}};
    lmnn_shape img = LMNN_SHAPE(1, 14, 14, 64), rows = LMNN_SHAPE(196, 64);
    lmnn_shape heads = LMNN_SHAPE(2, 1, 32), split = LMNN_SHAPE(2, 1, 4, 8);
    check_one_launch(&img, &rows, &l1, "tile_rows_reader.c + tile_writer.c");
    check_one_launch(&heads, &split, NULL, "tile_reshape_reader.c + tile_writer.c");
    /* LMNN_DIM_AUTO */
    lmnn_shape s = LMNN_SHAPE(6, 10), auto_s = LMNN_SHAPE(3, LMNN_DIM_AUTO, 5);
    float x[60];
    for (int i = 0; i < 60; i++)
        x[i] = (float)i;
    lmnn_tensor a, b;
    CHECK_OK(nn_upload(&s, x, LMNN_FLOAT32, LMNN_TILE, &a));
    CHECK_OK(lmnn_reshape(a, &auto_s, NULL, &b));
    lmnn_tensor_info info;
    CHECK_OK(lmnn_tensor_get_info(b, &info));
    lmnn_shape want = LMNN_SHAPE(3, 4, 5);
    CHECK(shape_eq(&info.shape, &want));
    float *y = nn_download(b);
    CHECK(y && !memcmp(x, y, sizeof x));
    free(y);
    lmnn_tensor_free(a);
    lmnn_tensor_free(b);
}

/* Launches queued since profiling was turned on; turns profiling off. */
static size_t launches_since(void) {
    lm_profile_program_entry *e;
    size_t n, total = 0;
    if (lm_finish(lm_device_command_queue(nn_dev(), 0)) ||
        lm_device_get_program_profile(nn_dev(), &e, &n))
        return SIZE_MAX;
    for (size_t i = 0; i < n; i++)
        total += e[i].launches;
    lm_profile_program_free(e);
    lm_device_set_profiling(nn_dev(), false);
    return total;
}

static uint64_t dram_allocated(void) {
    lm_memory_stats ms;
    return lm_device_get_memory_stats(nn_dev(), LM_BUFFER_DRAM, &ms) ? UINT64_MAX
                                                                     : ms.total_allocated_bytes;
}

/* lmnn_view: a second handle on the same buffer, no device work; the
 * buffer outlives whichever handle goes first and goes with the last;
 * a write to it shows through both. lmnn_reshape is a view where it can
 * be; lmnn_clone always copies. */
static void test_view_clone(void) {
    float x[2 * 64 * 96];
    for (size_t i = 0; i < sizeof x / sizeof *x; i++)
        x[i] = (float)i * 0.5f - 100.0f;
    const struct {
        lmnn_shape in, to;
        lmnn_layout layout;
    } cases[] = {
        {LMNN_SHAPE(2, 64, 96), LMNN_SHAPE(128, 96), LMNN_TILE},
        {LMNN_SHAPE(2, 2, 16, 8), LMNN_SHAPE(2, 2, 1, 16, 8), LMNN_TILE},
        {LMNN_SHAPE(2, 1, 8), LMNN_SHAPE(2, 1, 1, 8), LMNN_TILE},
        {LMNN_SHAPE(5, 7, 3), LMNN_SHAPE(35, 3), LMNN_ROW_MAJOR},
        {LMNN_SHAPE(24), LMNN_SHAPE(1, 24), LMNN_ROW_MAJOR},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        uint64_t before = dram_allocated();
        lmnn_tensor a, v;
        CHECK_OK(nn_upload(&cases[k].in, x, LMNN_FLOAT32, cases[k].layout, &a));
        uint64_t one = dram_allocated() - before;
        CHECK_OK(lm_device_set_profiling(nn_dev(), true));
        CHECK_OK(k % 2 ? lmnn_view(a, &cases[k].to, &v) : lmnn_reshape(a, &cases[k].to, NULL, &v));
        CHECK(launches_since() == 0);
        CHECK(dram_allocated() - before == one);
        lmnn_tensor_info ia, iv;
        CHECK_OK(lmnn_tensor_get_info(a, &ia));
        CHECK_OK(lmnn_tensor_get_info(v, &iv));
        CHECK(ia.buffer.id == iv.buffer.id && ia.shared && iv.shared && !ia.view && iv.view);
        CHECK(shape_eq(&iv.shape, &cases[k].to) && iv.layout == cases[k].layout);
        /* The source freed first: the view still reads its elements. */
        CHECK_OK(lmnn_tensor_free(a));
        CHECK(dram_allocated() - before == one);
        CHECK_OK(lmnn_tensor_get_info(v, &iv));
        CHECK(!iv.shared && iv.view);
        float *y = nn_download(v);
        CHECK(y && !memcmp(y, x, lmnn_shape_volume(&cases[k].to) * sizeof *y));
        free(y);
        CHECK_OK(lmnn_tensor_free(v));
        CHECK(dram_allocated() == before);
    }

    /* A write to the buffer shows through every handle on it; a clone's
     * buffer is its own (one launch), also into L1. */
    lmnn_shape rs = LMNN_SHAPE(4, 6), flat = LMNN_SHAPE(2, 2, 6);
    lmnn_tensor a, v, c, c1;
    CHECK_OK(nn_upload(&rs, x, LMNN_FLOAT32, LMNN_ROW_MAJOR, &a));
    CHECK_OK(lmnn_view(a, &flat, &v));
    CHECK_OK(lm_device_set_profiling(nn_dev(), true));
    CHECK_OK(lmnn_clone(v, NULL, &c));
    CHECK(launches_since() == 1);
    lmnn_output l1 = {.memory = {.type = LM_BUFFER_L1, .layout = LM_BUFFER_INTERLEAVED}};
    CHECK_OK(lmnn_clone(a, &l1, &c1));
    lmnn_tensor_info ia, ic, ic1;
    CHECK_OK(lmnn_tensor_get_info(a, &ia));
    CHECK_OK(lmnn_tensor_get_info(c, &ic));
    CHECK_OK(lmnn_tensor_get_info(c1, &ic1));
    CHECK(ic.buffer.id != ia.buffer.id && !ic.shared && !ic.view && shape_eq(&ic.shape, &flat));
    CHECK(ic1.memory.type == LM_BUFFER_L1 && !ic1.shared);
    float z[24];
    for (int i = 0; i < 24; i++)
        z[i] = (float)(i * i);
    CHECK_OK(lm_enqueue_write_buffer(lm_device_command_queue(nn_dev(), 0), ia.buffer, z, true));
    float *ya = nn_download(a), *yv = nn_download(v), *yc = nn_download(c), *yc1 = nn_download(c1);
    CHECK(ya && yv && yc && yc1);
    CHECK(!memcmp(ya, z, sizeof z) && !memcmp(yv, z, sizeof z));
    CHECK(!memcmp(yc, x, sizeof z) && !memcmp(yc1, x, sizeof z));
    free(ya);
    free(yv);
    free(yc);
    free(yc1);

    /* lmnn_reshape into other memory copies; so does one that moves pages. */
    lmnn_tensor r1, r2;
    CHECK_OK(lmnn_reshape(a, &flat, &l1, &r1));
    lmnn_shape wide = LMNN_SHAPE(2, 12);
    CHECK_OK(lmnn_reshape(a, &wide, NULL, &r2));
    lmnn_tensor_info i1, i2;
    CHECK_OK(lmnn_tensor_get_info(r1, &i1));
    CHECK_OK(lmnn_tensor_get_info(r2, &i2));
    CHECK(i1.buffer.id != ia.buffer.id && i2.buffer.id != ia.buffer.id && !i1.shared);

    /* Bad views and clones. */
    lmnn_tensor o = {0}, t;
    lmnn_shape bad = LMNN_SHAPE(5, 5);
    CHECK_FAILS(lmnn_view(a, &wide, &o), LM_ERR_INVALID_ARGUMENT,
                "lmnn_view: shape: a row_major tensor of shape [2, 12] holds its elements in other "
                "pages than a's shape [4, 6] (a view keeps the last dim; lmnn_reshape copies)");
    CHECK_FAILS(lmnn_view(a, &bad, &o), LM_ERR_INVALID_ARGUMENT,
                "lmnn_view: shape: [5, 5] cannot hold the 24 elements of a's shape [4, 6]");
    CHECK_FAILS(lmnn_view(a, NULL, &o), LM_ERR_INVALID_ARGUMENT, "lmnn_view: shape is NULL");
    CHECK_FAILS(lmnn_view(a, &flat, NULL), LM_ERR_INVALID_ARGUMENT, "lmnn_view: out is NULL");
    CHECK(o.id == 0);
    lmnn_shape t3 = LMNN_SHAPE(2, 3, 4), t6 = LMNN_SHAPE(6, 4);
    CHECK_OK(nn_upload(&t3, x, LMNN_FLOAT32, LMNN_TILE, &t));
    CHECK_FAILS(lmnn_view(t, &t6, &o), LM_ERR_INVALID_ARGUMENT,
                "lmnn_view: shape: a tile tensor of shape [6, 4] holds its elements in other pages "
                "than a's shape [2, 3, 4] (a view keeps the last dim, and the second-last one or "
                "both second-last dims are multiples of 32; lmnn_reshape copies)");
    lmnn_output bf = {.dtype = LMNN_BFLOAT16};
    CHECK_FAILS(lmnn_clone(t, &bf, &o), LM_ERR_INVALID_ARGUMENT,
                "lmnn_clone: output.dtype: expected float32 (the input's; data movement does not "
                "convert), given bfloat16");
    CHECK_FAILS(lmnn_clone(t, NULL, NULL), LM_ERR_INVALID_ARGUMENT, "lmnn_clone: out is NULL");
    lmnn_tensor gone = v;
    CHECK_OK(lmnn_tensor_free(v));
    CHECK_FAILS(lmnn_view(gone, &rs, &o), LM_ERR_INVALID_HANDLE, "lmnn_view: a: tensor handle");
    CHECK_FAILS(lmnn_clone(gone, NULL, &o), LM_ERR_INVALID_HANDLE, "lmnn_clone: a: tensor handle");
    CHECK_FAILS(lmnn_tensor_free(gone), LM_ERR_INVALID_HANDLE, "lmnn_tensor_free");
    CHECK(o.id == 0);
    lmnn_tensor all[] = {a, c, c1, r1, r2, t};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        CHECK_OK(lmnn_tensor_free(all[i]));
}

/* ---- permute / transpose ---- */

typedef struct perm_ctx {
    lmnn_shape in;
    int32_t perm[LMNN_MAX_DIMS];
} perm_ctx;

static int64_t perm_src(const uint32_t *o, const void *ctx) {
    const perm_ctx *c = ctx;
    int64_t st[LMNN_MAX_DIMS] = {0}, k = 0;
    strides_of(&c->in, st);
    for (uint32_t d = 0; d < c->in.rank; d++) {
        int32_t p = c->perm[d] < 0 ? c->perm[d] + (int32_t)c->in.rank : c->perm[d];
        k += o[d] * st[p];
    }
    return k;
}

static lm_status run_permute(lmnn_tensor a, const void *ctx, lmnn_tensor *out) {
    const perm_ctx *c = ctx;
    return lmnn_permute(a, c->perm, c->in.rank, NULL, out);
}

static lmnn_shape permuted(const perm_ctx *c) {
    lmnn_shape s = c->in;
    for (uint32_t d = 0; d < c->in.rank; d++) {
        int32_t p = c->perm[d] < 0 ? c->perm[d] + (int32_t)c->in.rank : c->perm[d];
        s.dims[d] = c->in.dims[p];
    }
    return s;
}

static void test_permute(void) {
    perm_ctx cases[] = {
        {LMNN_SHAPE(7), {0}},
        {LMNN_SHAPE(1), {-1}},
        {LMNN_SHAPE(33, 70), {1, 0}},
        {LMNN_SHAPE(2, 3, 40, 50), {1, 0, 2, 3}},      /* tiles moved */
        {LMNN_SHAPE(2, 3, 40, 50), {0, 1, 3, 2}},      /* tiles transposed */
        {LMNN_SHAPE(2, 3, 40, 50), {2, 0, 3, 1}},      /* general */
        {LMNN_SHAPE(2, 5, 3, 8), {0, 2, 1, 3}},        /* last dim kept */
        {LMNN_SHAPE(3, 4, 5), {-1, 0, 1}},             /* last dim moved, negative dims */
        {LMNN_SHAPE(2, 3, 2, 33, 5), {4, 2, 0, 3, 1}}, /* rank 5 */
        {LMNN_SHAPE(2, 2, 3, 2, 35), {3, 2, 1, 0, 4}},
        {LMNN_SHAPE(2, 1, 2, 1, 2, 3, 4, 5), {7, 6, 5, 4, 3, 2, 1, 0}}, /* rank 8 */
        {LMNN_SHAPE(2, 1, 2, 1, 2, 3, 34, 5), {4, 6, 5, 0, 3, 2, 1, 7}},
        /* The output's last dim moves along an inner input dim whose later
         * dims are all 1: stride 1, yet every element its own input row. */
        {LMNN_SHAPE(2, 5, 7, 1), {0, 3, 1, 2}},
        {LMNN_SHAPE(2, 3, 1, 1), {0, 2, 3, 1}},
        {LMNN_SHAPE(1, 40, 1), {2, 0, 1}},
        /* The output's columns are the input's rows, its rows another dim
         * (an attention's keys transposed): rows kept, then tiles swapped. */
        {LMNN_SHAPE(40, 3, 33), {1, 2, 0}},
        {LMNN_SHAPE(2, 40, 3, 33), {0, 2, 3, 1}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        lmnn_shape os = permuted(&cases[i]);
        for (size_t k = 0; k < NCFG; k++)
            CHECK(check_op("permute", all_cfgs[k], &cases[i].in, &os, run_permute, perm_src,
                           &cases[i], 0, i * 17 + k));
    }
    /* transpose = permute */
    lmnn_shape s = LMNN_SHAPE(3, 40, 70);
    float *x = nn_rand_floats(3 * 40 * 70, -1, 1, 9);
    lmnn_tensor a, b, c;
    CHECK_OK(nn_upload(&s, x, LMNN_FLOAT32, LMNN_TILE, &a));
    CHECK_OK(lmnn_transpose(a, -1, 1, NULL, &b));
    int32_t p[] = {0, 2, 1};
    CHECK_OK(lmnn_permute(a, p, 3, NULL, &c));
    float *y = nn_download(b), *z = nn_download(c);
    CHECK(y && z && !memcmp(y, z, sizeof(float) * 3 * 40 * 70));
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 40; j++)
            for (int k = 0; k < 70; k++)
                CHECK(y[(i * 70 + k) * 40 + j] == x[(i * 40 + j) * 70 + k]);
    free(x);
    free(y);
    free(z);
    lmnn_tensor_free(a);
    lmnn_tensor_free(b);
    lmnn_tensor_free(c);
}

/* ---- permute of a reshape ---- */

typedef struct view_case {
    lmnn_shape in;
    perm_ctx view; /* the reshaped shape and the permute of it */
} view_case;

static int64_t view_src(const uint32_t *o, const void *ctx) {
    return perm_src(o, &((const view_case *)ctx)->view); /* flat order is the reshape's */
}

static lm_status run_view_permute(lmnn_tensor a, const void *ctx, lmnn_tensor *out) {
    const view_case *c = ctx;
    return lmnn_permute_reshaped(a, &c->view.in, c->view.perm, c->view.in.rank, NULL, out);
}

/* lmnn_permute_reshaped against the formula in every layout and dtype: a
 * transformer's heads split and moved forward (sequence first and batch
 * first), the keys' transposed form, a reshape that keeps the tiles' order
 * before a swap of tiles (two cheap steps), a row-major transpose, a
 * scalar; and the same bits as lmnn_reshape then lmnn_permute. */
static void test_permute_reshaped(void) {
    view_case cases[] = {
        {LMNN_SHAPE(6, 2, 96), {LMNN_SHAPE(6, 2, 3, 4, 8), {2, 1, 3, 0, 4}}},
        {LMNN_SHAPE(2, 40, 96), {LMNN_SHAPE(2, 40, 3, 2, 16), {2, 0, 3, 1, 4}}},
        {LMNN_SHAPE(40, 1, 64), {LMNN_SHAPE(40, 4, 16), {1, 0, 2}}},
        {LMNN_SHAPE(40, 1, 64), {LMNN_SHAPE(40, 4, 16), {1, 2, 0}}},
        {LMNN_SHAPE(2, 3, 40, 50), {LMNN_SHAPE(6, 40, 50), {0, 2, 1}}},
        {LMNN_SHAPE(5, 70), {LMNN_SHAPE(70, 5), {1, 0}}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        lmnn_shape os = permuted(&cases[i].view);
        for (size_t k = 0; k < NCFG; k++)
            CHECK(check_op("permute_reshaped", all_cfgs[k], &cases[i].in, &os, run_view_permute,
                           view_src, &cases[i], 0, i * 19 + k));
    }
    lmnn_shape s = LMNN_SHAPE(6, 2, 96), v = LMNN_SHAPE(6, 2, 3, 4, 8), scalar = {0};
    float *x = nn_rand_floats(6 * 2 * 96, -1, 1, 31);
    lmnn_tensor a, r, p1, p2, one, o;
    CHECK_OK(nn_upload(&s, x, LMNN_FLOAT32, LMNN_TILE, &a));
    int32_t perm[] = {2, 1, 3, 0, 4};
    CHECK_OK(lmnn_permute_reshaped(a, &v, perm, 5, NULL, &p1));
    CHECK_OK(lmnn_reshape(a, &v, NULL, &r));
    CHECK_OK(lmnn_permute(r, perm, 5, NULL, &p2));
    float *y1 = nn_download(p1), *y2 = nn_download(p2);
    CHECK(y1 && y2 && !memcmp(y1, y2, sizeof(float) * 6 * 2 * 96));
    lmnn_shape s1 = LMNN_SHAPE(1);
    CHECK_OK(nn_upload(&s1, x, LMNN_FLOAT32, LMNN_TILE, &one));
    CHECK_OK(lmnn_permute_reshaped(one, &scalar, NULL, 0, NULL, &o));
    lmnn_tensor_info info;
    CHECK_OK(lmnn_tensor_get_info(o, &info));
    CHECK(info.shape.rank == 0);
    /* Errors: the shape's, then the permutation's, named as the two ops do. */
    lmnn_shape bad = LMNN_SHAPE(7, 7);
    CHECK_FAILS(lmnn_permute_reshaped(a, &bad, perm, 2, NULL, &o), LM_ERR_INVALID_ARGUMENT,
                "lmnn_permute_reshaped: shape: [7, 7] cannot hold the 1152 elements of a's shape "
                "[6, 2, 96]");
    CHECK_FAILS(lmnn_permute_reshaped(a, &v, perm, 3, NULL, &o), LM_ERR_INVALID_ARGUMENT,
                "lmnn_permute_reshaped: dims: expected 5 dims (the shape's rank), given 3");
    int32_t twice[] = {2, 1, 3, 1, 4};
    CHECK_FAILS(lmnn_permute_reshaped(a, &v, twice, 5, NULL, &o), LM_ERR_INVALID_ARGUMENT,
                "lmnn_permute_reshaped: dims: dim 1 appears twice");
    CHECK_FAILS(lmnn_permute_reshaped(a, NULL, perm, 5, NULL, &o), LM_ERR_INVALID_ARGUMENT,
                "lmnn_permute_reshaped: shape is NULL");
    CHECK_FAILS(lmnn_permute_reshaped((lmnn_tensor){0}, &v, perm, 5, NULL, &o),
                LM_ERR_INVALID_HANDLE, "lmnn_permute_reshaped");
    free(x), free(y1), free(y2);
    lmnn_tensor_free(a), lmnn_tensor_free(r), lmnn_tensor_free(p1), lmnn_tensor_free(p2);
    lmnn_tensor_free(one), lmnn_tensor_free(o);
}

/* ---- permute of a reshape, to another shape ---- */

typedef struct view_to_case {
    lmnn_shape in;
    perm_ctx view;
    lmnn_shape to;
} view_to_case;

/* The output's flat position is the permuted view's. */
static int64_t view_to_src(const uint32_t *o, const void *ctx) {
    const view_to_case *c = ctx;
    int64_t st[LMNN_MAX_DIMS] = {0}, flat = 0;
    strides_of(&c->to, st);
    for (uint32_t d = 0; d < c->to.rank; d++)
        flat += o[d] * st[d];
    lmnn_shape ps = permuted(&c->view);
    uint32_t po[LMNN_MAX_DIMS];
    for (int32_t d = (int32_t)ps.rank - 1; d >= 0; d--) {
        po[d] = (uint32_t)(flat % ps.dims[d]);
        flat /= ps.dims[d];
    }
    return perm_src(po, &c->view);
}

static lm_status run_view_to(lmnn_tensor a, const void *ctx, lmnn_tensor *out) {
    const view_to_case *c = ctx;
    return lmnn_permute_reshaped_to(a, &c->view.in, c->view.perm, c->view.in.rank, &c->to, NULL,
                                    out);
}

/* lmnn_permute_reshaped_to against the formula in every layout and dtype:
 * a window partition of an NHWC image and its inverse (rows of 40 stay
 * rows), heads split and joined on two batch dims and a split whose rows
 * are two atoms (whole tiles), a result whose last dim is not the permuted
 * view's (a reshape after); the same bits as lmnn_permute_reshaped then
 * lmnn_reshape; bad `to`s. */
static void test_permute_reshaped_to(void) {
    view_to_case cases[] = {
        {LMNN_SHAPE(1, 1, 48, 40),
         {LMNN_SHAPE(2, 3, 2, 4, 40), {0, 2, 1, 3, 4}},
         LMNN_SHAPE(1, 4, 12, 40)},
        {LMNN_SHAPE(1, 4, 12, 40),
         {LMNN_SHAPE(2, 2, 3, 4, 40), {0, 2, 1, 3, 4}},
         LMNN_SHAPE(1, 1, 48, 40)},
        {LMNN_SHAPE(2, 3, 40, 64),
         {LMNN_SHAPE(6, 40, 2, 32), {0, 2, 1, 3}},
         LMNN_SHAPE(2, 3, 2, 40, 32)},
        {LMNN_SHAPE(2, 3, 2, 40, 32),
         {LMNN_SHAPE(6, 2, 40, 32), {0, 2, 1, 3}},
         LMNN_SHAPE(2, 3, 40, 64)},
        {LMNN_SHAPE(2, 6, 64),
         {LMNN_SHAPE(2, 2, 3, 2, 32), {0, 3, 1, 2, 4}},
         LMNN_SHAPE(2, 2, 6, 32)},
        {LMNN_SHAPE(6, 2, 96), {LMNN_SHAPE(6, 2, 3, 4, 8), {2, 1, 3, 0, 4}}, LMNN_SHAPE(6, 8, 24)},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        for (size_t k = 0; k < NCFG; k++)
            CHECK(check_op("permute_reshaped_to", all_cfgs[k], &cases[i].in, &cases[i].to,
                           run_view_to, view_to_src, &cases[i], 0, i * 23 + k));
    lmnn_shape s = LMNN_SHAPE(2, 3, 40, 64), v = LMNN_SHAPE(6, 40, 2, 32);
    lmnn_shape to = LMNN_SHAPE(2, 3, 2, 40, 32);
    float *x = nn_rand_floats(2 * 3 * 40 * 64, -1, 1, 37);
    lmnn_tensor a, p, r1, r2, o;
    CHECK_OK(nn_upload(&s, x, LMNN_FLOAT32, LMNN_TILE, &a));
    int32_t perm[] = {0, 2, 1, 3};
    CHECK_OK(lmnn_permute_reshaped_to(a, &v, perm, 4, &to, NULL, &r1));
    CHECK_OK(lmnn_permute_reshaped(a, &v, perm, 4, NULL, &p));
    CHECK_OK(lmnn_reshape(p, &to, NULL, &r2));
    float *y1 = nn_download(r1), *y2 = nn_download(r2);
    CHECK(y1 && y2 && !memcmp(y1, y2, sizeof(float) * 2 * 3 * 40 * 64));
    /* NULL `to`: lmnn_permute_reshaped. */
    CHECK_OK(lmnn_permute_reshaped_to(a, &v, perm, 4, NULL, NULL, &o));
    lmnn_tensor_info info;
    CHECK_OK(lmnn_tensor_get_info(o, &info));
    CHECK(info.shape.rank == 4 && info.shape.dims[1] == 2 && info.shape.dims[2] == 40);
    lmnn_tensor_free(o);
    lmnn_shape short_to = LMNN_SHAPE(6, 40, 63), deep = {LMNN_MAX_DIMS + 1, {0}};
    CHECK_FAILS(lmnn_permute_reshaped_to(a, &v, perm, 4, &short_to, NULL, &o),
                LM_ERR_INVALID_ARGUMENT,
                "lmnn_permute_reshaped_to: to: [6, 40, 63] does not hold the 15360 elements of "
                "a's shape [2, 3, 40, 64]");
    CHECK_FAILS(lmnn_permute_reshaped_to(a, &v, perm, 4, &deep, NULL, &o), LM_ERR_INVALID_ARGUMENT,
                "lmnn_permute_reshaped_to: to: rank 9 is more than 8");
    CHECK_FAILS(lmnn_permute_reshaped_to(a, &v, perm, 3, &to, NULL, &o), LM_ERR_INVALID_ARGUMENT,
                "lmnn_permute_reshaped_to: dims: expected 4 dims (the shape's rank), given 3");
    free(x), free(y1), free(y2);
    lmnn_tensor_free(a), lmnn_tensor_free(p), lmnn_tensor_free(r1), lmnn_tensor_free(r2);
}

/* Output rows made of two or three dims of the permuted view (a BLOCK
 * map): NHWC images' depth-to-space as image rows (DCR, two dims; CRD,
 * three, the inner one strided) and as NCHW (CRD), each input row staged
 * once for the output rows that read it; DCR with one output channel, as a
 * super-resolution network's last layer makes it, from a page per pixel
 * (each row's window staged, across pages); windows past the stage limit
 * read as runs of 64 (float32; two dims and three) next to the same
 * staged (bfloat16), dims that merge across a dim of 1, and rows of 20001
 * 4-byte elements, whose second chunk starts inside a run; every dtype
 * and layout against the formula. Each runs as one data_rows pass on
 * row-major tensors. */
static void test_permute_blocks(void) {
    view_to_case cases[] = {
        {LMNN_SHAPE(10, 126),
         {LMNN_SHAPE(2, 5, 7, 3, 3, 2), {0, 1, 3, 2, 4, 5}},
         LMNN_SHAPE(30, 42)},
        {LMNN_SHAPE(10, 126),
         {LMNN_SHAPE(2, 5, 7, 2, 3, 3), {0, 3, 1, 4, 2, 5}},
         LMNN_SHAPE(2, 2, 15, 21)},
        {LMNN_SHAPE(10, 126),
         {LMNN_SHAPE(2, 5, 7, 2, 3, 3), {0, 1, 4, 2, 5, 3}},
         LMNN_SHAPE(30, 42)},
        {LMNN_SHAPE(2, 76800), {LMNN_SHAPE(2, 40, 30, 64), {0, 2, 1, 3}}, LMNN_SHAPE(2, 76800)},
        {LMNN_SHAPE(24, 9),
         {LMNN_SHAPE(1, 4, 6, 3, 3, 1), {0, 5, 1, 3, 2, 4}},
         LMNN_SHAPE(1, 1, 12, 18)},
        {LMNN_SHAPE(2, 80, 1024),
         {LMNN_SHAPE(2, 80, 16, 64), {0, 2, 1, 3}},
         LMNN_SHAPE(2, 16, 5120)},
        {LMNN_SHAPE(3, 40, 12), {LMNN_SHAPE(3, 40, 1, 3, 4), {0, 4, 1, 2, 3}}, LMNN_SHAPE(3, 480)},
        {LMNN_SHAPE(2, 60003),
         {LMNN_SHAPE(1, 2, 6667, 3, 3), {0, 1, 3, 2, 4}},
         LMNN_SHAPE(6, 20001)},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        for (size_t k = 0; k < NCFG; k++)
            CHECK(check_op("permute_blocks", all_cfgs[k], &cases[i].in, &cases[i].to, run_view_to,
                           view_to_src, &cases[i], 0, i * 29 + k));
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        cfg rm = {LMNN_FLOAT32, LMNN_ROW_MAJOR};
        size_t count = lmnn_shape_volume(&cases[i].in);
        void *x = make_data(rm.dtype, count, 41 + i);
        lmnn_tensor a = {0}, o = {0};
        CHECK_OK(up(&cases[i].in, rm, x, &a));
        CHECK_OK(lm_device_set_profiling(nn_dev(), true));
        CHECK_OK(run_view_to(a, &cases[i], &o));
        lm_profile_program_entry *e;
        size_t n;
        CHECK_OK(lm_finish(lm_device_command_queue(nn_dev(), 0)));
        CHECK_OK(lm_device_get_program_profile(nn_dev(), &e, &n));
        CHECK(n == 1 && e[0].launches == 1 && !strcmp(e[0].program, "data_rows.c"));
        lm_profile_program_free(e);
        CHECK_OK(lm_device_set_profiling(nn_dev(), false));
        free(x);
        lmnn_tensor_free(a), lmnn_tensor_free(o);
    }
}

/* ---- slice ---- */

typedef struct slice_ctx {
    lmnn_shape in, out;
    int32_t b[LMNN_MAX_DIMS], e[LMNN_MAX_DIMS], s[LMNN_MAX_DIMS];
} slice_ctx;

static void slice_shape(slice_ctx *c) {
    c->out = c->in;
    for (uint32_t d = 0; d < c->in.rank; d++) {
        int32_t n = (int32_t)c->in.dims[d], b = c->b[d] < 0 ? c->b[d] + n : c->b[d];
        int32_t e = c->e[d] < 0 ? c->e[d] + n : c->e[d], k = c->s[d] ? c->s[d] : 1;
        c->out.dims[d] = (uint32_t)((e - b + k - 1) / k);
    }
}

static int64_t slice_src(const uint32_t *o, const void *ctx) {
    const slice_ctx *c = ctx;
    int64_t st[LMNN_MAX_DIMS] = {0}, k = 0;
    strides_of(&c->in, st);
    for (uint32_t d = 0; d < c->in.rank; d++) {
        int32_t n = (int32_t)c->in.dims[d], b = c->b[d] < 0 ? c->b[d] + n : c->b[d];
        k += (b + (int64_t)(c->s[d] ? c->s[d] : 1) * o[d]) * st[d];
    }
    return k;
}

static lm_status run_slice(lmnn_tensor a, const void *ctx, lmnn_tensor *out) {
    const slice_ctx *c = ctx;
    return lmnn_slice(a, c->b, c->e, c->s, c->in.rank, NULL, out);
}

static void test_slice(void) {
    slice_ctx cases[] = {
        {LMNN_SHAPE(10), {0}, {2}, {9}, {3}},
        {LMNN_SHAPE(1), {0}, {0}, {1}, {1}},
        {LMNN_SHAPE(50, 70), {0}, {3, -60}, {-2, 70}, {2, 1}},
        {LMNN_SHAPE(3, 64, 96), {0}, {1, 32, 32}, {3, 64, 90}, {1, 1, 1}}, /* whole tiles */
        {LMNN_SHAPE(3, 64, 96), {0}, {0, 32, 0}, {3, 40, 96}, {2, 1, 1}},  /* tiles, batch step */
        {LMNN_SHAPE(2, 3, 40, 50), {0}, {-1, 0, 5, 1}, {2, 3, 39, 50}, {1, 2, 3, 7}},
        {LMNN_SHAPE(2, 2, 2, 2, 33), {0}, {1, 0, 1, 0, 31}, {2, 2, 2, 2, 33}, {1, 1, 1, 1, 1}},
        /* Whole tiles ending on a tile or at the input's end: copied as
         * they are, their padding the input's. */
        {LMNN_SHAPE(40, 1, 96), {0}, {0, 0, 32}, {40, 1, 64}, {1, 1, 1}},
        {LMNN_SHAPE(2, 40, 70), {0}, {0, 0, 32}, {2, 40, 70}, {1, 1, 1}},
        /* Windows of the last two dims: read as runs (tile_reshape_reader.c)
         * where they do not start on tiles (a rotary embedding's second
         * half, a ViT's thirds, windows crossing tile and face boundaries
         * both ways), as whole tiles where they do (the first half). */
        {LMNN_SHAPE(2, 2, 1, 8), {0}, {0, 0, 0, 4}, {2, 2, 1, 8}, {1, 1, 1, 1}},
        {LMNN_SHAPE(2, 2, 1, 8), {0}, {0, 0, 0, 0}, {2, 2, 1, 4}, {1, 1, 1, 1}},
        {LMNN_SHAPE(3, 40, 50), {0}, {0, 5, 7}, {3, 37, 45}, {1, 1, 1}},
        {LMNN_SHAPE(70, 33), {0}, {3, 17}, {70, 33}, {1, 1}},
        {LMNN_SHAPE(2, 197, 64), {0}, {0, 0, 0}, {2, 1, 64}, {1, 1, 1}},
        {LMNN_SHAPE(2, 197, 64), {0}, {0, 1, 0}, {2, 197, 64}, {1, 1, 1}},
        {LMNN_SHAPE(4, 16, 16, 8), {0}, {0, 0, 0, 0}, {4, 16, 16, 4}, {1, 1, 1, 1}},
        {LMNN_SHAPE(2, 17, 72), {0}, {0, 0, 24}, {2, 17, 48}, {1, 1, 1}},
        {LMNN_SHAPE(24, 3), {0}, {0, 2}, {24, 3}, {1, 1}},
        {LMNN_SHAPE(2, 8, 8, 8), {0}, {0, 0, 6, 0}, {2, 8, 8, 8}, {1, 1, 1, 1}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        slice_shape(&cases[i]);
        for (size_t k = 0; k < NCFG; k++)
            CHECK(check_op("slice", all_cfgs[k], &cases[i].in, &cases[i].out, run_slice, slice_src,
                           &cases[i], 0, i * 13 + k));
    }
    /* Such a window is one launch. */
    lmnn_shape s = LMNN_SHAPE(2, 2, 1, 8);
    float *v = make_data(LMNN_FLOAT32, 32, 3);
    lmnn_tensor a, b;
    CHECK_OK(nn_upload(&s, v, LMNN_FLOAT32, LMNN_TILE, &a));
    CHECK_OK(lm_device_set_profiling(nn_dev(), true));
    CHECK_OK(lmnn_slice(a, (const int32_t[]){0, 0, 0, 4}, (const int32_t[]){2, 2, 1, 8}, NULL, 4,
                        NULL, &b));
    check_launched_once("tile_reshape_reader.c + tile_writer.c");
    /* Another window of the same shapes: its own, not the first one's
     * program again (the window is part of the program's key). */
    float *y = nn_download(b);
    lmnn_tensor_free(b);
    CHECK_OK(lmnn_slice(a, (const int32_t[]){0, 0, 0, 2}, (const int32_t[]){2, 2, 1, 6}, NULL, 4,
                        NULL, &b));
    float *y2 = nn_download(b);
    for (int i = 0; y && y2 && i < 16; i++)
        CHECK(y[i] == v[i / 4 * 8 + 4 + i % 4] && y2[i] == v[i / 4 * 8 + 2 + i % 4]);
    CHECK(y && y2);
    free(y);
    free(y2);
    free(v);
    lmnn_tensor_free(a);
    lmnn_tensor_free(b);
}

/* ---- pad ---- */

typedef struct pad_ctx {
    lmnn_shape in;
    uint32_t pads[2 * LMNN_MAX_DIMS];
    lmnn_pad_mode mode;
    double value;
} pad_ctx;

static lmnn_shape pad_shape(const pad_ctx *c) {
    lmnn_shape s = c->in;
    for (uint32_t d = 0; d < s.rank; d++)
        s.dims[d] += c->pads[2 * d] + c->pads[2 * d + 1];
    return s;
}

static int64_t pad_src(const uint32_t *o, const void *ctx) {
    const pad_ctx *c = ctx;
    int64_t st[LMNN_MAX_DIMS] = {0}, k = 0;
    strides_of(&c->in, st);
    for (uint32_t d = 0; d < c->in.rank; d++) {
        int64_t n = c->in.dims[d], t = (int64_t)o[d] - c->pads[2 * d];
        switch (c->mode) {
        case LMNN_PAD_CONSTANT:
            if (t < 0 || t >= n) return -1;
            break;
        case LMNN_PAD_REFLECT:
            if (t < 0) t = -t;
            if (t >= n) t = 2 * (n - 1) - t;
            break;
        case LMNN_PAD_REPLICATE:
            t = t < 0 ? 0 : t >= n ? n - 1 : t;
            break;
        default:
            t = ((t % n) + n) % n;
            break;
        }
        k += t * st[d];
    }
    return k;
}

static lm_status run_pad(lmnn_tensor a, const void *ctx, lmnn_tensor *out) {
    const pad_ctx *c = ctx;
    lmnn_pad_options o;
    lmnn_pad_options_init(&o);
    o.mode = c->mode;
    o.value = c->value;
    return lmnn_pad(a, c->pads, c->in.rank, &o, out);
}

static void test_pad(void) {
    pad_ctx cases[] = {
        {LMNN_SHAPE(5), {2, 3}, LMNN_PAD_CONSTANT, 7},
        {LMNN_SHAPE(1), {0, 4}, LMNN_PAD_CONSTANT, -2},
        {LMNN_SHAPE(30, 40), {1, 2, 3, 4}, LMNN_PAD_CONSTANT, 0},
        {LMNN_SHAPE(2, 30, 40), {0, 1, 2, 0, 0, 30}, LMNN_PAD_CONSTANT, 3},
        {LMNN_SHAPE(3, 10, 12), {1, 2, 3, 4, 5, 11}, LMNN_PAD_REFLECT, 0},
        {LMNN_SHAPE(2, 3, 9, 33), {0, 0, 1, 1, 2, 3, 32, 1}, LMNN_PAD_REPLICATE, 0},
        {LMNN_SHAPE(4, 35), {4, 3, 35, 20}, LMNN_PAD_CIRCULAR, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        lmnn_shape os = pad_shape(&cases[i]);
        for (size_t k = 0; k < NCFG; k++)
            CHECK(check_op("pad", all_cfgs[k], &cases[i].in, &os, run_pad, pad_src, &cases[i],
                           cases[i].value, i * 7 + k));
    }
}

/* ---- repeat and expand ---- */

typedef struct grow_ctx {
    lmnn_shape in, out;
    uint32_t reps[LMNN_MAX_DIMS];
    uint32_t count;
    bool expand;
} grow_ctx;

static int64_t grow_src(const uint32_t *o, const void *ctx) {
    const grow_ctx *c = ctx;
    int64_t st[LMNN_MAX_DIMS] = {0}, k = 0;
    strides_of(&c->in, st);
    uint32_t lead = c->out.rank - c->in.rank;
    for (uint32_t d = 0; d < c->in.rank; d++)
        k += (o[d + lead] % c->in.dims[d]) * st[d];
    return k;
}

static lm_status run_grow(lmnn_tensor a, const void *ctx, lmnn_tensor *out) {
    const grow_ctx *c = ctx;
    return c->expand ? lmnn_expand(a, &c->out, NULL, out)
                     : lmnn_repeat(a, c->reps, c->count, NULL, out);
}

static void test_repeat_expand(void) {
    grow_ctx cases[] = {
        {LMNN_SHAPE(5), {0}, {3}, 1, false},
        {LMNN_SHAPE(1), {0}, {2, 3}, 2, false},
        {LMNN_SHAPE(3, 7), {0}, {2, 1, 5}, 3, false},
        {LMNN_SHAPE(2, 32, 64), {0}, {2, 3, 2}, 3, false}, /* whole tiles */
        {LMNN_SHAPE(2, 33, 20), {0}, {1, 2, 3}, 3, false},
        {LMNN_SHAPE(1, 5), {0}, {0}, 0, true},
        {LMNN_SHAPE(3, 1), {0}, {0}, 0, true},
        {LMNN_SHAPE(2, 1, 40, 50), {0}, {0}, 0, true},
        {LMNN_SHAPE(1, 1), {0}, {0}, 0, true},
    };
    lmnn_shape exp_to[] = {LMNN_SHAPE(4, 5), LMNN_SHAPE(2, 3, 6), LMNN_SHAPE(2, 2, 3, 40, 50),
                           LMNN_SHAPE(3, 33, 1)};
    for (size_t i = 0, e = 0; i < sizeof cases / sizeof *cases; i++) {
        grow_ctx *c = &cases[i];
        if (c->expand) {
            c->out = exp_to[e++];
        } else {
            c->out.rank = c->count;
            uint32_t lead = c->count - c->in.rank;
            for (uint32_t d = 0; d < c->count; d++)
                c->out.dims[d] = (d < lead ? 1 : c->in.dims[d - lead]) * c->reps[d];
        }
        for (size_t k = 0; k < NCFG; k++)
            CHECK(check_op(c->expand ? "expand" : "repeat", all_cfgs[k], &c->in, &c->out, run_grow,
                           grow_src, c, 0, i * 5 + k));
    }
}

/* ---- concat, split, chunk ---- */

/* Checks that the programs run since lm_device_set_profiling(true) were all
 * `kernel`'s (and one at least); the profile stopped. */
static void check_ran_only(const char *what, const char *kernel) {
    lm_profile_program_entry *e;
    size_t n;
    CHECK_OK(lm_finish(lm_device_command_queue(nn_dev(), 0)));
    CHECK_OK(lm_device_get_program_profile(nn_dev(), &e, &n));
    bool only = n > 0;
    for (size_t i = 0; i < n; i++)
        if (!strstr(e[i].program, kernel)) {
            printf("  %s: ran %s\n", what, e[i].program);
            only = false;
        }
    lm_profile_program_free(e);
    CHECK_OK(lm_device_set_profiling(nn_dev(), false));
    CHECK(only);
}

/* Concatenations along the last dim of tile tensors whose widths do not
 * fill whole tiles (NHWC images' channels), or with `rows` along the
 * second-last whose heights do not (a key/value cache grown by a token):
 * each output tile assembled from the column or row runs of the inputs
 * (kernels/concat_runs.c) -- runs crossing a face or
 * a tile of either side, many inputs, partial tiles, batches of matrices
 * -- in every dtype of 2 or 4 bytes; against the host, padding zero, and
 * the program that ran. Each case's `fixed` is the other dim's size. */
static void check_concat_runs(bool rows) {
    static const struct {
        uint32_t fixed, batch, n, extents[5];
    } cases[] = {
        {73, 1, 2, {8, 8}},        {40, 3, 3, {5, 40, 17}}, {32, 1, 2, {16, 16}},
        {5, 2, 4, {1, 31, 33, 1}}, {64, 1, 2, {24, 20}},    {33, 1, 5, {3, 7, 11, 13, 2}},
        {2, 4, 2, {48, 9}},
    };
    static const lmnn_dtype dtypes[] = {LMNN_FLOAT32, LMNN_BFLOAT16, LMNN_INT32, LMNN_UINT32};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        for (size_t k = 0; k < sizeof dtypes / sizeof *dtypes; k++) {
            cfg cf = {dtypes[k], LMNN_TILE};
            char what[128];
            snprintf(what, sizeof what, "concat %s case %zu (%s)", rows ? "rows" : "columns", i,
                     lmnn_dtype_name(cf.dtype));
            /* The result is `outer` blocks, each the inputs' blocks of
             * extent x inner elements one after the other. */
            size_t es = hsize(cf.dtype), inner = rows ? cases[i].fixed : 1;
            size_t outer = rows ? cases[i].batch : (size_t)cases[i].batch * cases[i].fixed;
            uint32_t total = 0;
            void *x[5];
            lmnn_tensor t[5], o;
            for (uint32_t j = 0; j < cases[i].n; j++) {
                uint32_t e = cases[i].extents[j];
                lmnn_shape sh = rows ? LMNN_SHAPE(cases[i].batch, e, cases[i].fixed)
                                     : LMNN_SHAPE(cases[i].batch, cases[i].fixed, e);
                x[j] = make_data(cf.dtype, lmnn_shape_volume(&sh), i * 7 + j + k * 100);
                CHECK_OK(up(&sh, cf, x[j], &t[j]));
                total += e;
            }
            CHECK_OK(lm_device_set_profiling(nn_dev(), true));
            CHECK_OK(lmnn_concat(t, cases[i].n, rows ? -2 : -1, NULL, &o));
            check_ran_only(what, "concat_runs.c");
            uint8_t *want = malloc(outer * total * inner * es), *w = want;
            for (size_t q = 0; q < outer; q++)
                for (uint32_t j = 0; j < cases[i].n; j++) {
                    size_t len = cases[i].extents[j] * inner * es;
                    memcpy(w, (uint8_t *)x[j] + q * len, len);
                    w += len;
                }
            void *got = down(o);
            CHECK(same(got, want, outer * total * inner, es, what));
            CHECK(padding_is_zero(o));
            free(got);
            free(want);
            lmnn_tensor_free(o);
            for (uint32_t j = 0; j < cases[i].n; j++) {
                lmnn_tensor_free(t[j]);
                free(x[j]);
            }
        }
}

static void test_concat_columns(void) {
    check_concat_runs(false);
}

static void test_concat_rows(void) {
    check_concat_runs(true);
}

static void test_concat_split(void) {
    struct {
        lmnn_shape a, b, c;
        int32_t dim;
    } cases[] = {
        {LMNN_SHAPE(3), LMNN_SHAPE(1), LMNN_SHAPE(4), 0},
        {LMNN_SHAPE(2, 33, 20), LMNN_SHAPE(2, 5, 20), LMNN_SHAPE(2, 1, 20), 1},
        {LMNN_SHAPE(2, 64, 20), LMNN_SHAPE(2, 32, 20), LMNN_SHAPE(2, 7, 20), -2}, /* whole tiles */
        {LMNN_SHAPE(3, 10, 33), LMNN_SHAPE(3, 10, 2), LMNN_SHAPE(3, 10, 40), -1},
        {LMNN_SHAPE(1, 10, 32), LMNN_SHAPE(2, 10, 32), LMNN_SHAPE(3, 10, 32), 0}, /* batch */
        {LMNN_SHAPE(2, 2, 3, 9, 40), LMNN_SHAPE(2, 2, 1, 9, 40), LMNN_SHAPE(2, 2, 2, 9, 40), 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        for (size_t k = 0; k < NCFG; k++) {
            cfg cf = all_cfgs[k];
            char what[128], cb[64];
            snprintf(what, sizeof what, "concat case %zu (%s)", i, cfg_name(cf, cb));
            const lmnn_shape *sh[3] = {&cases[i].a, &cases[i].b, &cases[i].c};
            uint32_t r = sh[0]->rank,
                     d = (uint32_t)(cases[i].dim < 0 ? cases[i].dim + (int32_t)r : cases[i].dim);
            size_t es = hsize(cf.dtype);
            void *x[3];
            lmnn_tensor t[3], o, parts[3];
            for (int j = 0; j < 3; j++) {
                x[j] = make_data(cf.dtype, lmnn_shape_volume(sh[j]), i * 3 + j + k * 100);
                CHECK_OK(up(sh[j], cf, x[j], &t[j]));
            }
            CHECK_OK(lmnn_concat(t, 3, cases[i].dim, NULL, &o));
            lmnn_shape os = *sh[0];
            os.dims[d] = sh[0]->dims[d] + sh[1]->dims[d] + sh[2]->dims[d];
            /* reference: outer x (piece rows) */
            size_t outer = 1, inner = 1;
            for (uint32_t q = 0; q < d; q++)
                outer *= os.dims[q];
            for (uint32_t q = d + 1; q < r; q++)
                inner *= os.dims[q];
            uint8_t *want = malloc(lmnn_shape_volume(&os) * es), *w = want;
            for (size_t q = 0; q < outer; q++)
                for (int j = 0; j < 3; j++) {
                    size_t len = sh[j]->dims[d] * inner * es;
                    memcpy(w, (uint8_t *)x[j] + q * len, len);
                    w += len;
                }
            void *got = down(o);
            CHECK(same(got, want, lmnn_shape_volume(&os), es, what));
            CHECK(padding_is_zero(o));
            free(got);
            /* split it back */
            uint32_t sizes[3] = {sh[0]->dims[d], sh[1]->dims[d], sh[2]->dims[d]};
            CHECK_OK(lmnn_split(o, sizes, 3, cases[i].dim, NULL, parts));
            for (int j = 0; j < 3; j++) {
                got = down(parts[j]);
                CHECK(same(got, x[j], lmnn_shape_volume(sh[j]), es, what));
                CHECK(padding_is_zero(parts[j]));
                free(got);
                lmnn_tensor_free(parts[j]);
                lmnn_tensor_free(t[j]);
                free(x[j]);
            }
            free(want);
            lmnn_tensor_free(o);
        }
    /* More tile tensors than one concatenation through row-major takes
     * (pieces of 1 along a tiled dim): concatenated a group at a time. */
    {
        enum { PIECES = 150 };
        lmnn_shape ps = LMNN_SHAPE(2, 3, 1);
        lmnn_tensor pieces[PIECES], o;
        float x[6];
        for (int i = 0; i < PIECES; i++) {
            for (int j = 0; j < 6; j++)
                x[j] = (float)(i * 6 + j);
            CHECK_OK(nn_upload(&ps, x, LMNN_FLOAT32, LMNN_TILE, &pieces[i]));
        }
        CHECK_OK(lmnn_concat(pieces, PIECES, 2, NULL, &o));
        lmnn_tensor_info info;
        CHECK_OK(lmnn_tensor_get_info(o, &info));
        CHECK_EQ_U64(info.shape.dims[2], PIECES);
        float *y = nn_download(o);
        bool ok = true;
        for (int r = 0; r < 6; r++)
            for (int i = 0; i < PIECES; i++)
                ok &= y[r * PIECES + i] == (float)(i * 6 + r);
        CHECK(ok);
        free(y);
        CHECK(padding_is_zero(o));
        lmnn_tensor_free(o);
        for (int i = 0; i < PIECES; i++)
            lmnn_tensor_free(pieces[i]);
    }
    /* chunk: PyTorch's sizes */
    lmnn_shape s = LMNN_SHAPE(2, 10);
    float x[20];
    for (int i = 0; i < 20; i++)
        x[i] = (float)i;
    lmnn_tensor a, outs[6]; /* room for the 6 chunks asked for below */
    uint32_t n = 0;
    CHECK_OK(nn_upload(&s, x, LMNN_FLOAT32, LMNN_ROW_MAJOR, &a));
    CHECK_OK(lmnn_chunk(a, 4, 1, NULL, outs, &n));
    CHECK_EQ_U64(n, 4); /* 3, 3, 3, 1 */
    uint32_t widths[] = {3, 3, 3, 1};
    for (uint32_t i = 0, col = 0; i < n; col += widths[i], i++) {
        lmnn_tensor_info info;
        CHECK_OK(lmnn_tensor_get_info(outs[i], &info));
        CHECK_EQ_U64(info.shape.dims[1], widths[i]);
        float *y = nn_download(outs[i]);
        for (uint32_t r = 0; r < 2; r++)
            for (uint32_t c = 0; c < widths[i]; c++)
                CHECK(y[r * widths[i] + c] == x[r * 10 + col + c]);
        free(y);
        lmnn_tensor_free(outs[i]);
    }
    CHECK_OK(lmnn_chunk(a, 6, 1, NULL, outs, &n)); /* 2 x 5 */
    CHECK_EQ_U64(n, 5);
    for (uint32_t i = 0; i < n; i++)
        lmnn_tensor_free(outs[i]);
    lmnn_tensor_free(a);
}

/* ---- index_select, gather, embedding ---- */

static lmnn_tensor upload_index(const lmnn_shape *s, const uint32_t *v, lmnn_dtype dt) {
    lmnn_tensor_options o;
    lmnn_tensor_options_init(&o);
    o.dtype = dt;
    o.layout = LMNN_ROW_MAJOR;
    lmnn_tensor t = {0};
    if (lmnn_from_host(nn_dev(), s, v, lmnn_shape_volume(s) * 4, &o, &t))
        printf("    index upload: %s\n", lm_last_error());
    return t;
}

static uint32_t read_count(lmnn_tensor t) {
    uint32_t n = 0xdeadbeef;
    if (lmnn_to_host(t, &n, 4)) printf("    count: %s\n", lm_last_error());
    return n;
}

typedef struct index_ctx {
    lmnn_shape in, idx_shape;
    int32_t dim;
    const uint32_t *idx;
    lmnn_tensor index;
    int gather; /* 0 index_select, 1 gather */
} index_ctx;

static uint32_t ndim_of(const index_ctx *c) {
    return (uint32_t)(c->dim < 0 ? c->dim + (int32_t)c->in.rank : c->dim);
}

static int64_t select_src(const uint32_t *o, const void *ctx) {
    const index_ctx *c = ctx;
    int64_t st[LMNN_MAX_DIMS], k = 0;
    strides_of(&c->in, st);
    uint32_t dim = ndim_of(c);
    for (uint32_t d = 0; d < c->in.rank; d++) {
        uint32_t v = o[d];
        if (d == dim) {
            if (c->gather) {
                int64_t so[LMNN_MAX_DIMS], f = 0;
                strides_of(&c->idx_shape, so);
                for (uint32_t q = 0; q < c->in.rank; q++)
                    f += o[q] * so[q];
                v = c->idx[f];
            } else {
                v = c->idx[o[d]];
            }
            if (v >= c->in.dims[d]) return -1;
        }
        k += v * st[d];
    }
    return k;
}

static lm_status run_index(lmnn_tensor a, const void *ctx, lmnn_tensor *out) {
    const index_ctx *c = ctx;
    return c->gather ? lmnn_gather(a, c->dim, c->index, NULL, out)
                     : lmnn_index_select(a, c->dim, c->index, NULL, out);
}

static void test_index_select_gather(void) {
    struct {
        lmnn_shape in;
        int32_t dim;
        uint32_t len;
    } sel[] = {
        {LMNN_SHAPE(5), 0, 3},
        {LMNN_SHAPE(1), -1, 4},
        {LMNN_SHAPE(7, 40), 0, 9},
        {LMNN_SHAPE(7, 40), -1, 50},
        {LMNN_SHAPE(2, 6, 33, 40), 1, 4}, /* tile batch dim */
        {LMNN_SHAPE(2, 6, 33, 40), 2, 5},
        {LMNN_SHAPE(2, 3, 4, 5, 6), 3, 7},
    };
    for (size_t i = 0; i < sizeof sel / sizeof *sel; i++) {
        uint32_t n =
            sel[i].in.dims[sel[i].dim < 0 ? sel[i].dim + (int32_t)sel[i].in.rank : sel[i].dim];
        uint32_t idx[64];
        uint64_t seed = i + 1;
        for (uint32_t k = 0; k < sel[i].len; k++)
            idx[k] = nn_rand_u32(&seed) % n;
        lmnn_shape is = LMNN_SHAPE(sel[i].len);
        index_ctx c = {sel[i].in, is, sel[i].dim, idx, {0}, 0};
        c.index = upload_index(&is, idx, i % 2 ? LMNN_INT32 : LMNN_UINT32);
        lmnn_shape os = sel[i].in;
        os.dims[ndim_of(&c)] = sel[i].len;
        for (size_t k = 0; k < NCFG; k++)
            CHECK(check_op("index_select", all_cfgs[k], &sel[i].in, &os, run_index, select_src, &c,
                           0, i * 11 + k));
        lmnn_tensor_free(c.index);
    }
    struct {
        lmnn_shape in, idx;
        int32_t dim;
    } gat[] = {
        {LMNN_SHAPE(6, 40), LMNN_SHAPE(4, 30), 0},
        {LMNN_SHAPE(6, 40), LMNN_SHAPE(4, 70), 1},
        {LMNN_SHAPE(3, 5, 33), LMNN_SHAPE(3, 4, 20), -1},
        {LMNN_SHAPE(3, 5, 33), LMNN_SHAPE(2, 9, 20), 1},
        {LMNN_SHAPE(1), LMNN_SHAPE(3), 0},
    };
    for (size_t i = 0; i < sizeof gat / sizeof *gat; i++) {
        uint32_t d = (uint32_t)(gat[i].dim < 0 ? gat[i].dim + (int32_t)gat[i].in.rank : gat[i].dim);
        size_t m = lmnn_shape_volume(&gat[i].idx);
        uint32_t *idx = malloc(m * 4);
        uint64_t seed = i + 100;
        for (size_t k = 0; k < m; k++)
            idx[k] = nn_rand_u32(&seed) % gat[i].in.dims[d];
        index_ctx c = {gat[i].in, gat[i].idx, gat[i].dim, idx, {0}, 1};
        c.index = upload_index(&gat[i].idx, idx, i % 2 ? LMNN_INT32 : LMNN_UINT32);
        for (size_t k = 0; k < NCFG; k++)
            CHECK(check_op("gather", all_cfgs[k], &gat[i].in, &gat[i].idx, run_index, select_src,
                           &c, 0, i * 19 + k));
        lmnn_tensor_free(c.index);
        free(idx);
    }
}

/* Out-of-range indices give zeros, counted on the device. */
static void test_index_out_of_range(void) {
    lmnn_shape s = LMNN_SHAPE(4, 6);
    float x[24];
    for (int i = 0; i < 24; i++)
        x[i] = (float)(i + 1);
    int32_t bad[] = {2, -1, 4, 0, 1000000};
    lmnn_shape is = LMNN_SHAPE(5);
    lmnn_tensor idx = upload_index(&is, (const uint32_t *)bad, LMNN_INT32);
    for (int layout = LMNN_ROW_MAJOR; layout <= LMNN_TILE; layout++) {
        lmnn_tensor a, o, count;
        CHECK_OK(nn_upload(&s, x, LMNN_FLOAT32, (lmnn_layout)layout, &a));
        lmnn_index_options opts;
        lmnn_index_options_init(&opts);
        opts.out_invalid_count = &count;
        /* rows */
        CHECK_OK(lmnn_index_select(a, 0, idx, &opts, &o));
        float *y = nn_download(o);
        for (int r = 0; r < 5; r++)
            for (int k = 0; k < 6; k++)
                CHECK(y[r * 6 + k] == (bad[r] >= 0 && bad[r] < 4 ? x[bad[r] * 6 + k] : 0.0f));
        CHECK_EQ_U64(read_count(count), 3 * 6);
        CHECK(padding_is_zero(o));
        free(y);
        lmnn_tensor_free(o);
        lmnn_tensor_free(count);
        /* elements */
        CHECK_OK(lmnn_index_select(a, 1, idx, &opts, &o));
        y = nn_download(o);
        for (int r = 0; r < 4; r++)
            for (int k = 0; k < 5; k++)
                CHECK(y[r * 5 + k] == (bad[k] >= 0 && bad[k] < 6 ? x[r * 6 + bad[k]] : 0.0f));
        CHECK_EQ_U64(read_count(count), 2 * 4);
        free(y);
        lmnn_tensor_free(o);
        lmnn_tensor_free(count);
        /* gather along both dims */
        int32_t gi[2 * 3] = {3, -5, 1, 9, 0, 2};
        lmnn_shape gs = LMNN_SHAPE(2, 3);
        lmnn_tensor gidx = upload_index(&gs, (const uint32_t *)gi, LMNN_INT32);
        for (int d = 0; d < 2; d++) {
            CHECK_OK(lmnn_gather(a, d, gidx, &opts, &o));
            y = nn_download(o);
            int nbad = 0;
            for (int r = 0; r < 2; r++)
                for (int k = 0; k < 3; k++) {
                    int32_t v = gi[r * 3 + k];
                    int ok = v >= 0 && v < (d ? 6 : 4);
                    nbad += !ok;
                    float want = !ok ? 0.0f : d ? x[r * 6 + v] : x[v * 6 + k];
                    CHECK(y[r * 3 + k] == want);
                }
            CHECK_EQ_U64(read_count(count), nbad);
            free(y);
            lmnn_tensor_free(o);
            lmnn_tensor_free(count);
        }
        lmnn_tensor_free(gidx);
        lmnn_tensor_free(a);
    }
    lmnn_tensor_free(idx);
    /* a batch dim of a tile tensor (whole tiles): the count is of elements */
    lmnn_shape s3 = LMNN_SHAPE(3, 40, 33);
    float *x3 = nn_rand_floats(3 * 40 * 33, -1, 1, 6);
    uint32_t sel[] = {2, 3, 0, 7};
    lmnn_shape ss = LMNN_SHAPE(4);
    lmnn_tensor sidx = upload_index(&ss, sel, LMNN_UINT32), a3, o3, c3;
    CHECK_OK(nn_upload(&s3, x3, LMNN_FLOAT32, LMNN_TILE, &a3));
    lmnn_index_options opts;
    lmnn_index_options_init(&opts);
    opts.out_invalid_count = &c3;
    CHECK_OK(lmnn_index_select(a3, 0, sidx, &opts, &o3));
    float *y3 = nn_download(o3);
    for (int m = 0; m < 4; m++)
        for (int k = 0; k < 40 * 33; k++)
            CHECK(y3[m * 1320 + k] == (sel[m] < 3 ? x3[sel[m] * 1320 + k] : 0.0f));
    CHECK_EQ_U64(read_count(c3), 2 * 40 * 33);
    CHECK(padding_is_zero(o3));
    free(x3);
    free(y3);
    lmnn_tensor ts[] = {sidx, a3, o3, c3};
    for (int i = 0; i < 4; i++)
        lmnn_tensor_free(ts[i]);
}

/* Weighted row gather: every output row the float32 sum, in tap order, of
 * its taps' rows times their weights; out-of-range rows read zeros,
 * negative int32 entries count from the end; several column groups and a
 * partial last one, a partial last block of rows, bfloat16 rows, the most
 * taps. */
static void test_gather_rows_weighted(void) {
    const uint32_t rows = 37, g = 70;
    /* (the last: the most taps, whose tilized blocks take L1 enough that a
     * unit narrows to 2 of the 32 column tiles) */
    uint32_t widths[] = {256, 45, 1, 1000}, tap_counts[] = {5, 5, 5, LMNN_GATHER_TAPS_MAX};
    for (int wi = 0; wi < 4; wi++) {
        uint32_t c = widths[wi], taps = tap_counts[wi];
        for (int bf = 0; bf < 2; bf++) {
            lmnn_dtype dt = bf ? LMNN_BFLOAT16 : LMNN_FLOAT32;
            lmnn_shape as = LMNN_SHAPE(rows, c), is = LMNN_SHAPE(taps, g);
            float *x = nn_rand_floats((size_t)rows * c, -2, 2, 40 + wi);
            float *xr = nn_rounded(x, (size_t)rows * c, dt);
            float *w = nn_rand_floats((size_t)taps * g, -1, 1, 50 + wi);
            int32_t *ix = malloc(sizeof *ix * taps * g);
            uint64_t seed = 60 + (uint64_t)wi;
            for (uint32_t k = 0; k < taps * g; k++)
                ix[k] = (int32_t)(nn_rand_u32(&seed) % (2 * rows + 6)) - (int32_t)rows - 3;
            lmnn_tensor a, idx = upload_index(&is, (const uint32_t *)ix, LMNN_INT32), wt, o;
            CHECK_OK(nn_upload(&as, x, dt, LMNN_ROW_MAJOR, &a));
            CHECK_OK(nn_upload(&is, w, LMNN_FLOAT32, LMNN_ROW_MAJOR, &wt));
            CHECK_OK(lmnn_gather_rows_weighted(a, idx, wt, NULL, &o));
            lmnn_shape os = LMNN_SHAPE(g, c);
            CHECK(nn_output_is("gather_rows_weighted", o, &os, LMNN_TILE, dt, true));
            float *y = nn_download(o);
            size_t wrong = 0;
            for (uint32_t r = 0; r < g; r++)
                for (uint32_t k = 0; k < c; k++) {
                    float sum = 0;
                    for (uint32_t t = 0; t < taps; t++) {
                        int32_t v = ix[t * g + r];
                        v = v < 0 ? v + (int32_t)rows : v;
                        float term = v >= 0 && v < (int32_t)rows ? xr[(size_t)v * c + k] : 0.0f;
                        sum = t ? sum + w[t * g + r] * term : w[t * g + r] * term;
                    }
                    wrong += y[(size_t)r * c + k] != (bf ? nn_bf16(sum) : sum);
                }
            CHECK_EQ_U64(wrong, 0);
            if (!bf) CHECK(nn_padding_is_zero(o)); /* (it reads float32 tiles) */
            free(x);
            free(xr);
            free(w);
            free(ix);
            free(y);
            lmnn_tensor ts[] = {a, idx, wt, o};
            for (int i = 0; i < 4; i++)
                lmnn_tensor_free(ts[i]);
        }
    }
    /* Bad arguments name what is wrong. */
    lmnn_shape as = LMNN_SHAPE(4, 8), is = LMNN_SHAPE(2, 3), big = LMNN_SHAPE(65, 3);
    float x[32] = {0}, w[6] = {0};
    int32_t ix[6] = {0};
    lmnn_tensor a, at, idx = upload_index(&is, (const uint32_t *)ix, LMNN_INT32), wt, wbad, o;
    CHECK_OK(nn_upload(&as, x, LMNN_FLOAT32, LMNN_ROW_MAJOR, &a));
    CHECK_OK(nn_upload(&as, x, LMNN_FLOAT32, LMNN_TILE, &at));
    CHECK_OK(nn_upload(&is, w, LMNN_FLOAT32, LMNN_ROW_MAJOR, &wt));
    CHECK_OK(nn_upload(&is, w, LMNN_BFLOAT16, LMNN_ROW_MAJOR, &wbad));
    CHECK_FAILS(lmnn_gather_rows_weighted(at, idx, wt, NULL, &o), LM_ERR_INVALID_ARGUMENT,
                "a: expected a row_major float32 or bfloat16 tensor of 2 dims, given tile");
    CHECK_FAILS(lmnn_gather_rows_weighted(a, idx, wbad, NULL, &o), LM_ERR_INVALID_ARGUMENT,
                "weights: expected a row_major float32 tensor of index's shape [2, 3]");
    CHECK_FAILS(lmnn_gather_rows_weighted(a, wt, wt, NULL, &o), LM_ERR_INVALID_ARGUMENT,
                "index: expected a row_major uint32 or int32 tensor");
    CHECK_FAILS(lmnn_gather_rows_weighted(a, idx, wt, NULL, NULL), LM_ERR_INVALID_ARGUMENT,
                "out is NULL");
    int32_t *many = calloc(65 * 3, sizeof *many);
    lmnn_tensor idx_big = upload_index(&big, (const uint32_t *)many, LMNN_INT32);
    CHECK_FAILS(lmnn_gather_rows_weighted(a, idx_big, wt, NULL, &o), LM_ERR_INVALID_ARGUMENT,
                "index: expected [taps, rows] with 1 to 64 taps, given [65, 3]");
    free(many);
    lmnn_tensor ts[] = {a, at, idx, wt, wbad, idx_big};
    for (int i = 0; i < 6; i++)
        lmnn_tensor_free(ts[i]);
}

static void test_embedding(void) {
    lmnn_shape ws = LMNN_SHAPE(50, 40), is = LMNN_SHAPE(2, 7);
    uint32_t ids[14];
    uint64_t seed = 5;
    for (int i = 0; i < 14; i++)
        ids[i] = nn_rand_u32(&seed) % 50;
    ids[3] = 50; /* out of range: a zero row */
    lmnn_tensor idx = upload_index(&is, ids, LMNN_UINT32);
    cfg cfgs[] = {{LMNN_FLOAT32, LMNN_ROW_MAJOR}, {LMNN_BFLOAT16, LMNN_ROW_MAJOR},
                  {LMNN_UINT32, LMNN_ROW_MAJOR},  {LMNN_FLOAT32, LMNN_TILE},
                  {LMNN_BFLOAT16, LMNN_TILE},     {LMNN_BFLOAT8_B, LMNN_TILE}};
    for (size_t k = 0; k < sizeof cfgs / sizeof *cfgs; k++)
        for (int lay = 0; lay <= LMNN_TILE; lay++) {
            if (lay == LMNN_ROW_MAJOR && cfgs[k].dtype == LMNN_BFLOAT8_B) continue;
            char what[128], cb[64];
            snprintf(what, sizeof what, "embedding (weight %s, output %s)", cfg_name(cfgs[k], cb),
                     lay ? lmnn_layout_name((lmnn_layout)lay) : "default");
            size_t es = hsize(cfgs[k].dtype);
            void *w = make_data(cfgs[k].dtype, 50 * 40, k + 1);
            lmnn_tensor wt, o, count;
            CHECK_OK(up(&ws, cfgs[k], w, &wt));
            lmnn_embedding_options opts;
            lmnn_embedding_options_init(&opts);
            opts.layout = (lmnn_layout)lay;
            opts.index.out_invalid_count = &count;
            CHECK_OK(lmnn_embedding(idx, wt, &opts, &o));
            lmnn_tensor_info info;
            CHECK_OK(lmnn_tensor_get_info(o, &info));
            lmnn_shape want_shape = LMNN_SHAPE(2, 7, 40);
            CHECK(shape_eq(&info.shape, &want_shape));
            CHECK(info.layout == (lay ? (lmnn_layout)lay : cfgs[k].layout));
            uint8_t *want = calloc(14 * 40, es);
            for (int i = 0; i < 14; i++)
                if (ids[i] < 50)
                    memcpy(want + i * 40 * es, (uint8_t *)w + ids[i] * 40 * es, 40 * es);
            void *got = down(o);
            CHECK(same(got, want, 14 * 40, es, what));
            CHECK(padding_is_zero(o));
            CHECK_EQ_U64(read_count(count), 40);
            free(got);
            free(want);
            free(w);
            lmnn_tensor_free(wt);
            lmnn_tensor_free(o);
            lmnn_tensor_free(count);
        }
    lmnn_tensor_free(idx);
}

/* ---- upsample ---- */

typedef struct up_ctx {
    lmnn_shape in;
    uint32_t sh, sw;
} up_ctx;

static int64_t nearest_src(const uint32_t *o, const void *ctx) {
    const up_ctx *c = ctx;
    int64_t st[4];
    strides_of(&c->in, st);
    return o[0] * st[0] + o[1] * st[1] + (o[2] / c->sh) * st[2] + (o[3] / c->sw) * st[3];
}

static lm_status run_nearest(lmnn_tensor a, const void *ctx, lmnn_tensor *out) {
    const up_ctx *c = ctx;
    return lmnn_upsample(a, c->sh, c->sw, NULL, out);
}

/* PyTorch's upsample_bilinear2d (align_corners false, scale given) in
 * float32: source index and weights per output index (compute_source_index_
 * and_lambda; the weights are kept in the input's dtype; scale 1 copies). */
static void torch_src(uint32_t o, uint32_t n, uint32_t s, int bf16, uint32_t *i0, uint32_t *i1,
                      float *l0, float *l1) {
    volatile float scale = 1.0f / (float)s; /* no contraction into fma */
    volatile float prod = scale * ((float)o + 0.5f);
    float src = prod - 0.5f;
    if (s == 1) {
        *i0 = *i1 = o;
        *l0 = 1;
        *l1 = 0;
        return;
    }
    if (src < 0) src = 0;
    *i0 = (uint32_t)floorf(src);
    if (*i0 > n - 1) *i0 = n - 1;
    *i1 = *i0 + (*i0 < n - 1);
    *l1 = fminf(fmaxf(src - (float)*i0, 0), 1);
    if (bf16) *l1 = nn_bf16(*l1);
    *l0 = 1.0f - *l1;
    if (bf16) *l0 = nn_bf16(*l0);
}

static float *bilinear_ref(const float *x, const lmnn_shape *s, uint32_t sh, uint32_t sw,
                           int bf16) {
    uint32_t N = s->dims[0] * s->dims[1], H = s->dims[2], W = s->dims[3];
    uint32_t Ho = H * sh, Wo = W * sw;
    float *y = malloc((size_t)N * Ho * Wo * 4);
    for (uint32_t b = 0; b < N; b++)
        for (uint32_t i = 0; i < Ho; i++)
            for (uint32_t j = 0; j < Wo; j++) {
                uint32_t h0, h1, w0, w1;
                float hl0, hl1, wl0, wl1;
                torch_src(i, H, sh, bf16, &h0, &h1, &hl0, &hl1);
                torch_src(j, W, sw, bf16, &w0, &w1, &wl0, &wl1);
                const float *p = x + (size_t)b * H * W;
                volatile float a0 = p[h0 * W + w0] * wl0, a1 = p[h0 * W + w1] * wl1;
                volatile float t0 = a0 + a1;
                volatile float b0 = p[h1 * W + w0] * wl0, b1 = p[h1 * W + w1] * wl1;
                volatile float t1 = b0 + b1;
                volatile float c0 = t0 * hl0, c1 = t1 * hl1;
                y[((size_t)b * Ho + i) * Wo + j] = c0 + c1;
            }
    return y;
}

static void test_upsample(void) {
    up_ctx cases[] = {
        {LMNN_SHAPE(1, 1, 1, 1), 2, 3},
        {LMNN_SHAPE(1, 2, 5, 7), 2, 3},
        {LMNN_SHAPE(2, 3, 40, 33), 1, 2},
        {LMNN_SHAPE(1, 1, 20, 50), 4, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        lmnn_shape os = cases[i].in;
        os.dims[2] *= cases[i].sh;
        os.dims[3] *= cases[i].sw;
        for (size_t k = 0; k < NCFG; k++)
            CHECK(check_op("upsample nearest", all_cfgs[k], &cases[i].in, &os, run_nearest,
                           nearest_src, &cases[i], 0, i * 3 + k));
    }
    /* bilinear against PyTorch's formula */
    struct {
        lmnn_dtype dtype;
        lmnn_layout layout;
    } bc[] = {{LMNN_FLOAT32, LMNN_TILE},
              {LMNN_FLOAT32, LMNN_ROW_MAJOR},
              {LMNN_BFLOAT16, LMNN_TILE},
              {LMNN_BFLOAT16, LMNN_ROW_MAJOR},
              {LMNN_BFLOAT8_B, LMNN_TILE}};
    up_ctx bcases[] = {
        {LMNN_SHAPE(1, 1, 1, 1), 2, 2},   {LMNN_SHAPE(1, 2, 5, 7), 2, 3},
        {LMNN_SHAPE(2, 1, 40, 33), 3, 2}, {LMNN_SHAPE(1, 1, 20, 50), 4, 1},
        {LMNN_SHAPE(1, 1, 17, 9), 1, 5},  {LMNN_SHAPE(1, 1, 300, 5), 7, 3},
    };
    for (size_t i = 0; i < sizeof bcases / sizeof *bcases; i++)
        for (size_t k = 0; k < sizeof bc / sizeof *bc; k++) {
            lmnn_shape s = bcases[i].in;
            size_t n = lmnn_shape_volume(&s);
            float *x = nn_rand_floats(n, -4, 4, i * 10 + k + 1);
            for (size_t q = 0; q < n; q++)
                if (bc[k].dtype == LMNN_BFLOAT16)
                    x[q] = nn_bf16(x[q]);
                else if (bc[k].dtype == LMNN_BFLOAT8_B)
                    x[q] = (float)(int)(x[q] * 16);
            lmnn_tensor a, o;
            CHECK_OK(nn_upload(&s, x, bc[k].dtype, bc[k].layout, &a));
            lmnn_upsample_options opts;
            lmnn_upsample_options_init(&opts);
            opts.mode = LMNN_UPSAMPLE_BILINEAR;
            CHECK_OK(lmnn_upsample(a, bcases[i].sh, bcases[i].sw, &opts, &o));
            float *y = nn_download(o), *want = bilinear_ref(x, &s, bcases[i].sh, bcases[i].sw,
                                                            bc[k].dtype == LMNN_BFLOAT16);
            size_t m = n * bcases[i].sh * bcases[i].sw;
            double *wd = malloc(m * sizeof *wd);
            for (size_t q = 0; q < m; q++)
                wd[q] = bc[k].dtype == LMNN_BFLOAT16 ? nn_bf16(want[q]) : want[q];
            nn_err e = nn_compare(y, wd, m, 1.0);
            if (getenv("NN_VERBOSE"))
                printf("    bilinear %s %s %ux%u: pcc %.8f max_abs %.3g max_rel(floor 1) %.3g\n",
                       lmnn_layout_name(bc[k].layout), lmnn_dtype_name(bc[k].dtype), bcases[i].sh,
                       bcases[i].sw, e.pcc, e.max_abs, e.max_rel);
            if (bc[k].dtype != LMNN_BFLOAT8_B) {
                /* PyTorch's float32 operations in the same order, weights
                 * included: the same bits (bfloat16: after one rounding) */
                CHECK_ERR(e, 1.0, 0, 0);
            } else {
                CHECK_ERR(e, 0.999, 0.5, 0); /* packed to bfloat8_b: 7 bits below the block max */
            }
            CHECK(padding_is_zero(o));
            free(x);
            free(y);
            free(want);
            free(wd);
            lmnn_tensor_free(a);
            lmnn_tensor_free(o);
        }
}

/* Scalars, outputs in L1, and tilize of rows cut into unequal column
 * blocks (a regression: 33 tiles wide). */
static void test_misc(void) {
    lmnn_shape s0 = lmnn_shape_of(0, NULL), s1 = LMNN_SHAPE(1, 1);
    float v = 2.5f, y[6];
    for (int layout = LMNN_ROW_MAJOR; layout <= LMNN_TILE; layout++) {
        lmnn_tensor a, o;
        CHECK_OK(nn_upload(&s0, &v, LMNN_FLOAT32, (lmnn_layout)layout, &a));
        CHECK_OK(lmnn_permute(a, NULL, 0, NULL, &o));
        CHECK_OK(lmnn_to_host(o, y, 4));
        CHECK(y[0] == v);
        lmnn_tensor_free(o);
        CHECK_OK(lmnn_reshape(a, &s1, NULL, &o));
        CHECK_OK(lmnn_to_host(o, y, 4));
        CHECK(y[0] == v);
        lmnn_tensor_free(o);
        uint32_t reps[] = {3, 2};
        CHECK_OK(lmnn_repeat(a, reps, 2, NULL, &o));
        CHECK_OK(lmnn_to_host(o, y, 24));
        for (int i = 0; i < 6; i++)
            CHECK(y[i] == v);
        lmnn_tensor_free(o);
        lmnn_tensor_free(a);
    }
    /* L1 outputs */
    lmnn_shape s = LMNN_SHAPE(3, 40, 50);
    cfg cf[] = {{LMNN_FLOAT32, LMNN_ROW_MAJOR}, {LMNN_BFLOAT16, LMNN_TILE}};
    for (int k = 0; k < 2; k++) {
        float *x = make_data(cf[k].dtype, 6000, 12);
        lmnn_tensor a, o, back;
        CHECK_OK(up(&s, cf[k], x, &a));
        lmnn_output l1 = {0, {.type = LM_BUFFER_L1, .layout = LM_BUFFER_INTERLEAVED}};
        CHECK_OK(lmnn_transpose(a, 0, 2, &l1, &o));
        lmnn_tensor_info info;
        CHECK_OK(lmnn_tensor_get_info(o, &info));
        CHECK(info.memory.type == LM_BUFFER_L1);
        CHECK_OK(lmnn_transpose(o, 2, 0, NULL, &back)); /* L1 in, L1 out */
        float *z = nn_download(back);
        CHECK(z && !memcmp(z, x, 6000 * 4));
        free(z);
        free(x);
        lmnn_tensor_free(a);
        lmnn_tensor_free(o);
        lmnn_tensor_free(back);
    }
    /* a second call with the same shapes builds nothing */
    {
        lmnn_shape cs = LMNN_SHAPE(5, 37, 70);
        float *cx = nn_rand_floats(5 * 37 * 70, -1, 1, 3);
        lmnn_tensor a, o1, o2;
        CHECK_OK(nn_upload(&cs, cx, LMNN_FLOAT32, LMNN_TILE, &a));
        int32_t b[] = {1, 3, 0}, e[] = {4, 30, 70};
        CHECK_OK(lmnn_slice(a, b, e, NULL, 3, NULL, &o1)); /* through row-major */
        lmnn_program_cache_stats st1, st2;
        CHECK_OK(lmnn_program_cache_get_stats(nn_dev(), &st1));
        CHECK_OK(lmnn_slice(a, b, e, NULL, 3, NULL, &o2));
        CHECK_OK(lmnn_program_cache_get_stats(nn_dev(), &st2));
        CHECK_EQ_U64(st2.misses, st1.misses);
        CHECK_EQ_U64(st2.hits, st1.hits + 3); /* untilize, slice, tilize */
        float *y1 = nn_download(o1), *y2 = nn_download(o2);
        CHECK(y1 && y2 && !memcmp(y1, y2, 3 * 27 * 70 * 4));
        free(y1);
        free(y2);
        free(cx);
        lmnn_tensor_free(a);
        lmnn_tensor_free(o1);
        lmnn_tensor_free(o2);
    }
    lmnn_shape wide = LMNN_SHAPE(40, 1032);
    float *x = nn_rand_floats(40 * 1032, -1, 1, 2);
    lmnn_tensor t;
    CHECK_OK(nn_upload(&wide, x, LMNN_FLOAT32, LMNN_TILE, &t));
    float *z = nn_download(t);
    CHECK(z && !memcmp(z, x, 40 * 1032 * 4));
    free(z);
    free(x);
    lmnn_tensor_free(t);
}

/* ---- errors ---- */

static void test_errors(void) {
    lmnn_shape s = LMNN_SHAPE(2, 3, 4);
    float x[24] = {0};
    lmnn_tensor a, b, o, f, outs[3];
    CHECK_OK(nn_upload(&s, x, LMNN_FLOAT32, LMNN_ROW_MAJOR, &a));
    CHECK_OK(nn_upload(&s, x, LMNN_FLOAT32, LMNN_TILE, &b));
    /* dims and permutations */
    int32_t p2[] = {0, 1};
    CHECK_FAILS(lmnn_permute(a, p2, 2, NULL, &o), LM_ERR_INVALID_ARGUMENT,
                "lmnn_permute: dims: expected 3 dims (a's rank), given 2");
    int32_t pdup[] = {0, 1, -2};
    CHECK_FAILS(lmnn_permute(a, pdup, 3, NULL, &o), LM_ERR_INVALID_ARGUMENT,
                "lmnn_permute: dims: dim 1 appears twice");
    int32_t pbig[] = {0, 3, 1};
    CHECK_FAILS(lmnn_permute(a, pbig, 3, NULL, &o), LM_ERR_INVALID_ARGUMENT,
                "lmnn_permute: dims[1]: expected a dim in [-3, 2], given 3");
    CHECK_FAILS(lmnn_transpose(b, 0, -4, NULL, &o), LM_ERR_INVALID_ARGUMENT,
                "lmnn_transpose: dim1: expected a dim in [-3, 2], given -4");
    CHECK_FAILS(lmnn_permute(a, p2, 3, NULL, NULL), LM_ERR_INVALID_ARGUMENT, "out is NULL");
    /* reshape */
    lmnn_shape bad = LMNN_SHAPE(5, 5);
    CHECK_FAILS(lmnn_reshape(a, &bad, NULL, &o), LM_ERR_INVALID_ARGUMENT,
                "lmnn_reshape: shape: [5, 5] cannot hold the 24 elements of a's shape [2, 3, 4]");
    lmnn_shape two_auto = LMNN_SHAPE(LMNN_DIM_AUTO, 2, LMNN_DIM_AUTO);
    CHECK_FAILS(lmnn_reshape(a, &two_auto, NULL, &o), LM_ERR_INVALID_ARGUMENT,
                "dims 0 and 2 are both LMNN_DIM_AUTO");
    lmnn_shape auto5 = LMNN_SHAPE(5, LMNN_DIM_AUTO);
    CHECK_FAILS(lmnn_reshape(a, &auto5, NULL, &o), LM_ERR_INVALID_ARGUMENT,
                "cannot hold the 24 elements");
    /* concat */
    lmnn_shape s2 = LMNN_SHAPE(2, 5, 5);
    float x2[50] = {0};
    lmnn_tensor c, d;
    CHECK_OK(nn_upload(&s2, x2, LMNN_FLOAT32, LMNN_ROW_MAJOR, &c));
    CHECK_OK(nn_upload(&s, x, LMNN_BFLOAT16, LMNN_ROW_MAJOR, &d));
    lmnn_tensor list[] = {a, a, c};
    CHECK_FAILS(lmnn_concat(list, 3, 1, NULL, &o), LM_ERR_INVALID_ARGUMENT,
                "lmnn_concat: tensors[2]: shape [2, 5, 5] differs from tensors[0]'s [2, 3, 4] "
                "outside dim 1");
    lmnn_tensor list2[] = {a, d};
    CHECK_FAILS(lmnn_concat(list2, 2, 0, NULL, &o), LM_ERR_INVALID_ARGUMENT,
                "lmnn_concat: tensors[1]: expected row_major float32 as tensors[0], given "
                "row_major bfloat16");
    lmnn_tensor list3[] = {a, b};
    CHECK_FAILS(lmnn_concat(list3, 2, 0, NULL, &o), LM_ERR_INVALID_ARGUMENT,
                "tensors[1]: expected row_major float32 as tensors[0], given tile float32");
    CHECK_FAILS(lmnn_concat(list, 0, 0, NULL, &o), LM_ERR_INVALID_ARGUMENT,
                "tensors: expected at least one tensor");
    CHECK_FAILS(lmnn_concat(list, 2, 3, NULL, &o), LM_ERR_INVALID_ARGUMENT,
                "dim: expected a dim in [-3, 2], given 3");
    /* split and chunk */
    uint32_t sizes[] = {1, 1};
    CHECK_FAILS(lmnn_split(a, sizes, 2, 1, NULL, outs), LM_ERR_INVALID_ARGUMENT,
                "lmnn_split: sizes: they sum to 2, expected 3 (dim 1 of a)");
    CHECK_FAILS(lmnn_chunk(a, 0, 1, NULL, outs, &(uint32_t){0}), LM_ERR_INVALID_ARGUMENT,
                "chunks: expected >= 1, given 0");
    /* slice */
    int32_t b0[] = {0, 0, 0}, e0[] = {2, 3, 5}, st0[] = {1, 1, 1};
    CHECK_FAILS(lmnn_slice(a, b0, e0, st0, 3, NULL, &o), LM_ERR_INVALID_ARGUMENT,
                "lmnn_slice: ends[2]: 5 is out of range for dim 2 of size 4");
    int32_t b1[] = {0, -4, 0};
    CHECK_FAILS(lmnn_slice(a, b1, e0, NULL, 3, NULL, &o), LM_ERR_INVALID_ARGUMENT,
                "begins[1]: -4 is out of range for dim 1 of size 3");
    int32_t b2[] = {0, 2, 0}, e2[] = {2, -1, 4};
    CHECK_FAILS(lmnn_slice(a, b2, e2, NULL, 3, NULL, &o), LM_ERR_INVALID_ARGUMENT,
                "dim 1: the slice [2, 2) is empty");
    int32_t st1[] = {1, 0, 1};
    CHECK_FAILS(lmnn_slice(a, b0, e2, st1, 3, NULL, &o), LM_ERR_INVALID_ARGUMENT,
                "steps[1]: expected >= 1, given 0");
    CHECK_FAILS(lmnn_slice(a, b0, e2, NULL, 2, NULL, &o), LM_ERR_INVALID_ARGUMENT,
                "count: expected 3 begins and ends (a's rank), given 2");
    /* pad */
    lmnn_pad_options po;
    lmnn_pad_options_init(&po);
    po.mode = LMNN_PAD_REFLECT;
    uint32_t pads[] = {0, 0, 1, 3, 0, 0};
    CHECK_FAILS(lmnn_pad(a, pads, 3, &po, &o), LM_ERR_INVALID_ARGUMENT,
                "lmnn_pad: pads[2], pads[3]: reflect padding of (1, 3) is wider than dim 1 of size "
                "3 allows (at most 2)");
    po.mode = (lmnn_pad_mode)9;
    CHECK_FAILS(lmnn_pad(a, pads, 3, &po, &o), LM_ERR_INVALID_ARGUMENT,
                "opts.mode: unknown pad mode 9");
    /* repeat and expand */
    uint32_t reps[] = {2, 2};
    CHECK_FAILS(lmnn_repeat(a, reps, 2, NULL, &o), LM_ERR_INVALID_ARGUMENT,
                "lmnn_repeat: repeats: expected 3 to 8 repeats (at least a's rank), given 2");
    lmnn_shape ex = LMNN_SHAPE(2, 3, 8);
    CHECK_FAILS(lmnn_expand(a, &ex, NULL, &o), LM_ERR_INVALID_ARGUMENT,
                "lmnn_expand: shape: [2, 3, 8] does not expand a's shape [2, 3, 4] (dim 2: 4 is "
                "neither 8 nor 1)");
    /* index tensors */
    lmnn_shape is = LMNN_SHAPE(2);
    float fi[2] = {0, 1};
    uint32_t ui[2] = {0, 1};
    lmnn_tensor fidx, tidx, uidx;
    CHECK_OK(nn_upload(&is, fi, LMNN_FLOAT32, LMNN_ROW_MAJOR, &fidx));
    lmnn_tensor_options io;
    lmnn_tensor_options_init(&io);
    io.dtype = LMNN_UINT32;
    CHECK_OK(lmnn_from_host(nn_dev(), &is, ui, sizeof ui, &io, &tidx)); /* tile */
    io.layout = LMNN_ROW_MAJOR;
    CHECK_OK(lmnn_from_host(nn_dev(), &is, ui, sizeof ui, &io, &uidx));
    CHECK_FAILS(lmnn_index_select(a, 0, fidx, NULL, &o), LM_ERR_INVALID_ARGUMENT,
                "lmnn_index_select: index: expected a row_major uint32 or int32 tensor, given "
                "row_major float32");
    CHECK_FAILS(lmnn_index_select(a, 0, tidx, NULL, &o), LM_ERR_INVALID_ARGUMENT,
                "index: expected a row_major uint32 or int32 tensor, given tile uint32");
    CHECK_FAILS(lmnn_index_select(a, 5, uidx, NULL, &o), LM_ERR_INVALID_ARGUMENT,
                "dim: expected a dim in [-3, 2], given 5");
    CHECK_FAILS(lmnn_gather(a, 0, uidx, NULL, &o), LM_ERR_INVALID_ARGUMENT,
                "lmnn_gather: index: shape [2] does not fit a's shape [2, 3, 4]");
    CHECK_FAILS(lmnn_embedding(uidx, a, NULL, &o), LM_ERR_INVALID_ARGUMENT,
                "lmnn_embedding: weight: expected 2 dims [V, D], given [2, 3, 4]");
    lmnn_shape ws = LMNN_SHAPE(4, 6);
    lmnn_tensor w2;
    CHECK_OK(nn_upload(&ws, x, LMNN_FLOAT32, LMNN_ROW_MAJOR, &w2));
    CHECK_FAILS(lmnn_embedding(fidx, w2, NULL, &o), LM_ERR_INVALID_ARGUMENT,
                "lmnn_embedding: ids: expected a row_major uint32 or int32 tensor, given row_major "
                "float32");
    CHECK_OK(lmnn_tensor_free(w2));
    /* upsample */
    lmnn_upsample_options uo;
    lmnn_upsample_options_init(&uo);
    CHECK_FAILS(lmnn_upsample(a, 2, 2, &uo, &o), LM_ERR_INVALID_ARGUMENT,
                "lmnn_upsample: a: expected 4 dims [N, C, H, W], given [2, 3, 4]");
    lmnn_shape s4 = LMNN_SHAPE(1, 1, 2, 2);
    uint32_t i4[4] = {0};
    io.layout = LMNN_TILE;
    lmnn_tensor t4;
    CHECK_OK(lmnn_from_host(nn_dev(), &s4, i4, sizeof i4, &io, &t4));
    uo.mode = LMNN_UPSAMPLE_BILINEAR;
    CHECK_FAILS(lmnn_upsample(t4, 2, 2, &uo, &o), LM_ERR_INVALID_ARGUMENT,
                "lmnn_upsample: a: expected a float dtype");
    CHECK_FAILS(lmnn_upsample(t4, 0, 2, NULL, &o), LM_ERR_INVALID_ARGUMENT,
                "scale_h: expected 1..64, given 0");
    /* output */
    lmnn_output out_bf16 = {.dtype = LMNN_BFLOAT16};
    CHECK_FAILS(lmnn_transpose(a, 0, 1, &out_bf16, &o), LM_ERR_INVALID_ARGUMENT,
                "output.dtype: expected float32 (the input's; data movement does not convert), "
                "given bfloat16");
    lmnn_output sharded = {0, {.type = LM_BUFFER_DRAM, .layout = LM_BUFFER_HEIGHT_SHARDED}};
    CHECK_FAILS(lmnn_transpose(a, 0, 1, &sharded, &o), LM_ERR_UNSUPPORTED,
                "sharded tensors are not supported yet");
    /* dead handles */
    lmnn_tensor dead;
    CHECK_OK(nn_upload(&s, x, LMNN_FLOAT32, LMNN_ROW_MAJOR, &dead));
    CHECK_OK(lmnn_tensor_free(dead));
    CHECK_FAILS(lmnn_transpose(dead, 0, 1, NULL, &o), LM_ERR_INVALID_HANDLE,
                "lmnn_transpose: a: tensor handle is stale");
    lmnn_tensor list4[] = {a, dead};
    CHECK_FAILS(lmnn_concat(list4, 2, 0, NULL, &o), LM_ERR_INVALID_HANDLE,
                "lmnn_concat: tensors[1]: tensor handle is stale");
    CHECK_FAILS(lmnn_index_select(a, 0, dead, NULL, &o), LM_ERR_INVALID_HANDLE,
                "lmnn_index_select: index: tensor handle is stale");
    CHECK_FAILS(lmnn_pad((lmnn_tensor){0}, pads, 3, NULL, &o), LM_ERR_INVALID_HANDLE,
                "lmnn_pad: a: tensor handle is zero");
    /* another device */
    lm_device *dev2;
    CHECK_OK(lm_device_open(NULL, &dev2));
    lmnn_tensor_options fo;
    lmnn_tensor_options_init(&fo);
    fo.dtype = LMNN_FLOAT32;
    fo.layout = LMNN_ROW_MAJOR;
    lmnn_tensor other, oidx;
    CHECK_OK(lmnn_from_host(dev2, &s, x, sizeof x, &fo, &other));
    io.layout = LMNN_ROW_MAJOR;
    CHECK_OK(lmnn_from_host(dev2, &is, ui, sizeof ui, &io, &oidx));
    lmnn_tensor list5[] = {a, other};
    CHECK_FAILS(lmnn_concat(list5, 2, 0, NULL, &o), LM_ERR_INVALID_ARGUMENT,
                "lmnn_concat: tensors[1]: the tensor is on another device than the op's first "
                "input");
    CHECK_FAILS(lmnn_index_select(a, 0, oidx, NULL, &o), LM_ERR_INVALID_ARGUMENT,
                "lmnn_index_select: index: the tensor is on another device");
    CHECK_FAILS(lmnn_gather(a, 0, oidx, NULL, &o), LM_ERR_INVALID_ARGUMENT,
                "lmnn_gather: index: the tensor is on another device");
    CHECK_OK(lmnn_tensor_free(other));
    CHECK_OK(lmnn_tensor_free(oidx));
    CHECK_OK(lm_device_close(dev2));
    /* the device still works */
    CHECK_OK(lmnn_transpose(b, 0, -1, NULL, &o));
    CHECK_OK(lmnn_index_select(a, 1, uidx, NULL, &f));
    float y[24];
    CHECK_OK(lmnn_to_host(o, y, sizeof y));
    lmnn_tensor ts[] = {a, b, c, d, o, f, fidx, tidx, uidx, t4};
    for (size_t i = 0; i < sizeof ts / sizeof *ts; i++)
        CHECK_OK(lmnn_tensor_free(ts[i]));
}

/* ---- large tensors over the whole grid, timed ---- */

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Runs `run` once to warm the cache, then times a second run to completion. */
static double timed(run_fn run, lmnn_tensor a, const void *ctx, lmnn_tensor *out) {
    lmnn_tensor warm;
    if (run(a, ctx, &warm)) return -1;
    lmnn_tensor_free(warm);
    lm_finish(lm_device_command_queue(nn_dev(), 0));
    double t0 = now_s();
    if (run(a, ctx, out)) return -1;
    lm_finish(lm_device_command_queue(nn_dev(), 0));
    return now_s() - t0;
}

static void test_large(void) {
    lmnn_shape s = LMNN_SHAPE(1024, 1024);
    size_t n = 1024 * 1024;
    int verbose = getenv("NN_VERBOSE") != NULL;
    for (int layout = LMNN_ROW_MAJOR; layout <= LMNN_TILE; layout++) {
        cfg c = {LMNN_FLOAT32, (lmnn_layout)layout};
        float *x = make_data(c.dtype, n, 77);
        lmnn_tensor a, o;
        CHECK_OK(up(&s, c, x, &a));
        typedef struct big_op {
            const char *name;
            run_fn run;
            const void *ctx;
            src_fn f;
            lmnn_shape out;
        } big_op;
        big_op ops[9];
        perm_ctx tr = {s, {1, 0}};
        slice_ctx sl = {s, {0}, {1, -1000}, {1023, 1024}, {2, 1}};
        slice_shape(&sl);
        pad_ctx pd = {s, {3, 5, 7, 1}, LMNN_PAD_CONSTANT, 0};
        shape_ctx rs = {s, LMNN_SHAPE(512, 2048)};
        ops[0] = (big_op){"transpose", run_permute, &tr, perm_src, permuted(&tr)};
        ops[1] = (big_op){"slice", run_slice, &sl, slice_src, sl.out};
        ops[2] = (big_op){"pad", run_pad, &pd, pad_src, pad_shape(&pd)};
        ops[3] = (big_op){"reshape", run_reshape, &rs, flat_src, rs.out};
        grow_ctx rp = {s, LMNN_SHAPE(2, 1024, 1024), {2, 1, 1}, 3, false};
        ops[4] = (big_op){"repeat", run_grow, &rp, grow_src, rp.out};
        uint32_t *rows = malloc(1024 * 4), *g = malloc(n * 4);
        uint64_t seed = 3;
        for (size_t i = 0; i < 1024; i++)
            rows[i] = nn_rand_u32(&seed) % 1024;
        for (size_t i = 0; i < n; i++)
            g[i] = nn_rand_u32(&seed) % 1024;
        lmnn_shape is = LMNN_SHAPE(1024);
        index_ctx sel = {s, is, 0, rows, upload_index(&is, rows, LMNN_UINT32), 0};
        index_ctx g0 = {s, s, 0, g, upload_index(&s, g, LMNN_UINT32), 1};
        index_ctx g1 = {s, s, -1, g, g0.index, 1};
        ops[5] = (big_op){"index_sel", run_index, &sel, select_src, s};
        ops[6] = (big_op){"gather d0", run_index, &g0, select_src, s};
        ops[7] = (big_op){"gather d1", run_index, &g1, select_src, s};
        perm_ctx pg = {LMNN_SHAPE(32, 32, 1024), {2, 0, 1}};
        lmnn_shape s3 = pg.in;
        ops[8] = (big_op){"permute", run_permute, &pg, perm_src, permuted(&pg)};
        for (int i = 0; i < 9; i++) {
            lmnn_tensor in = a;
            if (i == 8) CHECK_OK(lmnn_reshape(a, &s3, NULL, &in));
            double t = timed(ops[i].run, in, ops[i].ctx, &o);
            if (i == 8) lmnn_tensor_free(in);
            CHECK(t >= 0);
            if (verbose)
                printf("    %-9s 1024x1024 float32 %-9s %.3f s\n", ops[i].name,
                       lmnn_layout_name(c.layout), t);
            void *want = reference(&ops[i].out, 4, x, ops[i].f, ops[i].ctx, &(float){0});
            void *got = down(o);
            CHECK(same(got, want, lmnn_shape_volume(&ops[i].out), 4, ops[i].name));
            free(want);
            free(got);
            lmnn_tensor_free(o);
        }
        lmnn_tensor_free(sel.index);
        lmnn_tensor_free(g0.index);
        free(rows);
        free(g);
        free(x);
        lmnn_tensor_free(a);
    }
    /* upsampling 512x512 -> 1024x1024 and embedding of 1024 rows of 1024 */
    lmnn_shape us = LMNN_SHAPE(1, 1, 512, 512);
    float *u = nn_rand_floats(512 * 512, -1, 1, 4);
    for (int layout = LMNN_ROW_MAJOR; layout <= LMNN_TILE; layout++)
        for (int mode = LMNN_UPSAMPLE_NEAREST; mode <= LMNN_UPSAMPLE_BILINEAR; mode++) {
            lmnn_tensor a, o, w;
            CHECK_OK(nn_upload(&us, u, LMNN_FLOAT32, (lmnn_layout)layout, &a));
            lmnn_upsample_options opts;
            lmnn_upsample_options_init(&opts);
            opts.mode = (lmnn_upsample_mode)mode;
            CHECK_OK(lmnn_upsample(a, 2, 2, &opts, &w));
            lmnn_tensor_free(w);
            lm_finish(lm_device_command_queue(nn_dev(), 0));
            double t0 = now_s();
            CHECK_OK(lmnn_upsample(a, 2, 2, &opts, &o));
            lm_finish(lm_device_command_queue(nn_dev(), 0));
            if (verbose)
                printf("    upsample %s -> 1024x1024 float32 %-9s %.3f s\n",
                       mode == LMNN_UPSAMPLE_NEAREST ? "nearest " : "bilinear",
                       lmnn_layout_name((lmnn_layout)layout), now_s() - t0);
            float *y = nn_download(o);
            CHECK(y);
            if (mode == LMNN_UPSAMPLE_BILINEAR) {
                float *want = bilinear_ref(u, &us, 2, 2, 0);
                CHECK(!memcmp(y, want, 1024 * 1024 * 4));
                free(want);
            } else {
                for (size_t i = 0; i < 1024 * 1024; i += 997)
                    CHECK(y[i] == u[(i / 1024 / 2) * 512 + (i % 1024) / 2]);
            }
            free(y);
            lmnn_tensor_free(a);
            lmnn_tensor_free(o);
        }
    free(u);
    lmnn_shape ws = LMNN_SHAPE(4096, 1024), ids_s = LMNN_SHAPE(1, 1024);
    float *wv = nn_rand_floats(4096 * 1024, -1, 1, 8);
    uint32_t ids[1024];
    uint64_t seed = 9;
    for (int i = 0; i < 1024; i++)
        ids[i] = nn_rand_u32(&seed) % 4096;
    lmnn_tensor ix = upload_index(&ids_s, ids, LMNN_UINT32);
    for (int layout = LMNN_ROW_MAJOR; layout <= LMNN_TILE; layout++) {
        lmnn_tensor w, o, warm;
        CHECK_OK(nn_upload(&ws, wv, LMNN_BFLOAT16, (lmnn_layout)layout, &w));
        CHECK_OK(lmnn_embedding(ix, w, NULL, &warm));
        lmnn_tensor_free(warm);
        lm_finish(lm_device_command_queue(nn_dev(), 0));
        double t0 = now_s();
        CHECK_OK(lmnn_embedding(ix, w, NULL, &o));
        lm_finish(lm_device_command_queue(nn_dev(), 0));
        if (verbose)
            printf("    embedding 1024 ids, [4096, 1024] bfloat16 weight %-9s %.3f s\n",
                   lmnn_layout_name((lmnn_layout)layout), now_s() - t0);
        float *y = nn_download(o);
        CHECK(y);
        for (int i = 0; i < 1024; i += 7)
            for (int k = 0; k < 1024; k += 13)
                CHECK(y[i * 1024 + k] == nn_bf16(wv[ids[i] * 1024 + k]));
        free(y);
        lmnn_tensor_free(w);
        lmnn_tensor_free(o);
    }
    lmnn_tensor_free(ix);
    free(wv);
}

/* negative_from_end: an entry below 0 counts from the end of the dim (ONNX's
 * Gather); one below -n still gives zero, counted. index_select along each
 * dim in both layouts, a tile batch dim, gather along each dim, embedding. */
static int32_t wrapped(int32_t v, int32_t n) {
    return v < 0 ? v + n : v;
}

static void test_index_negative_from_end(void) {
    lmnn_shape s = LMNN_SHAPE(4, 6);
    float x[24];
    for (int i = 0; i < 24; i++)
        x[i] = (float)(i + 1);
    int32_t ix5[] = {2, -1, -4, -5, 3};
    lmnn_shape is = LMNN_SHAPE(5);
    lmnn_tensor idx = upload_index(&is, (const uint32_t *)ix5, LMNN_INT32), count;
    lmnn_index_options opts;
    lmnn_index_options_init(&opts);
    opts.negative_from_end = true;
    opts.out_invalid_count = &count;
    for (int layout = LMNN_ROW_MAJOR; layout <= LMNN_TILE; layout++) {
        lmnn_tensor a, o;
        CHECK_OK(nn_upload(&s, x, LMNN_FLOAT32, (lmnn_layout)layout, &a));
        for (int d = 0; d < 2; d++) {
            int32_t n = d ? 6 : 4, bad = 0;
            CHECK_OK(lmnn_index_select(a, d, idx, &opts, &o));
            float *y = nn_download(o);
            for (int r = 0; r < (d ? 4 : 5); r++)
                for (int k = 0; k < (d ? 5 : 6); k++) {
                    int32_t v = wrapped(ix5[d ? k : r], n);
                    bool ok = v >= 0 && v < n;
                    bad += !ok;
                    float want = !ok ? 0.0f : d ? x[r * 6 + v] : x[v * 6 + k];
                    CHECK(y && y[r * (d ? 5 : 6) + k] == want);
                }
            CHECK_EQ_U64(read_count(count), (uint64_t)bad);
            free(y);
            lmnn_tensor_free(o);
            lmnn_tensor_free(count);
        }
        int32_t gi[2 * 3] = {3, -5, -1, -7, 0, -2};
        lmnn_shape gs = LMNN_SHAPE(2, 3);
        lmnn_tensor gidx = upload_index(&gs, (const uint32_t *)gi, LMNN_INT32);
        for (int d = 0; d < 2; d++) {
            int32_t n = d ? 6 : 4, bad = 0;
            CHECK_OK(lmnn_gather(a, d, gidx, &opts, &o));
            float *y = nn_download(o);
            for (int r = 0; r < 2; r++)
                for (int k = 0; k < 3; k++) {
                    int32_t v = wrapped(gi[r * 3 + k], n);
                    bool ok = v >= 0 && v < n;
                    bad += !ok;
                    CHECK(y && y[r * 3 + k] == (!ok ? 0.0f : d ? x[r * 6 + v] : x[v * 6 + k]));
                }
            CHECK_EQ_U64(read_count(count), (uint64_t)bad);
            free(y);
            lmnn_tensor_free(o);
            lmnn_tensor_free(count);
        }
        lmnn_tensor_free(gidx);
        /* embedding: ids -1, 0, -3 are rows 3, 0, 1 */
        int32_t ids[3] = {-1, 0, -3};
        lmnn_shape ids_s = LMNN_SHAPE(3);
        lmnn_tensor ih = upload_index(&ids_s, (const uint32_t *)ids, LMNN_INT32);
        lmnn_embedding_options eo;
        lmnn_embedding_options_init(&eo);
        eo.index.negative_from_end = true;
        CHECK_OK(lmnn_embedding(ih, a, &eo, &o));
        float *y = nn_download(o);
        for (int r = 0; r < 3; r++)
            for (int k = 0; k < 6; k++)
                CHECK(y && y[r * 6 + k] == x[wrapped(ids[r], 4) * 6 + k]);
        free(y);
        lmnn_tensor_free(o);
        lmnn_tensor_free(ih);
        lmnn_tensor_free(a);
    }
    lmnn_tensor_free(idx);
    /* a batch dim of a tile tensor (whole tiles) */
    lmnn_shape s3 = LMNN_SHAPE(3, 40, 33);
    float *x3 = nn_rand_floats(3 * 40 * 33, -1, 1, 9);
    int32_t sel[] = {-1, 0, -3};
    lmnn_shape ss = LMNN_SHAPE(3);
    lmnn_tensor sidx = upload_index(&ss, (const uint32_t *)sel, LMNN_INT32), a3, o3;
    CHECK_OK(nn_upload(&s3, x3, LMNN_FLOAT32, LMNN_TILE, &a3));
    opts.out_invalid_count = NULL;
    CHECK_OK(lmnn_index_select(a3, 0, sidx, &opts, &o3));
    float *y3 = nn_download(o3);
    for (int b = 0; b < 3; b++)
        CHECK(y3 && memcmp(y3 + b * 40 * 33, x3 + wrapped(sel[b], 3) * 40 * 33,
                           40 * 33 * sizeof(float)) == 0);
    free(y3);
    free(x3);
    lmnn_tensor_free(o3);
    lmnn_tensor_free(a3);
    lmnn_tensor_free(sidx);
}

/* scatter_rows with its entries mapped (lmnn_scatter_options) against the
 * host: a [B, H, T, W] cache (rows B * H * T) written at positions
 * along T (ScatterElements' row form: row = pos * 1 + (b * H + h) * T), with
 * entries below 0 counted from T's end and ones outside [-T, T) dropped; the
 * same along B (row_scale H * T, offsets h * T + t); entries mapped without
 * offsets; and offsets large enough that a wrapped sum would land in range,
 * which must change nothing. */
static int64_t mapped_row(int32_t v, int64_t off, uint32_t dim, uint32_t scale, uint32_t n) {
    if (v < -(int64_t)dim || v >= (int64_t)dim) return -1;
    int64_t r = (int64_t)(v < 0 ? v + (int64_t)dim : v) * scale + off;
    return r < n ? r : -1;
}

/* A scatter's result `o` ([rows, w] float32) against `want`, element for
 * element; the first mismatches of case c are printed. */
static void check_scattered(lmnn_tensor o, const float *want, size_t rows, size_t w, size_t c) {
    float *y = o.id ? nn_download(o) : NULL;
    size_t bad = 0;
    for (size_t i = 0; y && i < rows * w; i++)
        if (y[i] != want[i] && bad++ < 3)
            printf("    case %zu: element %zu (row %zu) is %g, want %g\n", c, i, i / w,
                   (double)y[i], (double)want[i]);
    CHECK(y && bad == 0);
    free(y);
}

static void test_scatter_rows_mapped(void) {
    enum { B = 2, H = 3, T = 10, W = 40, N = B * H * T };
    /* The cache as [B, H, T, W] (rows of matrices of T, not whole tiles)
     * or as [N, W], the updates as [.., rows, W] or [m, W]. */
    struct {
        uint32_t dim, scale, m;
        bool offsets, huge;
        lmnn_shape as, us;
    } cases[] = {
        {T, 1, B * H * 2, true, false, LMNN_SHAPE(B, H, T, W), LMNN_SHAPE(B, H, 2, W)},
        {B, H * T, H * T, true, false, LMNN_SHAPE(B, H, T, W), LMNN_SHAPE(1, H, T, W)},
        {N, 1, 12, false, false, LMNN_SHAPE(N, W), LMNN_SHAPE(12, W)},
        {T, 1, 8, true, true, LMNN_SHAPE(B * H, T, W), LMNN_SHAPE(8, W)},
        {T, 1, B * H, true, false, LMNN_SHAPE(B, H, T, W), LMNN_SHAPE(B, H, 1, W)},
    };
    /* The last case's index is [M, 3], a page per entry, its entry the
     * first of each row (index_step 3), as ScatterElements' indices come. */
    const size_t stepped = 4;
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        const uint32_t dim = cases[c].dim, scale = cases[c].scale, m = cases[c].m;
        lmnn_shape as = cases[c].as, us = cases[c].us, is = LMNN_SHAPE(m);
        float *x = malloc((size_t)N * W * sizeof *x), *up = malloc((size_t)m * W * sizeof *up);
        float *want = malloc((size_t)N * W * sizeof *want);
        int32_t idx[64];
        uint32_t off[64];
        uint64_t seed = c + 31;
        for (size_t i = 0; i < (size_t)N * W; i++)
            want[i] = x[i] = (float)(i % 89);
        for (size_t i = 0; i < (size_t)m * W; i++)
            up[i] = (float)(200 + i % 103);
        for (uint32_t i = 0; i < m; i++) {
            uint32_t r = nn_rand_u32(&seed);
            idx[i] = r % 7 == 0   ? (int32_t)dim
                     : r % 7 == 1 ? -(int32_t)dim - 1
                     : r % 7 == 2 ? (r % 2 ? INT32_MAX : INT32_MIN)
                                  : (int32_t)(r % (2 * dim)) - (int32_t)dim;
            /* ScatterElements' offsets: the row of the update's position
             * with its coordinate along the dim 0. */
            off[i] = !cases[c].offsets ? 0
                     : cases[c].huge   ? 0xFFFFFFFFu - i
                     : scale == 1      ? i / (c == stepped ? 1 : 2) * T
                                       : i;
            int64_t row = mapped_row(idx[i], off[i], dim, scale, N);
            if (row >= 0) memcpy(want + row * W, up + (size_t)i * W, W * sizeof *up);
        }
        int32_t wide[3 * 64];
        for (uint32_t i = 0; i < 3 * m; i++)
            wide[i] = i % 3 ? (int32_t)(i % 7) : idx[i / 3]; /* the others: rows in range */
        lmnn_shape ws = LMNN_SHAPE(m, 3);
        lmnn_tensor a, u, o = {0};
        lmnn_tensor ix = c == stepped ? upload_index(&ws, (const uint32_t *)wide, LMNN_INT32)
                                      : upload_index(&is, (const uint32_t *)idx, LMNN_INT32);
        lmnn_tensor ox = upload_index(&is, off, LMNN_UINT32);
        CHECK_OK(nn_upload(&as, x, LMNN_FLOAT32, LMNN_TILE, &a));
        CHECK_OK(nn_upload(&us, up, LMNN_FLOAT32, LMNN_TILE, &u));
        lmnn_scatter_options so;
        lmnn_scatter_options_init(&so);
        so.index_dim = dim;
        so.row_scale = scale;
        so.index_step = c == stepped ? 3 : 1;
        if (cases[c].offsets) so.offsets = ox;
        CHECK_OK(lmnn_scatter_rows(a, ix, u, &so, &o));
        check_scattered(o, want, N, W, c);
        lmnn_tensor_free(o);
        lmnn_tensor_free(a);
        lmnn_tensor_free(u);
        lmnn_tensor_free(ix);
        lmnn_tensor_free(ox);
        free(x);
        free(up);
        free(want);
    }
}

/* scatter_rows against the host: rows replaced in index order (the last
 * of duplicates stays), entries outside [0, N) ignored, in every dtype it
 * takes, rows across tile boundaries and matrices wider than a run block. */
static void test_scatter_rows(void) {
    struct {
        uint32_t n, m, w;
        lmnn_dtype dt;
    } cases[] = {
        {16, 4, 8, LMNN_FLOAT32},     {40, 7, 33, LMNN_FLOAT32}, {70, 50, 64, LMNN_BFLOAT16},
        {33, 33, 3000, LMNN_FLOAT32}, {5, 9, 2, LMNN_INT32},     {100, 1, 17, LMNN_UINT32},
        {64, 40, 32, LMNN_FLOAT32},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        const uint32_t n = cases[c].n, m = cases[c].m, w = cases[c].w;
        const lmnn_dtype dt = cases[c].dt;
        lmnn_shape as = LMNN_SHAPE(n, w), us = LMNN_SHAPE(m, w), is = LMNN_SHAPE(m);
        /* Values every dtype holds exactly: small integers. */
        float *x = malloc((size_t)n * w * sizeof *x), *up = malloc((size_t)m * w * sizeof *up);
        float *want = malloc((size_t)n * w * sizeof *want);
        int32_t *idx = malloc(m * sizeof *idx);
        uint64_t seed = c + 7;
        for (size_t i = 0; i < (size_t)n * w; i++)
            want[i] = x[i] = (float)(i % 97);
        for (size_t i = 0; i < (size_t)m * w; i++)
            up[i] = (float)(100 + i % 101);
        for (uint32_t i = 0; i < m; i++) {
            uint32_t r = nn_rand_u32(&seed);
            /* Some out of range both ways; the rest may repeat. */
            idx[i] = r % 8 == 0   ? -(int32_t)(r % 5) - 1
                     : r % 8 == 1 ? (int32_t)(n + i % 2) /* N itself, past the last row */
                                  : (int32_t)(r % n);
            if (idx[i] >= 0 && (uint32_t)idx[i] < n)
                memcpy(want + (size_t)idx[i] * w, up + (size_t)i * w, w * sizeof *up);
        }
        lmnn_tensor a, u, o = {0};
        lmnn_tensor ix = upload_index(&is, (const uint32_t *)idx, LMNN_INT32);
        CHECK_OK(nn_upload(&as, x, dt, LMNN_TILE, &a));
        CHECK_OK(nn_upload(&us, up, dt, LMNN_TILE, &u));
        CHECK_OK(lmnn_scatter_rows(a, ix, u, NULL, &o));
        check_scattered(o, want, n, w, c);
        /* a itself is unchanged. */
        float *y = nn_download(a);
        CHECK(y && memcmp(y, x, (size_t)n * w * sizeof *x) == 0);
        free(y);
        lmnn_tensor_free(o);
        lmnn_tensor_free(a);
        lmnn_tensor_free(u);
        lmnn_tensor_free(ix);
        free(x);
        free(up);
        free(want);
        free(idx);
    }
    /* Bad arguments. */
    lmnn_shape as = LMNN_SHAPE(4, 8), us = LMNN_SHAPE(2, 8), is = LMNN_SHAPE(2);
    float z[32] = {0};
    uint32_t two[2] = {0, 1};
    lmnn_tensor a, u, rm, b8, ix = upload_index(&is, two, LMNN_UINT32), o;
    CHECK_OK(nn_upload(&as, z, LMNN_FLOAT32, LMNN_TILE, &a));
    CHECK_OK(nn_upload(&us, z, LMNN_FLOAT32, LMNN_TILE, &u));
    CHECK_OK(nn_upload(&us, z, LMNN_FLOAT32, LMNN_ROW_MAJOR, &rm));
    CHECK_OK(nn_upload(&as, z, LMNN_BFLOAT8_B, LMNN_TILE, &b8));
    CHECK_FAILS(lmnn_scatter_rows(a, ix, rm, NULL, &o), LM_ERR_INVALID_ARGUMENT,
                "lmnn_scatter_rows: updates: expected a tile tensor of 2 dims or more, given "
                "row_major [2, 8]");
    CHECK_FAILS(lmnn_scatter_rows(b8, ix, u, NULL, &o), LM_ERR_INVALID_ARGUMENT,
                "a: bfloat8_b rows share exponents with their neighbours");
    CHECK_FAILS(lmnn_scatter_rows(a, ix, a, NULL, &o), LM_ERR_INVALID_ARGUMENT,
                "index: expected 4 elements (4 rows of updates, an entry every 1), given [2]");
    CHECK_FAILS(lmnn_scatter_rows(u, ix, a, NULL, &o), LM_ERR_INVALID_ARGUMENT,
                "index: expected 4 elements");
    CHECK_FAILS(lmnn_scatter_rows(a, a, u, NULL, &o), LM_ERR_INVALID_ARGUMENT,
                "index: expected a row_major uint32 or int32 tensor");
    CHECK_FAILS(lmnn_scatter_rows(a, ix, u, NULL, NULL), LM_ERR_INVALID_ARGUMENT, "out is NULL");
    lmnn_scatter_options so;
    lmnn_scatter_options_init(&so);
    so.output.dtype = LMNN_BFLOAT16;
    CHECK_FAILS(lmnn_scatter_rows(a, ix, u, &so, &o), LM_ERR_INVALID_ARGUMENT,
                "output: dtype bfloat16, expected a's float32");
    lmnn_scatter_options_init(&so);
    so.row_scale = 2;
    CHECK_FAILS(lmnn_scatter_rows(a, ix, u, &so, &o), LM_ERR_INVALID_ARGUMENT,
                "row_scale 2 and offsets map entries along a dim: index_dim is 0");
    so.row_scale = 1;
    so.offsets = ix;
    CHECK_FAILS(lmnn_scatter_rows(a, ix, u, &so, &o), LM_ERR_INVALID_ARGUMENT,
                "row_scale 1 and offsets map entries along a dim: index_dim is 0");
    so.index_dim = 4;
    so.row_scale = 0;
    CHECK_FAILS(lmnn_scatter_rows(a, ix, u, &so, &o), LM_ERR_INVALID_ARGUMENT,
                "index_dim 4 and row_scale 0: expected 1 to 2^31 - 1 and at least 1");
    so.row_scale = 1;
    so.index_dim = 1u << 31;
    CHECK_FAILS(lmnn_scatter_rows(a, ix, u, &so, &o), LM_ERR_INVALID_ARGUMENT,
                "index_dim 2147483648 and row_scale 1");
    so.index_dim = 4;
    so.offsets = a;
    CHECK_FAILS(lmnn_scatter_rows(a, ix, u, &so, &o), LM_ERR_INVALID_ARGUMENT,
                "offsets: expected a row_major uint32 or int32 tensor");
    lmnn_shape three = LMNN_SHAPE(3);
    lmnn_tensor ix3 = upload_index(&three, (const uint32_t[]){0, 1, 2}, LMNN_UINT32);
    so.offsets = ix3;
    CHECK_FAILS(lmnn_scatter_rows(a, ix, u, &so, &o), LM_ERR_INVALID_ARGUMENT,
                "offsets: expected 2 entries (a row of updates each) in one row, given [3]");
    lmnn_scatter_options_init(&so);
    so.index_step = 0;
    CHECK_FAILS(lmnn_scatter_rows(a, ix, u, &so, &o), LM_ERR_INVALID_ARGUMENT,
                "index_step 0: expected at least 1");
    so.index_step = 2;
    CHECK_FAILS(lmnn_scatter_rows(a, ix, u, &so, &o), LM_ERR_INVALID_ARGUMENT,
                "index: expected 4 elements (2 rows of updates, an entry every 2), given [2]");
    lmnn_tensor_free(ix3);
    lmnn_shape ws = LMNN_SHAPE(2, 9);
    lmnn_tensor wide;
    CHECK_OK(nn_upload(&ws, z, LMNN_FLOAT32, LMNN_TILE, &wide));
    CHECK_FAILS(lmnn_scatter_rows(a, ix, wide, NULL, &o), LM_ERR_INVALID_ARGUMENT,
                "updates: expected float32 rows of a's width 8, given float32 [2, 9]");
    lmnn_tensor_free(wide);
    lmnn_tensor_free(a);
    lmnn_tensor_free(u);
    lmnn_tensor_free(rm);
    lmnn_tensor_free(b8);
    lmnn_tensor_free(ix);
}

int main(void) {
    TEST_RUN(test_reshape);
    TEST_RUN(test_view_clone);
    TEST_RUN(test_permute);
    TEST_RUN(test_permute_reshaped);
    TEST_RUN(test_permute_reshaped_to);
    TEST_RUN(test_permute_blocks);
    TEST_RUN(test_slice);
    TEST_RUN(test_pad);
    TEST_RUN(test_repeat_expand);
    TEST_RUN(test_concat_split);
    TEST_RUN(test_concat_columns);
    TEST_RUN(test_concat_rows);
    TEST_RUN(test_index_select_gather);
    TEST_RUN(test_index_out_of_range);
    TEST_RUN(test_index_negative_from_end);
    TEST_RUN(test_embedding);
    TEST_RUN(test_gather_rows_weighted);
    TEST_RUN(test_scatter_rows);
    TEST_RUN(test_scatter_rows_mapped);
    TEST_RUN(test_upsample);
    TEST_RUN(test_misc);
    TEST_RUN(test_errors);
    TEST_RUN(test_large);
    nn_dev_close();
    return test_summary();
}
