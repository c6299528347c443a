/* Regroups: a Reshape followed by Transposes and Reshapes (fe_fusion.steps),
 * or a Reshape of a permutation not yet made, as one pass over the elements.
 *
 * Such a chain only moves blocks of elements whole. Cut the value's dims at
 * every boundary any shape along the chain draws, and each piece (an
 * "atom") travels as a unit: the chain is one permutation of the atoms of
 * the tensor it reads, which lmnn_permute_reshaped_to makes in one pass and
 * writes straight into the chain's last shape. The intermediate shapes,
 * whose tiles a small second-last dim leaves mostly padding, are never made.
 *
 * The pass reads the tensor the value is held in, not the value: a flat
 * NHWC image ([N, H, W, C], the value's dims permuted by (0, 3, 1, 2)) or a
 * permutation not yet made (fe_in_permuted). A chain whose last value is an
 * image writes the flat image itself. So a vision transformer's window
 * partition ([N, C, H, W] -> [N, C, H/P, P, W/P, P] -> permuted ->
 * [N, H/P * W/P, P * P, C]) and its inverse move whole rows of C channels
 * between an image and its windows, where in NCHW order every element would
 * move on its own.
 */
#include <string.h>

#include "frontend/fe_ops.h"

/* Atoms while planning, before neighbours merge. */
#define RG_ATOMS 32

/* One move of the chain: a reshape to `dims` or a transpose by `perm`. */
typedef struct rg_move {
    bool transpose;
    int32_t rank;
    int64_t dims[FE_MAX_RANK];
    int32_t perm[FE_MAX_RANK];
} rg_move;

/* The atoms of a value: their sizes, their order in the tensor read
 * (`pre`) and in the value (`cur`), whose dim d holds cur[end[d - 1] ..
 * end[d]) (no atoms for a dim of 1). */
typedef struct rg_atoms {
    uint32_t n, rank, ids; /* atoms in the lists; ids given out (merges free some) */
    int64_t size[RG_ATOMS];
    uint32_t pre[RG_ATOMS], cur[RG_ATOMS], end[FE_MAX_RANK];
} rg_atoms;

/* The pass: the atoms' sizes in pre's order, and q, their order in the
 * chain's result (indices into dims). */
typedef struct rg_plan {
    uint32_t count, dims[LMNN_MAX_DIMS];
    int32_t q[LMNN_MAX_DIMS];
} rg_plan;

static void list_insert(uint32_t *list, uint32_t len, uint32_t after, uint32_t id) {
    uint32_t i = 0;
    while (list[i] != after)
        i++;
    memmove(&list[i + 2], &list[i + 1], (len - i - 1) * sizeof *list);
    list[i + 1] = id;
}

/* Atom x becomes its outer `outer` and a new atom after it, the rest. */
static bool split(rg_atoms *a, uint32_t x, int64_t outer) {
    if (a->ids == RG_ATOMS) return false;
    uint32_t y = a->ids++;
    a->size[y] = a->size[x] / outer;
    a->size[x] = outer;
    list_insert(a->pre, a->n, x, y);
    list_insert(a->cur, a->n, x, y);
    a->n++;
    return true;
}

/* The value reshaped to `dims`: atoms cut where a new dim ends inside one.
 * False when a dim straddles two atoms without dividing them. */
static bool reshape(rg_atoms *a, int32_t rank, const int64_t *dims) {
    uint32_t i = 0;
    for (int32_t d = 0; d < rank; d++) {
        int64_t need = dims[d];
        while (need > 1) {
            if (i == a->n) return false;
            int64_t s = a->size[a->cur[i]];
            if (s <= need) {
                if (need % s) return false;
                need /= s;
            } else if (s % need || !split(a, a->cur[i], need)) {
                return false;
            } else {
                need = 1;
            }
            i++;
        }
        a->end[d] = i;
    }
    a->rank = (uint32_t)rank;
    return i == a->n;
}

/* The value transposed by `perm`: its dims' atom groups reordered. */
static void transpose(rg_atoms *a, const int32_t *perm) {
    uint32_t cur[RG_ATOMS], end[FE_MAX_RANK], k = 0;
    for (uint32_t d = 0; d < a->rank; d++) {
        uint32_t p = (uint32_t)perm[d], lo = p ? a->end[p - 1] : 0;
        for (uint32_t i = lo; i < a->end[p]; i++)
            cur[k++] = a->cur[i];
        end[d] = k;
    }
    memcpy(a->cur, cur, a->n * sizeof *cur);
    memcpy(a->end, end, a->rank * sizeof *end);
}

