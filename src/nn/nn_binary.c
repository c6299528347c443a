/* Element-wise binary (and ternary) ops with NumPy broadcasting.
 *
 * One program shape serves every op: binary_reader.c maps each output tile to
 * the tile of each input (broadcasting across outer dims and across tile rows
 * or columns is index arithmetic there), binary_compute.c runs the op's math
 * on those tiles, and tile_writer.c writes the result (zeroing the padding
 * when the math can make it nonzero). Broadcasting inside a tile -- a [1, W]
 * row, an [H, 1] column or a [1, 1] scalar against a bigger matrix -- is the
 * compute engine's: the FPU's add/sub/mul_tiles_bcast_{rows,cols,scalar}
 * repeat row 0, column 0 or element [0][0] of the broadcast operand's tile,
 * which holds the valid values (the padding, zero, is never replicated).
 *
 * The math of an op:
 *   - add/sub/mul/rsub when the FPU can take the broadcast operand second:
 *     one FPU call, e.g. sub with the columns of operand 1 broadcast;
 *   - otherwise every operand is loaded into dst (input i into dst i: a plain
 *     copy_tile, or a broadcast expanded exactly by add_tiles_bcast_* with a
 *     -0.0 tile) and the op's dst-to-dst call combines them into dst 0
 *     ("div_binary_tile(0, 1, 0)"); a scalar operand is a fill_tile_bitcast;
 *   - then the fused activation's unary chain on dst 0.
 * The FPU call and the loads (which broadcast, which operand first) are
 * runtime args of binary_compute.c; the dst-to-dst calls after them are a
 * string (NN_BINARY_MATH), so the compiled kernels are one per op and
 * activation, not per broadcast pattern.
 * So a new op is a table entry: its dst-to-dst call and what it gives at 0.
 *
 * dst is float32 for every op (fp32_dest_acc): inputs are exact there and the
 * result is rounded once to the output dtype by the pack. */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "nn/nn_internal.h"

#define MAX_INPUTS 3
#define MAX_OUTER (LMNN_MAX_DIMS - 2) /* NN_BIN_OUTER in binary_reader.c */
#define NEG_ZERO_CB 8

/* Ops past the public enum: the ternary ones. */
enum { OP_WHERE = LMNN_BINARY_OP_COUNT_, OP_COUNT_ };

typedef struct binop_def {
    const char *name;  /* ttnn's name; the public function is lmnn_<name> */
    uint32_t arity;    /* tensor operands (a scalar form replaces the second) */
    const char *fpu;   /* "add", "sub", "mul": has <fpu>_tiles[_bcast_*], or NULL */
    bool commutative;  /* the FPU may take the operands in either order */
    bool reversed;     /* the FPU computes it as operand 1 (fpu) operand 0 */
    const char *sfpu;  /* dst-to-dst: dst 0 = op(dst 0, dst 1[, dst 2]) */
    bool available;    /* this build's compute engine has the sfpu call */
    bool nonzero_at_0; /* op(0, 0[, 0]) != 0: the padding must be zeroed */
} binop_def;

