/* A work list for lowerings made of many small library calls (contract in
 * fe_ops.h). */
#include <stdlib.h>

#include "frontend/fe_ops.h"

lmnn_tensor fe_work_keep(fe_work *w, lm_status st, const lmnn_tensor *made) {
    lmnn_tensor t = *made;
    if (st) {
        w->st = st;
        return (lmnn_tensor){0};
    }
    if (w->count == FE_WORK_MAX) {
        fe_free(t);
        w->st = err_set(LM_ERR_INTERNAL, "a lowering made more than %d tensors", FE_WORK_MAX);
        return (lmnn_tensor){0};
    }
    w->made[w->count++] = t;
    return t;
}

void fe_work_release(fe_work *w, uint32_t mark) {
    while (w->count > mark)
        fe_free(w->made[--w->count]);
}

lmnn_tensor fe_work_scalar(fe_work *w, lmnn_binary_op op, lmnn_tensor a, double s) {
    lmnn_tensor t = {0};
    return w->st ? t : fe_work_keep(w, lmnn_binary_scalar(op, a, s, NULL, &t), &t);
}

lmnn_tensor fe_work_binary(fe_work *w, lmnn_binary_op op, lmnn_tensor a, lmnn_tensor b) {
    lmnn_tensor t = {0};
    return w->st ? t : fe_work_keep(w, lmnn_binary(op, a, b, NULL, &t), &t);
}

lmnn_tensor fe_work_unary(fe_work *w, lm_status (*f)(lmnn_tensor, lmnn_tensor *), lmnn_tensor a) {
    lmnn_tensor t = {0};
    return w->st ? t : fe_work_keep(w, f(a, &t), &t);
}

lmnn_tensor fe_work_reshape(fe_work *w, lmnn_tensor a, const lmnn_shape *shape) {
    lmnn_tensor t = {0};
    return w->st ? t : fe_work_keep(w, lmnn_reshape(a, shape, NULL, &t), &t);
}

lmnn_tensor fe_work_slice(fe_work *w, lmnn_tensor a, const int32_t *begins, const int32_t *ends,
                          uint32_t count) {
    lmnn_tensor t = {0};
    return w->st ? t : fe_work_keep(w, lmnn_slice(a, begins, ends, NULL, count, NULL, &t), &t);
}