/* Position of atom id in list. */
static uint32_t index_of(const uint32_t *list, uint32_t id) {
    uint32_t i = 0;
    while (list[i] != id)
        i++;
    return i;
}

/* Cuts the atom of `list` (pre or cur) in which the last `inner` elements
 * start, so that they start on an atom. False when that cannot be. */
static bool cut_at(rg_atoms *a, const uint32_t *list, int64_t inner) {
    int64_t prod = 1;
    for (uint32_t i = a->n; i-- > 0 && prod < inner;) {
        int64_t s = a->size[list[i]];
        if (prod * s > inner) {
            int64_t k = inner / prod; /* the part of this atom inside */
            return inner % prod == 0 && s % k == 0 && split(a, list[i], s / k);
        }
        prod *= s;
    }
    return true;
}

/* The pass of `moves` over a value held as pre (dims pdims) permuted by
 * perm to a result of shape `last`, with atoms that stay neighbours merged
 * (`merge`) or not. False when no one pass makes it (see reshape) or it
 * takes more than LMNN_MAX_DIMS atoms. */
static bool plan_make(int32_t prank, const int64_t *pdims, const int32_t *perm,
                      const rg_move *moves, uint32_t count, const lmnn_shape *last, bool merge,
                      rg_plan *out) {
    rg_atoms a = {0};
    uint32_t of[FE_MAX_RANK];
    for (int32_t p = 0; p < prank; p++) {
        of[p] = pdims[p] > 1 ? a.n : FE_NONE;
        if (pdims[p] > 1) a.size[a.n] = pdims[p], a.pre[a.n] = a.n, a.n++;
    }
    a.ids = a.n;
    uint32_t k = 0;
    for (int32_t d = 0; d < prank; d++) {
        if (of[perm[d]] != FE_NONE) a.cur[k++] = of[perm[d]];
        a.end[d] = k;
    }
    a.rank = (uint32_t)prank;
    for (uint32_t m = 0; m < count; m++) {
        if (moves[m].transpose)
            transpose(&a, moves[m].perm);
        else if (!reshape(&a, moves[m].rank, moves[m].dims))
            return false;
    }
    /* Neighbours in both orders move as one. */
    for (uint32_t i = 0; merge && i + 1 < a.n;) {
        uint32_t x = a.cur[i], y = a.cur[i + 1], px = index_of(a.pre, x);
        if (px + 1 >= a.n || a.pre[px + 1] != y) {
            i++;
            continue;
        }
        a.size[x] *= a.size[y];
        memmove(&a.cur[i + 1], &a.cur[i + 2], (a.n - i - 2) * sizeof *a.cur);
        memmove(&a.pre[px + 1], &a.pre[px + 2], (a.n - px - 2) * sizeof *a.pre);
        a.n--;
    }
    /* The tile paths see the tensors' own rows and columns: atoms are cut
     * again where pre's and the result's last two dims end (while they fit). */
    rg_atoms merged = a;
    uint32_t lr = last->rank;
    if (merge &&
        !((prank < 1 || cut_at(&a, a.pre, pdims[prank - 1])) &&
          (prank < 2 || cut_at(&a, a.pre, pdims[prank - 1] * pdims[prank - 2])) &&
          (lr < 1 || cut_at(&a, a.cur, last->dims[lr - 1])) &&
          (lr < 2 || cut_at(&a, a.cur, (int64_t)last->dims[lr - 1] * last->dims[lr - 2])) &&
          a.n <= LMNN_MAX_DIMS))
        a = merged;
    if (a.n > LMNN_MAX_DIMS) return false;
    out->count = a.n;
    for (uint32_t i = 0; i < a.n; i++) {
        if (a.size[a.pre[i]] > UINT32_MAX) return false;
        out->dims[i] = (uint32_t)a.size[a.pre[i]];
        out->q[i] = (int32_t)index_of(a.pre, a.cur[i]);
    }
    return true;
}

/* ---- the chain ---- */

static const int32_t to_nhwc[4] = {0, 2, 3, 1}, from_nhwc[4] = {0, 3, 1, 2};

/* The moves of head n and its `count` steps, then (nhwc_out) the move to
 * NHWC order. False when a step's perm cannot be read. */