static const binop_def defs[OP_COUNT_] = {
    [LMNN_BINARY_ADD] = {"add", 2, "add", true, false, "add_binary_tile(0, 1, 0)", true, false},
    [LMNN_BINARY_SUB] = {"sub", 2, "sub", false, false, "sub_binary_tile(0, 1, 0)", true, false},
    [LMNN_BINARY_MUL] = {"mul", 2, "mul", true, false, "mul_binary_tile(0, 1, 0)", true, false},
    [LMNN_BINARY_DIV] = {"div", 2, NULL, false, false, "div_binary_tile(0, 1, 0)", true, true},
    [LMNN_BINARY_RSUB] = {"rsub", 2, "sub", false, true, "rsub_binary_tile(0, 1, 0)", true, false},
    [LMNN_BINARY_MAXIMUM] = {"maximum", 2, NULL, false, false, "binary_max_tile(0, 1, 0)", true,
                             false},
    [LMNN_BINARY_MINIMUM] = {"minimum", 2, NULL, false, false, "binary_min_tile(0, 1, 0)", true,
                             false},
    /* Comparisons and logical ops give 1.0 or 0.0 (nonzero = true). */
    [LMNN_BINARY_EQ] = {"eq", 2, NULL, false, false, "eq_binary_tile(0, 1, 0)", true, true},
    [LMNN_BINARY_NE] = {"ne", 2, NULL, false, false, "ne_binary_tile(0, 1, 0)", true, false},
    [LMNN_BINARY_LT] = {"lt", 2, NULL, false, false, "lt_binary_tile(0, 1, 0)", true, false},
    [LMNN_BINARY_LE] = {"le", 2, NULL, false, false, "le_binary_tile(0, 1, 0)", true, true},
    [LMNN_BINARY_GT] = {"gt", 2, NULL, false, false, "gt_binary_tile(0, 1, 0)", true, false},
    [LMNN_BINARY_GE] = {"ge", 2, NULL, false, false, "ge_binary_tile(0, 1, 0)", true, true},
    [LMNN_BINARY_LOGICAL_AND] = {"logical_and", 2, NULL, false, false,
                                 "logical_and_binary_tile(0, 1, 0)", true, false},
    [LMNN_BINARY_LOGICAL_OR] = {"logical_or", 2, NULL, false, false,
                                "logical_or_binary_tile(0, 1, 0)", true, false},
    [LMNN_BINARY_LOGICAL_XOR] = {"logical_xor", 2, NULL, false, false,
                                 "logical_xor_binary_tile(0, 1, 0)", true, false},
    /* torch.pow: 0^0 = 1. */
    [LMNN_BINARY_POW] = {"pow", 2, NULL, false, false, "power_binary_tile(0, 1, 0)", true, true},
    /* where(0, 0, 0) = 0: the padding stays zero unless an input broadcasts. */
    [OP_WHERE] = {"where", 3, NULL, false, false, "where_tile(0, 1, 2, 0)", true, false},
};

const char *lmnn_binary_op_name(lmnn_binary_op op) {
    return op > LMNN_BINARY_INVALID && op < LMNN_BINARY_OP_COUNT_ ? defs[op].name : "invalid";
}

void lmnn_binary_options_init(lmnn_binary_options *opts) {
    if (!opts) return;
    *opts = (lmnn_binary_options){0};
    opts->activation_alpha = NAN;
    opts->activation_beta = NAN;
}

/* How an input's tile meets the output's: whole, or its row 0, column 0 or
 * element [0][0] repeated (the names of the FPU broadcast forms). */
typedef enum bcast { BC_NONE, BC_ROWS, BC_COLS, BC_SCALAR } bcast;

/* One call of an op, checked. */
typedef struct call {
    const char *name; /* for messages: "lmnn_add", "lmnn_add_scalar" */
    int op;
    uint32_t n; /* tensor inputs */
    nn_tensor *in[MAX_INPUTS];
    bool has_scalar;
    uint32_t scalar_bits;
    lmnn_shape shape;                         /* the broadcast shape */
    uint32_t dims[MAX_INPUTS][LMNN_MAX_DIMS]; /* inputs' dims aligned to shape.rank */
    bcast mode[MAX_INPUTS];
    lmnn_dtype dtype;
    lmnn_memory_config memory;
    char activation[512];
    uint32_t act_params[NN_UNARY_PARAMS]; /* the activation's nn_param values */
    lmnn_unary_op act_op;                 /* LMNN_UNARY_INVALID: none */
    bool activation_nonzero_at_0;
} call;

/* The broadcast shape of the inputs, or an error naming the first input that
 * does not fit the ones before it. */
