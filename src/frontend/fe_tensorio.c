/* The public tensor-file helpers of lightmetal/frontend.h: ONNX test data's
 * serialized TensorProto files as lmfe_tensor_value. */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/file.h"
#include "frontend/fe_graph.h"
#include "lightmetal/frontend.h"

lm_status lmfe_read_tensor_pb(const char *path, lmfe_tensor_value *out) {
    if (!out) return err_set(LM_ERR_INVALID_ARGUMENT, "lmfe_read_tensor_pb: out is NULL");
    memset(out, 0, sizeof *out);
    if (!path) return err_set(LM_ERR_INVALID_ARGUMENT, "lmfe_read_tensor_pb: path is NULL");
    file_mapping map = {0};
    lm_status st = file_map(path, &map);
    if (st != LM_OK) return err_prefix(st, "lmfe_read_tensor_pb");
    fe_arena arena = {0};
    fe_tensor t;
    st = fe_onnx_load_tensor(map.data, map.size, path, &arena, &t);
    file_unmap(&map);
    if (st != LM_OK) {
        fe_arena_free(&arena);
        return err_prefix(st, "lmfe_read_tensor_pb");
    }
    if (t.elem == FE_STRING) {
        fe_arena_free(&arena);
        return err_set(LM_ERR_UNSUPPORTED,
                       "lmfe_read_tensor_pb: %s: string tensors are not supported", path);
    }
    /* count * element size was checked against FE_MAX_TENSOR_BYTES. */
    uint64_t bytes = t.count * fe_elem_size(t.elem);
    void *data = malloc(bytes ? (size_t)bytes : 1);
    char *name = NULL;
    if (t.name) {
        size_t len = strlen(t.name);
        name = malloc(len + 1);
        if (name) memcpy(name, t.name, len + 1);
    }
    if (!data || (t.name && !name)) {
        free(data);
        free(name);
        fe_arena_free(&arena);
        return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "lmfe_read_tensor_pb: %s: out of host memory",
                       path);
    }
    if (bytes) memcpy(data, t.data, (size_t)bytes);
    fe_arena_free(&arena);
    out->name = name;
    out->elem_type = (int32_t)t.elem;
    out->rank = t.rank;
    memcpy(out->dims, t.dims, sizeof out->dims);
    out->data = data;
    out->size = bytes;
    return LM_OK;
}

void lmfe_tensor_value_free(lmfe_tensor_value *value) {
    if (!value) return;
    /* Both were malloc'd by lmfe_read_tensor_pb; the struct says const so
     * that callers can also point it at their own data. */
    free((void *)(uintptr_t)value->data);
    free((void *)(uintptr_t)value->name);
    memset(value, 0, sizeof *value);
}

const char *lmfe_elem_type_name(int32_t elem_type) {
    if (elem_type <= 0 || elem_type >= FE_ELEM_COUNT_) return "unknown";
    return fe_elem_name((fe_elem)elem_type);
}
