/* Spectral ops: DFT (opsets 17 and 20), STFT and MelWeightMatrix.
 *
 * A DFT of length L along one axis is linear in the signal, so it is one
 * matrix product: the input moved to rows of [n, re/im] pairs times a host
 * matrix of cosines and sines ([N * c, K * 2]: c input parts, K output
 * bins), worked out at compile time in double precision. Truncation and
 * zero padding to L are rows of that matrix (zero rows past L), a onesided
 * transform its first L / 2 + 1 bins, the inverse the conjugate angles
 * scaled by 1 / L. STFT gathers the frames along time with one index
 * table, multiplies by a run-time window (a constant window is folded into
 * the matrix), and applies the same product. MelWeightMatrix depends on
 * constants only and always folds. */
#include <math.h>
#include <string.h>

#include "frontend/fe_ops.h"

/* Lengths beyond this would make matrices of gigabytes. */
#define SPECTRAL_MAX_LEN 16384

/* cos and sin of -2 pi r / L (forward) or +2 pi r / L (inverse), r = k n
 * reduced mod L first, so large products keep their precision; quarter
 * turns are exact, so bins that must be real come out exactly real. */
static void twiddle(uint64_t k, uint64_t n, uint64_t len, bool inverse, double *out_cos,
                    double *out_sin) {
    uint64_t r = k * n % len;
    double cs, sn;
    if (r * 4 % len == 0) {
        static const double c4[4] = {1, 0, -1, 0}, s4[4] = {0, 1, 0, -1};
        cs = c4[r * 4 / len];
        sn = s4[r * 4 / len];
    } else {
        double a = 2 * acos(-1.0) * (double)r / (double)len;
        cs = cos(a);
        sn = sin(a);
    }
    *out_cos = cs;
    *out_sin = inverse ? sn : -sn;
}

/* The DFT matrix [n_in * parts, bins * 2]: row (n, part), column (k, re/im);
 * rows n >= len stay zero (a signal truncated to len), each entry times
 * window[n] when `window` is given, all over len when inverse. */
static lm_status dft_matrix(fe_ctx *c, int64_t n_in, int64_t parts, int64_t len, int64_t bins,
                            bool inverse, const fe_tensor *window, fe_tensor **out) {
    int64_t dims[2] = {n_in * parts, bins * 2};
    lm_status st = fe_const_new(c, FE_FLOAT, 2, dims, out);
    if (st) return st;
    double scale = inverse ? 1.0 / (double)len : 1.0;
    for (int64_t n = 0; n < n_in && n < len; n++) {
        double w = scale * (window ? fe_tensor_get_f64(window, (uint64_t)n) : 1.0);
        for (int64_t k = 0; k < bins; k++) {
            double cs, sn;
            twiddle((uint64_t)k, (uint64_t)n, (uint64_t)len, inverse, &cs, &sn);
            uint64_t re_row = (uint64_t)(n * parts) * (uint64_t)dims[1];
            /* (x_re + i x_im)(cs + i sn) = (x_re cs - x_im sn) + i (x_re sn + x_im cs) */
            fe_tensor_set_f64(*out, re_row + (uint64_t)(2 * k), w * cs);
            fe_tensor_set_f64(*out, re_row + (uint64_t)(2 * k + 1), w * sn);
            if (parts == 2) {
                uint64_t im_row = re_row + (uint64_t)dims[1];
                fe_tensor_set_f64(*out, im_row + (uint64_t)(2 * k), -w * sn);
                fe_tensor_set_f64(*out, im_row + (uint64_t)(2 * k + 1), w * cs);
            }
        }
    }
    return LM_OK;
}

/* A scalar (or one-element) constant input as an integer in [lo, hi]. */
static lm_status const_int(fe_ctx *c, const fe_node *n, uint32_t i, const char *what, int64_t lo,
                           int64_t hi, int64_t *out) {
    const fe_tensor *t;
    lm_status st = fe_in_const_required(c, n, i, &t);
    if (st) return st;
    if (t->count != 1 || !fe_elem_is_int(t->elem))
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "%s must be one integer", what);
    *out = fe_tensor_get_i64(t, 0);
    if (*out < lo || *out > hi)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "%s %lld (from %lld to %lld)", what,
                       (long long)*out, (long long)lo, (long long)hi);
    return LM_OK;
}

