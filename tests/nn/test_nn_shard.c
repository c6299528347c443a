/* Sharded tensors: memory configs with a shard spec (height, width, block;
 * L1 and DRAM; tile and row-major; uneven edge shards), host round trips,
 * lmnn_to_memory_config between any two configs (bit-exact, pages on the
 * cores the spec names), lmnn_full, the program cache, a Light Metal capture
 * and replay, ops refusing sharded tensors, and every error message. */
#include "lm_test_replay.h"
#include "nn_test.h"

static lm_core_range_set grid(uint32_t x0, uint32_t y0, uint32_t x1, uint32_t y1) {
    return lm_core_range_set_of(x0, y0, x1, y1);
}

static lmnn_memory_config sharded(lm_buffer_type type, lm_buffer_layout layout, uint32_t h,
                                  uint32_t w, lm_core_range_set g, bool col_major) {
    lmnn_memory_config m = {.type = type, .layout = layout};
    m.shard.grid = g;
    m.shard.height = h;
    m.shard.width = w;
    m.shard.orientation = col_major ? LMNN_SHARD_COL_MAJOR : LMNN_SHARD_ROW_MAJOR;
    return m;
}

static const lmnn_memory_config dram_interleaved = {.type = LM_BUFFER_DRAM,
                                                    .layout = LM_BUFFER_INTERLEAVED};
static const lmnn_memory_config l1_interleaved = {.type = LM_BUFFER_L1,
                                                  .layout = LM_BUFFER_INTERLEAVED};

static int is_float(lmnn_dtype d) {
    return d == LMNN_FLOAT32 || d == LMNN_BFLOAT16 || d == LMNN_BFLOAT8_B;
}

/* Host data of `dtype` (floats for float dtypes, random integers otherwise). */
static void *host_data(const lmnn_shape *s, lmnn_dtype dtype, uint64_t seed, size_t *out_size) {
    size_t vol = lmnn_shape_volume(s), es = lmnn_dtype_host_size(dtype);
    *out_size = vol * es;
    if (is_float(dtype)) return nn_rand_floats(vol, -50, 50, seed);
    uint8_t *v = malloc(*out_size);
    uint64_t st = seed * 77 + 5;
    for (size_t i = 0; i < *out_size; i++)
        v[i] = (uint8_t)nn_rand_u32(&st);
    return v;
}

static lm_status upload(const lmnn_shape *s, const void *data, size_t size, lmnn_dtype dtype,
                        lmnn_layout layout, const lmnn_memory_config *m, lmnn_tensor *out) {
    lmnn_tensor_options o;
    lmnn_tensor_options_init(&o);
    o.dtype = dtype;
    o.layout = layout;
    o.memory = *m;
    return lmnn_from_host(nn_dev(), s, data, size, &o, out);
}

/* The tensor's buffer, raw: its pages in order (a sharded buffer's read
 * gathers them), padding and all. */
static uint8_t *raw(lmnn_tensor t, uint64_t *out_size) {
    lmnn_tensor_info info;
    if (lmnn_tensor_get_info(t, &info)) return NULL;
    lm_buffer_size(info.buffer, out_size);
    uint8_t *v = malloc(*out_size);
    if (lm_enqueue_read_buffer(lm_device_command_queue(info.device, 0), info.buffer, v, true)) {
        free(v);
        return NULL;
    }
    return v;
}

static int same_raw(lmnn_tensor a, lmnn_tensor b) {
    uint64_t na = 0, nb = 0;
    uint8_t *x = raw(a, &na), *y = raw(b, &nb);
    int ok = x && y && na == nb && !memcmp(x, y, na);
    free(x);
    free(y);
    return ok;
}

static int same_memory(const lmnn_memory_config *a, const lmnn_memory_config *b) {
    if (a->type != b->type || a->layout != b->layout) return 0;
    if (a->layout == LM_BUFFER_INTERLEAVED) return 1;
    const lmnn_shard_spec *x = &a->shard, *y = &b->shard;
    return x->height == y->height && x->width == y->width && x->orientation == y->orientation &&
           x->grid.count == y->grid.count &&
           !memcmp(x->grid.ranges, y->grid.ranges, x->grid.count * sizeof x->grid.ranges[0]);
}

typedef struct shard_case {
    const char *name;
    lmnn_shape shape;
    lmnn_dtype dtype;
    lmnn_layout layout;
    lmnn_memory_config memory;
} shard_case;

static size_t cases(shard_case *c) {
    size_t n = 0;
    /* [3, 50, 70] tile: a 192x96 matrix; 2 shards of 128 rows, the second
     * half empty, on 2 of 4 cores. */
    c[n++] = (shard_case){
        "height L1 tile f32 uneven", LMNN_SHAPE(3, 50, 70), LMNN_FLOAT32, LMNN_TILE,
        sharded(LM_BUFFER_L1, LM_BUFFER_HEIGHT_SHARDED, 128, 96, grid(0, 0, 3, 0), false)};
    /* 64x320: 4 shards of 3 tile columns, the last 1 wide; column-major. */
    c[n++] = (shard_case){
        "width L1 tile bf16 col-major", LMNN_SHAPE(64, 300), LMNN_BFLOAT16, LMNN_TILE,
        sharded(LM_BUFFER_L1, LM_BUFFER_WIDTH_SHARDED, 64, 96, grid(2, 3, 3, 4), true)};
    /* 128x224: 2 x 3 block shards of 2x3 tiles, uneven both ways. */
    c[n++] = (shard_case){
        "block L1 tile f32", LMNN_SHAPE(100, 200), LMNN_FLOAT32, LMNN_TILE,
        sharded(LM_BUFFER_L1, LM_BUFFER_BLOCK_SHARDED, 64, 96, grid(1, 1, 3, 2), false)};
    c[n++] = (shard_case){
        "block L1 tile f32 col-major", LMNN_SHAPE(100, 200), LMNN_FLOAT32, LMNN_TILE,
        sharded(LM_BUFFER_L1, LM_BUFFER_BLOCK_SHARDED, 64, 96, grid(1, 1, 2, 3), true)};
    c[n++] = (shard_case){
        "height DRAM tile f32", LMNN_SHAPE(2, 33, 65), LMNN_FLOAT32, LMNN_TILE,
        sharded(LM_BUFFER_DRAM, LM_BUFFER_HEIGHT_SHARDED, 32, 96, grid(4, 0, 7, 0), false)};
    c[n++] = (shard_case){
        "block DRAM tile int32", LMNN_SHAPE(70, 100), LMNN_INT32, LMNN_TILE,
        sharded(LM_BUFFER_DRAM, LM_BUFFER_BLOCK_SHARDED, 96, 64, grid(0, 0, 1, 0), false)};
    /* Row-major: a page per row. 37 rows in shards of 10 (the last 7). */
    c[n++] = (shard_case){
        "height L1 row-major f32", LMNN_SHAPE(37, 50), LMNN_FLOAT32, LMNN_ROW_MAJOR,
        sharded(LM_BUFFER_L1, LM_BUFFER_HEIGHT_SHARDED, 10, 50, grid(0, 0, 1, 1), false)};
    c[n++] = (shard_case){
        "height DRAM row-major u32", LMNN_SHAPE(5, 7, 9), LMNN_UINT32, LMNN_ROW_MAJOR,
        sharded(LM_BUFFER_DRAM, LM_BUFFER_HEIGHT_SHARDED, 8, 9, grid(0, 0, 11, 0), false)};
    c[n++] = (shard_case){
        "block L1 row-major i32", LMNN_SHAPE(64, 40), LMNN_INT32, LMNN_ROW_MAJOR,
        sharded(LM_BUFFER_L1, LM_BUFFER_BLOCK_SHARDED, 16, 40, grid(5, 2, 5, 5), false)};
    c[n++] = (shard_case){
        "height L1 row-major u16 scalar", lmnn_shape_of(0, NULL), LMNN_UINT16, LMNN_ROW_MAJOR,
        sharded(LM_BUFFER_L1, LM_BUFFER_HEIGHT_SHARDED, 1, 1, grid(7, 7, 7, 7), false)};
    c[n++] = (shard_case){
        "width L1 row-major u8 one shard", LMNN_SHAPE(3, 33), LMNN_UINT8, LMNN_ROW_MAJOR,
        sharded(LM_BUFFER_L1, LM_BUFFER_WIDTH_SHARDED, 3, 33, grid(0, 7, 0, 7), false)};
    c[n++] = (shard_case){
        "height L1 tile bfp8", LMNN_SHAPE(64, 64), LMNN_BFLOAT8_B, LMNN_TILE,
        sharded(LM_BUFFER_L1, LM_BUFFER_HEIGHT_SHARDED, 32, 64, grid(6, 0, 6, 1), false)};
    c[n++] = (shard_case){
        "height L1 tile f32 rank 1", LMNN_SHAPE(1), LMNN_FLOAT32, LMNN_TILE,
        sharded(LM_BUFFER_L1, LM_BUFFER_HEIGHT_SHARDED, 32, 32, grid(0, 0, 0, 0), false)};
    /* Multi-core: 1024 tiles in 64 block shards of 4x4 tiles over the 8x8
     * grid. */
    c[n++] = (shard_case){
        "block L1 tile bf16 8x8", LMNN_SHAPE(1024, 1024), LMNN_BFLOAT16, LMNN_TILE,
        sharded(LM_BUFFER_L1, LM_BUFFER_BLOCK_SHARDED, 128, 128, grid(0, 0, 7, 7), false)};
    return n;
}