static lm_status broadcast_shapes(call *c, const char *const *args) {
    uint32_t rank = 0;
    for (uint32_t i = 0; i < c->n; i++)
        if (c->in[i]->shape.rank > rank) rank = c->in[i]->shape.rank;
    lmnn_shape out = {rank, {0}};
    for (uint32_t i = 0; i < c->n; i++) {
        const lmnn_shape *s = &c->in[i]->shape;
        lmnn_shape before = out; /* of inputs 0 .. i-1, for the message */
        for (uint32_t d = 0; d < rank; d++) {
            uint32_t x = d + s->rank >= rank ? s->dims[d + s->rank - rank] : 1;
            c->dims[i][d] = x;
            if (i == 0 || out.dims[d] == 1) {
                out.dims[d] = x;
            } else if (x != 1 && x != out.dims[d]) {
                char sb[128], ob[128];
                /* Show the earlier shape as given when it is one input. */
                const lmnn_shape *o = i == 1 ? &c->in[0]->shape : &before;
                nn_shape_str(s, sb, sizeof sb);
                nn_shape_str(o, ob, sizeof ob);
                if (i == 1)
                    return nn_fail(LM_ERR_INVALID_ARGUMENT, c->name,
                                   "%s: shape %s does not broadcast with %s's shape %s", args[i],
                                   sb, args[0], ob);
                return nn_fail(LM_ERR_INVALID_ARGUMENT, c->name,
                               "%s: shape %s does not broadcast with the shape %s of the inputs "
                               "before it",
                               args[i], sb, ob);
            }
        }
    }
    c->shape = out;
    nn_tiles g = nn_tiles_of(&out);
    for (uint32_t i = 0; i < c->n; i++) {
        uint32_t h = rank >= 2 ? c->dims[i][rank - 2] : 1, w = rank >= 1 ? c->dims[i][rank - 1] : 1;
        bool rows = h == 1 && g.h > 1, cols = w == 1 && g.w > 1;
        c->mode[i] = rows && cols ? BC_SCALAR : rows ? BC_ROWS : cols ? BC_COLS : BC_NONE;
    }
    return LM_OK;
}