/* Fails unless input i is a float signal of rank >= min_rank whose last
 * dim is 1 (real) or 2 (complex). */
static lm_status check_signal(fe_ctx *c, const fe_node *n, uint32_t i, int32_t min_rank) {
    const fe_type *x = fe_in_type(c, n, i);
    if (!fe_elem_is_float(x->elem))
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "input %u must be a float tensor", i);
    if (x->rank < min_rank)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "input %u must have at least %d dims", i,
                       min_rank);
    int64_t parts = x->dims[x->rank - 1];
    if (parts != 1 && parts != 2)
        return fe_fail(c, n, LM_ERR_INVALID_FILE,
                       "the last dim of input %u is %lld: 1 (real) or 2 (complex)", i,
                       (long long)parts);
    return LM_OK;
}

/* ---- DFT ---- */

typedef struct dft_params {
    int32_t rank, axis;
    int64_t n_in, parts, len, bins;
    bool inverse;
} dft_params;

static lm_status dft_params_of(fe_ctx *c, const fe_node *n, dft_params *p) {
    memset(p, 0, sizeof *p);
    bool v20 = n->opset >= 20; /* the axis became input 2 (default -2) */
    int64_t axis = v20 ? -2 : 1, inverse, onesided;
    lm_status st = fe_check_inputs(c, n, 1, v20 ? 3 : 2);
    if (!st)
        st = fe_check_attrs(c, n,
                            v20 ? (const char *const[]){"inverse", "onesided", NULL}
                                : (const char *const[]){"axis", "inverse", "onesided", NULL});
    if (!st) st = check_signal(c, n, 0, 2);
    if (!st && !v20) st = fe_attr_int(c, n, "axis", 1, &axis);
    if (!st) st = fe_attr_int(c, n, "inverse", 0, &inverse);
    if (!st) st = fe_attr_int(c, n, "onesided", 0, &onesided);
    const fe_type *x = fe_in_type(c, n, 0);
    if (!st && v20 && fe_has_in(n, 2))
        st = const_int(c, n, 2, "axis", -x->rank, x->rank - 1, &axis);
    if (!st) st = fe_axis(c, n, axis, x->rank, &p->axis);
    if (st) return st;
    if (p->axis == x->rank - 1)
        return fe_fail(c, n, LM_ERR_INVALID_FILE,
                       "axis %lld is the real/imaginary dim, not a signal dim", (long long)axis);
    p->rank = x->rank;
    p->n_in = x->dims[p->axis];
    p->parts = x->dims[x->rank - 1];
    p->inverse = inverse != 0;
    p->len = p->n_in;
    if (fe_has_in(n, 1) && (st = const_int(c, n, 1, "dft_length", 1, SPECTRAL_MAX_LEN, &p->len)))
        return st;
    if (p->n_in > SPECTRAL_MAX_LEN)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "signal length %lld (at most %d)",
                       (long long)p->n_in, SPECTRAL_MAX_LEN);
    if (onesided && inverse)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                       "onesided=1 with inverse=1 (a real inverse from half a spectrum) is not "
                       "supported");
    if (onesided && p->parts == 2)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "onesided=1 needs a real input (last dim 1)");
    p->bins = onesided ? p->len / 2 + 1 : p->len;
    return LM_OK;
}

static lm_status infer_dft(fe_ctx *c, const fe_node *n) {
    dft_params p;
    lm_status st = dft_params_of(c, n, &p);
    if (st) return st;
    const fe_type *x = fe_in_type(c, n, 0);
    int64_t dims[FE_MAX_RANK];
    memcpy(dims, x->dims, sizeof dims);
    dims[p.axis] = p.bins;
    dims[p.rank - 1] = 2;
    return fe_set_out_type(c, n, 0, x->elem, p.rank, dims);
}

/* y = rows of x ([M, K_in] after a reshape) times matrix w ([K_in, K_out]),
 * reshaped to `to`: a new tensor in *out. x is not consumed. */