/* Each case: host -> sharded -> host, interleaved -> sharded -> interleaved,
 * all bit-exact against the interleaved tensor of the same data. */
static void test_round_trips(void) {
    shard_case c[32];
    size_t n = cases(c);
    for (size_t i = 0; i < n; i++) {
        size_t size;
        void *x = host_data(&c[i].shape, c[i].dtype, i + 1, &size);
        uint8_t *want = malloc(size), *got = malloc(size);
        lmnn_tensor flat, sh, sh2, back, l1;
        CHECK_OK(upload(&c[i].shape, x, size, c[i].dtype, c[i].layout, &dram_interleaved, &flat));
        CHECK_OK(lmnn_to_host(flat, want, size));
        if (c[i].dtype == LMNN_FLOAT32 || !is_float(c[i].dtype)) CHECK(!memcmp(want, x, size));
        /* host -> sharded -> host */
        CHECK_OK(upload(&c[i].shape, x, size, c[i].dtype, c[i].layout, &c[i].memory, &sh));
        lmnn_tensor_info info;
        CHECK_OK(lmnn_tensor_get_info(sh, &info));
        CHECK(same_memory(&info.memory, &c[i].memory));
        memset(got, 0xAB, size);
        CHECK_OK(lmnn_to_host(sh, got, size));
        if (memcmp(got, want, size)) printf("  case %s: to_host differs\n", c[i].name);
        CHECK(!memcmp(got, want, size));
        CHECK(same_raw(sh, flat));
        /* interleaved -> sharded -> interleaved (L1), and back to DRAM */
        CHECK_OK(lmnn_to_memory_config(flat, &c[i].memory, &sh2));
        CHECK(same_raw(sh2, flat));
        CHECK_OK(lmnn_to_memory_config(sh2, &l1_interleaved, &l1));
        CHECK_OK(lmnn_tensor_get_info(l1, &info));
        CHECK(same_memory(&info.memory, &l1_interleaved));
        CHECK(same_raw(l1, flat));
        CHECK_OK(lmnn_to_memory_config(sh, &dram_interleaved, &back));
        CHECK(same_raw(back, flat));
        if (c[i].dtype == LMNN_FLOAT32 && c[i].layout == LMNN_TILE) CHECK(nn_padding_is_zero(back));
        memset(got, 0xAB, size);
        CHECK_OK(lmnn_to_host(back, got, size));
        CHECK(!memcmp(got, want, size));
        lmnn_tensor t[] = {flat, sh, sh2, back, l1};
        for (size_t k = 0; k < 5; k++)
            CHECK_OK(lmnn_tensor_free(t[k]));
        free(x);
        free(want);
        free(got);
    }
}

/* One sharding to another, and a zero memory config field keeping the
 * input's. */
static void test_reshard(void) {
    lmnn_shape s = LMNN_SHAPE(100, 200);
    float *x = nn_rand_floats(100 * 200, -1, 1, 11);
    size_t size = 100 * 200 * sizeof(float);
    lmnn_memory_config h = sharded(LM_BUFFER_L1, LM_BUFFER_HEIGHT_SHARDED, 32, 224,
                                   grid(0, 0, 7, 0), false),
                       w = sharded(LM_BUFFER_DRAM, LM_BUFFER_WIDTH_SHARDED, 128, 32,
                                   grid(0, 0, 11, 0), false),
                       b = sharded(LM_BUFFER_L1, LM_BUFFER_BLOCK_SHARDED, 32, 64, grid(2, 2, 5, 5),
                                   true);
    lmnn_tensor t0, t1, t2, t3, t4;
    CHECK_OK(upload(&s, x, size, LMNN_FLOAT32, LMNN_TILE, &h, &t0));
    CHECK_OK(lmnn_to_memory_config(t0, &w, &t1));
    CHECK_OK(lmnn_to_memory_config(t1, &b, &t2));
    /* type only: keeps block sharding and its spec, moves to DRAM? Not for
     * L1-core grids: (2,2)-(5,5) is outside the DRAM banks' (b, 0). */
    lmnn_memory_config to_dram = {.type = LM_BUFFER_DRAM};
    CHECK_FAILS(lmnn_to_memory_config(t2, &to_dram, &t3), LM_ERR_INVALID_ARGUMENT,
                "lmnn_to_memory_config: memory.shard.grid: range 0 (2,2)-(5,5) is empty or "
                "outside the DRAM banks, bank b as core (b, 0): (0,0)-(11,0)");
    lmnn_memory_config keep = {0};
    CHECK_OK(lmnn_to_memory_config(t2, &keep, &t3));
    lmnn_tensor_info info;
    CHECK_OK(lmnn_tensor_get_info(t3, &info));
    CHECK(same_memory(&info.memory, &b));
    lmnn_memory_config interleave = {.layout = LM_BUFFER_INTERLEAVED};
    CHECK_OK(lmnn_to_memory_config(t3, &interleave, &t4));
    CHECK_OK(lmnn_tensor_get_info(t4, &info));
    CHECK(info.memory.type == LM_BUFFER_L1 && info.memory.layout == LM_BUFFER_INTERLEAVED &&
          info.memory.shard.grid.count == 0);
    float *y = nn_download(t4);
    CHECK(y && !memcmp(y, x, size));
    free(y);
    lmnn_tensor t[] = {t0, t1, t2, t3, t4};
    for (size_t k = 0; k < 5; k++)
        CHECK_OK(lmnn_tensor_free(t[k]));
    free(x);
}