static size_t appendf(char *buf, size_t size, size_t n, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static size_t appendf(char *buf, size_t size, size_t n, const char *fmt, ...) {
    if (n >= size) return n;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(buf + n, size - n, fmt, ap);
    va_end(ap);
    return k < 0 ? size : n + (size_t)k;
}

/* binary_compute.c's code of an FPU op (1 add, 2 sub, 3 mul; 0: none). */
static uint32_t fpu_op(const char *name) {
    return !strcmp(name, "add") ? 1 : !strcmp(name, "sub") ? 2 : 3;
}

/* The compute kernel's per-call runtime args (binary_compute.c: args 6..16):
 * FPU op (0: load the operands instead), its broadcast (a bcast), the
 * operands' circular buffers, how each operand loads (a bcast; BC_NONE:
 * copy), whether the -0 tile is needed, whether a scalar operand fills dst n,
 * the dst-to-dst op (its index in defs, 0: none) and the fused activation
 * (an lmnn_unary_op, 0: none). */
enum {
    LOAD_FPU,
    LOAD_FPU_BCAST,
    LOAD_FPU_A,
    LOAD_FPU_B,
    LOAD_MODE,
    LOAD_NEG_ZERO = LOAD_MODE + 3,
    LOAD_SCALAR,
    LOAD_SFPU,
    LOAD_ACT,
    LOAD_COUNT
};

/* NN_BINARY_MATH, the same for every call: the dst-to-dst op as a switch on
 * nn_bop, then the activation as a switch on nn_op (built once). */
static char math_text[32768];
static pthread_once_t math_once = PTHREAD_ONCE_INIT;

static void build_math_text(void) {
    size_t n = appendf(math_text, sizeof math_text, 0, "switch (nn_bop) {");
    for (int op = 1; op < OP_COUNT_; op++)
        if (defs[op].sfpu && defs[op].available)
            n = appendf(math_text, sizeof math_text, n, " case %d: %s; break;", op, defs[op].sfpu);
    n = appendf(math_text, sizeof math_text, n, " default: break; } %s", nn_unary_fused_switch());
}

/* The compute kernel's load args of a call; *neg_zero when it needs the -0
 * tile. */
static void build_loads(const call *c, uint32_t load[LOAD_COUNT], bool *neg_zero) {
    const binop_def *d = &defs[c->op];
    *neg_zero = false;
    for (uint32_t i = 0; i < LOAD_COUNT; i++)
        load[i] = 0;
    bool fpu = d->fpu && !c->has_scalar && c->n == 2;
    int first = -1; /* FPU: the operand that is not broadcast inside its tile */
    if (fpu && !d->reversed && c->mode[0] == BC_NONE)
        first = 0;
    else if (fpu && (d->reversed || d->commutative) && c->mode[1] == BC_NONE)
        first = 1;
    if (first >= 0) {
        int second = 1 - first;
        load[LOAD_FPU] = fpu_op(d->fpu);
        load[LOAD_FPU_BCAST] = (uint32_t)c->mode[second];
        load[LOAD_FPU_A] = (uint32_t)first;
        load[LOAD_FPU_B] = (uint32_t)second;
    } else {
        for (uint32_t i = 0; i < c->n; i++) {
            load[LOAD_MODE + i] = (uint32_t)c->mode[i];
            if (c->mode[i] != BC_NONE) *neg_zero = true;
        }
        load[LOAD_SCALAR] = c->has_scalar;
        load[LOAD_SFPU] = (uint32_t)c->op;
    }
    load[LOAD_NEG_ZERO] = *neg_zero;
    load[LOAD_ACT] = (uint32_t)c->act_op;
}

static lm_status run(call *c, lmnn_tensor *out) {
    lm_device *device = c->in[0]->device;
    bool neg_zero;
    uint32_t load[LOAD_COUNT];
    build_loads(c, load, &neg_zero);
    pthread_once(&math_once, build_math_text);
    const binop_def *d = &defs[c->op];
    nn_tiles g = nn_tiles_of(&c->shape);
    bool edge = g.h % 32 || g.w % 32;
    bool any_bcast = false;
    for (uint32_t i = 0; i < c->n; i++)
        any_bcast |= c->mode[i] != BC_NONE;
    /* The padding of the output is op(padding of the inputs), zero unless the
     * op or activation is nonzero at 0 or a broadcast input repeats its values
     * into it; a scalar operand is not zero there either. */
    bool zero_pad =
        edge && (d->nonzero_at_0 || c->activation_nonzero_at_0 || any_bcast || c->has_scalar);

    lmnn_tensor oh;
    nn_tensor *o = NULL;
    lm_status st =
        nn_tensor_new_any(c->name, device, &c->shape, c->dtype, LMNN_TILE, &c->memory, &oh, &o);
    if (st) return st;
    nn_key key;
    nn_key_init(&key, "binary");
    nn_key_u32(&key, (uint32_t)c->op);
    nn_key_u32(&key, c->n);
    for (uint32_t i = 0; i < c->n; i++)
        nn_key_tensor(&key, c->in[i]);
    nn_key_tensor(&key, o);
    nn_key_u32(&key, c->has_scalar);
    nn_key_u32(&key, c->scalar_bits); /* per-core runtime arguments */
    nn_key_add(&key, c->act_params, sizeof c->act_params);
    nn_key_add(&key, load, sizeof load);
    nn_program *prog = nn_cache_find(device, &key);
    if (!prog) {
        /* Reader arguments: the output's outer dims without the 1s, adjacent
         * ones merged when every input broadcasts along both or neither. */
        uint32_t rank = c->shape.rank, outer = rank > 2 ? rank - 2 : 0;
        uint32_t odim[MAX_OUTER], stride[MAX_INPUTS][MAX_OUTER], no = 0;
        for (uint32_t dd = 0; dd < outer; dd++) {
            if (c->shape.dims[dd] == 1) continue;
            uint32_t s[MAX_INPUTS];
            bool same = no > 0;
            for (uint32_t i = 0; i < c->n; i++) {
                /* The input's stride along dim dd, in matrices; 0 if it repeats. */
                uint32_t prod = 1;
                for (uint32_t e = dd + 1; e < outer; e++)
                    prod *= c->dims[i][e];
                s[i] = c->dims[i][dd] == 1 ? 0 : prod;
                if (no > 0 && (s[i] == 0) != (stride[i][no - 1] == 0)) same = false;
            }
            if (same) {
                odim[no - 1] *= c->shape.dims[dd];
                for (uint32_t i = 0; i < c->n; i++)
                    stride[i][no - 1] = s[i];
            } else {
                odim[no] = c->shape.dims[dd];
                for (uint32_t i = 0; i < c->n; i++)
                    stride[i][no] = s[i];
                no++;
            }
        }
        /* Reader: compile-time n; the inputs' buffers and the geometry as
         * runtime args after {first, count}. */
        uint32_t rcargs[] = {c->n};
        uint32_t rargs[3 + MAX_OUTER + MAX_INPUTS * (3 + MAX_OUTER + NN_ACCESSOR_WORDS)] = {
            g.ht, g.wt, no};
        for (uint32_t k = 0; k < no; k++)
            rargs[3 + k] = odim[k];
        uint32_t rcount = 3 + MAX_OUTER;
        for (uint32_t i = 0; i < c->n; i++) {
            nn_tiles gi = nn_tiles_of(&c->in[i]->shape);
            rargs[rcount] = 0; /* where its accessor words start: below */
            rargs[rcount + 1] = gi.ht;
            rargs[rcount + 2] = gi.wt;
            for (uint32_t k = 0; k < no; k++)
                rargs[rcount + 3 + k] = stride[i][k];
            rcount += 3 + MAX_OUTER;
        }
        /* The inputs' accessor words after the geometry; each input's block
         * says where its words start (runtime arg indices count {first,
         * count} too). */
        for (uint32_t i = 0; i < c->n && !st; i++) {
            uint32_t nw = 0;
            rargs[3 + MAX_OUTER + i * (3 + MAX_OUTER)] = 2 + rcount;
            st = nn_accessor_words(c->name, c->in[i], rargs + rcount, &nw);
            rcount += nw;
        }
        uint32_t cargs[] = {c->n};
        lm_data_format fout = nn_tile_format(c->dtype);
        uint32_t wargs[NN_TILE_WRITER_ARGS], nw = 0;
        if (!st) st = nn_tile_writer_args(c->name, o, c->n, zero_pad, wargs, &nw);
        uint32_t cextra[4 + LOAD_COUNT] = {c->scalar_bits, c->act_params[0], c->act_params[1],
                                           c->act_params[2]};
        memcpy(cextra + 4, load, sizeof load);
        lm_kernel_define def = {"NN_BINARY_MATH", math_text};
        nn_kernel_spec reader = {"binary_reader.c", LM_PROCESSOR_DM0, rcargs, 1, NULL, 0, false};
        nn_kernel_spec compute = {
            "binary_compute.c", LM_PROCESSOR_COMPUTE, cargs, 1, &def, 1, true};
        nn_kernel_spec writer = {"tile_writer.c", LM_PROCESSOR_DM1, NULL, 0, NULL, 0, false};
        lm_kernel rk, ck, wk;
        nn_split split;
        nn_program p = {0};
        if (!st) st = nn_split_work(c->name, device, o->pages, &split);
        p.cores = split.all;
        if (!st) st = nn_program_begin(c->name, device, &p);
        for (uint32_t i = 0; i < c->n && !st; i++) {
            lm_data_format f = nn_tile_format(c->in[i]->dtype);
            st = nn_program_cb(c->name, &p, i, f, (uint32_t)lm_tile_size(f), 2);
        }
        if (!st && neg_zero)
            st = nn_program_cb(c->name, &p, NEG_ZERO_CB, LM_DATA_FORMAT_FLOAT16_B,
                               (uint32_t)lm_tile_size(LM_DATA_FORMAT_FLOAT16_B), 1);
        if (!st) st = nn_program_cb(c->name, &p, 16, fout, (uint32_t)lm_tile_size(fout), 2);
        if (!st) st = nn_program_kernel(c->name, &p, &reader, &rk);
        if (!st) st = nn_program_kernel(c->name, &p, &compute, &ck);
        if (!st) st = nn_program_kernel(c->name, &p, &writer, &wk);
        if (!st) st = nn_kernel_split_args(c->name, &p, rk, &split, rargs, rcount);
        if (!st) st = nn_kernel_split_args(c->name, &p, ck, &split, cextra, 4 + LOAD_COUNT);
        if (!st) st = nn_kernel_split_args(c->name, &p, wk, &split, wargs, nw);
        if (st) nn_program_discard(&p);
        if (!st) st = nn_cache_add(c->name, device, &key, &p, &prog);
    }
    nn_tensor *tensors[MAX_INPUTS + 1];
    for (uint32_t i = 0; i < c->n; i++)
        tensors[i] = c->in[i];
    tensors[c->n] = o;
    if (!st) st = nn_launch(c->name, prog, tensors, c->n + 1);
    if (st) {
        nn_tensor_discard(oh);
        return st;
    }
    *out = oh;
    return LM_OK;
}

/* Checks a call and runs it: `n` tensor inputs named `args`, the output's
 * dtype and memory config from input `like` unless the options give them. */
static lm_status op_call(int op, const char *suffix, const lmnn_tensor *in, const char *const *args,
                         uint32_t n, uint32_t like, const double *scalar,
                         const lmnn_binary_options *opts, lmnn_tensor *out) {
    char name[64];
    const binop_def *d = &defs[op];
    snprintf(name, sizeof name, "lmnn_%s%s", d->name, suffix);
    if (!out) return nn_fail(LM_ERR_INVALID_ARGUMENT, name, "out is NULL");
    lmnn_binary_options defaults;
    if (!opts) {
        lmnn_binary_options_init(&defaults);
        opts = &defaults;
    }
    call c;
    memset(&c, 0, sizeof c);
    c.name = name;
    c.op = op;
    c.n = n;
    lm_status st = LM_OK;
    for (uint32_t i = 0; i < n && !st; i++) {
        st = nn_get_tensor_any(name, args[i], in[i], &c.in[i]);
        if (!st) st = nn_check_layout(name, args[i], c.in[i], LMNN_TILE);
        if (!st) st = nn_check_float(name, args[i], c.in[i]);
        if (!st && i) st = nn_check_same_device(name, args[i], c.in[i], c.in[0]);
    }
    if (!st) st = broadcast_shapes(&c, args);
    if (st) return st;
    c.dtype = opts->output.dtype ? opts->output.dtype : c.in[like]->dtype;
    if (!nn_dtype_is_float(c.dtype))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, name,
                       "output.dtype: expected a float dtype, given %s", lmnn_dtype_name(c.dtype));
    c.memory = nn_output_memory(&opts->output.memory, c.in[like]);
    /* A shard spec fits one shape: an input broadcast to a larger output
     * passes on its buffer type, interleaved, unless an input of the
     * output's shape has a sharded config to give. */
    if (nn_memory_is_sharded(&c.memory) && !opts->output.memory.layout &&
        !nn_shape_equal(&c.in[like]->shape, &c.shape)) {
        c.memory.layout = LM_BUFFER_INTERLEAVED;
        c.memory.shard = (lmnn_shard_spec){0};
        for (uint32_t i = 0; i < n; i++)
            if (nn_shape_equal(&c.in[i]->shape, &c.shape)) {
                c.memory = nn_output_memory(&opts->output.memory, c.in[i]);
                break;
            }
    }
    if (opts->activation != LMNN_UNARY_INVALID) {
        lmnn_unary_options u;
        lmnn_unary_options_init(&u, opts->activation);
        double alpha = isnan(opts->activation_alpha) ? u.alpha : opts->activation_alpha;
        double beta = isnan(opts->activation_beta) ? u.beta : opts->activation_beta;
        st = nn_unary_chain(name, "activation", opts->activation, alpha, beta, c.activation,
                            sizeof c.activation, c.act_params, &c.activation_nonzero_at_0);
        c.act_op = opts->activation;
        if (st) return st;
    }
    if (!d->available) {
        char need[64];
        snprintf(need, sizeof need, "%s", d->sfpu);
        char *paren = strchr(need, '(');
        if (paren) *paren = 0;
        return nn_fail(LM_ERR_UNSUPPORTED, name,
                       "needs the compute engine's %s, which this build does not have", need);
    }
    if (scalar) {
        float f = (float)*scalar;
        c.has_scalar = true;
        memcpy(&c.scalar_bits, &f, sizeof f);
    }
    return run(&c, out);
}

