/* The op registry: every family's table, looked up by ONNX op type. */
#include <string.h>

#include "frontend/fe_ops.h"

static const fe_op_def *const *all_ops(size_t *out_count) {
    static const fe_op_def *table[FE_OPS_MAX];
    static size_t count;
    /* Filled once; the tables are constant, so racing fills write the same. */
    if (!count) {
        size_t n = 0;
        const fe_op_family *f = fe_op_families;
        for (; f->ops; f++)
            for (size_t i = 0; i < *f->count && n < FE_OPS_MAX; i++)
                table[n++] = &f->ops[i];
        count = n;
    }
    *out_count = count;
    return table;
}

const fe_op_def *fe_op_find(const char *op_type) {
    size_t count;
    const fe_op_def *const *t = all_ops(&count);
    for (size_t i = 0; i < count; i++)
        if (strcmp(t[i]->op_type, op_type) == 0) return t[i];
    return NULL;
}

const fe_op_def *const *fe_op_all(size_t *out_count) {
    return all_ops(out_count);
}

const char *lmfe_supported_op(size_t index) {
    size_t count;
    const fe_op_def *const *t = all_ops(&count);
    if (index < count) return t[index]->op_type;
    index -= count;
    return index < fe_ops_training_count ? fe_ops_training[index].op_type : NULL;
}

const fe_op_family fe_op_families[] = {
    {fe_ops_eltwise, &fe_ops_eltwise_count},
    {fe_ops_shape, &fe_ops_shape_count},
    {fe_ops_misc, &fe_ops_misc_count},
    {fe_ops_reduce, &fe_ops_reduce_count},
    {fe_ops_nn, &fe_ops_nn_count},
    {fe_ops_resize, &fe_ops_resize_count},
    {fe_ops_rnn, &fe_ops_rnn_count},
    {fe_ops_index, &fe_ops_index_count},
    {fe_ops_quant, &fe_ops_quant_count},
    {fe_ops_spectral, &fe_ops_spectral_count},
    {fe_ops_grid, &fe_ops_grid_count},
    {fe_ops_select, &fe_ops_select_count},
    {fe_ops_sequence, &fe_ops_sequence_count},
    {fe_ops_text, &fe_ops_text_count},
    {fe_ops_random, &fe_ops_random_count},
    {fe_ops_control, &fe_ops_control_count},
    {NULL, NULL},
};