/* The pages sit on the cores the spec names: block shards of [100, 200]
 * float32 tiles (4 x 7 tiles) in 2x3-tile shards on (1,1)-(3,2). */
static void test_placement(void) {
    lmnn_shape s = LMNN_SHAPE(100, 200);
    float *x = nn_rand_floats(100 * 200, -1, 1, 12);
    size_t size = 100 * 200 * sizeof(float);
    for (int col = 0; col < 2; col++) {
        lmnn_memory_config m = sharded(LM_BUFFER_L1, LM_BUFFER_BLOCK_SHARDED, 64, 96,
                                       col ? grid(1, 1, 2, 3) : grid(1, 1, 3, 2), col);
        lmnn_tensor flat, sh;
        CHECK_OK(upload(&s, x, size, LMNN_FLOAT32, LMNN_TILE, &dram_interleaved, &flat));
        CHECK_OK(lmnn_to_memory_config(flat, &m, &sh));
        uint64_t n = 0;
        uint8_t *pages = raw(flat, &n);
        CHECK(pages && n == 28 * 4096);
        lmnn_tensor_info info;
        CHECK_OK(lmnn_tensor_get_info(sh, &info));
        CHECK_OK(lm_finish(lm_device_command_queue(nn_dev(), 0)));
        uint64_t addr = 0;
        CHECK_OK(lm_buffer_address(info.buffer, &addr));
        uint8_t tile[4096];
        for (uint32_t p = 0; p < 28; p++) {
            uint32_t tr = p / 7, tc = p % 7, sr = tr / 2, sc = tc / 3;
            lm_core core = col ? (lm_core){1 + sr, 1 + sc} : (lm_core){1 + sc, 1 + sr};
            uint32_t local = (tr % 2) * 3 + tc % 3;
            CHECK_OK(lm_device_read_l1(nn_dev(), core, addr + local * 4096, 4096, tile));
            CHECK(!memcmp(tile, pages + p * 4096, 4096));
        }
        free(pages);
        CHECK_OK(lmnn_tensor_free(flat));
        CHECK_OK(lmnn_tensor_free(sh));
    }
    free(x);
}

static void test_full(void) {
    lmnn_shape s = LMNN_SHAPE(3, 40, 70);
    lmnn_tensor_options o;
    lmnn_tensor_options_init(&o);
    o.dtype = LMNN_FLOAT32;
    o.memory = sharded(LM_BUFFER_L1, LM_BUFFER_HEIGHT_SHARDED, 64, 96, grid(0, 0, 2, 1), true);
    lmnn_tensor t;
    CHECK_OK(lmnn_full(nn_dev(), &s, 2.5, &o, &t));
    lmnn_tensor_info info;
    CHECK_OK(lmnn_tensor_get_info(t, &info));
    CHECK(same_memory(&info.memory, &o.memory));
    float *y = nn_download(t);
    CHECK(y);
    for (size_t i = 0; i < 3 * 40 * 70; i++)
        CHECK(y[i] == 2.5f);
    free(y);
    lmnn_tensor back;
    CHECK_OK(lmnn_to_memory_config(t, &dram_interleaved, &back));
    CHECK(nn_padding_is_zero(back));
    CHECK_OK(lmnn_tensor_free(back));
    CHECK_OK(lmnn_tensor_free(t));
    o.layout = LMNN_ROW_MAJOR;
    o.dtype = LMNN_INT32;
    o.memory = sharded(LM_BUFFER_DRAM, LM_BUFFER_HEIGHT_SHARDED, 50, 70, grid(0, 0, 2, 0), false);
    CHECK_OK(lmnn_full(nn_dev(), &s, -7.9, &o, &t));
    int32_t v[3 * 40 * 70];
    CHECK_OK(lmnn_to_host(t, v, sizeof v));
    for (size_t i = 0; i < 3 * 40 * 70; i++)
        CHECK(v[i] == -7);
    CHECK_OK(lmnn_tensor_free(t));
}

/* Shard shapes worked out from a grid (ttnn.create_sharded_memory_config). */
static void test_create_config(void) {
    lm_device *dev = nn_dev();
    lmnn_memory_config m;
    lmnn_shape s1 = LMNN_SHAPE(3, 50, 70), s2 = LMNN_SHAPE(100, 200), s3 = LMNN_SHAPE(37, 50);
    lm_core_range_set g4 = grid(0, 0, 3, 0), g42 = grid(0, 0, 3, 1);
    CHECK_OK(lmnn_create_sharded_memory_config(dev, &s1, LMNN_TILE, LM_BUFFER_L1,
                                               LM_BUFFER_HEIGHT_SHARDED, &g4, LMNN_SHARD_ROW_MAJOR,
                                               &m));
    CHECK(m.type == LM_BUFFER_L1 && m.layout == LM_BUFFER_HEIGHT_SHARDED && m.shard.height == 64 &&
          m.shard.width == 96 && m.shard.grid.count == 1);
    CHECK_OK(lmnn_create_sharded_memory_config(dev, &s2, LMNN_TILE, LM_BUFFER_L1,
                                               LM_BUFFER_WIDTH_SHARDED, &g42, LMNN_SHARD_ROW_MAJOR,
                                               &m));
    CHECK(m.shard.height == 128 && m.shard.width == 32);
    CHECK_OK(lmnn_create_sharded_memory_config(dev, &s2, LMNN_TILE, LM_BUFFER_L1,
                                               LM_BUFFER_BLOCK_SHARDED, &g42, LMNN_SHARD_ROW_MAJOR,
                                               &m));
    CHECK(m.shard.height == 64 && m.shard.width == 64);
    CHECK_OK(lmnn_create_sharded_memory_config(dev, &s2, LMNN_TILE, LM_BUFFER_L1,
                                               LM_BUFFER_BLOCK_SHARDED, &g42, LMNN_SHARD_COL_MAJOR,
                                               &m));
    CHECK(m.shard.height == 32 && m.shard.width == 128);
    /* And it works: a round trip through it. */
    float *x = nn_rand_floats(100 * 200, -1, 1, 20);
    lmnn_tensor a, b;
    CHECK_OK(nn_upload(&s2, x, LMNN_FLOAT32, LMNN_TILE, &a));
    CHECK_OK(lmnn_to_memory_config(a, &m, &b));
    float *y = nn_download(b);
    CHECK(y && !memcmp(y, x, 100 * 200 * sizeof(float)));
    free(y);
    free(x);
    CHECK_OK(lmnn_tensor_free(a));
    CHECK_OK(lmnn_tensor_free(b));
    lm_core_range_set dr = grid(0, 0, 11, 0);
    CHECK_OK(lmnn_create_sharded_memory_config(dev, &s3, LMNN_ROW_MAJOR, LM_BUFFER_DRAM,
                                               LM_BUFFER_HEIGHT_SHARDED, &dr, LMNN_SHARD_ROW_MAJOR,
                                               &m));
    CHECK(m.shard.height == 4 && m.shard.width == 50);
    /* Errors. */
    CHECK_FAILS(lmnn_create_sharded_memory_config(dev, &s3, LMNN_ROW_MAJOR, LM_BUFFER_L1,
                                                  LM_BUFFER_WIDTH_SHARDED, &g4,
                                                  LMNN_SHARD_ROW_MAJOR, &m),
                LM_ERR_UNSUPPORTED,
                "lmnn_create_sharded_memory_config: result.shard.width: a row-major tensor keeps "
                "each row of 50 elements in one page");
    CHECK_FAILS(lmnn_create_sharded_memory_config(dev, &s3, LMNN_TILE, LM_BUFFER_L1,
                                                  LM_BUFFER_INTERLEAVED, &g4, LMNN_SHARD_ROW_MAJOR,
                                                  &m),
                LM_ERR_INVALID_ARGUMENT,
                "lmnn_create_sharded_memory_config: strategy: expected LM_BUFFER_HEIGHT, WIDTH or "
                "BLOCK_SHARDED, given 1");
    lm_core_range_set two = g4;
    two.ranges[two.count++] = (lm_core_range){{5, 5}, {5, 5}};
    CHECK_FAILS(lmnn_create_sharded_memory_config(dev, &s2, LMNN_TILE, LM_BUFFER_L1,
                                                  LM_BUFFER_BLOCK_SHARDED, &two,
                                                  LMNN_SHARD_ROW_MAJOR, &m),
                LM_ERR_INVALID_ARGUMENT,
                "lmnn_create_sharded_memory_config: grid: expected one rectangle for block "
                "sharding, given 2 ranges");
    lm_core_range_set wide = grid(0, 0, 8, 0);
    CHECK_FAILS(lmnn_create_sharded_memory_config(dev, &s2, LMNN_TILE, LM_BUFFER_L1,
                                                  LM_BUFFER_HEIGHT_SHARDED, &wide,
                                                  LMNN_SHARD_ROW_MAJOR, &m),
                LM_ERR_INVALID_ARGUMENT,
                "lmnn_create_sharded_memory_config: result.shard.grid: range 0 (0,0)-(8,0) is "
                "empty or outside the worker grid (0,0)-(7,7)");
    CHECK_FAILS(lmnn_create_sharded_memory_config(dev, &s2, LMNN_TILE, LM_BUFFER_L1,
                                                  LM_BUFFER_HEIGHT_SHARDED, NULL,
                                                  LMNN_SHARD_ROW_MAJOR, &m),
                LM_ERR_INVALID_ARGUMENT, "lmnn_create_sharded_memory_config: grid is NULL");
    CHECK_FAILS(lmnn_create_sharded_memory_config(NULL, &s2, LMNN_TILE, LM_BUFFER_L1,
                                                  LM_BUFFER_HEIGHT_SHARDED, &g4,
                                                  LMNN_SHARD_ROW_MAJOR, &m),
                LM_ERR_INVALID_HANDLE, "lmnn_create_sharded_memory_config: device is NULL");
}