static bool chain_moves(fe_ctx *c, const fe_node *n, const uint32_t *steps, uint32_t count,
                        bool nhwc_out, rg_move *moves, uint32_t *out_count) {
    const fe_graph *g = c->g;
    uint32_t m = 0;
    for (uint32_t s = 0; s <= count; s++) {
        const fe_node *k = s ? &g->nodes[steps[s - 1]] : n;
        rg_move *mv = &moves[m++];
        const fe_type *o = &g->values[k->outputs[0]].type;
        mv->transpose = !strcmp(k->op_type, "Transpose");
        mv->rank = o->rank;
        memcpy(mv->dims, o->dims, (size_t)o->rank * sizeof *o->dims);
        if (!mv->transpose) continue;
        const int64_t *perm;
        size_t pc;
        if (fe_attr_ints(c, k, "perm", &perm, &pc) || (perm && pc != (size_t)o->rank)) {
            err_clear();
            return false;
        }
        for (int32_t d = 0; d < o->rank; d++)
            mv->perm[d] = (int32_t)(perm ? perm[d] : o->rank - 1 - d);
    }
    if (nhwc_out) {
        if (moves[m - 1].rank != 4) return false;
        moves[m] = (rg_move){.transpose = true, .rank = 4};
        memcpy(moves[m++].perm, to_nhwc, sizeof to_nhwc);
    }
    *out_count = m;
    return true;
}

/* The shape the chain's result is written in: its last move's, or the
 * flat image of it. */
static lmnn_shape result_shape(const rg_move *moves, uint32_t count, bool nhwc_out) {
    const rg_move *mv = &moves[count - 1 - nhwc_out];
    if (!nhwc_out) return fe_shape(mv->rank, mv->dims);
    const int64_t *d = mv->dims;
    return LMNN_SHAPE(1, 1, (uint32_t)(d[0] * d[2] * d[3]), (uint32_t)d[1]);
}

/* The value's tensor as the pass reads it: its dims and the permutation
 * that gives the value, for a flat NHWC image (`image`) or the value itself. */
static void source_of(const fe_type *x, bool image, int64_t *pdims, int32_t *perm) {
    for (int32_t d = 0; d < x->rank; d++) {
        perm[d] = image ? from_nhwc[d] : d;
        pdims[perm[d]] = x->dims[d];
    }
}

/* The plan of head n's chain from its input as an image or not (`image`)
 * to its result as an image or not (`nhwc_out`). */
static bool chain_plan(fe_ctx *c, const fe_node *n, const uint32_t *steps, uint32_t count,
                       bool image, bool nhwc_out, rg_plan *out) {
    const fe_type *x = fe_in_type(c, n, 0);
    rg_move moves[FE_REGROUP_STEPS + 2];
    uint32_t m;
    int64_t pdims[FE_MAX_RANK];
    int32_t perm[FE_MAX_RANK];
    if ((image && x->rank != 4) || !chain_moves(c, n, steps, count, nhwc_out, moves, &m))
        return false;
    source_of(x, image, pdims, perm);
    lmnn_shape to = result_shape(moves, m, nhwc_out);
    return plan_make(x->rank, pdims, perm, moves, m, &to, true, out);
}

bool fe_regroup_fits(fe_ctx *c, const fe_node *n, const uint32_t *steps, uint32_t count) {
    rg_plan p;
    return chain_plan(c, n, steps, count, false, false, &p);
}

/* Whether the pass moves whole rows: the tensor read's last atom ends the
 * result too. */
static bool moves_rows(fe_ctx *c, const fe_node *n, bool image, bool nhwc_out) {
    const fe_fusion *f = &c->plans[n - c->g->nodes].fusion;
    rg_plan p;
    return chain_plan(c, n, f->steps, f->step_count, image, nhwc_out, &p) && p.count &&
           p.q[p.count - 1] == (int32_t)p.count - 1;
}

uint32_t fe_regroup_images(fe_ctx *c, const fe_node *n) {
    /* An image in as any reshape reads one (the lowering takes the NCHW
     * value when that moves rows and the image does not); out only where
     * rows then move whole: in NHWC order a window partition is a
     * permutation of pixels, in NCHW one of elements. */
    uint32_t caps = fe_in_type(c, n, 0)->rank == 4 ? FE_IMAGE_IN : 0;
    if (moves_rows(c, n, true, true) || moves_rows(c, n, false, true)) caps |= FE_IMAGE_OUT;
    return caps;
}

/* Pass p as the attention helpers' when it is one of theirs: heads split,
 * pre [B, S, H * D] (or [S, H * D], a batch of 1) to [B, H, S, D]
 * (lmnn_split_heads), or to [B, H, D, S] for keys (*out_keys: the same
 * split, its last two dims still to swap), or pre sequence first [S, B, H *
 * D] to either (lmnn_split_heads_seq_first); or heads joined, pre [B, H, S,
 * D] to [B, S, H * D] or [H, S, D] to [S, H * D] (lmnn_concat_heads), or
 * sequence first to [S, B, H * D] (lmnn_concat_heads_seq_first). They
 * move runs of face rows from tile to tile in one launch (whole tiles when
 * D is a multiple of 32), where the general pass untilizes, moves rows and
 * tilizes again: three launches. *out zero when it is not. */
