/* The frontend's graph: an ONNX model as plain C data.
 *
 * The loader (fe_onnx.c) turns a ModelProto into this form and checks it:
 * every name resolves, values are produced once, nodes are sorted so every
 * input comes before its use (a cycle is an error), dims are sane and tensor
 * data matches its shape. The later passes (fe_infer.c, fe_lower.c) work on
 * it and never see protobuf types.
 *
 * Memory: everything a graph points to lives in its arena and goes with
 * fe_graph_free. Values and nodes are addressed by index (uint32_t); FE_NONE
 * marks an absent optional input or output ("" in ONNX).
 */
#ifndef LM_FRONTEND_FE_GRAPH_H
#define LM_FRONTEND_FE_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lightmetal/lm_status.h"

#define FE_MAX_RANK 8
/* The training domain's name. */
#define FE_TRAINING_DOMAIN "ai.onnx.preview.training"
#define FE_NONE UINT32_MAX

/* ONNX TensorProto.DataType numbers. */
typedef enum fe_elem {
    FE_UNDEFINED = 0,
    FE_FLOAT = 1,
    FE_UINT8 = 2,
    FE_INT8 = 3,
    FE_UINT16 = 4,
    FE_INT16 = 5,
    FE_INT32 = 6,
    FE_INT64 = 7,
    FE_STRING = 8,
    FE_BOOL = 9,
    FE_FLOAT16 = 10,
    FE_DOUBLE = 11,
    FE_UINT32 = 12,
    FE_UINT64 = 13,
    FE_COMPLEX64 = 14,
    FE_COMPLEX128 = 15,
    FE_BFLOAT16 = 16,
    FE_ELEM_COUNT_
} fe_elem;

/* Bytes per element in host data (bool 1, float16/bfloat16 2); 0 for
 * undefined, string and out-of-range types. */
size_t fe_elem_size(fe_elem elem);
/* ONNX's lower-case name ("float", "int64", "bool"); "unknown" otherwise. */
const char *fe_elem_name(fe_elem elem);

/* ---- arena ---- */
typedef struct fe_arena_block fe_arena_block;
typedef struct fe_arena {
    fe_arena_block *head;
    uint64_t bytes; /* total handed out */
} fe_arena;

/* Zeroed memory aligned to 16 bytes, or NULL when the host is out of memory
 * (or `size` is absurd). */
void *fe_arena_alloc(fe_arena *arena, size_t size);
/* A NUL-terminated copy of `len` bytes (the bytes may contain NULs: callers
 * that need C strings check for them). */
char *fe_arena_strndup(fe_arena *arena, const char *s, size_t len);
/* Hands `allocation` (from malloc, holding `size` bytes in use) to the arena,
 * which frees it with the rest; false (the caller keeps it) when the host is
 * out of memory. */
bool fe_arena_adopt(fe_arena *arena, void *allocation, size_t size);
void fe_arena_free(fe_arena *arena);

/* ---- tensors known on the host ---- */

/* A constant: an initializer, a Constant node's value, a folded result or a
 * graph input the user gave. Data is row-major, little-endian, in the
 * element type's own C representation (bool as uint8_t 0/1, float16 and
 * bfloat16 as uint16_t bits), aligned for it. Strings are not held
 * (data NULL). */
typedef struct fe_tensor {
    fe_elem elem;
    uint32_t rank;
    int64_t dims[FE_MAX_RANK];
    uint64_t count; /* elements: the product of dims (1 for rank 0) */
    const void *data;
    const char *name; /* the initializer's name, or NULL */
} fe_tensor;

/* The element at `index` as a double / int64 (any numeric type; bool 0/1).
 * `index` must be < count. */
double fe_tensor_get_f64(const fe_tensor *t, uint64_t index);
int64_t fe_tensor_get_i64(const fe_tensor *t, uint64_t index);

/* ---- types ---- */

/* A tensor type as inference knows it: rank -1 when unknown; a dim -1 when
 * unknown, with `sym` its dim_param name when symbolic. */
typedef struct fe_type {
    fe_elem elem;
    int32_t rank;
    int64_t dims[FE_MAX_RANK];
    const char *sym[FE_MAX_RANK];
} fe_type;

/* Elements of a fully known type; -1 when a dim or the rank is unknown or
 * the product overflows int64. */
int64_t fe_type_volume(const fe_type *t);
bool fe_type_is_known(const fe_type *t);
/* "float[1, 3, 224, 224]", "int64[batch, 7]", "float[?]" into buf. */
const char *fe_type_format(const fe_type *t, char *buf, size_t size);

/* ---- attributes ---- */