static void test_cache(void) {
    lm_device *dev = nn_dev();
    lmnn_shape s = LMNN_SHAPE(64, 128);
    float *x = nn_rand_floats(64 * 128, -1, 1, 13);
    lmnn_tensor a, b;
    CHECK_OK(nn_upload(&s, x, LMNN_FLOAT32, LMNN_TILE, &a));
    lmnn_memory_config m1 = sharded(LM_BUFFER_L1, LM_BUFFER_HEIGHT_SHARDED, 32, 128,
                                    grid(0, 0, 1, 0), false),
                       m2 = sharded(LM_BUFFER_L1, LM_BUFFER_HEIGHT_SHARDED, 32, 128,
                                    grid(0, 1, 1, 1), false),
                       m3 = sharded(LM_BUFFER_L1, LM_BUFFER_HEIGHT_SHARDED, 32, 128,
                                    grid(0, 0, 1, 0), true);
    CHECK_OK(lmnn_to_memory_config(a, &m1, &b));
    free(nn_download(b)); /* warms to_host's programs too */
    CHECK_OK(lmnn_tensor_free(b));
    lmnn_program_cache_stats s0, s1;
    CHECK_OK(lmnn_program_cache_get_stats(dev, &s0));
    for (int i = 0; i < 3; i++) {
        CHECK_OK(lmnn_to_memory_config(a, &m1, &b));
        float *y = nn_download(b);
        CHECK(y && !memcmp(y, x, sizeof(float) * 64 * 128));
        free(y);
        CHECK_OK(lmnn_tensor_free(b));
    }
    CHECK_OK(lmnn_program_cache_get_stats(dev, &s1));
    /* Each round: the copy and to_host's gather and untilize, all hits. */
    CHECK(s1.misses == s0.misses && s1.hits >= s0.hits + 3);
    /* Other cores, another orientation: other programs. */
    CHECK_OK(lmnn_to_memory_config(a, &m2, &b));
    CHECK_OK(lmnn_tensor_free(b));
    CHECK_OK(lmnn_program_cache_get_stats(dev, &s0));
    CHECK(s0.misses == s1.misses + 1);
    CHECK_OK(lmnn_to_memory_config(a, &m3, &b));
    CHECK_OK(lmnn_tensor_free(b));
    CHECK_OK(lmnn_program_cache_get_stats(dev, &s1));
    CHECK(s1.misses == s0.misses + 1);
    /* A hit with other tensors at other addresses: only the addresses
     * change. */
    float *x2 = nn_rand_floats(64 * 128, -1, 1, 17);
    lmnn_tensor a2, b1, b2;
    CHECK_OK(nn_upload(&s, x2, LMNN_FLOAT32, LMNN_TILE, &a2));
    CHECK_OK(lmnn_to_memory_config(a, &m1, &b1));
    CHECK_OK(lmnn_to_memory_config(a2, &m1, &b2));
    CHECK_OK(lmnn_program_cache_get_stats(dev, &s0));
    CHECK(s0.misses == s1.misses);
    float *y1 = nn_download(b1), *y2 = nn_download(b2);
    CHECK(y1 && y2 && !memcmp(y1, x, sizeof(float) * 64 * 128) &&
          !memcmp(y2, x2, sizeof(float) * 64 * 128));
    free(y1);
    free(y2);
    lmnn_tensor t[] = {a, a2, b1, b2};
    for (size_t k = 0; k < 4; k++)
        CHECK_OK(lmnn_tensor_free(t[k]));
    free(x);
    free(x2);
}

/* to_memory_config in a metal trace: cached programs, new input data, the
 * same trace. */
static void test_metal_trace(void) {
    lm_device *dev = nn_dev();
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    lmnn_shape s = LMNN_SHAPE(96, 160);
    float *x = nn_rand_floats(96 * 160, -1, 1, 18), *x2 = nn_rand_floats(96 * 160, -1, 1, 19);
    size_t size = 96 * 160 * sizeof(float);
    float *got = malloc(size);
    lmnn_memory_config b =
        sharded(LM_BUFFER_L1, LM_BUFFER_BLOCK_SHARDED, 32, 64, grid(0, 0, 2, 2), false);
    lmnn_tensor in, sh, out, sh2, out2;
    CHECK_OK(nn_upload(&s, x, LMNN_FLOAT32, LMNN_TILE, &in));
    CHECK_OK(lmnn_to_memory_config(in, &b, &sh));
    CHECK_OK(lmnn_to_memory_config(sh, &l1_interleaved, &out));
    uint32_t tid;
    CHECK_OK(lm_begin_trace_capture(cq, &tid));
    CHECK_OK(lmnn_to_memory_config(in, &b, &sh2));
    CHECK_OK(lmnn_to_memory_config(sh2, &l1_interleaved, &out2));
    CHECK_OK(lm_end_trace_capture(cq, tid));
    CHECK_OK(lm_replay_trace(cq, tid, true));
    CHECK_OK(lmnn_to_host(out2, got, size));
    CHECK(!memcmp(got, x, size));
    /* New data into the input (tiles, as the device holds them). */
    lmnn_tensor in2;
    CHECK_OK(nn_upload(&s, x2, LMNN_FLOAT32, LMNN_TILE, &in2));
    uint64_t n = 0;
    uint8_t *tiles = raw(in2, &n);
    lmnn_tensor_info info;
    CHECK_OK(lmnn_tensor_get_info(in, &info));
    CHECK_OK(lm_enqueue_write_buffer(cq, info.buffer, tiles, true));
    CHECK_OK(lm_replay_trace(cq, tid, true));
    CHECK_OK(lmnn_to_host(out2, got, size));
    CHECK(!memcmp(got, x2, size));
    CHECK_OK(lm_release_trace(dev, tid));
    free(tiles);
    lmnn_tensor t[] = {in, sh, out, sh2, out2, in2};
    for (size_t k = 0; k < 6; k++)
        CHECK_OK(lmnn_tensor_free(t[k]));
    free(x);
    free(x2);
    free(got);
}