static lm_status rows_times(lmnn_tensor x, int64_t k_in, lmnn_tensor w, const lmnn_shape *to,
                            lmnn_tensor *out) {
    lmnn_tensor_info info;
    lm_status st = lmnn_tensor_get_info(x, &info);
    if (st) return st;
    uint64_t volume = 1;
    for (uint32_t i = 0; i < info.shape.rank; i++)
        volume *= info.shape.dims[i];
    lmnn_shape rows = LMNN_SHAPE((uint32_t)(volume / (uint64_t)k_in), (uint32_t)k_in);
    lmnn_tensor r, y;
    if ((st = lmnn_reshape(x, &rows, NULL, &r))) return st;
    st = lmnn_matmul(r, w, NULL, &y);
    fe_free(r);
    if (st) return st;
    st = lmnn_reshape(y, to, NULL, out);
    fe_free(y);
    return st;
}

static lm_status lower_dft(fe_ctx *c, const fe_node *n) {
    dft_params p;
    lm_status st = dft_params_of(c, n, &p);
    if (st) return st;
    const fe_type *x_type = fe_in_type(c, n, 0);
    /* The axis moved next to the real/imaginary dim: [others..., n, parts]. */
    int32_t perm[FE_MAX_RANK], inv[FE_MAX_RANK], k = 0;
    for (int32_t d = 0; d < p.rank - 1; d++)
        if (d != p.axis) perm[k++] = d;
    perm[k++] = p.axis;
    perm[k++] = p.rank - 1;
    bool moved = p.axis != p.rank - 2;
    lmnn_shape moved_out;
    moved_out.rank = (uint32_t)p.rank;
    for (int32_t j = 0; j < p.rank; j++) {
        inv[perm[j]] = j;
        moved_out.dims[j] = (uint32_t)x_type->dims[perm[j]];
    }
    moved_out.dims[p.rank - 2] = (uint32_t)p.bins;
    moved_out.dims[p.rank - 1] = 2;

    fe_tensor *m;
    lmnn_tensor x, w, xm = {0}, y = {0}, out;
    if ((st = dft_matrix(c, p.n_in, p.parts, p.len, p.bins, p.inverse, NULL, &m)) ||
        (st = fe_aux(c, n, 0, m, LMNN_TILE, &w)) || (st = fe_in_dev(c, n, 0, &x)))
        return st;
    if (moved && (st = lmnn_permute(x, perm, (uint32_t)p.rank, NULL, &xm)))
        return fe_nn_fail(c, n, st);
    st = rows_times(moved ? xm : x, p.n_in * p.parts, w, &moved_out, &y);
    fe_free(xm);
    if (!st && moved) {
        st = lmnn_permute(y, inv, (uint32_t)p.rank, NULL, &out);
        fe_free(y);
        y = out;
    }
    if (st) {
        fe_free(y);
        return fe_nn_fail(c, n, st);
    }
    return fe_out_dev(c, n, 0, y);
}

/* ---- STFT ---- */

typedef struct stft_params {
    int64_t batch, samples, parts, step, frame, frames, bins;
    bool has_window;
    const fe_tensor *window; /* when constant: folded into the matrix */
} stft_params;

static lm_status stft_params_of(fe_ctx *c, const fe_node *n, stft_params *p) {
    memset(p, 0, sizeof *p);
    int64_t onesided;
    lm_status st = fe_check_inputs(c, n, 2, 4);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){"onesided", NULL});
    if (!st) st = fe_attr_int(c, n, "onesided", 1, &onesided);
    if (!st) st = check_signal(c, n, 0, 3);
    if (st) return st;
    const fe_type *x = fe_in_type(c, n, 0);
    if (x->rank != 3)
        return fe_fail(c, n, LM_ERR_INVALID_FILE,
                       "signal must be [batch, length, 1 or 2], not %d-D", x->rank);
    p->batch = x->dims[0];
    p->samples = x->dims[1];
    p->parts = x->dims[2];
    if ((st = const_int(c, n, 1, "frame_step", 1, INT32_MAX, &p->step))) return st;
    p->has_window = fe_has_in(n, 2);
    p->window = p->has_window ? fe_in_const(c, n, 2) : NULL;
    p->frame = -1;
    if (p->has_window) {
        const fe_type *w = fe_in_type(c, n, 2);
        if (w->rank != 1 || !fe_elem_is_float(w->elem))
            return fe_fail(c, n, LM_ERR_INVALID_FILE, "window must be a 1-D float tensor");
        p->frame = w->dims[0];
    }
    if (fe_has_in(n, 3)) {
        int64_t len;
        if ((st = const_int(c, n, 3, "frame_length", 1, SPECTRAL_MAX_LEN, &len))) return st;
        if (p->frame >= 0 && p->frame != len)
            return fe_fail(c, n, LM_ERR_INVALID_FILE,
                           "frame_length %lld differs from the window's length %lld",
                           (long long)len, (long long)p->frame);
        p->frame = len;
    }
    if (p->frame < 0) return fe_fail(c, n, LM_ERR_INVALID_FILE, "needs a window or a frame_length");
    if (p->frame < 1 || p->frame > SPECTRAL_MAX_LEN)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "frame length %lld (from 1 to %d)",
                       (long long)p->frame, SPECTRAL_MAX_LEN);
    if (p->frame > p->samples)
        return fe_fail(c, n, LM_ERR_INVALID_FILE,
                       "frame length %lld is longer than the signal (%lld samples)",
                       (long long)p->frame, (long long)p->samples);
    if (onesided && p->parts == 2)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "onesided=1 needs a real signal (last dim 1)");
    p->frames = (p->samples - p->frame) / p->step + 1;
    if (p->frames * p->frame > ((int64_t)1 << 24))
        return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                       "%lld frames of %lld samples (at most 2^24 samples in all)",
                       (long long)p->frames, (long long)p->frame);
    p->bins = onesided ? p->frame / 2 + 1 : p->frame;
    return LM_OK;
}

