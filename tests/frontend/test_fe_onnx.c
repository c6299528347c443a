/* The ONNX loader against models built here: a valid model read back field
 * by field, tensor data in every element type and storage, the graph
 * helpers, and hostile files (truncated, mistyped, cyclic, undefined or
 * duplicate names, absurd or overflowing dims, wrong data sizes, unimported
 * domains, escaping external data, a nesting bomb), each refused with a
 * precise message and never a crash.
 *
 * `test_fe_onnx --write-corpus DIR` writes the fuzz target's seed models.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "frontend/fe_graph.h"
#include "lightmetal/frontend.h"
#include "lm_test.h"
#include "onnx_build.h"

/* ------------------------------------------------------------------ helpers */

static lm_status load_model(const Onnx__ModelProto *m, fe_graph **g) {
    size_t size;
    uint8_t *buf = ob_pack(m, &size);
    lm_status st = fe_onnx_load_memory(buf, size, NULL, "model.onnx", g);
    free(buf);
    return st;
}

/* Loads `m`, expecting failure with `status` and `needle` in the message. */
#define CHECK_MODEL_FAILS(m, status, needle)                                                       \
    do {                                                                                           \
        fe_graph *g_ = NULL;                                                                       \
        CHECK_FAILS(load_model((m), &g_), (status), (needle));                                     \
        CHECK(g_ == NULL);                                                                         \
        CHECK(strncmp(lm_last_error(), "model.onnx: ", 12) == 0);                                  \
    } while (0)

static const fe_value *value_named(const fe_graph *g, const char *name) {
    uint32_t v = fe_graph_find_value(g, name);
    return v == FE_NONE ? NULL : &g->values[v];
}

/* x[batch, 3] -> MatMul(w[3, 2]) -> Add(b[2]) -> Relu -> y; plus a
 * Constant and a custom-domain node carrying one attribute of each kind. */