/* Under Light Metal capture: a height sharded row-major input -> tile ->
 * block sharded L1 -> width sharded DRAM -> interleaved -> row-major, height
 * sharded in DRAM; replayed bit-identically, with the sharded input replaced
 * and the sharded output read by name. */
static void test_capture_replay(void) {
    lm_device *dev;
    CHECK_OK(lm_device_open(NULL, &dev));
    lmnn_shape s = LMNN_SHAPE(70, 90);
    float *x = nn_rand_floats(70 * 90, -3, 3, 14);
    float live[70 * 90], got[70 * 90];
    lmnn_tensor_options o;
    lmnn_tensor_options_init(&o);
    o.dtype = LMNN_FLOAT32;
    o.layout = LMNN_ROW_MAJOR;
    lmnn_memory_config b = sharded(LM_BUFFER_L1, LM_BUFFER_BLOCK_SHARDED, 64, 64, grid(3, 3, 4, 5),
                                   false),
                       w = sharded(LM_BUFFER_DRAM, LM_BUFFER_WIDTH_SHARDED, 96, 32,
                                   grid(1, 0, 3, 0), false);
    lmnn_memory_config hin = sharded(LM_BUFFER_L1, LM_BUFFER_HEIGHT_SHARDED, 16, 90,
                                     grid(0, 0, 4, 0), false),
                       hout = sharded(LM_BUFFER_DRAM, LM_BUFFER_HEIGHT_SHARDED, 8, 90,
                                      grid(0, 0, 8, 0), true);
    o.memory = hin;
    CHECK_OK(lm_light_metal_begin_capture(dev, NULL));
    lmnn_tensor xin, t[7];
    CHECK_OK(lmnn_from_host(dev, &s, x, sizeof live, &o, &xin));
    CHECK_OK(lmnn_capture_name(xin, "x"));
    CHECK_OK(lmnn_to_memory_config(xin, &dram_interleaved, &t[5]));
    CHECK_OK(lmnn_to_layout(t[5], LMNN_TILE, &t[0]));
    CHECK_OK(lmnn_to_memory_config(t[0], &b, &t[1]));
    CHECK_OK(lmnn_to_memory_config(t[1], &w, &t[2]));
    CHECK_OK(lmnn_to_memory_config(t[2], &dram_interleaved, &t[3]));
    CHECK_OK(lmnn_to_layout(t[3], LMNN_ROW_MAJOR, &t[4]));
    CHECK_OK(lmnn_to_memory_config(t[4], &hout, &t[6]));
    CHECK_OK(lmnn_capture_name(t[6], "y"));
    CHECK_OK(lmnn_to_host(t[6], live, sizeof live));
    CHECK(!memcmp(live, x, sizeof live));
    lm_binary *bin;
    CHECK_OK(lm_light_metal_end_capture(dev, &bin));
    CHECK_OK(lm_device_close(dev));
    lm_replay *r;
    REPLAY_RUN(bin, r);
    CHECK_OK(lm_replay_get_output(r, "y", got, sizeof got));
    CHECK(!memcmp(got, live, sizeof got));
    float *x2 = nn_rand_floats(70 * 90, -3, 3, 15);
    CHECK_OK(lm_replay_set_input(r, "x", x2, sizeof got));
    CHECK_OK(lm_replay_run(r, NULL, NULL, NULL));
    CHECK_OK(lm_replay_get_output(r, "y", got, sizeof got));
    CHECK(!memcmp(got, x2, sizeof got));
    lm_replay_close(r);
    lm_binary_free(bin);
    free(x);
    free(x2);
}

/* Ops without a sharded path refuse sharded tensors with a pointer to
 * lmnn_to_memory_config; the device stays usable. */
static void test_ops_refuse(void) {
    lmnn_shape s = LMNN_SHAPE(64, 64);
    float *x = nn_rand_floats(64 * 64, -1, 1, 16);
    lmnn_memory_config h =
        sharded(LM_BUFFER_L1, LM_BUFFER_HEIGHT_SHARDED, 32, 64, grid(0, 0, 1, 0), false);
    lmnn_tensor a, sh, rm, o;
    CHECK_OK(nn_upload(&s, x, LMNN_FLOAT32, LMNN_TILE, &a));
    CHECK_OK(lmnn_to_memory_config(a, &h, &sh));
    CHECK_FAILS(lmnn_softmax(sh, -1, NULL, &o), LM_ERR_UNSUPPORTED,
                "lmnn_softmax: a: expected an interleaved tensor, given a height sharded one (this "
                "op does not take sharded tensors yet: convert it with lmnn_to_memory_config)");
    CHECK_FAILS(lmnn_to_layout(sh, LMNN_ROW_MAJOR, &o), LM_ERR_UNSUPPORTED,
                "lmnn_to_layout: tensor: expected an interleaved tensor, given a height sharded");
    CHECK_FAILS(lmnn_typecast(sh, LMNN_BFLOAT16, &o), LM_ERR_UNSUPPORTED,
                "lmnn_typecast: tensor: expected an interleaved tensor");
    CHECK_FAILS(lmnn_matmul(sh, a, NULL, &o), LM_ERR_UNSUPPORTED,
                "lmnn_matmul: a: expected an interleaved tensor, given a height sharded one");
    lmnn_shape s2 = LMNN_SHAPE(4096);
    CHECK_FAILS(lmnn_reshape(sh, &s2, NULL, &o), LM_ERR_UNSUPPORTED,
                "lmnn_reshape: a: expected an interleaved tensor, given a height sharded one");
    lmnn_matmul_options mo;
    lmnn_matmul_options_init(&mo);
    mo.output.memory = h;
    CHECK_FAILS(lmnn_matmul(a, a, &mo, &o), LM_ERR_UNSUPPORTED,
                "lmnn_matmul: memory config: sharded tensors are not supported yet by this op "
                "(give it an interleaved config; lmnn_to_memory_config converts tensors)");
    /* Tensor queries and capture names take them. */
    size_t n = 0;
    CHECK_OK(lmnn_tensor_host_size(sh, &n));
    CHECK(n == 64 * 64 * sizeof(float));
    /* Still usable: through interleaved. */
    lmnn_tensor back, e;
    CHECK_OK(lmnn_to_memory_config(sh, &dram_interleaved, &back));
    CHECK_OK(lmnn_exp(back, &e));
    float *y = nn_download(e);
    CHECK(y);
    for (size_t i = 0; y && i < 64 * 64; i++)
        CHECK(fabs(y[i] - exp(x[i])) <= 1e-5 * exp(x[i]) + 1e-6);
    free(y);
    CHECK_OK(nn_upload(&s, x, LMNN_FLOAT32, LMNN_ROW_MAJOR, &rm));
    lmnn_tensor t[] = {a, sh, rm, back, e};
    for (size_t k = 0; k < 5; k++)
        CHECK_OK(lmnn_tensor_free(t[k]));
    free(x);
}

