/* The ONNX compiler's own passes and API, on models built in C:
 * placement (fused, folded, dead), fusions giving the unfused answer,
 * weights stored once, input binding and its refusals, element types at the
 * boundary, metal-trace and golden compiles, bf16 notes, and errors that name
 * the node and what is missing. */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lightmetal/frontend.h"
#include "lightmetal/lm_replay.h"
#include "lm_test.h"
#include "onnx.pb-c.h"
#include "onnx_build.h"

enum { F32 = 1, I64 = 7 };

static char model_path[256];

/* Writes `m` to the test's model file. */
static const char *save(const Onnx__ModelProto *m) {
    size_t size;
    uint8_t *buf = ob_pack(m, &size);
    FILE *f = fopen(model_path, "wb");
    if (!f || fwrite(buf, 1, size, f) != size) abort();
    fclose(f);
    free(buf);
    return model_path;
}

static Onnx__TensorProto *f32_init(Onnx__GraphProto *g, const char *name, int rank,
                                   const int64_t *dims, const float *data, size_t count) {
    Onnx__TensorProto *t = ob_tensor(name, F32, rank, dims);
    ob_raw(t, data, count * sizeof *data);
    ob_init(g, t);
    return t;
}

static Onnx__TensorProto *i64_init(Onnx__GraphProto *g, const char *name, int64_t count,
                                   const int64_t *data) {
    Onnx__TensorProto *t = ob_tensor(name, I64, 1, &count);
    ob_raw(t, data, (size_t)count * sizeof *data);
    ob_init(g, t);
    return t;
}

/* Opens a replay of `bin` (which must outlive it). */
static lm_status replay_open(lm_binary *bin, lm_replay **out) {
    const void *data;
    uint64_t size;
    lm_status st = lm_binary_data(bin, &data, &size);
    return st ? st : lm_replay_open(data, size, out);
}

/* Runs `bin` with one float input and reads one float output. */
static lm_status replay1(lm_binary *bin, const char *in, const float *x, size_t xn, const char *out,
                         float *y, size_t yn, lm_replay_report *rep) {
    lm_replay *r;
    lm_status st = replay_open(bin, &r);
    if (st) return st;
    if (in) st = lm_replay_set_input(r, in, x, xn * sizeof *x);
    if (!st) st = lm_replay_run(r, NULL, NULL, rep);
    if (!st) st = lm_replay_get_output(r, out, y, yn * sizeof *y);
    lm_replay_close(r);
    return st;
}

/* Opens a replay of `bin` (which must outlive it), sets its input "x" and
 * runs it once with the program profile on; the caller closes *out. */
static lm_status replay_profiled(lm_binary *bin, const float *x, size_t size, lm_replay **out) {
    lm_replay *r;
    lm_status st = replay_open(bin, &r);
    if (st) return st;
    lm_replay_options ro;
    lm_replay_options_init(&ro);
    ro.profile = true;
    if (!(st = lm_replay_set_input(r, "x", x, size))) st = lm_replay_run(r, NULL, &ro, NULL);
    if (st) {
        lm_replay_close(r);
        return st;
    }
    *out = r;
    return LM_OK;
}

static lmfe_placement placement_of(const lmfe_report *r, const char *op) {
    for (size_t i = 0; i < r->op_count; i++)
        if (!strcmp(r->ops[i].op_type, op)) return r->ops[i].placement;
    return (lmfe_placement)-1;
}

/* y = relu(x @ W + b), plus a dead branch and a folded shape computation:
 * Shape(x) -> Reshape(x2, shape) -> the same x back. */
static Onnx__ModelProto *mlp_model(const float *w, const float *b) {
    Onnx__GraphProto *g = ob_graph("mlp");
    Onnx__ModelProto *m = ob_model(g);
    int64_t xd[2] = {5, 3}, wd[2] = {3, 4}, bd[1] = {4}, yd[2] = {5, 4};
    ob_input(g, ob_vi("x", ob_tensor_type(F32, 2, xd, NULL)));
    ob_output(g, ob_vi("y", ob_tensor_type(F32, 2, yd, NULL)));
    f32_init(g, "W", 2, wd, w, 12);
    f32_init(g, "b", 1, bd, b, 4);
    ob_node(g, "Shape", "shape", (const char *[]){"x", NULL}, (const char *[]){"xs", NULL});
    ob_node(g, "Reshape", "again", (const char *[]){"x", "xs", NULL}, (const char *[]){"x2", NULL});
    ob_node(g, "MatMul", "mm", (const char *[]){"x2", "W", NULL}, (const char *[]){"h", NULL});
    ob_node(g, "Add", "bias", (const char *[]){"h", "b", NULL}, (const char *[]){"hb", NULL});
    ob_node(g, "Relu", "act", (const char *[]){"hb", NULL}, (const char *[]){"y", NULL});
    ob_node(g, "Exp", "unused", (const char *[]){"x", NULL}, (const char *[]){"dead", NULL});
    return m;
}

static void test_mlp_fused_folded_dead(void) {
    float w[12], b[4], x[15], y[20], want[20];
    for (int i = 0; i < 12; i++)
        w[i] = (float)(i % 5) * 0.25f - 0.5f;
    for (int i = 0; i < 4; i++)
        b[i] = (float)i * 0.5f - 0.75f;
    for (int i = 0; i < 15; i++)
        x[i] = (float)((i * 7) % 11) * 0.2f - 1.0f;
    for (int r = 0; r < 5; r++)
        for (int c = 0; c < 4; c++) {
            double s = b[c];
            for (int k = 0; k < 3; k++)
                s += (double)x[r * 3 + k] * w[k * 4 + c];
            want[r * 4 + c] = s > 0 ? (float)s : 0.0f;
        }
    lm_binary *bin;
    lmfe_report rep;
    CHECK_OK(lmfe_compile_onnx(save(mlp_model(w, b)), NULL, &bin, &rep));
    CHECK(placement_of(&rep, "MatMul") == LMFE_ON_DEVICE);
    CHECK(placement_of(&rep, "Add") == LMFE_FUSED);
    CHECK(placement_of(&rep, "Relu") == LMFE_FUSED);
    CHECK(placement_of(&rep, "Shape") == LMFE_FOLDED);
    CHECK(placement_of(&rep, "Exp") == LMFE_REMOVED);
    CHECK(rep.nodes == 6 && rep.lowered_nodes == 0);
    CHECK(rep.weight_bytes == (12 + 4) * 4);
    CHECK_OK(replay1(bin, "x", x, 15, "y", y, 20, NULL));
    for (int i = 0; i < 20; i++)
        CHECK(fabsf(y[i] - want[i]) <= 1e-6f);
    /* The device memory peak is measured over the model's run alone: a
     * device that already holds a buffer reports the same. */
    CHECK(rep.peak_device_bytes > 0 && rep.peak_device_bytes < (16u << 20));
    lm_device *dev;
    CHECK_OK(lm_device_open(NULL, &dev));
    lm_buffer_config bc;
    lm_buffer_config_init(&bc);
    bc.size = 64u << 20;
    bc.page_size = 1u << 20;
    lm_buffer held;
    CHECK_OK(lm_create_buffer(dev, &bc, &held));
    lmfe_compile_options o;
    lmfe_compile_options_init(&o);
    o.device = dev;
    lm_binary *again;
    lmfe_report rep2;
    CHECK_OK(lmfe_compile_onnx(save(mlp_model(w, b)), &o, &again, &rep2));
    CHECK_EQ_U64(rep2.peak_device_bytes, rep.peak_device_bytes);
    lmfe_report_free(&rep2);
    lm_binary_free(again);
    CHECK_OK(lm_device_close(dev));
    lmfe_report_free(&rep);
    lm_binary_free(bin);
}

/* Each node's launches are labelled "OpType name" ("OpType #index" when it
 * has none; what is not printable UTF-8 as '?'): the report gives each op's device
 * time, and a replay of the binary profiles under the same labels (a trace
 * as one launch). */
static const lm_profile_entry *labelled(const lm_profile_entry *e, size_t n, const char *label) {
    for (size_t i = 0; i < n; i++)
        if (!strcmp(e[i].label, label)) return &e[i];
    return NULL;
}

static void test_profile_labels(void) {
    Onnx__GraphProto *g = ob_graph("labels");
    Onnx__ModelProto *m = ob_model(g);
    int64_t xd[2] = {40, 64}, wd[2] = {64, 48}, yd[2] = {48, 40};
    ob_input(g, ob_vi("x", ob_tensor_type(F32, 2, xd, NULL)));
    ob_output(g, ob_vi("y", ob_tensor_type(F32, 2, yd, NULL)));
    float w[64 * 48];
    for (int i = 0; i < 64 * 48; i++)
        w[i] = (float)(i % 7) * 0.125f - 0.375f;
    f32_init(g, "W", 2, wd, w, 64 * 48);
    ob_node(g, "MatMul", "mm\nline", (const char *[]){"x", "W", NULL}, (const char *[]){"h", NULL});
    /* A name past the label's 1024 bytes, cut inside a two-byte character. */
    static char long_name[1030], long_label[1030];
    memset(long_name, 'a', 1019);
    memcpy(long_name + 1019, "\xc3\xa9zz", 5);
    snprintf(long_label, sizeof long_label, "Sin %.1019s?", long_name);
    ob_node(g, "Sin", long_name, (const char *[]){"h", NULL}, (const char *[]){"s", NULL});
    ob_node(g, "Cos", "", (const char *[]){"s", NULL}, (const char *[]){"c", NULL});
    Onnx__NodeProto *t =
        ob_node(g, "Transpose", "to/y", (const char *[]){"c", NULL}, (const char *[]){"y", NULL});
    ob_attr_is(t, "perm", (const int64_t[]){1, 0}, 2);
    const char *path = save(m);
    for (int traced = 0; traced < 2; traced++) {
        lmfe_compile_options o;
        lmfe_compile_options_init(&o);
        o.trace = traced;
        lm_binary *bin;
        lmfe_report rep;
        CHECK_OK(lmfe_compile_onnx(path, &o, &bin, &rep));
        double sum = 0;
        for (size_t i = 0; i < rep.op_count; i++) {
            const lmfe_op_summary *r = &rep.ops[i];
            /* A node on the device may launch nothing of its own (this
             * Transpose only changes how the output is read). */
            CHECK(r->placement == LMFE_ON_DEVICE ? r->device_seconds >= 0 : r->device_seconds == 0);
            if (!strcmp(r->op_type, "MatMul") || !strcmp(r->op_type, "Sin"))
                CHECK(r->device_seconds > 0);
            sum += r->device_seconds;
        }
        CHECK(placement_of(&rep, "Sin") == LMFE_ON_DEVICE);
        CHECK(rep.device_seconds > 0 && sum <= rep.device_seconds * (1 + 1e-9));
        lmfe_report_free(&rep);

        lm_replay *r;
        CHECK_OK(replay_open(bin, &r));
        lm_replay_options ro;
        lm_replay_options_init(&ro);
        ro.profile = true;
        CHECK_OK(lm_replay_run(r, NULL, &ro, NULL));
        const lm_profile_entry *e;
        size_t n;
        CHECK_OK(lm_replay_get_profile(r, &e, &n));
        if (traced) {
            CHECK(n == 1 && !strcmp(e[0].label, "trace 1") && e[0].launches == 1);
        } else {
            CHECK(labelled(e, n, "MatMul mm?line") && labelled(e, n, long_label) &&
                  labelled(e, n, "Cos #2") && labelled(e, n, "output"));
            for (size_t i = 0; i < n; i++)
                CHECK(e[i].launches > 0 && e[i].seconds > 0);
        }
        lm_replay_close(r);
        lm_binary_free(bin);
    }
}

/* Two MatMuls with equal weights: the weight is uploaded and stored once. */
static void test_weights_stored_once(void) {
    float w[9];
    for (int i = 0; i < 9; i++)
        w[i] = (float)i;
    for (int same = 1; same >= 0; same--) {
        Onnx__GraphProto *g = ob_graph("twice");
        Onnx__ModelProto *m = ob_model(g);
        int64_t d[2] = {3, 3};
        ob_input(g, ob_vi("x", ob_tensor_type(F32, 2, d, NULL)));
        ob_output(g, ob_vi("y", ob_tensor_type(F32, 2, d, NULL)));
        f32_init(g, "W1", 2, d, w, 9);
        float w2[9];
        memcpy(w2, w, sizeof w2);
        if (!same) w2[4] += 1;
        f32_init(g, "W2", 2, d, w2, 9);
        ob_node(g, "MatMul", "a", (const char *[]){"x", "W1", NULL}, (const char *[]){"h", NULL});
        ob_node(g, "MatMul", "b", (const char *[]){"h", "W2", NULL}, (const char *[]){"y", NULL});
        lm_binary *bin;
        lmfe_report rep;
        CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, &rep));
        CHECK(rep.weight_bytes == (same ? 36u : 72u));
        lmfe_report_free(&rep);
        lm_binary_free(bin);
    }
}

/* Conv -> BatchNormalization -> Relu fused gives what the three give apart
 * (when the convolution's result is a graph output too, the normalization
 * stays and takes the Relu). */
static void test_conv_bn_relu_fusion(void) {
    float w[2 * 1 * 3 * 3], cb[2] = {0.1f, -0.2f}, sc[2] = {1.5f, 0.5f}, bb[2] = {0.25f, -1.0f},
                            mean[2] = {0.3f, -0.1f}, var[2] = {2.0f, 0.5f};
    for (int i = 0; i < 18; i++)
        w[i] = (float)((i * 5) % 7) * 0.1f - 0.3f;
    float x[1 * 1 * 6 * 6], fused[2 * 36], plain[2 * 36];
    for (int i = 0; i < 36; i++)
        x[i] = (float)((i * 11) % 13) * 0.15f - 0.9f;
    for (int split = 0; split < 2; split++) {
        Onnx__GraphProto *g = ob_graph("cbr");
        Onnx__ModelProto *m = ob_model(g);
        int64_t xd[4] = {1, 1, 6, 6}, wd[4] = {2, 1, 3, 3}, cd[1] = {2}, yd[4] = {1, 2, 6, 6};
        ob_input(g, ob_vi("x", ob_tensor_type(F32, 4, xd, NULL)));
        ob_output(g, ob_vi("y", ob_tensor_type(F32, 4, yd, NULL)));
        if (split) ob_output(g, ob_vi("c", ob_tensor_type(F32, 4, yd, NULL)));
        f32_init(g, "w", 4, wd, w, 18);
        f32_init(g, "cb", 1, cd, cb, 2);
        f32_init(g, "scale", 1, cd, sc, 2);
        f32_init(g, "beta", 1, cd, bb, 2);
        f32_init(g, "mean", 1, cd, mean, 2);
        f32_init(g, "var", 1, cd, var, 2);
        Onnx__NodeProto *conv = ob_node(g, "Conv", "conv", (const char *[]){"x", "w", "cb", NULL},
                                        (const char *[]){"c", NULL});
        Onnx__AttributeProto *p =
            ob_attr(conv, "pads", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
        p->ints = ob_alloc(4 * sizeof *p->ints);
        p->n_ints = 4;
        for (int i = 0; i < 4; i++)
            p->ints[i] = 1;
        ob_node(g, "BatchNormalization", "bn",
                (const char *[]){"c", "scale", "beta", "mean", "var", NULL},
                (const char *[]){"n", NULL});
        ob_node(g, "Relu", "relu", (const char *[]){"n", NULL}, (const char *[]){"y", NULL});
        lm_binary *bin;
        lmfe_report rep;
        CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, &rep));
        CHECK(placement_of(&rep, "BatchNormalization") == (split ? LMFE_ON_DEVICE : LMFE_FUSED));
        CHECK(placement_of(&rep, "Relu") == LMFE_FUSED);
        CHECK_OK(replay1(bin, "x", x, 36, "y", split ? plain : fused, 72, NULL));
        lmfe_report_free(&rep);
        lm_binary_free(bin);
    }
    for (int i = 0; i < 72; i++)
        CHECK(fabsf(fused[i] - plain[i]) <= 1e-5f * (1 + fabsf(plain[i])));
}

/* A symbolic batch: bound by --dim or a fixed input shape; left open it is
 * an error that says how to bind it. */
static Onnx__ModelProto *batch_model(void) {
    Onnx__GraphProto *g = ob_graph("batch");
    Onnx__ModelProto *m = ob_model(g);
    int64_t d[2] = {-1, 4};
    const char *syms[2] = {"batch", NULL};
    ob_input(g, ob_vi("x", ob_tensor_type(F32, 2, d, syms)));
    ob_output(g, ob_vi("y", ob_tensor_type(F32, 2, d, syms)));
    ob_node(g, "Sigmoid", "s", (const char *[]){"x", NULL}, (const char *[]){"y", NULL});
    return m;
}

static void test_binding_and_refusals(void) {
    const char *path = save(batch_model());
    lm_binary *bin = NULL;
    lmfe_compile_options o;
    lmfe_compile_options_init(&o);
    CHECK_FAILS(lmfe_compile_onnx(path, &o, &bin, NULL), LM_ERR_INVALID_ARGUMENT,
                "graph input 'x' float[batch, 4]: dim 0 ('batch') is not fixed: give "
                "--input-shape x=DIMS or --dim batch=N");
    CHECK(bin == NULL);
    lmfe_dim_binding dim = {"batch", 3};
    o.dims = &dim;
    o.dim_count = 1;
    CHECK_OK(lmfe_compile_onnx(path, &o, &bin, NULL));
    lm_replay *r;
    const void *data;
    uint64_t size;
    CHECK_OK(lm_binary_data(bin, &data, &size));
    CHECK_OK(lm_replay_open(data, size, &r));
    lm_replay_buffer_info info;
    CHECK_OK(lm_replay_buffer_info_at(r, 0, &info));
    CHECK(info.rank == 2 && info.shape[0] == 3 && info.shape[1] == 4);
    lm_replay_close(r);
    lm_binary_free(bin);

    /* batch 0: an empty input and output, 0 bytes each, still named. */
    dim.value = 0;
    CHECK_OK(lmfe_compile_onnx(path, &o, &bin, NULL));
    CHECK_OK(lm_binary_data(bin, &data, &size));
    CHECK_OK(lm_replay_open(data, size, &r));
    for (uint32_t i = 0; i < 2; i++) {
        CHECK_OK(lm_replay_buffer_info_at(r, i, &info));
        CHECK(info.size == 0 && info.rank == 2 && info.shape[0] == 0 && info.shape[1] == 4);
    }
    CHECK_OK(lm_replay_set_input(r, "x", NULL, 0));
    CHECK_OK(lm_replay_run(r, NULL, NULL, NULL));
    CHECK_OK(lm_replay_get_output(r, "y", NULL, 0));
    lm_replay_close(r);
    lm_binary_free(bin);
    dim.value = -2;
    CHECK_FAILS(lmfe_compile_onnx(path, &o, &bin, NULL), LM_ERR_INVALID_ARGUMENT,
                "dim: dim 'batch' must not be negative, given -2");

    lmfe_dim_binding bad_dim = {"nope", 3};
    o.dims = &bad_dim;
    CHECK_FAILS(lmfe_compile_onnx(path, &o, &bin, NULL), LM_ERR_INVALID_ARGUMENT,
                "dim 'nope': no graph input has that symbolic dim");
    o.dims = NULL;
    o.dim_count = 0;
    lmfe_input_shape shapes[1] = {{"y", 2, {2, 4}}};
    o.input_shapes = shapes;
    o.input_shape_count = 1;
    CHECK_FAILS(lmfe_compile_onnx(path, &o, &bin, NULL), LM_ERR_INVALID_ARGUMENT,
                "input shape: the model has no input 'y' (its inputs: 'x')");
    shapes[0] = (lmfe_input_shape){"x", 3, {2, 4, 1}};
    CHECK_FAILS(lmfe_compile_onnx(path, &o, &bin, NULL), LM_ERR_INVALID_ARGUMENT,
                "input shape 'x': the model declares float[batch, 4] (rank 2), given rank 3");
    shapes[0] = (lmfe_input_shape){"x", 2, {-1, 4}};
    CHECK_FAILS(lmfe_compile_onnx(path, &o, &bin, NULL), LM_ERR_INVALID_ARGUMENT,
                "input shape 'x': dim 0 must not be negative, given -1");
    shapes[0] = (lmfe_input_shape){"x", 2, {2, 5}};
    CHECK_FAILS(lmfe_compile_onnx(path, &o, &bin, NULL), LM_ERR_INVALID_ARGUMENT,
                "the model fixes dim 1 of float[batch, 4] to 4, given 5");
    shapes[0] = (lmfe_input_shape){"x", 2, {2, 4}};
    float gx[3] = {0};
    lmfe_tensor_value golden = {"x", F32, 2, {2, 4}, gx, sizeof gx};
    o.golden_inputs = &golden;
    o.golden_input_count = 1;
    CHECK_FAILS(lmfe_compile_onnx(path, &o, &bin, NULL), LM_ERR_INVALID_ARGUMENT,
                "golden input 'x': expected 32 bytes of data, given 12");
    int64_t gi[8] = {0};
    golden.elem_type = I64;
    golden.data = gi;
    golden.size = sizeof gi;
    CHECK_FAILS(lmfe_compile_onnx(path, &o, &bin, NULL), LM_ERR_INVALID_ARGUMENT,
                "golden input 'x': expected element type float, given int64");
    o.golden_input_count = 0;
    o.dtype = (lmfe_dtype_mode)7;
    CHECK_FAILS(lmfe_compile_onnx(path, &o, &bin, NULL), LM_ERR_INVALID_ARGUMENT,
                "opts->dtype: expected 0..2, given 7");
    o.dtype = LMFE_DTYPE_FP32;
    o.input_shapes = NULL;
    CHECK_FAILS(lmfe_compile_onnx(path, &o, &bin, NULL), LM_ERR_INVALID_ARGUMENT,
                "opts->input_shapes is NULL with a count of 1");
    o.input_shape_count = 0;
    o.absent_input_count = 2;
    CHECK_FAILS(lmfe_compile_onnx(path, &o, &bin, NULL), LM_ERR_INVALID_ARGUMENT,
                "opts->absent_inputs is NULL with a count of 2");
    o.absent_input_count = 0;
    CHECK_FAILS(lmfe_compile_onnx(NULL, NULL, &bin, NULL), LM_ERR_INVALID_ARGUMENT, "path is NULL");
    CHECK_FAILS(lmfe_compile_onnx(path, NULL, NULL, NULL), LM_ERR_INVALID_ARGUMENT,
                "out_binary is NULL");
    CHECK_FAILS(lmfe_compile_onnx("/nonexistent/m.onnx", NULL, &bin, NULL), LM_ERR_IO,
                "/nonexistent/m.onnx");
}

/* An op, an attribute and a domain the compiler does not know are errors
 * naming the node. */
static void test_unsupported(void) {
    int64_t d[1] = {4};
    Onnx__GraphProto *g = ob_graph("u");
    Onnx__ModelProto *m = ob_model(g);
    ob_input(g, ob_vi("x", ob_tensor_type(F32, 1, d, NULL)));
    ob_output(g, ob_vi("y", ob_tensor_type(F32, 1, d, NULL)));
    Onnx__NodeProto *n =
        ob_node(g, "Frobnicate", "frob", (const char *[]){"x", NULL}, (const char *[]){"y", NULL});
    lm_binary *bin;
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_UNSUPPORTED,
                "node 'frob' (Frobnicate): op Frobnicate is not supported");
    n->op_type = ob_str("Relu");
    ob_attr_i(n, "flavour", 2);
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_UNSUPPORTED,
                "node 'frob' (Relu): attribute 'flavour' is not supported");
    n->n_attribute = 0;
    n->op_type = ob_str("Sqrt");
    CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, NULL));
    lm_binary_free(bin);
}

/* Resize's attributes and constant inputs, each wrong in its own way:
 * an error naming the node and what is wrong. */
/* Resize's antialias matrix has a size limit. */
static void test_resize_antialias_limit(void) {
    int64_t xd[4] = {1, 1, 1, 16384}, yd[4] = {1, 1, 1, 8192}, four = 4;
    Onnx__GraphProto *g = ob_graph("aa");
    Onnx__ModelProto *m = ob_model(g);
    m->opset_import[0]->version = 18;
    ob_input(g, ob_vi("x", ob_tensor_type(F32, 4, xd, NULL)));
    ob_output(g, ob_vi("y", ob_tensor_type(F32, 4, yd, NULL)));
    Onnx__TensorProto *sizes = ob_tensor("sizes", I64, 1, &four);
    ob_raw(sizes, yd, sizeof yd);
    ob_init(g, sizes);
    Onnx__NodeProto *n = ob_node(g, "Resize", "down", (const char *[]){"x", "", "", "sizes", NULL},
                                 (const char *[]){"y", NULL});
    ob_attr_s(n, "mode", "linear");
    ob_attr_i(n, "antialias", 1);
    lm_binary *bin;
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_UNSUPPORTED,
                "node 'down' (Resize): antialias on dim 3, 16384 to 8192 long: its filter matrix "
                "would have more than 2^26 entries");
}

static void test_resize_refusals(void) {
    int64_t xd[4] = {1, 1, 4, 4}, yd[4] = {1, 1, 8, 8}, four = 4;
    Onnx__GraphProto *g = ob_graph("r");
    Onnx__ModelProto *m = ob_model(g);
    ob_input(g, ob_vi("x", ob_tensor_type(F32, 4, xd, NULL)));
    ob_output(g, ob_vi("y", ob_tensor_type(F32, 4, yd, NULL)));
    float sv[4] = {1, 1, 2, 2}, bad[4] = {1, 1, -2, 2};
    Onnx__TensorProto *scales = ob_tensor("scales", F32, 1, &four);
    ob_raw(scales, sv, sizeof sv);
    ob_init(g, scales);
    Onnx__NodeProto *n = ob_node(g, "Resize", "up", (const char *[]){"x", "", "scales", NULL},
                                 (const char *[]){"y", NULL});
    lm_binary *bin;
    CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, NULL));
    lm_binary_free(bin);

    Onnx__AttributeProto *a = ob_attr_s(n, "mode", "sinc");
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'up' (Resize): attribute mode=sinc is not valid");
    a->name = ob_str("coordinate_transformation_mode");
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "attribute coordinate_transformation_mode=sinc is not valid");
    a->name = ob_str("antialias");
    a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    a->has_i = 1;
    a->i = 2;
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'up' (Resize): attribute antialias=2 (0 or 1)");
    a->i = 1; /* growing: the plain filter */
    CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, NULL));
    lm_binary_free(bin);
    n->n_attribute = 0;

    ob_raw(scales, bad, sizeof bad);
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "scales[2] = -2 is not positive");
    scales->dims[0] = 3;
    ob_raw(scales, sv, 3 * sizeof *sv);
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "scales has 3 entries for 4 axes");
    scales->dims[0] = 4;
    ob_raw(scales, sv, sizeof sv);
    Onnx__TensorProto *sizes = ob_tensor("sizes", I64, 1, &four);
    ob_raw(sizes, yd, sizeof yd);
    ob_init(g, sizes);
    n->input[n->n_input++] = ob_str("sizes");
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "exactly one of scales and sizes must be given (both given)");
    n->input[2] = ob_str("");
    sizes->dims[0] = 3;
    ob_raw(sizes, yd, 3 * sizeof *yd);
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "sizes has 3 entries for 4 axes");
    /* Scales that only the run would know: the output's shape is not
     * known at compile time. */
    n->input[2] = ob_str("s_in");
    n->n_input = 3;
    ob_input(g, ob_vi("s_in", ob_tensor_type(F32, 1, &four, NULL)));
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_UNSUPPORTED,
                "input 2 ('s_in') decides the output shape");
}

/* The recurrent ops' attributes and shapes, each wrong in its own way. */
static void test_rnn_refusals(void) {
    int64_t xd[3] = {2, 1, 3}, wd[3] = {1, 4, 3}, rd[3] = {1, 4, 4}, yd[3] = {1, 1, 4};
    Onnx__GraphProto *g = ob_graph("r");
    Onnx__ModelProto *m = ob_model(g);
    ob_input(g, ob_vi("x", ob_tensor_type(F32, 3, xd, NULL)));
    ob_input(g, ob_vi("w", ob_tensor_type(F32, 3, wd, NULL)));
    ob_input(g, ob_vi("r", ob_tensor_type(F32, 3, rd, NULL)));
    ob_output(g, ob_vi("yh", ob_tensor_type(F32, 3, yd, NULL)));
    Onnx__NodeProto *n = ob_node(g, "RNN", "cell", (const char *[]){"x", "w", "r", NULL},
                                 (const char *[]){"", "yh", NULL});
    lm_binary *bin;
    CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, NULL));
    lm_binary_free(bin);
    Onnx__AttributeProto *a = ob_attr_s(n, "direction", "sideways");
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'cell' (RNN): attribute direction=sideways is not valid");
    a->name = ob_str("activations");
    a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS;
    a->has_s = 0;
    a->strings = ob_alloc(sizeof *a->strings);
    a->strings[0].data = (uint8_t *)ob_str("Swish");
    a->strings[0].len = 5;
    a->n_strings = 1;
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_UNSUPPORTED,
                "activation Swish is not supported");
    a->n_strings = 0;
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "activations has 0 names, 1 expected");
    a->name = ob_str("layout");
    a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    a->has_i = 1;
    a->i = 2;
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "attribute layout=2 is not 0 or 1");
    n->n_attribute = 0;
    wd[1] = 5;
    g->input[1] = ob_vi("w", ob_tensor_type(F32, 3, wd, NULL));
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "W must be 1x4x3");
}

/* LSTM (reverse, batch-major, a hidden size off a tile, initial states) and
 * GRU (bidirectional, linear_before_reset) run each step as a product and
 * one fused cell (lmnn_lstm_cell, lmnn_gru_cell): the same answers as the
 * op-by-op steps a clip forces (a clip of 1e30 changes no value), in far
 * fewer programs. */
static Onnx__ModelProto *rnn_cell_model(bool lstm, bool clip, float *buf) {
    int64_t S = lstm ? 7 : 5, B = lstm ? 3 : 2, I = lstm ? 20 : 24, H = lstm ? 33 : 40;
    int64_t D = lstm ? 1 : 2, G = lstm ? 4 : 3;
    int64_t xd[3] = {lstm ? B : S, lstm ? S : B, I}, wd[3] = {D, G * H, I}, rd[3] = {D, G * H, H};
    int64_t bd[2] = {D, 2 * G * H}, sd[3] = {lstm ? B : D, lstm ? D : B, H};
    int64_t yd[4] = {lstm ? B : S, lstm ? S : D, lstm ? D : B, H};
    Onnx__GraphProto *g = ob_graph("cells");
    Onnx__ModelProto *m = ob_model(g);
    m->opset_import[0]->version = 14;
    ob_input(g, ob_vi("x", ob_tensor_type(F32, 3, xd, NULL)));
    ob_output(g, ob_vi("y", ob_tensor_type(F32, 4, yd, NULL)));
    ob_output(g, ob_vi("yh", ob_tensor_type(F32, 3, sd, NULL)));
    if (lstm) ob_output(g, ob_vi("yc", ob_tensor_type(F32, 3, sd, NULL)));
    uint32_t seed = lstm ? 7u : 11u;
    float *at = buf;
    const char *names[5] = {"W", "R", "B", "h0", "c0"};
    const int64_t *dims[5] = {wd, rd, bd, sd, sd};
    int ranks[5] = {3, 3, 2, 3, 3};
    for (int t = 0; t < (lstm ? 5 : 4); t++) {
        size_t count = 1;
        for (int d = 0; d < ranks[t]; d++)
            count *= (size_t)dims[t][d];
        for (size_t i = 0; i < count; i++) {
            seed = seed * 1664525u + 1013904223u;
            at[i] = (float)(seed >> 8) / 16777216.0f * 0.8f - 0.4f;
        }
        f32_init(g, names[t], ranks[t], dims[t], at, count);
        at += count;
    }
    Onnx__NodeProto *n =
        ob_node(g, lstm ? "LSTM" : "GRU", "cell",
                (const char *[]){"x", "W", "R", "B", "", "h0", lstm ? "c0" : NULL, NULL},
                (const char *[]){"y", "yh", lstm ? "yc" : NULL, NULL});
    ob_attr_i(n, "hidden_size", H);
    ob_attr_s(n, "direction", lstm ? "reverse" : "bidirectional");
    if (lstm) ob_attr_i(n, "layout", 1);
    if (!lstm) ob_attr_i(n, "linear_before_reset", 1);
    if (clip) {
        Onnx__AttributeProto *a = ob_attr(n, "clip", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
        a->has_f = 1;
        a->f = 1e30f;
    }
    return m;
}

static void test_rnn_cells(void) {
    static float weights[4 * 2 * 3 * 40 * 64];
    float x[7 * 3 * 24], got[2][7 * 3 * 40];
    for (int i = 0; i < 7 * 3 * 24; i++)
        x[i] = (float)((i * 29) % 61 - 30) * 0.05f;
    for (int lstm = 0; lstm < 2; lstm++) {
        static const char *const outs[] = {"y", "yh", "yc"};
        size_t sizes[2][3] = {{5 * 2 * 2 * 40, 2 * 2 * 40, 0}, {3 * 7 * 33, 3 * 33, 3 * 33}};
        uint64_t programs[2];
        for (int o = 0; o < (lstm ? 3 : 2); o++) {
            size_t xn = lstm ? 3 * 7 * 20 : 5 * 2 * 24, yn = sizes[lstm][o];
            for (int clip = 0; clip < 2; clip++) {
                lm_binary *bin;
                lm_replay_report rr;
                CHECK_OK(
                    lmfe_compile_onnx(save(rnn_cell_model(lstm, clip, weights)), NULL, &bin, NULL));
                CHECK_OK(replay1(bin, "x", x, xn, outs[o], got[clip], yn, &rr));
                programs[clip] = rr.programs;
                lm_binary_free(bin);
            }
            double worst = 0;
            for (size_t i = 0; i < yn; i++) {
                double e = fabs(got[0][i] - got[1][i]) / (1 + fabs(got[1][i]));
                worst = e > worst ? e : worst;
            }
            CHECK(worst < 1e-6);
            CHECK(programs[0] * 2 < programs[1]);
        }
    }
}

/* GatherND's and ScatterND's shapes and attributes, each wrong in its own
 * way. */
static void test_index_refusals(void) {
    int64_t dd[2] = {4, 3}, id[2] = {2, 1}, ud[2] = {2, 3};
    Onnx__GraphProto *g = ob_graph("s");
    Onnx__ModelProto *m = ob_model(g);
    m->opset_import[0]->version = 16;
    ob_input(g, ob_vi("d", ob_tensor_type(F32, 2, dd, NULL)));
    ob_input(g, ob_vi("i", ob_tensor_type(I64, 2, id, NULL)));
    ob_input(g, ob_vi("u", ob_tensor_type(F32, 2, ud, NULL)));
    ob_output(g, ob_vi("y", ob_tensor_type(F32, 2, dd, NULL)));
    Onnx__NodeProto *n = ob_node(g, "ScatterND", "put", (const char *[]){"d", "i", "u", NULL},
                                 (const char *[]){"y", NULL});
    lm_binary *bin;
    CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, NULL));
    lm_binary_free(bin);
    ob_attr_s(n, "reduction", "avg");
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'put' (ScatterND): attribute reduction=avg is not valid");
    n->n_attribute = 0;
    ud[1] = 2;
    g->input[2] = ob_vi("u", ob_tensor_type(F32, 2, ud, NULL));
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "updates must have the shape of indices without its last dim");
    id[1] = 3;
    g->input[1] = ob_vi("i", ob_tensor_type(I64, 2, id, NULL));
    n->op_type = ob_str("GatherND");
    n->n_input = 2;
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'put' (GatherND): index tuples of 3 entries for data of rank 2");
}

/* Reshape -> Transpose (a transformer's heads split and moved forward)
 * runs as one pass, the Transpose fused; with the reshaped value also a
 * graph output, both run and both outputs are right. */
static void test_reshape_transpose_fusion(void) {
    float x[6 * 2 * 96], y[6 * 2 * 96], z[6 * 2 * 96];
    for (int i = 0; i < 6 * 2 * 96; i++)
        x[i] = (float)(i % 97) * 0.25f - 12.0f;
    /* want[a][b][c][d][e] = x viewed as [6, 2, 3, 4, 8] at [d][b][a][c][e] */
    float want[6 * 2 * 96];
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 2; b++)
            for (int c = 0; c < 4; c++)
                for (int d = 0; d < 6; d++)
                    for (int e = 0; e < 8; e++)
                        want[(((a * 2 + b) * 4 + c) * 6 + d) * 8 + e] =
                            x[(((d * 2 + b) * 3 + a) * 4 + c) * 8 + e];
    for (int both = 0; both < 2; both++) {
        int64_t xd[3] = {6, 2, 96}, vd[5] = {6, 2, 3, 4, 8}, yd[5] = {3, 2, 4, 6, 8};
        Onnx__GraphProto *g = ob_graph("heads");
        Onnx__ModelProto *m = ob_model(g);
        ob_input(g, ob_vi("x", ob_tensor_type(F32, 3, xd, NULL)));
        ob_output(g, ob_vi("y", ob_tensor_type(F32, 5, yd, NULL)));
        if (both) ob_output(g, ob_vi("v", ob_tensor_type(F32, 5, vd, NULL)));
        i64_init(g, "shape", 5, vd);
        ob_node(g, "Reshape", "split", (const char *[]){"x", "shape", NULL},
                (const char *[]){"v", NULL});
        Onnx__NodeProto *t = ob_node(g, "Transpose", "forward", (const char *[]){"v", NULL},
                                     (const char *[]){"y", NULL});
        ob_attr_is(t, "perm", (const int64_t[]){2, 1, 3, 0, 4}, 5);
        lm_binary *bin;
        lmfe_report rep;
        CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, &rep));
        /* Alone it fuses into the reshape; with v an output too it is a
         * permutation the output's conversion applies: no launch of its own. */
        CHECK(placement_of(&rep, "Transpose") == (both ? LMFE_VIEW : LMFE_FUSED));
        CHECK_OK(replay1(bin, "x", x, 6 * 2 * 96, "y", y, 6 * 2 * 96, NULL));
        CHECK(!memcmp(y, want, sizeof y));
        if (both) {
            CHECK_OK(replay1(bin, "x", x, 6 * 2 * 96, "v", z, 6 * 2 * 96, NULL));
            CHECK(!memcmp(z, x, sizeof z));
        }
        lmfe_report_free(&rep);
        lm_binary_free(bin);
    }
}

/* GELU as exporters spell it after a MatMul and its bias, fused into the
 * product (gelu_of in fe_fuse.c), in several spellings; a chain that is not
 * quite GELU, and one whose x is read elsewhere too, are left alone; the
 * Gelu op of opset 20 runs on its own and fuses the same way. Each answer
 * is checked against float64. */
enum {
    GELU_TORCH,
    GELU_HALF_FIRST,
    GELU_TANH_POW,
    GELU_NEAR_MISS,
    GELU_X_OUT,
    GELU_OP_TANH,
    GELU_OP_ALONE,
    GELU_FORMS
};

static double gelu_erf(double x) {
    return 0.5 * x * (1 + erf(x / sqrt(2.0)));
}
static double gelu_tanh(double x) {
    return 0.5 * x * (1 + tanh(sqrt(2 / 3.14159265358979323846) * (x + 0.044715 * x * x * x)));
}

static Onnx__ModelProto *gelu_model(int form, const float *w, const float *b) {
    Onnx__GraphProto *g = ob_graph("gelu");
    Onnx__ModelProto *m = ob_model(g);
    if (form == GELU_OP_TANH || form == GELU_OP_ALONE) m->opset_import[0]->version = 20;
    int64_t xd[2] = {6, 40}, wd[2] = {40, 48}, bd[1] = {48}, yd[2] = {6, 48};
    ob_input(g, ob_vi("in", ob_tensor_type(F32, 2, form == GELU_OP_ALONE ? yd : xd, NULL)));
    ob_output(g, ob_vi("y", ob_tensor_type(F32, 2, yd, NULL)));
    if (form == GELU_X_OUT) ob_output(g, ob_vi("x", ob_tensor_type(F32, 2, yd, NULL)));
    f32_init(g, "W", 2, wd, w, 40 * 48);
    f32_init(g, "b", 1, bd, b, 48);
    static const struct {
        const char *name;
        float v;
    } k[] = {
        {"sqrt2", 1.41421356f}, {"rsqrt2", 0.70710678f}, {"one", 1},           {"half", 0.5f},
        {"three", 3},           {"cubic", 0.044715f},    {"s2pi", 0.7978846f}, {"near", 0.45f}};
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
        f32_init(g, k[i].name, 0, NULL, &k[i].v, 1);
#define N(op, a, b, out)                                                                           \
    ob_node(g, op, out, (const char *[]){a, b, NULL}, (const char *[]){out, NULL})
    if (form == GELU_OP_ALONE) {
        N("Gelu", "in", NULL, "y");
        return m;
    }
    N("MatMul", "in", "W", "h");
    N("Add", "b", "h", "x");
    switch (form) {
    case GELU_TORCH:
    case GELU_NEAR_MISS:
    case GELU_X_OUT:
        N("Div", "x", "sqrt2", "d");
        N("Erf", "d", NULL, "e");
        N("Add", "e", "one", "a");
        N("Mul", "x", "a", "p");
        N("Mul", "p", form == GELU_NEAR_MISS ? "near" : "half", "y");
        break;
    case GELU_HALF_FIRST:
        N("Mul", "x", "half", "hx");
        N("Mul", "rsqrt2", "x", "d");
        N("Erf", "d", NULL, "e");
        N("Add", "one", "e", "a");
        N("Mul", "hx", "a", "y");
        break;
    case GELU_TANH_POW:
        N("Pow", "x", "three", "x3");
        N("Mul", "x3", "cubic", "t");
        N("Add", "x", "t", "u");
        N("Mul", "u", "s2pi", "v");
        N("Tanh", "v", NULL, "th");
        N("Add", "th", "one", "a");
        N("Mul", "half", "x", "hx");
        N("Mul", "hx", "a", "y");
        break;
    case GELU_OP_TANH:
        ob_attr_s(N("Gelu", "x", NULL, "y"), "approximate", "tanh");
        break;
    }
#undef N
    return m;
}

static void test_gelu_fusion(void) {
    float w[40 * 48], b[48], in[6 * 48], y[6 * 48];
    for (int i = 0; i < 40 * 48; i++)
        w[i] = (float)((i * 37) % 101 - 50) * 0.004f;
    for (int i = 0; i < 48; i++)
        b[i] = (float)(i % 7) * 0.3f - 0.9f;
    for (int i = 0; i < 6 * 48; i++)
        in[i] = (float)((i * 53) % 89 - 44) * 0.07f;
    for (int form = 0; form < GELU_FORMS; form++) {
        lm_binary *bin;
        lmfe_report rep;
        CHECK_OK(lmfe_compile_onnx(save(gelu_model(form, w, b)), NULL, &bin, &rep));
        bool fused = form != GELU_NEAR_MISS && form != GELU_X_OUT && form != GELU_OP_ALONE;
        const char *mark = form == GELU_TANH_POW ? "Tanh" : form >= GELU_OP_TANH ? "Gelu" : "Erf";
        CHECK(placement_of(&rep, mark) == (fused ? LMFE_FUSED : LMFE_ON_DEVICE));
        CHECK_OK(
            replay1(bin, "in", in, form == GELU_OP_ALONE ? 6 * 48 : 6 * 40, "y", y, 6 * 48, NULL));
        double worst = 0;
        for (int r = 0; r < 6; r++)
            for (int c = 0; c < 48; c++) {
                double x = in[r * 48 + c];
                if (form != GELU_OP_ALONE) {
                    x = b[c];
                    for (int k = 0; k < 40; k++)
                        x += (double)in[r * 40 + k] * w[k * 48 + c];
                }
                bool tanh_form = form == GELU_TANH_POW || form == GELU_OP_TANH;
                double want = tanh_form ? gelu_tanh(x) : gelu_erf(x);
                if (form == GELU_NEAR_MISS) want *= 0.9;
                double e = fabs(y[r * 48 + c] - want) / (1 + fabs(want));
                worst = e > worst ? e : worst;
            }
        CHECK(worst < 2e-6);
        lmfe_report_free(&rep);
        lm_binary_free(bin);
    }
    /* A form the op does not have. */
    Onnx__ModelProto *m = gelu_model(GELU_OP_TANH, w, b);
    m->graph->node[2]->attribute[0]->s.data = (uint8_t *)"fast";
    m->graph->node[2]->attribute[0]->s.len = 4;
    lm_binary *bin;
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'y' (Gelu): attribute approximate=fast is not valid");
}

/* RMS normalization as exporters spell it (LLaMA's RMSNorm, T5's), fused
 * into one lmnn_rms_norm (fuse_rms_norm in fe_fuse.c) in several spellings;
 * a mean over another dim, an intermediate that is also a graph output and
 * a power other than 2 are left alone, and a weight that is not a row of
 * the dim's size stays a Mul of its own. Each answer against float64. */
enum {
    RMS_LLAMA,       /* Pow, Div(1, s), Mul(x, r), Mul(w, y) */
    RMS_SQUARE,      /* Mul(x, x), Add(eps, v), Reciprocal, Mul(r, x), Mul(y, w) */
    RMS_DIV_OPSET18, /* ReduceMean's axes an input, Div(x, s), no weight */
    RMS_CAST_BACK,   /* as RMS_LLAMA with a Cast to float before the weight */
    RMS_OTHER_DIM,   /* the mean over dim 1 */
    RMS_S_OUT,       /* s a graph output too */
    RMS_FOURTH,      /* Pow(x, 4) */
    RMS_WEIGHT_WIDE, /* the weight [1, D]: fused without it */
    RMS_FORMS
};

enum { RMS_B = 3, RMS_T = 5, RMS_D = 40 };

static Onnx__ModelProto *rms_model(int form, const float *w) {
    Onnx__GraphProto *g = ob_graph("rms");
    Onnx__ModelProto *m = ob_model(g);
    if (form == RMS_DIV_OPSET18) m->opset_import[0]->version = 18;
    int64_t xd[3] = {RMS_B, RMS_T, RMS_D}, sd[3] = {RMS_B, RMS_T, 1};
    ob_input(g, ob_vi("x", ob_tensor_type(F32, 3, xd, NULL)));
    ob_output(g, ob_vi("y", ob_tensor_type(F32, 3, xd, NULL)));
    if (form == RMS_S_OUT) ob_output(g, ob_vi("s", ob_tensor_type(F32, 3, sd, NULL)));
    if (form == RMS_WEIGHT_WIDE)
        f32_init(g, "w", 2, (const int64_t[]){1, RMS_D}, w, RMS_D);
    else
        f32_init(g, "w", 1, (const int64_t[]){RMS_D}, w, RMS_D);
    static const float two = 2, four = 4, one = 1, eps = 1e-6f;
    f32_init(g, "two", 0, NULL, form == RMS_FOURTH ? &four : &two, 1);
    f32_init(g, "one", 0, NULL, &one, 1);
    f32_init(g, "eps", 0, NULL, &eps, 1);
    i64_init(g, "axes", 1, (const int64_t[]){-1});
#define N(op, a, b, out)                                                                           \
    ob_node(g, op, out, (const char *[]){a, b, NULL}, (const char *[]){out, NULL})
    if (form == RMS_SQUARE)
        N("Mul", "x", "x", "p");
    else
        N("Pow", "x", "two", "p");
    if (form == RMS_DIV_OPSET18)
        N("ReduceMean", "p", "axes", "v");
    else
        ob_attr_is(N("ReduceMean", "p", NULL, "v"), "axes",
                   (const int64_t[]){form == RMS_OTHER_DIM ? 1 : -1}, 1);
    if (form == RMS_SQUARE)
        N("Add", "eps", "v", "e");
    else
        N("Add", "v", "eps", "e");
    N("Sqrt", "e", NULL, "s");
    switch (form) {
    case RMS_SQUARE:
        N("Reciprocal", "s", NULL, "r");
        N("Mul", "r", "x", "n");
        N("Mul", "n", "w", "y");
        break;
    case RMS_DIV_OPSET18:
        N("Div", "x", "s", "y");
        break;
    default:
        N("Div", "one", "s", "r");
        N("Mul", "x", "r", form == RMS_CAST_BACK ? "n0" : "n");
        if (form == RMS_CAST_BACK) ob_attr_i(N("Cast", "n0", NULL, "n"), "to", 1);
        N("Mul", "w", "n", "y");
    }
#undef N
    return m;
}

static void test_rms_norm_fusion(void) {
    float w[RMS_D], x[RMS_B * RMS_T * RMS_D], y[RMS_B * RMS_T * RMS_D];
    for (int i = 0; i < RMS_D; i++)
        w[i] = (float)(i % 9) * 0.2f - 0.7f;
    for (int i = 0; i < RMS_B * RMS_T * RMS_D; i++)
        x[i] = (float)((i * 53) % 89 - 44) * 0.07f;
    for (int form = 0; form < RMS_FORMS; form++) {
        lm_binary *bin;
        lmfe_report rep;
        CHECK_OK(lmfe_compile_onnx(save(rms_model(form, w)), NULL, &bin, &rep));
        bool fused = form != RMS_OTHER_DIM && form != RMS_S_OUT && form != RMS_FOURTH;
        CHECK(placement_of(&rep, "Sqrt") == (fused ? LMFE_FUSED : LMFE_ON_DEVICE));
        if (form == RMS_CAST_BACK) CHECK(placement_of(&rep, "Cast") == LMFE_FUSED);
        CHECK_OK(
            replay1(bin, "x", x, sizeof x / sizeof x[0], "y", y, sizeof y / sizeof y[0], NULL));
        double worst = 0;
        for (int b = 0; b < RMS_B; b++)
            for (int t = 0; t < RMS_T; t++)
                for (int d = 0; d < RMS_D; d++) {
                    /* The mean over the last dim, or over dim 1 (RMS_OTHER_DIM). */
                    double sum = 0, p = form == RMS_FOURTH ? 4 : 2;
                    int count = form == RMS_OTHER_DIM ? RMS_T : RMS_D;
                    for (int i = 0; i < count; i++) {
                        int at = form == RMS_OTHER_DIM ? (b * RMS_T + i) * RMS_D + d
                                                       : (b * RMS_T + t) * RMS_D + i;
                        sum += pow(x[at], p);
                    }
                    double v = x[(b * RMS_T + t) * RMS_D + d] / sqrt(sum / count + 1e-6);
                    if (form != RMS_DIV_OPSET18) v *= w[d];
                    double e = fabs(y[(b * RMS_T + t) * RMS_D + d] - v) / (1 + fabs(v));
                    worst = e > worst ? e : worst;
                }
        CHECK(worst < 2e-6);
        lmfe_report_free(&rep);
        lm_binary_free(bin);
    }
}

/* 1-D convolutions as a WaveNet or TCN block has them: a stem (a 1x1
 * Conv, or an element-wise Mul, whose result stays [N, C, L] in tiles),
 * a causal left Pad folded into a dilated Conv, Relu, a residual Add, and
 * a Conv with its own pads. With a Conv stem every value between them is
 * a flat NHWC image (nothing reshaped into [N, C, 1, L] and back); from the
 * Mul, the signal is one tile transpose into the image a Conv reads.
 * Against float64. */
enum { C1_N = 2, C1_C = 3, C1_L = 37, C1_H = 8, C1_O = 4, C1_K = 3, C1_D = 2 };

/* out[n][o][l] = b[o] + sum over c, k of w[o][c][k] in[n][c][l * 1 + k * dil - pad]. */
static void conv1d_ref(const double *in, int cin, const float *w, const float *b, int cout, int k,
                       int dil, int pad, double *out) {
    for (int n = 0; n < C1_N; n++)
        for (int o = 0; o < cout; o++)
            for (int l = 0; l < C1_L; l++) {
                double acc = b[o];
                for (int c = 0; c < cin; c++)
                    for (int t = 0; t < k; t++) {
                        int at = l + t * dil - pad;
                        if (at >= 0 && at < C1_L)
                            acc += w[(o * cin + c) * k + t] * in[(n * cin + c) * C1_L + at];
                    }
                out[(n * cout + o) * C1_L + l] = acc;
            }
}

static void test_conv1d_images(void) {
    static float x[C1_N * C1_C * C1_L], y[C1_N * C1_O * C1_L];
    static float w0[C1_H * C1_C], w1[C1_H * C1_H * C1_K], w2[C1_O * C1_H * C1_K];
    static float b0[C1_H], b1[C1_H], b2[C1_O];
    static double xd[C1_N * C1_C * C1_L], s[C1_N * C1_H * C1_L], r[C1_N * C1_H * C1_L];
    static double want[C1_N * C1_O * C1_L];
    for (int i = 0; i < C1_N * C1_C * C1_L; i++)
        xd[i] = x[i] = (float)((i * 31) % 47 - 23) * 0.05f;
    for (int i = 0; i < C1_H * C1_C; i++)
        w0[i] = (float)((i * 7) % 11 - 5) * 0.1f;
    for (int i = 0; i < C1_H * C1_H * C1_K; i++)
        w1[i] = (float)((i * 13) % 17 - 8) * 0.04f;
    for (int i = 0; i < C1_O * C1_H * C1_K; i++)
        w2[i] = (float)((i * 5) % 19 - 9) * 0.05f;
    for (int i = 0; i < C1_H; i++)
        b0[i] = b1[i] = (float)i * 0.05f - 0.2f;
    for (int i = 0; i < C1_O; i++)
        b2[i] = (float)i * 0.1f;
    for (int stem = 0; stem < 2; stem++) {
        Onnx__GraphProto *g = ob_graph("conv1d");
        Onnx__ModelProto *m = ob_model(g);
        int ch = stem ? C1_H : C1_C; /* the block's channels */
        ob_input(g, ob_vi("x", ob_tensor_type(F32, 3, (const int64_t[]){C1_N, C1_C, C1_L}, NULL)));
        ob_output(g, ob_vi("y", ob_tensor_type(F32, 3, (const int64_t[]){C1_N, C1_O, C1_L}, NULL)));
        f32_init(g, "w0", 3, (const int64_t[]){C1_H, C1_C, 1}, w0, C1_H * C1_C);
        f32_init(g, "b0", 1, (const int64_t[]){C1_H}, b0, C1_H);
        f32_init(g, "w1", 3, (const int64_t[]){ch, ch, C1_K}, w1, (size_t)(ch * ch * C1_K));
        f32_init(g, "b1", 1, (const int64_t[]){ch}, b1, (size_t)ch);
        f32_init(g, "w2", 3, (const int64_t[]){C1_O, ch, C1_K}, w2, (size_t)(C1_O * ch * C1_K));
        f32_init(g, "b2", 1, (const int64_t[]){C1_O}, b2, C1_O);
        f32_init(g, "two", 0, NULL, (const float[]){2}, 1);
        i64_init(g, "pads", 6, (const int64_t[]){0, 0, (C1_K - 1) * C1_D, 0, 0, 0});
#define NODE(op, out, ...)                                                                         \
    ob_node(g, op, out, (const char *[]){__VA_ARGS__, NULL}, (const char *[]){out, NULL})
        if (stem)
            NODE("Conv", "s", "x", "w0", "b0");
        else
            NODE("Mul", "s", "x", "two");
        NODE("Pad", "p", "s", "pads");
        ob_attr_is(NODE("Conv", "c1", "p", "w1", "b1"), "dilations", (const int64_t[]){C1_D}, 1);
        NODE("Relu", "r", "c1");
        NODE("Add", "a", "s", "r");
        ob_attr_is(NODE("Conv", "y", "a", "w2", "b2"), "pads", (const int64_t[]){1, 1}, 2);
#undef NODE
        lm_binary *bin;
        lmfe_report rep;
        CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, &rep));
        CHECK(placement_of(&rep, "Pad") == LMFE_FUSED);
        if (stem) CHECK(rep.notes && strstr(rep.notes, "layout: 3 results"));
        lm_replay *rp;
        CHECK_OK(replay_profiled(bin, x, sizeof x, &rp));
        CHECK_OK(lm_replay_get_output(rp, "y", y, sizeof y));
        /* The convolutions' launches: with the stem, each one's product,
         * c1's untilize of its input and y's result to NCHW (a reshape and
         * a transpose: 7); from the Mul, for c1 and y each the transpose in,
         * the untilize, the product, and the two out (10). Signals reshaped
         * into [N, C, 1, L] and back took 18 and more. */
        const lm_profile_program_entry *e;
        size_t n, convs = 0;
        CHECK_OK(lm_replay_get_program_profile(rp, &e, &n));
        for (size_t i = 0; i < n; i++)
            if (!strncmp(e[i].label, "Conv ", 5)) convs += e[i].launches;
        CHECK(convs == (stem ? 7u : 10u));
        lm_replay_close(rp);
        /* s, then r = relu(conv(s, causal)) + s, then y. */
        if (stem)
            conv1d_ref(xd, C1_C, w0, b0, C1_H, 1, 1, 0, s);
        else
            for (int i = 0; i < C1_N * C1_C * C1_L; i++)
                s[i] = 2 * xd[i];
        conv1d_ref(s, ch, w1, b1, ch, C1_K, C1_D, (C1_K - 1) * C1_D, r);
        for (int i = 0; i < C1_N * ch * C1_L; i++)
            r[i] = (r[i] > 0 ? r[i] : 0) + s[i];
        conv1d_ref(r, ch, w2, b2, C1_O, C1_K, 1, 1, want);
        double worst = 0;
        for (int i = 0; i < C1_N * C1_O * C1_L; i++) {
            double err = fabs(y[i] - want[i]) / (1 + fabs(want[i]));
            worst = err > worst ? err : worst;
        }
        CHECK(worst < 2e-6);
        lmfe_report_free(&rep);
        lm_binary_free(bin);
    }
}

/* 1-D poolings between 1-D convolutions (an audio classifier's): Conv,
 * MaxPool (3, stride 2, padded), AveragePool (2, stride 1), Conv, each
 * reading the last one's flat image; and a MaxPool of a signal held in
 * tiles (after a Mul), one tile transpose into its image. Against float64. */
static void test_pool1d_images(void) {
    enum { N = 2, C = 3, L = 37, O = 5, PL = (L + 2 - 3) / 2 + 1, AL = PL - 1 };
    static float x[N * C * L], w1[O * C * 3], w2[O * O], b[O], y[N * O * AL];
    static double xd[N * C * L], c1[N * O * L], mp[N * O * PL], ap[N * O * AL];
    for (int i = 0; i < N * C * L; i++)
        xd[i] = x[i] = (float)((i * 17) % 29 - 14) * 0.1f;
    for (int i = 0; i < O * C * 3; i++)
        w1[i] = (float)((i * 5) % 13 - 6) * 0.1f;
    for (int i = 0; i < O * O; i++)
        w2[i] = (float)((i * 3) % 7 - 3) * 0.2f;
    for (int i = 0; i < O; i++)
        b[i] = (float)i * 0.1f - 0.2f;
    for (int stem = 0; stem < 2; stem++) {
        int ch = stem ? O : C;
        Onnx__GraphProto *g = ob_graph("pool1d");
        Onnx__ModelProto *m = ob_model(g);
        ob_input(g, ob_vi("x", ob_tensor_type(F32, 3, (const int64_t[]){N, C, L}, NULL)));
        ob_output(g, ob_vi("y", ob_tensor_type(F32, 3, (const int64_t[]){N, O, AL}, NULL)));
        f32_init(g, "w1", 3, (const int64_t[]){O, C, 3}, w1, O * C * 3);
        f32_init(g, "w2", 3, (const int64_t[]){O, ch, 1}, w2, (size_t)(O * ch));
        f32_init(g, "b", 1, (const int64_t[]){O}, b, O);
        f32_init(g, "one", 0, NULL, (const float[]){1}, 1);
#define NODE(op, out, ...)                                                                         \
    ob_node(g, op, out, (const char *[]){__VA_ARGS__, NULL}, (const char *[]){out, NULL})
        if (stem)
            ob_attr_is(NODE("Conv", "c1", "x", "w1", "b"), "pads", (const int64_t[]){1, 1}, 2);
        else
            NODE("Mul", "c1", "x", "one");
        Onnx__NodeProto *mx = NODE("MaxPool", "mp", "c1");
        ob_attr_is(mx, "kernel_shape", (const int64_t[]){3}, 1);
        ob_attr_is(mx, "strides", (const int64_t[]){2}, 1);
        ob_attr_is(mx, "pads", (const int64_t[]){1, 1}, 2);
        ob_attr_is(NODE("AveragePool", "ap", "mp"), "kernel_shape", (const int64_t[]){2}, 1);
        NODE("Conv", "y", "ap", "w2", "b");
#undef NODE
        lm_binary *bin;
        lmfe_report rep;
        CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, &rep));
        CHECK(rep.notes && strstr(rep.notes, stem ? "layout: 3 results" : "layout: 2 results"));
        CHECK_OK(replay1(bin, "x", x, N * C * L, "y", y, N * O * AL, NULL));
        if (stem)
            for (int n = 0; n < N; n++)
                for (int o = 0; o < O; o++)
                    for (int l = 0; l < L; l++) {
                        double acc = b[o];
                        for (int c = 0; c < C; c++)
                            for (int t = 0; t < 3; t++)
                                if (l + t - 1 >= 0 && l + t - 1 < L)
                                    acc +=
                                        w1[(o * C + c) * 3 + t] * xd[(n * C + c) * L + l + t - 1];
                        c1[(n * O + o) * L + l] = acc;
                    }
        else
            memcpy(c1, xd, sizeof xd);
        for (int r = 0; r < N * ch; r++) {
            for (int l = 0; l < PL; l++) {
                double v = -INFINITY;
                for (int t = 0; t < 3; t++)
                    if (2 * l + t - 1 >= 0 && 2 * l + t - 1 < L && c1[r * L + 2 * l + t - 1] > v)
                        v = c1[r * L + 2 * l + t - 1];
                mp[r * PL + l] = v;
            }
            for (int l = 0; l < AL; l++)
                ap[r * AL + l] = (mp[r * PL + l] + mp[r * PL + l + 1]) / 2;
        }
        double worst = 0;
        for (int n = 0; n < N; n++)
            for (int o = 0; o < O; o++)
                for (int l = 0; l < AL; l++) {
                    double want = b[o];
                    for (int c = 0; c < ch; c++)
                        want += w2[o * ch + c] * ap[(n * ch + c) * AL + l];
                    double err = fabs(y[(n * O + o) * AL + l] - want) / (1 + fabs(want));
                    worst = err > worst ? err : worst;
                }
        CHECK(worst < 2e-6);
        lmfe_report_free(&rep);
        lm_binary_free(bin);
    }
}

/* An explicit Pad before a Conv or an AveragePool (TensorFlow's exports,
 * torchvision's Inception): zeros around H and W move into the reader's
 * pads (fold_pad), other pads stay a Pad. Every case against float64. */
typedef struct pad_case {
    const char *reader; /* Conv, AveragePool or MaxPool */
    int64_t pads[8];    /* the Pad's, ONNX order */
    float value;
    const char *mode;
    int64_t own[4];    /* the reader's pads */
    int64_t include;   /* AveragePool's count_include_pad */
    int64_t ceil_mode; /* AveragePool's */
    bool folded;
    bool pre_conv; /* x comes through a 1x1 identity Conv, whose image the reader takes */
} pad_case;

enum { PC_C = 3, PC_H = 9, PC_W = 8, PC_OC = 5, PC_K = 3, PC_MAX = 2 * 16 * 16 * 8 };

/* The Pad's result, as doubles: [C][ph][pw] (constant, or edge when mode is "edge"). */
static void pad_ref(const pad_case *k, const float *x, double *p, int ph, int pw, int pc) {
    for (int c = 0; c < pc; c++)
        for (int y = 0; y < ph; y++)
            for (int i = 0; i < pw; i++) {
                int sc = c - (int)k->pads[1], sy = y - (int)k->pads[2], sx = i - (int)k->pads[3];
                bool edge = k->mode && !strcmp(k->mode, "edge");
                if (edge) {
                    sy = sy < 0 ? 0 : sy >= PC_H ? PC_H - 1 : sy;
                    sx = sx < 0 ? 0 : sx >= PC_W ? PC_W - 1 : sx;
                }
                bool in = sc >= 0 && sc < PC_C && sy >= 0 && sy < PC_H && sx >= 0 && sx < PC_W;
                p[(c * ph + y) * pw + i] = in ? x[(sc * PC_H + sy) * PC_W + sx] : k->value;
            }
}

static void test_pad_folded(void) {
    static const pad_case cases[] = {
        {"Conv", {0, 0, 1, 2, 0, 0, 2, 1}, 0, NULL, {1, 0, 0, 1}, 0, 0, true, false},
        {"AveragePool", {0, 0, 1, 1, 0, 0, 1, 1}, 0, "constant", {0}, 0, 0, true, false},
        {"AveragePool", {0, 0, 0, 2, 0, 0, 1, 0}, 0, NULL, {1, 0, 1, 1}, 1, 0, true, false},
        {"AveragePool", {0, 0, 1, 1, 0, 0, 1, 1}, 0, NULL, {0}, 0, 0, true, true},
        /* Own pads not counted, a nonzero value, ceil_mode, channels, edge, MaxPool. */
        {"AveragePool", {0, 0, 1, 1, 0, 0, 1, 1}, 0, NULL, {1, 1, 1, 1}, 0, 0, false, false},
        {"Conv", {0, 0, 1, 1, 0, 0, 1, 1}, 0.5f, NULL, {0}, 0, 0, false, false},
        {"AveragePool", {0, 0, 1, 1, 0, 0, 1, 1}, 0, NULL, {0}, 1, 1, false, false},
        {"AveragePool", {0, 1, 1, 1, 0, 0, 1, 1}, 0, NULL, {0}, 1, 0, false, false},
        {"AveragePool", {0, 0, 1, 1, 0, 0, 1, 1}, 0, "edge", {0}, 1, 0, false, false},
        {"MaxPool", {0, 0, 1, 1, 0, 0, 1, 1}, 0, NULL, {0}, 0, 0, false, false},
    };
    static float x[PC_C * PC_H * PC_W], w[PC_OC * (PC_C + 1) * PC_K * PC_K], b[PC_OC];
    static float y[PC_MAX];
    static double p[PC_MAX];
    for (int i = 0; i < PC_C * PC_H * PC_W; i++)
        x[i] = (float)((i * 37) % 61 - 30) * 0.05f;
    for (int i = 0; i < PC_OC * (PC_C + 1) * PC_K * PC_K; i++)
        w[i] = (float)((i * 13) % 23 - 11) * 0.03f;
    for (int i = 0; i < PC_OC; i++)
        b[i] = (float)i * 0.1f - 0.2f;
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        const pad_case *k = &cases[ci];
        bool conv = !strcmp(k->reader, "Conv"), avg = !strcmp(k->reader, "AveragePool");
        int pc = PC_C + (int)(k->pads[1] + k->pads[5]);
        int ph = PC_H + (int)(k->pads[2] + k->pads[6]), pw = PC_W + (int)(k->pads[3] + k->pads[7]);
        int stride = avg ? 2 : 1, oc = conv ? PC_OC : pc;
        int oh = (ph + (int)(k->own[0] + k->own[2]) - PC_K) / stride + 1;
        int ow = (pw + (int)(k->own[1] + k->own[3]) - PC_K) / stride + 1;
        if (k->ceil_mode) {
            oh = (ph + (int)(k->own[0] + k->own[2]) - PC_K + stride - 1) / stride + 1;
            ow = (pw + (int)(k->own[1] + k->own[3]) - PC_K + stride - 1) / stride + 1;
        }
        int64_t xd[4] = {1, PC_C, PC_H, PC_W}, yd[4] = {1, oc, oh, ow};
        int64_t wd[4] = {PC_OC, pc, PC_K, PC_K}, bd[1] = {PC_OC}, ks[2] = {PC_K, PC_K};
        int64_t st[2] = {stride, stride};
        Onnx__GraphProto *g = ob_graph("padded");
        Onnx__ModelProto *m = ob_model(g);
        ob_input(g, ob_vi("x", ob_tensor_type(F32, 4, xd, NULL)));
        ob_output(g, ob_vi("y", ob_tensor_type(F32, 4, yd, NULL)));
        i64_init(g, "pads", 8, k->pads);
        float value = k->value;
        f32_init(g, "value", 0, NULL, &value, 1);
        if (k->pre_conv) {
            static float eye[PC_C * PC_C];
            for (int i = 0; i < PC_C; i++)
                eye[i * PC_C + i] = 1;
            f32_init(g, "eye", 4, (const int64_t[]){PC_C, PC_C, 1, 1}, eye, PC_C * PC_C);
            ob_node(g, "Conv", "c0", (const char *[]){"x", "eye", NULL},
                    (const char *[]){"x1", NULL});
        }
        Onnx__NodeProto *pad = ob_node(
            g, "Pad", "pad", (const char *[]){k->pre_conv ? "x1" : "x", "pads", "value", NULL},
            (const char *[]){"p", NULL});
        if (k->mode) ob_attr_s(pad, "mode", k->mode);
        Onnx__NodeProto *r;
        if (conv) {
            f32_init(g, "w", 4, wd, w, (size_t)(PC_OC * pc * PC_K * PC_K));
            f32_init(g, "b", 1, bd, b, PC_OC);
            r = ob_node(g, "Conv", "reader", (const char *[]){"p", "w", "b", NULL},
                        (const char *[]){"y", NULL});
        } else {
            r = ob_node(g, k->reader, "reader", (const char *[]){"p", NULL},
                        (const char *[]){"y", NULL});
            ob_attr_is(r, "strides", st, 2);
            if (avg) ob_attr_i(r, "count_include_pad", k->include);
            if (k->ceil_mode) ob_attr_i(r, "ceil_mode", 1);
        }
        ob_attr_is(r, "kernel_shape", ks, 2);
        ob_attr_is(r, "pads", k->own, 4);
        lm_binary *bin;
        lmfe_report rep;
        CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, &rep));
        CHECK(placement_of(&rep, "Pad") == (k->folded ? LMFE_FUSED : LMFE_ON_DEVICE));
        /* The Conv's result stays an image: the folded Pad reads nothing. */
        if (k->pre_conv) CHECK(rep.notes && strstr(rep.notes, "layout: 1 results"));
        CHECK_OK(replay1(bin, "x", x, PC_C * PC_H * PC_W, "y", y, (size_t)(oc * oh * ow), NULL));
        pad_ref(k, x, p, ph, pw, pc);
        double worst = 0;
        for (int o = 0; o < oc; o++)
            for (int i = 0; i < oh; i++)
                for (int j = 0; j < ow; j++) {
                    double acc = conv ? b[o] : avg ? 0 : -INFINITY;
                    int n = 0;
                    for (int c = conv ? 0 : o; c < (conv ? pc : o + 1); c++)
                        for (int u = 0; u < PC_K; u++)
                            for (int v = 0; v < PC_K; v++) {
                                int yy = i * stride + u - (int)k->own[0];
                                int xx = j * stride + v - (int)k->own[1];
                                bool in = yy >= 0 && yy < ph && xx >= 0 && xx < pw;
                                bool tail = yy >= ph + (int)k->own[2] || xx >= pw + (int)k->own[3];
                                if (!in && (!k->include || tail)) continue;
                                double e = in ? p[(c * ph + yy) * pw + xx] : 0;
                                if (conv)
                                    acc += e * w[((o * pc + c) * PC_K + u) * PC_K + v];
                                else if (avg)
                                    acc += e, n++;
                                else
                                    acc = e > acc ? e : acc;
                            }
                    double want = avg ? acc / n : acc, got = y[(o * oh + i) * ow + j];
                    double e = fabs(got - want) / (1 + fabs(want));
                    worst = e > worst ? e : worst;
                }
        if (worst > 1e-5) printf("  case %zu (%s): error %g\n", ci, k->reader, worst);
        CHECK(worst <= 1e-5);
        lmfe_report_free(&rep);
        lm_binary_free(bin);
    }
}

/* Max, Min, Sum and Mean of known inputs fold, however many inputs and
 * however they broadcast, as a detector's resize computes its output size
 * (the least of two ratios): a Reshape's shape from Sum(Max, Min, z) of
 * int64 constants (which must fold, or the Reshape is refused), times
 * Mean(m1, m2), plus Max of three floats ([3, 1], [4] and a scalar). */
static void test_variadic_folds(void) {
    Onnx__GraphProto *g = ob_graph("variadic");
    Onnx__ModelProto *m = ob_model(g);
    int64_t xd[1] = {12}, yd[2] = {3, 4};
    ob_input(g, ob_vi("x", ob_tensor_type(F32, 1, xd, NULL)));
    ob_output(g, ob_vi("y", ob_tensor_type(F32, 2, yd, NULL)));
    i64_init(g, "a", 2, (const int64_t[]){2, 1});
    i64_init(g, "b", 2, (const int64_t[]){1, 2});
    i64_init(g, "z", 2, (const int64_t[]){0, 1});
    static const float m1[4] = {1, 2, 3, 4}, m2[4] = {3, 2, 1, 0.5f};
    static const float cc[3] = {-1, 5, 0.25f}, cd[4] = {0, 1, 2, 3}, ce = 1.5f;
    f32_init(g, "m1", 1, (const int64_t[]){4}, m1, 4);
    f32_init(g, "m2", 1, (const int64_t[]){4}, m2, 4);
    f32_init(g, "c", 2, (const int64_t[]){3, 1}, cc, 3);
    f32_init(g, "d", 1, (const int64_t[]){4}, cd, 4);
    f32_init(g, "e", 0, NULL, &ce, 1);
    ob_node(g, "Max", "hi", (const char *[]){"a", "b", NULL}, (const char *[]){"hi", NULL});
    ob_node(g, "Min", "lo", (const char *[]){"a", "b", NULL}, (const char *[]){"lo", NULL});
    ob_node(g, "Sum", "shape", (const char *[]){"hi", "lo", "z", NULL},
            (const char *[]){"shape", NULL});
    ob_node(g, "Reshape", "r", (const char *[]){"x", "shape", NULL}, (const char *[]){"xr", NULL});
    ob_node(g, "Mean", "mean", (const char *[]){"m1", "m2", NULL}, (const char *[]){"mn", NULL});
    ob_node(g, "Mul", "scale", (const char *[]){"xr", "mn", NULL}, (const char *[]){"xs", NULL});
    ob_node(g, "Max", "max3", (const char *[]){"c", "d", "e", NULL}, (const char *[]){"mx", NULL});
    ob_node(g, "Add", "plus", (const char *[]){"xs", "mx", NULL}, (const char *[]){"y", NULL});
    lm_binary *bin;
    lmfe_report rep;
    CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, &rep));
    /* Folded, or removed where a fold read them: none runs. */
    for (size_t i = 0; i < rep.op_count; i++) {
        const char *op = rep.ops[i].op_type;
        if (!strcmp(op, "Max") || !strcmp(op, "Min") || !strcmp(op, "Sum") || !strcmp(op, "Mean"))
            CHECK(rep.ops[i].placement != LMFE_ON_DEVICE);
    }
    float x[12], y[12];
    for (int i = 0; i < 12; i++)
        x[i] = (float)i - 5.5f;
    CHECK_OK(replay1(bin, "x", x, 12, "y", y, 12, NULL));
    int bad = 0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++) {
            float mx = cc[i] > cd[j] ? cc[i] : cd[j];
            mx = mx > ce ? mx : ce;
            float want = x[i * 4 + j] * ((m1[j] + m2[j]) / 2) + mx;
            bad += y[i * 4 + j] != want;
        }
    CHECK(bad == 0);
    lmfe_report_free(&rep);
    lm_binary_free(bin);
}

/* Clip, CumSum and Tile of known inputs fold too, so a shape computed
 * through them is known: Reshape(x, CumSum(Clip([-5, 9], 1, 3), reverse) +
 * Tile([-1, 1], [1])) = Reshape(x, [4, 3] + [-1, 1]) = [3, 4]. */
static void test_shape_op_folds(void) {
    Onnx__GraphProto *g = ob_graph("shape_ops");
    Onnx__ModelProto *m = ob_model(g);
    int64_t xd[1] = {12}, yd[2] = {3, 4};
    ob_input(g, ob_vi("x", ob_tensor_type(F32, 1, xd, NULL)));
    ob_output(g, ob_vi("y", ob_tensor_type(F32, 2, yd, NULL)));
    i64_init(g, "c", 2, (const int64_t[]){-5, 9});
    i64_init(g, "lo", 1, (const int64_t[]){1});
    i64_init(g, "hi", 1, (const int64_t[]){3});
    i64_init(g, "axis", 1, (const int64_t[]){0});
    i64_init(g, "t", 2, (const int64_t[]){-1, 1});
    i64_init(g, "reps", 1, (const int64_t[]){1});
    /* Clip's bounds are scalars. */
    g->initializer[1]->n_dims = 0;
    g->initializer[2]->n_dims = 0;
    g->initializer[3]->n_dims = 0;
    ob_node(g, "Clip", "clip", (const char *[]){"c", "lo", "hi", NULL},
            (const char *[]){"clipped", NULL});
    Onnx__NodeProto *cs = ob_node(g, "CumSum", "cumsum", (const char *[]){"clipped", "axis", NULL},
                                  (const char *[]){"sums", NULL});
    ob_attr_i(cs, "reverse", 1);
    ob_node(g, "Tile", "tile", (const char *[]){"t", "reps", NULL},
            (const char *[]){"tiled", NULL});
    ob_node(g, "Add", "shape", (const char *[]){"sums", "tiled", NULL},
            (const char *[]){"shape", NULL});
    ob_node(g, "Reshape", "r", (const char *[]){"x", "shape", NULL}, (const char *[]){"y", NULL});
    lm_binary *bin;
    lmfe_report rep;
    CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, &rep));
    for (size_t i = 0; i < rep.op_count; i++) {
        const char *op = rep.ops[i].op_type;
        if (!strcmp(op, "Clip") || !strcmp(op, "CumSum") || !strcmp(op, "Tile"))
            CHECK(rep.ops[i].placement != LMFE_ON_DEVICE);
    }
    float x[12], y[12];
    for (int i = 0; i < 12; i++)
        x[i] = (float)i * 0.5f - 3;
    CHECK_OK(replay1(bin, "x", x, 12, "y", y, 12, NULL));
    CHECK(memcmp(x, y, sizeof x) == 0);
    lmfe_report_free(&rep);
    lm_binary_free(bin);
}

/* A padded NonZero counts its elements' places on the device, exactly up
 * to 2^24 of them, and a padded Unique sorts its input on one core: bigger
 * inputs are refused when compiling (before anything is allocated). */
static void test_padded_limits(void) {
    Onnx__GraphProto *g = ob_graph("big");
    Onnx__ModelProto *m = ob_model(g);
    int64_t xd[2] = {4097, 4096};
    ob_input(g, ob_vi("x", ob_tensor_type(F32, 2, xd, NULL)));
    ob_output(g, ob_vi("y", ob_tensor_type(I64, 2, (const int64_t[]){2, -1}, NULL)));
    ob_node(g, "NonZero", "nz", (const char *[]){"x", NULL}, (const char *[]){"y", NULL});
    const char *path = save(m);
    lmfe_compile_options o;
    lmfe_compile_options_init(&o);
    o.pad_dynamic = true;
    lm_binary *bin;
    CHECK_FAILS(lmfe_compile_onnx(path, &o, &bin, NULL), LM_ERR_UNSUPPORTED,
                "node 'nz' (NonZero): with run-time data of 16781312 entries: padded, at most "
                "2^24 (the device counts their places in its exact integer range)");

    /* A padded Unique sorts on one core: at most 32768 elements. */
    g = ob_graph("many");
    m = ob_model(g);
    ob_input(g, ob_vi("x", ob_tensor_type(F32, 1, (const int64_t[]){32769}, NULL)));
    ob_output(g, ob_vi("y", ob_tensor_type(F32, 1, (const int64_t[]){-1}, NULL)));
    ob_node(g, "Unique", "u", (const char *[]){"x", NULL}, (const char *[]){"y", NULL});
    path = save(m);
    CHECK_FAILS(lmfe_compile_onnx(path, &o, &bin, NULL), LM_ERR_UNSUPPORTED,
                "node 'u' (Unique): with run-time values, 32769 elements: padded, at most 32768 "
                "(they are sorted on one core)");
}

/* The best k of the run-time values above (or below) a threshold, with the
 * selection's places read at the TopK's indices (a detector's
 * scores[keep].topk(k) and where(keep)[0][indices]): chosen among the
 * values masked, so the padded selection (a running sum and a scatter as
 * long as the values) is never made. Each form compiles once and replays
 * values of which more than k are selected and fewer (the rest padding:
 * NaN and -1), ties, NaN and infinities among them; the results equal the
 * selection's, ties in index order. The selection stays when the TopK's
 * indices are read otherwise, or when it keeps values below the threshold
 * and the TopK takes the largest. */
static void test_topk_of_selection(void) {
    enum { N = 64, K = 8 };
    static const struct {
        const char *cmp, *a, *b; /* the condition cmp(a, b) */
        bool above, largest, indices_out, rewritten;
    } forms[] = {
        {"Greater", "x", "t", true, true, false, true},
        {"Less", "x", "t", false, false, false, true},
        {"Less", "t", "x", true, true, true, false},   /* indices also an output */
        {"Less", "x", "t", false, true, false, false}, /* below, the largest */
    };
    float xs[2][N];
    for (int i = 0; i < N; i++) {
        xs[0][i] = (float)((i * 37) % 16) / 16; /* ties: 4 of each */
        xs[1][i] = i % 13 == 5 ? 0.75f : 0.5f;  /* 5 above, none below */
    }
    xs[0][3] = NAN;
    xs[0][9] = INFINITY;
    xs[0][20] = -INFINITY;
    for (size_t f = 0; f < sizeof forms / sizeof forms[0]; f++) {
        Onnx__GraphProto *g = ob_graph("select");
        Onnx__ModelProto *m = ob_model(g);
        ob_input(g, ob_vi("x", ob_tensor_type(F32, 1, (const int64_t[]){N}, NULL)));
        ob_output(g, ob_vi("v", ob_tensor_type(F32, 1, (const int64_t[]){K}, NULL)));
        ob_output(g, ob_vi("pos", ob_tensor_type(I64, 1, (const int64_t[]){K}, NULL)));
        if (forms[f].indices_out)
            ob_output(g, ob_vi("i", ob_tensor_type(I64, 1, (const int64_t[]){K}, NULL)));
        f32_init(g, "t", 0, NULL, (const float[]){0.5f}, 1);
        i64_init(g, "k", 1, (const int64_t[]){K});
        i64_init(g, "axes", 1, (const int64_t[]){0});
        ob_node(g, forms[f].cmp, "keep", (const char *[]){forms[f].a, forms[f].b, NULL},
                (const char *[]){"m", NULL});
        ob_node(g, "NonZero", "nz", (const char *[]){"m", NULL}, (const char *[]){"nz", NULL});
        ob_attr_is(ob_node(g, "Transpose", "tr", (const char *[]){"nz", NULL},
                           (const char *[]){"tr", NULL}),
                   "perm", (const int64_t[]){1, 0}, 2);
        ob_node(g, "GatherND", "sel", (const char *[]){"x", "tr", NULL},
                (const char *[]){"s", NULL});
        ob_node(g, "Squeeze", "places", (const char *[]){"nz", "axes", NULL},
                (const char *[]){"idx", NULL});
        ob_attr_i(ob_node(g, "TopK", "best", (const char *[]){"s", "k", NULL},
                          (const char *[]){"v", "i", NULL}),
                  "largest", forms[f].largest);
        ob_node(g, "Gather", "at", (const char *[]){"idx", "i", NULL},
                (const char *[]){"pos", NULL});
        lmfe_compile_options o;
        lmfe_compile_options_init(&o);
        o.pad_dynamic = true;
        lm_binary *bin;
        lmfe_report rep;
        CHECK_OK(lmfe_compile_onnx(save(m), &o, &bin, &rep));
        lmfe_placement want = forms[f].rewritten ? LMFE_REMOVED : LMFE_ON_DEVICE;
        CHECK(placement_of(&rep, "GatherND") == want);
        CHECK(placement_of(&rep, "CumSum") == want);
        lmfe_report_free(&rep);
        for (int run = 0; run < 2; run++) {
            const float *x = xs[run];
            /* The reference: the selected places in order of value, ties
             * (and NaN, never selected) in index order. */
            int64_t sel[N];
            int count = 0;
            for (int i = 0; i < N; i++)
                if (forms[f].above ? x[i] > 0.5f : x[i] < 0.5f) sel[count++] = i;
            for (int a = 1; a < count; a++)
                for (int b = a; b > 0; b--) {
                    float p = x[sel[b - 1]], q = x[sel[b]];
                    if (!(forms[f].largest ? q > p : q < p)) break;
                    int64_t tmp = sel[b];
                    sel[b] = sel[b - 1];
                    sel[b - 1] = tmp;
                }
            lm_replay *r;
            CHECK_OK(replay_open(bin, &r));
            float v[K];
            int32_t pos[K]; /* int64 outputs come out as int32 */
            CHECK_OK(lm_replay_set_input(r, "x", x, sizeof xs[run]));
            CHECK_OK(lm_replay_run(r, NULL, NULL, NULL));
            CHECK_OK(lm_replay_get_output(r, "v", v, sizeof v));
            CHECK_OK(lm_replay_get_output(r, "pos", pos, sizeof pos));
            lm_replay_close(r);
            for (int j = 0; j < K; j++) {
                if (j < count) {
                    CHECK(pos[j] == sel[j] && v[j] == x[sel[j]]);
                } else {
                    CHECK(pos[j] == -1 && isnan(v[j]));
                }
            }
        }
        lm_binary_free(bin);
    }
}

/* lmfe_compile_options.outputs: a model compiled up to values inside it.
 * After them comes a NonZero of run-time data (refused when compiled) that
 * reads a second input, k; cut at b = Exp(a) and a = Relu(x), in that order,
 * the binary takes x only and gives b and a. Names the model lacks, repeats
 * or takes as inputs are errors, in the compile and in the inspection. */
static void test_graph_outputs(void) {
    Onnx__GraphProto *g = ob_graph("cut");
    Onnx__ModelProto *m = ob_model(g);
    int64_t xd[1] = {6};
    ob_input(g, ob_vi("x", ob_tensor_type(F32, 1, xd, NULL)));
    ob_input(g, ob_vi("k", ob_tensor_type(F32, 1, xd, NULL)));
    ob_output(g, ob_vi("where", ob_tensor_type(I64, 2, (const int64_t[]){1, -1}, NULL)));
    ob_node(g, "Relu", "relu", (const char *[]){"x", NULL}, (const char *[]){"a", NULL});
    ob_node(g, "Exp", "exp", (const char *[]){"a", NULL}, (const char *[]){"b", NULL});
    ob_node(g, "Mul", "mul", (const char *[]){"b", "k", NULL}, (const char *[]){"bk", NULL});
    ob_node(g, "NonZero", "nz", (const char *[]){"bk", NULL}, (const char *[]){"where", NULL});
    const char *path = save(m);
    lm_binary *bin;
    CHECK_FAILS(lmfe_compile_onnx(path, NULL, &bin, NULL), LM_ERR_UNSUPPORTED,
                "input 0 ('bk') is known only at run time, and with it how many elements are "
                "nonzero: compile with --pad-dynamic (options: pad_dynamic) for an output of a "
                "column per element, the unused ones -1, or with --graph-outputs (options: "
                "outputs) up to values before this node");

    const char *cut[2] = {"b", "a"};
    lmfe_compile_options o;
    lmfe_compile_options_init(&o);
    o.outputs = cut;
    o.output_count = 2;
    lmfe_model_info info;
    CHECK_OK(lmfe_inspect_onnx_cut(path, cut, 2, &info));
    CHECK(info.input_count == 1 && !strcmp(info.inputs[0].name, "x"));
    CHECK(info.output_count == 2 && !strcmp(info.outputs[0].name, "b") &&
          !strcmp(info.outputs[1].name, "a"));
    CHECK(info.nodes == 2);
    lmfe_model_info_free(&info);
    CHECK_OK(lmfe_compile_onnx(path, &o, &bin, NULL));
    lm_replay *r;
    CHECK_OK(replay_open(bin, &r));
    CHECK_EQ_U64(lm_replay_buffer_count(r), 3);
    static const float x[6] = {-2, -0.5f, 0, 0.25f, 1, 3};
    float a[6], b[6];
    CHECK_OK(lm_replay_set_input(r, "x", x, sizeof x));
    CHECK_FAILS(lm_replay_set_input(r, "k", x, sizeof x), LM_ERR_NOT_FOUND, "no buffer named 'k'");
    CHECK_OK(lm_replay_run(r, NULL, NULL, NULL));
    CHECK_OK(lm_replay_get_output(r, "a", a, sizeof a));
    CHECK_OK(lm_replay_get_output(r, "b", b, sizeof b));
    for (int i = 0; i < 6; i++) {
        float relu = x[i] > 0 ? x[i] : 0;
        CHECK(a[i] == relu);
        CHECK(fabs(b[i] - exp(relu)) <= 1e-6 * exp(relu));
    }
    lm_replay_close(r);
    lm_binary_free(bin);

    static const struct {
        const char *names[2];
        size_t count;
        const char *want;
    } bad[] = {
        {{"nope", NULL}, 1, "output 'nope': the model has no value of that name"},
        {{"a", "a"}, 2, "output 'a' is given twice"},
        {{"k", NULL}, 1, "output 'k' is a graph input"},
        {{"a", NULL}, 2, "outputs[1] is NULL"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        o.outputs = bad[i].names;
        o.output_count = bad[i].count;
        CHECK_FAILS(lmfe_compile_onnx(path, &o, &bin, NULL), LM_ERR_INVALID_ARGUMENT, bad[i].want);
        CHECK_FAILS(lmfe_inspect_onnx_cut(path, bad[i].names, bad[i].count, &info),
                    LM_ERR_INVALID_ARGUMENT, bad[i].want);
    }
    o.outputs = NULL;
    o.output_count = 1;
    CHECK_FAILS(lmfe_compile_onnx(path, &o, &bin, NULL), LM_ERR_INVALID_ARGUMENT,
                "opts->outputs is NULL with a count of 1");
    CHECK_FAILS(lmfe_inspect_onnx_cut(path, NULL, 1, &info), LM_ERR_INVALID_ARGUMENT,
                "outputs is NULL with a count of 1");
}

/* Poolings in ceil mode between convolutions (GoogLeNet's, SqueezeNet's)
 * take and give NHWC images: a 1x1 identity Conv, a 3x3 MaxPool of stride
 * 2 and a 2x2 AveragePool of stride 2 not counting the padding, both with
 * windows hanging past the end, against float64. */
static void test_ceil_pool_images(void) {
    enum { C = 4, H = 9, W = 10, MH = 4, MW = 5, AH = 2, AW = 3 };
    static float x[C * H * W], eye[C * C], y[C * AH * AW];
    for (int i = 0; i < C * H * W; i++)
        x[i] = (float)((i * 29) % 53 - 26) * 0.1f;
    for (int i = 0; i < C; i++)
        eye[i * C + i] = 1;
    int64_t xd[4] = {1, C, H, W}, yd[4] = {1, C, AH, AW}, ed[4] = {C, C, 1, 1};
    int64_t k3[2] = {3, 3}, k2[2] = {2, 2}, s2[2] = {2, 2};
    Onnx__GraphProto *g = ob_graph("ceil_pools");
    Onnx__ModelProto *m = ob_model(g);
    ob_input(g, ob_vi("x", ob_tensor_type(F32, 4, xd, NULL)));
    ob_output(g, ob_vi("y", ob_tensor_type(F32, 4, yd, NULL)));
    f32_init(g, "eye", 4, ed, eye, C * C);
    ob_node(g, "Conv", "c0", (const char *[]){"x", "eye", NULL}, (const char *[]){"x1", NULL});
    Onnx__NodeProto *mp =
        ob_node(g, "MaxPool", "mp", (const char *[]){"x1", NULL}, (const char *[]){"m", NULL});
    ob_attr_is(mp, "kernel_shape", k3, 2);
    ob_attr_is(mp, "strides", s2, 2);
    ob_attr_i(mp, "ceil_mode", 1);
    Onnx__NodeProto *ap =
        ob_node(g, "AveragePool", "ap", (const char *[]){"m", NULL}, (const char *[]){"y", NULL});
    ob_attr_is(ap, "kernel_shape", k2, 2);
    ob_attr_is(ap, "strides", s2, 2);
    ob_attr_i(ap, "ceil_mode", 1);
    lm_binary *bin;
    lmfe_report rep;
    CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, &rep));
    /* The Conv's and the MaxPool's results stay images. */
    CHECK(rep.notes && strstr(rep.notes, "layout: 2 results"));
    CHECK_OK(replay1(bin, "x", x, C * H * W, "y", y, C * AH * AW, NULL));
    double mx[C][MH][MW], worst = 0;
    for (int c = 0; c < C; c++)
        for (int i = 0; i < MH; i++)
            for (int j = 0; j < MW; j++) {
                double v = -INFINITY;
                for (int u = 2 * i; u < 2 * i + 3 && u < H; u++)
                    for (int w = 2 * j; w < 2 * j + 3 && w < W; w++)
                        v = x[(c * H + u) * W + w] > v ? x[(c * H + u) * W + w] : v;
                mx[c][i][j] = v;
            }
    for (int c = 0; c < C; c++)
        for (int i = 0; i < AH; i++)
            for (int j = 0; j < AW; j++) {
                double sum = 0;
                int n = 0;
                for (int u = 2 * i; u < 2 * i + 2 && u < MH; u++)
                    for (int w = 2 * j; w < 2 * j + 2 && w < MW; w++)
                        sum += mx[c][u][w], n++;
                double e = fabs(y[(c * AH + i) * AW + j] - sum / n);
                worst = e > worst ? e : worst;
            }
    CHECK(worst < 1e-6);
    lmfe_report_free(&rep);
    lm_binary_free(bin);
}

/* Reshapes that keep the pages in order are views (lmnn_view): no launch.
 * x [2, 2, 16, 8] (a decoder's cache of 2 heads): t = x + x; Unsqueeze(t,
 * 2) then Reshape to [4, 16, 8] keep the tiles in order, and y = r * r
 * reads them where t's Add wrote them. Outputs z = Reshape(x) and w =
 * Squeeze(Unsqueeze(x)) are views of the input's buffer until they are
 * outputs: then each is copied into a buffer of its own, named apart from
 * x's. Replayed twice with new inputs. */
static void test_reshape_views(void) {
    enum { N = 2 * 2 * 16 * 8 };
    static float x[N], y[N], z[N], w[N];
    int64_t xd[4] = {2, 2, 16, 8}, rd[3] = {4, 16, 8}, ax2[1] = {2};
    Onnx__GraphProto *g = ob_graph("views");
    Onnx__ModelProto *m = ob_model(g);
    ob_input(g, ob_vi("x", ob_tensor_type(F32, 4, xd, NULL)));
    ob_output(g, ob_vi("y", ob_tensor_type(F32, 3, rd, NULL)));
    ob_output(g, ob_vi("z", ob_tensor_type(F32, 3, rd, NULL)));
    ob_output(g, ob_vi("w", ob_tensor_type(F32, 4, xd, NULL)));
    i64_init(g, "shape", 3, rd);
    i64_init(g, "axes", 1, ax2);
    ob_node(g, "Add", "add", (const char *[]){"x", "x", NULL}, (const char *[]){"t", NULL});
    ob_node(g, "Unsqueeze", "u", (const char *[]){"t", "axes", NULL}, (const char *[]){"u", NULL});
    ob_node(g, "Reshape", "r", (const char *[]){"u", "shape", NULL}, (const char *[]){"r", NULL});
    ob_node(g, "Mul", "mul", (const char *[]){"r", "r", NULL}, (const char *[]){"y", NULL});
    ob_node(g, "Reshape", "rz", (const char *[]){"x", "shape", NULL}, (const char *[]){"z", NULL});
    ob_node(g, "Unsqueeze", "uw", (const char *[]){"x", "axes", NULL},
            (const char *[]){"xw", NULL});
    ob_node(g, "Squeeze", "sw", (const char *[]){"xw", "axes", NULL}, (const char *[]){"w", NULL});
    lm_binary *bin;
    lmfe_report rep;
    CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, &rep));
    /* The report says so: every reshape a view, two nodes launched. */
    CHECK(placement_of(&rep, "Unsqueeze") == LMFE_VIEW &&
          placement_of(&rep, "Reshape") == LMFE_VIEW &&
          placement_of(&rep, "Squeeze") == LMFE_VIEW && rep.op_count == 5 && rep.device_nodes == 2);
    lmfe_report_free(&rep);
    for (int run = 0; run < 2; run++) {
        for (int i = 0; i < N; i++)
            x[i] = (float)((i * 37 + run * 11) % 101 - 50) * 0.03125f;
        lm_replay *r;
        CHECK_OK(replay_profiled(bin, x, sizeof x, &r));
        CHECK_OK(lm_replay_get_output(r, "y", y, sizeof y));
        CHECK_OK(lm_replay_get_output(r, "z", z, sizeof z));
        CHECK_OK(lm_replay_get_output(r, "w", w, sizeof w));
        for (int i = 0; i < N; i++) {
            CHECK(y[i] == 4 * x[i] * x[i]);
            CHECK(z[i] == x[i] && w[i] == x[i]);
        }
        const lm_profile_program_entry *e;
        size_t n;
        CHECK_OK(lm_replay_get_program_profile(r, &e, &n));
        for (size_t i = 0; i < n; i++) {
            printf("  %s: %s x%llu\n", e[i].label, e[i].program, (unsigned long long)e[i].launches);
            CHECK(strcmp(e[i].label, "Unsqueeze u") && strcmp(e[i].label, "Reshape r") &&
                  strcmp(e[i].label, "Reshape rz") && strcmp(e[i].label, "Unsqueeze uw") &&
                  strcmp(e[i].label, "Squeeze sw"));
        }
        lm_replay_close(r);
    }
    lm_binary_free(bin);
    /* An output that only reshapes the input, which nothing tilizes: the
     * row-major input's view, copied whole (one launch) as the output. */
    Onnx__GraphProto *g2 = ob_graph("view_out");
    Onnx__ModelProto *m2 = ob_model(g2);
    ob_input(g2, ob_vi("x", ob_tensor_type(F32, 4, xd, NULL)));
    ob_output(g2, ob_vi("z", ob_tensor_type(F32, 3, rd, NULL)));
    i64_init(g2, "shape", 3, rd);
    ob_node(g2, "Reshape", "rz", (const char *[]){"x", "shape", NULL}, (const char *[]){"z", NULL});
    CHECK_OK(lmfe_compile_onnx(save(m2), NULL, &bin, NULL));
    lm_replay *r;
    CHECK_OK(replay_profiled(bin, x, sizeof x, &r));
    CHECK_OK(lm_replay_get_output(r, "z", z, sizeof z));
    CHECK(!memcmp(z, x, sizeof x));
    const lm_profile_program_entry *e;
    size_t n;
    CHECK_OK(lm_replay_get_program_profile(r, &e, &n));
    CHECK(n == 1 && !strcmp(e[0].label, "output") && e[0].launches == 1);
    lm_replay_close(r);
    lm_binary_free(bin);
}

/* Compiles m (its report's notes must hold `layout`), replays it on x and
 * reads its outputs y and z. Each label in `once` (NULL-ended) ran one
 * launch in all; a DepthToSpace's or SpaceToDepth's was data_rows.c. */
static void run_pixel_model(Onnx__ModelProto *m, const char *layout, const float *x, size_t xs,
                            float *y, size_t ys, float *z, size_t zs, const char *const *once) {
    lm_binary *bin;
    lmfe_report rep;
    CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, &rep));
    CHECK(rep.notes && strstr(rep.notes, layout));
    lm_replay *r;
    CHECK_OK(replay_profiled(bin, x, xs, &r));
    CHECK_OK(lm_replay_get_output(r, "y", y, ys));
    CHECK_OK(lm_replay_get_output(r, "z", z, zs));
    const lm_profile_program_entry *e;
    size_t n;
    CHECK_OK(lm_replay_get_program_profile(r, &e, &n));
    for (const char *const *l = once; *l; l++) {
        uint64_t launches = 0;
        bool moves = !strncmp(*l, "DepthToSpace", 12) || !strncmp(*l, "SpaceToDepth", 12);
        for (size_t i = 0; i < n; i++)
            if (!strcmp(e[i].label, *l)) {
                launches += e[i].launches;
                if (moves) CHECK(!strcmp(e[i].program, "data_rows.c"));
            }
        CHECK(launches == 1);
    }
    lm_replay_close(r);
    lm_binary_free(bin);
    lmfe_report_free(&rep);
}

/* DepthToSpace reads the image a convolution writes (a super-resolution
 * network's pixel shuffle): a 3x3 Conv 2 -> 12 feeds a CRD DepthToSpace
 * (blocksize 2, PyTorch's PixelShuffle) whose image goes on to a 1x1 Conv
 * 3 -> 2 (output y), and a DCR one whose NCHW result is output z. Each
 * DepthToSpace is one
 * data_rows pass and nothing runs for it or the first Conv but that Conv's
 * product and the permute: no transposes between NCHW and NHWC. Against
 * float64. */
static void test_depth_to_space_images(void) {
    enum { CI = 2, H = 5, W = 6, B = 2, CO = 3, C = CO * B * B, CY = 2 };
    static float x[CI * H * W], w0[C * CI * 9], b0[C], w1[CY * CO];
    static float y[CY * H * B * W * B], z[CO * H * B * W * B];
    for (int i = 0; i < CI * H * W; i++)
        x[i] = (float)((i * 37) % 41 - 20) * 0.05f;
    for (int i = 0; i < C * CI * 9; i++)
        w0[i] = (float)((i * 13) % 17 - 8) * 0.03f;
    for (int i = 0; i < C; i++)
        b0[i] = (float)(i % 5) * 0.1f - 0.2f;
    for (int i = 0; i < CY * CO; i++)
        w1[i] = (float)(i % 4) * 0.25f - 0.4f;
    int64_t xd[4] = {1, CI, H, W}, wd[4] = {C, CI, 3, 3}, bd[1] = {C}, w1d[4] = {CY, CO, 1, 1};
    int64_t yd[4] = {1, CY, H * B, W * B}, zd[4] = {1, CO, H * B, W * B}, p1[4] = {1, 1, 1, 1};
    Onnx__GraphProto *g = ob_graph("pixel_shuffle");
    Onnx__ModelProto *m = ob_model(g);
    ob_input(g, ob_vi("x", ob_tensor_type(F32, 4, xd, NULL)));
    ob_output(g, ob_vi("y", ob_tensor_type(F32, 4, yd, NULL)));
    ob_output(g, ob_vi("z", ob_tensor_type(F32, 4, zd, NULL)));
    f32_init(g, "W0", 4, wd, w0, C * CI * 9);
    f32_init(g, "B0", 1, bd, b0, C);
    f32_init(g, "W1", 4, w1d, w1, CY * CO);
    Onnx__NodeProto *c0 = ob_node(g, "Conv", "c0", (const char *[]){"x", "W0", "B0", NULL},
                                  (const char *[]){"f", NULL});
    ob_attr_is(c0, "pads", p1, 4);
    Onnx__NodeProto *dcr =
        ob_node(g, "DepthToSpace", "dcr", (const char *[]){"f", NULL}, (const char *[]){"z", NULL});
    ob_attr_i(dcr, "blocksize", B);
    Onnx__NodeProto *crd =
        ob_node(g, "DepthToSpace", "crd", (const char *[]){"f", NULL}, (const char *[]){"d", NULL});
    ob_attr_i(crd, "blocksize", B);
    ob_attr_s(crd, "mode", "CRD");
    ob_node(g, "Conv", "c1", (const char *[]){"d", "W1", NULL}, (const char *[]){"y", NULL});
    /* c0's and crd's results stay images. */
    run_pixel_model(m, "layout: 2 results", x, sizeof x, y, sizeof y, z, sizeof z,
                    (const char *const[]){"DepthToSpace dcr", "DepthToSpace crd", "Conv c0", NULL});
    static double f[C][H][W];
    for (int c = 0; c < C; c++)
        for (int i = 0; i < H; i++)
            for (int j = 0; j < W; j++) {
                double v = b0[c];
                for (int k = 0; k < CI; k++)
                    for (int u = 0; u < 3; u++)
                        for (int t = 0; t < 3; t++) {
                            int ii = i + u - 1, jj = j + t - 1;
                            if (ii >= 0 && ii < H && jj >= 0 && jj < W)
                                v += (double)w0[((c * CI + k) * 3 + u) * 3 + t] *
                                     x[(k * H + ii) * W + jj];
                        }
                f[c][i][j] = v;
            }
    double worst = 0;
    for (int oh = 0; oh < H * B; oh++)
        for (int ow = 0; ow < W * B; ow++) {
            int h = oh / B, i = oh % B, w = ow / B, j = ow % B;
            for (int c = 0; c < CO; c++) {
                double ez = f[(i * B + j) * CO + c][h][w];
                worst = fmax(worst, fabs(z[(c * H * B + oh) * W * B + ow] - ez));
            }
            for (int k = 0; k < CY; k++) {
                double ey = 0;
                for (int c = 0; c < CO; c++)
                    ey += (double)w1[k * CO + c] * f[(c * B + i) * B + j][h][w];
                worst = fmax(worst, fabs(y[(k * H * B + oh) * W * B + ow] - ey));
            }
        }
    CHECK(worst < 1e-5);
}

/* out[n][o][y][x] = bias[o] + conv(in, w) of an NCHW image, 3x3 kernel,
 * `pad` zeros around, float64 (for test_conv_pool_fused). */
static void conv3x3_ref(const double *in, int n, int c, int h, int w, const float *wt,
                        const float *bias, int oc, int pad, double *out) {
    int oh = h + 2 * pad - 2, ow = w + 2 * pad - 2;
    for (int b = 0; b < n; b++)
        for (int o = 0; o < oc; o++)
            for (int y = 0; y < oh; y++)
                for (int x = 0; x < ow; x++) {
                    double v = bias ? bias[o] : 0;
                    for (int k = 0; k < c; k++)
                        for (int u = 0; u < 3; u++)
                            for (int t = 0; t < 3; t++) {
                                int iy = y + u - pad, ix = x + t - pad;
                                if (iy >= 0 && iy < h && ix >= 0 && ix < w)
                                    v += (double)wt[((o * c + k) * 3 + u) * 3 + t] *
                                         in[((b * c + k) * h + iy) * w + ix];
                            }
                    out[((b * oc + o) * oh + y) * ow + x] = v;
                }
}

/* out = max pooling of an NCHW image, k x k windows, stride s, `pad` rows
 * and columns of -inf before it and `end` after (ONNX's floor size). */
static void maxpool_ref(const double *in, int nc, int h, int w, int k, int s, int pad, int end,
                        double *out, int *oh, int *ow) {
    *oh = (h + pad + end - k) / s + 1;
    *ow = (w + pad + end - k) / s + 1;
    for (int m = 0; m < nc; m++)
        for (int y = 0; y < *oh; y++)
            for (int x = 0; x < *ow; x++) {
                double v = -INFINITY;
                for (int u = 0; u < k; u++)
                    for (int t = 0; t < k; t++) {
                        int iy = y * s + u - pad, ix = x * s + t - pad;
                        if (iy >= 0 && iy < h && ix >= 0 && ix < w)
                            v = fmax(v, in[(m * h + iy) * w + ix]);
                    }
                out[(m * *oh + y) * *ow + x] = v;
            }
}

/* A max pooling with no padding after a convolution's chain is fused into
 * its lmnn_conv2d (the pooled rows the max of their windows' products):
 * Conv -> Relu -> MaxPool 3x3/2 -> Conv -> LeakyRelu -> MaxPool 2x2/2 (odd
 * sizes: the last row and column left out) -> 1x1 Conv (output y), each
 * pooled convolution one launch and no MaxPool launch of its own; a
 * MaxPool with padding before the image and none after (after a 1x1 Conv,
 * output z: the size is the unpadded one's, the windows are not) is not
 * fused and runs itself. Against float64. */
static void test_conv_pool_fused(void) {
    enum { N = 2, C = 3, H = 19, W = 21, C0 = 8, C1 = 6, C2 = 4, C3 = 2 };
    static float x[N * C * H * W], w0[C0 * C * 9], b0[C0], w1[C1 * C0 * 9], b1[C1], w2[C2 * C];
    static float w3[C3 * C1], y[N * C3 * 3 * 4], z[N * C2 * 9 * 10];
    for (int i = 0; i < C3 * C1; i++)
        w3[i] = (float)(i % 4) * 0.25f - 0.4f;
    for (int i = 0; i < N * C * H * W; i++)
        x[i] = (float)((i * 37) % 41 - 20) * 0.05f;
    for (int i = 0; i < C0 * C * 9; i++)
        w0[i] = (float)((i * 13) % 17 - 8) * 0.03f;
    for (int i = 0; i < C1 * C0 * 9; i++)
        w1[i] = (float)((i * 7) % 19 - 9) * 0.02f;
    for (int i = 0; i < C2 * C; i++)
        w2[i] = (float)(i % 5) * 0.2f - 0.4f;
    for (int i = 0; i < C0; i++)
        b0[i] = (float)(i % 5) * 0.1f - 0.2f;
    for (int i = 0; i < C1; i++)
        b1[i] = (float)(i % 3) * 0.1f - 0.1f;
    int64_t xd[4] = {N, C, H, W}, w0d[4] = {C0, C, 3, 3}, b0d[1] = {C0}, w1d[4] = {C1, C0, 3, 3};
    int64_t b1d[1] = {C1}, w2d[4] = {C2, C, 1, 1}, yd[4] = {N, C3, 3, 4}, zd[4] = {N, C2, 9, 10};
    int64_t w3d[4] = {C3, C1, 1, 1};
    int64_t p1[4] = {1, 1, 1, 1}, k3[2] = {3, 3}, k2[2] = {2, 2}, s2[2] = {2, 2};
    Onnx__GraphProto *g = ob_graph("conv_pool");
    Onnx__ModelProto *m = ob_model(g);
    ob_input(g, ob_vi("x", ob_tensor_type(F32, 4, xd, NULL)));
    ob_output(g, ob_vi("y", ob_tensor_type(F32, 4, yd, NULL)));
    ob_output(g, ob_vi("z", ob_tensor_type(F32, 4, zd, NULL)));
    f32_init(g, "W0", 4, w0d, w0, C0 * C * 9);
    f32_init(g, "B0", 1, b0d, b0, C0);
    f32_init(g, "W1", 4, w1d, w1, C1 * C0 * 9);
    f32_init(g, "B1", 1, b1d, b1, C1);
    f32_init(g, "W2", 4, w2d, w2, C2 * C);
    f32_init(g, "W3", 4, w3d, w3, C3 * C1);
    ob_attr_is(ob_node(g, "Conv", "c0", (const char *[]){"x", "W0", "B0", NULL},
                       (const char *[]){"a", NULL}),
               "pads", p1, 4);
    ob_node(g, "Relu", "r0", (const char *[]){"a", NULL}, (const char *[]){"ar", NULL});
    Onnx__NodeProto *p0 =
        ob_node(g, "MaxPool", "p0", (const char *[]){"ar", NULL}, (const char *[]){"ap", NULL});
    ob_attr_is(p0, "kernel_shape", k3, 2);
    ob_attr_is(p0, "strides", s2, 2);
    ob_node(g, "Conv", "c1", (const char *[]){"ap", "W1", "B1", NULL}, (const char *[]){"b", NULL});
    ob_attr_f(
        ob_node(g, "LeakyRelu", "r1", (const char *[]){"b", NULL}, (const char *[]){"br", NULL}),
        "alpha", 0.2f);
    Onnx__NodeProto *p1n =
        ob_node(g, "MaxPool", "p1", (const char *[]){"br", NULL}, (const char *[]){"bp", NULL});
    ob_attr_is(p1n, "kernel_shape", k2, 2);
    ob_attr_is(p1n, "strides", s2, 2);
    ob_node(g, "Conv", "c3", (const char *[]){"bp", "W3", NULL}, (const char *[]){"y", NULL});
    ob_node(g, "Conv", "c2", (const char *[]){"x", "W2", NULL}, (const char *[]){"c", NULL});
    Onnx__NodeProto *p2 =
        ob_node(g, "MaxPool", "p2", (const char *[]){"c", NULL}, (const char *[]){"z", NULL});
    ob_attr_is(p2, "kernel_shape", k3, 2);
    ob_attr_is(p2, "strides", s2, 2);
    ob_attr_is(p2, "pads", (int64_t[]){1, 1, 0, 0}, 4);
    lm_binary *bin;
    lmfe_report rep;
    CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, &rep));
    uint32_t fused = 0, ran = 0;
    for (size_t i = 0; i < rep.op_count; i++)
        if (!strcmp(rep.ops[i].op_type, "MaxPool"))
            *(rep.ops[i].placement == LMFE_FUSED ? &fused : &ran) += rep.ops[i].count;
    CHECK(fused == 2 && ran == 1);
    lmfe_report_free(&rep);
    lm_replay *r;
    CHECK_OK(replay_profiled(bin, x, sizeof x, &r));
    CHECK_OK(lm_replay_get_output(r, "y", y, sizeof y));
    CHECK_OK(lm_replay_get_output(r, "z", z, sizeof z));
    const lm_profile_program_entry *e;
    size_t n;
    CHECK_OK(lm_replay_get_program_profile(r, &e, &n));
    uint64_t c0_launches = 0, c1_launches = 0, p2_launches = 0, fused_launches = 0;
    for (size_t i = 0; i < n; i++) {
        CHECK(strcmp(e[i].label, "MaxPool p0") && strcmp(e[i].label, "MaxPool p1"));
        c0_launches += !strcmp(e[i].label, "Conv c0") ? e[i].launches : 0;
        c1_launches += !strcmp(e[i].label, "Conv c1") ? e[i].launches : 0;
        p2_launches += !strcmp(e[i].label, "MaxPool p2") ? e[i].launches : 0;
        if (!strcmp(e[i].label, "Conv c0") || !strcmp(e[i].label, "Conv c1"))
            fused_launches +=
                strstr(e[i].program, "conv_im2col_reader.c + matmul_compute.c") ? e[i].launches : 0;
    }
    for (size_t i = 0; i < n; i++)
        printf("  %s: %s x%llu\n", e[i].label, e[i].program, (unsigned long long)e[i].launches);
    CHECK(c0_launches == 1 && c1_launches == 1 && fused_launches == 2 && p2_launches >= 1);
    lm_replay_close(r);
    lm_binary_free(bin);

    static double xv[N * C * H * W], a[N * C0 * H * W], ap[N * C0 * 9 * 10], bv[N * C1 * 7 * 8];
    static double pv[N * C1 * 3 * 4], yv[N * C3 * 3 * 4], cv[N * C2 * H * W];
    static double zv[N * C2 * 9 * 10];
    for (int i = 0; i < N * C * H * W; i++)
        xv[i] = x[i];
    conv3x3_ref(xv, N, C, H, W, w0, b0, C0, 1, a);
    for (int i = 0; i < N * C0 * H * W; i++)
        a[i] = fmax(a[i], 0);
    int ph, pw;
    maxpool_ref(a, N * C0, H, W, 3, 2, 0, 0, ap, &ph, &pw);
    CHECK(ph == 9 && pw == 10);
    conv3x3_ref(ap, N, C0, 9, 10, w1, b1, C1, 0, bv);
    for (int i = 0; i < N * C1 * 7 * 8; i++)
        bv[i] = bv[i] < 0 ? 0.2 * bv[i] : bv[i];
    maxpool_ref(bv, N * C1, 7, 8, 2, 2, 0, 0, pv, &ph, &pw);
    CHECK(ph == 3 && pw == 4);
    for (int b = 0; b < N; b++)
        for (int o = 0; o < C3; o++)
            for (int p = 0; p < 12; p++) {
                double v = 0;
                for (int k = 0; k < C1; k++)
                    v += (double)w3[o * C1 + k] * pv[(b * C1 + k) * 12 + p];
                yv[(b * C3 + o) * 12 + p] = v;
            }
    for (int b = 0; b < N; b++)
        for (int o = 0; o < C2; o++)
            for (int p = 0; p < H * W; p++) {
                double v = 0;
                for (int k = 0; k < C; k++)
                    v += (double)w2[o * C + k] * xv[(b * C + k) * H * W + p];
                cv[(b * C2 + o) * H * W + p] = v;
            }
    maxpool_ref(cv, N * C2, H, W, 3, 2, 1, 0, zv, &ph, &pw);
    CHECK(ph == 9 && pw == 10);
    double worst = 0;
    for (int i = 0; i < N * C3 * 3 * 4; i++)
        worst = fmax(worst, fabs(y[i] - yv[i]));
    for (int i = 0; i < N * C2 * 9 * 10; i++)
        worst = fmax(worst, fabs(z[i] - zv[i]));
    CHECK(worst < 1e-5);
}

/* The other forms of both ops around images: a graph input (NCHW) through
 * a CRD DepthToSpace into a 1x1 Conv (an image out of an NCHW value), that
 * Conv's image through a SpaceToDepth into another 1x1 Conv (an image in
 * and out: one data_rows pass) and through a second SpaceToDepth to output
 * z (NCHW out), against float64. */
static void test_space_depth_forms(void) {
    enum { C = 8, H = 4, W = 6, B = 2, CU = C / (B * B), CV = 4, CS = CV * B * B, CY = 3 };
    static float x[C * H * W], wv[CV * CU], wy[CY * CS], y[CY * H * W], z[CS * H * W];
    for (int i = 0; i < C * H * W; i++)
        x[i] = (float)((i * 29) % 37 - 18) * 0.05f;
    for (int i = 0; i < CV * CU; i++)
        wv[i] = (float)(i % 5) * 0.3f - 0.5f;
    for (int i = 0; i < CY * CS; i++)
        wy[i] = (float)((i * 7) % 11) * 0.1f - 0.45f;
    int64_t xd[4] = {1, C, H, W}, yd[4] = {1, CY, H, W}, zd[4] = {1, CS, H, W};
    int64_t wvd[4] = {CV, CU, 1, 1}, wyd[4] = {CY, CS, 1, 1};
    Onnx__GraphProto *g = ob_graph("space_depth");
    Onnx__ModelProto *m = ob_model(g);
    ob_input(g, ob_vi("x", ob_tensor_type(F32, 4, xd, NULL)));
    ob_output(g, ob_vi("y", ob_tensor_type(F32, 4, yd, NULL)));
    ob_output(g, ob_vi("z", ob_tensor_type(F32, 4, zd, NULL)));
    f32_init(g, "Wv", 4, wvd, wv, CV * CU);
    f32_init(g, "Wy", 4, wyd, wy, CY * CS);
    Onnx__NodeProto *d =
        ob_node(g, "DepthToSpace", "d2s", (const char *[]){"x", NULL}, (const char *[]){"u", NULL});
    ob_attr_i(d, "blocksize", B);
    ob_attr_s(d, "mode", "CRD");
    ob_node(g, "Conv", "cv", (const char *[]){"u", "Wv", NULL}, (const char *[]){"v", NULL});
    Onnx__NodeProto *s1 =
        ob_node(g, "SpaceToDepth", "s2d", (const char *[]){"v", NULL}, (const char *[]){"s", NULL});
    ob_attr_i(s1, "blocksize", B);
    Onnx__NodeProto *s2 = ob_node(g, "SpaceToDepth", "s2dz", (const char *[]){"v", NULL},
                                  (const char *[]){"z", NULL});
    ob_attr_i(s2, "blocksize", B);
    ob_node(g, "Conv", "cy", (const char *[]){"s", "Wy", NULL}, (const char *[]){"y", NULL});
    /* u, v and s stay images. */
    run_pixel_model(m, "layout: 3 results", x, sizeof x, y, sizeof y, z, sizeof z,
                    (const char *const[]){"DepthToSpace d2s", "SpaceToDepth s2d", NULL});
    /* u[c][h][w] = x[(c * B + h % B) * B + w % B][h / B][w / B]; v = Wv u;
     * s[(i * B + j) * CV + c][h][w] = v[c][h * B + i][w * B + j]; y = Wy s. */
    static double u[CU][H * B][W * B], v[CV][H * B][W * B], sd[CS][H][W];
    for (int c = 0; c < CU; c++)
        for (int h = 0; h < H * B; h++)
            for (int w = 0; w < W * B; w++)
                u[c][h][w] = x[(((c * B + h % B) * B + w % B) * H + h / B) * W + w / B];
    for (int k = 0; k < CV; k++)
        for (int h = 0; h < H * B; h++)
            for (int w = 0; w < W * B; w++) {
                v[k][h][w] = 0;
                for (int c = 0; c < CU; c++)
                    v[k][h][w] += (double)wv[k * CU + c] * u[c][h][w];
            }
    double worst = 0;
    for (int i = 0; i < B; i++)
        for (int j = 0; j < B; j++)
            for (int c = 0; c < CV; c++)
                for (int h = 0; h < H; h++)
                    for (int w = 0; w < W; w++) {
                        int k = (i * B + j) * CV + c;
                        sd[k][h][w] = v[c][h * B + i][w * B + j];
                        worst = fmax(worst, fabs(z[(k * H + h) * W + w] - sd[k][h][w]));
                    }
    for (int k = 0; k < CY; k++)
        for (int h = 0; h < H; h++)
            for (int w = 0; w < W; w++) {
                double ey = 0;
                for (int c = 0; c < CS; c++)
                    ey += (double)wy[k * CS + c] * sd[c][h][w];
                worst = fmax(worst, fabs(y[(k * H + h) * W + w] - ey));
            }
    CHECK(worst < 1e-5);
}

/* Pointwise convolutions (1x1, stride 1, no padding) read the image that
 * comes to them in NHWC tiles as their patch matrix: a 3x3 Conv (with Relu)
 * hands its result over in tiles to two 1x1 Convs in a row, none of them
 * untilizes its result and neither 1x1 one gathers patches. The output
 * against float64. */
static void test_pointwise_convs(void) {
    enum { C0 = 8, C1 = 16, C2 = 24, H = 6, W = 40 };
    static float x[C0 * H * W], w0[C1 * C0 * 9], b0[C1], w1[C2 * C1], w2[C0 * C2], y[C0 * H * W];
    for (int i = 0; i < C0 * H * W; i++)
        x[i] = (float)((i * 29) % 53 - 26) * 0.05f;
    for (int i = 0; i < C1 * C0 * 9; i++)
        w0[i] = (float)((i * 17) % 31 - 15) * 0.02f;
    for (int i = 0; i < C1; i++)
        b0[i] = (float)(i % 5) * 0.1f - 0.2f;
    for (int i = 0; i < C2 * C1; i++)
        w1[i] = (float)((i * 13) % 23 - 11) * 0.04f;
    for (int i = 0; i < C0 * C2; i++)
        w2[i] = (float)((i * 7) % 19 - 9) * 0.05f;
    int64_t xd[4] = {1, C0, H, W}, d0[4] = {C1, C0, 3, 3}, bd[1] = {C1}, d1[4] = {C2, C1, 1, 1},
            d2[4] = {C0, C2, 1, 1};
    Onnx__GraphProto *g = ob_graph("pointwise");
    Onnx__ModelProto *m = ob_model(g);
    ob_input(g, ob_vi("x", ob_tensor_type(F32, 4, xd, NULL)));
    ob_output(g, ob_vi("y", ob_tensor_type(F32, 4, xd, NULL)));
    f32_init(g, "W0", 4, d0, w0, C1 * C0 * 9);
    f32_init(g, "B0", 1, bd, b0, C1);
    f32_init(g, "W1", 4, d1, w1, C2 * C1);
    f32_init(g, "W2", 4, d2, w2, C0 * C2);
    Onnx__NodeProto *c0 = ob_node(g, "Conv", "c0", (const char *[]){"x", "W0", "B0", NULL},
                                  (const char *[]){"a", NULL});
    ob_attr_is(c0, "pads", (const int64_t[]){1, 1, 1, 1}, 4);
    ob_node(g, "Relu", "r", (const char *[]){"a", NULL}, (const char *[]){"r", NULL});
    ob_node(g, "Conv", "c1", (const char *[]){"r", "W1", NULL}, (const char *[]){"b", NULL});
    ob_node(g, "Conv", "c2", (const char *[]){"b", "W2", NULL}, (const char *[]){"y", NULL});
    lm_binary *bin;
    CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, NULL));
    lm_replay *r;
    CHECK_OK(replay_profiled(bin, x, sizeof x, &r));
    CHECK_OK(lm_replay_get_output(r, "y", y, sizeof y));
    const lm_profile_program_entry *e;
    size_t n;
    CHECK_OK(lm_replay_get_program_profile(r, &e, &n));
    int products = 0;
    for (size_t i = 0; i < n; i++) {
        bool pointwise = !strcmp(e[i].label, "Conv c1") || !strcmp(e[i].label, "Conv c2");
        if (pointwise) CHECK(!strstr(e[i].program, "conv_im2col_reader.c"));
        if (!strcmp(e[i].label, "Conv c0") || !strcmp(e[i].label, "Conv c1"))
            CHECK(!strstr(e[i].program, "untilize_writer.c"));
        products += pointwise && strstr(e[i].program, "matmul_reader.c") != NULL;
    }
    CHECK(products == 2);
    lm_replay_close(r);
    lm_binary_free(bin);
    /* y = W2 (W1 relu(conv3x3(x, W0) + B0)) at each pixel. */
    static double a[C1][H][W], b[C2][H][W];
    for (int o = 0; o < C1; o++)
        for (int i = 0; i < H; i++)
            for (int j = 0; j < W; j++) {
                double v = b0[o];
                for (int k = 0; k < C0; k++)
                    for (int u = 0; u < 3; u++)
                        for (int t = 0; t < 3; t++) {
                            int yi = i + u - 1, xj = j + t - 1;
                            if (yi >= 0 && yi < H && xj >= 0 && xj < W)
                                v += (double)x[(k * H + yi) * W + xj] *
                                     w0[((o * C0 + k) * 3 + u) * 3 + t];
                        }
                a[o][i][j] = v > 0 ? v : 0;
            }
    for (int o = 0; o < C2; o++)
        for (int i = 0; i < H; i++)
            for (int j = 0; j < W; j++) {
                double v = 0;
                for (int k = 0; k < C1; k++)
                    v += a[k][i][j] * w1[o * C1 + k];
                b[o][i][j] = v;
            }
    double worst = 0;
    for (int o = 0; o < C0; o++)
        for (int i = 0; i < H; i++)
            for (int j = 0; j < W; j++) {
                double v = 0;
                for (int k = 0; k < C2; k++)
                    v += b[k][i][j] * w2[o * C2 + k];
                double err = fabs(y[(o * H + i) * W + j] - v);
                worst = err > worst ? err : worst;
            }
    CHECK(worst < 1e-4);
}

/* A ConvNeXt block: a depthwise convolution, Transpose to NHWC, layer
 * normalization, two products (bias, ReLU), the layer scale (a Mul by a
 * vector), Transpose back, the residual
 * Add, then a pointwise convolution (so that the block's images stay
 * images, as between ConvNeXt's blocks). The channels-last values are held
 * as rows (fe_plan.last_out): the Transposes launch nothing (the image goes
 * over as it is). With the layer normalization's result also a graph
 * output, no value of the section can be held so and the Transposes move
 * data again. Without the convolutions (the section between the graph's
 * input and output), the Transposes permute into and out of the rows.
 * Every output against float64. */
enum { CL_N = 2, CL_C = 16, CL_H = 5, CL_W = 9, CL_F = 24, CL_P = CL_N * CL_H * CL_W };

typedef struct cl_weights {
    float w0[CL_C * 9], s[CL_C], bs[CL_C], w1[CL_C * CL_F], b1[CL_F], w2[CL_F * CL_C], b2[CL_C],
        gamma[CL_C], wp[CL_C * CL_C];
} cl_weights;

/* The block in float64: *l per pixel [P][C], y as [N][C][H][W]; `bare`: no
 * convolutions and no residual; `scale_wc`: the layer scale per column and
 * channel [W][C] instead of k->gamma. */
static void cl_reference(const cl_weights *k, const float *x, bool bare, const float *scale_wc,
                         double *l, double *y) {
    enum { N = CL_N, C = CL_C, H = CL_H, W = CL_W, F = CL_F, P = CL_P };
    static double a[N * C * H * W];
    for (int n = 0; n < N; n++)
        for (int c = 0; c < C; c++)
            for (int i = 0; i < H; i++)
                for (int j = 0; j < W; j++) {
                    int at = ((n * C + c) * H + i) * W + j;
                    double v = 0;
                    for (int u = 0; u < 3 && !bare; u++)
                        for (int t = 0; t < 3; t++) {
                            int yi = i + u - 1, xj = j + t - 1;
                            if (yi >= 0 && yi < H && xj >= 0 && xj < W)
                                v += (double)x[((n * C + c) * H + yi) * W + xj] *
                                     k->w0[c * 9 + u * 3 + t];
                        }
                    a[at] = bare ? x[at] : v;
                }
    for (int p = 0; p < P; p++) {
        int n = p / (H * W), pix = p % (H * W);
        double mean = 0, var = 0, h[F], res[C];
        for (int c = 0; c < C; c++)
            mean += a[(n * C + c) * H * W + pix] / C;
        for (int c = 0; c < C; c++) {
            double d = a[(n * C + c) * H * W + pix] - mean;
            var += d * d / C;
        }
        for (int c = 0; c < C; c++)
            l[p * C + c] =
                (a[(n * C + c) * H * W + pix] - mean) / sqrt(var + 1e-5) * k->s[c] + k->bs[c];
        for (int f = 0; f < F; f++) {
            double v = k->b1[f];
            for (int c = 0; c < C; c++)
                v += l[p * C + c] * k->w1[c * F + f];
            h[f] = v > 0 ? v : 0;
        }
        for (int c = 0; c < C; c++) {
            double v = k->b2[c];
            for (int f = 0; f < F; f++)
                v += h[f] * k->w2[f * C + c];
            v *= scale_wc ? scale_wc[pix % W * C + c] : k->gamma[c];
            res[c] = bare ? v : v + a[(n * C + c) * H * W + pix];
        }
        for (int o = 0; o < C; o++) {
            double v = 0;
            for (int c = 0; c < C; c++)
                v += (bare ? (o == c) : k->wp[o * C + c]) * res[c];
            y[(n * C + o) * H * W + pix] = v;
        }
    }
}

static void test_channels_last(void) {
    enum { N = CL_N, C = CL_C, H = CL_H, W = CL_W, F = CL_F, P = CL_P };
    static cl_weights k;
    static float x[N * C * H * W], y[N * C * H * W], l[P * C];
    static double ref_l[P * C], ref_y[N * C * H * W];
    for (int i = 0; i < N * C * H * W; i++)
        x[i] = (float)((i * 37) % 101 - 50) * 0.02f;
    for (int i = 0; i < C * 9; i++)
        k.w0[i] = (float)((i * 13) % 17 - 8) * 0.05f;
    for (int i = 0; i < C; i++) {
        k.s[i] = 1.0f + (float)(i % 3) * 0.25f;
        k.bs[i] = (float)(i % 4) * 0.1f - 0.15f;
        k.b2[i] = (float)(i % 5) * 0.05f;
        k.gamma[i] = 0.5f + (float)(i % 7) * 0.125f;
    }
    for (int i = 0; i < C * F; i++) {
        k.w1[i] = (float)((i * 7) % 19 - 9) * 0.03f;
        k.w2[i] = (float)((i * 11) % 23 - 11) * 0.02f;
    }
    for (int i = 0; i < F; i++)
        k.b1[i] = (float)(i % 6) * 0.04f - 0.1f;
    for (int i = 0; i < C * C; i++)
        k.wp[i] = (float)((i * 5) % 13 - 6) * 0.04f;
    int64_t xd[4] = {N, C, H, W}, ld[4] = {N, H, W, C}, d0[4] = {C, 1, 3, 3}, cd[1] = {C},
            fd[1] = {F}, d1[2] = {C, F}, d2[2] = {F, C}, dp[4] = {C, C, 1, 1};
    /* form 0: the block; 1: with l an output too; 2: bare; 3: the block with
     * the layer normalization spelled out (opset 13's export: one fused
     * chain, its Sub reading t as its ReduceMean does); 4: the layer scale
     * per column and channel ([W, C], which does not broadcast along rows
     * of the flat form: nothing is held so). */
    static float scale_wc[W * C];
    for (int i = 0; i < W * C; i++)
        scale_wc[i] = (float)((i * 3) % 11) * 0.1f - 0.4f;
    for (int form = 0; form < 5; form++) {
        bool bare = form == 2, with_l = form == 1, spelled = form == 3, by_wc = form == 4;
        cl_reference(&k, x, bare, by_wc ? scale_wc : NULL, ref_l, ref_y);
        Onnx__GraphProto *g = ob_graph("cnblock");
        Onnx__ModelProto *m = ob_model(g);
        m->opset_import[0]->version = spelled ? 13 : 17;
        ob_input(g, ob_vi("x", ob_tensor_type(F32, 4, xd, NULL)));
        ob_output(g, ob_vi("y", ob_tensor_type(F32, 4, xd, NULL)));
        if (with_l) ob_output(g, ob_vi("l", ob_tensor_type(F32, 4, ld, NULL)));
        f32_init(g, "W0", 4, d0, k.w0, C * 9);
        f32_init(g, "S", 1, cd, k.s, C);
        f32_init(g, "Bs", 1, cd, k.bs, C);
        f32_init(g, "W1", 2, d1, k.w1, C * F);
        f32_init(g, "B1", 1, fd, k.b1, F);
        f32_init(g, "W2", 2, d2, k.w2, F * C);
        f32_init(g, "B2", 1, cd, k.b2, C);
        if (by_wc)
            f32_init(g, "G", 2, (const int64_t[]){W, C}, scale_wc, W * C);
        else
            f32_init(g, "G", 1, cd, k.gamma, C);
        f32_init(g, "Wp", 4, dp, k.wp, C * C);
        if (!bare) {
            Onnx__NodeProto *dw = ob_node(g, "Conv", "dw", (const char *[]){"x", "W0", NULL},
                                          (const char *[]){"a", NULL});
            ob_attr_is(dw, "pads", (const int64_t[]){1, 1, 1, 1}, 4);
            ob_attr_i(dw, "group", C);
        }
        Onnx__NodeProto *t0 =
            ob_node(g, "Transpose", "to_nhwc", (const char *[]){bare ? "x" : "a", NULL},
                    (const char *[]){"t", NULL});
        ob_attr_is(t0, "perm", (const int64_t[]){0, 2, 3, 1}, 4);
        if (spelled) {
            static const float two = 2.0f, eps = 1e-5f;
            f32_init(g, "two", 0, NULL, &two, 1);
            f32_init(g, "eps", 0, NULL, &eps, 1);
            Onnx__NodeProto *m0 = ob_node(g, "ReduceMean", "mean", (const char *[]){"t", NULL},
                                          (const char *[]){"mu", NULL});
            ob_attr_is(m0, "axes", (const int64_t[]){-1}, 1);
            ob_node(g, "Sub", "sub", (const char *[]){"t", "mu", NULL},
                    (const char *[]){"d", NULL});
            ob_node(g, "Pow", "pow", (const char *[]){"d", "two", NULL},
                    (const char *[]){"d2", NULL});
            Onnx__NodeProto *m1 = ob_node(g, "ReduceMean", "var", (const char *[]){"d2", NULL},
                                          (const char *[]){"v", NULL});
            ob_attr_is(m1, "axes", (const int64_t[]){-1}, 1);
            ob_node(g, "Add", "veps", (const char *[]){"v", "eps", NULL},
                    (const char *[]){"ve", NULL});
            ob_node(g, "Sqrt", "sd", (const char *[]){"ve", NULL}, (const char *[]){"sd", NULL});
            ob_node(g, "Div", "norm", (const char *[]){"d", "sd", NULL},
                    (const char *[]){"z", NULL});
            ob_node(g, "Mul", "scale", (const char *[]){"z", "S", NULL},
                    (const char *[]){"zs", NULL});
            ob_node(g, "Add", "shift", (const char *[]){"zs", "Bs", NULL},
                    (const char *[]){"l", NULL});
        } else {
            ob_node(g, "LayerNormalization", "ln", (const char *[]){"t", "S", "Bs", NULL},
                    (const char *[]){"l", NULL});
        }
        ob_node(g, "MatMul", "mm1", (const char *[]){"l", "W1", NULL}, (const char *[]){"m", NULL});
        ob_node(g, "Add", "add1", (const char *[]){"m", "B1", NULL}, (const char *[]){"mb", NULL});
        ob_node(g, "Relu", "relu", (const char *[]){"mb", NULL}, (const char *[]){"h", NULL});
        ob_node(g, "MatMul", "mm2", (const char *[]){"h", "W2", NULL}, (const char *[]){"o", NULL});
        ob_node(g, "Add", "add2", (const char *[]){"o", "B2", NULL}, (const char *[]){"ob", NULL});
        ob_node(g, "Mul", "layer_scale", (const char *[]){"ob", "G", NULL},
                (const char *[]){"og", NULL});
        Onnx__NodeProto *t1 = ob_node(g, "Transpose", "to_nchw", (const char *[]){"og", NULL},
                                      (const char *[]){bare ? "y" : "back", NULL});
        ob_attr_is(t1, "perm", (const int64_t[]){0, 3, 1, 2}, 4);
        if (!bare) {
            ob_node(g, "Add", "res", (const char *[]){"back", "a", NULL},
                    (const char *[]){"r", NULL});
            ob_node(g, "Conv", "pw", (const char *[]){"r", "Wp", NULL},
                    (const char *[]){"y", NULL});
        }
        lm_binary *bin;
        lmfe_report rep;
        CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, &rep));
        CHECK(rep.notes != NULL &&
              (strstr(rep.notes, "layout: 5 channels-last results") != NULL) == !(with_l || by_wc));
        lmfe_report_free(&rep);
        lm_replay *r;
        CHECK_OK(replay_profiled(bin, x, sizeof x, &r));
        CHECK_OK(lm_replay_get_output(r, "y", y, sizeof y));
        if (with_l) CHECK_OK(lm_replay_get_output(r, "l", l, sizeof l));
        const lm_profile_entry *e;
        size_t n;
        CHECK_OK(lm_replay_get_profile(r, &e, &n));
        bool moved = labelled(e, n, "Transpose to_nhwc") || labelled(e, n, "Transpose to_nchw");
        CHECK(moved == (with_l || bare || by_wc));
        lm_replay_close(r);
        lm_binary_free(bin);
        double worst = 0;
        for (int i = 0; i < N * C * H * W; i++)
            worst = fmax(worst, fabs(y[i] - ref_y[i]));
        for (int i = 0; with_l && i < P * C; i++)
            worst = fmax(worst, fabs(l[i] - ref_l[i]));
        CHECK(worst < 1e-4);
    }
}

/* GroupNorm as PyTorch exports it before opset 18: Reshape to [N, G, L],
 * InstanceNormalization, Reshape back, Mul and Add by per-channel
 * constants, then SiLU spelled out. Form 0 is that: one fused chain, a
 * normalization and the activation its only launches. Form 1: rank 3 ([N,
 * C, L]), no affine after it, but the InstanceNormalization's own scale and
 * bias not ones and zeros (folded per channel). Form 2: the normalized
 * value [N, G, L] also a graph output, so nothing fuses. Form 3: the Mul's
 * constant varies along W, not per channel: the chain stops before it.
 * Every output against float64. */
static void test_group_norm_spelled(void) {
    enum { N = 2, C = 12, H = 5, W = 7, G = 3, L = C / G * H * W };
    static float x[N * C * H * W], y[N * C * H * W], z[N * G * L];
    static float gamma[C], beta[C], s[G], b[G], wrow[W];
    static double ref[N * C * H * W], ref_z[N * G * L];
    for (int i = 0; i < N * C * H * W; i++)
        x[i] = (float)((i * 37) % 101 - 50) * 0.02f + (float)(i / (H * W) % C) * 0.3f;
    for (int i = 0; i < C; i++) {
        gamma[i] = 0.5f + (float)(i % 5) * 0.25f;
        beta[i] = (float)(i % 4) * 0.1f - 0.2f;
    }
    for (int i = 0; i < G; i++) {
        s[i] = 1.5f - (float)i * 0.5f;
        b[i] = (float)i * 0.25f - 0.1f;
    }
    for (int i = 0; i < W; i++)
        wrow[i] = (float)(i % 3) * 0.5f + 0.25f;
    for (int form = 0; form < 4; form++) {
        bool rank3 = form == 1, z_out = form == 2, by_w = form == 3, affine = form != 1;
        /* float64: the groups' statistics, then each element's value. */
        for (int n = 0; n < N; n++)
            for (int gi = 0; gi < G; gi++) {
                const float *xg = x + (n * G + gi) * L;
                double mean = 0, var = 0;
                for (int i = 0; i < L; i++)
                    mean += xg[i];
                mean /= L;
                for (int i = 0; i < L; i++)
                    var += (xg[i] - mean) * (xg[i] - mean);
                var /= L;
                double sg = rank3 ? s[gi] : 1, bg = rank3 ? b[gi] : 0;
                for (int i = 0; i < L; i++) {
                    int ch = gi * (C / G) + i / (H * W), w = i % W;
                    double v = (xg[i] - mean) / sqrt(var + 1e-5) * sg + bg;
                    ref_z[(n * G + gi) * L + i] = v;
                    if (affine) v = v * (by_w ? wrow[w] : gamma[ch]) + beta[ch];
                    if (affine) v = v / (1 + exp(-v));
                    ref[(n * G + gi) * L + i] = v;
                }
            }
        int64_t xd4[4] = {N, C, H, W}, xd3[3] = {N, C, H * W}, zd[3] = {N, G, L};
        const int64_t *xd = rank3 ? xd3 : xd4;
        int xr = rank3 ? 3 : 4;
        Onnx__GraphProto *g = ob_graph("groupnorm");
        Onnx__ModelProto *m = ob_model(g);
        m->opset_import[0]->version = 13;
        ob_input(g, ob_vi("x", ob_tensor_type(F32, xr, xd, NULL)));
        ob_output(g, ob_vi("y", ob_tensor_type(F32, xr, xd, NULL)));
        if (z_out) ob_output(g, ob_vi("z", ob_tensor_type(F32, 3, zd, NULL)));
        static const float ones[G] = {1, 1, 1}, zeros[G] = {0};
        f32_init(g, "S", 1, (const int64_t[]){G}, rank3 ? s : ones, G);
        f32_init(g, "B", 1, (const int64_t[]){G}, rank3 ? b : zeros, G);
        if (by_w)
            f32_init(g, "gamma", 1, (const int64_t[]){W}, wrow, W);
        else
            f32_init(g, "gamma", 3, (const int64_t[]){C, 1, 1}, gamma, C);
        f32_init(g, "beta", 3, (const int64_t[]){C, 1, 1}, beta, C);
        i64_init(g, "groups", 3, (const int64_t[]){0, G, -1});
        i64_init(g, "shape", xr, xd);
#define NODE(op, out, ...)                                                                         \
    ob_node(g, op, out, (const char *[]){__VA_ARGS__, NULL}, (const char *[]){out, NULL})
        NODE("Reshape", "r", "x", "groups");
        NODE("InstanceNormalization", "z", "r", "S", "B");
        NODE("Reshape", affine ? "u" : "y", "z", "shape");
        if (affine) {
            NODE("Mul", "ug", "u", "gamma");
            NODE("Add", "v", "ug", "beta");
            NODE("Sigmoid", "sv", "v");
            NODE("Mul", "y", "v", "sv");
        }
#undef NODE
        lm_binary *bin;
        lmfe_report rep;
        CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, &rep));
        CHECK((placement_of(&rep, "InstanceNormalization") == LMFE_FUSED) == !z_out);
        lmfe_report_free(&rep);
        lm_replay *r;
        CHECK_OK(replay_profiled(bin, x, sizeof x, &r));
        CHECK_OK(lm_replay_get_output(r, "y", y, sizeof y));
        if (z_out) CHECK_OK(lm_replay_get_output(r, "z", z, sizeof z));
        const lm_profile_entry *e;
        size_t count;
        CHECK_OK(lm_replay_get_profile(r, &e, &count));
        uint64_t launches = 0;
        for (size_t i = 0; i < count; i++)
            launches += strcmp(e[i].label, "output") ? e[i].launches : 0;
        /* Fused, everything runs under the first Reshape's label: the input
         * tilized and the normalization, with the activation in its
         * program (form 0), or with the rank-3 value's reshapes to
         * [N, C, 1, L] and back (form 1). */
        const lm_profile_entry *head = labelled(e, count, "Reshape r");
        CHECK(head != NULL);
        if (form < 2) CHECK(head->launches == (rank3 ? 4u : 2u) && launches == head->launches);
        if (form == 2) CHECK(labelled(e, count, "InstanceNormalization z") != NULL);
        if (form == 3)
            CHECK(head->launches == 2 && labelled(e, count, "Mul ug") &&
                  labelled(e, count, "Add v"));
        lm_replay_close(r);
        lm_binary_free(bin);
        double worst = 0;
        for (int i = 0; i < N * C * H * W; i++)
            worst = fmax(worst, fabs(y[i] - ref[i]));
        for (int i = 0; z_out && i < N * G * L; i++)
            worst = fmax(worst, fabs(z[i] - ref_z[i]));
        CHECK(worst < 1e-4);
        if (form != 0) continue;
        /* An epsilon the op library refuses: the error names its node. */
        ob_attr_f(g->node[1], "epsilon", -1.0f);
        CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_ARGUMENT,
                    "node 'z' (InstanceNormalization): lmnn_group_norm: opts.eps: expected a "
                    "finite value >= 0, given -1");
    }
}

/* GroupNormalization: opset 18's scale and bias per group (constants, and
 * a scale computed at run time), opset 21's per channel with SiLU after it
 * (fused: applied by the node's lower); against float64. Then its
 * attributes and inputs refused. */
static void test_group_normalization(void) {
    enum { N = 2, C = 6, H = 3, W = 5, G = 3, L = C / G * H * W };
    static float x[N * C * H * W], y[N * C * H * W], sg[G], bg[G], sc[C], bc[C];
    for (int i = 0; i < N * C * H * W; i++)
        x[i] = (float)((i * 29) % 83 - 41) * 0.03f + (float)(i / (H * W) % C);
    for (int i = 0; i < G; i++)
        sg[i] = 0.5f + (float)i * 0.75f, bg[i] = (float)i * 0.5f - 0.5f;
    for (int i = 0; i < C; i++)
        sc[i] = 1.25f - (float)i * 0.25f, bc[i] = (float)(i % 4) * 0.2f;
    int64_t xd[4] = {N, C, H, W}, gd[1] = {G}, cd[1] = {C};
    for (int form = 0; form < 3; form++) {
        bool per_channel = form == 2, run_time = form == 1;
        Onnx__GraphProto *g = ob_graph("gn");
        Onnx__ModelProto *m = ob_model(g);
        m->opset_import[0]->version = per_channel ? 21 : 18;
        ob_input(g, ob_vi("x", ob_tensor_type(F32, 4, xd, NULL)));
        if (run_time) ob_input(g, ob_vi("s", ob_tensor_type(F32, 1, gd, NULL)));
        ob_output(g, ob_vi("y", ob_tensor_type(F32, 4, xd, NULL)));
        if (!run_time)
            f32_init(g, "s", 1, per_channel ? cd : gd, per_channel ? sc : sg, per_channel ? C : G);
        f32_init(g, "b", 1, per_channel ? cd : gd, per_channel ? bc : bg, per_channel ? C : G);
        Onnx__NodeProto *n =
            ob_node(g, "GroupNormalization", "gn", (const char *[]){"x", "s", "b", NULL},
                    (const char *[]){per_channel ? "v" : "y", NULL});
        if (per_channel) {
            ob_node(g, "Sigmoid", "sig", (const char *[]){"v", NULL}, (const char *[]){"sv", NULL});
            ob_node(g, "Mul", "silu", (const char *[]){"v", "sv", NULL},
                    (const char *[]){"y", NULL});
        }
        ob_attr_i(n, "num_groups", G);
        ob_attr_f(n, "epsilon", 1e-3f);
        lm_binary *bin;
        CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, NULL));
        lm_replay *r;
        CHECK_OK(replay_open(bin, &r));
        CHECK_OK(lm_replay_set_input(r, "x", x, sizeof x));
        if (run_time) CHECK_OK(lm_replay_set_input(r, "s", sg, sizeof sg));
        lm_replay_options ro;
        lm_replay_options_init(&ro);
        ro.profile = true;
        CHECK_OK(lm_replay_run(r, NULL, &ro, NULL));
        CHECK_OK(lm_replay_get_output(r, "y", y, sizeof y));
        const lm_profile_entry *e;
        size_t count;
        CHECK_OK(lm_replay_get_profile(r, &e, &count));
        /* The activation is the node's: with constant parameters its
         * launches are the input tilized and the normalization, which
         * applies the SiLU (opset 21); nothing else runs. */
        const lm_profile_entry *own = labelled(e, count, "GroupNormalization gn");
        CHECK(own && (run_time || own->launches == 2));
        CHECK(!labelled(e, count, "Sigmoid sig") && !labelled(e, count, "Mul silu"));
        lm_replay_close(r);
        lm_binary_free(bin);
        double worst = 0;
        for (int n0 = 0; n0 < N; n0++)
            for (int gi = 0; gi < G; gi++) {
                const float *xg = x + (n0 * G + gi) * L;
                double mean = 0, var = 0;
                for (int i = 0; i < L; i++)
                    mean += xg[i] / (double)L;
                for (int i = 0; i < L; i++)
                    var += (xg[i] - mean) * (xg[i] - mean) / L;
                for (int i = 0; i < L; i++) {
                    int ch = gi * (C / G) + i / (H * W);
                    double want =
                        (xg[i] - mean) / sqrt(var + 1e-3) * (per_channel ? sc[ch] : sg[gi]) +
                        (per_channel ? bc[ch] : bg[gi]);
                    if (per_channel) want /= 1 + exp(-want);
                    worst = fmax(worst, fabs(y[(n0 * G + gi) * L + i] - want));
                }
            }
        CHECK(worst < 1e-4);
    }
    Onnx__GraphProto *g = ob_graph("gn");
    Onnx__ModelProto *m = ob_model(g);
    m->opset_import[0]->version = 18;
    ob_input(g, ob_vi("x", ob_tensor_type(F32, 4, xd, NULL)));
    ob_output(g, ob_vi("y", ob_tensor_type(F32, 4, xd, NULL)));
    f32_init(g, "s", 1, gd, sg, G);
    f32_init(g, "b", 1, cd, bc, C);
    Onnx__NodeProto *n =
        ob_node(g, "GroupNormalization", "gn", (const char *[]){"x", "s", "b", NULL},
                (const char *[]){"y", NULL});
    lm_binary *bin;
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'gn' (GroupNormalization): attribute num_groups is missing");
    Onnx__AttributeProto *a = ob_attr_i(n, "num_groups", 4);
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'gn' (GroupNormalization): num_groups=4 must be positive and divide the 6 "
                "channels");
    a->i = G;
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'gn' (GroupNormalization): input 2 must be [3] (one value per group)");
    m->opset_import[0]->version = 21;
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'gn' (GroupNormalization): input 1 must be [6] (one value per channel)");
    m->opset_import[0]->version = 18;
    ob_attr_i(n, "stash_type", 10);
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_UNSUPPORTED,
                "node 'gn' (GroupNormalization): stash_type=10 is not supported (the statistics "
                "are float32: 1)");
}

/* A diffusion-style block on images: Conv, a time embedding added per
 * channel (Gemm, Unsqueeze: one pixel per channel), a group normalization
 * with SiLU (form 0 spelled out as PyTorch exports it at opset 13, form 1
 * GroupNormalization at opset 18), Conv, ConvTranspose, InstanceNormalization,
 * a pointwise Conv. Both normalizations run channels last on the NHWC
 * images and nothing is transposed between NCHW and NHWC; the result
 * matches the same model with its intermediate values also graph outputs,
 * which keeps them in NCHW order and runs the normalizations channels first.
 * 6 x 10 pixels per sample: the samples' rows do not fill whole tiles. */
static Onnx__ModelProto *gn_block_model(int form, bool outputs, const float *wts) {
    enum { N = 2, C0 = 3, C = 40, E = 5, G = 4, CU = 8, CY = 4, H = 6, W = 10 };
    Onnx__GraphProto *g = ob_graph("gnblock");
    Onnx__ModelProto *m = ob_model(g);
    m->opset_import[0]->version = form ? 18 : 13;
    int64_t xd[4] = {N, C0, H, W}, td[2] = {N, E}, yd[4] = {N, CY, 2 * H, 2 * W};
    ob_input(g, ob_vi("x", ob_tensor_type(F32, 4, xd, NULL)));
    ob_input(g, ob_vi("t", ob_tensor_type(F32, 2, td, NULL)));
    ob_output(g, ob_vi("y", ob_tensor_type(F32, 4, yd, NULL)));
    if (outputs) {
        int64_t hd[4] = {N, C, H, W}, ud[4] = {N, CU, 2 * H, 2 * W};
        ob_output(g, ob_vi("h1", ob_tensor_type(F32, 4, hd, NULL)));
        ob_output(g, ob_vi("a", ob_tensor_type(F32, 4, hd, NULL)));
        ob_output(g, ob_vi("v", ob_tensor_type(F32, 4, ud, NULL)));
    }
    /* Weights from one table, each at its own offset; the normalizations'
     * scales near 1. */
    const float *p = wts;
    static float scales[3][C];
    int scale = 0;
#define W_INIT(name, rank, count, ...)                                                             \
    f32_init(g, name, rank, (const int64_t[]){__VA_ARGS__}, p, count), p += count
#define W_SCALE(name, rank, count, ...)                                                            \
    do {                                                                                           \
        for (int i_ = 0; i_ < (count); i_++)                                                       \
            scales[scale][i_] = 1 + p[i_];                                                         \
        f32_init(g, name, rank, (const int64_t[]){__VA_ARGS__}, scales[scale++], count);           \
        p += count;                                                                                \
    } while (0)
    W_INIT("W0", 4, C * C0 * 9, C, C0, 3, 3);
    W_INIT("B0", 1, C, C);
    W_INIT("We", 2, E * C, E, C);
    W_INIT("Be", 1, C, C);
    W_INIT("W1", 4, C * C * 9, C, C, 3, 3);
    W_INIT("Wt", 4, C * CU * 4, C, CU, 2, 2);
    W_INIT("Bt", 1, CU, CU);
    W_SCALE("su", 1, CU, CU);
    W_INIT("bu", 1, CU, CU);
    W_INIT("W2", 4, CY * CU, CY, CU, 1, 1);
    W_SCALE("gamma", 3, C, C, 1, 1);
    W_INIT("beta", 3, C, C, 1, 1);
    W_SCALE("sg", 1, G, G);
    W_INIT("bg", 1, G, G);
#undef W_INIT
#undef W_SCALE
    static const float ones[G] = {1, 1, 1, 1}, zeros[G] = {0};
    f32_init(g, "S1", 1, (const int64_t[]){G}, ones, G);
    f32_init(g, "B1", 1, (const int64_t[]){G}, zeros, G);
    i64_init(g, "groups", 3, (const int64_t[]){0, G, -1});
    i64_init(g, "shape", 4, (const int64_t[]){N, C, H, W});
    i64_init(g, "axes", 2, (const int64_t[]){2, 3});
#define NODE(op, out, ...)                                                                         \
    ob_node(g, op, out, (const char *[]){__VA_ARGS__, NULL}, (const char *[]){out, NULL})
    ob_attr_is(NODE("Conv", "h0", "x", "W0", "B0"), "pads", (const int64_t[]){1, 1, 1, 1}, 4);
    NODE("Gemm", "e", "t", "We", "Be");
    NODE("Unsqueeze", "e4", "e", "axes");
    NODE("Add", "h1", "h0", "e4");
    if (form == 0) {
        NODE("Reshape", "r", "h1", "groups");
        NODE("InstanceNormalization", "z", "r", "S1", "B1");
        NODE("Reshape", "u0", "z", "shape");
        NODE("Mul", "ug", "u0", "gamma");
        NODE("Add", "n", "ug", "beta");
    } else {
        ob_attr_i(NODE("GroupNormalization", "n", "h1", "sg", "bg"), "num_groups", G);
    }
    NODE("Sigmoid", "sn", "n");
    NODE("Mul", "a", "n", "sn");
    ob_attr_is(NODE("Conv", "b", "a", "W1"), "pads", (const int64_t[]){1, 1, 1, 1}, 4);
    ob_attr_is(NODE("ConvTranspose", "u", "b", "Wt", "Bt"), "strides", (const int64_t[]){2, 2}, 2);
    NODE("InstanceNormalization", "v", "u", "su", "bu");
    NODE("Conv", "y", "v", "W2");
#undef NODE
    return m;
}

static void test_group_norm_images(void) {
    enum { N = 2, C0 = 3, C = 40, E = 5, CU = 8, CY = 4, H = 6, W = 10, NY = N * CY * 4 * H * W };
    static float wts[C * C0 * 9 + 4 * C + E * C + C * C * 9 + C * CU * 4 + 3 * CU + CY * CU + 8];
    static float x[N * C0 * H * W], t[N * E], y[NY], ref[NY];
    for (size_t i = 0; i < sizeof wts / sizeof *wts; i++)
        wts[i] = (float)((int)((i * 37) % 61) - 30) * 0.01f;
    for (int i = 0; i < N * C0 * H * W; i++)
        x[i] = (float)((i * 29) % 53 - 26) * 0.05f;
    for (int i = 0; i < N * E; i++)
        t[i] = (float)(i % 7) * 0.3f - 1.0f;
    for (int form = 0; form < 2; form++) {
        for (int pass = 1; pass >= 0; pass--) {
            bool nchw = pass == 1;
            lm_binary *bin;
            CHECK_OK(lmfe_compile_onnx(save(gn_block_model(form, nchw, wts)), NULL, &bin, NULL));
            lm_replay *r;
            CHECK_OK(replay_open(bin, &r));
            lm_replay_options ro;
            lm_replay_options_init(&ro);
            ro.profile = true;
            CHECK_OK(lm_replay_set_input(r, "x", x, sizeof x));
            CHECK_OK(lm_replay_set_input(r, "t", t, sizeof t));
            CHECK_OK(lm_replay_run(r, NULL, &ro, NULL));
            CHECK_OK(lm_replay_get_output(r, "y", nchw ? ref : y, sizeof y));
            const lm_profile_program_entry *e;
            size_t n;
            CHECK_OK(lm_replay_get_program_profile(r, &e, &n));
            /* The two normalizations' programs, and any transposes but
             * the graph output's (y, in NCHW order); the ConvTranspose
             * runs by phases (its weight prepared so from the host). */
            int cl = 0, cf = 0, transposes = 0, phases = 0;
            for (size_t i = 0; i < n; i++) {
                phases += strstr(e[i].program, "phase_tile_reader.c") != NULL;
                cl += strstr(e[i].program, "norm_cl_reader.c") != NULL;
                cf += strstr(e[i].program, "norm_reader.c") != NULL;
                transposes += strcmp(e[i].label, "Conv y") &&
                              strstr(e[i].program, "transpose_compute.c") != NULL;
            }
            CHECK(phases == 1);
            if (nchw) {
                CHECK(cf == 2 && cl == 0);
            } else {
                CHECK(cl == 2 && cf == 0 && transposes == 0);
            }
            lm_replay_close(r);
            lm_binary_free(bin);
        }
        double worst = 0, big = 0;
        for (int i = 0; i < NY; i++) {
            worst = fmax(worst, fabs(y[i] - ref[i]));
            big = fmax(big, fabs(ref[i]));
        }
        CHECK(big > 0.1 && worst < 1e-5 * big);
    }
}

/* A 3-D convolution block: Conv (3 -> 8 channels, 3x3x3, pad 1, bias) +
 * Relu, MaxPool 2x2x2, then ConvTranspose (8 -> 4, 2x2x2, stride 2, bias),
 * over a [2, 3, 4, 6, 6] volume, against float64. Each convolution and the
 * pooling is one patch gather over the whole volume (not one per depth
 * slice and tap), the Relu fused into the first. */
static Onnx__ModelProto *conv3d_model(const float *w0, const float *b0, const float *wt,
                                      const float *bt) {
    Onnx__GraphProto *g = ob_graph("conv3d");
    Onnx__ModelProto *m = ob_model(g);
    int64_t xd[5] = {2, 3, 4, 6, 6}, yd[5] = {2, 4, 4, 6, 6};
    ob_input(g, ob_vi("x", ob_tensor_type(F32, 5, xd, NULL)));
    ob_output(g, ob_vi("y", ob_tensor_type(F32, 5, yd, NULL)));
    f32_init(g, "W0", 5, (const int64_t[]){8, 3, 3, 3, 3}, w0, 8 * 3 * 27);
    f32_init(g, "B0", 1, (const int64_t[]){8}, b0, 8);
    f32_init(g, "Wt", 5, (const int64_t[]){8, 4, 2, 2, 2}, wt, 8 * 4 * 8);
    f32_init(g, "Bt", 1, (const int64_t[]){4}, bt, 4);
    ob_attr_is(ob_node(g, "Conv", "c", (const char *[]){"x", "W0", "B0", NULL},
                       (const char *[]){"c", NULL}),
               "pads", (const int64_t[]){1, 1, 1, 1, 1, 1}, 6);
    ob_node(g, "Relu", "r", (const char *[]){"c", NULL}, (const char *[]){"r", NULL});
    Onnx__NodeProto *mp =
        ob_node(g, "MaxPool", "p", (const char *[]){"r", NULL}, (const char *[]){"p", NULL});
    ob_attr_is(mp, "kernel_shape", (const int64_t[]){2, 2, 2}, 3);
    ob_attr_is(mp, "strides", (const int64_t[]){2, 2, 2}, 3);
    ob_attr_is(ob_node(g, "ConvTranspose", "y", (const char *[]){"p", "Wt", "Bt", NULL},
                       (const char *[]){"y", NULL}),
               "strides", (const int64_t[]){2, 2, 2}, 3);
    return m;
}

static void test_conv3d_volume(void) {
    enum { N = 2, C = 3, D = 4, H = 6, W = 6, K = 8, O = 4, PD = D / 2, PH = H / 2, PW = W / 2 };
    static float x[N * C * D * H * W], w0[K * C * 27], b0[K], wt[K * O * 8], bt[O];
    static float y[N * O * D * H * W];
    static double r[N * K * D * H * W], pl[N * K * PD * PH * PW], ref[N * O * D * H * W];
    for (int i = 0; i < N * C * D * H * W; i++)
        x[i] = (float)((i * 29) % 53 - 26) * 0.05f;
    for (int i = 0; i < K * C * 27; i++)
        w0[i] = (float)((i * 37) % 61 - 30) * 0.01f;
    for (int i = 0; i < K * O * 8; i++)
        wt[i] = (float)((i * 17) % 41 - 20) * 0.02f;
    for (int i = 0; i < K; i++)
        b0[i] = (float)(i % 5) * 0.1f - 0.2f;
    for (int i = 0; i < O; i++)
        bt[i] = (float)i * 0.05f;
    /* The reference: the convolution and Relu, the 2x2x2 maxima, then each
     * pooled voxel's 2x2x2 block of the transposed one (stride = kernel: no
     * overlap). */
    for (int n = 0; n < N; n++)
        for (int k = 0; k < K; k++)
            for (int z = 0; z < D; z++)
                for (int yy = 0; yy < H; yy++)
                    for (int xx = 0; xx < W; xx++) {
                        double acc = b0[k];
                        for (int c = 0; c < C; c++)
                            for (int t = 0; t < 27; t++) {
                                int iz = z + t / 9 - 1, iy = yy + t / 3 % 3 - 1,
                                    ix = xx + t % 3 - 1;
                                if (iz < 0 || iz >= D || iy < 0 || iy >= H || ix < 0 || ix >= W)
                                    continue;
                                acc += (double)w0[(k * C + c) * 27 + t] *
                                       x[(((n * C + c) * D + iz) * H + iy) * W + ix];
                            }
                        r[(((n * K + k) * D + z) * H + yy) * W + xx] = acc > 0 ? acc : 0;
                    }
    for (int i = 0; i < N * K * PD * PH * PW; i++) {
        int px = i % PW, py = i / PW % PH, pz = i / (PW * PH) % PD, nk = i / (PW * PH * PD);
        double mx = -INFINITY;
        for (int t = 0; t < 8; t++)
            mx = fmax(mx,
                      r[((nk * D + 2 * pz + t / 4) * H + 2 * py + t / 2 % 2) * W + 2 * px + t % 2]);
        pl[i] = mx;
    }
    for (int n = 0; n < N; n++)
        for (int o = 0; o < O; o++)
            for (int z = 0; z < D; z++)
                for (int yy = 0; yy < H; yy++)
                    for (int xx = 0; xx < W; xx++) {
                        double acc = bt[o];
                        int t = (z % 2 * 2 + yy % 2) * 2 + xx % 2;
                        for (int k = 0; k < K; k++)
                            acc += wt[(k * O + o) * 8 + t] *
                                   pl[(((n * K + k) * PD + z / 2) * PH + yy / 2) * PW + xx / 2];
                        ref[(((n * O + o) * D + z) * H + yy) * W + xx] = acc;
                    }
    lm_binary *bin;
    CHECK_OK(lmfe_compile_onnx(save(conv3d_model(w0, b0, wt, bt)), NULL, &bin, NULL));
    lm_replay *rp;
    CHECK_OK(replay_open(bin, &rp));
    lm_replay_options ro;
    lm_replay_options_init(&ro);
    ro.profile = true;
    CHECK_OK(lm_replay_set_input(rp, "x", x, sizeof x));
    CHECK_OK(lm_replay_run(rp, NULL, &ro, NULL));
    CHECK_OK(lm_replay_get_output(rp, "y", y, sizeof y));
    const lm_profile_program_entry *e;
    size_t n;
    CHECK_OK(lm_replay_get_program_profile(rp, &e, &n));
    int gathers = 0, pools = 0, unary = 0;
    for (size_t i = 0; i < n; i++) {
        gathers += strstr(e[i].program, "conv_im2col_reader.c") != NULL;
        pools += strstr(e[i].program, "pool_compute.c") != NULL;
        unary += strstr(e[i].program, "unary_compute.c") != NULL;
    }
    CHECK(gathers == 3 && pools == 1 && unary == 0);
    double worst = 0, big = 0;
    for (size_t i = 0; i < sizeof y / sizeof *y; i++) {
        worst = fmax(worst, fabs(y[i] - ref[i]));
        big = fmax(big, fabs(ref[i]));
    }
    CHECK(big > 0.1 && worst < 1e-5 * big);
    lm_replay_close(rp);
    lm_binary_free(bin);
}

/* A vision transformer's window and grid partitions (MaxViT's), and their
 * inverses, around images: each Reshape -> Transpose -> Reshape chain is one
 * pass (the Transposes and the later Reshapes fused) that moves whole pixel
 * rows between the NHWC image and the windows, and the departitioned image
 * stays an image for the next convolution. A grid partition's swap of
 * windows and positions joins its chain. A channels-last chain (Swin's)
 * ends in a product. Every output against float64. */
static void test_window_partitions(void) {
    enum { C = 40, H = 6, W = 8, PH = 3, PW = 4, GH = H / PH, GW = W / PW };
    static float x[C * H * W], eye[C * C], wm[C * C], y[C * H * W];
    for (int i = 0; i < C * H * W; i++)
        x[i] = (float)((i * 37) % 101 - 50) * 0.02f;
    for (int i = 0; i < C; i++)
        eye[i * C + i] = 1;
    for (int i = 0; i < C * C; i++)
        wm[i] = (float)((i * 13) % 23 - 11) * 0.05f;
    for (int grid = 0; grid < 2; grid++) {
        int64_t xd[4] = {1, C, H, W}, ed[4] = {C, C, 1, 1}, md[2] = {C, C};
        Onnx__GraphProto *g = ob_graph("windows");
        Onnx__ModelProto *m = ob_model(g);
        ob_input(g, ob_vi("x", ob_tensor_type(F32, 4, xd, NULL)));
        ob_output(g, ob_vi("y", ob_tensor_type(F32, 4, xd, NULL)));
        f32_init(g, "eye", 4, ed, eye, C * C);
        f32_init(g, "M", 2, md, wm, C * C);
        i64_init(g, "split", 6, (const int64_t[]){1, C, GH, PH, GW, PW});
        i64_init(g, "windows", 4, (const int64_t[]){1, GH * GW, PH * PW, C});
        i64_init(g, "unsplit", 6, (const int64_t[]){1, GH, GW, PH, PW, C});
        i64_init(g, "image", 4, (const int64_t[]){1, C, H, W});
#define NODE(op, out, ...)                                                                         \
    ob_node(g, op, out, (const char *[]){__VA_ARGS__, NULL}, (const char *[]){out, NULL})
        NODE("Conv", "x1", "x", "eye");
        NODE("Reshape", "s", "x1", "split");
        ob_attr_is(NODE("Transpose", "t", "s"), "perm", (const int64_t[]){0, 2, 4, 3, 5, 1}, 6);
        NODE("Reshape", grid ? "w0" : "w", "t", "windows");
        if (grid) /* positions first: attention across the windows */
            ob_attr_is(NODE("Transpose", "w", "w0"), "perm", (const int64_t[]){0, 2, 1, 3}, 4);
        NODE("MatMul", "a", "w", "M");
        if (grid)
            ob_attr_is(NODE("Transpose", "a0", "a"), "perm", (const int64_t[]){0, 2, 1, 3}, 4);
        NODE("Reshape", "u", grid ? "a0" : "a", "unsplit");
        ob_attr_is(NODE("Transpose", "v", "u"), "perm", (const int64_t[]){0, 5, 1, 3, 2, 4}, 6);
        NODE("Reshape", "x2", "v", "image");
        NODE("Conv", "y", "x2", "eye");
#undef NODE
        lm_binary *bin;
        lmfe_report rep;
        CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, &rep));
        CHECK(placement_of(&rep, "Transpose") == LMFE_FUSED);
        /* The first Conv's result, and the departitioned image. */
        CHECK(rep.notes && strstr(rep.notes, "layout: 2 results"));
        lm_replay_report rr;
        CHECK_OK(replay1(bin, "x", x, C * H * W, "y", y, C * H * W, &rr));
        /* The partitions read and write the images as they are: through
         * NCHW the same graph takes 5 launches more. */
        CHECK(rr.programs <= (grid ? 31u : 25u));
        /* y[c][h][w] = sum_k x[k][h][w] M[k][c]: each pixel's channels
         * through M, wherever the windows took it. */
        double worst = 0;
        for (int c = 0; c < C; c++)
            for (int p = 0; p < H * W; p++) {
                double want = 0;
                for (int k = 0; k < C; k++)
                    want += (double)x[k * H * W + p] * wm[k * C + c];
                double e = fabs(y[c * H * W + p] - want);
                worst = e > worst ? e : worst;
            }
        CHECK(worst < 1e-5);
        lmfe_report_free(&rep);
        lm_binary_free(bin);
    }
    /* Channels last ([1, H, W, C], not an image): windows into a product,
     * z[win][pos][c] = sum_k x[gh*PH+ph][gw*PW+pw][k] M[k][c]. */
    int64_t xd[4] = {1, H, W, C}, md[2] = {C, C}, zd[3] = {GH * GW, PH * PW, C};
    Onnx__GraphProto *g = ob_graph("swin");
    Onnx__ModelProto *m = ob_model(g);
    ob_input(g, ob_vi("x", ob_tensor_type(F32, 4, xd, NULL)));
    ob_output(g, ob_vi("z", ob_tensor_type(F32, 3, zd, NULL)));
    f32_init(g, "M", 2, md, wm, C * C);
    i64_init(g, "split", 6, (const int64_t[]){1, GH, PH, GW, PW, C});
    i64_init(g, "windows", 3, (const int64_t[]){-1, PH * PW, C});
    ob_node(g, "Reshape", "s", (const char *[]){"x", "split", NULL}, (const char *[]){"s", NULL});
    ob_attr_is(
        ob_node(g, "Transpose", "t", (const char *[]){"s", NULL}, (const char *[]){"t", NULL}),
        "perm", (const int64_t[]){0, 1, 3, 2, 4, 5}, 6);
    ob_node(g, "Reshape", "w", (const char *[]){"t", "windows", NULL}, (const char *[]){"w", NULL});
    ob_node(g, "MatMul", "z", (const char *[]){"w", "M", NULL}, (const char *[]){"z", NULL});
    lm_binary *bin;
    lmfe_report rep;
    CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, &rep));
    CHECK(placement_of(&rep, "Transpose") == LMFE_FUSED);
    CHECK_OK(replay1(bin, "x", x, C * H * W, "z", y, C * H * W, NULL));
    double worst = 0;
    for (int gh = 0; gh < GH; gh++)
        for (int gw = 0; gw < GW; gw++)
            for (int ph = 0; ph < PH; ph++)
                for (int pw = 0; pw < PW; pw++)
                    for (int c = 0; c < C; c++) {
                        const float *px = &x[((gh * PH + ph) * W + gw * PW + pw) * C];
                        double want = 0;
                        for (int k = 0; k < C; k++)
                            want += (double)px[k] * wm[k * C + c];
                        double e = fabs(y[(((gh * GW + gw) * PH + ph) * PW + pw) * C + c] - want);
                        worst = e > worst ? e : worst;
                    }
    CHECK(worst < 1e-5);
    lmfe_report_free(&rep);
    lm_binary_free(bin);
}

/* ShuffleNet's channel shuffle on an NCHW value, [1, 8, 5, 6] -> [1, 2, 4,
 * 5, 6] -> (0, 2, 1, 3, 4) -> [1, 8, 5, 6]: the pass's atoms merge (the
 * 5 x 6 pixels) and are cut again at the tensor's last dim for the tile
 * paths. Against the formula. */
static void test_channel_shuffle(void) {
    enum { C = 8, H = 5, W = 6, N = C * H * W };
    static float x[N], y[N];
    for (int i = 0; i < N; i++)
        x[i] = (float)i;
    int64_t xd[4] = {1, C, H, W};
    Onnx__GraphProto *g = ob_graph("shuffle");
    Onnx__ModelProto *m = ob_model(g);
    ob_input(g, ob_vi("x", ob_tensor_type(F32, 4, xd, NULL)));
    ob_output(g, ob_vi("y", ob_tensor_type(F32, 4, xd, NULL)));
    i64_init(g, "groups", 5, (const int64_t[]){1, 2, C / 2, H, W});
    i64_init(g, "back", 4, xd);
    ob_node(g, "Reshape", "s", (const char *[]){"x", "groups", NULL}, (const char *[]){"s", NULL});
    ob_attr_is(
        ob_node(g, "Transpose", "t", (const char *[]){"s", NULL}, (const char *[]){"t", NULL}),
        "perm", (const int64_t[]){0, 2, 1, 3, 4}, 5);
    ob_node(g, "Reshape", "y", (const char *[]){"t", "back", NULL}, (const char *[]){"y", NULL});
    lm_binary *bin;
    lmfe_report rep;
    CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, &rep));
    CHECK(placement_of(&rep, "Transpose") == LMFE_FUSED);
    CHECK_OK(replay1(bin, "x", x, N, "y", y, N, NULL));
    /* output channel c = j * 2 + i reads input channel i * 4 + j */
    for (int c = 0; c < C; c++)
        for (int p = 0; p < H * W; p++)
            CHECK(y[c * H * W + p] == x[((c % 2) * (C / 2) + c / 2) * H * W + p]);
    lmfe_report_free(&rep);
    lm_binary_free(bin);
}

/* Chains over a scalar and over dims of 1 only: no atoms to move, the
 * result is the input in its new shape. */
static void test_regroup_ones(void) {
    for (int rank = 0; rank < 2; rank++) {
        float x = 2.5f, y = 0;
        int64_t one[2] = {1, 1}, three[3] = {1, 1, 1};
        Onnx__GraphProto *g = ob_graph("ones");
        Onnx__ModelProto *m = ob_model(g);
        ob_input(g, ob_vi("x", ob_tensor_type(F32, rank, one, NULL)));
        ob_output(g, ob_vi("y", ob_tensor_type(F32, 3, three, NULL)));
        i64_init(g, "shape", 2, one);
        i64_init(g, "shape3", 3, three);
        ob_node(g, "Reshape", "r", (const char *[]){"x", "shape", NULL},
                (const char *[]){"r", NULL});
        ob_attr_is(
            ob_node(g, "Transpose", "t", (const char *[]){"r", NULL}, (const char *[]){"t", NULL}),
            "perm", (const int64_t[]){1, 0}, 2);
        ob_node(g, "Reshape", "y", (const char *[]){"t", "shape3", NULL},
                (const char *[]){"y", NULL});
        lm_binary *bin;
        CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, NULL));
        CHECK_OK(replay1(bin, "x", &x, 1, "y", &y, 1, NULL));
        CHECK(y == 2.5f);
        lm_binary_free(bin);
    }
}

/* A chain one pass cannot make from where its input is held: a Transpose
 * not yet made (it keeps the last dim) reversing seven dims, then a
 * Reshape that splits two of them and a Transpose that swaps the halves.
 * From the value itself the chain is five atoms; from the tensor the
 * Transpose left, ten, more than a pass takes. It runs step by step, with
 * the same answer. */
static void test_regroup_by_steps(void) {
    enum { N = 1024 };
    static float x[N], y[N], want[N];
    for (int i = 0; i < N; i++)
        x[i] = (float)i;
    /* x [2,2,2,2,2,4,4,2]; t = x permuted by (6,5,4,3,2,1,0,7) = [4,4,2,2,2,2,2,2];
     * s = t as [2,2,2,2,4,4,2,2]; y = s permuted by (1,0,3,2,4,5,6,7). */
    int64_t xd[8] = {2, 2, 2, 2, 2, 4, 4, 2}, sd[8] = {2, 2, 2, 2, 4, 4, 2, 2};
    for (int i = 0; i < N; i++) {
        int o[8], r = i; /* y's index, as s's after the swap */
        for (int d = 7; d >= 0; d--)
            o[d] = r % (int)sd[d], r /= (int)sd[d];
        int sidx[8] = {o[1], o[0], o[3], o[2], o[4], o[5], o[6], o[7]}, flat = 0;
        for (int d = 0; d < 8; d++)
            flat = flat * (int)sd[d] + sidx[d];
        int td[8] = {4, 4, 2, 2, 2, 2, 2, 2}, ti[8]; /* flat in t */
        for (int d = 7; d >= 0; d--)
            ti[d] = flat % td[d], flat /= td[d];
        int xi[8], perm[8] = {6, 5, 4, 3, 2, 1, 0, 7}, xf = 0;
        for (int d = 0; d < 8; d++)
            xi[perm[d]] = ti[d];
        for (int d = 0; d < 8; d++)
            xf = xf * (int)xd[d] + xi[d];
        want[i] = x[xf];
    }
    Onnx__GraphProto *g = ob_graph("steps");
    Onnx__ModelProto *m = ob_model(g);
    ob_input(g, ob_vi("x", ob_tensor_type(F32, 8, xd, NULL)));
    ob_output(g, ob_vi("y", ob_tensor_type(F32, 8, sd, NULL)));
    i64_init(g, "shape", 8, sd);
    ob_attr_is(
        ob_node(g, "Transpose", "t", (const char *[]){"x", NULL}, (const char *[]){"t", NULL}),
        "perm", (const int64_t[]){6, 5, 4, 3, 2, 1, 0, 7}, 8);
    ob_node(g, "Reshape", "s", (const char *[]){"t", "shape", NULL}, (const char *[]){"s", NULL});
    ob_attr_is(
        ob_node(g, "Transpose", "y", (const char *[]){"s", NULL}, (const char *[]){"y", NULL}),
        "perm", (const int64_t[]){1, 0, 3, 2, 4, 5, 6, 7}, 8);
    lm_binary *bin;
    CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, NULL));
    CHECK_OK(replay1(bin, "x", x, N, "y", y, N, NULL));
    CHECK(!memcmp(y, want, sizeof y));
    lm_binary_free(bin);
}

/* Transposes that keep the last dim are made only when a reader needs
 * them (fe_out_permuted): a sequence-first attention's input projection
 * (Transpose, MatMul with a bias, Slice of the last dim, Reshape and
 * Transpose to heads, and to keys, [heads, D, S], read by a MatMul as its
 * B transposed) runs on the batch-first tensor, with heads of 16 (runs of
 * face rows) and of 32 (whole tiles), each split one launch of
 * lmnn_split_heads; a second Transpose
 * composes with the first; a graph output and an element-wise reader get
 * the permuted tensor made. Every output against float64. */
static void test_permutations_not_made(void) {
    enum { B = 2, S = 40, C = 64, N = 96 };
    static float x[B * S * C], w[C * N], bias[N], got[B * 4 * S * S];
    static double pb[S][B][N], heads[B * 4][S][32];
    for (int i = 0; i < B * S * C; i++)
        x[i] = (float)((i * 37) % 103 - 51) * 0.02f;
    for (int i = 0; i < C * N; i++)
        w[i] = (float)((i * 11) % 29 - 14) * 0.01f;
    for (int i = 0; i < N; i++)
        bias[i] = (float)(i % 9) * 0.1f - 0.4f;
    /* pb[s][b][n] = bias[n] + sum_c x[b][s][c] w[c][n] */
    for (int s_ = 0; s_ < S; s_++)
        for (int b = 0; b < B; b++)
            for (int n = 0; n < N; n++) {
                double acc = bias[n];
                for (int c = 0; c < C; c++)
                    acc += (double)x[(b * S + s_) * C + c] * w[c * N + n];
                pb[s_][b][n] = acc;
            }
    for (int D = 16; D <= 32; D += 16) {
        int H = 64 / D; /* heads per batch entry: q is 64 wide */
        int64_t xd[3] = {B, S, C}, wd[2] = {C, N}, bd[1] = {N}, td[3] = {S, B, C};
        int64_t hd[3] = {B * H, S, D}, kd[3] = {S, C, B}, ed[3] = {S, B, N};
        int64_t sd[3] = {B * H, S, S};
        Onnx__GraphProto *g = ob_graph("seqfirst");
        Onnx__ModelProto *m = ob_model(g);
        ob_input(g, ob_vi("x", ob_tensor_type(F32, 3, xd, NULL)));
        ob_output(g, ob_vi("heads", ob_tensor_type(F32, 3, hd, NULL)));
        ob_output(g, ob_vi("t", ob_tensor_type(F32, 3, td, NULL)));
        ob_output(g, ob_vi("k", ob_tensor_type(F32, 3, kd, NULL)));
        ob_output(g, ob_vi("e", ob_tensor_type(F32, 3, ed, NULL)));
        ob_output(g, ob_vi("scores", ob_tensor_type(F32, 3, sd, NULL)));
        f32_init(g, "W", 2, wd, w, C * N);
        f32_init(g, "b", 1, bd, bias, N);
        i64_init(g, "starts", 1, (const int64_t[]){32});
        i64_init(g, "ends", 1, (const int64_t[]){96});
        i64_init(g, "axes", 1, (const int64_t[]){2});
        i64_init(g, "shape", 3, (const int64_t[]){S, B * H, D});
#define NODE(op, out, ...)                                                                         \
    ob_node(g, op, out, (const char *[]){__VA_ARGS__, NULL}, (const char *[]){out, NULL})
        ob_attr_is(NODE("Transpose", "t", "x"), "perm", (const int64_t[]){1, 0, 2}, 3);
        NODE("MatMul", "p", "t", "W");
        NODE("Add", "pb", "p", "b");
        NODE("Slice", "q", "pb", "starts", "ends", "axes");
        NODE("Reshape", "r", "q", "shape");
        ob_attr_is(NODE("Transpose", "heads", "r"), "perm", (const int64_t[]){1, 0, 2}, 3);
        NODE("Reshape", "r2", "q", "shape");
        ob_attr_is(NODE("Transpose", "keys", "r2"), "perm", (const int64_t[]){1, 2, 0}, 3);
        NODE("MatMul", "scores", "heads", "keys");
        /* Composed with t's: (1, 0, 2) then (0, 2, 1) moves the last dim. */
        ob_attr_is(NODE("Transpose", "k", "t"), "perm", (const int64_t[]){0, 2, 1}, 3);
        NODE("Exp", "e", "pb");
#undef NODE
        lm_binary *bin;
        CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, NULL));
        /* Each heads split, keys too, is one launch of attn_heads.c. */
        lm_replay *r;
        CHECK_OK(replay_profiled(bin, x, sizeof x, &r));
        const lm_profile_program_entry *prof;
        size_t n, splits = 0;
        CHECK_OK(lm_replay_get_program_profile(r, &prof, &n));
        for (size_t i = 0; i < n; i++)
            if (!strcmp(prof[i].label, "Reshape r") || !strcmp(prof[i].label, "Reshape r2")) {
                CHECK(!strcmp(prof[i].program, "attn_heads.c") && prof[i].launches == 1);
                splits++;
            }
        CHECK(splits == 2);
        lm_replay_close(r);
        /* heads[j][s][d] = q[s] flat at j * D + d */
        for (int j = 0; j < B * H; j++)
            for (int s_ = 0; s_ < S; s_++)
                for (int d = 0; d < D; d++)
                    heads[j][s_][d] = pb[s_][(j * D + d) / 64][32 + (j * D + d) % 64];
        static const char *const outs[] = {"heads", "t", "k", "e", "scores"};
        for (int o = 0; o < 5; o++) {
            size_t count = o == 3 ? S * B * N : o == 4 ? (size_t)(B * H * S * S) : S * B * C;
            CHECK_OK(replay1(bin, "x", x, B * S * C, outs[o], got, count, NULL));
            double worst = 0;
            for (size_t i = 0; i < count; i++) {
                double want = 0;
                if (o == 0) {
                    want = heads[i / (S * D)][i / D % S][i % D];
                } else if (o == 1) {
                    size_t s_ = i / (B * C), b = i / C % B, c = i % C;
                    want = x[(b * S + s_) * C + c];
                } else if (o == 2) { /* k[s][c][b] = x[b][s][c] */
                    size_t s_ = i / (C * B), c = i / B % C, b = i % B;
                    want = x[(b * S + s_) * C + c];
                } else if (o == 3) {
                    want = exp(pb[i / (B * N)][i / N % B][i % N]);
                } else {
                    size_t j = i / (S * S), s_ = i / S % S, u = i % S;
                    for (int d = 0; d < D; d++)
                        want += heads[j][s_][d] * heads[j][u][d];
                }
                double e = fabs(got[i] - want) / (1 + fabs(want));
                worst = e > worst ? e : worst;
            }
            CHECK(worst < 2e-6);
        }
        lm_binary_free(bin);
    }
}

/* The launches of attn_heads.c in a profiled replay; SIZE_MAX when
 * data_rows.c (the general pass's row moves) ran or there is no profile. */
static size_t heads_launches(lm_replay *rp) {
    const lm_profile_program_entry *e;
    size_t n, heads = 0;
    if (lm_replay_get_program_profile(rp, &e, &n) != LM_OK) return SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
        if (strstr(e[i].program, "data_rows.c")) return SIZE_MAX;
        if (!strcmp(e[i].program, "attn_heads.c")) heads += e[i].launches;
    }
    return heads;
}

/* A transformer's heads joined back (Transpose (0, 2, 1, 3) then Reshape
 * to [B, S, H * D], and without a batch (1, 0, 2) to [S, H * D]) is one
 * launch of attn_heads.c (lmnn_concat_heads), as the split before it, for
 * heads of 8: z = 3 * 2x through split, scale and join, exactly. */
static void test_heads_joined(void) {
    enum { B = 2, S = 12, H = 4, D = 8 };
    static float x[B * S * H * D], z[B * S * H * D];
    for (int i = 0; i < B * S * H * D; i++)
        x[i] = (float)((i * 13) % 41 - 20) * 0.25f;
    for (int batch = 0; batch < 2; batch++) {
        int r = batch ? 4 : 3;
        int64_t xd[3] = {B, S, H * D}, x2[2] = {B * S, H * D};
        int64_t sd[4] = {B, S, H, D}, s3[3] = {B * S, H, D};
        const int64_t *perm = batch ? (const int64_t[]){0, 2, 1, 3} : (const int64_t[]){1, 0, 2};
        Onnx__GraphProto *g = ob_graph("join");
        Onnx__ModelProto *m = ob_model(g);
        ob_input(g, ob_vi("x", ob_tensor_type(F32, batch ? 3 : 2, batch ? xd : x2, NULL)));
        ob_output(g, ob_vi("z", ob_tensor_type(F32, batch ? 3 : 2, batch ? xd : x2, NULL)));
        i64_init(g, "heads", r, batch ? sd : s3);
        i64_init(g, "flat", batch ? 3 : 2, batch ? xd : x2);
        f32_init(g, "two", 0, NULL, (const float[]){2}, 1);
        f32_init(g, "three", 0, NULL, (const float[]){3}, 1);
#define NODE(op, out, ...)                                                                         \
    ob_node(g, op, out, (const char *[]){__VA_ARGS__, NULL}, (const char *[]){out, NULL})
        NODE("Mul", "a", "x", "two");
        NODE("Reshape", "split", "a", "heads");
        ob_attr_is(NODE("Transpose", "h", "split"), "perm", perm, r);
        NODE("Mul", "s", "h", "three");
        ob_attr_is(NODE("Transpose", "back", "s"), "perm", perm, r);
        NODE("Reshape", "z", "back", "flat");
#undef NODE
        lm_binary *bin;
        CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, NULL));
        lm_replay *rp;
        CHECK_OK(replay_profiled(bin, x, sizeof x, &rp));
        CHECK_OK(lm_replay_get_output(rp, "z", z, sizeof z));
        for (int i = 0; i < B * S * H * D; i++)
            CHECK(z[i] == 6 * x[i]);
        CHECK(heads_launches(rp) == 2);
        lm_replay_close(rp);
        lm_binary_free(bin);
    }
}

/* Heads joined sequence first, as PyTorch's MultiheadAttention does:
 * [B * H, S, D] moved by (1, 0, 2) and reshaped to [S * B, H * D], and [B,
 * H, S, D] moved by (2, 0, 1, 3) to [S, B, H * D]: one launch of
 * attn_heads.c (lmnn_concat_heads_seq_first), no data_rows.c, exactly 3x. */
static void test_heads_joined_seq_first(void) {
    enum { B = 2, H = 4, S = 17, D = 6 };
    static float x[B * H * S * D], z[B * H * S * D];
    for (int i = 0; i < B * H * S * D; i++)
        x[i] = (float)((i * 7) % 37 - 18) * 0.5f;
    for (int four = 0; four < 2; four++) {
        int64_t x3[3] = {B * H, S, D}, x4[4] = {B, H, S, D};
        int64_t z2[2] = {S * B, H * D}, z3[3] = {S, B, H * D};
        Onnx__GraphProto *g = ob_graph("join_seq_first");
        Onnx__ModelProto *m = ob_model(g);
        ob_input(g, ob_vi("x", ob_tensor_type(F32, four ? 4 : 3, four ? x4 : x3, NULL)));
        ob_output(g, ob_vi("z", ob_tensor_type(F32, four ? 3 : 2, four ? z3 : z2, NULL)));
        i64_init(g, "flat", four ? 3 : 2, four ? z3 : z2);
        f32_init(g, "three", 0, NULL, (const float[]){3}, 1);
#define NODE(op, out, ...)                                                                         \
    ob_node(g, op, out, (const char *[]){__VA_ARGS__, NULL}, (const char *[]){out, NULL})
        NODE("Mul", "s", "x", "three");
        ob_attr_is(NODE("Transpose", "t", "s"), "perm",
                   four ? (const int64_t[]){2, 0, 1, 3} : (const int64_t[]){1, 0, 2}, four ? 4 : 3);
        NODE("Reshape", "z", "t", "flat");
#undef NODE
        lm_binary *bin;
        CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, NULL));
        lm_replay *rp;
        CHECK_OK(replay_profiled(bin, x, sizeof x, &rp));
        CHECK_OK(lm_replay_get_output(rp, "z", z, sizeof z));
        bool same = true;
        for (int s_ = 0; s_ < S; s_++)
            for (int b = 0; b < B; b++)
                for (int j = 0; j < H * D; j++)
                    same = same && z[(s_ * B + b) * H * D + j] ==
                                       3 * x[((b * H + j / D) * S + s_) * D + j % D];
        CHECK(same);
        CHECK(heads_launches(rp) == 1);
        lm_replay_close(rp);
        lm_binary_free(bin);
    }
}

/* Attention scores with the heads split by Reshape and Transpose: GPT's,
 * x [B, S, H * D] as [B, S, H, D], queries moved by (0, 2, 1, 3) and keys
 * by (0, 2, 3, 1) to [B, H, D, S] (a perm that looks like NCHW to NHWC, but
 * from a plain reshape, no image); and sequence first, PyTorch's
 * MultiheadAttention without batch_first, x [S, B, H * D] as [S, B * H, D],
 * queries moved by (1, 0, 2) and keys by (1, 2, 0). Then one MatMul. The
 * two splits are two launches of attn_heads.c, nothing goes through
 * data_rows.c, and the scores match float64. */
static void test_keys_split(void) {
    enum { B = 2, S = 16, H = 4, D = 8, C = H * D };
    static float x[B * S * C], got[B * H * S * S];
    for (int i = 0; i < B * S * C; i++)
        x[i] = (float)((i * 29) % 53 - 26) * 0.05f;
    for (int seq_first = 0; seq_first < 2; seq_first++) {
        int64_t xd[3] = {B, S, C}, hd[4] = {B, S, H, D}, sd[4] = {B, H, S, S};
        int64_t xs[3] = {S, B, C}, hs[3] = {S, B * H, D}, ss[3] = {B * H, S, S};
        Onnx__GraphProto *g = ob_graph("keys");
        Onnx__ModelProto *m = ob_model(g);
        ob_input(g, ob_vi("x", ob_tensor_type(F32, 3, seq_first ? xs : xd, NULL)));
        ob_output(g,
                  ob_vi("scores", ob_tensor_type(F32, 4 - seq_first, seq_first ? ss : sd, NULL)));
        i64_init(g, "heads", 4 - seq_first, seq_first ? hs : hd);
        f32_init(g, "two", 0, NULL, (const float[]){2}, 1);
#define NODE(op, out, ...)                                                                         \
    ob_node(g, op, out, (const char *[]){__VA_ARGS__, NULL}, (const char *[]){out, NULL})
        NODE("Mul", "k", "x", "two");
        NODE("Reshape", "rq", "x", "heads");
        ob_attr_is(NODE("Transpose", "q", "rq"), "perm",
                   seq_first ? (const int64_t[]){1, 0, 2} : (const int64_t[]){0, 2, 1, 3},
                   4 - seq_first);
        NODE("Reshape", "rk", "k", "heads");
        ob_attr_is(NODE("Transpose", "kt", "rk"), "perm",
                   seq_first ? (const int64_t[]){1, 2, 0} : (const int64_t[]){0, 2, 3, 1},
                   4 - seq_first);
        NODE("MatMul", "scores", "q", "kt");
#undef NODE
        lm_binary *bin;
        CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, NULL));
        lm_replay *rp;
        CHECK_OK(replay_profiled(bin, x, sizeof x, &rp));
        CHECK_OK(lm_replay_get_output(rp, "scores", got, sizeof got));
        CHECK(heads_launches(rp) == 2);
        lm_replay_close(rp);
        double worst = 0;
        for (int b = 0; b < B; b++)
            for (int h = 0; h < H; h++)
                for (int s_ = 0; s_ < S; s_++)
                    for (int u = 0; u < S; u++) {
                        /* Rows of x: (b, s) batch first, (s, b) sequence first. */
                        int rs = seq_first ? s_ * B + b : b * S + s_;
                        int ru = seq_first ? u * B + b : b * S + u;
                        double want = 0;
                        for (int d = 0; d < D; d++)
                            want += (double)x[rs * C + h * D + d] * 2 * x[ru * C + h * D + d];
                        double err =
                            fabs(got[((b * H + h) * S + s_) * S + u] - want) / (1 + fabs(want));
                        worst = err > worst ? err : worst;
                    }
        CHECK(worst < 2e-6);
        lm_binary_free(bin);
    }
}

/* Launches in rp's program profile whose label starts with `label` and
 * whose program's name holds `program` (NULL: any); SIZE_MAX without a
 * profile. */
static size_t launches_of(lm_replay *rp, const char *label, const char *program) {
    const lm_profile_program_entry *e;
    size_t n, launches = 0;
    if (lm_replay_get_program_profile(rp, &e, &n) != LM_OK) return SIZE_MAX;
    for (size_t i = 0; i < n; i++)
        if ((!label || !strncmp(e[i].label, label, strlen(label))) &&
            (!program || strstr(e[i].program, program)))
            launches += e[i].launches;
    return launches;
}

static size_t program_launches(lm_replay *rp, const char *program) {
    return launches_of(rp, NULL, program);
}

/* A Concat of Slices of one value along the Concat's axis, some negated:
 * along the last axis (rotary embeddings' rotate_half, [-x2, x1] of x's
 * halves; pieces taken with steps, backwards and overlapping) one product
 * by a constant matrix of 0 and +-1, and along the second-last (torch.roll
 * of rows) the same from the left; along an outer axis (torch.roll of
 * whole matrices) a Gather of whole tiles. No Slice, Neg or Concat program
 * runs, and the values are exact. Slices of two values, slices that also
 * cut another axis and a negated piece along an outer axis stay copies,
 * with the same values. */
static void test_concat_slices(void) {
    enum { B = 2, H = 3, S = 5, D = 8, PIECES = 3 };
    static float x[B * H * S * D], z[B * H * S * 2 * D];
    for (int i = 0; i < B * H * S * D; i++)
        x[i] = (float)((i * 37) % 61 - 30) * 0.125f;
    enum { PRODUCT, GATHER, COPIES };
    static const struct {
        int axis, kind;
        struct {
            int from, to, step; /* to INT_MIN: past the start */
            bool neg, other;    /* negated; of the second value */
        } piece[PIECES];
    } forms[] = {
        {3, PRODUCT, {{4, 8, 1, true, false}, {0, 4, 1, false, false}}},
        {3,
         PRODUCT,
         {{7, INT_MIN, -2, false, false}, {0, 8, 3, true, false}, {2, 8, 1, false, false}}},
        {2, PRODUCT, {{3, 5, 1, false, false}, {0, 3, 1, true, false}}},
        {1, GATHER, {{2, 3, 1, false, false}, {0, 2, 1, false, false}}},
        {3, COPIES, {{4, 8, 1, true, true}, {0, 4, 1, false, false}}},
        {1, COPIES, {{2, 3, 1, true, false}, {0, 2, 1, false, false}}},
    };
    for (size_t f = 0; f <= sizeof forms / sizeof forms[0]; f++) {
        /* The last form: rotate_half of slices that also cut axis 2 (rows
         * 1.. for the second half, 0..S-2 for the first). */
        bool rows_cut = f == sizeof forms / sizeof forms[0];
        int axis = rows_cut ? 3 : forms[f].axis, kind = rows_cut ? COPIES : forms[f].kind;
        int64_t xd[4] = {B, H, S, D}, zd[4] = {B, H, S, D};
        /* pos[j]: position along the axis the result's j-th comes from
         * (+1; negative when negated, +100 when of the second value). */
        int pos[2 * D], width = 0;
        for (int i = 0; i < PIECES && !rows_cut && forms[f].piece[i].step; i++) {
            int from = forms[f].piece[i].from, to = forms[f].piece[i].to;
            int step = forms[f].piece[i].step;
            for (int v = from; step > 0 ? v < to : v >= 0; v += step)
                pos[width++] = (forms[f].piece[i].neg ? -1 : 1) *
                               (v + 1 + (forms[f].piece[i].other ? 100 : 0));
        }
        if (rows_cut) {
            static const int rot[8] = {-5, -6, -7, -8, 1, 2, 3, 4};
            memcpy(pos, rot, sizeof rot);
            width = 8;
            zd[2] = S - 1;
        }
        zd[axis] = width;
        Onnx__GraphProto *g = ob_graph("slices");
        Onnx__ModelProto *m = ob_model(g);
        ob_input(g, ob_vi("x", ob_tensor_type(F32, 4, xd, NULL)));
        ob_output(g, ob_vi("z", ob_tensor_type(F32, 4, zd, NULL)));
        f32_init(g, "half", 0, NULL, (const float[]){0.5f}, 1);
#define NODE(op, out, ...)                                                                         \
    ob_node(g, op, out, (const char *[]){__VA_ARGS__, NULL}, (const char *[]){out, NULL})
        NODE("Mul", "a", "x", "half");
        NODE("Mul", "b", "x", "half");
        const char *parts[PIECES] = {NULL};
        int count = 0;
        for (int i = 0; i < PIECES; i++) {
            char name[8], bounds[4][16];
            if (rows_cut ? i == 2 : !forms[f].piece[i].step) break;
            int64_t v[4][2];
            int k = rows_cut ? 2 : 1;
            if (rows_cut) { /* columns 4:8 of rows 0:S-1, then 0:4 of 1:S */
                v[0][0] = i ? 0 : 4, v[0][1] = i ? 1 : 0;
                v[1][0] = i ? 4 : 8, v[1][1] = i ? S : S - 1;
                v[2][0] = 3, v[2][1] = 2;
                v[3][0] = 1, v[3][1] = 1;
            } else {
                v[0][0] = forms[f].piece[i].from, v[1][0] = forms[f].piece[i].to;
                if (v[1][0] == INT_MIN) v[1][0] = -100;
                v[2][0] = axis, v[3][0] = forms[f].piece[i].step;
            }
            for (int j = 0; j < 4; j++) {
                snprintf(bounds[j], sizeof bounds[j], "p%d_%d", i, j);
                i64_init(g, bounds[j], k, v[j]);
            }
            snprintf(name, sizeof name, "s%d", i);
            NODE("Slice", name, !rows_cut && forms[f].piece[i].other ? "b" : "a", bounds[0],
                 bounds[1], bounds[2], bounds[3]);
            char *kept = ob_str(name);
            if (rows_cut ? i == 0 : forms[f].piece[i].neg) {
                snprintf(name, sizeof name, "n%d", i);
                NODE("Neg", name, kept);
                kept = ob_str(name);
            }
            parts[count++] = kept;
        }
        Onnx__NodeProto *cat =
            ob_node(g, "Concat", "z",
                    (const char *[]){parts[0], parts[1], count > 2 ? parts[2] : NULL, NULL},
                    (const char *[]){"z", NULL});
        ob_attr_i(cat, "axis", axis == 3 ? -1 : axis);
#undef NODE
        lm_binary *bin;
        CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, NULL));
        lm_replay *rp;
        CHECK_OK(replay_profiled(bin, x, sizeof x, &rp));
        size_t n = (size_t)(zd[0] * zd[1] * zd[2] * zd[3]);
        CHECK_OK(lm_replay_get_output(rp, "z", z, n * sizeof *z));
        int wrong = 0;
        for (size_t i = 0; i < n; i++) {
            int64_t at[4], rest = (int64_t)i;
            for (int d = 3; d >= 0; d--) {
                at[d] = rest % zd[d];
                rest /= zd[d];
            }
            int from = pos[at[axis]];
            bool negated = from < 0;
            from = abs(from) % 100 - 1;
            at[axis] = from;
            if (rows_cut && !negated) at[2]++;
            float want = 0.5f * x[((at[0] * H + at[1]) * S + at[2]) * D + at[3]];
            wrong += z[i] != (negated ? -want : want);
        }
        CHECK(wrong == 0);
        CHECK(program_launches(rp, "matmul_reader.c") == (kind == PRODUCT ? 1 : 0));
        CHECK((launches_of(rp, "Gather z", NULL) > 0) == (kind == GATHER));
        size_t copies = program_launches(rp, "concat_runs.c") + launches_of(rp, "Slice", NULL) +
                        launches_of(rp, "Neg", NULL);
        CHECK(kind == COPIES ? copies > 0 : copies == 0);
        lm_replay_close(rp);
        lm_binary_free(bin);
    }
}

/* Grouped-query attention as LLaMA exports it: each of KV key and value
 * heads repeated for G query heads (Unsqueeze, Expand, Reshape: HF's
 * repeat_kv) before the products, the keys then transposed. The products
 * broadcast the unrepeated heads instead: no Expand runs, the heads join in
 * one attn_heads launch, and the result matches float64. With the heads
 * repeated along another axis, or a batch that differs, the graph runs as
 * written, with the same values. */
static void test_grouped_query(void) {
    enum { B = 2, S = 5, H = 4, KV = 2, G = H / KV, D = 8, C = (H + 2 * KV) * D };
    static float x[B * S * C], got[B * S * H * D];
    for (int i = 0; i < B * S * C; i++)
        x[i] = (float)((i * 23) % 47 - 23) * 0.0625f;
    for (int form = 0; form < 2; form++) {
        int64_t xd[3] = {B, S, C}, od[3] = {B, S, H * D};
        Onnx__GraphProto *g = ob_graph("gqa");
        Onnx__ModelProto *m = ob_model(g);
        ob_input(g, ob_vi("x", ob_tensor_type(F32, 3, xd, NULL)));
        ob_output(g, ob_vi("out", ob_tensor_type(F32, 3, od, NULL)));
        i64_init(g, "last", 1, (const int64_t[]){-1});
        i64_init(g, "q_from", 1, (const int64_t[]){0});
        i64_init(g, "k_from", 1, (const int64_t[]){H * D});
        i64_init(g, "v_from", 1, (const int64_t[]){(H + KV) * D});
        i64_init(g, "v_to", 1, (const int64_t[]){C});
        i64_init(g, "q_heads", 4, (const int64_t[]){B, S, H, D});
        i64_init(g, "kv_heads", 4, (const int64_t[]){B, S, KV, D});
        /* Form 1 repeats along a new axis 3 ([B, KV, S, G, D]): a different
         * order of the heads' rows, which the product cannot broadcast. */
        i64_init(g, "axis", 1, (const int64_t[]){form ? 3 : 2});
        i64_init(g, "expanded", 5,
                 form ? (const int64_t[]){B, KV, S, G, D} : (const int64_t[]){B, KV, G, S, D});
        i64_init(g, "repeated", 4, (const int64_t[]){B, H, S, D});
        i64_init(g, "joined", 3, od);
        f32_init(g, "scale", 0, NULL, (const float[]){0.125f}, 1);
#define NODE(op, out, ...)                                                                         \
    ob_node(g, op, out, (const char *[]){__VA_ARGS__, NULL}, (const char *[]){out, NULL})
        NODE("Slice", "q2", "x", "q_from", "k_from", "last");
        NODE("Slice", "k2", "x", "k_from", "v_from", "last");
        NODE("Slice", "v2", "x", "v_from", "v_to", "last");
        NODE("Reshape", "q3", "q2", "q_heads");
        NODE("Reshape", "k3", "k2", "kv_heads");
        NODE("Reshape", "v3", "v2", "kv_heads");
        const int64_t heads[4] = {0, 2, 1, 3};
        ob_attr_is(NODE("Transpose", "q", "q3"), "perm", heads, 4);
        ob_attr_is(NODE("Transpose", "k", "k3"), "perm", heads, 4);
        ob_attr_is(NODE("Transpose", "v", "v3"), "perm", heads, 4);
        NODE("Unsqueeze", "k5", "k", "axis");
        NODE("Expand", "kx", "k5", "expanded");
        NODE("Reshape", "kr", "kx", "repeated");
        NODE("Unsqueeze", "v5", "v", "axis");
        NODE("Expand", "vx", "v5", "expanded");
        NODE("Reshape", "vr", "vx", "repeated");
        ob_attr_is(NODE("Transpose", "kt", "kr"), "perm", (const int64_t[]){0, 1, 3, 2}, 4);
        NODE("MatMul", "scores", "q", "kt");
        NODE("Mul", "probs", "scores", "scale");
        NODE("MatMul", "o", "probs", "vr");
        ob_attr_is(NODE("Transpose", "ot", "o"), "perm", heads, 4);
        NODE("Reshape", "out", "ot", "joined");
#undef NODE
        lm_binary *bin;
        CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, NULL));
        lm_replay *rp;
        CHECK_OK(replay_profiled(bin, x, sizeof x, &rp));
        CHECK_OK(lm_replay_get_output(rp, "out", got, sizeof got));
        if (form == 0) {
            CHECK(launches_of(rp, "Expand", NULL) == 0);
            CHECK(launches_of(rp, "Reshape kr", NULL) + launches_of(rp, "Reshape vr", NULL) == 0);
            /* The join: one launch, attn_heads.c's. */
            CHECK(launches_of(rp, "Reshape out", NULL) == 1);
            CHECK(launches_of(rp, "Reshape out", "attn_heads.c") == 1);
        } else {
            CHECK(launches_of(rp, "Expand", NULL) > 0);
        }
        lm_replay_close(rp);
        lm_binary_free(bin);
        /* Head h reads key/value head h / G (form 0) or h % KV (form 1). */
        double worst = 0;
        for (int b = 0; b < B; b++)
            for (int h = 0; h < H; h++) {
                int kv = form ? -1 : h / G;
                for (int i = 0; i < S; i++)
                    for (int d = 0; d < D; d++) {
                        double want = 0;
                        for (int j = 0; j < S; j++) {
                            /* Form 1's repeated [B, KV, S, G, D] read as
                             * [B, H, S, D]: row r of head h is row
                             * (h * S + r) / G of key head (h * S + r) / (S * G)... */
                            int kh = kv, kj = j;
                            if (form) {
                                int flat = h * S + j; /* row in [B, KV*S*G] order */
                                kh = flat / (S * G);
                                kj = flat % (S * G) / G;
                            }
                            double score = 0;
                            for (int e = 0; e < D; e++)
                                score += (double)x[(b * S + i) * C + h * D + e] *
                                         x[(b * S + kj) * C + (H + kh) * D + e];
                            want += score * 0.125 * x[(b * S + kj) * C + (H + KV + kh) * D + d];
                        }
                        double err =
                            fabs(got[(b * S + i) * H * D + h * D + d] - want) / (1 + fabs(want));
                        worst = err > worst ? err : worst;
                    }
            }
        CHECK(worst < 1e-5);
    }
}

/* A Gather with constant indices that are one run (a decoder's layer picked
 * from a stacked cache: a scalar, negative too, or several in a row) is a
 * slice, one copy of whole tiles, from a graph input and from a value in
 * tiles; indices out of order stay an index select, which untilizes
 * first. All exact. */
static void test_gather_run(void) {
    enum { L = 3, B = 4, S = 5, D = 8 };
    static float x[L * B * S * D], z[L * B * S * D];
    for (int i = 0; i < L * B * S * D; i++)
        x[i] = (float)((i * 31) % 67 - 33) * 0.25f;
    static const struct {
        int axis, count, idx[2]; /* count 0: a scalar index */
        bool run;
    } forms[] = {
        {0, 0, {1, 0}, true},   {0, 0, {-1, 0}, true}, {1, 2, {1, 2}, true},
        {1, 2, {-2, -1}, true}, {1, 2, {2, 0}, false},
    };
    for (size_t f = 0; f < sizeof forms / sizeof forms[0]; f++)
        for (int tiles = 0; tiles < 2; tiles++) {
            int axis = forms[f].axis, count = forms[f].count, picked = count ? count : 1;
            int64_t xd[4] = {L, B, S, D}, zd[4], id[1] = {count};
            int zr = 0;
            for (int d = 0; d < 4; d++)
                if (d != axis)
                    zd[zr++] = xd[d];
                else if (count)
                    zd[zr++] = count;
            Onnx__GraphProto *g = ob_graph("gather");
            Onnx__ModelProto *m = ob_model(g);
            ob_input(g, ob_vi("x", ob_tensor_type(F32, 4, xd, NULL)));
            ob_output(g, ob_vi("z", ob_tensor_type(F32, zr, zd, NULL)));
            const int64_t idx[2] = {forms[f].idx[0], forms[f].idx[1]};
            Onnx__TensorProto *it = ob_tensor("idx", I64, count ? 1 : 0, id);
            ob_raw(it, idx, (size_t)picked * sizeof *idx);
            ob_init(g, it);
            f32_init(g, "one", 0, NULL, (const float[]){1}, 1);
            ob_node(g, "Mul", "t", (const char *[]){"x", "one", NULL}, (const char *[]){"t", NULL});
            ob_attr_i(ob_node(g, "Gather", "z", (const char *[]){tiles ? "t" : "x", "idx", NULL},
                              (const char *[]){"z", NULL}),
                      "axis", axis);
            lm_binary *bin;
            CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, NULL));
            lm_replay *rp;
            CHECK_OK(replay_profiled(bin, x, sizeof x, &rp));
            size_t n = (size_t)(L * B * S * D / xd[axis] * picked);
            CHECK_OK(lm_replay_get_output(rp, "z", z, n * sizeof *z));
            int wrong = 0;
            for (size_t i = 0; i < n; i++) {
                /* z's element i: (outer, j, inner) over the picked axis. */
                size_t inner = axis ? S * D : B * S * D;
                size_t o = i / (inner * (size_t)picked), j = i / inner % (size_t)picked;
                int v = forms[f].idx[j] < 0 ? forms[f].idx[j] + (int)xd[axis] : forms[f].idx[j];
                wrong += z[i] != x[(o * (size_t)xd[axis] + (size_t)v) * inner + i % inner];
            }
            CHECK(wrong == 0);
            /* One copy of whole tiles; an index select untilizes first (the
             * output's own untilize aside). */
            CHECK(program_launches(rp, "data_rows.c") == 1);
            CHECK(program_launches(rp, "untilize_writer.c") == (forms[f].run ? 1 : 2));
            lm_replay_close(rp);
            lm_binary_free(bin);
        }
}

/* Attention's scores scaled by a constant (Div by sqrt(d) as BERT and GPT-2
 * export it, or a Mul by its inverse, the constant on either side) are
 * scaled by the product as it stores them: the Div or Mul is fused, no
 * element-wise program runs, and the values match float64. A constant
 * divided by the scores stays a Div of its own. So is the scale after a
 * Reshape or Flatten of the scores (a grouped-query attention's view of its
 * broadcast product), unless the reshaped scores are also a graph output. */
static void test_scale_fused(void) {
    enum { B = 2, S = 5, D = 8 };
    static float x[B * S * D], got[B * S * S];
    for (int i = 0; i < B * S * D; i++)
        x[i] = (float)((i * 19) % 43 - 21) * 0.125f;
    static const struct {
        const char *op;
        bool const_first, fused;
        float c;
        const char *via; /* a shape-only node between the product and the scale */
        bool via_out;    /* its result also a graph output */
    } forms[] = {
        {"Div", false, true, 2.8284271f, NULL, false},
        {"Mul", false, true, 0.35355339f, NULL, false},
        {"Mul", true, true, -0.5f, NULL, false},
        {"Div", true, false, 3.0f, NULL, false},
        {"Div", false, true, 4.0f, "Reshape", false},
        {"Mul", true, true, 0.25f, "Flatten", false},
        {"Div", false, false, 4.0f, "Reshape", true},
    };
    for (size_t f = 0; f < sizeof forms / sizeof forms[0]; f++) {
        int64_t xd[3] = {B, S, D}, sd[3] = {B, S, S}, rd[2] = {B * S, S}, fd[2] = {B, S * S};
        const char *via = forms[f].via;
        bool flat = via && !strcmp(via, "Flatten");
        Onnx__GraphProto *g = ob_graph("scaled");
        Onnx__ModelProto *m = ob_model(g);
        ob_input(g, ob_vi("x", ob_tensor_type(F32, 3, xd, NULL)));
        ob_output(g, ob_vi("z", via ? ob_tensor_type(F32, 2, flat ? fd : rd, NULL)
                                    : ob_tensor_type(F32, 3, sd, NULL)));
        if (forms[f].via_out) ob_output(g, ob_vi("v", ob_tensor_type(F32, 2, rd, NULL)));
        f32_init(g, "c", 0, NULL, &forms[f].c, 1);
        ob_attr_is(
            ob_node(g, "Transpose", "t", (const char *[]){"x", NULL}, (const char *[]){"xt", NULL}),
            "perm", (const int64_t[]){0, 2, 1}, 3);
        ob_node(g, "MatMul", "mm", (const char *[]){"x", "xt", NULL}, (const char *[]){"s", NULL});
        if (via && flat) {
            ob_node(g, via, "view", (const char *[]){"s", NULL}, (const char *[]){"v", NULL});
        } else if (via) {
            i64_init(g, "rd", 2, rd);
            ob_node(g, via, "view", (const char *[]){"s", "rd", NULL}, (const char *[]){"v", NULL});
        }
        const char *in = via ? "v" : "s";
        ob_node(g, forms[f].op, "scale",
                forms[f].const_first ? (const char *[]){"c", in, NULL}
                                     : (const char *[]){in, "c", NULL},
                (const char *[]){"z", NULL});
        lm_binary *bin;
        lmfe_report rep;
        CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, &rep));
        CHECK((placement_of(&rep, forms[f].op) == LMFE_FUSED) == forms[f].fused);
        lm_replay *rp;
        CHECK_OK(replay_profiled(bin, x, sizeof x, &rp));
        CHECK_OK(lm_replay_get_output(rp, "z", got, sizeof got));
        CHECK((program_launches(rp, "binary_compute.c") + program_launches(rp, "unary_compute.c") ==
               0) == forms[f].fused);
        lm_replay_close(rp);
        lmfe_report_free(&rep);
        lm_binary_free(bin);
        double worst = 0;
        for (int b = 0; b < B; b++)
            for (int i = 0; i < S; i++)
                for (int j = 0; j < S; j++) {
                    double dot = 0;
                    for (int e = 0; e < D; e++)
                        dot += (double)x[(b * S + i) * D + e] * x[(b * S + j) * D + e];
                    double want = !strcmp(forms[f].op, "Mul") ? dot * forms[f].c
                                  : forms[f].const_first      ? forms[f].c / dot
                                                              : dot / forms[f].c;
                    double err = fabs(got[(b * S + i) * S + j] - want) / (1 + fabs(want));
                    worst = err > worst ? err : worst;
                }
        CHECK(worst < 1e-6);
    }
}

/* Index and mask tensors built from constants alone (a shifted-window
 * attention's mask: ScatterND into zeros, then Expand) fold on the host, with
 * each reduction applied in index order to a row two tuples hit (one by a
 * negative index); a constant index outside its dim is an error naming the
 * tuple; an Expand past the fold limit stays a broadcast on the device. */
static void test_constant_masks(void) {
    static const char *const reds[] = {"none", "add", "mul", "max", "min"};
    float d[12], u[8], x[24], y[24];
    for (int i = 0; i < 12; i++)
        d[i] = (float)(i - 6) * 0.5f;
    for (int i = 0; i < 8; i++)
        u[i] = (float)((i * 5) % 8) - 3.5f;
    for (int i = 0; i < 24; i++)
        x[i] = (float)i * 0.125f;
    for (int r = 0; r < 5; r++) {
        int64_t dd[2] = {3, 4}, id[2] = {2, 1}, ud[2] = {2, 4}, xd[3] = {2, 3, 4};
        int64_t rows[2] = {2, -1};
        Onnx__GraphProto *g = ob_graph("masks");
        Onnx__ModelProto *m = ob_model(g);
        m->opset_import[0]->version = 18;
        ob_input(g, ob_vi("x", ob_tensor_type(F32, 3, xd, NULL)));
        ob_output(g, ob_vi("y", ob_tensor_type(F32, 3, xd, NULL)));
        f32_init(g, "d", 2, dd, d, 12);
        Onnx__TensorProto *it = ob_tensor("i", I64, 2, id);
        ob_raw(it, rows, sizeof rows);
        ob_init(g, it);
        f32_init(g, "u", 2, ud, u, 8);
        i64_init(g, "shape", 3, xd);
        Onnx__NodeProto *put = ob_node(g, "ScatterND", "put", (const char *[]){"d", "i", "u", NULL},
                                       (const char *[]){"s", NULL});
        ob_attr_s(put, "reduction", reds[r]);
        ob_node(g, "Expand", "wide", (const char *[]){"s", "shape", NULL},
                (const char *[]){"e", NULL});
        ob_node(g, "Add", "sum", (const char *[]){"x", "e", NULL}, (const char *[]){"y", NULL});
        lm_binary *bin;
        lmfe_report rep;
        CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, &rep));
        /* Folded, and then no longer needed: the Add reads Expand's value. */
        CHECK(placement_of(&rep, "ScatterND") == LMFE_REMOVED);
        CHECK(placement_of(&rep, "Expand") == LMFE_FOLDED);
        CHECK_OK(replay1(bin, "x", x, 24, "y", y, 24, NULL));
        for (int i = 0; i < 24; i++) {
            int k = i % 12, col = k % 4;
            float a = d[k], b0 = u[col], b1 = u[4 + col], want = a;
            if (k / 4 == 2)
                want = r == 0   ? b1
                       : r == 1 ? a + b0 + b1
                       : r == 2 ? a * b0 * b1
                       : r == 3 ? fmaxf(a, fmaxf(b0, b1))
                                : fminf(a, fminf(b0, b1));
            CHECK(fabsf(y[i] - (x[i] + want)) <= 1e-6f);
        }
        lmfe_report_free(&rep);
        lm_binary_free(bin);
        if (r) continue;
        rows[0] = 3;
        ob_raw(it, rows, sizeof rows);
        CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                    "node 'put' (ScatterND): index tuple 0: entry 0 is 3, outside dim 0 of size "
                    "3");
    }
    /* 1024 x 1025 elements: past 2^20, the broadcast runs on the device. */
    int64_t xd[2] = {1, 1025}, yd[2] = {1024, 1025}, one = 1;
    float c = 0.5f;
    Onnx__GraphProto *g = ob_graph("wide");
    Onnx__ModelProto *m = ob_model(g);
    ob_input(g, ob_vi("x", ob_tensor_type(F32, 2, xd, NULL)));
    ob_output(g, ob_vi("y", ob_tensor_type(F32, 2, yd, NULL)));
    f32_init(g, "c", 1, &one, &c, 1);
    i64_init(g, "shape", 2, yd);
    ob_node(g, "Expand", "wide", (const char *[]){"c", "shape", NULL}, (const char *[]){"e", NULL});
    ob_node(g, "Add", "sum", (const char *[]){"x", "e", NULL}, (const char *[]){"y", NULL});
    lm_binary *bin;
    lmfe_report rep;
    CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, &rep));
    CHECK(placement_of(&rep, "Expand") == LMFE_ON_DEVICE);
    CHECK(rep.weight_bytes < 64 * 1024);
    float *xs = calloc(1025, sizeof *xs), *ys = malloc(1024 * 1025 * sizeof *ys);
    CHECK(xs && ys);
    for (int i = 0; i < 1025; i++)
        xs[i] = (float)i;
    CHECK_OK(replay1(bin, "x", xs, 1025, "y", ys, 1024 * 1025, NULL));
    CHECK(ys[0] == 0.5f && ys[1024 * 1025 - 1] == 1024.5f);
    free(xs), free(ys);
    lmfe_report_free(&rep);
    lm_binary_free(bin);
}

/* QuantizeLinear's scale and zero point must fit x. */
static void test_quant_refusals(void) {
    int64_t xd[2] = {2, 3}, four = 4;
    Onnx__GraphProto *g = ob_graph("q");
    Onnx__ModelProto *m = ob_model(g);
    ob_input(g, ob_vi("x", ob_tensor_type(F32, 2, xd, NULL)));
    ob_input(g, ob_vi("s", ob_tensor_type(F32, 1, &four, NULL)));
    ob_output(g, ob_vi("y", ob_tensor_type(2 /* uint8 */, 2, xd, NULL)));
    ob_node(g, "QuantizeLinear", "q", (const char *[]){"x", "s", NULL},
            (const char *[]){"y", NULL});
    lm_binary *bin;
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'q' (QuantizeLinear): the scale has 4 values for dim 1 of 3");
    g->input[1] = ob_vi("s", ob_tensor_type(F32, 2, xd, NULL));
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "the scale must be a scalar or 1-D");
    int64_t three = 3;
    g->input[1] = ob_vi("s", ob_tensor_type(F32, 1, &three, NULL));
    CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, NULL));
    lm_binary_free(bin);
}

/* DFT's, STFT's and MelWeightMatrix's attributes and constant inputs, each
 * wrong in its own way. */
static void test_spectral_refusals(void) {
    int64_t xd[3] = {1, 8, 1}, yd[3] = {1, 8, 2};
    Onnx__GraphProto *g = ob_graph("f");
    Onnx__ModelProto *m = ob_model(g);
    m->opset_import[0]->version = 17;
    ob_input(g, ob_vi("x", ob_tensor_type(F32, 3, xd, NULL)));
    ob_output(g, ob_vi("y", ob_tensor_type(F32, 3, yd, NULL)));
    Onnx__NodeProto *n =
        ob_node(g, "DFT", "fft", (const char *[]){"x", NULL}, (const char *[]){"y", NULL});
    lm_binary *bin;
    CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, NULL));
    lm_binary_free(bin);
    Onnx__AttributeProto *a = ob_attr_i(n, "axis", -1);
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'fft' (DFT): axis -1 is the real/imaginary dim, not a signal dim");
    a->name = ob_str("onesided");
    a->i = 1;
    xd[2] = 2;
    g->input[0] = ob_vi("x", ob_tensor_type(F32, 3, xd, NULL));
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "onesided=1 needs a real input (last dim 1)");
    n->n_attribute = 0;
    xd[2] = 3;
    g->input[0] = ob_vi("x", ob_tensor_type(F32, 3, xd, NULL));
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "the last dim of input 0 is 3: 1 (real) or 2 (complex)");
    xd[2] = 1;
    g->input[0] = ob_vi("x", ob_tensor_type(F32, 3, xd, NULL));
    int64_t zero = 0;
    Onnx__TensorProto *len = ob_tensor("len", I64, 0, NULL);
    ob_raw(len, &zero, sizeof zero);
    ob_init(g, len);
    n->input[n->n_input++] = ob_str("len");
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_UNSUPPORTED,
                "dft_length 0 (from 1 to 16384)");
    /* A length only the run would know decides the output's shape. */
    n->input[1] = ob_str("len_in");
    ob_input(g, ob_vi("len_in", ob_tensor_type(I64, 0, NULL, NULL)));
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_UNSUPPORTED,
                "input 1 ('len_in') decides the output shape");
    g->n_input = 1;

    /* STFT over the same 8 samples. */
    int64_t step = 2, twenty = 20, sd[4] = {1, 3, 5, 2};
    Onnx__TensorProto *st = ob_tensor("step", I64, 0, NULL);
    ob_raw(st, &step, sizeof step);
    ob_init(g, st);
    Onnx__TensorProto *fl = ob_tensor("flen", I64, 0, NULL);
    ob_raw(fl, &twenty, sizeof twenty);
    ob_init(g, fl);
    g->output[0] = ob_vi("y", ob_tensor_type(F32, 4, sd, NULL));
    n->op_type = ob_str("STFT");
    n->input[1] = ob_str("step");
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'fft' (STFT): needs a window or a frame_length");
    n->input[n->n_input++] = ob_str("");
    n->input[n->n_input++] = ob_str("flen");
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "frame length 20 is longer than the signal (8 samples)");
    float win[3] = {1, 2, 1};
    int64_t three = 3;
    Onnx__TensorProto *w = ob_tensor("win", F32, 1, &three);
    ob_raw(w, win, sizeof win);
    ob_init(g, w);
    n->input[2] = ob_str("win");
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "frame_length 20 differs from the window's length 3");
    n->n_input = 3;
    step = 0;
    ob_raw(st, &step, sizeof step);
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_UNSUPPORTED,
                "frame_step 0 (from 1 to 2147483647)");
    step = 2;
    ob_raw(st, &step, sizeof step);
    sd[2] = 2;
    g->output[0] = ob_vi("y", ob_tensor_type(F32, 4, sd, NULL));
    CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, NULL));
    lm_binary_free(bin);

    /* MelWeightMatrix with its edges the wrong way round. */
    int64_t mels = 4, md[2] = {5, 4};
    float lo = 4000, hi = 300;
    Onnx__TensorProto *nm = ob_tensor("nm", I64, 0, NULL), *sr = ob_tensor("sr", I64, 0, NULL);
    Onnx__TensorProto *lo_t = ob_tensor("lo", F32, 0, NULL), *hi_t = ob_tensor("hi", F32, 0, NULL);
    int64_t rate = 16000, dft = 8;
    ob_raw(nm, &mels, sizeof mels);
    ob_raw(sr, &rate, sizeof rate);
    ob_raw(lo_t, &lo, sizeof lo);
    ob_raw(hi_t, &hi, sizeof hi);
    ob_raw(len, &dft, sizeof dft);
    ob_init(g, nm);
    ob_init(g, sr);
    ob_init(g, lo_t);
    ob_init(g, hi_t);
    g->n_node = 0;
    g->n_input = 0;
    g->output[0] = ob_vi("y", ob_tensor_type(F32, 2, md, NULL));
    ob_node(g, "MelWeightMatrix", "mel", (const char *[]){"nm", "len", "sr", "lo", "hi", NULL},
            (const char *[]){"y", NULL});
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'mel' (MelWeightMatrix): edges 4000 and 300 Hz: 0 <= lower < upper <= "
                "sample_rate / 2 (8000)");
}

/* GridSample's attributes and shapes, each wrong in its own way. */
static void test_gridsample_refusals(void) {
    int64_t xd[5] = {1, 2, 4, 5, 3}, gd[4] = {1, 3, 3, 2}, yd[4] = {1, 2, 3, 3};
    Onnx__GraphProto *g = ob_graph("gs");
    Onnx__ModelProto *m = ob_model(g);
    m->opset_import[0]->version = 16;
    ob_input(g, ob_vi("x", ob_tensor_type(F32, 4, xd, NULL)));
    ob_input(g, ob_vi("grid", ob_tensor_type(F32, 4, gd, NULL)));
    ob_output(g, ob_vi("y", ob_tensor_type(F32, 4, yd, NULL)));
    Onnx__NodeProto *n = ob_node(g, "GridSample", "warp", (const char *[]){"x", "grid", NULL},
                                 (const char *[]){"y", NULL});
    lm_binary *bin;
    CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, NULL));
    lm_binary_free(bin);
    Onnx__AttributeProto *a = ob_attr_s(n, "mode", "linear");
    /* Opset 20's name is not opset 16's. */
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'warp' (GridSample): attribute mode=linear is not valid");
    m->opset_import[0]->version = 20;
    CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, NULL));
    lm_binary_free(bin);
    a->name = ob_str("padding_mode");
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "attribute padding_mode=linear is not valid");
    n->n_attribute = 0;
    gd[3] = 3;
    g->input[1] = ob_vi("grid", ob_tensor_type(F32, 4, gd, NULL));
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "grid must be [N, H_out, W_out, 2] with N = 1");
    /* RoiAlign over the same image. */
    int64_t rd[2] = {3, 4}, bd = 3, od[4] = {3, 2, 2, 2};
    g->input[0] = ob_vi("x", ob_tensor_type(F32, 4, xd, NULL));
    g->input[1] = ob_vi("rois", ob_tensor_type(F32, 2, rd, NULL));
    ob_input(g, ob_vi("b", ob_tensor_type(I64, 1, &bd, NULL)));
    g->output[0] = ob_vi("y", ob_tensor_type(F32, 4, od, NULL));
    n->op_type = ob_str("RoiAlign");
    n->input[1] = ob_str("rois");
    n->input[n->n_input++] = ob_str("b");
    Onnx__AttributeProto *r = ob_attr_i(n, "sampling_ratio", 2);
    ob_attr_i(n, "output_height", 2);
    ob_attr_i(n, "output_width", 2);
    m->opset_import[0]->version = 16;
    CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, NULL));
    lm_binary_free(bin);
    ob_attr_s(n, "mode", "median");
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'warp' (RoiAlign): attribute mode=median is not valid");
    n->n_attribute--;
    r->i = -1;
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "sampling_ratio=-1 (from 1 to 64)");
    /* The adaptive grid (sampling_ratio 0) multiplies the whole image by
     * every RoI's column weights: bounded, as is the RoI count (2^50 of
     * them would overflow the samples' count). */
    r->i = 0;
    int64_t big[4] = {1, 2048, 4096, 5}, rbig[2] = {16, 4}, obig[4] = {16, 2048, 2, 2};
    g->input[0] = ob_vi("x", ob_tensor_type(F32, 4, big, NULL));
    g->input[1] = ob_vi("rois", ob_tensor_type(F32, 2, rbig, NULL));
    g->input[2] = ob_vi("b", ob_tensor_type(I64, 1, rbig, NULL));
    g->output[0] = ob_vi("y", ob_tensor_type(F32, 4, obig, NULL));
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_UNSUPPORTED,
                "node 'warp' (RoiAlign): sampling_ratio=0 makes a product of 16 RoIs x "
                "[8388608, 32] (the image's N * C * H rows by output_width in whole tiles): more "
                "than 2^26 elements; give sampling_ratio > 0");
    g->input[0] = ob_vi("x", ob_tensor_type(F32, 4, xd, NULL));
    rbig[0] = obig[0] = (int64_t)1 << 50;
    g->input[1] = ob_vi("rois", ob_tensor_type(F32, 2, rbig, NULL));
    g->input[2] = ob_vi("b", ob_tensor_type(I64, 1, rbig, NULL));
    obig[1] = 2;
    g->output[0] = ob_vi("y", ob_tensor_type(F32, 4, obig, NULL));
    /* (Refused before RoiAlign's own bounds: no device holds the RoIs.) */
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_UNSUPPORTED,
                "graph input 'rois' float[1125899906842624, 4] would take 16777216.0 GiB, more "
                "than the device's 12.0 GiB of DRAM");
    r->i = 64;
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_UNSUPPORTED,
                "graph input 'rois' float[1125899906842624, 4] would take 16777216.0 GiB");
    g->input[1] = ob_vi("rois", ob_tensor_type(F32, 2, rd, NULL));
    g->input[2] = ob_vi("b", ob_tensor_type(I64, 1, &bd, NULL));
    g->output[0] = ob_vi("y", ob_tensor_type(F32, 4, od, NULL));
    r->i = 2;
    bd = 2;
    g->input[2] = ob_vi("b", ob_tensor_type(I64, 1, &bd, NULL));
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "batch_indices must be 3 integers (one per RoI)");
    rd[1] = 5;
    g->input[1] = ob_vi("rois", ob_tensor_type(F32, 2, rd, NULL));
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "rois must be (num_rois, 4)");
    /* Back to GridSample: a 5-D input needs a 5-D grid; cubic is 4-D only. */
    n->op_type = ob_str("GridSample");
    n->input[1] = ob_str("grid");
    n->n_input = 2;
    n->n_attribute = 0;
    g->n_input = 2;
    g->input[1] = ob_vi("grid", ob_tensor_type(F32, 4, gd, NULL));
    g->output[0] = ob_vi("y", ob_tensor_type(F32, 4, yd, NULL));
    m->opset_import[0]->version = 20;
    g->input[0] = ob_vi("x", ob_tensor_type(F32, 5, xd, NULL));
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "grid must be [N, D_out, H_out, W_out, 3] with N = 1");
    g->input[0] = ob_vi("x", ob_tensor_type(F32, 3, xd, NULL));
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_UNSUPPORTED,
                "X has 3 dims: only 4-D (N, C, H, W) and 5-D (N, C, D, H, W) inputs are "
                "supported");
}

/* MaxPool's Indices: storage_order must be 0 or 1. */
static void test_maxpool_indices_refusals(void) {
    int64_t xd[4] = {1, 2, 4, 4}, yd[4] = {1, 2, 2, 2};
    Onnx__GraphProto *g = ob_graph("p");
    Onnx__ModelProto *m = ob_model(g);
    m->opset_import[0]->version = 12;
    ob_input(g, ob_vi("x", ob_tensor_type(F32, 4, xd, NULL)));
    ob_output(g, ob_vi("y", ob_tensor_type(F32, 4, yd, NULL)));
    ob_output(g, ob_vi("i", ob_tensor_type(I64, 4, yd, NULL)));
    Onnx__NodeProto *n = ob_node(g, "MaxPool", "pool", (const char *[]){"x", NULL},
                                 (const char *[]){"y", "i", NULL});
    Onnx__AttributeProto *k =
        ob_attr(n, "kernel_shape", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
    k->ints = ob_alloc(2 * sizeof *k->ints);
    k->ints[0] = k->ints[1] = 2;
    k->n_ints = 2;
    Onnx__AttributeProto *s = ob_attr(n, "strides", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
    s->ints = k->ints;
    s->n_ints = 2;
    lm_binary *bin;
    CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, NULL));
    lm_binary_free(bin);
    ob_attr_i(n, "storage_order", 2);
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'pool' (MaxPool): attribute storage_order=2 is not 0 or 1");
}

/* Det wants square matrices of at most 64 x 64. */
static void test_det_refusals(void) {
    int64_t xd[3] = {2, 3, 4}, yd = 2;
    Onnx__GraphProto *g = ob_graph("d");
    Onnx__ModelProto *m = ob_model(g);
    ob_input(g, ob_vi("x", ob_tensor_type(F32, 3, xd, NULL)));
    ob_output(g, ob_vi("y", ob_tensor_type(F32, 1, &yd, NULL)));
    ob_node(g, "Det", "det", (const char *[]){"x", NULL}, (const char *[]){"y", NULL});
    lm_binary *bin;
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'det' (Det): X must be [*, M, M] (square matrices)");
    xd[1] = xd[2] = 65;
    g->input[0] = ob_vi("x", ob_tensor_type(F32, 3, xd, NULL));
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_UNSUPPORTED,
                "matrices of 65 x 65 (at most 64 x 64)");
    xd[1] = xd[2] = 3;
    g->input[0] = ob_vi("x", ob_tensor_type(F32, 3, xd, NULL));
    CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, NULL));
    lm_binary_free(bin);
}

/* Compress's condition: 1-D, no longer than what it selects from. */
static void test_compress_refusals(void) {
    int64_t xd[2] = {3, 2}, cd = 4, yd[2] = {2, 2};
    Onnx__GraphProto *g = ob_graph("c");
    Onnx__ModelProto *m = ob_model(g);
    m->opset_import[0]->version = 11;
    ob_input(g, ob_vi("x", ob_tensor_type(F32, 2, xd, NULL)));
    ob_output(g, ob_vi("y", ob_tensor_type(F32, 2, yd, NULL)));
    uint8_t keep[6] = {1, 0, 1, 0, 0, 0};
    Onnx__TensorProto *c = ob_tensor("cond", ONNX__TENSOR_PROTO__DATA_TYPE__BOOL, 1, &cd);
    ob_raw(c, keep, 4);
    ob_init(g, c);
    Onnx__NodeProto *n = ob_node(g, "Compress", "pick", (const char *[]){"x", "cond", NULL},
                                 (const char *[]){"y", NULL});
    ob_attr_i(n, "axis", 0);
    lm_binary *bin;
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'pick' (Compress): condition has 4 entries but the axis has 3");
    int64_t c2[2] = {3, 2};
    g->initializer[0] = ob_tensor("cond", ONNX__TENSOR_PROTO__DATA_TYPE__BOOL, 2, c2);
    ob_raw(g->initializer[0], keep, 6);
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "condition must be 1-D, given rank 2");
    cd = 3;
    g->initializer[0] = ob_tensor("cond", ONNX__TENSOR_PROTO__DATA_TYPE__BOOL, 1, &cd);
    ob_raw(g->initializer[0], keep, 3);
    CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, NULL));
    lm_binary_free(bin);
}

/* A graph of x float[4, 3] and k int64[3] in, y float[3] out, with int64
 * scalar initializers pos and zero (a [1] zero: Squeeze's axes). */
static Onnx__GraphProto *seq_graph(int64_t pos, Onnx__ModelProto **out_model) {
    static const int64_t xd[2] = {4, 3}, yd[1] = {3}, one = 1, zero = 0;
    Onnx__GraphProto *g = ob_graph("q");
    *out_model = ob_model(g);
    (*out_model)->opset_import[0]->version = 13;
    ob_input(g, ob_vi("x", ob_tensor_type(F32, 2, xd, NULL)));
    ob_input(g, ob_vi("k", ob_tensor_type(I64, 1, yd, NULL)));
    ob_output(g, ob_vi("y", ob_tensor_type(F32, 1, yd, NULL)));
    Onnx__TensorProto *p = ob_tensor("pos", I64, 0, NULL);
    ob_raw(p, &pos, sizeof pos);
    ob_init(g, p);
    Onnx__TensorProto *z = ob_tensor("zero", I64, 1, &one);
    ob_raw(z, &zero, sizeof zero);
    ob_init(g, z);
    return g;
}

/* Sequences: positions within the sequence, one element type, split
 * lengths that cover the axis, ConcatFromSequence's attributes. */
static void test_sequence_refusals(void) {
    Onnx__ModelProto *m;
    lm_binary *bin;
    for (int64_t pos = -5; pos <= 4; pos += 9) {
        Onnx__GraphProto *g = seq_graph(pos, &m);
        ob_node(g, "SplitToSequence", "split", (const char *[]){"x", NULL},
                (const char *[]){"s", NULL});
        ob_node(g, "SequenceAt", "at", (const char *[]){"s", "pos", NULL},
                (const char *[]){"y0", NULL});
        ob_node(g, "Squeeze", "sq", (const char *[]){"y0", "zero", NULL},
                (const char *[]){"y", NULL});
        char want[120];
        snprintf(want, sizeof want,
                 "node 'at' (SequenceAt): position %lld is outside [-4, 3] (the sequence holds 4)",
                 (long long)pos);
        CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE, want);
        if (pos == 4) {
            /* In range it compiles. */
            ob_raw(g->initializer[0], (const int64_t[]){-4}, 8);
            CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, NULL));
            lm_binary_free(bin);
        }
    }
    Onnx__GraphProto *g = seq_graph(0, &m);
    ob_node(g, "SplitToSequence", "split", (const char *[]){"x", NULL},
            (const char *[]){"s", NULL});
    ob_node(g, "SequenceInsert", "ins", (const char *[]){"s", "k", NULL},
            (const char *[]){"s2", NULL});
    ob_node(g, "ConcatFromSequence", "cat", (const char *[]){"s2", NULL},
            (const char *[]){"y", NULL});
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'ins' (SequenceInsert): the tensor is int64, the sequence holds float");
    g = seq_graph(0, &m);
    ob_node(g, "SequenceConstruct", "make", (const char *[]){"x", "k", NULL},
            (const char *[]){"s", NULL});
    ob_node(g, "ConcatFromSequence", "cat", (const char *[]){"s", NULL},
            (const char *[]){"y", NULL});
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'make' (SequenceConstruct): input 1 is int64, input 0 float");
    g = seq_graph(0, &m);
    int64_t two = 2, lens[2] = {1, 2};
    Onnx__TensorProto *sl = ob_tensor("lens", I64, 1, &two);
    ob_raw(sl, lens, sizeof lens);
    ob_init(g, sl);
    ob_node(g, "SplitToSequence", "split", (const char *[]){"x", "lens", NULL},
            (const char *[]){"s", NULL});
    Onnx__NodeProto *cat = ob_node(g, "ConcatFromSequence", "cat", (const char *[]){"s", NULL},
                                   (const char *[]){"y", NULL});
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'split' (SplitToSequence): split adds up to 3, the axis has 4");
    /* Parts whose sum would overflow: refused at the first past the axis. */
    lens[0] = INT64_MAX;
    ob_raw(sl, lens, sizeof lens);
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "split[0] is 9223372036854775807: with the parts before it, more than the "
                "axis' 4");
    lens[0] = 1;
    lens[1] = 3;
    ob_raw(sl, lens, sizeof lens);
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'cat' (ConcatFromSequence): attribute axis is required");
    ob_attr_i(cat, "axis", 0);
    ob_attr_i(cat, "new_axis", 2);
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "new_axis must be 0 or 1, given 2");
    g = seq_graph(0, &m);
    ob_node(g, "SequenceEmpty", "none", (const char *[]){NULL}, (const char *[]){"s", NULL});
    ob_node(g, "SequenceErase", "del", (const char *[]){"s", NULL}, (const char *[]){"s2", NULL});
    ob_node(g, "Identity", "id", (const char *[]){"x", NULL}, (const char *[]){"y", NULL});
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'del' (SequenceErase): the sequence is empty");
}

/* Sequence graph inputs and outputs: each tensor is an input or output of
 * the binary, NAME[i]; the input's length is given when compiling. */
static Onnx__ModelProto *sequence_io_model(bool tensor_output_seq, bool cat_seq) {
    int64_t d2 = 2, d6 = 6;
    Onnx__GraphProto *g = ob_graph("sio");
    Onnx__ModelProto *m = ob_model(g);
    m->opset_import[0]->version = 13;
    ob_input(g, ob_vi("s", ob_sequence_type(ob_tensor_type(F32, 1, &d2, NULL))));
    ob_input(g, ob_vi("t", ob_tensor_type(F32, 1, &d2, NULL)));
    ob_output(g,
              ob_vi("s2", tensor_output_seq ? ob_tensor_type(F32, 1, &d2, NULL)
                                            : ob_sequence_type(ob_tensor_type(F32, 1, &d2, NULL))));
    ob_output(g, ob_vi("cat", cat_seq ? ob_sequence_type(ob_tensor_type(F32, 1, &d6, NULL))
                                      : ob_tensor_type(F32, 1, &d6, NULL)));
    ob_node(g, "SequenceInsert", "ins", (const char *[]){"s", "t", NULL},
            (const char *[]){"s2", NULL});
    Onnx__NodeProto *cat = ob_node(g, "ConcatFromSequence", "cat", (const char *[]){"s2", NULL},
                                   (const char *[]){"cat", NULL});
    ob_attr_i(cat, "axis", 0);
    return m;
}

static void test_sequence_io(void) {
    const char *path = save(sequence_io_model(false, false));
    lm_binary *bin = NULL;
    lmfe_compile_options o;
    lmfe_compile_options_init(&o);
    CHECK_FAILS(lmfe_compile_onnx(path, &o, &bin, NULL), LM_ERR_INVALID_ARGUMENT,
                "graph input 's' is a sequence: give its length with --sequence s=N");
    lmfe_sequence_length len[2] = {{"s", 2}, {"t", 1}};
    o.sequence_lengths = len;
    o.sequence_length_count = 2;
    CHECK_FAILS(lmfe_compile_onnx(path, &o, &bin, NULL), LM_ERR_INVALID_ARGUMENT,
                "sequence length: graph input 't' is a tensor, not a sequence");
    len[1] = (lmfe_sequence_length){"q", 1};
    CHECK_FAILS(lmfe_compile_onnx(path, &o, &bin, NULL), LM_ERR_INVALID_ARGUMENT,
                "sequence length: the model has no input 'q'");
    len[1] = (lmfe_sequence_length){"s", 1};
    CHECK_FAILS(lmfe_compile_onnx(path, &o, &bin, NULL), LM_ERR_INVALID_ARGUMENT,
                "sequence length: 's' is given twice");
    len[0].length = 4097;
    o.sequence_length_count = 1;
    CHECK_FAILS(lmfe_compile_onnx(path, &o, &bin, NULL), LM_ERR_UNSUPPORTED,
                "sequence length: 's' of 4097 tensors (at most 4096)");
    len[0].length = 2;
    CHECK_OK(lmfe_compile_onnx(path, &o, &bin, NULL));
    lm_replay *r;
    CHECK_OK(replay_open(bin, &r));
    static const char *const names[] = {"s[0]", "s[1]", "t", "s2[0]", "s2[1]", "s2[2]", "cat"};
    CHECK_EQ_U64(lm_replay_buffer_count(r), 7);
    for (uint32_t i = 0; i < 7 && i < lm_replay_buffer_count(r); i++) {
        lm_replay_buffer_info info;
        CHECK_OK(lm_replay_buffer_info_at(r, i, &info));
        CHECK(!strcmp(info.name, names[i]));
        CHECK(info.rank == 1 && info.shape[0] == (i == 6 ? 6u : 2u));
    }
    const float a[2] = {1, 2}, b[2] = {3, 4}, t[2] = {5, 6};
    CHECK_OK(lm_replay_set_input(r, "s[0]", a, sizeof a));
    CHECK_OK(lm_replay_set_input(r, "s[1]", b, sizeof b));
    CHECK_OK(lm_replay_set_input(r, "t", t, sizeof t));
    CHECK_OK(lm_replay_run(r, NULL, NULL, NULL));
    float got[6];
    CHECK_OK(lm_replay_get_output(r, "s2[2]", got, 2 * sizeof *got));
    CHECK(got[0] == 5 && got[1] == 6);
    CHECK_OK(lm_replay_get_output(r, "cat", got, sizeof got));
    for (int i = 0; i < 6; i++)
        CHECK(got[i] == (float)(i + 1));
    lm_replay_close(r);
    lm_binary_free(bin);
    CHECK_FAILS(lmfe_compile_onnx(save(sequence_io_model(true, false)), &o, &bin, NULL),
                LM_ERR_INVALID_FILE,
                "node 'ins' (SequenceInsert): graph output 's2' is declared a tensor but the node "
                "makes a sequence");
    CHECK_FAILS(lmfe_compile_onnx(save(sequence_io_model(false, true)), &o, &bin, NULL),
                LM_ERR_INVALID_FILE, "graph output 'cat' is declared a sequence but is a tensor");
}

/* TfIdfVectorizer's pool: levels that hold whole n-grams, one column and
 * one weight per n-gram, columns not shared, a mode. */
static void test_tfidf_refusals(void) {
    int64_t xd = 8, yd = 3;
    Onnx__GraphProto *g = ob_graph("t");
    Onnx__ModelProto *m = ob_model(g);
    m->opset_import[0]->version = 9;
    ob_input(g, ob_vi("x", ob_tensor_type(I64, 1, &xd, NULL)));
    ob_output(g, ob_vi("y", ob_tensor_type(F32, 1, &yd, NULL)));
    Onnx__NodeProto *n = ob_node(g, "TfIdfVectorizer", "tf", (const char *[]){"x", NULL},
                                 (const char *[]){"y", NULL});
    ob_attr_i(n, "min_gram_length", 1);
    ob_attr_i(n, "max_gram_length", 2);
    ob_attr_i(n, "max_skip_count", 1);
    Onnx__AttributeProto *starts = ob_attr_is(n, "ngram_counts", (const int64_t[]){0, 1}, 2);
    Onnx__AttributeProto *cols = ob_attr_is(n, "ngram_indexes", (const int64_t[]){0, 2, 1}, 3);
    Onnx__AttributeProto *pool = ob_attr_is(n, "pool_int64s", (const int64_t[]){7, 1, 2, 3, 4}, 5);
    lm_binary *bin;
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'tf' (TfIdfVectorizer): attribute mode is required");
    Onnx__AttributeProto *mode = ob_attr_s(n, "mode", "TF");
    CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, NULL));
    lm_binary_free(bin);
    mode->s.data = (uint8_t *)ob_str("BM25");
    mode->s.len = 4;
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "attribute mode=BM25 is not valid");
    mode->s.data = (uint8_t *)ob_str("IDF");
    mode->s.len = 3;
    starts->ints[1] = 2;
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "ngram_counts[1]=2 does not start a whole number of 2-grams in the pool of 5 ids");
    starts->ints[1] = 1;
    cols->n_ints = 2;
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "ngram_indexes has 2 entries but the pool holds 3 n-grams");
    cols->n_ints = 3;
    cols->ints[2] = 0;
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "ngram_indexes gives column 0 to n-grams 0 and 2");
    cols->ints[2] = 1;
    Onnx__AttributeProto *w = ob_attr(n, "weights", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS);
    w->floats = ob_alloc(2 * sizeof *w->floats);
    w->n_floats = 2;
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "weights has 2 entries but the pool holds 3 n-grams");
    n->n_attribute--;
    pool->ints[0] = 1 << 24;
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_UNSUPPORTED,
                "pool id 16777216: ids are compared in float32, exact only below 2^24");
    pool->ints[0] = 7;
    n->attribute[0]->i = 3; /* min_gram_length above max_gram_length */
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "gram lengths must satisfy 1 <= min_gram_length <= max_gram_length, given 3 "
                "and 2");
}

/* A GRAPH attribute `name` on n holding g. */
static void graph_attr(Onnx__NodeProto *n, const char *name, Onnx__GraphProto *g) {
    Onnx__AttributeProto *a = ob_attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH);
    a->g = g;
}

/* Optional graph inputs and outputs: present unless called absent, then
 * what they hold is an input or output of its own; an empty optional
 * output is no output at all. */
static void test_optional_io(void) {
    int64_t d3 = 3;
    Onnx__GraphProto *g = ob_graph("oio");
    Onnx__ModelProto *m = ob_model(g);
    m->opset_import[0]->version = 15;
    ob_input(g, ob_vi("o", ob_optional_type(ob_tensor_type(F32, 1, &d3, NULL))));
    ob_input(g, ob_vi("x", ob_tensor_type(F32, 1, &d3, NULL)));
    ob_output(g, ob_vi("has", ob_tensor_type(ONNX__TENSOR_PROTO__DATA_TYPE__BOOL, 0, NULL, NULL)));
    ob_output(g, ob_vi("same", ob_optional_type(ob_tensor_type(F32, 1, &d3, NULL))));
    ob_node(g, "OptionalHasElement", "has", (const char *[]){"o", NULL},
            (const char *[]){"has", NULL});
    ob_node(g, "Identity", "id", (const char *[]){"o", NULL}, (const char *[]){"same", NULL});
    const char *path = save(m);
    lmfe_compile_options o;
    lmfe_compile_options_init(&o);
    lm_binary *bin = NULL;
    const char *absent[1] = {"x"};
    o.absent_inputs = absent;
    o.absent_input_count = 1;
    CHECK_FAILS(lmfe_compile_onnx(path, &o, &bin, NULL), LM_ERR_INVALID_ARGUMENT,
                "absent input: graph input 'x' is not optional");
    absent[0] = "q";
    CHECK_FAILS(lmfe_compile_onnx(path, &o, &bin, NULL), LM_ERR_INVALID_ARGUMENT,
                "absent input: the model has no input 'q'");
    absent[0] = NULL;
    CHECK_FAILS(lmfe_compile_onnx(path, &o, &bin, NULL), LM_ERR_INVALID_ARGUMENT,
                "absent_inputs[0] is NULL");
    for (int present = 1; present >= 0; present--) {
        absent[0] = "o";
        o.absent_input_count = present ? 0 : 1;
        CHECK_OK(lmfe_compile_onnx(path, &o, &bin, NULL));
        const void *data;
        uint64_t size;
        lm_replay *r;
        CHECK_OK(lm_binary_data(bin, &data, &size));
        CHECK_OK(lm_replay_open(data, size, &r));
        /* Present: o, x in; has, same out. Absent: x in; has out. */
        CHECK_EQ_U64(lm_replay_buffer_count(r), present ? 4 : 2);
        lm_replay_buffer_info info;
        CHECK_OK(lm_replay_buffer_info_at(r, 0, &info));
        CHECK(!strcmp(info.name, present ? "o" : "x"));
        CHECK_OK(lm_replay_run(r, NULL, NULL, NULL));
        int32_t has = -1;
        CHECK_OK(lm_replay_get_output(r, "has", &has, sizeof has));
        CHECK(has == present);
        lm_replay_close(r);
        lm_binary_free(bin);
    }
    /* An empty Optional cannot be read. */
    g = ob_graph("oe");
    m = ob_model(g);
    m->opset_import[0]->version = 15;
    ob_input(g, ob_vi("x", ob_tensor_type(F32, 1, &d3, NULL)));
    ob_output(g, ob_vi("y", ob_tensor_type(F32, 1, &d3, NULL)));
    Onnx__NodeProto *none =
        ob_node(g, "Optional", "none", (const char *[]){NULL}, (const char *[]){"o", NULL});
    ob_node(g, "OptionalGetElement", "get", (const char *[]){"o", NULL},
            (const char *[]){"y", NULL});
    lmfe_compile_options_init(&o);
    CHECK_FAILS(lmfe_compile_onnx(save(m), &o, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'none' (Optional): an empty Optional needs its 'type' attribute");
    ob_attr(none, "type", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO)->tp =
        ob_tensor_type(F32, 1, &d3, NULL);
    CHECK_FAILS(lmfe_compile_onnx(save(m), &o, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'get' (OptionalGetElement): the optional 'o' is empty");
}

/* The training domain's optimizers: R, T and whole (X, G, state) groups of
 * one shape; other ops of that domain are named when refused. */
static void test_training_refusals(void) {
    int64_t d3 = 3, d2 = 2;
    Onnx__GraphProto *g = ob_graph("tr");
    Onnx__ModelProto *m = ob_model(g);
    ob_import(m, "ai.onnx.preview.training", 1);
    ob_input(g, ob_vi("R", ob_tensor_type(F32, 0, NULL, NULL)));
    ob_input(g, ob_vi("T", ob_tensor_type(I64, 0, NULL, NULL)));
    ob_input(g, ob_vi("X", ob_tensor_type(F32, 1, &d3, NULL)));
    ob_input(g, ob_vi("G", ob_tensor_type(F32, 1, &d3, NULL)));
    ob_input(g, ob_vi("H", ob_tensor_type(F32, 1, &d2, NULL)));
    ob_output(g, ob_vi("Xn", ob_tensor_type(F32, 1, &d3, NULL)));
    ob_output(g, ob_vi("Hn", ob_tensor_type(F32, 1, &d3, NULL)));
    Onnx__NodeProto *n =
        ob_node(g, "Adagrad", "step", (const char *[]){"R", "T", "X", "G", "H", NULL},
                (const char *[]){"Xn", "Hn", NULL});
    n->domain = ob_str("ai.onnx.preview.training");
    lm_binary *bin;
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'step' (Adagrad): input 4 is float[2], but tensor 2 it goes with is "
                "float[3] (and R float)");
    n->n_input = 4;
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "4 inputs: expected R, T and 3 tensors per updated tensor");
    n->n_input = 5;
    n->input[1] = ob_str("R");
    g->input[4] = ob_vi("H", ob_tensor_type(F32, 1, &d3, NULL));
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "T must be one int64");
    n->input[1] = ob_str("T");
    CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, NULL));
    lm_binary_free(bin);
    n->op_type = ob_str("Momentum");
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "attribute mode is required");
    n->op_type = ob_str("Gradient");
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'step' (Gradient): attribute xs is missing");
}

/* A STRINGS attribute on n. */
static Onnx__AttributeProto *attr_ss(Onnx__NodeProto *n, const char *name,
                                     const char *const *values) {
    Onnx__AttributeProto *a = ob_attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS);
    size_t count = 0;
    while (values[count])
        count++;
    a->strings = ob_alloc((count ? count : 1) * sizeof *a->strings);
    for (size_t i = 0; i < count; i++) {
        a->strings[i].data = (uint8_t *)ob_str(values[i]);
        a->strings[i].len = strlen(values[i]);
    }
    a->n_strings = count;
    return a;
}

/* Gradient's attributes and inputs (its values are built cases). */
static void test_gradient_refusals(void) {
    int64_t d3 = 3;
    Onnx__GraphProto *g = ob_graph("gr");
    Onnx__ModelProto *m = ob_model(g);
    ob_import(m, "ai.onnx.preview.training", 1);
    ob_input(g, ob_vi("a", ob_tensor_type(F32, 1, &d3, NULL)));
    ob_input(g, ob_vi("b", ob_tensor_type(F32, 1, &d3, NULL)));
    ob_output(g, ob_vi("da", ob_tensor_type(F32, 1, &d3, NULL)));
    ob_node(g, "Mul", "mul", (const char *[]){"a", "b", NULL}, (const char *[]){"c", NULL});
    Onnx__NodeProto *n =
        ob_node(g, "Gradient", "grad", (const char *[]){"a", NULL}, (const char *[]){"da", NULL});
    n->domain = ob_str("ai.onnx.preview.training");
    Onnx__AttributeProto *xs = attr_ss(n, "xs", (const char *[]){"a", NULL});
    Onnx__AttributeProto *y = ob_attr_s(n, "y", "nowhere");
    lm_binary *bin;
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'grad' (Gradient): attribute y names 'nowhere', which is not defined");
    y->s.data = (uint8_t *)ob_str("c");
    y->s.len = 1;
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'grad' (Gradient): y ('c') depends on 'b', which is in neither xs nor zs");
    Onnx__AttributeProto *zs = attr_ss(n, "zs", (const char *[]){"b", NULL});
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'grad' (Gradient): 1 input for 2 tensors in xs and zs (one input each)");
    n->input[n->n_input++] = ob_str("b");
    zs->strings[0].data = (uint8_t *)ob_str("a");
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'grad' (Gradient): 'a' is named twice in xs and zs");
    zs->strings[0].data = (uint8_t *)ob_str("q");
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'grad' (Gradient): zs names 'q', which is not in the graph");
    zs->strings[0].data = (uint8_t *)ob_str("b");
    n->output[n->n_output++] = ob_str("db");
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'grad' (Gradient): 2 outputs for 1 tensor in xs");
    n->n_output = 1;
    xs->n_strings = 0;
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'grad' (Gradient): xs names no tensor");
    xs->n_strings = 1;
    /* Fixed, it compiles and gives b. */
    CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, NULL));
    float a_in[3] = {1, 2, 3}, b_in[3] = {4, -5, 6}, got[3] = {0};
    lm_device *dev;
    lm_replay *rp;
    const void *data;
    size_t size;
    CHECK_OK(lm_device_open(NULL, &dev));
    CHECK_OK(lm_binary_data(bin, &data, &size));
    CHECK_OK(lm_replay_open(data, size, &rp));
    CHECK_OK(lm_replay_set_input(rp, "a", a_in, sizeof a_in));
    CHECK_OK(lm_replay_set_input(rp, "b", b_in, sizeof b_in));
    CHECK_OK(lm_replay_run(rp, dev, NULL, NULL));
    CHECK_OK(lm_replay_get_output(rp, "da", got, sizeof got));
    CHECK(got[0] == 4 && got[1] == -5 && got[2] == 6);
    lm_replay_close(rp);
    lm_device_close(dev);
    lm_binary_free(bin);
    /* A Split, one of whose outputs y does not use. */
    Onnx__NodeProto *split = g->node[0];
    split->op_type = ob_str("Split");
    split->n_input = 1;
    split->output[0] = ob_str("c0");
    split->output[split->n_output++] = ob_str("c");
    ob_attr_i(split, "axis", 0);
    ob_attr_is(split, "split", (const int64_t[]){1, 2}, 2);
    zs->n_strings = 0;
    n->n_input = 1;
    n->n_output = 1;
    m->opset_import[0]->version = 12;
    CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, NULL));
    lm_binary_free(bin);

    /* A gradient reaching a later output of an op whose rule is for its
     * first: training BatchNormalization's running mean. */
    int64_t dx[2] = {2, 3};
    float ones[3] = {1, 1, 1};
    Onnx__GraphProto *g2 = ob_graph("bn");
    Onnx__ModelProto *m2 = ob_model(g2);
    m2->opset_import[0]->version = 15;
    ob_import(m2, "ai.onnx.preview.training", 1);
    ob_input(g2, ob_vi("x", ob_tensor_type(F32, 2, dx, NULL)));
    ob_output(g2, ob_vi("dx", ob_tensor_type(F32, 2, dx, NULL)));
    const char *params[4] = {"scale", "bias", "mean", "var"};
    for (int i = 0; i < 4; i++) {
        Onnx__TensorProto *t = ob_tensor(params[i], F32, 1, &d3);
        ob_raw(t, ones, sizeof ones);
        ob_init(g2, t);
    }
    Onnx__NodeProto *bn = ob_node(g2, "BatchNormalization", "bn",
                                  (const char *[]){"x", "scale", "bias", "mean", "var", NULL},
                                  (const char *[]){"y", "rm", "rv", NULL});
    ob_attr_i(bn, "training_mode", 1);
    Onnx__NodeProto *gn =
        ob_node(g2, "Gradient", "grad", (const char *[]){"x", NULL}, (const char *[]){"dx", NULL});
    gn->domain = ob_str("ai.onnx.preview.training");
    attr_ss(gn, "xs", (const char *[]){"x", NULL});
    ob_attr_s(gn, "y", "rm");
    CHECK_FAILS(lmfe_compile_onnx(save(m2), NULL, &bin, NULL), LM_ERR_UNSUPPORTED,
                "node 'bn' (BatchNormalization): Gradient: y depends on output 1 of this node, "
                "whose gradient is not supported");
}

enum { RN = 64 * 64 };

/* A model of every random op: RandomNormal, RandomUniformLike and
 * RandomUniform with one seed (the same numbers), two RandomUniform without
 * one, Bernoulli, and Dropout in training mode with its mask. */
static Onnx__ModelProto *random_model(Onnx__NodeProto **out_uniform, Onnx__NodeProto **out_drop) {
    int64_t d[2] = {64, 64};
    Onnx__GraphProto *g = ob_graph("random");
    Onnx__ModelProto *m = ob_model(g);
    ob_input(g, ob_vi("X", ob_tensor_type(F32, 2, d, NULL)));
    ob_input(g, ob_vi("P", ob_tensor_type(F32, 2, d, NULL)));
    const char *outs[] = {"n", "u", "u2", "u3", "u4", "b", "dy", "dmf"};
    for (size_t i = 0; i < sizeof outs / sizeof *outs; i++)
        ob_output(g, ob_vi(outs[i], ob_tensor_type(F32, 2, d, NULL)));
    Onnx__NodeProto *n = ob_node(g, "RandomNormal", "normal", NULL, (const char *[]){"n", NULL});
    ob_attr_is(n, "shape", d, 2);
    ob_attr_f(n, "mean", 1);
    ob_attr_f(n, "scale", 2);
    ob_attr_f(n, "seed", 3);
    n = ob_node(g, "RandomUniformLike", "ulike", (const char *[]){"X", NULL},
                (const char *[]){"u", NULL});
    ob_attr_f(n, "low", -1);
    ob_attr_f(n, "seed", 3);
    n = ob_node(g, "RandomUniform", "uniform", NULL, (const char *[]){"u2", NULL});
    ob_attr_is(n, "shape", d, 2);
    ob_attr_f(n, "low", -1);
    ob_attr_f(n, "seed", 3);
    *out_uniform = n;
    for (int k = 0; k < 2; k++) {
        n = ob_node(g, "RandomUniform", NULL, NULL, (const char *[]){k ? "u4" : "u3", NULL});
        ob_attr_is(n, "shape", d, 2);
    }
    n = ob_node(g, "Bernoulli", "coin", (const char *[]){"P", NULL}, (const char *[]){"b", NULL});
    ob_attr_f(n, "seed", 5);
    float ratio = 0.5f;
    uint8_t yes = 1;
    Onnx__TensorProto *r = ob_tensor("ratio", F32, 0, NULL);
    ob_raw(r, &ratio, sizeof ratio);
    ob_init(g, r);
    Onnx__TensorProto *t = ob_tensor("training", 9, 0, NULL);
    ob_raw(t, &yes, 1);
    ob_init(g, t);
    *out_drop = ob_node(g, "Dropout", "drop", (const char *[]){"X", "ratio", "training", NULL},
                        (const char *[]){"dy", "dm", NULL});
    n = ob_node(g, "Cast", NULL, (const char *[]){"dm", NULL}, (const char *[]){"dmf", NULL});
    ob_attr_i(n, "to", F32);
    return m;
}

/* Runs the random model's binary on x and p, with run seed *rs given to
 * input "rs" unless rs is NULL; out holds its 8 outputs. */
static lm_status run_random_seeded(lm_binary *bin, const float *x, const float *p,
                                   const uint32_t *rs, float (*out)[RN]) {
    const char *outs[] = {"n", "u", "u2", "u3", "u4", "b", "dy", "dmf"};
    const void *data;
    uint64_t size;
    lm_replay *r;
    lm_status st = lm_binary_data(bin, &data, &size);
    if (!st) st = lm_replay_open(data, size, &r);
    if (st) return st;
    st = lm_replay_set_input(r, "X", x, RN * sizeof *x);
    if (!st) st = lm_replay_set_input(r, "P", p, RN * sizeof *p);
    if (!st && rs) st = lm_replay_set_input(r, "rs", rs, sizeof *rs);
    if (!st) st = lm_replay_run(r, NULL, NULL, NULL);
    for (int i = 0; i < 8 && !st; i++)
        st = lm_replay_get_output(r, outs[i], out[i], RN * sizeof(float));
    lm_replay_close(r);
    return st;
}

static lm_status run_random(lm_binary *bin, const float *x, const float *p, float (*out)[RN]) {
    return run_random_seeded(bin, x, p, NULL, out);
}

static void test_random(void) {
    Onnx__NodeProto *uniform, *drop;
    Onnx__ModelProto *m = random_model(&uniform, &drop);
    lm_binary *bin, *again;
    lmfe_report rep;
    CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, &rep));
    CHECK(rep.notes && strstr(rep.notes, "random: 7 device nodes draw random numbers, the same on "
                                         "every run of the binary"));
    lmfe_report_free(&rep);
    /* Seeds are part of the model: compiling again gives the same binary. */
    CHECK_OK(lmfe_compile_onnx(save(m), NULL, &again, NULL));
    const void *d1, *d2;
    uint64_t s1, s2;
    CHECK_OK(lm_binary_data(bin, &d1, &s1));
    CHECK_OK(lm_binary_data(again, &d2, &s2));
    CHECK(s1 == s2 && !memcmp(d1, d2, s1));
    lm_binary_free(again);

    static float x[RN], p[RN], y[8][RN], y2[8][RN];
    for (int i = 0; i < RN; i++) {
        x[i] = 0.5f + (float)(i % 17) * 0.25f;
        p[i] = 0.25f;
    }
    CHECK_OK(run_random(bin, x, p, y));
    /* A binary draws the same numbers on every run. */
    CHECK_OK(run_random(bin, x, p, y2));
    CHECK(!memcmp(y, y2, sizeof y));
    lm_binary_free(bin);

    double sum = 0, sq = 0, usum = 0;
    int outside = 0, same34 = 0, ones = 0, bad = 0, kept = 0;
    for (int i = 0; i < RN; i++) {
        sum += y[0][i];
        sq += (double)y[0][i] * y[0][i];
        usum += y[1][i];
        outside += !(y[1][i] >= -1 && y[1][i] < 1) || !(y[3][i] >= 0 && y[3][i] < 1);
        same34 += y[3][i] == y[4][i];
        ones += y[5][i] == 1;
        bad += y[5][i] != 0 && y[5][i] != 1;
        kept += y[7][i] == 1;
        bad += y[7][i] == 1 ? y[6][i] != 2 * x[i] : y[7][i] != 0 || y[6][i] != 0;
    }
    double mean = sum / RN, sd = sqrt(sq / RN - mean * mean);
    CHECK(fabs(mean - 1) < 5 * 2 / sqrt(RN));
    CHECK(fabs(sd - 2) < 5 * 2 / sqrt(2.0 * RN));
    CHECK(fabs(usum / RN) < 5 * sqrt(1.0 / 3 / RN));
    CHECK(outside == 0);
    /* One seed, one set of numbers, whichever op draws them. */
    CHECK(!memcmp(y[1], y[2], sizeof y[1]));
    /* Without a seed each node draws its own. */
    CHECK(same34 < RN / 100);
    CHECK(bad == 0);
    CHECK(fabs((double)ones / RN - 0.25) < 5 * sqrt(0.1875 / RN));
    CHECK(fabs((double)kept / RN - 0.5) < 5 * sqrt(0.25 / RN));

    /* Refusals. */
    uniform->attribute[1]->f = 2; /* low above high */
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'uniform' (RandomUniform): low 2 and high 1: expected finite values, low <= "
                "high");
    uniform->attribute[1]->f = -1;
    ob_attr_i(uniform, "dtype", 6);
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_UNSUPPORTED,
                "node 'uniform' (RandomUniform): dtype 6 (int32) is not supported: expected "
                "float, double, float16 or bfloat16");
    uniform->n_attribute--;
    uniform->attribute[0]->n_ints = 0;
    uniform->attribute[0]->name = ob_str("shapes");
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_UNSUPPORTED,
                "node 'uniform' (RandomUniform): attribute 'shapes' is not supported");
    uniform->attribute[0]->name = ob_str("shape");
    uniform->attribute[0]->n_ints = 2;
    Onnx__AttributeProto *shape = uniform->attribute[0];
    uniform->attribute[0] = uniform->attribute[2]; /* seed, low */
    uniform->n_attribute--;
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'uniform' (RandomUniform): attribute shape is missing");
    uniform->attribute[0] = shape;
    uniform->n_attribute++;
    float one = 1;
    ob_raw(m->graph->initializer[0], &one, sizeof one);
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'drop' (Dropout): ratio 1: expected a value in [0, 1)");
    /* Training mode on an integer tensor: Dropout's inputs are floats. */
    drop->input[0] = ob_str("T");
    int32_t ints[4] = {1, 2, 3, 4};
    int64_t four = 4;
    Onnx__TensorProto *ti = ob_tensor("T", 6, 1, &four);
    ob_raw(ti, ints, sizeof ints);
    ob_init(m->graph, ti);
    ob_raw(m->graph->initializer[0], &(float){0.5f}, sizeof(float));
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_UNSUPPORTED,
                "node 'drop' (Dropout): input 0 ('T'): element type int32 is not supported");
}

/* A seed input: the binary takes a run seed by name; 0 draws what the
 * binary without one draws, other values other numbers, the same value the
 * same numbers (through every random op, Dropout's mask still matching). */
static void test_seed_input(void) {
    Onnx__NodeProto *uniform, *drop;
    Onnx__ModelProto *m = random_model(&uniform, &drop);
    static float x[RN], p[RN], plain[8][RN], y0[8][RN], y7[8][RN], again[8][RN];
    for (int i = 0; i < RN; i++) {
        x[i] = 1.0f + (float)(i % 5);
        p[i] = 0.5f;
    }
    lm_binary *bin;
    CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, NULL));
    CHECK_OK(run_random(bin, x, p, plain));
    lm_binary_free(bin);
    lmfe_compile_options o;
    lmfe_compile_options_init(&o);
    o.seed_input = "rs";
    o.seed_value = 7;
    lmfe_report rep;
    CHECK_OK(lmfe_compile_onnx(save(m), &o, &bin, &rep));
    CHECK(rep.notes && strstr(rep.notes, "random: 7 device nodes draw random numbers, new ones for "
                                         "each value of the input 'rs'"));
    lmfe_report_free(&rep);
    CHECK_OK(run_random_seeded(bin, x, p, &(uint32_t){0}, y0));
    CHECK_OK(run_random_seeded(bin, x, p, &(uint32_t){7}, y7));
    CHECK_OK(run_random(bin, x, p, again)); /* the recorded value: 7 */
    CHECK(!memcmp(y0, plain, sizeof y0));
    CHECK(!memcmp(y7, again, sizeof y7));
    int same = 0, bad = 0;
    for (int k = 0; k < 5; k++) /* the continuous ones: n, u, u2, u3, u4 */
        for (int i = 0; i < RN; i++)
            same += y7[k][i] == y0[k][i];
    for (int i = 0; i < RN; i++)
        bad += y7[7][i] == 1 ? y7[6][i] != 2 * x[i] : y7[6][i] != 0;
    CHECK(same < 5 * RN / 100);
    CHECK(bad == 0);
    CHECK(!memcmp(y7[1], y7[2], sizeof y7[1])); /* one seed, one set of numbers still */
    lm_binary_free(bin);

    o.seed_input = "X";
    CHECK_FAILS(lmfe_compile_onnx(save(m), &o, &bin, NULL), LM_ERR_INVALID_ARGUMENT,
                "opts->seed_input: 'X' is already one of the model's inputs");
    o.seed_input = "dy";
    CHECK_FAILS(lmfe_compile_onnx(save(m), &o, &bin, NULL), LM_ERR_INVALID_ARGUMENT,
                "opts->seed_input: 'dy' is already one of the model's outputs");
    o.seed_input = "";
    CHECK_FAILS(lmfe_compile_onnx(save(m), &o, &bin, NULL), LM_ERR_INVALID_ARGUMENT,
                "opts->seed_input is empty");
    o.seed_input = "rs";
    int64_t d4 = 4;
    Onnx__GraphProto *g = ob_graph("plain");
    Onnx__ModelProto *plain_model = ob_model(g);
    ob_input(g, ob_vi("a", ob_tensor_type(F32, 1, &d4, NULL)));
    ob_output(g, ob_vi("b", ob_tensor_type(F32, 1, &d4, NULL)));
    ob_node(g, "Relu", NULL, (const char *[]){"a", NULL}, (const char *[]){"b", NULL});
    CHECK_FAILS(lmfe_compile_onnx(save(plain_model), &o, &bin, NULL), LM_ERR_INVALID_ARGUMENT,
                "opts->seed_input: the model draws no random numbers, so 'rs' would change "
                "nothing");
}

/* Multinomial: class frequencies as the softmax of each row gives them
 * (a class of probability 0 never drawn), int64 out, and the refusals. */
static void test_multinomial(void) {
    enum { S = 4000 };
    int64_t xd[2] = {2, 3}, yd[2] = {2, S};
    Onnx__GraphProto *g = ob_graph("multinomial");
    Onnx__ModelProto *m = ob_model(g);
    ob_input(g, ob_vi("x", ob_tensor_type(F32, 2, xd, NULL)));
    ob_output(g, ob_vi("y", ob_tensor_type(I64, 2, yd, NULL)));
    Onnx__NodeProto *n =
        ob_node(g, "Multinomial", "draw", (const char *[]){"x", NULL}, (const char *[]){"y", NULL});
    ob_attr_i(n, "sample_size", S);
    Onnx__AttributeProto *dtype = ob_attr_i(n, "dtype", I64);
    ob_attr_f(n, "seed", 1);
    lm_binary *bin;
    CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, NULL));
    /* Log-probabilities, shifted (only their differences count). */
    const double p[2][3] = {{0.2, 0.3, 0.5}, {0.5, 0, 0.5}};
    float x[6];
    for (int i = 0; i < 6; i++)
        x[i] = p[i / 3][i % 3] > 0 ? (float)log(p[i / 3][i % 3]) + 2 : -100.0f;
    const void *data;
    uint64_t size;
    lm_replay *r;
    static int32_t y[2 * S]; /* an int64 output is int32 in the binary */
    CHECK_OK(lm_binary_data(bin, &data, &size));
    CHECK_OK(lm_replay_open(data, size, &r));
    CHECK_OK(lm_replay_set_input(r, "x", x, sizeof x));
    CHECK_OK(lm_replay_run(r, NULL, NULL, NULL));
    CHECK_OK(lm_replay_get_output(r, "y", y, sizeof y));
    lm_replay_close(r);
    lm_binary_free(bin);
    int counts[2][3] = {{0}}, outside = 0;
    for (int i = 0; i < 2 * S; i++) {
        if (y[i] < 0 || y[i] > 2)
            outside++;
        else
            counts[i / S][y[i]]++;
    }
    CHECK(outside == 0);
    for (int b = 0; b < 2; b++)
        for (int k = 0; k < 3; k++) {
            double q = p[b][k], f = (double)counts[b][k] / S;
            CHECK(fabs(f - q) <= 5 * sqrt(q * (1 - q) / S));
        }
    CHECK(counts[1][1] == 0);

    dtype->i = F32;
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'draw' (Multinomial): dtype 1: expected int32 (6) or int64 (7)");
    dtype->i = I64;
    n->attribute[0]->i = 0;
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_UNSUPPORTED,
                "node 'draw' (Multinomial): sample_size 0 (from 1 to 1048576)");
    n->attribute[0]->i = S;
    g->input[0] = ob_vi("x", ob_tensor_type(F32, 1, xd, NULL));
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'draw' (Multinomial): input must be 2-D (batch, classes), given rank 1");
}

/* Opset 8's batched Scan: one direction per scan input, the batch along
 * axis 0 of every input. */
static void test_scan8_refusals(void) {
    int64_t sd[2] = {2, 3}, xd[3] = {2, 4, 3}, bad[3] = {5, 4, 3};
    Onnx__GraphProto *g = ob_graph("s8");
    Onnx__ModelProto *m = ob_model(g);
    m->opset_import[0]->version = 8;
    ob_input(g, ob_vi("s", ob_tensor_type(F32, 2, sd, NULL)));
    Onnx__ValueInfoProto *xin = ob_vi("x", ob_tensor_type(F32, 3, xd, NULL));
    ob_input(g, xin);
    ob_output(g, ob_vi("y", ob_tensor_type(F32, 2, sd, NULL)));
    Onnx__NodeProto *n = ob_node(g, "Scan", "scan", (const char *[]){"", "s", "x", NULL},
                                 (const char *[]){"y", NULL});
    ob_attr_i(n, "num_scan_inputs", 1);
    Onnx__AttributeProto *dirs = ob_attr_is(n, "directions", (const int64_t[]){0, 1}, 2);
    Onnx__GraphProto *body = ob_graph("body");
    ob_input(body, ob_vi("acc", ob_tensor_type(F32, 1, &sd[1], NULL)));
    ob_input(body, ob_vi("el", ob_tensor_type(F32, 1, &sd[1], NULL)));
    ob_output(body, ob_vi("next", ob_tensor_type(F32, 1, &sd[1], NULL)));
    ob_node(body, "Add", "add", (const char *[]){"acc", "el", NULL},
            (const char *[]){"next", NULL});
    graph_attr(n, "body", body);
    lm_binary *bin;
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'scan' (Scan): directions has 2 entries for 1 scan inputs");
    dirs->n_ints = 1;
    xin->type = ob_tensor_type(F32, 3, bad, NULL);
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "input 2: every input needs the batch along axis 0 (2)");
    xin->type = ob_tensor_type(F32, 3, xd, NULL);
    CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, NULL));
    lm_binary_free(bin);
}

/* NonMaxSuppression: boxes and scores that agree, a known box format. */
static void test_nms_refusals(void) {
    int64_t bd[3] = {1, 2, 4}, sd[3] = {1, 1, 3}, yd[2] = {1, 3};
    Onnx__GraphProto *g = ob_graph("nms");
    Onnx__ModelProto *m = ob_model(g);
    m->opset_import[0]->version = 11;
    ob_output(g, ob_vi("y", ob_tensor_type(I64, 2, yd, NULL)));
    float box[8] = {0, 0, 1, 1, 0, 0, 2, 2}, score[3] = {0.9f, 0.8f, 0.7f};
    Onnx__TensorProto *b = ob_tensor("boxes", F32, 3, bd), *sc = ob_tensor("scores", F32, 3, sd);
    ob_raw(b, box, sizeof box);
    ob_raw(sc, score, sizeof score);
    ob_init(g, b);
    ob_init(g, sc);
    Onnx__NodeProto *n =
        ob_node(g, "NonMaxSuppression", "nms", (const char *[]){"boxes", "scores", NULL},
                (const char *[]){"y", NULL});
    lm_binary *bin;
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'nms' (NonMaxSuppression): boxes must be [batch, boxes, 4] and scores "
                "[batch, classes, boxes]");
    sd[2] = 2;
    g->initializer[1] = ob_tensor("scores", F32, 3, sd);
    ob_raw(g->initializer[1], score, 2 * sizeof *score);
    ob_attr_i(n, "center_point_box", 2);
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "center_point_box must be 0 or 1, given 2");
}

/* SequenceMap: equally long sequences, something to map, a body that fits. */
static void test_sequence_map_refusals(void) {
    int64_t d2 = 2;
    Onnx__GraphProto *g = ob_graph("sm");
    Onnx__ModelProto *m = ob_model(g);
    m->opset_import[0]->version = 17;
    ob_input(g, ob_vi("a", ob_sequence_type(ob_tensor_type(F32, 1, &d2, NULL))));
    ob_input(g, ob_vi("b", ob_sequence_type(ob_tensor_type(F32, 1, &d2, NULL))));
    ob_output(g, ob_vi("y", ob_sequence_type(ob_tensor_type(F32, 1, &d2, NULL))));
    Onnx__NodeProto *n = ob_node(g, "SequenceMap", "map", (const char *[]){"a", "b", NULL},
                                 (const char *[]){"y", NULL});
    Onnx__GraphProto *body = ob_graph("body");
    ob_input(body, ob_vi("ea", ob_tensor_type(F32, 1, &d2, NULL)));
    ob_input(body, ob_vi("eb", ob_tensor_type(F32, 1, &d2, NULL)));
    ob_output(body, ob_vi("sum", ob_tensor_type(F32, 1, &d2, NULL)));
    ob_node(body, "Add", "add", (const char *[]){"ea", "eb", NULL}, (const char *[]){"sum", NULL});
    graph_attr(n, "body", body);
    const char *path = save(m);
    lmfe_compile_options o;
    lmfe_compile_options_init(&o);
    lmfe_sequence_length len[2] = {{"a", 2}, {"b", 3}};
    o.sequence_lengths = len;
    o.sequence_length_count = 2;
    lm_binary *bin;
    CHECK_FAILS(lmfe_compile_onnx(path, &o, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'map' (SequenceMap): input 1 holds 3 tensors, input 0 holds 2");
    len[0].length = len[1].length = 0;
    CHECK_FAILS(lmfe_compile_onnx(path, &o, &bin, NULL), LM_ERR_UNSUPPORTED,
                "the input sequence is empty (its results' types would be unknown)");
    len[0].length = len[1].length = 2;
    CHECK_OK(lmfe_compile_onnx(path, &o, &bin, NULL));
    lm_binary_free(bin);
    body->n_input = 1; /* eb is then read from outside, where nothing defines it */
    CHECK_FAILS(lmfe_compile_onnx(save(m), &o, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'map' (SequenceMap): a subgraph reads 'eb', which is not defined");
    body->n_input = 2;
    ob_output(body, ob_vi("ea", ob_tensor_type(F32, 1, &d2, NULL)));
    CHECK_FAILS(lmfe_compile_onnx(save(m), &o, &bin, NULL), LM_ERR_INVALID_FILE,
                "the body takes 2 inputs and gives 2 outputs; the node has 2 and 1");
}

/* Control flow: what the loader and the unrolling refuse in a subgraph. */
static void test_control_flow_refusals(void) {
    int64_t d = 3;
    Onnx__GraphProto *g = ob_graph("cf");
    Onnx__ModelProto *m = ob_model(g);
    ob_input(g, ob_vi("x", ob_tensor_type(F32, 1, &d, NULL)));
    ob_output(g, ob_vi("y", ob_tensor_type(F32, 1, &d, NULL)));
    int64_t one = 1;
    Onnx__TensorProto *c = ob_tensor("c", ONNX__TENSOR_PROTO__DATA_TYPE__BOOL, 0, &one);
    uint8_t yes = 1;
    ob_raw(c, &yes, 1);
    ob_init(g, c);
    Onnx__NodeProto *n =
        ob_node(g, "If", "pick", (const char *[]){"c", NULL}, (const char *[]){"y", NULL});
    Onnx__GraphProto *then = ob_graph("then"), *other = ob_graph("else");
    ob_output(then, ob_vi("t", ob_tensor_type(F32, 1, &d, NULL)));
    Onnx__NodeProto *tn =
        ob_node(then, "Neg", "neg", (const char *[]){"x", NULL}, (const char *[]){"t", NULL});
    ob_output(other, ob_vi("x", ob_tensor_type(F32, 1, &d, NULL)));
    graph_attr(n, "then_branch", then);
    graph_attr(n, "else_branch", other);
    lm_binary *bin;
    CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, NULL));
    lm_binary_free(bin);
    /* The branch reads a name nothing defines. */
    tn->input[0] = ob_str("nowhere");
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'pick' (If): a subgraph reads 'nowhere', which is not defined");
    /* ... or defines one twice. */
    tn->input[0] = ob_str("x");
    ob_node(then, "Abs", "abs", (const char *[]){"x", NULL}, (const char *[]){"t", NULL});
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'pick' (If): subgraph 'then_branch' defines 't' more than once");
    /* ... or reads a value before the node that makes it. */
    then->node[1]->output[0] = ob_str("u");
    then->node[1]->input[0] = ob_str("t");
    tn->input[0] = ob_str("u");
    CHECK_FAILS(
        lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
        "subgraph 'then_branch': node #0 reads 'u' before it is defined (subgraph nodes must "
        "be in order)");
    /* A condition given at run time: both branches run; it must be one bool. */
    g->n_initializer = 0;
    ob_input(g, ob_vi("c", ob_tensor_type(ONNX__TENSOR_PROTO__DATA_TYPE__BOOL, 0, &one, NULL)));
    tn->input[0] = ob_str("x");
    then->n_node = 1;
    CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, NULL));
    lm_binary_free(bin);
    int64_t two_conds = 2;
    g->input[1] =
        ob_vi("c", ob_tensor_type(ONNX__TENSOR_PROTO__DATA_TYPE__BOOL, 1, &two_conds, NULL));
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'pick' (If): the condition must be one bool (a scalar or [1]), given "
                "bool[2]");
    /* A branch with the wrong number of outputs. */
    g->n_input = 1;
    ob_init(g, c);
    then->n_output = 0;
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "branch 'then_branch' has 0 inputs and 0 outputs (expected none and 1)");
    then->n_output = 1;
    /* A Loop with neither a trip count nor a condition never ends. */
    Onnx__GraphProto *body = ob_graph("body");
    int64_t none = 0;
    ob_input(body, ob_vi("i", ob_tensor_type(I64, 0, &none, NULL)));
    ob_input(body,
             ob_vi("cin", ob_tensor_type(ONNX__TENSOR_PROTO__DATA_TYPE__BOOL, 0, &none, NULL)));
    ob_input(body, ob_vi("v", ob_tensor_type(F32, 1, &d, NULL)));
    ob_output(body,
              ob_vi("cin", ob_tensor_type(ONNX__TENSOR_PROTO__DATA_TYPE__BOOL, 0, &none, NULL)));
    ob_output(body, ob_vi("w", ob_tensor_type(F32, 1, &d, NULL)));
    ob_node(body, "Neg", "n2", (const char *[]){"v", NULL}, (const char *[]){"w", NULL});
    n->op_type = ob_str("Loop");
    n->n_attribute = 0;
    graph_attr(n, "body", body);
    n->input = ob_alloc(3 * sizeof *n->input);
    n->input[0] = ob_str("");
    n->input[1] = ob_str("");
    n->input[2] = ob_str("x");
    n->n_input = 3;
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_UNSUPPORTED,
                "node 'pick' (Loop): neither a trip count nor a condition: the loop would never "
                "end");
    /* A trip count of 2: two negations. */
    int64_t two = 2;
    Onnx__TensorProto *mt = ob_tensor("m", I64, 0, &one);
    ob_raw(mt, &two, sizeof two);
    ob_init(g, mt);
    n->input[0] = ob_str("m");
    CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, NULL));
    lm_binary_free(bin);
    /* Too many iterations: refused once the limit is reached. */
    two = 5000;
    ob_raw(mt, &two, sizeof two);
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_UNSUPPORTED,
                "node 'pick' (Loop): more than 4096 iterations to unroll");
    two = 2;
    ob_raw(mt, &two, sizeof two);
    /* Carried values the body does not take. */
    n->input[2] = ob_str("");
    n->n_input = 2;
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "2 inputs and 1 outputs for a body of 1 carried values and 0 scan outputs");
    /* A condition given at run time: masked iterations up to the trip count,
     * so it must be one value. */
    n->input[1] = ob_str("cc");
    n->input[2] = ob_str("x");
    n->n_input = 3;
    int64_t two_flags = 2;
    ob_input(g,
             ob_vi("cc", ob_tensor_type(ONNX__TENSOR_PROTO__DATA_TYPE__BOOL, 1, &two_flags, NULL)));
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'pick' (Loop): the condition must be a single value, given bool[2]");
    g->input[g->n_input - 1] =
        ob_vi("cc", ob_tensor_type(ONNX__TENSOR_PROTO__DATA_TYPE__BOOL, 0, &none, NULL));
    CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, NULL));
    lm_binary_free(bin);
}

/* ids (int64) -> Gather from a float table: the named input keeps its
 * element type; an index out of the int32 range is refused when given. */
static void test_int64_boundary(void) {
    Onnx__GraphProto *g = ob_graph("emb");
    Onnx__ModelProto *m = ob_model(g);
    int64_t idd[1] = {4}, td[2] = {6, 3}, yd[2] = {4, 3};
    ob_input(g, ob_vi("ids", ob_tensor_type(I64, 1, idd, NULL)));
    ob_output(g, ob_vi("y", ob_tensor_type(F32, 2, yd, NULL)));
    float table[18];
    for (int i = 0; i < 18; i++)
        table[i] = (float)i;
    f32_init(g, "table", 2, td, table, 18);
    ob_node(g, "Gather", "g", (const char *[]){"table", "ids", NULL}, (const char *[]){"y", NULL});
    lm_binary *bin;
    CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, NULL));
    const void *data;
    uint64_t size;
    lm_replay *r;
    CHECK_OK(lm_binary_data(bin, &data, &size));
    CHECK_OK(lm_replay_open(data, size, &r));
    bool seen = false;
    for (uint32_t i = 0; i < lm_replay_buffer_count(r); i++) {
        lm_replay_buffer_info info;
        CHECK_OK(lm_replay_buffer_info_at(r, i, &info));
        if (!strcmp(info.name, "ids")) {
            seen = true;
            CHECK(info.element_type == LM_ELEMENT_TYPE_INT64 &&
                  info.format == LM_DATA_FORMAT_INT32);
        }
    }
    CHECK(seen);
    int32_t ids[4] = {5, 0, -1, 2}; /* -1: the last row, as ONNX counts */
    float y[12];
    CHECK_OK(lm_replay_set_input(r, "ids", ids, sizeof ids));
    CHECK_OK(lm_replay_run(r, NULL, NULL, NULL));
    CHECK_OK(lm_replay_get_output(r, "y", y, sizeof y));
    const int rows[4] = {5, 0, 5, 2};
    for (int i = 0; i < 4; i++)
        for (int k = 0; k < 3; k++)
            CHECK(y[i * 3 + k] == table[rows[i] * 3 + k]);
    lm_replay_close(r);
    lm_binary_free(bin);
}

/* --trace: the same answer from one trace replay; --golden: the replay
 * checks the outputs, and a different input then mismatches. */
static void test_trace_and_golden(void) {
    float w[12], b[4], x[15], y1[20], y2[20];
    for (int i = 0; i < 12; i++)
        w[i] = (float)(i % 3) - 1.0f;
    for (int i = 0; i < 4; i++)
        b[i] = 0.5f;
    for (int i = 0; i < 15; i++)
        x[i] = (float)i * 0.1f;
    const char *path = save(mlp_model(w, b));
    lmfe_compile_options o;
    lmfe_compile_options_init(&o);
    lmfe_tensor_value golden = {"x", F32, 2, {5, 3}, x, sizeof x};
    o.golden_inputs = &golden;
    o.golden_input_count = 1;
    lm_binary *eager, *traced;
    lm_replay_report re, rt;
    CHECK_OK(lmfe_compile_onnx(path, &o, &eager, NULL));
    o.trace = true;
    CHECK_OK(lmfe_compile_onnx(path, &o, &traced, NULL));
    CHECK_OK(replay1(eager, NULL, NULL, 0, "y", y1, 20, &re));
    CHECK_OK(replay1(traced, NULL, NULL, 0, "y", y2, 20, &rt));
    CHECK(memcmp(y1, y2, sizeof y1) == 0);
    CHECK(re.goldens_checked == 1 && rt.goldens_checked == 1);
    CHECK(rt.programs < re.programs);
    float other[15] = {1};
    CHECK_STATUS(replay1(eager, "x", other, 15, "y", y1, 20, NULL), LM_ERR_MISMATCH);
    lm_binary_free(eager);
    lm_binary_free(traced);

    /* Compiled on the caller's device, which is left as it was: the binary
     * replays on it at its recorded addresses, and so does a second one. */
    lm_device *dev;
    CHECK_OK(lm_device_open(NULL, &dev));
    o.device = dev;
    for (int round = 0; round < 2; round++) {
        CHECK_OK(lmfe_compile_onnx(path, &o, &traced, NULL));
        const void *data;
        uint64_t size;
        lm_replay *r;
        CHECK_OK(lm_binary_data(traced, &data, &size));
        CHECK_OK(lm_replay_open(data, size, &r));
        CHECK_OK(lm_replay_run(r, dev, NULL, &rt));
        CHECK_OK(lm_replay_get_output(r, "y", y1, sizeof y1));
        CHECK(memcmp(y1, y2, sizeof y1) == 0);
        lm_replay_close(r);
        lm_binary_free(traced);
    }
    CHECK_OK(lm_device_close(dev));
}

/* trace_region_size: the trace region of the device a traced compile opens,
 * recorded for its replays; a trace larger than the region is refused with
 * its size and the way out; the option without trace, or with the caller's
 * device, is refused. (test_compile_cli.sh reads the region from the
 * binary.) */
static void test_trace_region(void) {
    float w[12], b[4], x[15], y[20], want[20];
    for (int i = 0; i < 12; i++)
        w[i] = (float)(i % 5) - 2.0f;
    for (int i = 0; i < 4; i++)
        b[i] = 0.25f * (float)i;
    for (int i = 0; i < 15; i++)
        x[i] = (float)i * 0.2f - 1.0f;
    const char *path = save(mlp_model(w, b));
    lmfe_compile_options o;
    lmfe_compile_options_init(&o);
    lm_binary *bin;
    CHECK_OK(lmfe_compile_onnx(path, &o, &bin, NULL));
    CHECK_OK(replay1(bin, "x", x, 15, "y", want, 20, NULL));
    lm_binary_free(bin);

    o.trace = true;
    o.trace_region_size = 32u << 20;
    CHECK_OK(lmfe_compile_onnx(path, &o, &bin, NULL));
    CHECK_OK(replay1(bin, "x", x, 15, "y", y, 20, NULL));
    CHECK(!memcmp(y, want, sizeof y));
    lm_binary_free(bin);

    o.trace_region_size = 64; /* far less than the model's trace */
    CHECK_FAILS(lmfe_compile_onnx(path, &o, &bin, NULL), LM_ERR_OUT_OF_DEVICE_MEMORY,
                "the model's trace is larger than the device's trace region: compile with a "
                "larger --trace-region (options: trace_region_size");
    CHECK_ERROR_HAS("bytes does not fit the trace region");
    o.trace_region_size = 1000; /* not a multiple of 32 */
    CHECK_FAILS(lmfe_compile_onnx(path, &o, &bin, NULL), LM_ERR_INVALID_ARGUMENT,
                "opts->trace_region_size");
    o.trace_region_size = 32u << 20;
    o.trace = false;
    CHECK_FAILS(lmfe_compile_onnx(path, &o, &bin, NULL), LM_ERR_INVALID_ARGUMENT,
                "opts->trace_region_size is the trace region of the device a traced compile "
                "opens: set opts->trace too");
    o.trace = true;
    lm_device *dev;
    CHECK_OK(lm_device_open(NULL, &dev));
    o.device = dev;
    CHECK_FAILS(lmfe_compile_onnx(path, &o, &bin, NULL), LM_ERR_INVALID_ARGUMENT,
                "open opts->device with lm_device_options.trace_region_size");
    CHECK_OK(lm_device_close(dev));
}

/* An average pooling whose windows take different divisors (padding not
 * counted, ceil mode), traced: its divisors are made before the trace, which
 * may not upload them, and the traced binary gives the eager one's bits. */
static void test_trace_avg_pool(void) {
    enum { C = 2, H = 6, W = 7, OH = 4, OW = 4 };
    int64_t xd[4] = {1, C, H, W}, yd[4] = {1, C, OH, OW};
    float x[C * H * W], y1[C * OH * OW], y2[C * OH * OW];
    for (int i = 0; i < C * H * W; i++)
        x[i] = (float)((i * 13) % 17) / 8 - 1;
    Onnx__GraphProto *g = ob_graph("avg_pool");
    Onnx__ModelProto *m = ob_model(g);
    ob_input(g, ob_vi("x", ob_tensor_type(F32, 4, xd, NULL)));
    ob_output(g, ob_vi("y", ob_tensor_type(F32, 4, yd, NULL)));
    Onnx__NodeProto *n =
        ob_node(g, "AveragePool", "pool", (const char *[]){"x", NULL}, (const char *[]){"y", NULL});
    ob_attr_is(n, "kernel_shape", (const int64_t[]){3, 3}, 2);
    ob_attr_is(n, "strides", (const int64_t[]){2, 2}, 2);
    ob_attr_is(n, "pads", (const int64_t[]){1, 1, 1, 1}, 4);
    ob_attr_i(n, "ceil_mode", 1);
    const char *path = save(m);
    lmfe_compile_options o;
    lmfe_compile_options_init(&o);
    lm_binary *eager, *traced;
    lm_replay_report re, rt;
    CHECK_OK(lmfe_compile_onnx(path, &o, &eager, NULL));
    o.trace = true;
    CHECK_OK(lmfe_compile_onnx(path, &o, &traced, NULL));
    CHECK_OK(replay1(eager, "x", x, C * H * W, "y", y1, C * OH * OW, &re));
    CHECK_OK(replay1(traced, "x", x, C * H * W, "y", y2, C * OH * OW, &rt));
    CHECK(!memcmp(y1, y2, sizeof y1));
    lm_binary_free(eager);
    lm_binary_free(traced);
    /* ONNX's rule: the mean of each window's elements inside the image. */
    for (int c = 0; c < C; c++)
        for (int oy = 0; oy < OH; oy++)
            for (int ox = 0; ox < OW; ox++) {
                double sum = 0;
                int count = 0;
                for (int iy = oy * 2 - 1; iy < oy * 2 + 2; iy++)
                    for (int ix = ox * 2 - 1; ix < ox * 2 + 2; ix++)
                        if (iy >= 0 && iy < H && ix >= 0 && ix < W) {
                            sum += x[(c * H + iy) * W + ix];
                            count++;
                        }
                CHECK(fabs(y1[(c * OH + oy) * OW + ox] - sum / count) <= 1e-6);
            }
}

/* bf16: the report says which nodes compute below float32. */
static void test_bf16_notes(void) {
    const char *path = save(batch_model());
    lmfe_compile_options o;
    lmfe_compile_options_init(&o);
    lmfe_dim_binding dim = {"batch", 2};
    o.dims = &dim;
    o.dim_count = 1;
    o.dtype = LMFE_DTYPE_BF16;
    lm_binary *bin;
    lmfe_report rep;
    CHECK_OK(lmfe_compile_onnx(path, &o, &bin, &rep));
    CHECK(rep.lowered_nodes == 1 && rep.notes &&
          strstr(rep.notes, "1 of 1 device nodes compute in bfloat16"));
    float x[8] = {0, 1, -1, 2, -2, 3, -3, 4}, y[8];
    CHECK_OK(replay1(bin, "x", x, 8, "y", y, 8, NULL));
    for (int i = 0; i < 8; i++)
        CHECK(fabsf(y[i] - 1.0f / (1.0f + expf(-x[i]))) <= 1.0f / 128);
    lmfe_report_free(&rep);
    lm_binary_free(bin);
}

/* --dtype bfp8 stores a MatMul's and a Gemm's constant weights as
 * bfloat8_b, as it does convolution weights: a run of 16 weights along a
 * stored row ([K, N], a Gemm's transB one transposed on the host) shares
 * one exponent there, so next to a weight of 64 one of 0.01 is lost, where
 * bfloat16 keeps it. Columns 0 and 16 of W are 64s, the others 0.01s; x is
 * 0 at k = 0 and 16 and 1 elsewhere: the 64 columns sum to 30 * 64, the
 * others to 0.3, or about 0 with the weights lowered. The weights go up as
 * bfloat8_b from the host: a replay launches what the bf16 mode's does, no
 * typecast of them. */
static void test_bfp8_weights(void) {
    static float w[32 * 32], wt[32 * 32], x[32], y[32];
    for (int k = 0; k < 32; k++)
        for (int j = 0; j < 32; j++) {
            w[k * 32 + j] = j % 16 == 0 ? 64.0f : 0.01f; /* MatMul: [K, N] */
            wt[j * 32 + k] = w[k * 32 + j];              /* Gemm, transB: [N, K] */
        }
    for (int k = 0; k < 32; k++)
        x[k] = k % 16 == 0 ? 0.0f : 1.0f;
    int64_t xd[2] = {1, 32}, wd[2] = {32, 32};
    Onnx__GraphProto *g = ob_graph("bfp8");
    Onnx__ModelProto *m = ob_model(g);
    ob_input(g, ob_vi("x", ob_tensor_type(F32, 2, xd, NULL)));
    ob_output(g, ob_vi("mm", ob_tensor_type(F32, 2, xd, NULL)));
    ob_output(g, ob_vi("gemm", ob_tensor_type(F32, 2, xd, NULL)));
    f32_init(g, "W", 2, wd, w, 32 * 32);
    f32_init(g, "Wt", 2, wd, wt, 32 * 32);
    ob_node(g, "MatMul", "mm", (const char *[]){"x", "W", NULL}, (const char *[]){"mm", NULL});
    ob_attr_i(ob_node(g, "Gemm", "gemm", (const char *[]){"x", "Wt", NULL},
                      (const char *[]){"gemm", NULL}),
              "transB", 1);
    const char *path = save(m);
    uint64_t launches[2] = {0, 0};
    for (int mode = 0; mode < 2; mode++) {
        lmfe_compile_options o;
        lmfe_compile_options_init(&o);
        o.dtype = mode ? LMFE_DTYPE_BFP8 : LMFE_DTYPE_BF16;
        lm_binary *bin;
        lmfe_report rep;
        CHECK_OK(lmfe_compile_onnx(path, &o, &bin, &rep));
        CHECK(rep.notes && (strstr(rep.notes, "bfloat8_b weights") != NULL) == (mode == 1));
        for (int out = 0; out < 2; out++) {
            lm_replay_report rr = {0};
            CHECK_OK(replay1(bin, "x", x, 32, out ? "gemm" : "mm", y, 32, &rr));
            launches[mode] = rr.programs;
            for (int j = 0; j < 32; j++)
                CHECK(j % 16 == 0 ? fabsf(y[j] - 1920.0f) <= 16.0f
                      : mode      ? fabsf(y[j] - 0.3f) > 0.1f
                                  : fabsf(y[j] - 0.3f) < 0.01f);
        }
        lmfe_report_free(&rep);
        lm_binary_free(bin);
    }
    CHECK(launches[0] > 0);
    CHECK_EQ_U64(launches[1], launches[0]);
}

/* The Gemm tests' model: fixed w [n, k], bias [n] and x [m, k], and a graph
 * taking x with W and B as initializers and giving y = Gemm(x, W, B,
 * transB = 1), [m, n]; *out_model is the graph's model. */
static Onnx__GraphProto *gemm_graph(const char *name, int m, int k, int n, float *w, float *bias,
                                    float *x, Onnx__ModelProto **out_model) {
    for (int i = 0; i < n * k; i++)
        w[i] = (float)((i * 37) % 29) / 28 - 0.5f;
    for (int i = 0; i < n; i++)
        bias[i] = (float)i / 16 - 0.5f;
    for (int i = 0; i < m * k; i++)
        x[i] = (float)((i * 53) % 31) / 30 - 0.5f;
    int64_t xd[2] = {m, k}, wd[2] = {n, k}, bd[1] = {n}, yd[2] = {m, n};
    Onnx__GraphProto *g = ob_graph(name);
    *out_model = ob_model(g);
    ob_input(g, ob_vi("x", ob_tensor_type(F32, 2, xd, NULL)));
    ob_output(g, ob_vi("y", ob_tensor_type(F32, 2, yd, NULL)));
    f32_init(g, "W", 2, wd, w, (size_t)n * k);
    f32_init(g, "B", 1, bd, bias, (size_t)n);
    ob_attr_i(ob_node(g, "Gemm", "fc", (const char *[]){"x", "W", "B", NULL},
                      (const char *[]){"y", NULL}),
              "transB", 1);
    return g;
}

/* Products whose results are the model's outputs and nothing else's pack
 * them as the outputs' rows, which the binary then gives as they are: two
 * Gemms (one with its Relu fused) launch once each, and an input given
 * back as an output (an Identity) is copied, its buffer being the input's. */
static void test_output_rows(void) {
    enum { M = 8, K = 64, N = 16 };
    static float w[N * K], bias[N], x[M * K], y[M * N], z[M * N], xi[M * K];
    int64_t xd[2] = {M, K}, yd[2] = {M, N};
    Onnx__ModelProto *m;
    Onnx__GraphProto *g = gemm_graph("output_rows", M, K, N, w, bias, x, &m);
    ob_output(g, ob_vi("z", ob_tensor_type(F32, 2, yd, NULL)));
    ob_output(g, ob_vi("xi", ob_tensor_type(F32, 2, xd, NULL)));
    ob_attr_i(
        ob_node(g, "Gemm", "fc2", (const char *[]){"x", "W", NULL}, (const char *[]){"h", NULL}),
        "transB", 1);
    ob_node(g, "Relu", "relu", (const char *[]){"h", NULL}, (const char *[]){"z", NULL});
    ob_node(g, "Identity", "same", (const char *[]){"x", NULL}, (const char *[]){"xi", NULL});
    lm_binary *bin;
    lm_replay *r;
    lm_replay_report rr;
    CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, NULL));
    CHECK_OK(replay_open(bin, &r));
    CHECK_OK(lm_replay_set_input(r, "x", x, sizeof x));
    CHECK_OK(lm_replay_run(r, NULL, NULL, &rr));
    CHECK_OK(lm_replay_get_output(r, "y", y, sizeof y));
    CHECK_OK(lm_replay_get_output(r, "z", z, sizeof z));
    CHECK_OK(lm_replay_get_output(r, "xi", xi, sizeof xi));
    lm_replay_close(r);
    lm_binary_free(bin);
    CHECK_EQ_U64(rr.programs, 3); /* the two products and the input's copy */
    CHECK(!memcmp(xi, x, sizeof x));
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double dot = 0;
            for (int k = 0; k < K; k++)
                dot += (double)x[i * K + k] * w[j * K + k];
            CHECK(fabs(y[i * N + j] - (dot + bias[j])) <= 1e-5);
            CHECK(fabs(z[i * N + j] - (dot > 0 ? dot : 0)) <= 1e-5);
        }
}

/* In the bf16 mode a float32 output that no product packs is untilized
 * into float32 rows in one launch (lmnn_to_layout_as), not a typecast and
 * an untilize. */
static void test_bf16_output(void) {
    enum { R = 4, C = 40 };
    float x[R * C], y[R * C];
    for (int i = 0; i < R * C; i++)
        x[i] = (float)(i % 17) / 4 - 2;
    int64_t d[2] = {R, C};
    Onnx__GraphProto *g = ob_graph("bf16_output");
    Onnx__ModelProto *m = ob_model(g);
    ob_input(g, ob_vi("x", ob_tensor_type(F32, 2, d, NULL)));
    ob_output(g, ob_vi("y", ob_tensor_type(F32, 2, d, NULL)));
    ob_node(g, "Sigmoid", "s", (const char *[]){"x", NULL}, (const char *[]){"y", NULL});
    lmfe_compile_options o;
    lmfe_compile_options_init(&o);
    o.dtype = LMFE_DTYPE_BF16;
    lm_binary *bin;
    lm_replay *r;
    CHECK_OK(lmfe_compile_onnx(save(m), &o, &bin, NULL));
    CHECK_OK(replay_profiled(bin, x, sizeof x, &r));
    CHECK_OK(lm_replay_get_output(r, "y", y, sizeof y));
    const lm_profile_entry *e;
    size_t n;
    uint64_t output_launches = 0;
    CHECK_OK(lm_replay_get_profile(r, &e, &n));
    for (size_t i = 0; i < n; i++)
        if (!strcmp(e[i].label, "output")) output_launches = e[i].launches;
    lm_replay_close(r);
    lm_binary_free(bin);
    CHECK_EQ_U64(output_launches, 1);
    for (int i = 0; i < R * C; i++)
        CHECK(fabs(y[i] - 1 / (1 + exp(-x[i]))) <= 1.0 / 128);
}

/* In the bf16 mode a Gemm reads a float32 graph input's rows itself,
 * rounding them to bfloat16 as it tilizes them (lmnn_matmul_options'
 * input_dtype), and packs the model's float32 output rows itself
 * (output_layout): one launch in all, none to tilize or typecast the input
 * or to typecast and untilize the output. */
static void test_bf16_gemm_input(void) {
    enum { M = 8, K = 64, N = 16 };
    static float w[N * K], bias[N], x[M * K], y[M * N];
    Onnx__ModelProto *m;
    gemm_graph("bf16_gemm", M, K, N, w, bias, x, &m);
    lmfe_compile_options o;
    lmfe_compile_options_init(&o);
    o.dtype = LMFE_DTYPE_BF16;
    lm_binary *bin;
    CHECK_OK(lmfe_compile_onnx(save(m), &o, &bin, NULL));
    lm_replay_report rr = {0};
    CHECK_OK(replay1(bin, "x", x, M * K, "y", y, M * N, &rr));
    lm_binary_free(bin);
    CHECK_EQ_U64(rr.programs, 1);
    /* bfloat16 x and W, float32 accumulation and result. */
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double want = bias[j], scale = fabs(bias[j]);
            for (int k = 0; k < K; k++) {
                want += (double)x[i * K + k] * w[j * K + k];
                scale += fabs((double)x[i * K + k] * w[j * K + k]);
            }
            CHECK(fabs(y[i * N + j] - want) <= scale / 64);
        }
}

/* Float32's lowest as dtype mode `mode` keeps it: bfloat16's (0xFF7F), not
 * -inf, in the bfloat16 modes. */
static float lowest_in(lmfe_dtype_mode mode) {
    return mode == LMFE_DTYPE_FP32 ? -FLT_MAX : -3.38953139e38f;
}

/* Compiles the model at `path` in dtype mode `mode` and replays it once,
 * input "x" to output "y". */
static void run_in_mode(const char *path, lmfe_dtype_mode mode, const float *x, size_t xn, float *y,
                        size_t yn) {
    lmfe_compile_options o;
    lmfe_compile_options_init(&o);
    o.dtype = mode;
    lm_binary *bin;
    CHECK_OK(lmfe_compile_onnx(path, &o, &bin, NULL));
    CHECK_OK(replay1(bin, "x", x, xn, "y", y, yn, NULL));
    lm_binary_free(bin);
}

/* An additive attention mask as PyTorch exports it, (1 - mask) * float32's
 * lowest with the mask a run-time input: in the bfloat16 modes the constant
 * must stay finite, or the unmasked entries' 0 * -inf makes the softmax
 * NaN. */
static void test_bf16_saturated_constants(void) {
    enum { R = 2, C = 8 };
    static const lmfe_dtype_mode modes[] = {LMFE_DTYPE_FP32, LMFE_DTYPE_BF16, LMFE_DTYPE_BFP8};
    float s[R * C], mask[R * C], p[R * C], ext[R * C];
    for (int i = 0; i < R * C; i++) {
        s[i] = (float)((i * 7) % 11) / 4 - 1;
        mask[i] = i % C < (i < C ? C : 5); /* row 1: the last 3 masked */
    }
    int64_t d[2] = {R, C};
    float one = 1, lowest = -FLT_MAX;
    Onnx__GraphProto *g = ob_graph("masked_softmax");
    Onnx__ModelProto *m = ob_model(g);
    ob_input(g, ob_vi("s", ob_tensor_type(F32, 2, d, NULL)));
    ob_input(g, ob_vi("m", ob_tensor_type(F32, 2, d, NULL)));
    ob_output(g, ob_vi("p", ob_tensor_type(F32, 2, d, NULL)));
    ob_output(g, ob_vi("ext", ob_tensor_type(F32, 2, d, NULL)));
    f32_init(g, "one", 0, NULL, &one, 1);
    f32_init(g, "lowest", 0, NULL, &lowest, 1);
    ob_node(g, "Sub", "not", (const char *[]){"one", "m", NULL}, (const char *[]){"dropped", NULL});
    ob_node(g, "Mul", "ext", (const char *[]){"dropped", "lowest", NULL},
            (const char *[]){"ext", NULL});
    ob_node(g, "Add", "z", (const char *[]){"s", "ext", NULL}, (const char *[]){"z", NULL});
    ob_attr_i(ob_node(g, "Softmax", "p", (const char *[]){"z", NULL}, (const char *[]){"p", NULL}),
              "axis", -1);
    const char *path = save(m);
    for (size_t k = 0; k < sizeof modes / sizeof *modes; k++) {
        lmfe_compile_options o;
        lmfe_compile_options_init(&o);
        o.dtype = modes[k];
        lm_binary *bin;
        lm_replay *r;
        CHECK_OK(lmfe_compile_onnx(path, &o, &bin, NULL));
        CHECK_OK(replay_open(bin, &r));
        CHECK_OK(lm_replay_set_input(r, "s", s, sizeof s));
        CHECK_OK(lm_replay_set_input(r, "m", mask, sizeof mask));
        CHECK_OK(lm_replay_run(r, NULL, NULL, NULL));
        CHECK_OK(lm_replay_get_output(r, "p", p, sizeof p));
        CHECK_OK(lm_replay_get_output(r, "ext", ext, sizeof ext));
        lm_replay_close(r);
        lm_binary_free(bin);
        float far = lowest_in(modes[k]);
        for (int i = 0; i < R; i++) {
            double sum = 0;
            for (int j = 0; j < C; j++)
                if (mask[i * C + j]) sum += exp(s[i * C + j]);
            for (int j = 0; j < C; j++) {
                int e = i * C + j;
                CHECK(ext[e] == (mask[e] ? 0 : far));
                double want = mask[e] ? exp(s[e]) / sum : 0;
                if (fabs(p[e] - want) > 1.0 / 64)
                    fprintf(stderr, "  dtype mode %d: p[%d] = %g, expected %g\n", (int)modes[k], e,
                            (double)p[e], want);
                CHECK(fabs(p[e] - want) <= 1.0 / 64);
            }
        }
    }
    /* A weight's too: a transposed convolution's bias. */
    int64_t xd[4] = {1, 1, 2, 2}, wd[4] = {1, 2, 1, 1}, bd[1] = {2}, yd[4] = {1, 2, 2, 2};
    float w[2] = {1, 2}, bias[2] = {-FLT_MAX, 0.5f}, x[4] = {1, -2, 3, 0.25f}, y[8];
    g = ob_graph("conv_far_bias");
    m = ob_model(g);
    ob_input(g, ob_vi("x", ob_tensor_type(F32, 4, xd, NULL)));
    ob_output(g, ob_vi("y", ob_tensor_type(F32, 4, yd, NULL)));
    f32_init(g, "W", 4, wd, w, 2);
    f32_init(g, "B", 1, bd, bias, 2);
    ob_node(g, "ConvTranspose", "conv", (const char *[]){"x", "W", "B", NULL},
            (const char *[]){"y", NULL});
    path = save(m);
    for (size_t k = 0; k < sizeof modes / sizeof *modes; k++) {
        run_in_mode(path, modes[k], x, 4, y, 8);
        for (int i = 0; i < 4; i++) {
            CHECK(y[i] == lowest_in(modes[k]));
            CHECK(fabs(y[4 + i] - (2 * x[i] + 0.5)) <= 1.0 / 64);
        }
    }
    /* And a product's constant operand, where 0 * -inf would be NaN too. */
    int64_t md[2] = {2, 2};
    float b[4] = {-FLT_MAX, 1, 2, 3}, eye[4] = {1, 0, 0, 1}, z[4];
    g = ob_graph("matmul_far_weight");
    m = ob_model(g);
    ob_input(g, ob_vi("x", ob_tensor_type(F32, 2, md, NULL)));
    ob_output(g, ob_vi("y", ob_tensor_type(F32, 2, md, NULL)));
    f32_init(g, "B", 2, md, b, 4);
    ob_node(g, "MatMul", "mm", (const char *[]){"x", "B", NULL}, (const char *[]){"y", NULL});
    path = save(m);
    for (size_t k = 0; k < sizeof modes / sizeof *modes; k++) {
        run_in_mode(path, modes[k], eye, 4, z, 4);
        CHECK(z[2] == 2 && z[3] == 3);
        if (modes[k] != LMFE_DTYPE_BFP8) {
            CHECK(z[0] == lowest_in(modes[k]));
            CHECK(z[1] == 1);
        } else {
            /* bfloat8_b's largest magnitude is 127/64 * 2^127; the 1 shares
             * the far value's block exponent and is lost, but stays finite. */
            CHECK(z[0] <= -3.3e38f && isfinite(z[0]) && isfinite(z[1]));
        }
    }
}

static void test_inspect(void) {
    lmfe_model_info info;
    CHECK_OK(lmfe_inspect_onnx(save(batch_model()), &info));
    CHECK(info.input_count == 1 && info.output_count == 1 && info.opset == 13);
    CHECK(info.inputs[0].rank == 2 && info.inputs[0].dims[0] == -1 &&
          !strcmp(info.inputs[0].symbols[0], "batch") && !info.inputs[0].needs_value);
    lmfe_model_info_free(&info);
    /* An input feeding Reshape's shape must be given at compile time. */
    Onnx__GraphProto *g = ob_graph("r");
    Onnx__ModelProto *m = ob_model(g);
    int64_t d[1] = {6}, sd[1] = {2};
    ob_input(g, ob_vi("x", ob_tensor_type(F32, 1, d, NULL)));
    ob_input(g, ob_vi("shape", ob_tensor_type(I64, 1, sd, NULL)));
    ob_output(g, ob_vi("y", ob_tensor_type(F32, -1, NULL, NULL)));
    ob_node(g, "Reshape", "r", (const char *[]){"x", "shape", NULL}, (const char *[]){"y", NULL});
    const char *path = save(m);
    CHECK_OK(lmfe_inspect_onnx(path, &info));
    CHECK(info.input_count == 2 && !info.inputs[0].needs_value && info.inputs[1].needs_value);
    lmfe_model_info_free(&info);
    lm_binary *bin;
    CHECK_FAILS(lmfe_compile_onnx(path, NULL, &bin, NULL), LM_ERR_UNSUPPORTED,
                "node 'r' (Reshape): input 1 ('shape') decides the output shape, so its value "
                "must be known at compile time: give it as a constant (--const shape=FILE)");
    int64_t shape[2] = {2, 3};
    lmfe_tensor_value k = {"shape", I64, 1, {2}, shape, sizeof shape};
    lmfe_compile_options o;
    lmfe_compile_options_init(&o);
    o.constants = &k;
    o.constant_count = 1;
    CHECK_OK(lmfe_compile_onnx(path, &o, &bin, NULL));
    lm_binary_free(bin);
    (void)i64_init;

    /* An If picking between an empty and a full optional: its condition
     * decides whether the output exists, so inspect asks for its value and
     * the compile without it says how to give it. */
    g = ob_graph("ifopt");
    m = ob_model(g);
    ob_input(g, ob_vi("cond", ob_tensor_type(9, 0, NULL, NULL)));
    ob_input(g, ob_vi("x", ob_tensor_type(F32, 1, d, NULL)));
    ob_output(g, ob_vi("y", ob_optional_type(ob_tensor_type(F32, 1, d, NULL))));
    Onnx__GraphProto *full = ob_graph("full"), *empty = ob_graph("empty");
    ob_output(full, ob_vi("o1", ob_optional_type(ob_tensor_type(F32, 1, d, NULL))));
    ob_node(full, "Optional", NULL, (const char *[]){"x", NULL}, (const char *[]){"o1", NULL});
    ob_output(empty, ob_vi("o2", ob_optional_type(ob_tensor_type(F32, 1, d, NULL))));
    Onnx__NodeProto *none = ob_node(empty, "Optional", NULL, NULL, (const char *[]){"o2", NULL});
    Onnx__AttributeProto *ty =
        ob_attr(none, "type", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO);
    ty->tp = ob_tensor_type(F32, 1, d, NULL);
    Onnx__NodeProto *pick =
        ob_node(g, "If", "pick", (const char *[]){"cond", NULL}, (const char *[]){"y", NULL});
    graph_attr(pick, "then_branch", empty);
    graph_attr(pick, "else_branch", full);
    path = save(m);
    CHECK_OK(lmfe_inspect_onnx(path, &info));
    CHECK(info.input_count == 2 && info.inputs[0].needs_value && !info.inputs[1].needs_value);
    lmfe_model_info_free(&info);
    CHECK_FAILS(lmfe_compile_onnx(path, NULL, &bin, NULL), LM_ERR_UNSUPPORTED,
                "output 0 is an empty optional in then_branch and an optional holding a value in "
                "else_branch: give it as a constant (--const cond=FILE)");
    /* The same kind on both sides: the pick is left to the run. */
    graph_attr(pick, "then_branch", full);
    pick->n_attribute = 2;
    pick->attribute[0] = pick->attribute[2];
    path = save(m);
    CHECK_OK(lmfe_inspect_onnx(path, &info));
    CHECK(info.input_count == 2 && !info.inputs[0].needs_value);
    lmfe_model_info_free(&info);
}

/* LpPool's refusals that are invalid models (the numbers are checked by
 * the built cases against PyTorch). */
static void test_lppool_refusals(void) {
    int64_t d2[2] = {3, 4};
    Onnx__GraphProto *g = ob_graph("lp");
    Onnx__ModelProto *m = ob_model(g);
    ob_input(g, ob_vi("x", ob_tensor_type(F32, 2, d2, NULL)));
    ob_output(g, ob_vi("y", ob_tensor_type(F32, 2, d2, NULL)));
    Onnx__NodeProto *n =
        ob_node(g, "GlobalLpPool", "lp", (const char *[]){"x", NULL}, (const char *[]){"y", NULL});
    lm_binary *bin;
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'lp' (GlobalLpPool): input must be (N, C, spatial...), given rank 2");
    int64_t d4[4] = {1, 2, 4, 4};
    g->input[0] = ob_vi("x", ob_tensor_type(F32, 4, d4, NULL));
    n->op_type = ob_str("LpPool");
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'lp' (LpPool): attribute kernel_shape is missing");
    ob_attr_is(n, "kernel_shape", (const int64_t[]){2, 2}, 2);
    ob_attr_s(n, "auto_pad", "MIDDLE");
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'lp' (LpPool): attribute auto_pad=MIDDLE is not valid");
    n->n_attribute--;
    ob_attr_is(n, "dilations", (const int64_t[]){2}, 1);
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'lp' (LpPool): attribute dilations has 1 values for 2 spatial dims");
}

/* MaxRoiPool's attributes and inputs (its values are built cases). */
/* A CumSum of run-time data sums in float32, exact for integers below
 * 2^24: a longer axis is refused before anything runs. */
static void test_cumsum_limit(void) {
    int64_t d[1] = {((int64_t)1 << 24) + 1};
    Onnx__GraphProto *g = ob_graph("cs");
    Onnx__ModelProto *m = ob_model(g);
    ob_input(g, ob_vi("x", ob_tensor_type(F32, 1, d, NULL)));
    ob_output(g, ob_vi("y", ob_tensor_type(F32, 1, d, NULL)));
    i64_init(g, "axis", 1, (const int64_t[]){0});
    ob_node(g, "CumSum", "cs", (const char *[]){"x", "axis", NULL}, (const char *[]){"y", NULL});
    lm_binary *bin = NULL;
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_UNSUPPORTED,
                "node 'cs' (CumSum): an axis of 16777217 elements is too long (at most 16777216: "
                "the sums are float32, exact for integers below that)");
    CHECK(bin == NULL);
    ob_free_all();
}

/* A large constant of one value is filled on the device, not stored: the
 * binary of x + 2.5 (a 256 x 256 constant, 256 KiB of data) is smaller by
 * about that than the one of x + a ramp of the same shape, and both give
 * the sums. Under 4096 elements a constant is stored (one write). */
static lm_status add_const_binary(const float *c, int64_t side, lm_binary **out) {
    int64_t d[2] = {side, side};
    Onnx__GraphProto *g = ob_graph("add");
    Onnx__ModelProto *m = ob_model(g);
    ob_input(g, ob_vi("x", ob_tensor_type(F32, 2, d, NULL)));
    ob_output(g, ob_vi("y", ob_tensor_type(F32, 2, d, NULL)));
    f32_init(g, "c", 2, d, c, (size_t)(side * side));
    ob_node(g, "Add", "add", (const char *[]){"x", "c", NULL}, (const char *[]){"y", NULL});
    lm_status st = lmfe_compile_onnx(save(m), NULL, out, NULL);
    ob_free_all();
    return st;
}

static void test_uniform_constant(void) {
    enum { SIDE = 256, N = SIDE * SIDE };
    float *c = malloc(N * sizeof *c), *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
    CHECK(c && x && y);
    if (!c || !x || !y) goto done;
    for (int i = 0; i < N; i++) {
        c[i] = 2.5f;
        x[i] = (float)(i % 97) - 40.0f;
    }
    lm_binary *fill = NULL, *ramp = NULL;
    CHECK_OK(add_const_binary(c, SIDE, &fill));
    for (int i = 0; i < N; i++)
        c[i] = (float)(i % 251);
    CHECK_OK(add_const_binary(c, SIDE, &ramp));
    uint64_t fill_size = 0, ramp_size = 0;
    CHECK_OK(lm_binary_size(fill, &fill_size));
    CHECK_OK(lm_binary_size(ramp, &ramp_size));
    CHECK(fill_size + N * sizeof(float) * 3 / 4 < ramp_size);
    CHECK_OK(replay1(fill, "x", x, N, "y", y, N, NULL));
    bool same = true;
    for (int i = 0; i < N; i++)
        same &= y[i] == x[i] + 2.5f;
    CHECK(same);
    CHECK_OK(replay1(ramp, "x", x, N, "y", y, N, NULL));
    same = true;
    for (int i = 0; i < N; i++)
        same &= y[i] == x[i] + (float)(i % 251);
    CHECK(same);
    lm_binary_free(fill);
    lm_binary_free(ramp);
done:
    free(c);
    free(x);
    free(y);
}

static void test_maxroipool_refusals(void) {
    int64_t dx[4] = {1, 2, 8, 8}, dr[2] = {3, 5}, dy[4] = {3, 2, 2, 2};
    Onnx__GraphProto *g = ob_graph("rp");
    Onnx__ModelProto *m = ob_model(g);
    ob_input(g, ob_vi("x", ob_tensor_type(F32, 4, dx, NULL)));
    ob_input(g, ob_vi("rois", ob_tensor_type(F32, 2, dr, NULL)));
    ob_output(g, ob_vi("y", ob_tensor_type(F32, 4, dy, NULL)));
    Onnx__NodeProto *n = ob_node(g, "MaxRoiPool", "rp", (const char *[]){"x", "rois", NULL},
                                 (const char *[]){"y", NULL});
    lm_binary *bin;
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'rp' (MaxRoiPool): attribute pooled_shape is missing");
    Onnx__AttributeProto *ps = ob_attr_is(n, "pooled_shape", (const int64_t[]){2, 2, 2}, 3);
    CHECK_FAILS(
        lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
        "node 'rp' (MaxRoiPool): pooled_shape must be (height, width), each from 1 to 4096");
    ps->n_ints = 2;
    ps->ints[1] = 0;
    CHECK_FAILS(
        lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
        "node 'rp' (MaxRoiPool): pooled_shape must be (height, width), each from 1 to 4096");
    ps->ints[1] = 2;
    Onnx__AttributeProto *sc =
        ob_attr(n, "spatial_scale", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
    sc->has_f = 1;
    sc->f = 0;
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'rp' (MaxRoiPool): spatial_scale 0 (a finite value above 0)");
    sc->f = 0.5f;
    int64_t d4[2] = {3, 4};
    g->input[1] = ob_vi("rois", ob_tensor_type(F32, 2, d4, NULL));
    CHECK_FAILS(
        lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
        "node 'rp' (MaxRoiPool): rois must be (num_rois, 5): [batch_id, x1, y1, x2, y2] each");
    g->input[1] = ob_vi("rois", ob_tensor_type(ONNX__TENSOR_PROTO__DATA_TYPE__INT64, 2, dr, NULL));
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'rp' (MaxRoiPool): X and rois must be float tensors of one type");
    g->input[1] = ob_vi("rois", ob_tensor_type(F32, 2, dr, NULL));
    g->input[0] = ob_vi("x", ob_tensor_type(F32, 3, dx, NULL));
    CHECK_FAILS(lmfe_compile_onnx(save(m), NULL, &bin, NULL), LM_ERR_INVALID_FILE,
                "node 'rp' (MaxRoiPool): X must be (N, C, H, W)");
    /* Fixed, it compiles. */
    g->input[0] = ob_vi("x", ob_tensor_type(F32, 4, dx, NULL));
    CHECK_OK(lmfe_compile_onnx(save(m), NULL, &bin, NULL));
    lm_binary_free(bin);
}

int main(void) {
    snprintf(model_path, sizeof model_path, "%s/test_fe_compile_%d.onnx",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
    TEST_RUN(test_mlp_fused_folded_dead);
    TEST_RUN(test_constant_masks);
    TEST_RUN(test_reshape_transpose_fusion);
    TEST_RUN(test_gelu_fusion);
    TEST_RUN(test_rms_norm_fusion);
    TEST_RUN(test_pad_folded);
    TEST_RUN(test_conv1d_images);
    TEST_RUN(test_pool1d_images);
    TEST_RUN(test_variadic_folds);
    TEST_RUN(test_shape_op_folds);
    TEST_RUN(test_graph_outputs);
    TEST_RUN(test_padded_limits);
    TEST_RUN(test_topk_of_selection);
    TEST_RUN(test_ceil_pool_images);
    TEST_RUN(test_reshape_views);
    TEST_RUN(test_depth_to_space_images);
    TEST_RUN(test_space_depth_forms);
    TEST_RUN(test_conv_pool_fused);
    TEST_RUN(test_pointwise_convs);
    TEST_RUN(test_channels_last);
    TEST_RUN(test_group_norm_spelled);
    TEST_RUN(test_group_normalization);
    TEST_RUN(test_group_norm_images);
    TEST_RUN(test_conv3d_volume);
    TEST_RUN(test_permutations_not_made);
    TEST_RUN(test_keys_split);
    TEST_RUN(test_concat_slices);
    TEST_RUN(test_grouped_query);
    TEST_RUN(test_gather_run);
    TEST_RUN(test_scale_fused);
    TEST_RUN(test_heads_joined_seq_first);
    TEST_RUN(test_heads_joined);
    TEST_RUN(test_window_partitions);
    TEST_RUN(test_regroup_by_steps);
    TEST_RUN(test_channel_shuffle);
    TEST_RUN(test_regroup_ones);
    TEST_RUN(test_weights_stored_once);
    TEST_RUN(test_profile_labels);
    TEST_RUN(test_conv_bn_relu_fusion);
    TEST_RUN(test_binding_and_refusals);
    TEST_RUN(test_unsupported);
    TEST_RUN(test_resize_refusals);
    TEST_RUN(test_resize_antialias_limit);
    TEST_RUN(test_spectral_refusals);
    TEST_RUN(test_gridsample_refusals);
    TEST_RUN(test_maxpool_indices_refusals);
    TEST_RUN(test_det_refusals);
    TEST_RUN(test_compress_refusals);
    TEST_RUN(test_sequence_refusals);
    TEST_RUN(test_sequence_io);
    TEST_RUN(test_sequence_map_refusals);
    TEST_RUN(test_optional_io);
    TEST_RUN(test_training_refusals);
    TEST_RUN(test_gradient_refusals);
    TEST_RUN(test_random);
    TEST_RUN(test_multinomial);
    TEST_RUN(test_seed_input);
    TEST_RUN(test_scan8_refusals);
    TEST_RUN(test_nms_refusals);
    TEST_RUN(test_tfidf_refusals);
    TEST_RUN(test_control_flow_refusals);
    TEST_RUN(test_rnn_refusals);
    TEST_RUN(test_rnn_cells);
    TEST_RUN(test_index_refusals);
    TEST_RUN(test_quant_refusals);
    TEST_RUN(test_int64_boundary);
    TEST_RUN(test_trace_and_golden);
    TEST_RUN(test_bf16_notes);
    TEST_RUN(test_bfp8_weights);
    TEST_RUN(test_output_rows);
    TEST_RUN(test_bf16_output);
    TEST_RUN(test_bf16_gemm_input);
    TEST_RUN(test_bf16_saturated_constants);
    TEST_RUN(test_trace_avg_pool);
    TEST_RUN(test_trace_region);
    TEST_RUN(test_inspect);
    TEST_RUN(test_lppool_refusals);
    TEST_RUN(test_maxroipool_refusals);
    TEST_RUN(test_cumsum_limit);
    TEST_RUN(test_uniform_constant);
    remove(model_path);
    ob_free_all();
    return test_summary();
}