static const char *const ab[] = {"a", "b"};

lm_status lmnn_binary(lmnn_binary_op op, lmnn_tensor a, lmnn_tensor b,
                      const lmnn_binary_options *opts, lmnn_tensor *out) {
    lmnn_tensor in[2] = {a, b};
    if (op <= LMNN_BINARY_INVALID || op >= LMNN_BINARY_OP_COUNT_) /* the ternary ops too */
        return nn_fail(LM_ERR_INVALID_ARGUMENT, "lmnn_binary", "op: unknown binary op %d", (int)op);
    return op_call((int)op, "", in, ab, 2, 0, NULL, opts, out);
}

lm_status lmnn_binary_scalar(lmnn_binary_op op, lmnn_tensor a, double s,
                             const lmnn_binary_options *opts, lmnn_tensor *out) {
    if (op <= LMNN_BINARY_INVALID || op >= LMNN_BINARY_OP_COUNT_)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, "lmnn_binary_scalar", "op: unknown binary op %d",
                       (int)op);
    return op_call((int)op, "_scalar", &a, ab, 1, 0, &s, opts, out);
}

lm_status lmnn_where(lmnn_tensor cond, lmnn_tensor a, lmnn_tensor b, lmnn_tensor *out) {
    static const char *const args[] = {"cond", "a", "b"};
    lmnn_tensor in[3] = {cond, a, b};
    return op_call(OP_WHERE, "", in, args, 3, 1, NULL, NULL, out);
}