/* Unary ops take sharded tensors as they are: every sharding, L1 and DRAM,
 * either orientation, edge shards; the result keeps the input's memory
 * config unless output.memory names another (sharded or interleaved), and
 * equals the interleaved op's result bit for bit. */
static void test_unary_sharded(void) {
    lmnn_shape s = LMNN_SHAPE(3, 70, 100); /* 9 x 4 tiles as a matrix; edges */
    float *x = nn_rand_floats(3 * 70 * 100, -2, 2, 31);
    lmnn_memory_config mcs[] = {
        sharded(LM_BUFFER_L1, LM_BUFFER_HEIGHT_SHARDED, 64, 128, grid(0, 0, 4, 0), false),
        sharded(LM_BUFFER_L1, LM_BUFFER_WIDTH_SHARDED, 288, 32, grid(0, 0, 3, 0), false),
        sharded(LM_BUFFER_L1, LM_BUFFER_BLOCK_SHARDED, 96, 64, grid(0, 0, 1, 2), false),
        sharded(LM_BUFFER_L1, LM_BUFFER_BLOCK_SHARDED, 96, 64, grid(0, 0, 2, 1), true),
        sharded(LM_BUFFER_DRAM, LM_BUFFER_HEIGHT_SHARDED, 32, 128, grid(0, 0, 8, 0), false),
    };
    lmnn_tensor a, want, want2;
    CHECK_OK(nn_upload(&s, x, LMNN_FLOAT32, LMNN_TILE, &a));
    CHECK_OK(lmnn_exp(a, &want));
    lmnn_unary_options uo;
    lmnn_unary_options_init(&uo, LMNN_CLAMP);
    uo.alpha = -0.5, uo.beta = 0.75;
    CHECK_OK(lmnn_unary(LMNN_CLAMP, a, &uo, &want2));
    for (size_t k = 0; k < sizeof mcs / sizeof mcs[0]; k++) {
        lmnn_tensor sh, y, yi, back;
        lmnn_tensor_info info;
        CHECK_OK(lmnn_to_memory_config(a, &mcs[k], &sh));
        CHECK_OK(lmnn_exp(sh, &y));
        CHECK_OK(lmnn_tensor_get_info(y, &info));
        CHECK(same_memory(&info.memory, &mcs[k]));
        CHECK_OK(lmnn_to_memory_config(y, &dram_interleaved, &back));
        CHECK(same_raw(back, want));
        /* Sharded in, interleaved out, with parameters. */
        lmnn_unary_options o2 = uo;
        o2.output.memory = l1_interleaved;
        CHECK_OK(lmnn_unary(LMNN_CLAMP, sh, &o2, &yi));
        CHECK(same_raw(yi, want2));
        lmnn_tensor t[] = {sh, y, yi, back};
        for (size_t i = 0; i < 4; i++)
            CHECK_OK(lmnn_tensor_free(t[i]));
    }
    /* Interleaved in, sharded out. */
    lmnn_unary_options o3;
    lmnn_unary_options_init(&o3, LMNN_EXP);
    o3.output.memory = mcs[2];
    lmnn_tensor ys, back;
    CHECK_OK(lmnn_unary(LMNN_EXP, a, &o3, &ys));
    CHECK_OK(lmnn_to_memory_config(ys, &dram_interleaved, &back));
    CHECK(same_raw(back, want));
    /* A bad sharded output config is refused precisely. */
    o3.output.memory =
        sharded(LM_BUFFER_L1, LM_BUFFER_HEIGHT_SHARDED, 40, 128, grid(0, 0, 7, 0), false);
    lmnn_tensor bad;
    CHECK_FAILS(lmnn_unary(LMNN_EXP, a, &o3, &bad), LM_ERR_INVALID_ARGUMENT,
                "lmnn_exp: memory.shard: expected a shard height and width in multiples of 32 "
                "(whole tiles) for a tile tensor, given 40x128");
    lmnn_tensor t[] = {a, want, want2, ys, back};
    for (size_t i = 0; i < 5; i++)
        CHECK_OK(lmnn_tensor_free(t[i]));
    free(x);
}

/* Binary ops take sharded operands and outputs, broadcasting included:
 * results bit-identical to the interleaved op's. */
static void test_binary_sharded(void) {
    lmnn_shape s = LMNN_SHAPE(2, 70, 100), rs = LMNN_SHAPE(1, 100), cs = LMNN_SHAPE(2, 70, 1);
    float *x = nn_rand_floats(2 * 70 * 100, -2, 2, 41), *r = nn_rand_floats(100, -1, 1, 42);
    float *c = nn_rand_floats(2 * 70, -1, 1, 43);
    lmnn_memory_config hs =
        sharded(LM_BUFFER_L1, LM_BUFFER_HEIGHT_SHARDED, 64, 128, grid(0, 0, 2, 0), false);
    lmnn_memory_config bs =
        sharded(LM_BUFFER_L1, LM_BUFFER_BLOCK_SHARDED, 96, 64, grid(0, 0, 1, 1), false);
    lmnn_tensor a, row, col, want_add, want_where, want_mul;
    CHECK_OK(nn_upload(&s, x, LMNN_FLOAT32, LMNN_TILE, &a));
    CHECK_OK(nn_upload(&rs, r, LMNN_FLOAT32, LMNN_TILE, &row));
    CHECK_OK(nn_upload(&cs, c, LMNN_FLOAT32, LMNN_TILE, &col));
    CHECK_OK(lmnn_add(a, row, &want_add));
    CHECK_OK(lmnn_mul(a, col, &want_mul));
    CHECK_OK(lmnn_where(a, row, col, &want_where));
    lmnn_tensor sa, srow, y, back;
    CHECK_OK(lmnn_to_memory_config(a, &hs, &sa));
    lmnn_memory_config rws =
        sharded(LM_BUFFER_L1, LM_BUFFER_WIDTH_SHARDED, 32, 32, grid(4, 0, 7, 0), false);
    CHECK_OK(lmnn_to_memory_config(row, &rws, &srow));
    /* Sharded a, interleaved row: the output is like a (sharded). */
    CHECK_OK(lmnn_add(sa, row, &y));
    lmnn_tensor_info info;
    CHECK_OK(lmnn_tensor_get_info(y, &info));
    CHECK(same_memory(&info.memory, &hs));
    CHECK_OK(lmnn_to_memory_config(y, &dram_interleaved, &back));
    CHECK(same_raw(back, want_add));
    CHECK_OK(lmnn_tensor_free(y));
    CHECK_OK(lmnn_tensor_free(back));
    /* Column broadcast into a block-sharded output in L1. */
    lmnn_binary_options bo;
    lmnn_binary_options_init(&bo);
    bo.output.memory = bs;
    CHECK_OK(lmnn_binary(LMNN_BINARY_MUL, sa, col, &bo, &y));
    CHECK_OK(lmnn_to_memory_config(y, &dram_interleaved, &back));
    CHECK(same_raw(back, want_mul));
    CHECK_OK(lmnn_tensor_free(y));
    CHECK_OK(lmnn_tensor_free(back));
    /* where with a sharded condition and a sharded branch: the output is
     * like the condition. */
    CHECK_OK(lmnn_where(sa, srow, col, &y));
    CHECK_OK(lmnn_tensor_get_info(y, &info));
    CHECK(same_memory(&info.memory, &hs));
    CHECK_OK(lmnn_to_memory_config(y, &dram_interleaved, &back));
    CHECK(same_raw(back, want_where));
    lmnn_tensor t[] = {a, row, col, want_add, want_where, want_mul, sa, srow, y, back};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        CHECK_OK(lmnn_tensor_free(t[i]));
    free(x), free(r), free(c);
}