static lm_status heads_pass(lmnn_tensor pre, const rg_plan *p, lmnn_tensor *out, bool *out_keys) {
    *out = (lmnn_tensor){0};
    *out_keys = false;
    lmnn_tensor_info i;
    lm_status st = lmnn_tensor_get_info(pre, &i);
    const uint32_t *atoms = p->dims, count = p->count;
    const int32_t *q = p->q;
    if (st || i.layout != LMNN_TILE) return st;
    /* Heads joined, with a batch or without. */
    if (i.shape.rank == 4 && count == 4 && q[0] == 0 && q[1] == 2 && q[2] == 1 && q[3] == 3 &&
        !memcmp(atoms, i.shape.dims, 4 * sizeof *atoms))
        return lmnn_concat_heads(pre, NULL, out);
    if (i.shape.rank == 3 && count == 3 && q[0] == 1 && q[1] == 0 && q[2] == 2 &&
        !memcmp(atoms, i.shape.dims, 3 * sizeof *atoms))
        return lmnn_concat_heads(pre, NULL, out);
    /* Sequence first, [B, H, S, D] (or [B * H, S, D]) to [S, B, H * D]. */
    if (count == 4 && q[0] == 2 && q[1] == 0 && q[2] == 1 && q[3] == 3 &&
        ((i.shape.rank == 4 && !memcmp(atoms, i.shape.dims, 4 * sizeof *atoms)) ||
         (i.shape.rank == 3 && (uint64_t)atoms[0] * atoms[1] == i.shape.dims[0] &&
          !memcmp(atoms + 2, i.shape.dims + 1, 2 * sizeof *atoms)))) {
        lmnn_shape bhsd = LMNN_SHAPE(atoms[0], atoms[1], atoms[2], atoms[3]);
        lmnn_tensor in = pre;
        if (i.shape.rank == 3 && (st = lmnn_view(pre, &bhsd, &in))) return st;
        st = lmnn_concat_heads_seq_first(in, NULL, out);
        if (in.id != pre.id) lmnn_tensor_free(in);
        return st;
    }
    /* Heads split sequence first: [S, B, H * D] to [B, H, S, D] or keys. */
    static const int32_t seq_split[4] = {1, 2, 0, 3}, seq_keys[4] = {1, 2, 3, 0};
    if (i.shape.rank == 3 && count == 4 && atoms[0] == i.shape.dims[0] &&
        atoms[1] == i.shape.dims[1] && (uint64_t)atoms[2] * atoms[3] == i.shape.dims[2]) {
        *out_keys = !memcmp(q, seq_keys, sizeof seq_keys);
        if (*out_keys || !memcmp(q, seq_split, sizeof seq_split))
            return lmnn_split_heads_seq_first(pre, atoms[2], NULL, out);
    }
    /* Heads split: [B, S, H * D], or [S, H * D] as a batch of 1. */
    bool unbatched = i.shape.rank == 2;
    if (unbatched) i.shape = LMNN_SHAPE(1, i.shape.dims[0], i.shape.dims[1]);
    if (i.shape.rank != 3) return LM_OK;
    uint32_t b = i.shape.dims[0], first = b > 1; /* a batch of 1 is no atom */
    if (count != 3 + first || atoms[first] != i.shape.dims[1] ||
        atoms[first + 1] * atoms[first + 2] != i.shape.dims[2])
        return LM_OK;
    static const int32_t split[2][4] = {{1, 0, 2}, {0, 2, 1, 3}},
                         keys[2][4] = {{1, 2, 0}, {0, 2, 3, 1}};
    *out_keys = !memcmp(q, keys[first], count * sizeof *q);
    if (!*out_keys && memcmp(q, split[first], count * sizeof *q)) return LM_OK;
    lmnn_tensor in = pre;
    if (unbatched && (st = lmnn_view(pre, &i.shape, &in))) return st;
    st = lmnn_split_heads(in, atoms[first + 1], NULL, out);
    if (unbatched) lmnn_tensor_free(in);
    return st;
}

/* The chain step by step, from the value itself (the fallback when no one
 * pass makes it), to `to`. */