/* ONNX AttributeProto.AttributeType numbers. */
typedef enum fe_attr_type {
    FE_ATTR_UNDEFINED = 0,
    FE_ATTR_FLOAT = 1,
    FE_ATTR_INT = 2,
    FE_ATTR_STRING = 3,
    FE_ATTR_TENSOR = 4,
    FE_ATTR_GRAPH = 5,
    FE_ATTR_FLOATS = 6,
    FE_ATTR_INTS = 7,
    FE_ATTR_STRINGS = 8,
    FE_ATTR_TENSORS = 9,
    FE_ATTR_GRAPHS = 10,
    FE_ATTR_SPARSE_TENSOR = 11,
    FE_ATTR_SPARSE_TENSORS = 12,
    FE_ATTR_TYPE_PROTO = 13,
    FE_ATTR_TYPE_PROTOS = 14,
} fe_attr_type;

struct fe_subgraph;

typedef struct fe_attr {
    const char *name;
    fe_attr_type type;
    int64_t i;     /* INT */
    float f;       /* FLOAT */
    const char *s; /* STRING (NUL-terminated copy; s_len bytes) */
    size_t s_len;
    const fe_tensor *t;              /* TENSOR */
    const int64_t *ints;             /* INTS (count) */
    const float *floats;             /* FLOATS (count) */
    const char **strings;            /* STRINGS (count) */
    const struct fe_subgraph *graph; /* GRAPH */
    size_t count;
} fe_attr;

/* ---- nodes and values ---- */

typedef struct fe_node {
    const char *name; /* may be "" */
    const char *op_type;
    const char *domain; /* "" for the default ONNX domain (also "ai.onnx") */
    int64_t opset;      /* the model's opset version for that domain */
    uint32_t *inputs;   /* value indices; FE_NONE for an omitted optional input */
    uint32_t input_count;
    uint32_t *outputs; /* value indices; FE_NONE for an omitted optional output */
    uint32_t output_count;
    fe_attr *attrs;
    uint32_t attr_count;
    uint32_t index; /* position in the file, for messages ("#12") */
    /* Values its subgraphs read from outside them (If, Loop, Scan): the
     * names the subgraphs use, and the values those names are here (NULL
     * in a subgraph's own nodes, resolved when they are inlined). */
    const char **implicit_names;
    uint32_t *implicit;
    uint32_t implicit_count;
    uint32_t step; /* Loop and Scan: iterations already unrolled (fe_expand.c) */
    bool masked;   /* Loop: unrolling under a condition known only at run time */
    /* NonMaxSuppression: input 0 is the [batch, boxes, boxes] table of
     * which boxes overlap, not boxes (its own rewrite, fe_ops_select.c);
     * never set from a file. */
    bool nms_overlaps;
    /* Made by a rewrite of a reader of padded values (fe_padded.c): it
     * reads them knowingly, and its results' padding is already in place
     * (or masked after it by the rewrite). */
    bool pad_masked;
    /* ScatterElements: input 1 holds one index per row of the data seen as
     * [rows, rest] (its dims after the axis 1: what an Expand spread over
     * the updates' shape, read before it; fe_ops_index.c). Never set from
     * a file. */
    bool index_rows;
} fe_node;

/* A graph attribute (If's branches, Loop's and Scan's bodies), kept by
 * name: fe_expand.c inlines it, renaming what it defines. Its nodes are in
 * file order (ONNX requires them sorted); node i reads in_names[i] and
 * writes out_names[i] ("" for an omitted one). */
typedef struct fe_subgraph {
    const char *name;
    const char **inputs, **outputs; /* formal names */
    uint32_t input_count, output_count;
    const char **init_names;
    const struct fe_tensor **inits;
    uint32_t init_count;
    fe_node *nodes; /* inputs and outputs unset: see in_names, out_names */
    const char ***in_names, ***out_names;
    uint32_t node_count;
    const char **defined; /* every name it defines, sorted (strcmp) */
    uint32_t defined_count;
} fe_subgraph;