static lm_status infer_stft(fe_ctx *c, const fe_node *n) {
    stft_params p;
    lm_status st = stft_params_of(c, n, &p);
    if (st) return st;
    int64_t dims[4] = {p.batch, p.frames, p.bins, 2};
    return fe_set_out_type(c, n, 0, fe_in_type(c, n, 0)->elem, 4, dims);
}

static lm_status lower_stft(fe_ctx *c, const fe_node *n) {
    stft_params p;
    lm_status st = stft_params_of(c, n, &p);
    if (st) return st;
    /* Frame f, sample j is signal sample f * step + j: one gather along time. */
    int64_t count = p.frames * p.frame;
    fe_tensor *index, *m;
    if ((st = fe_const_new(c, FE_INT32, 1, &count, &index))) return st;
    for (int64_t f = 0; f < p.frames; f++)
        for (int64_t j = 0; j < p.frame; j++)
            fe_tensor_set_i64(index, (uint64_t)(f * p.frame + j), f * p.step + j);
    if ((st = dft_matrix(c, p.frame, p.parts, p.frame, p.bins, false, p.window, &m))) return st;
    lmnn_tensor x, idx, w, frames, win = {0}, y;
    if ((st = fe_aux(c, n, 0, index, LMNN_ROW_MAJOR, &idx)) ||
        (st = fe_aux(c, n, 1, m, LMNN_TILE, &w)) || (st = fe_in_dev(c, n, 0, &x)))
        return st;
    if ((st = lmnn_index_select(x, 1, idx, NULL, &frames))) return fe_nn_fail(c, n, st);
    if (p.has_window && !p.window) {
        /* A run-time window: each frame [frame, parts] times window [frame, 1]. */
        lmnn_tensor wt, framed, weighted;
        lmnn_shape per_frame =
            LMNN_SHAPE((uint32_t)(p.batch * p.frames), (uint32_t)p.frame, (uint32_t)p.parts);
        lmnn_shape column = LMNN_SHAPE((uint32_t)p.frame, 1);
        st = fe_in_dev(c, n, 2, &wt);
        if (!st) st = lmnn_reshape(wt, &column, NULL, &win);
        if (!st) st = lmnn_reshape(frames, &per_frame, NULL, &framed);
        if (!st) {
            st = lmnn_binary(LMNN_BINARY_MUL, framed, win, NULL, &weighted);
            fe_free(framed);
        }
        fe_free(win);
        if (!st) {
            fe_free(frames);
            frames = weighted;
        }
    }
    lmnn_shape to = LMNN_SHAPE((uint32_t)p.batch, (uint32_t)p.frames, (uint32_t)p.bins, 2);
    if (!st) st = rows_times(frames, p.frame * p.parts, w, &to, &y);
    fe_free(frames);
    if (st) return fe_nn_fail(c, n, st);
    return fe_out_dev(c, n, 0, y);
}