#define BINARY_BY_NAME(fn, op)                                                                     \
    lm_status lmnn_##fn(lmnn_tensor a, lmnn_tensor b, lmnn_tensor *out) {                          \
        return lmnn_binary(op, a, b, NULL, out);                                                   \
    }
BINARY_BY_NAME(add, LMNN_BINARY_ADD)
BINARY_BY_NAME(sub, LMNN_BINARY_SUB)
BINARY_BY_NAME(mul, LMNN_BINARY_MUL)
BINARY_BY_NAME(div, LMNN_BINARY_DIV)
BINARY_BY_NAME(rsub, LMNN_BINARY_RSUB)
BINARY_BY_NAME(maximum, LMNN_BINARY_MAXIMUM)
BINARY_BY_NAME(minimum, LMNN_BINARY_MINIMUM)
BINARY_BY_NAME(eq, LMNN_BINARY_EQ)
BINARY_BY_NAME(ne, LMNN_BINARY_NE)
BINARY_BY_NAME(lt, LMNN_BINARY_LT)
BINARY_BY_NAME(le, LMNN_BINARY_LE)
BINARY_BY_NAME(gt, LMNN_BINARY_GT)
BINARY_BY_NAME(ge, LMNN_BINARY_GE)
BINARY_BY_NAME(logical_and, LMNN_BINARY_LOGICAL_AND)
BINARY_BY_NAME(logical_or, LMNN_BINARY_LOGICAL_OR)
BINARY_BY_NAME(logical_xor, LMNN_BINARY_LOGICAL_XOR)
BINARY_BY_NAME(pow, LMNN_BINARY_POW)
#undef BINARY_BY_NAME

#define SCALAR_BY_NAME(fn, op)                                                                     \
    lm_status lmnn_##fn##_scalar(lmnn_tensor a, double s, lmnn_tensor *out) {                      \
        return lmnn_binary_scalar(op, a, s, NULL, out);                                            \
    }
SCALAR_BY_NAME(add, LMNN_BINARY_ADD)
SCALAR_BY_NAME(sub, LMNN_BINARY_SUB)
SCALAR_BY_NAME(mul, LMNN_BINARY_MUL)
SCALAR_BY_NAME(div, LMNN_BINARY_DIV)
SCALAR_BY_NAME(rsub, LMNN_BINARY_RSUB)
SCALAR_BY_NAME(maximum, LMNN_BINARY_MAXIMUM)
SCALAR_BY_NAME(minimum, LMNN_BINARY_MINIMUM)
SCALAR_BY_NAME(pow, LMNN_BINARY_POW)
#undef SCALAR_BY_NAME