static lm_status by_steps(fe_ctx *c, const fe_node *n, const rg_move *moves, uint32_t count,
                          const lmnn_shape *to) {
    lmnn_tensor t, r;
    lm_status st = fe_in_dev(c, n, 0, &t);
    if (st) return st;
    for (uint32_t i = 0; i < count; i++) {
        const rg_move *mv = &moves[i];
        lmnn_shape s = fe_shape(mv->rank, mv->dims);
        st = mv->transpose ? lmnn_permute(t, mv->perm, (uint32_t)mv->rank, NULL, &r)
                           : lmnn_reshape(t, &s, NULL, &r);
        if (i) fe_free(t);
        if (st) return fe_nn_fail(c, n, st);
        t = r;
    }
    if ((st = fe_reshape_owned(c, n, t, to, &t))) return st;
    return fe_out_dev(c, n, 0, t);
}

lm_status fe_lower_regroup(fe_ctx *c, const fe_node *n) {
    const fe_plan *plan = &c->plans[n - c->g->nodes];
    const fe_fusion *f = &plan->fusion;
    const fe_type *x = fe_in_type(c, n, 0);
    rg_move moves[FE_REGROUP_STEPS + 2];
    uint32_t m;
    if (!chain_moves(c, n, f->steps, f->step_count, plan->nhwc_out, moves, &m))
        return fe_fail(c, n, LM_ERR_INTERNAL, "a fused transpose's perm cannot be read");
    lmnn_shape to = result_shape(moves, m, plan->nhwc_out);
    /* What the pass reads: a permutation not yet made, an image, or the
     * value itself. */
    lmnn_tensor pre;
    int64_t pdims[FE_MAX_RANK];
    int32_t perm[FE_MAX_RANK];
    bool image = false;
    lm_status st = LM_OK;
    if (fe_in_permuted(c, n, 0, &pre, perm)) {
        for (int32_t d = 0; d < x->rank; d++)
            pdims[perm[d]] = x->dims[d];
    } else {
        if (x->rank == 4)
            st = fe_in_image(c, n, 0, &pre, &image);
        else
            st = fe_in_dev(c, n, 0, &pre);
        if (st) return st;
        source_of(x, image, pdims, perm);
    }
    rg_plan p, cut;
    bool planned = plan_make(x->rank, pdims, perm, moves, m, &to, true, &p);
    if (image && (!planned || (p.count && p.q[p.count - 1] != (int32_t)p.count - 1))) {
        /* From the image the pass would move elements one by one: from the
         * value in NCHW order instead (made by whole-tile transposes). */
        if ((st = fe_in_dev(c, n, 0, &pre))) return st;
        source_of(x, false, pdims, perm);
        planned = plan_make(x->rank, pdims, perm, moves, m, &to, true, &p);
    }
    if (!planned) return by_steps(c, n, moves, m, &to);
    lmnn_tensor r = {0};
    bool keys = false;
    /* A transformer's heads split or joined (the reshape and at most its
     * transpose) go as whole tiles when they can (their atoms unmerged). */
    if (!plan->nhwc_out && (f->step_count == 0 || (f->step_count == 1 && moves[1].transpose)) &&
        plan_make(x->rank, pdims, perm, moves, m, &to, false, &cut) &&
        (st = heads_pass(pre, &cut, &r, &keys)))
        return fe_nn_fail(c, n, st);
    if (keys) {
        /* Keys: the heads split, their last two dims swapped when read. */
        int32_t swap[FE_MAX_RANK];
        for (uint32_t d = 0; d < to.rank; d++)
            swap[d] = (int32_t)d;
        uint32_t w = to.dims[to.rank - 1];
        to.dims[to.rank - 1] = to.dims[to.rank - 2];
        to.dims[to.rank - 2] = w;
        swap[to.rank - 1] = (int32_t)to.rank - 2;
        swap[to.rank - 2] = (int32_t)to.rank - 1;
        if ((st = fe_reshape_owned(c, n, r, &to, &r))) return st;
        return fe_out_permuted(c, n, 0, r, swap);
    }
    if (r.id) {
        if ((st = fe_reshape_owned(c, n, r, &to, &r))) return st;
        return fe_out_dev(c, n, 0, r);
    }
    lmnn_shape atoms = {p.count, {0}};
    memcpy(atoms.dims, p.dims, p.count * sizeof *p.dims);
    if ((st = lmnn_permute_reshaped_to(pre, &atoms, p.q, p.count, &to, NULL, &r)))
        return fe_nn_fail(c, n, st);
    return fe_out_dev(c, n, 0, r);
}
