/* Building ONNX models in C for the loader's tests: small constructors over
 * protobuf-c's generated structs. Everything they allocate is tracked and
 * released by ob_free_all(), so a test builds freely and frees once.
 * A graph, a node or a tensor holds room for OB_MAX children of each kind.
 */
#ifndef LM_TESTS_FRONTEND_ONNX_BUILD_H
#define LM_TESTS_FRONTEND_ONNX_BUILD_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"

#define OB_MAX 64

static void **ob_blocks_;
static size_t ob_count_, ob_cap_;

static inline void *ob_alloc(size_t size) {
    if (ob_count_ == ob_cap_) {
        ob_cap_ = ob_cap_ ? 2 * ob_cap_ : 256;
        ob_blocks_ = realloc(ob_blocks_, ob_cap_ * sizeof *ob_blocks_);
        if (!ob_blocks_) abort();
    }
    void *p = calloc(1, size ? size : 1);
    if (!p) abort();
    ob_blocks_[ob_count_++] = p;
    return p;
}

static inline void ob_free_all(void) {
    for (size_t i = 0; i < ob_count_; i++)
        free(ob_blocks_[i]);
    free(ob_blocks_);
    ob_blocks_ = NULL;
    ob_count_ = ob_cap_ = 0;
}

static inline char *ob_str(const char *s) {
    size_t n = strlen(s);
    char *p = ob_alloc(n + 1);
    memcpy(p, s, n + 1);
    return p;
}

static inline Onnx__GraphProto *ob_graph(const char *name) {
    Onnx__GraphProto *g = ob_alloc(sizeof *g);
    onnx__graph_proto__init(g);
    g->name = ob_str(name);
    g->node = ob_alloc(OB_MAX * sizeof *g->node);
    g->initializer = ob_alloc(OB_MAX * sizeof *g->initializer);
    g->input = ob_alloc(OB_MAX * sizeof *g->input);
    g->output = ob_alloc(OB_MAX * sizeof *g->output);
    g->value_info = ob_alloc(OB_MAX * sizeof *g->value_info);
    return g;
}

/* A model with opset 13 of the default domain around `g`. */
static inline Onnx__ModelProto *ob_model(Onnx__GraphProto *g) {
    Onnx__ModelProto *m = ob_alloc(sizeof *m);
    onnx__model_proto__init(m);
    m->has_ir_version = 1;
    m->ir_version = 8;
    m->producer_name = ob_str("lightmetal-tests");
    m->graph = g;
    m->opset_import = ob_alloc(OB_MAX * sizeof *m->opset_import);
    Onnx__OperatorSetIdProto *op = ob_alloc(sizeof *op);
    onnx__operator_set_id_proto__init(op);
    op->domain = ob_str("");
    op->has_version = 1;
    op->version = 13;
    m->opset_import[m->n_opset_import++] = op;
    return m;
}

static inline void ob_import(Onnx__ModelProto *m, const char *domain, int64_t version) {
    Onnx__OperatorSetIdProto *op = ob_alloc(sizeof *op);
    onnx__operator_set_id_proto__init(op);
    op->domain = ob_str(domain);
    op->has_version = 1;
    op->version = version;
    m->opset_import[m->n_opset_import++] = op;
}

/* A tensor type; dims < 0 are symbolic when syms[i] is given, else unknown.
 * rank < 0: no shape. */
static inline Onnx__TypeProto *ob_tensor_type(int32_t elem, int rank, const int64_t *dims,
                                              const char *const *syms) {
    Onnx__TypeProto *tp = ob_alloc(sizeof *tp);
    onnx__type_proto__init(tp);
    Onnx__TypeProto__Tensor *tt = ob_alloc(sizeof *tt);
    onnx__type_proto__tensor__init(tt);
    tt->has_elem_type = 1;
    tt->elem_type = elem;
    if (rank >= 0) {
        Onnx__TensorShapeProto *sh = ob_alloc(sizeof *sh);
        onnx__tensor_shape_proto__init(sh);
        sh->dim = ob_alloc((size_t)(rank ? rank : 1) * sizeof *sh->dim);
        for (int i = 0; i < rank; i++) {
            Onnx__TensorShapeProto__Dimension *d = ob_alloc(sizeof *d);
            onnx__tensor_shape_proto__dimension__init(d);
            if (dims[i] >= 0) {
                d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
                d->dim_value = dims[i];
            } else if (syms && syms[i]) {
                d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
                d->dim_param = ob_str(syms[i]);
            }
            sh->dim[sh->n_dim++] = d;
        }
        tt->shape = sh;
    }
    tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp->tensor_type = tt;
    return tp;
}

/* A sequence of tensors of type `elem` (a tensor type). */
static inline Onnx__TypeProto *ob_sequence_type(Onnx__TypeProto *elem) {
    Onnx__TypeProto *tp = ob_alloc(sizeof *tp);
    onnx__type_proto__init(tp);
    Onnx__TypeProto__Sequence *sq = ob_alloc(sizeof *sq);
    onnx__type_proto__sequence__init(sq);
    sq->elem_type = elem;
    tp->value_case = ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE;
    tp->sequence_type = sq;
    return tp;
}