static Onnx__ModelProto *valid_model(void) {
    Onnx__GraphProto *g = ob_graph("g");
    Onnx__ModelProto *m = ob_model(g);
    ob_import(m, "com.example", 2);
    int64_t xd[2] = {-1, 3};
    const char *xs[2] = {"batch", NULL};
    ob_input(g, ob_vi("x", ob_tensor_type(1, 2, xd, xs)));
    /* w is listed as an input too: it stays an initializer. */
    int64_t wd[2] = {3, 2};
    ob_input(g, ob_vi("w", ob_tensor_type(1, 2, wd, NULL)));
    Onnx__TensorProto *w = ob_tensor("w", 1, 2, wd);
    float wv[6] = {1, 2, 3, 4, 5, 6};
    ob_raw(w, wv, sizeof wv);
    ob_init(g, w);
    int64_t bd[1] = {2};
    Onnx__TensorProto *b = ob_tensor("b", 1, 1, bd);
    b->float_data = ob_alloc(2 * sizeof(float));
    b->float_data[0] = 0.5f;
    b->float_data[1] = -0.5f;
    b->n_float_data = 2;
    ob_init(g, b);
    ob_node(g, "MatMul", "mm", (const char *[]){"x", "w", NULL}, (const char *[]){"xw", NULL});
    ob_node(g, "Add", "add", (const char *[]){"xw", "b", NULL}, (const char *[]){"s", NULL});
    ob_node(g, "Relu", NULL, (const char *[]){"s", NULL}, (const char *[]){"y", NULL});
    Onnx__NodeProto *c = ob_node(g, "Constant", "c", NULL, (const char *[]){"k", NULL});
    int64_t kd[1] = {2};
    Onnx__TensorProto *kt = ob_tensor(NULL, 7, 1, kd);
    kt->int64_data = ob_alloc(2 * sizeof(int64_t));
    kt->int64_data[0] = -7;
    kt->int64_data[1] = 1LL << 40;
    kt->n_int64_data = 2;
    ob_attr(c, "value", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR)->t = kt;
    /* Custom node: optional input and output omitted (""). */
    Onnx__NodeProto *f = ob_node(g, "Foo", "foo", (const char *[]){"y", "", "k", NULL},
                                 (const char *[]){"z", "", NULL});
    f->domain = ob_str("com.example");
    Onnx__AttributeProto *a;
    a = ob_attr_i(f, "i", -42);
    a = ob_attr(f, "f", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
    a->has_f = 1;
    a->f = 2.5f;
    a = ob_attr_s(f, "s", "hello");
    a = ob_attr(f, "ints", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
    a->ints = ob_alloc(3 * sizeof(int64_t));
    a->ints[0] = 1;
    a->ints[1] = -2;
    a->ints[2] = 3;
    a->n_ints = 3;
    a = ob_attr(f, "floats", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS);
    a->floats = ob_alloc(2 * sizeof(float));
    a->floats[0] = 0.25f;
    a->floats[1] = -1.0f;
    a->n_floats = 2;
    a = ob_attr(f, "strings", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS);
    a->strings = ob_alloc(2 * sizeof *a->strings);
    a->strings[0].data = (uint8_t *)ob_str("ab");
    a->strings[0].len = 2;
    a->strings[1].data = (uint8_t *)ob_str("");
    a->strings[1].len = 0;
    a->n_strings = 2;
    a = ob_attr(f, "body", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH);
    Onnx__GraphProto *body = ob_graph("body");
    ob_node(body, "Identity", NULL, (const char *[]){"x", NULL}, (const char *[]){"r", NULL});
    a->g = body;
    a = ob_attr(f, "tp", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO);
    a->tp = ob_tensor_type(1, -1, NULL, NULL);
    ob_output(g, ob_vi("y", ob_tensor_type(1, 2, xd, xs)));
    ob_output(g, ob_vi("z", NULL));
    int64_t sd[2] = {-1, 2};
    ob_value_info(g, ob_vi("s", ob_tensor_type(1, 2, sd, NULL)));
    return m;
}

/* ------------------------------------------------------------------ valid */

static void test_valid_model(void) {
    fe_graph *g = NULL;
    CHECK_OK(load_model(valid_model(), &g));
    CHECK(g->ir_version == 8);
    CHECK(g->opset == 13);
    CHECK(strcmp(g->producer, "lightmetal-tests") == 0);
    CHECK(strcmp(g->path, "model.onnx") == 0);
    CHECK(g->node_count == 5);
    /* Values: w, b, x, xw, s, y, k, z. */
    CHECK(g->value_count == 8);
    CHECK(g->input_count == 1);
    const fe_value *x = &g->values[g->inputs[0]];
    CHECK(strcmp(x->name, "x") == 0);
    CHECK(x->graph_input && !x->initializer && !x->konst && x->producer == FE_NONE);
    CHECK(x->type.elem == FE_FLOAT && x->type.rank == 2);
    CHECK(x->type.dims[0] == -1 && strcmp(x->type.sym[0], "batch") == 0);
    CHECK(x->type.dims[1] == 3 && x->type.sym[1] == NULL);
    char buf[128];
    CHECK(strcmp(fe_type_format(&x->type, buf, sizeof buf), "float[batch, 3]") == 0);
    CHECK(x->use_count == 2); /* MatMul, and Foo's body */

    const fe_value *w = value_named(g, "w");
    CHECK(w && w->initializer && !w->graph_input && w->konst);
    CHECK(w->konst->elem == FE_FLOAT && w->konst->rank == 2 && w->konst->count == 6);
    CHECK(w->konst->dims[0] == 3 && w->konst->dims[1] == 2);
    CHECK(strcmp(w->konst->name, "w") == 0);
    CHECK(fe_tensor_get_f64(w->konst, 5) == 6.0);
    CHECK(((uintptr_t)w->konst->data % 4) == 0);
    CHECK(w->type.elem == FE_FLOAT && w->type.rank == 2 && w->type.dims[1] == 2);
    const fe_value *b = value_named(g, "b");
    CHECK(b && b->konst && b->konst->count == 2);
    CHECK(fe_tensor_get_f64(b->konst, 0) == 0.5 && fe_tensor_get_f64(b->konst, 1) == -0.5);

    const fe_value *s = value_named(g, "s");
    CHECK(s && s->type.elem == FE_FLOAT && s->type.rank == 2 && s->type.dims[0] == -1);
    CHECK(s->type.dims[1] == 2 && s->use_count == 1);
    const fe_value *y = value_named(g, "y");
    CHECK(y && y->graph_output && y->use_count == 2); /* Foo reads it, and it is an output */
    CHECK(y->type.elem == FE_FLOAT && strcmp(y->type.sym[0], "batch") == 0);
    const fe_value *z = value_named(g, "z");
    CHECK(z && z->graph_output && z->type.rank == -1 && z->type.elem == FE_UNDEFINED);
    CHECK(strcmp(fe_type_format(&z->type, buf, sizeof buf), "undefined[?]") == 0);
    CHECK(g->output_count == 2 && g->outputs[0] == fe_graph_find_value(g, "y"));
    CHECK(g->outputs[1] == fe_graph_find_value(g, "z"));

    /* Nodes in file order (already sorted), producers pointing at them. */
    const char *ops[5] = {"MatMul", "Add", "Relu", "Constant", "Foo"};
    for (uint32_t i = 0; i < 5; i++) {
        CHECK(strcmp(g->nodes[i].op_type, ops[i]) == 0);
        CHECK(g->nodes[i].index == i);
        for (uint32_t k = 0; k < g->nodes[i].output_count; k++)
            if (g->nodes[i].outputs[k] != FE_NONE)
                CHECK(g->values[g->nodes[i].outputs[k]].producer == i);
    }
    CHECK(fe_graph_find_value(g, "nope") == FE_NONE);
    const fe_node *relu = &g->nodes[2];
    CHECK(strcmp(relu->name, "") == 0 && strcmp(relu->domain, "") == 0 && relu->opset == 13);
    CHECK(strcmp(fe_node_label(relu, buf, sizeof buf), "#2 (Relu)") == 0);
    CHECK(strcmp(fe_node_label(&g->nodes[0], buf, sizeof buf), "'mm' (MatMul)") == 0);
    CHECK(g->nodes[0].input_count == 2 && g->nodes[0].inputs[1] == fe_graph_find_value(g, "w"));

    const fe_node *c = &g->nodes[3];
    CHECK(c->attr_count == 1);
    const fe_attr *v = fe_node_attr(c, "value");
    CHECK(v && v->type == FE_ATTR_TENSOR && v->t && v->t->elem == FE_INT64);
    CHECK(v->t->count == 2 && v->t->name == NULL);
    CHECK(fe_tensor_get_i64(v->t, 0) == -7 && fe_tensor_get_i64(v->t, 1) == (1LL << 40));
    CHECK(fe_node_attr(c, "other") == NULL);
    const fe_value *k = value_named(g, "k");
    CHECK(k && k->producer == 3 && k->use_count == 1 && !k->konst);

    const fe_node *f = &g->nodes[4];
    CHECK(strcmp(f->domain, "com.example") == 0 && f->opset == 2);
    CHECK(f->input_count == 3 && f->inputs[1] == FE_NONE);
    CHECK(f->output_count == 2 && f->outputs[1] == FE_NONE);
    CHECK(f->attr_count == 8);
    const fe_attr *a = fe_node_attr(f, "i");
    CHECK(a && a->type == FE_ATTR_INT && a->i == -42);
    a = fe_node_attr(f, "f");
    CHECK(a && a->type == FE_ATTR_FLOAT && a->f == 2.5f);
    a = fe_node_attr(f, "s");
    CHECK(a && a->type == FE_ATTR_STRING && a->s_len == 5 && strcmp(a->s, "hello") == 0);
    a = fe_node_attr(f, "ints");
    CHECK(a && a->type == FE_ATTR_INTS && a->count == 3 && a->ints[1] == -2);
    a = fe_node_attr(f, "floats");
    CHECK(a && a->type == FE_ATTR_FLOATS && a->count == 2 && a->floats[0] == 0.25f);
    a = fe_node_attr(f, "strings");
    CHECK(a && a->type == FE_ATTR_STRINGS && a->count == 2);
    CHECK(strcmp(a->strings[0], "ab") == 0 && strcmp(a->strings[1], "") == 0);
    a = fe_node_attr(f, "body");
    CHECK(a && a->type == FE_ATTR_GRAPH && a->count == 1 && a->graph);
    /* The body, kept by name; what it reads from outside (x) is the node's
     * implicit input. */
    CHECK(a->graph->node_count == 1 && strcmp(a->graph->in_names[0][0], "x") == 0);
    CHECK(strcmp(a->graph->out_names[0][0], "r") == 0 && a->graph->defined_count == 1);
    CHECK(f->implicit_count == 1 && strcmp(f->implicit_names[0], "x") == 0);
    CHECK(f->implicit[0] == fe_graph_find_value(g, "x"));
    a = fe_node_attr(f, "tp");
    CHECK(a && a->type == FE_ATTR_TYPE_PROTO);
    fe_graph_free(g);
    ob_free_all();
}

/* Raw and typed storage of every numeric element type read back. */
static void test_elem_types(void) {
    static const int32_t elems[] = {FE_FLOAT,  FE_UINT8,  FE_INT8,     FE_UINT16,    FE_INT16,
                                    FE_INT32,  FE_INT64,  FE_BOOL,     FE_FLOAT16,   FE_DOUBLE,
                                    FE_UINT32, FE_UINT64, FE_BFLOAT16, FE_COMPLEX64, FE_COMPLEX128};
    const size_t ne = sizeof elems / sizeof elems[0];
    Onnx__GraphProto *gp = ob_graph("g");
    Onnx__ModelProto *m = ob_model(gp);
    int64_t dims[1] = {3};
    for (size_t i = 0; i < ne; i++) {
        fe_elem e = (fe_elem)elems[i];
        char name[64];
        /* Raw: the element type's own bytes of {1, 0, 3} (bool {1, 0, 1}). */
        uint8_t raw[48] = {0};
        size_t es = fe_elem_size(e);
        for (int k = 0; k < 3; k++) {
            double val = k == 1 ? 0 : (k == 0 ? 1 : 3);
            uint8_t *p = raw + (size_t)k * es;
            switch (e) {
            case FE_FLOAT:
            case FE_COMPLEX64: {
                float fv = (float)val;
                memcpy(p, &fv, 4);
                break;
            }
            case FE_DOUBLE:
            case FE_COMPLEX128:
                memcpy(p, &val, 8);
                break;
            case FE_FLOAT16: {
                uint16_t h = k == 0 ? 0x3c00 : k == 2 ? 0x4200 : 0;
                memcpy(p, &h, 2);
                break;
            }
            case FE_BFLOAT16: {
                uint16_t h = k == 0 ? 0x3f80 : k == 2 ? 0x4040 : 0;
                memcpy(p, &h, 2);
                break;
            }
            case FE_BOOL:
                p[0] = k != 1 ? (k == 2 ? 7 : 1) : 0;
                break; /* 7 reads as true */
            default: {
                uint64_t u = (uint64_t)val;
                memcpy(p, &u, es); /* little-endian */
                break;
            }
            }
        }
        snprintf(name, sizeof name, "raw_%s", fe_elem_name(e));
        Onnx__TensorProto *t = ob_tensor(name, (int32_t)e, 1, dims);
        ob_raw(t, raw, 3 * es);
        ob_init(gp, t);
        ob_output(gp, ob_vi(name, NULL));
        /* Typed: the field ONNX stores that type in. */
        snprintf(name, sizeof name, "typed_%s", fe_elem_name(e));
        t = ob_tensor(name, (int32_t)e, 1, dims);
        uint32_t bits[3] = {1, 0, 3};
        if (e == FE_FLOAT16) bits[0] = 0x3c00, bits[2] = 0x4200;
        if (e == FE_BFLOAT16) bits[0] = 0x3f80, bits[2] = 0x4040;
        switch (e) {
        case FE_FLOAT:
        case FE_COMPLEX64: {
            size_t n = e == FE_FLOAT ? 3 : 6;
            t->float_data = ob_alloc(n * sizeof(float));
            for (size_t k = 0; k < n; k++)
                t->float_data[k] = e == FE_FLOAT ? (float)bits[k] : (k % 2 ? 9.0f : bits[k / 2]);
            t->n_float_data = n;
            break;
        }
        case FE_DOUBLE:
        case FE_COMPLEX128: {
            size_t n = e == FE_DOUBLE ? 3 : 6;
            t->double_data = ob_alloc(n * sizeof(double));
            for (size_t k = 0; k < n; k++)
                t->double_data[k] = e == FE_DOUBLE ? bits[k] : (k % 2 ? 9.0 : bits[k / 2]);
            t->n_double_data = n;
            break;
        }
        case FE_INT64:
            t->int64_data = ob_alloc(3 * sizeof(int64_t));
            for (int k = 0; k < 3; k++)
                t->int64_data[k] = bits[k];
            t->n_int64_data = 3;
            break;
        case FE_UINT32:
        case FE_UINT64:
            t->uint64_data = ob_alloc(3 * sizeof(uint64_t));
            for (int k = 0; k < 3; k++)
                t->uint64_data[k] = bits[k];
            t->n_uint64_data = 3;
            break;
        default:
            t->int32_data = ob_alloc(3 * sizeof(int32_t));
            for (int k = 0; k < 3; k++)
                t->int32_data[k] = (int32_t)bits[k];
            t->n_int32_data = 3;
            break;
        }
        ob_init(gp, t);
        ob_output(gp, ob_vi(name, NULL));
    }
    fe_graph *g = NULL;
    CHECK_OK(load_model(m, &g));
    CHECK(g->node_count == 0 && g->input_count == 0 && g->output_count == 2 * ne);
    for (size_t i = 0; i < ne; i++) {
        fe_elem e = (fe_elem)elems[i];
        for (int typed = 0; typed < 2; typed++) {
            char name[64];
            snprintf(name, sizeof name, "%s_%s", typed ? "typed" : "raw", fe_elem_name(e));
            const fe_value *v = value_named(g, name);
            CHECK(v && v->konst && v->konst->elem == e && v->konst->count == 3);
            CHECK(v->use_count == 1 && v->graph_output && v->initializer);
            CHECK((uintptr_t)v->konst->data % fe_elem_size(e) == 0 ||
                  (uintptr_t)v->konst->data % 16 == 0);
            double want2 = e == FE_BOOL ? 1.0 : 3.0;
            if (fe_tensor_get_f64(v->konst, 0) != 1.0 || fe_tensor_get_f64(v->konst, 1) != 0.0 ||
                fe_tensor_get_f64(v->konst, 2) != want2 ||
                fe_tensor_get_i64(v->konst, 2) != (int64_t)want2) {
                printf("  %s: %g %g %g\n", name, fe_tensor_get_f64(v->konst, 0),
                       fe_tensor_get_f64(v->konst, 1), fe_tensor_get_f64(v->konst, 2));
                CHECK(0);
            }
            if (e == FE_BOOL) CHECK(((const uint8_t *)v->konst->data)[2] == 1);
        }
    }
    fe_graph_free(g);
    ob_free_all();
}

/* A file listing a chain of nodes backwards is sorted; node->index keeps the
 * file position. */
static void test_topological_order(void) {
    Onnx__GraphProto *gp = ob_graph("g");
    Onnx__ModelProto *m = ob_model(gp);
    int64_t d[1] = {4};
    ob_input(gp, ob_vi("a", ob_tensor_type(1, 1, d, NULL)));
    /* File order: n3(c->d), n2(b->c), n1(a->b), n4(a,d->e); n4 needs n3. */
    ob_node(gp, "Relu", "n3", (const char *[]){"c", NULL}, (const char *[]){"d", NULL});
    ob_node(gp, "Relu", "n2", (const char *[]){"b", NULL}, (const char *[]){"c", NULL});
    ob_node(gp, "Relu", "n1", (const char *[]){"a", NULL}, (const char *[]){"b", NULL});
    ob_node(gp, "Add", "n4", (const char *[]){"a", "d", NULL}, (const char *[]){"e", NULL});
    ob_output(gp, ob_vi("e", NULL));
    fe_graph *g = NULL;
    CHECK_OK(load_model(m, &g));
    const char *want[4] = {"n1", "n2", "n3", "n4"};
    const uint32_t file_pos[4] = {2, 1, 0, 3};
    for (uint32_t i = 0; i < 4; i++) {
        CHECK(strcmp(g->nodes[i].name, want[i]) == 0);
        CHECK(g->nodes[i].index == file_pos[i]);
        CHECK(g->values[g->nodes[i].outputs[0]].producer == i);
    }
    CHECK(value_named(g, "a")->use_count == 2);
    CHECK(value_named(g, "e")->use_count == 1);
    CHECK(value_named(g, "b")->use_count == 1);
    fe_graph_free(g);
    ob_free_all();
}

/* 100,000 nodes listed backwards: sorting and name look-ups stay fast. */
static void test_large_graph(void) {
    enum { N = 100000 };
    Onnx__GraphProto *gp = ob_graph("g");
    Onnx__ModelProto *m = ob_model(gp);
    gp->node = ob_alloc(N * sizeof *gp->node);
    ob_input(gp, ob_vi("v0", NULL));
    for (int i = N; i >= 1; i--) {
        char in[16], out[16];
        snprintf(in, sizeof in, "v%d", i - 1);
        snprintf(out, sizeof out, "v%d", i);
        ob_node(gp, "Relu", NULL, (const char *[]){in, NULL}, (const char *[]){out, NULL});
    }
    char last[16];
    snprintf(last, sizeof last, "v%d", N);
    ob_output(gp, ob_vi(last, NULL));
    fe_graph *g = NULL;
    CHECK_OK(load_model(m, &g));
    CHECK(g->node_count == N && g->value_count == N + 1);
    for (uint32_t i = 0; i < N; i++) {
        CHECK(g->nodes[i].index == N - 1 - i);
        CHECK(g->values[g->nodes[i].inputs[0]].producer == (i ? i - 1 : FE_NONE));
    }
    fe_graph_free(g);
    ob_free_all();
}

/* Tensors whose raw_data the graph takes over from the parsed message (64
 * KiB or more): an initializer, a bool one (normalized to 0/1 in place) and
 * a Constant's; and a load that fails after taking them over. */
static void test_large_tensors(void) {
    enum { NF = 40000, NB = 70000 };
    float *fv = malloc(NF * sizeof *fv);
    uint8_t *bv = malloc(NB);
    CHECK(fv && bv);
    for (int i = 0; i < NF; i++)
        fv[i] = (float)i * 0.5f - 7;
    for (int i = 0; i < NB; i++)
        bv[i] = (uint8_t)(i * 37);
    for (int fail = 0; fail < 2; fail++) {
        Onnx__GraphProto *gp = ob_graph("g");
        Onnx__ModelProto *m = ob_model(gp);
        int64_t fd[2] = {200, 200}, bd[1] = {NB};
        Onnx__TensorProto *w = ob_tensor("w", FE_FLOAT, 2, fd);
        ob_raw(w, fv, NF * sizeof *fv);
        ob_init(gp, w);
        Onnx__TensorProto *b = ob_tensor("b", FE_BOOL, 1, bd);
        ob_raw(b, bv, NB);
        ob_init(gp, b);
        Onnx__NodeProto *c = ob_node(gp, "Constant", "c", NULL, (const char *[]){"k", NULL});
        Onnx__TensorProto *kt = ob_tensor(NULL, FE_FLOAT, 2, fd);
        ob_raw(kt, fv, NF * sizeof *fv);
        ob_attr(c, "value", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR)->t = kt;
        ob_node(gp, "Add", "add", (const char *[]){"w", fail ? "nowhere" : "k", NULL},
                (const char *[]){"y", NULL});
        ob_output(gp, ob_vi("y", NULL));
        ob_output(gp, ob_vi("b", NULL));
        fe_graph *g = NULL;
        if (fail) {
            CHECK_MODEL_FAILS(m, LM_ERR_INVALID_FILE, "'nowhere'");
            ob_free_all();
            continue;
        }
        CHECK_OK(load_model(m, &g));
        const fe_value *wv = value_named(g, "w"), *bvv = value_named(g, "b");
        CHECK(wv && wv->konst && wv->konst->count == NF && bvv && bvv->konst);
        CHECK(((uintptr_t)wv->konst->data % 16) == 0);
        CHECK(memcmp(wv->konst->data, fv, NF * sizeof *fv) == 0);
        const uint8_t *bb = bvv->konst->data;
        bool ok = bvv->konst->count == NB;
        for (int i = 0; ok && i < NB; i++)
            ok = bb[i] == (bv[i] != 0);
        CHECK(ok);
        const fe_node *cn = NULL;
        for (uint32_t i = 0; i < g->node_count; i++)
            if (!strcmp(g->nodes[i].op_type, "Constant")) cn = &g->nodes[i];
        CHECK(cn && cn->attr_count == 1);
        const fe_tensor *kc = cn ? cn->attrs[0].t : NULL;
        CHECK(kc && kc->count == NF && memcmp(kc->data, fv, NF * sizeof *fv) == 0);
        fe_graph_free(g);
        ob_free_all();
    }
    free(fv);
    free(bv);
}

static void test_helpers(void) {
    CHECK(fe_elem_size(FE_FLOAT) == 4 && fe_elem_size(FE_BOOL) == 1);
    CHECK(fe_elem_size(FE_BFLOAT16) == 2 && fe_elem_size(FE_STRING) == 0);
    CHECK(fe_elem_size(FE_UNDEFINED) == 0 && fe_elem_size((fe_elem)99) == 0);
    CHECK(strcmp(fe_elem_name(FE_INT64), "int64") == 0);
    CHECK(strcmp(fe_elem_name((fe_elem)99), "unknown") == 0);
    CHECK(strcmp(lmfe_elem_type_name(9), "bool") == 0);
    CHECK(strcmp(lmfe_elem_type_name(-3), "unknown") == 0);
    fe_type t = {.elem = FE_INT64, .rank = 2, .dims = {-1, 7}, .sym = {"batch", NULL}};
    char buf[64];
    CHECK(strcmp(fe_type_format(&t, buf, sizeof buf), "int64[batch, 7]") == 0);
    CHECK(fe_type_volume(&t) == -1 && !fe_type_is_known(&t));
    t.dims[0] = 5;
    CHECK(fe_type_volume(&t) == 35 && fe_type_is_known(&t));
    t.rank = 0;
    CHECK(fe_type_volume(&t) == 1 && strcmp(fe_type_format(&t, buf, sizeof buf), "int64[]") == 0);
    t.rank = -1;
    CHECK(strcmp(fe_type_format(&t, buf, sizeof buf), "int64[?]") == 0);
    fe_type big = {.elem = FE_FLOAT, .rank = 3, .dims = {1LL << 40, 1LL << 40, 1}};
    CHECK(fe_type_volume(&big) == -1);
    char small[6];
    CHECK(strcmp(fe_type_format(&big, small, sizeof small), "float") == 0);
    /* float16: subnormal, negative, infinity; bfloat16. */
    uint16_t h[4] = {0x0001, 0xc000, 0x7c00, 0x3555};
    fe_tensor ht = {.elem = FE_FLOAT16, .rank = 1, .dims = {4}, .count = 4, .data = h};
    CHECK(fe_tensor_get_f64(&ht, 0) == ldexp(1.0, -24));
    CHECK(fe_tensor_get_f64(&ht, 1) == -2.0);
    CHECK(isinf(fe_tensor_get_f64(&ht, 2)));
    CHECK(fabs(fe_tensor_get_f64(&ht, 3) - 0.333251953125) < 1e-12);
    uint16_t bf[1] = {0xbfc0};
    fe_tensor bt = {.elem = FE_BFLOAT16, .rank = 1, .dims = {1}, .count = 1, .data = bf};
    CHECK(fe_tensor_get_f64(&bt, 0) == -1.5 && fe_tensor_get_i64(&bt, 0) == -1);
    float huge[1] = {1e30f};
    fe_tensor ft = {.elem = FE_FLOAT, .rank = 0, .count = 1, .data = huge};
    CHECK(fe_tensor_get_i64(&ft, 0) == INT64_MAX);
    /* The arena: zeroed, aligned, big blocks too. */
    fe_arena arena = {0};
    for (int i = 0; i < 100; i++) {
        uint8_t *p = fe_arena_alloc(&arena, (size_t)i * 97 + 1);
        CHECK(p && (uintptr_t)p % 16 == 0 && p[(size_t)i * 97] == 0);
        memset(p, 0xab, (size_t)i * 97 + 1);
    }
    uint8_t *big_block = fe_arena_alloc(&arena, 1 << 20);
    CHECK(big_block && big_block[(1 << 20) - 1] == 0);
    CHECK(fe_arena_alloc(&arena, SIZE_MAX / 2) == NULL);
    char *s = fe_arena_strndup(&arena, "abcdef", 3);
    CHECK(s && strcmp(s, "abc") == 0);
    CHECK(arena.bytes > (1u << 20));
    fe_arena_free(&arena);
    CHECK(arena.head == NULL && arena.bytes == 0);
}

/* ------------------------------------------------------------------ hostile */

/* Every prefix of a valid file: an error or a smaller valid model. */
static void test_truncated(void) {
    size_t size;
    uint8_t *buf = ob_pack(valid_model(), &size);
    unsigned ok = 0, failed = 0;
    for (size_t n = 0; n < size; n++) {
        uint8_t *copy = malloc(n ? n : 1); /* exact size, so ASan sees overreads */
        memcpy(copy, buf, n);
        fe_graph *g = NULL;
        lm_status st = fe_onnx_load_memory(copy, n, NULL, "model.onnx", &g);
        free(copy);
        if (st == LM_OK) {
            ok++;
            fe_graph_free(g);
        } else {
            failed++;
            if (strncmp(lm_last_error(), "model.onnx: ", 12) != 0) {
                printf("  prefix %zu: %s\n", n, lm_last_error());
                free(buf);
                CHECK(0);
            }
        }
    }
    printf("  %zu prefixes: %u load, %u refused\n", size, ok, failed);
    free(buf);
    CHECK(failed > 0);
    ob_free_all();
}

/* Every single-byte change of a valid file (a few values per byte): loads
 * or fails cleanly. */
static void test_mutations(void) {
    size_t size;
    uint8_t *buf = ob_pack(valid_model(), &size);
    uint8_t *copy = malloc(size);
    static const uint8_t vals[] = {0x00, 0x01, 0x02, 0x05, 0x7f, 0x80, 0xff};
    unsigned ok = 0, failed = 0;
    for (size_t i = 0; i < size; i++) {
        for (size_t k = 0; k < sizeof vals; k++) {
            memcpy(copy, buf, size);
            copy[i] ^= vals[k] ? vals[k] : buf[i];
            fe_graph *g = NULL;
            if (fe_onnx_load_memory(copy, size, NULL, "m", &g) == LM_OK) {
                ok++;
                fe_graph_free(g);
            } else {
                failed++;
                if (lm_last_error()[0] == '\0') {
                    free(copy);
                    free(buf);
                    CHECK(0);
                }
            }
        }
    }
    printf("  %u mutations load, %u refused\n", ok, failed);
    free(copy);
    free(buf);
    ob_free_all();
}

static void test_wrong_wire_types(void) {
    fe_graph *g = NULL;
    /* ModelProto.graph (field 7) as a varint. */
    const uint8_t a[] = {0x38, 0x01};
    CHECK_FAILS(fe_onnx_load_memory(a, sizeof a, NULL, "m.onnx", &g), LM_ERR_INVALID_FILE,
                "m.onnx: not a valid ONNX protobuf file: ModelProto at byte 0: field 'graph' has "
                "wire type 0 (varint), expected length-delimited");
    /* ir_version (1) as length-delimited. */
    const uint8_t b[] = {0x0a, 0x00};
    CHECK_FAILS(fe_onnx_load_memory(b, sizeof b, NULL, "m.onnx", &g), LM_ERR_INVALID_FILE,
                "field 'ir_version' has wire type 2");
    /* A length past the end. */
    const uint8_t c[] = {0x3a, 0x05, 0x0a};
    CHECK_FAILS(fe_onnx_load_memory(c, sizeof c, NULL, "m.onnx", &g), LM_ERR_INVALID_FILE,
                "runs past the end");
    /* In an unknown field (100): a group, an invalid wire type; field number
     * 0; an endless varint. */
    const uint8_t d[] = {0xa3, 0x06};
    CHECK_FAILS(fe_onnx_load_memory(d, sizeof d, NULL, "m.onnx", &g), LM_ERR_INVALID_FILE,
                "groups");
    const uint8_t e[] = {0xa6, 0x06};
    CHECK_FAILS(fe_onnx_load_memory(e, sizeof e, NULL, "m.onnx", &g), LM_ERR_INVALID_FILE,
                "invalid wire type 6");
    const uint8_t f[] = {0x00, 0x00};
    CHECK_FAILS(fe_onnx_load_memory(f, sizeof f, NULL, "m.onnx", &g), LM_ERR_INVALID_FILE,
                "field number 0");
    const uint8_t h[] = {0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    CHECK_FAILS(fe_onnx_load_memory(h, sizeof h, NULL, "m.onnx", &g), LM_ERR_INVALID_FILE,
                "varint");
    /* Inside the graph: a node (field 1 of GraphProto) with input (1) as a
     * 32-bit value. */
    const uint8_t i[] = {0x3a, 0x07, 0x0a, 0x05, 0x0d, 0x00, 0x00, 0x00, 0x00};
    CHECK_FAILS(fe_onnx_load_memory(i, sizeof i, NULL, "m.onnx", &g), LM_ERR_INVALID_FILE,
                "NodeProto at byte 4: field 'input' has wire type 5");
    /* A packed float array (TensorProto.float_data) of 5 bytes. */
    const uint8_t j[] = {0x22, 0x05, 0x01, 0x02, 0x03, 0x04, 0x05};
    fe_arena arena = {0};
    fe_tensor t;
    CHECK_FAILS(fe_onnx_load_tensor(j, sizeof j, "t.pb", &arena, &t), LM_ERR_INVALID_FILE,
                "packed field 'float_data' has 5 bytes");
    /* No graph at all (an empty file is an empty ModelProto). */
    CHECK_FAILS(fe_onnx_load_memory("", 0, NULL, "m.onnx", &g), LM_ERR_INVALID_FILE,
                "m.onnx: the model has no graph");
    CHECK(g == NULL);
    fe_arena_free(&arena);
}

static void test_cycle(void) {
    Onnx__GraphProto *gp = ob_graph("g");
    Onnx__ModelProto *m = ob_model(gp);
    int64_t d[1] = {4};
    ob_input(gp, ob_vi("x", ob_tensor_type(1, 1, d, NULL)));
    ob_node(gp, "Relu", "pre", (const char *[]){"x", NULL}, (const char *[]){"p", NULL});
    ob_node(gp, "Add", "a", (const char *[]){"p", "c", NULL}, (const char *[]){"b", NULL});
    ob_node(gp, "Relu", "b", (const char *[]){"b", NULL}, (const char *[]){"c", NULL});
    ob_node(gp, "Relu", "after", (const char *[]){"c", NULL}, (const char *[]){"y", NULL});
    ob_output(gp, ob_vi("y", NULL));
    CHECK_MODEL_FAILS(m, LM_ERR_INVALID_FILE, "is on a cycle");
    CHECK(strstr(lm_last_error(), "'a' (Add)") && strstr(lm_last_error(), "'b' (Relu)"));
    CHECK(!strstr(lm_last_error(), "after") && !strstr(lm_last_error(), "pre"));
    /* A node reading its own output. */
    Onnx__GraphProto *gp2 = ob_graph("g");
    Onnx__ModelProto *m2 = ob_model(gp2);
    ob_node(gp2, "Relu", NULL, (const char *[]){"s", NULL}, (const char *[]){"s", NULL});
    ob_output(gp2, ob_vi("s", NULL));
    CHECK_MODEL_FAILS(m2, LM_ERR_INVALID_FILE, "node #0 (Relu) is on a cycle");
    ob_free_all();
}

static void test_undefined_and_duplicates(void) {
    Onnx__GraphProto *gp = ob_graph("g");
    Onnx__ModelProto *m = ob_model(gp);
    ob_node(gp, "Conv", "conv1", (const char *[]){"x", "w", NULL}, (const char *[]){"y", NULL});
    ob_input(gp, ob_vi("x", NULL));
    ob_output(gp, ob_vi("y", NULL));
    CHECK_MODEL_FAILS(m, LM_ERR_INVALID_FILE,
                      "model.onnx: node 'conv1' (Conv): input 'w' is not defined");
    ob_input(gp, ob_vi("w", NULL));
    fe_graph *g = NULL;
    CHECK_OK(load_model(m, &g));
    fe_graph_free(g);
    /* Graph output not defined. */
    ob_output(gp, ob_vi("nowhere", NULL));
    CHECK_MODEL_FAILS(m, LM_ERR_INVALID_FILE, "graph output 'nowhere' is not defined");
    gp->n_output--;
    /* A second producer of y. */
    ob_node(gp, "Relu", NULL, (const char *[]){"x", NULL}, (const char *[]){"y", NULL});
    CHECK_MODEL_FAILS(m, LM_ERR_INVALID_FILE,
                      "node #1 (Relu): output 'y' is already defined as an output of node "
                      "'conv1' (Conv)");
    gp->n_node--;
    /* A node writing a graph input, an initializer twice, an input twice. */
    ob_node(gp, "Relu", "r", (const char *[]){"y", NULL}, (const char *[]){"x", NULL});
    CHECK_MODEL_FAILS(m, LM_ERR_INVALID_FILE, "output 'x' is already defined as a graph input");
    gp->n_node--;
    int64_t d[1] = {1};
    Onnx__TensorProto *t = ob_tensor("k", 1, 1, d);
    float one = 1;
    ob_raw(t, &one, 4);
    ob_init(gp, t);
    ob_init(gp, t);
    CHECK_MODEL_FAILS(m, LM_ERR_INVALID_FILE, "initializer 'k' is defined twice");
    gp->n_initializer--;
    ob_input(gp, ob_vi("x", NULL));
    CHECK_MODEL_FAILS(m, LM_ERR_INVALID_FILE, "graph input 'x' is listed twice");
    gp->n_input--;
    /* Attribute given twice; a node with no op_type. */
    Onnx__NodeProto *n =
        ob_node(gp, "Relu", "r2", (const char *[]){"y", NULL}, (const char *[]){"y2", NULL});
    ob_attr(n, "alpha", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT)->has_f = 1;
    ob_attr(n, "alpha", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT)->has_f = 1;
    CHECK_MODEL_FAILS(m, LM_ERR_INVALID_FILE, "node 'r2' (Relu): attribute 'alpha' is given twice");
    n->n_attribute = 1;
    n->op_type = ob_str("");
    CHECK_MODEL_FAILS(m, LM_ERR_INVALID_FILE, "node 'r2' () has no op_type");
    ob_free_all();
}

/* A model whose only initializer is `t`. */
static Onnx__ModelProto *model_with_init(Onnx__TensorProto *t) {
    Onnx__GraphProto *gp = ob_graph("g");
    Onnx__ModelProto *m = ob_model(gp);
    ob_init(gp, t);
    ob_output(gp, ob_vi(t->name, NULL));
    return m;
}

static void test_bad_tensors(void) {
    /* 1e12 elements, no data. */
    int64_t absurd[2] = {1000000, 1000000};
    CHECK_MODEL_FAILS(model_with_init(ob_tensor("big", 1, 2, absurd)), LM_ERR_INVALID_FILE,
                      "initializer 'big': 1000000000000 elements of float exceed");
    /* The product overflows int64. */
    int64_t over[3] = {1LL << 40, 1LL << 40, 0};
    CHECK_MODEL_FAILS(model_with_init(ob_tensor("ovf", 1, 3, over)), LM_ERR_INVALID_FILE,
                      "initializer 'ovf': the product of its dims overflows int64");
    /* 12 GB claimed, within the limit, with no data: refused before any
     * memory is reserved for it. */
    int64_t many[1] = {3LL << 30};
    CHECK_MODEL_FAILS(model_with_init(ob_tensor("many", 1, 1, many)), LM_ERR_INVALID_FILE,
                      "initializer 'many': float_data (0 entries) holds 0 bytes, expected "
                      "12884901888");
    Onnx__TensorProto *ext = ob_tensor("many", 1, 1, many);
    ext->has_raw_data = 1;
    CHECK_MODEL_FAILS(model_with_init(ext), LM_ERR_INVALID_FILE, "raw_data holds 0 bytes");
    int64_t neg[2] = {2, -3};
    CHECK_MODEL_FAILS(model_with_init(ob_tensor("neg", 1, 2, neg)), LM_ERR_INVALID_FILE,
                      "initializer 'neg': dim 1 is negative (-3)");
    int64_t nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    CHECK_MODEL_FAILS(model_with_init(ob_tensor("r9", 1, 9, nine)), LM_ERR_UNSUPPORTED,
                      "initializer 'r9': rank 9 is more than the 8 supported");
    /* raw_data of the wrong size. */
    int64_t d[2] = {2, 2};
    Onnx__TensorProto *t = ob_tensor("w", 1, 2, d);
    float v[3] = {1, 2, 3};
    ob_raw(t, v, sizeof v);
    CHECK_MODEL_FAILS(model_with_init(t), LM_ERR_INVALID_FILE,
                      "initializer 'w': raw_data holds 12 bytes, expected 16 for float[2, 2]");
    /* Typed data of the wrong count, or in the wrong field. */
    t = ob_tensor("i", 7, 2, d);
    t->int64_data = ob_alloc(3 * sizeof(int64_t));
    t->n_int64_data = 3;
    CHECK_MODEL_FAILS(model_with_init(t), LM_ERR_INVALID_FILE,
                      "initializer 'i': int64_data (3 entries) holds 24 bytes, expected 32");
    t = ob_tensor("f", 1, 2, d);
    t->int32_data = ob_alloc(4 * sizeof(int32_t));
    t->n_int32_data = 4;
    CHECK_MODEL_FAILS(model_with_init(t), LM_ERR_INVALID_FILE,
                      "float_data (0 entries) holds 0 bytes, expected 16");
    /* No data type; an unknown one; a segment. */
    t = ob_tensor("u", 0, 1, d);
    CHECK_MODEL_FAILS(model_with_init(t), LM_ERR_INVALID_FILE, "'u': the tensor has no data type");
    t = ob_tensor("u", 99, 1, d);
    CHECK_MODEL_FAILS(model_with_init(t), LM_ERR_UNSUPPORTED, "element type 99 is not supported");
    t = ob_tensor("seg", 1, 0, NULL);
    t->segment = ob_alloc(sizeof *t->segment);
    onnx__tensor_proto__segment__init(t->segment);
    CHECK_MODEL_FAILS(model_with_init(t), LM_ERR_UNSUPPORTED, "segmented tensors");
    /* A string tensor loads without data. */
    t = ob_tensor("str", 8, 1, d);
    fe_graph *g = NULL;
    CHECK_OK(load_model(model_with_init(t), &g));
    const fe_value *sv = value_named(g, "str");
    CHECK(sv && sv->konst && sv->konst->elem == FE_STRING && !sv->konst->data);
    CHECK(sv->konst->count == 2);
    fe_graph_free(g);
    /* A scalar and an empty tensor. */
    t = ob_tensor("scalar", 6, 0, NULL);
    int32_t s = -5;
    ob_raw(t, &s, 4);
    CHECK_OK(load_model(model_with_init(t), &g));
    sv = value_named(g, "scalar");
    CHECK(sv->konst->rank == 0 && sv->konst->count == 1 && fe_tensor_get_i64(sv->konst, 0) == -5);
    CHECK(sv->type.rank == 0);
    fe_graph_free(g);
    int64_t z[2] = {0, 5};
    CHECK_OK(load_model(model_with_init(ob_tensor("empty", 1, 2, z)), &g));
    sv = value_named(g, "empty");
    CHECK(sv->konst->count == 0 && sv->konst->data != NULL);
    fe_graph_free(g);
    ob_free_all();
}

static void test_types_and_domains(void) {
    /* Rank 9 graph input; a sequence input; a map output. */
    Onnx__GraphProto *gp = ob_graph("g");
    Onnx__ModelProto *m = ob_model(gp);
    int64_t nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    ob_input(gp, ob_vi("big", ob_tensor_type(1, 9, nine, NULL)));
    ob_output(gp, ob_vi("big", NULL));
    CHECK_MODEL_FAILS(m, LM_ERR_UNSUPPORTED, "graph input 'big': rank 9 is more than the 8");
    Onnx__TypeProto *seq = ob_alloc(sizeof *seq);
    onnx__type_proto__init(seq);
    seq->value_case = ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE;
    seq->sequence_type = ob_alloc(sizeof *seq->sequence_type);
    onnx__type_proto__sequence__init(seq->sequence_type);
    gp->input[0] = ob_vi("x", seq);
    gp->output[0] = ob_vi("x", NULL);
    CHECK_MODEL_FAILS(m, LM_ERR_UNSUPPORTED,
                      "model.onnx: graph input 'x': sequence types are not "
                      "supported");
    Onnx__TypeProto *map = ob_alloc(sizeof *map);
    onnx__type_proto__init(map);
    map->value_case = ONNX__TYPE_PROTO__VALUE_MAP_TYPE;
    map->map_type = ob_alloc(sizeof *map->map_type);
    onnx__type_proto__map__init(map->map_type);
    gp->input[0] = ob_vi("x", NULL);
    gp->output[0] = ob_vi("x", map);
    CHECK_MODEL_FAILS(m, LM_ERR_UNSUPPORTED, "graph output 'x': map types are not supported");
    /* A non-tensor value_info is ignored; rank 9 there is an error. */
    gp->output[0] = ob_vi("x", NULL);
    ob_node(gp, "Relu", "r", (const char *[]){"x", NULL}, (const char *[]){"y", NULL});
    ob_value_info(gp, ob_vi("y", seq));
    fe_graph *g = NULL;
    CHECK_OK(load_model(m, &g));
    CHECK(value_named(g, "y")->type.rank == -1);
    fe_graph_free(g);
    gp->value_info[0] = ob_vi("y", ob_tensor_type(1, 9, nine, NULL));
    CHECK_MODEL_FAILS(m, LM_ERR_UNSUPPORTED, "value 'y': rank 9");
    gp->n_value_info = 0;
    /* A node of a domain the model does not import. */
    Onnx__NodeProto *n =
        ob_node(gp, "Gelu", "g1", (const char *[]){"x", NULL}, (const char *[]){"z", NULL});
    n->domain = ob_str("com.microsoft");
    CHECK_MODEL_FAILS(m, LM_ERR_INVALID_FILE,
                      "node 'g1' (Gelu): domain 'com.microsoft' is not imported by the model");
    ob_import(m, "com.microsoft", 1);
    CHECK_OK(load_model(m, &g));
    CHECK(g->nodes[1].opset == 1 && strcmp(g->nodes[1].domain, "com.microsoft") == 0);
    fe_graph_free(g);
    /* "ai.onnx" is the default domain; importing it twice is an error. */
    m->opset_import[0]->domain = ob_str("ai.onnx");
    n->domain = ob_str("ai.onnx");
    CHECK_OK(load_model(m, &g));
    CHECK(g->opset == 13 && strcmp(g->nodes[1].domain, "") == 0 && g->nodes[1].opset == 13);
    fe_graph_free(g);
    ob_import(m, "", 11);
    CHECK_MODEL_FAILS(m, LM_ERR_INVALID_FILE, "opset_import lists domain 'ai.onnx' twice");
    /* No default import in a modern model. */
    m->n_opset_import = 0;
    n->domain = ob_str("");
    CHECK_MODEL_FAILS(m, LM_ERR_INVALID_FILE, "domain 'ai.onnx' is not imported");
    ob_free_all();
}

/* Old files: attributes without a type field, no opset_import (IR < 3). */
static void test_old_models(void) {
    Onnx__GraphProto *gp = ob_graph("g");
    Onnx__ModelProto *m = ob_model(gp);
    m->n_opset_import = 0;
    m->ir_version = 2;
    ob_input(gp, ob_vi("x", NULL));
    Onnx__NodeProto *n =
        ob_node(gp, "LeakyRelu", NULL, (const char *[]){"x", NULL}, (const char *[]){"y", NULL});
    Onnx__AttributeProto *a = ob_attr(n, "alpha", 0);
    a->has_type = 0;
    a->has_f = 1;
    a->f = 0.125f;
    a = ob_attr(n, "axes", 0);
    a->has_type = 0;
    a->ints = ob_alloc(sizeof(int64_t));
    a->ints[0] = 4;
    a->n_ints = 1;
    ob_output(gp, ob_vi("y", NULL));
    fe_graph *g = NULL;
    CHECK_OK(load_model(m, &g));
    CHECK(g->opset == 1 && g->nodes[0].opset == 1 && g->ir_version == 2);
    const fe_attr *fa = fe_node_attr(&g->nodes[0], "alpha");
    CHECK(fa && fa->type == FE_ATTR_FLOAT && fa->f == 0.125f);
    fa = fe_node_attr(&g->nodes[0], "axes");
    CHECK(fa && fa->type == FE_ATTR_INTS && fa->count == 1 && fa->ints[0] == 4);
    fe_graph_free(g);
    /* An attribute with neither a type nor a value. */
    a = ob_attr(n, "empty", 0);
    a->has_type = 0;
    CHECK_MODEL_FAILS(m, LM_ERR_INVALID_FILE, "node #0 (LeakyRelu): attribute 'empty' has no type");
    a->has_type = 1;
    a->type = (Onnx__AttributeProto__AttributeType)77;
    CHECK_MODEL_FAILS(m, LM_ERR_INVALID_FILE, "attribute 'empty' has unknown type 77");
    ob_free_all();
}

/* ------------------------------------------------------------------ files */

static char tmp_dir[256];

static void write_file(const char *path, const void *data, size_t size) {
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    if (size && fwrite(data, 1, size, f) != size) abort();
    fclose(f);
}

static void make_tmp_dir(void) {
    if (tmp_dir[0]) return;
    snprintf(tmp_dir, sizeof tmp_dir, "/tmp/lm_fe_onnx_XXXXXX");
    if (!mkdtemp(tmp_dir)) abort();
}

/* A model whose initializer `w` (float[2, 3]) is external data with the
 * given keys (NULL: left out). */
static lm_status load_external(const char *location, const char *offset, const char *length,
                               fe_graph **g) {
    int64_t d[2] = {2, 3};
    Onnx__TensorProto *t = ob_tensor("w", 1, 2, d);
    t->has_data_location = 1;
    t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    t->external_data = ob_alloc(4 * sizeof *t->external_data);
    const char *keys[3] = {"location", "offset", "length"};
    const char *vals[3] = {location, offset, length};
    for (int i = 0; i < 3; i++) {
        if (!vals[i]) continue;
        Onnx__StringStringEntryProto *e = ob_alloc(sizeof *e);
        onnx__string_string_entry_proto__init(e);
        e->key = ob_str(keys[i]);
        e->value = ob_str(vals[i]);
        t->external_data[t->n_external_data++] = e;
    }
    size_t size;
    uint8_t *buf = ob_pack(model_with_init(t), &size);
    char path[512];
    snprintf(path, sizeof path, "%s/model.onnx", tmp_dir);
    write_file(path, buf, size);
    free(buf);
    return fe_onnx_load(path, g);
}

static void test_external_data(void) {
    make_tmp_dir();
    float data[10];
    for (int i = 0; i < 10; i++)
        data[i] = (float)i;
    char path[512];
    snprintf(path, sizeof path, "%s/weights.bin", tmp_dir);
    write_file(path, data, sizeof data);
    snprintf(path, sizeof path, "%s/sub", tmp_dir);
    mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/sub/w.bin", tmp_dir);
    write_file(path, data, 24);

    fe_graph *g = NULL;
    CHECK_OK(load_external("weights.bin", "8", "24", &g));
    const fe_value *w = value_named(g, "w");
    CHECK(w && w->konst && w->konst->count == 6);
    CHECK(fe_tensor_get_f64(w->konst, 0) == 2.0 && fe_tensor_get_f64(w->konst, 5) == 7.0);
    fe_graph_free(g);
    /* No length: the rest of the file from the offset. */
    CHECK_OK(load_external("weights.bin", "16", NULL, &g));
    CHECK(fe_tensor_get_f64(value_named(g, "w")->konst, 0) == 4.0);
    fe_graph_free(g);
    CHECK_OK(load_external("sub/w.bin", NULL, NULL, &g));
    CHECK(fe_tensor_get_f64(value_named(g, "w")->konst, 5) == 5.0);
    fe_graph_free(g);

    CHECK_FAILS(load_external("../weights.bin", NULL, NULL, &g), LM_ERR_INVALID_FILE,
                "external data location '../weights.bin' must be a relative path");
    CHECK_FAILS(load_external("sub/../../x", NULL, NULL, &g), LM_ERR_INVALID_FILE, "no '..'");
    CHECK_FAILS(load_external(path, NULL, NULL, &g), LM_ERR_INVALID_FILE, "no absolute path");
    CHECK_FAILS(load_external("weights.bin", "32", "24", &g), LM_ERR_INVALID_FILE,
                "external data [32, +24) lies outside 'weights.bin' (40 bytes)");
    CHECK_FAILS(load_external("weights.bin", "0", "99999999999999999999", &g), LM_ERR_INVALID_FILE,
                "length '99999999999999999999' is not a number");
    CHECK_FAILS(load_external("weights.bin", "-1", "24", &g), LM_ERR_INVALID_FILE,
                "offset '-1' is not a number");
    CHECK_FAILS(load_external("weights.bin", "0", "28", &g), LM_ERR_INVALID_FILE,
                "is 28 bytes, expected 24");
    CHECK_FAILS(load_external("weights.bin", "48", NULL, &g), LM_ERR_INVALID_FILE, "lies outside");
    CHECK_FAILS(load_external("missing.bin", NULL, NULL, &g), LM_ERR_IO, "missing.bin");
    CHECK_FAILS(load_external(NULL, "0", "24", &g), LM_ERR_INVALID_FILE, "has no location");
    CHECK(g == NULL);
    /* From memory with no directory: refused. */
    int64_t d[1] = {1};
    Onnx__TensorProto *t = ob_tensor("e", 1, 1, d);
    t->has_data_location = 1;
    t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    CHECK_MODEL_FAILS(model_with_init(t), LM_ERR_INVALID_FILE, "external data is not allowed");
    /* A missing model file. */
    snprintf(path, sizeof path, "%s/none.onnx", tmp_dir);
    CHECK_FAILS(fe_onnx_load(path, &g), LM_ERR_IO, "none.onnx");
    ob_free_all();
}

static size_t put_varint(uint8_t *p, uint64_t v) {
    size_t n = 0;
    do {
        p[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    return n;
}

/* Model.graph -> (Graph.node -> Node.attribute -> Attribute.g)^levels: the
 * innermost graph is at depth 2 + 3 * levels. Returns a malloc'ed file. */
static uint8_t *nested_graphs(unsigned levels, size_t *size) {
    static const uint8_t fields[3] = {(1 << 3) | 2, (5 << 3) | 2, (6 << 3) | 2};
    size_t count = (size_t)levels * 3 + 1;
    /* Tags from the outside in: Model.graph, then node, attribute, g, ... */
    uint8_t *tags = malloc(count);
    tags[0] = (7 << 3) | 2;
    for (size_t i = 1; i < count; i++)
        tags[i] = fields[(i - 1) % 3];
    /* Each message's length, from the inside out. */
    size_t *lens = malloc(count * sizeof *lens);
    uint8_t tmp[10];
    size_t inner = 0;
    for (size_t i = count; i-- > 0;) {
        lens[i] = inner;
        inner += 1 + put_varint(tmp, inner);
    }
    uint8_t *buf = malloc(inner);
    size_t n = 0;
    for (size_t i = 0; i < count; i++) {
        buf[n++] = tags[i];
        n += put_varint(buf + n, lens[i]);
    }
    free(tags);
    free(lens);
    *size = n;
    return buf;
}

static void test_depth_bomb(void) {
    fe_graph *g = NULL;
    size_t size;
    /* 20 levels (depth 62): parsed. The nodes have no op_type, so the model
     * itself is then refused. */
    uint8_t *ok = nested_graphs(20, &size);
    lm_status st = fe_onnx_load_memory(ok, size, NULL, "deep.onnx", &g);
    free(ok);
    CHECK(st == LM_ERR_INVALID_FILE && strstr(lm_last_error(), "has no op_type"));
    uint8_t *bomb = nested_graphs(21, &size);
    st = fe_onnx_load_memory(bomb, size, NULL, "deep.onnx", &g);
    free(bomb);
    CHECK_STATUS(st, LM_ERR_INVALID_FILE);
    CHECK_ERROR_HAS("deep.onnx: messages are nested more than 64 deep");
    bomb = nested_graphs(100000, &size);
    st = fe_onnx_load_memory(bomb, size, NULL, "deep.onnx", &g);
    free(bomb);
    CHECK_STATUS(st, LM_ERR_INVALID_FILE);
    CHECK_ERROR_HAS("nested more than 64 deep");
}

/* Many empty messages: each a few bytes in the file, a big struct once
 * unpacked; the capped allocator keeps it bounded, and the count limit or
 * the checks refuse it. */
static void test_many_empty_nodes(void) {
    size_t n = 200000, size = 0;
    size_t glen = n * 2;
    uint8_t *buf = malloc(glen + 16);
    buf[size++] = (7 << 3) | 2;
    size += put_varint(buf + size, glen);
    for (size_t i = 0; i < n; i++) {
        buf[size++] = (1 << 3) | 2; /* GraphProto.node */
        buf[size++] = 0;
    }
    fe_graph *g = NULL;
    lm_status st = fe_onnx_load_memory(buf, size, NULL, "m.onnx", &g);
    free(buf);
    CHECK_STATUS(st, LM_ERR_INVALID_FILE);
    CHECK_ERROR_HAS("m.onnx: node #0 () has no op_type");
}

/* A million empty attributes in one node: 2 bytes each in the file, a
 * struct of a few hundred bytes each once unpacked. The capped allocator
 * refuses it rather than let it grow. */
static void test_allocation_cap(void) {
    size_t n = 1000000;
    size_t node_len = n * 2;
    uint8_t *buf = malloc(node_len + 32);
    uint8_t lenbuf[10];
    size_t size = 0;
    buf[size++] = (7 << 3) | 2; /* ModelProto.graph */
    size += put_varint(buf + size, 1 + put_varint(lenbuf, node_len) + node_len);
    buf[size++] = (1 << 3) | 2; /* GraphProto.node */
    size += put_varint(buf + size, node_len);
    for (size_t i = 0; i < n; i++) {
        buf[size++] = (5 << 3) | 2; /* NodeProto.attribute */
        buf[size++] = 0;
    }
    fe_graph *g = NULL;
    lm_status st = fe_onnx_load_memory(buf, size, NULL, "m.onnx", &g);
    free(buf);
    CHECK_STATUS(st, LM_ERR_INVALID_FILE);
    CHECK_ERROR_HAS("m.onnx: parsing the 2000008-byte file needs more than");
}

static void test_tensor_files(void) {
    make_tmp_dir();
    int64_t d[2] = {2, 2};
    Onnx__TensorProto *t = ob_tensor("input_0", 7, 2, d);
    int64_t v[4] = {1, -2, 3, 1LL << 50};
    ob_raw(t, v, sizeof v);
    size_t size = onnx__tensor_proto__get_packed_size(t);
    uint8_t *buf = malloc(size);
    onnx__tensor_proto__pack(t, buf);
    fe_arena arena = {0};
    fe_tensor ft;
    CHECK_OK(fe_onnx_load_tensor(buf, size, "input_0.pb", &arena, &ft));
    CHECK(ft.elem == FE_INT64 && ft.rank == 2 && ft.count == 4 && strcmp(ft.name, "input_0") == 0);
    CHECK(fe_tensor_get_i64(&ft, 3) == (1LL << 50));
    fe_arena_free(&arena);
    char path[512];
    snprintf(path, sizeof path, "%s/input_0.pb", tmp_dir);
    write_file(path, buf, size);
    lmfe_tensor_value tv;
    CHECK_OK(lmfe_read_tensor_pb(path, &tv));
    CHECK(tv.elem_type == 7 && tv.rank == 2 && tv.dims[1] == 2 && tv.size == 32);
    CHECK(strcmp(tv.name, "input_0") == 0 && ((const int64_t *)tv.data)[1] == -2);
    lmfe_tensor_value_free(&tv);
    CHECK(tv.data == NULL && tv.name == NULL);
    /* Truncated: an error naming the function and the file. */
    write_file(path, buf, size - 3);
    CHECK_FAILS(lmfe_read_tensor_pb(path, &tv), LM_ERR_INVALID_FILE, "lmfe_read_tensor_pb: ");
    CHECK_ERROR_HAS("input_0.pb: not a valid ONNX protobuf file");
    t->data_type = 8;
    t->has_raw_data = 0;
    size = onnx__tensor_proto__get_packed_size(t);
    onnx__tensor_proto__pack(t, buf);
    write_file(path, buf, size);
    CHECK_FAILS(lmfe_read_tensor_pb(path, &tv), LM_ERR_UNSUPPORTED, "string tensors");
    snprintf(path, sizeof path, "%s/none.pb", tmp_dir);
    CHECK_FAILS(lmfe_read_tensor_pb(path, &tv), LM_ERR_IO, "lmfe_read_tensor_pb: ");
    free(buf);
    ob_free_all();
}

static void remove_tmp_dir(void) {
    if (!tmp_dir[0]) return;
    const char *files[] = {"model.onnx", "weights.bin", "sub/w.bin", "input_0.pb", "sub"};
    char path[600];
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", tmp_dir, files[i]);
        remove(path);
    }
    rmdir(tmp_dir);
}

/* Seeds for the fuzz target: the valid model, an unsorted one, a tensor. */
static int write_corpus(const char *dir) {
    char path[1024];
    size_t size;
    uint8_t *buf = ob_pack(valid_model(), &size);
    snprintf(path, sizeof path, "%s/valid.onnx", dir);
    write_file(path, buf, size);
    free(buf);
    Onnx__GraphProto *gp = ob_graph("g");
    Onnx__ModelProto *m = ob_model(gp);
    int64_t d[1] = {3};
    ob_input(gp, ob_vi("a", ob_tensor_type(1, 1, d, NULL)));
    ob_node(gp, "Relu", "n2", (const char *[]){"b", NULL}, (const char *[]){"c", NULL});
    ob_node(gp, "Relu", "n1", (const char *[]){"a", NULL}, (const char *[]){"b", NULL});
    ob_output(gp, ob_vi("c", NULL));
    buf = ob_pack(m, &size);
    snprintf(path, sizeof path, "%s/unsorted.onnx", dir);
    write_file(path, buf, size);
    free(buf);
    int64_t td[2] = {2, 2};
    Onnx__TensorProto *t = ob_tensor("input_0", 1, 2, td);
    float tv[4] = {1, 2, 3, 4};
    ob_raw(t, tv, sizeof tv);
    size = onnx__tensor_proto__get_packed_size(t);
    buf = malloc(size);
    onnx__tensor_proto__pack(t, buf);
    snprintf(path, sizeof path, "%s/tensor.pb", dir);
    write_file(path, buf, size);
    free(buf);
    ob_free_all();
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "--write-corpus") == 0) return write_corpus(argv[2]);
    TEST_RUN(test_valid_model);
    TEST_RUN(test_elem_types);
    TEST_RUN(test_topological_order);
    TEST_RUN(test_large_graph);
    TEST_RUN(test_large_tensors);
    TEST_RUN(test_helpers);
    TEST_RUN(test_truncated);
    TEST_RUN(test_mutations);
    TEST_RUN(test_wrong_wire_types);
    TEST_RUN(test_cycle);
    TEST_RUN(test_undefined_and_duplicates);
    TEST_RUN(test_bad_tensors);
    TEST_RUN(test_types_and_domains);
    TEST_RUN(test_old_models);
    TEST_RUN(test_external_data);
    TEST_RUN(test_depth_bomb);
    TEST_RUN(test_many_empty_nodes);
    TEST_RUN(test_allocation_cap);
    TEST_RUN(test_tensor_files);
    remove_tmp_dir();
    return test_summary();
}