typedef struct fe_value {
    const char *name;
    fe_type type;           /* declared (graph inputs/outputs, value_info) or inferred */
    const fe_tensor *konst; /* the value, when known at compile time */
    uint32_t producer;      /* node index, FE_NONE for graph inputs and initializers */
    uint32_t use_count;     /* node inputs that read it, plus 1 when a graph output */
    bool graph_input;       /* a graph input that is not an initializer */
    bool empty_input;       /* a graph input with a 0 dim: known (it has no elements),
                               yet still one of the binary's inputs */
    /* A graph input or output the model declares a sequence of tensors, an
     * optional, or an optional sequence; `type` is then its tensors' type. */
    bool declared_seq, declared_opt;
    /* A sequence (fe_sequence.c): the tensor values it holds, in order,
     * known when compiling; type.elem is their element type. With is_opt,
     * an optional instead: seq_len 0 (empty) or 1, seq[0] the value it
     * holds (a tensor or a sequence). */
    bool is_seq, is_opt;
    uint32_t seq_len;
    const uint32_t *seq;
    bool graph_output;
    bool initializer;
    /* A padded output (lmfe_compile_options.pad_dynamic) or what a reader
     * that keeps padding made of one: 1 + the dim whose entries past the
     * results are padding (fe_pad_value's by element type); 0: none.
     * Only the readers fe_padded_read allows may read it. */
    uint8_t padded;
    /* With padded: 1 + the value saying which entries along that dim are
     * results, a bool vector as long as the dim (its trues first). Values
     * padded by one op share it. */
    uint32_t pad_valid;
    /* With padded: its padding holds whatever the op that computed it made
     * of padding, not yet put back to fe_pad_value's (fe_padded.c puts it
     * back where a reader, or the graph's outputs, need it). */
    bool pad_dirty;
    /* 1 + the value saying which places of a padded NonZero's or
     * Compress's output reading this value (as the condition) hold
     * results: made by the first such op, shared by the others, so that
     * their outputs are padded alike; 0: none yet. */
    uint32_t selected_valid;
    /* A padded NonZero's output when its condition is 1-D: 1 + that
     * condition ([1, count]: the places of its trues), for a TopK of what
     * it selects to read the condition instead (fe_topk_of_selection);
     * 0: none. */
    uint32_t nonzero_of;
    /* A Shape's output that only decides shapes, read from a value padded
     * along a dim: 1 + that value, and the entry of the shape that is its
     * padded dim. A ConstantOfShape or Expand to this shape (torch's
     * full_like, zeros_like, expand_as) is padded alike; 0: none. */
    uint32_t shape_of_padded;
    uint8_t shape_padded_at;
} fe_value;

typedef struct fe_graph {
    fe_arena arena;
    fe_value *values;
    uint32_t value_count, value_cap; /* value_cap: room (fe_expand.c grows it) */
    fe_node *nodes;                  /* topologically sorted */
    uint32_t node_count, node_cap;
    uint32_t *inputs; /* graph inputs that are not initializers, in file order */
    uint32_t input_count;
    uint32_t *outputs; /* graph outputs, in file order */
    uint32_t output_count;
    /* Per graph output, its name in the binary when not its value's (a
     * sequence's tensors: NAME[i]); NULL when there are none. */
    const char **output_names;
    int64_t ir_version;
    int64_t opset; /* the default domain's version */
    const char *producer;
    const char *path; /* the file, for messages */
} fe_graph;

/* Limits on what a model may ask of the loader: an absurd file is refused
 * before it can make the loader allocate without bound. */
#define FE_MAX_NODES (1u << 22)
#define FE_MAX_VALUES (1u << 23)
#define FE_MAX_TENSOR_BYTES (UINT64_C(1) << 34)

/* Loads and checks the model at `path` (external data files are resolved
 * against its directory and must stay inside it). Errors: LM_ERR_IO,
 * LM_ERR_INVALID_FILE with a message naming the file and what is wrong,
 * LM_ERR_OUT_OF_HOST_MEMORY. */
lm_status fe_onnx_load(const char *path, fe_graph **out_graph);

/* The same from memory (`size` bytes; used in place only during the call).
 * `dir` resolves external data (NULL: external data is refused); `label`
 * names the model in messages. */
lm_status fe_onnx_load_memory(const void *data, size_t size, const char *dir, const char *label,
                              fe_graph **out_graph);

/* Parses a serialized TensorProto (ONNX test data's .pb files) into `out`,
 * data in `arena`. */
lm_status fe_onnx_load_tensor(const void *data, size_t size, const char *label, fe_arena *arena,
                              fe_tensor *out_tensor);

void fe_graph_free(fe_graph *graph);

/* Node label for messages: "'name' (Op)" or "#index (Op)". */
const char *fe_node_label(const fe_node *node, char *buf, size_t size);

/* The attribute named `name`, or NULL. */
const fe_attr *fe_node_attr(const fe_node *node, const char *name);

/* Index of the value named `name`, or FE_NONE. */
uint32_t fe_graph_find_value(const fe_graph *graph, const char *name);

/* Makes the values named `names` (`count` of them, 0: nothing changes) the
 * graph's outputs instead of its own, then removes the nodes they do not
 * depend on and the graph inputs only those nodes read: a model compiled up
 * to a point (a detector before its post-processing). Any node output or
 * initializer may be named. Errors (LM_ERR_INVALID_ARGUMENT): a NULL or
 * unknown name, a name given twice, a graph input, a declared sequence or
 * optional. */
lm_status fe_graph_cut(fe_graph *graph, const char *const *names, size_t count);

/* A walk back through the graph: pushes node n's operands (inputs, then
 * implicit inputs) not yet `seen` onto `stack` (room for every value) and
 * marks them seen. */
void fe_node_push_operands(const fe_node *n, uint8_t *seen, uint32_t *stack, uint32_t *top);

#endif