/* An optional of `elem` (a tensor or sequence type). */
static inline Onnx__TypeProto *ob_optional_type(Onnx__TypeProto *elem) {
    Onnx__TypeProto *tp = ob_alloc(sizeof *tp);
    onnx__type_proto__init(tp);
    Onnx__TypeProto__Optional *op = ob_alloc(sizeof *op);
    onnx__type_proto__optional__init(op);
    op->elem_type = elem;
    tp->value_case = ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE;
    tp->optional_type = op;
    return tp;
}

static inline Onnx__ValueInfoProto *ob_vi(const char *name, Onnx__TypeProto *type) {
    Onnx__ValueInfoProto *vi = ob_alloc(sizeof *vi);
    onnx__value_info_proto__init(vi);
    vi->name = ob_str(name);
    vi->type = type;
    return vi;
}

static inline void ob_input(Onnx__GraphProto *g, Onnx__ValueInfoProto *vi) {
    g->input[g->n_input++] = vi;
}
static inline void ob_output(Onnx__GraphProto *g, Onnx__ValueInfoProto *vi) {
    g->output[g->n_output++] = vi;
}
static inline void ob_value_info(Onnx__GraphProto *g, Onnx__ValueInfoProto *vi) {
    g->value_info[g->n_value_info++] = vi;
}

/* A node; `ins` and `outs` are NULL-terminated lists of names ("" for an
 * omitted optional one). */
static inline Onnx__NodeProto *ob_node(Onnx__GraphProto *g, const char *op, const char *name,
                                       const char *const *ins, const char *const *outs) {
    Onnx__NodeProto *n = ob_alloc(sizeof *n);
    onnx__node_proto__init(n);
    n->op_type = ob_str(op);
    if (name) n->name = ob_str(name);
    n->input = ob_alloc(OB_MAX * sizeof *n->input);
    n->output = ob_alloc(OB_MAX * sizeof *n->output);
    n->attribute = ob_alloc(OB_MAX * sizeof *n->attribute);
    for (; ins && *ins; ins++)
        n->input[n->n_input++] = ob_str(*ins);
    for (; outs && *outs; outs++)
        n->output[n->n_output++] = ob_str(*outs);
    if (g) g->node[g->n_node++] = n;
    return n;
}

static inline Onnx__AttributeProto *ob_attr(Onnx__NodeProto *n, const char *name, int type) {
    Onnx__AttributeProto *a = ob_alloc(sizeof *a);
    onnx__attribute_proto__init(a);
    a->name = ob_str(name);
    a->has_type = 1;
    a->type = (Onnx__AttributeProto__AttributeType)type;
    n->attribute[n->n_attribute++] = a;
    return a;
}

/* An INT attribute `name` = `value` on n. */
static inline Onnx__AttributeProto *ob_attr_i(Onnx__NodeProto *n, const char *name, int64_t value) {
    Onnx__AttributeProto *a = ob_attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
    a->has_i = 1;
    a->i = value;
    return a;
}

/* A FLOAT attribute `name` = `value` on n. */
static inline Onnx__AttributeProto *ob_attr_f(Onnx__NodeProto *n, const char *name, float value) {
    Onnx__AttributeProto *a = ob_attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
    a->has_f = 1;
    a->f = value;
    return a;
}

/* A STRING attribute `name` = `value` on n. */
static inline Onnx__AttributeProto *ob_attr_s(Onnx__NodeProto *n, const char *name,
                                              const char *value) {
    Onnx__AttributeProto *a = ob_attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);
    a->has_s = 1;
    a->s.data = (uint8_t *)ob_str(value);
    a->s.len = strlen(value);
    return a;
}

/* An INTS attribute `name` = values[0 .. count) on n. */
static inline Onnx__AttributeProto *ob_attr_is(Onnx__NodeProto *n, const char *name,
                                               const int64_t *values, size_t count) {
    Onnx__AttributeProto *a = ob_attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
    a->ints = ob_alloc((count ? count : 1) * sizeof *a->ints);
    if (count) memcpy(a->ints, values, count * sizeof *values);
    a->n_ints = count;
    return a;
}

static inline Onnx__TensorProto *ob_tensor(const char *name, int32_t elem, int rank,
                                           const int64_t *dims) {
    Onnx__TensorProto *t = ob_alloc(sizeof *t);
    onnx__tensor_proto__init(t);
    if (name) t->name = ob_str(name);
    t->has_data_type = 1;
    t->data_type = elem;
    t->dims = ob_alloc((size_t)(rank > 0 ? rank : 1) * sizeof *t->dims);
    for (int i = 0; i < rank; i++)
        t->dims[t->n_dims++] = dims[i];
    return t;
}

static inline void ob_raw(Onnx__TensorProto *t, const void *data, size_t size) {
    t->has_raw_data = 1;
    t->raw_data.len = size;
    t->raw_data.data = ob_alloc(size);
    if (size) memcpy(t->raw_data.data, data, size);
}

static inline void ob_init(Onnx__GraphProto *g, Onnx__TensorProto *t) {
    g->initializer[g->n_initializer++] = t;
}

/* Serializes `m` into a malloc'ed buffer (the caller frees it). */
static inline uint8_t *ob_pack(const Onnx__ModelProto *m, size_t *size) {
    *size = onnx__model_proto__get_packed_size(m);
    uint8_t *buf = malloc(*size ? *size : 1);
    if (!buf) abort();
    onnx__model_proto__pack(m, buf);
    return buf;
}

#endif