/* ---- MelWeightMatrix: constants in, a constant out ---- */

/* ONNX's construction: num_mel_bins + 2 points evenly spaced on the mel
 * scale between the edges, each mapped back to hertz and then to a DFT bin
 * (floor((dft_length + 1) f / sample_rate)); filter i rises from point i to
 * point i + 1 and falls to point i + 2, peaking at 1. */
static lm_status infer_mel(fe_ctx *c, const fe_node *n) {
    int64_t dtype, mels, len, rate;
    const fe_tensor *lo_t, *hi_t;
    lm_status st = fe_check_inputs(c, n, 5, 5);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){"output_datatype", NULL});
    if (!st) st = fe_attr_int(c, n, "output_datatype", FE_FLOAT, &dtype);
    if (!st) st = const_int(c, n, 0, "num_mel_bins", 1, 4096, &mels);
    if (!st) st = const_int(c, n, 1, "dft_length", 1, SPECTRAL_MAX_LEN, &len);
    if (!st) st = const_int(c, n, 2, "sample_rate", 1, INT32_MAX, &rate);
    if (!st) st = fe_in_const_required(c, n, 3, &lo_t);
    if (!st) st = fe_in_const_required(c, n, 4, &hi_t);
    if (st) return st;
    if (lo_t->count != 1 || hi_t->count != 1 || !fe_elem_is_float(lo_t->elem) ||
        !fe_elem_is_float(hi_t->elem))
        return fe_fail(c, n, LM_ERR_INVALID_FILE,
                       "lower_edge_hertz and upper_edge_hertz must be one float each");
    double lo = fe_tensor_get_f64(lo_t, 0), hi = fe_tensor_get_f64(hi_t, 0);
    if (!(lo >= 0 && lo < hi && hi <= (double)rate / 2))
        return fe_fail(c, n, LM_ERR_INVALID_FILE,
                       "edges %g and %g Hz: 0 <= lower < upper <= sample_rate / 2 (%g)", lo, hi,
                       (double)rate / 2);
    if (dtype <= 0 || dtype >= FE_ELEM_COUNT_ || !fe_elem_is_numeric((fe_elem)dtype))
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "output_datatype %lld is not supported",
                       (long long)dtype);
    int64_t spec = len / 2 + 1, dims[2] = {spec, mels};
    fe_tensor *t;
    if ((st = fe_const_new(c, (fe_elem)dtype, 2, dims, &t))) return fe_nn_fail(c, n, st);
    double mel_lo = 2595 * log10(1 + lo / 700), mel_hi = 2595 * log10(1 + hi / 700);
    double step = (mel_hi - mel_lo) / (double)(mels + 2);
    /* The points are nondecreasing and at most floor((len + 1) / 2), which
     * is one past the last bin for an odd len: such entries are dropped. */
    int64_t point[4096 + 2];
    for (int64_t i = 0; i < mels + 2; i++) {
        double hz = 700 * (pow(10, ((double)i * step + mel_lo) / 2595) - 1);
        point[i] = (int64_t)floor((double)(len + 1) * hz / (double)rate);
    }
    for (int64_t i = 0; i < mels; i++) {
        int64_t left = point[i], center = point[i + 1], right = point[i + 2];
        for (int64_t j = left; j <= center && j < spec; j++)
            fe_tensor_set_f64(t, (uint64_t)(j * mels + i),
                              center == left ? 1.0 : (double)(j - left) / (double)(center - left));
        for (int64_t j = center; j < right && j < spec; j++)
            fe_tensor_set_f64(t, (uint64_t)(j * mels + i),
                              (double)(right - j) / (double)(right - center));
    }
    return fe_set_out_const(c, n, 0, t);
}

const fe_op_def fe_ops_spectral[] = {
    /* dft_length (input 1) and, from opset 20, axis (input 2) decide shapes. */
    {"DFT", infer_dft, lower_dft, 0x6u, NULL},
    /* frame_step and frame_length decide shapes; the window may be run-time. */
    {"STFT", infer_stft, lower_stft, (1u << 1) | (1u << 3), NULL},
    {"MelWeightMatrix", infer_mel, NULL, 0x1fu, NULL},
};
const size_t fe_ops_spectral_count = sizeof fe_ops_spectral / sizeof fe_ops_spectral[0];