#define FAILS_FROM_HOST(shape, dtype, layout, mem, status, msg)                                    \
    do {                                                                                           \
        lmnn_tensor t_;                                                                            \
        lmnn_memory_config mem_ = (mem);                                                           \
        size_t sz_ = lmnn_shape_volume(&(shape)) * lmnn_dtype_host_size(dtype);                    \
        CHECK_FAILS(upload(&(shape), buf, sz_, dtype, layout, &mem_, &t_), status, msg);           \
    } while (0)

static void test_errors(void) {
    static float buf[4096 * 64];
    lmnn_shape s64 = LMNN_SHAPE(64, 64), s70 = LMNN_SHAPE(64, 70), rm = LMNN_SHAPE(8, 50),
               tall = LMNN_SHAPE(2080, 32), s128 = LMNN_SHAPE(128, 32), sq = LMNN_SHAPE(100, 200);
    lm_buffer_type L1 = LM_BUFFER_L1, DRAM = LM_BUFFER_DRAM;
    FAILS_FROM_HOST(s64, LMNN_FLOAT32, LMNN_TILE,
                    sharded(L1, LM_BUFFER_HEIGHT_SHARDED, 40, 64, grid(0, 0, 1, 0), false),
                    LM_ERR_INVALID_ARGUMENT,
                    "lmnn_from_host: opts.memory.shard: expected a shard height and width in "
                    "multiples of 32 (whole tiles) for a tile tensor, given 40x64");
    FAILS_FROM_HOST(s64, LMNN_FLOAT32, LMNN_TILE,
                    sharded(L1, LM_BUFFER_HEIGHT_SHARDED, 0, 64, grid(0, 0, 1, 0), false),
                    LM_ERR_INVALID_ARGUMENT,
                    "lmnn_from_host: opts.memory.shard: expected a nonzero shard height and "
                    "width, given 0x64");
    FAILS_FROM_HOST(s70, LMNN_FLOAT32, LMNN_TILE,
                    sharded(L1, LM_BUFFER_HEIGHT_SHARDED, 32, 64, grid(0, 0, 1, 0), false),
                    LM_ERR_INVALID_ARGUMENT,
                    "lmnn_from_host: opts.memory.shard.width: expected the tensor's padded width "
                    "96 for height sharding ([64, 70] viewed as 64x96), given 64");
    FAILS_FROM_HOST(s70, LMNN_FLOAT32, LMNN_ROW_MAJOR,
                    sharded(L1, LM_BUFFER_HEIGHT_SHARDED, 32, 64, grid(0, 0, 1, 0), false),
                    LM_ERR_INVALID_ARGUMENT,
                    "lmnn_from_host: opts.memory.shard.width: expected the tensor's width 70 for "
                    "height sharding ([64, 70] viewed as 64x70), given 64");
    FAILS_FROM_HOST(s70, LMNN_FLOAT32, LMNN_TILE,
                    sharded(L1, LM_BUFFER_WIDTH_SHARDED, 32, 32, grid(0, 0, 3, 0), false),
                    LM_ERR_INVALID_ARGUMENT,
                    "lmnn_from_host: opts.memory.shard.height: expected the tensor's padded "
                    "height 64 for width sharding ([64, 70] viewed as 64x96), given 32");
    FAILS_FROM_HOST(rm, LMNN_FLOAT32, LMNN_ROW_MAJOR,
                    sharded(L1, LM_BUFFER_WIDTH_SHARDED, 8, 25, grid(0, 0, 1, 0), false),
                    LM_ERR_UNSUPPORTED,
                    "lmnn_from_host: opts.memory.shard.width: a row-major tensor keeps each row "
                    "of 50 elements in one page, so width sharded shards span whole rows: "
                    "expected width 50, given 25 (use tile layout to shard columns)");
    FAILS_FROM_HOST(rm, LMNN_FLOAT32, LMNN_ROW_MAJOR,
                    sharded(L1, LM_BUFFER_BLOCK_SHARDED, 4, 25, grid(0, 0, 1, 1), false),
                    LM_ERR_UNSUPPORTED, "so block sharded shards span whole rows");
    FAILS_FROM_HOST(tall, LMNN_FLOAT32, LMNN_TILE,
                    sharded(L1, LM_BUFFER_HEIGHT_SHARDED, 32, 32, grid(0, 0, 7, 7), false),
                    LM_ERR_INVALID_ARGUMENT,
                    "lmnn_from_host: opts.memory.shard: 65 shards of 32x32 for [2080, 32] viewed "
                    "as 2080x32, at most 64");
    FAILS_FROM_HOST(s128, LMNN_FLOAT32, LMNN_TILE,
                    sharded(L1, LM_BUFFER_HEIGHT_SHARDED, 32, 32, grid(0, 0, 2, 0), false),
                    LM_ERR_INVALID_ARGUMENT,
                    "lmnn_from_host: opts.memory.shard.grid: expected at least 4 cores for the 4 "
                    "height sharded shards of 32x32 ([128, 32] viewed as 128x32), given 3");
    FAILS_FROM_HOST(sq, LMNN_FLOAT32, LMNN_TILE,
                    sharded(L1, LM_BUFFER_BLOCK_SHARDED, 64, 96, grid(0, 0, 1, 1), false),
                    LM_ERR_INVALID_ARGUMENT,
                    "lmnn_from_host: opts.memory.shard.grid: expected one rectangle of at least "
                    "3x2 cores (x by y) for 2 x 3 (rows x columns) block shards of 64x96 in "
                    "row-major orientation, given 2x2 cores");
    FAILS_FROM_HOST(sq, LMNN_FLOAT32, LMNN_TILE,
                    sharded(L1, LM_BUFFER_BLOCK_SHARDED, 64, 96, grid(0, 0, 2, 1), true),
                    LM_ERR_INVALID_ARGUMENT,
                    "at least 2x3 cores (x by y) for 2 x 3 (rows x columns) block shards of 64x96 "
                    "in column-major orientation, given 3x2 cores");
    lmnn_memory_config two = sharded(L1, LM_BUFFER_BLOCK_SHARDED, 64, 96, grid(0, 0, 2, 1), false);
    two.shard.grid.ranges[two.shard.grid.count++] = (lm_core_range){{4, 4}, {4, 4}};
    FAILS_FROM_HOST(sq, LMNN_FLOAT32, LMNN_TILE, two, LM_ERR_INVALID_ARGUMENT,
                    "opts.memory.shard.grid: expected one rectangle of at least 3x2 cores (x by "
                    "y) for 2 x 3 (rows x columns) block shards of 64x96 in row-major "
                    "orientation, given 2 ranges");
    FAILS_FROM_HOST(s64, LMNN_FLOAT32, LMNN_TILE,
                    sharded(L1, LM_BUFFER_HEIGHT_SHARDED, 32, 64, grid(7, 0, 8, 0), false),
                    LM_ERR_INVALID_ARGUMENT,
                    "lmnn_from_host: opts.memory.shard.grid: range 0 (7,0)-(8,0) is empty or "
                    "outside the worker grid (0,0)-(7,7)");
    FAILS_FROM_HOST(s64, LMNN_FLOAT32, LMNN_TILE,
                    sharded(DRAM, LM_BUFFER_HEIGHT_SHARDED, 32, 64, grid(0, 0, 1, 1), false),
                    LM_ERR_INVALID_ARGUMENT,
                    "lmnn_from_host: opts.memory.shard.grid: range 0 (0,0)-(1,1) is empty or "
                    "outside the DRAM banks, bank b as core (b, 0): (0,0)-(11,0)");
    FAILS_FROM_HOST(s64, LMNN_FLOAT32, LMNN_TILE,
                    sharded(L1, LM_BUFFER_HEIGHT_SHARDED, 32, 64, grid(3, 0, 2, 0), false),
                    LM_ERR_INVALID_ARGUMENT, "range 0 (3,0)-(2,0) is empty");
    lmnn_memory_config none = sharded(L1, LM_BUFFER_HEIGHT_SHARDED, 32, 64, grid(0, 0, 1, 0), 0);
    none.shard.grid.count = 0;
    FAILS_FROM_HOST(s64, LMNN_FLOAT32, LMNN_TILE, none, LM_ERR_INVALID_ARGUMENT,
                    "lmnn_from_host: opts.memory.shard.grid: expected 1..16 core ranges, given 0");
    lmnn_memory_config odd = sharded(L1, LM_BUFFER_HEIGHT_SHARDED, 32, 64, grid(0, 0, 1, 0), 0);
    odd.shard.orientation = (lmnn_shard_orientation)7;
    FAILS_FROM_HOST(s64, LMNN_FLOAT32, LMNN_TILE, odd, LM_ERR_INVALID_ARGUMENT,
                    "lmnn_from_host: opts.memory.shard.orientation: expected "
                    "LMNN_SHARD_ROW_MAJOR (0) or LMNN_SHARD_COL_MAJOR (1), given 7");
    /* The runtime's own check: a core listed twice. */
    lmnn_memory_config twice = sharded(L1, LM_BUFFER_HEIGHT_SHARDED, 32, 64, grid(0, 0, 1, 0), 0);
    twice.shard.grid.ranges[twice.shard.grid.count++] = (lm_core_range){{1, 0}, {1, 0}};
    FAILS_FROM_HOST(s64, LMNN_FLOAT32, LMNN_TILE, twice, LM_ERR_INVALID_ARGUMENT,
                    "lmnn_from_host: lm_create_buffer: shard.cores lists core (1,0) twice");
    /* full checks the same way. */
    lmnn_tensor_options fo;
    lmnn_tensor_options_init(&fo);
    fo.memory = sharded(L1, LM_BUFFER_HEIGHT_SHARDED, 40, 64, grid(0, 0, 1, 0), false);
    lmnn_tensor t;
    CHECK_FAILS(lmnn_full(nn_dev(), &s64, 1, &fo, &t), LM_ERR_INVALID_ARGUMENT,
                "lmnn_full: opts.memory.shard: expected a shard height and width in multiples of "
                "32 (whole tiles) for a tile tensor, given 40x64");

    /* lmnn_to_memory_config's own arguments. */
    lmnn_tensor a, o;
    CHECK_OK(nn_upload(&s64, buf, LMNN_FLOAT32, LMNN_TILE, &a));
    lmnn_memory_config bad = {.type = (lm_buffer_type)5};
    CHECK_FAILS(lmnn_to_memory_config(a, &bad, &o), LM_ERR_INVALID_ARGUMENT,
                "lmnn_to_memory_config: memory.type: expected LM_BUFFER_DRAM (1) or LM_BUFFER_L1 "
                "(2), given 5");
    bad = (lmnn_memory_config){.layout = (lm_buffer_layout)9};
    CHECK_FAILS(lmnn_to_memory_config(a, &bad, &o), LM_ERR_INVALID_ARGUMENT,
                "lmnn_to_memory_config: memory.layout: expected LM_BUFFER_INTERLEAVED or "
                "LM_BUFFER_HEIGHT, WIDTH or BLOCK_SHARDED, given 9");
    bad = sharded(L1, LM_BUFFER_HEIGHT_SHARDED, 32, 32, grid(0, 0, 1, 0), false);
    CHECK_FAILS(lmnn_to_memory_config(a, &bad, &o), LM_ERR_INVALID_ARGUMENT,
                "lmnn_to_memory_config: memory.shard.width: expected the tensor's padded width 64 "
                "for height sharding ([64, 64] viewed as 64x64), given 32");
    CHECK_FAILS(lmnn_to_memory_config(a, NULL, &o), LM_ERR_INVALID_ARGUMENT,
                "lmnn_to_memory_config: memory is NULL");
    CHECK_FAILS(lmnn_to_memory_config(a, &dram_interleaved, NULL), LM_ERR_INVALID_ARGUMENT,
                "lmnn_to_memory_config: out_tensor is NULL");
    CHECK_FAILS(lmnn_to_memory_config((lmnn_tensor){0}, &dram_interleaved, &o),
                LM_ERR_INVALID_HANDLE, "lmnn_to_memory_config: tensor: tensor handle is zero");
    lmnn_tensor dead;
    lmnn_memory_config hs = sharded(L1, LM_BUFFER_HEIGHT_SHARDED, 32, 64, grid(0, 0, 1, 0), 0);
    CHECK_OK(lmnn_to_memory_config(a, &hs, &dead));
    CHECK_OK(lmnn_tensor_free(dead));
    CHECK_FAILS(lmnn_to_memory_config(dead, &dram_interleaved, &o), LM_ERR_INVALID_HANDLE,
                "lmnn_to_memory_config: tensor: tensor handle is stale");
    CHECK_FAILS(lmnn_tensor_free(dead), LM_ERR_INVALID_HANDLE, "lmnn_tensor_free");
    /* Still usable. */
    lmnn_tensor sh;
    lmnn_memory_config ws = sharded(L1, LM_BUFFER_WIDTH_SHARDED, 64, 32, grid(0, 0, 1, 0), 0);
    CHECK_OK(lmnn_to_memory_config(a, &ws, &sh));
    float *y = nn_download(sh);
    CHECK(y && !memcmp(y, buf, 64 * 64 * sizeof(float)));
    free(y);
    CHECK_OK(lmnn_tensor_free(sh));
    CHECK_OK(lmnn_tensor_free(a));
}

int main(void) {
    TEST_RUN(test_round_trips);
    TEST_RUN(test_reshard);
    TEST_RUN(test_placement);
    TEST_RUN(test_full);
    TEST_RUN(test_create_config);
    TEST_RUN(test_cache);
    TEST_RUN(test_metal_trace);
    TEST_RUN(test_ops_refuse);
    TEST_RUN(test_unary_sharded);
    TEST_RUN(test_binary_sharded);
    TEST_RUN(test_errors);
    nn_dev_close();
    TEST_RUN(test_capture_replay);
    return test_summary();
}
