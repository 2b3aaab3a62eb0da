/*
 * test_sequences: seeded random sequences of calls of every primitive on the context under
 * test (tu_open_context: CUDA on the GPU machine, the host backend elsewhere), each call
 * made again on a host context, the reference, and every output compared.
 *
 * Why: calls on one CUDA context share device memory (look-back words tagged with the
 * call's epoch, scratch, counters, a pinned result slot, a side stream). A primitive that is
 * right on a fresh context was wrong after particular earlier calls: a radix sort of 2^20
 * u32, exactly 4 small reduce_to_buffer calls, then a reduce or scan of 2^20 i32; or radix
 * sorts of random then of sorted keys, then a quicksort. Each primitive's own test runs it
 * in isolation; this one runs them one after another, as programs do.
 *
 * Calls: reduce and reduce_to_buffer (SUM, MIN, MAX); scan (inclusive, exclusive, in place
 * or not); radix_sort and quicksort (keys alone or with values of any dtype, both orders);
 * select_kth and select_kth_to_buffer; topk (with and without indices, both orders);
 * segmented_select (U32/U64 offsets, U32/U64 ranks or NULL); segmented_topk (U32/U64
 * offsets with empty rows, or uniform rows; one k or U32/U64 per-row ks, k past a row now
 * and then; with and without indices, both orders; rows and ks of every CUDA class: a
 * warp's rows up to 256 with k up to 16, a block's, long rows past 16384, k past 2048 row
 * by row); Life (life_create, write_cells or load_rle, set_rule, step, read_cells,
 * population); buffer copies, writes and reads. Every dtype. Sizes: 0, 1, 2..1024, the
 * tile edges (8191..8193, 12288 +- 1, 24576, ...), powers of two and their neighbours,
 * log-uniform up to 2^18, a little past 2^20 (2^20 +- 64) and now and then 2^21 ..
 * 2^GPUPRIMS_SEQ_MAX_LOG2. Inputs: random, random bits, sorted, reversed, all equal, 2 to
 * 16 distinct values, special values (NaN of both signs and other payloads, -0.0, +-inf,
 * extremes, denormals), a few specials among plain values, small integers. Now and then
 * an illegal call (a rank past the end, a length that does not match, MIN of nothing, a
 * row that ends before it starts): both contexts must return the same status and leave
 * every output as it was.
 *
 * Motifs, the shapes of the bugs above: a head of 1 to 3 long calls (a few tiles, or a
 * little past 2^20) of kinds that leave state behind (sorts, top-k, the segmented ones,
 * scan, selection), often of one kind with the later ones given sorted or reversed input
 * (sorting sorted keys again); then 0 to 15 short calls of one kind; then a long tail call
 * of a kind that reads a look-back or partitions (scan, reduce, the top-ks, sorts). A
 * motif starts at one call in 8; in the fresh variant every new context starts with one,
 * whose (head kind, number of short calls) go through all 112 pairs in turn.
 *
 * Checks: output buffers are poisoned (a byte that changes from call to call) before the
 * call, then read back and compared with the reference's outputs, bitwise except:
 *  - float SUM (reduce, scan): the order of the additions differs by device, so within
 *    2 * (16 + 2 log2 n) * eps * (the sum of the finite |x| behind the element); NaN and
 *    infinities must match; not compared where those |x| add up past half the largest
 *    float (whether a partial sum overflows then depends on the order);
 *  - NaN results of MIN/MAX, select_kth and segmented_select, and quicksort's keys: any
 *    NaN matches any NaN (CUDA gives the canonical NaN; quicksort is not stable);
 *  - quicksort, besides: within each run of equal keys the (key bits, value) pairs, or
 *    with keys alone of floats the key bits, must be the reference's as multisets (every
 *    key's bits survive and every value travels with its key; their order may differ).
 * Radix sort is stable and top-k's ties come lowest index first, segmented top-k's too
 * (its values are the row's elements bit for bit, NaN payloads and all): they compare
 * bitwise. Outputs that stay on the device (scan, sorts, the top-ks, the *_to_buffer calls,
 * segmented select, buffer copies) are read back 0 to 3 calls later (at once past 8 MiB),
 * so later work that overwrites them is caught too.
 *
 * Variants (names as arguments, or GPUPRIMS_SEQ_VARIANTS="single,fresh"; all by default):
 *   single     one context;
 *   alternate  two contexts, the calls alternating between them;
 *   wrapped    about half the buffers are gpuprims_buffer_wrap_device views of an owned
 *              buffer's memory (gpuprims_buffer_device_ptr); the host backend has no
 *              device pointers, so there every buffer is owned;
 *   stream     the context issues its work on a caller's CUDA stream (made through the
 *              driver API loaded at run time, test_util.h: this test includes no CUDA
 *              header), switched back to the context's own and again now and then; CUDA
 *              only, skipped elsewhere;
 *   threads    two threads, each with a context and a sequence of its own, at once;
 *   fresh      a fresh context under test for every motif (and 0 to 3 calls after it), so
 *              that sequences starting on a fresh context (small epochs, as in the bug
 *              above) come often; twice the calls of the others, most of them short.
 *
 * Environment: GPUPRIMS_TEST_SEED (replay, test_util.h); GPUPRIMS_SEQ_CALLS (calls per
 * variant, default 250; the threads variant splits them between its threads, the fresh
 * variant makes twice as many); GPUPRIMS_SEQ_MAX_LOG2 (sizes up to 2^that + 64; default
 * 22, 16 under GPUPRIMS_TEST_QUICK, e.g. 14 for compute-sanitizer); GPUPRIMS_SEQ_VARIANTS;
 * GPUPRIMS_SEQ_KINDS (only the kinds it names, comma separated, as the summary names them,
 * e.g. "segmented_topk" alone or "segmented_topk,scan": motifs keep their shape, a kind
 * left out drawn again among those named).
 * A failure prints the seed, the call's number and its whole description, what differs
 * (first and last index, got and expected), the calls before it and a command line that
 * replays the sequence; that variant stops there, and the test exits 1.
 */
#include "test_util.h"

#define DESC_LEN 256
#define RING 12                 /* calls remembered for a failure report */
#define MAX_PENDING 4           /* outputs waiting to be read back */
#define DEFER_MAX_BYTES ((size_t)8 << 20)
#define DEFAULT_CALLS 250
#define DEFAULT_MAX_LOG2 22
#define QUICK_MAX_LOG2 16
#define MAX_LOG2_LIMIT 26
#define ILLEGAL_ONE_IN 32

/* ------------------------------------------------------------------------------------- */
/* Knobs                                                                                  */
/* ------------------------------------------------------------------------------------- */

typedef struct {
  uint64_t seed;
  unsigned long calls; /* per variant */
  int max_log2;
  size_t max_n;        /* the longest input: 2^max_log2 + 64 */
  int cuda;            /* the context under test runs on CUDA */
  const char *prog;
  const char *kinds;   /* GPUPRIMS_SEQ_KINDS, or NULL: every kind */
} knobs_t;

static knobs_t K;
/* One failure report at a time (the threads variant). */
static pthread_mutex_t g_report_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned long env_ulong(const char *name, unsigned long dflt) {
  const char *v = getenv(name);
  char *end = NULL;
  unsigned long x;
  if (!v || !*v) return dflt;
  x = strtoul(v, &end, 0);
  if (*end) TU_FATAL("%s=%s is not a number", name, v);
  return x;
}

static void read_knobs(const char *prog) {
  int quick = getenv("GPUPRIMS_TEST_QUICK") != NULL;
  K.prog = prog;
  K.calls = env_ulong("GPUPRIMS_SEQ_CALLS", DEFAULT_CALLS);
  K.max_log2 = (int)env_ulong("GPUPRIMS_SEQ_MAX_LOG2", quick ? QUICK_MAX_LOG2 : DEFAULT_MAX_LOG2);
  if (K.max_log2 < 1 || K.max_log2 > MAX_LOG2_LIMIT)
    TU_FATAL("GPUPRIMS_SEQ_MAX_LOG2=%d: 1 to %d", K.max_log2, MAX_LOG2_LIMIT);
  K.max_n = ((size_t)1 << K.max_log2) + 64;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ------------------------------------------------------------------------------------- */
/* A sequence's state                                                                     */
/* ------------------------------------------------------------------------------------- */

/* A buffer, and the owned buffer whose memory it views when it is wrapped (else NULL). */
typedef struct {
  gpuprims_buffer *b, *backing;
} sbuf;

/* A Life grid under test and its twin on the reference. */
typedef struct {
  gpuprims_life_grid *g[2];
  uint64_t w, h;
} life_t;

/* One context of a sequence, and how its buffers are made. */
typedef struct {
  gpuprims_context *ctx;
  const char *name;       /* "A", "B" under test; "ref" */
  int wrap;               /* wrap about half the buffers (wrapped variant) */
  int no_wrap;            /* device pointers are UNSUPPORTED here: owned buffers only */
  tu_cuda_stream *stream; /* a caller's stream (stream variant), else NULL */
  int on_stream;          /* the context issues on it now */
  life_t life;            /* under test only */
} side_t;

enum { CMP_EXACT, CMP_NAN, CMP_FSUM };
static const char *const CMP_NAMES[3] = {"bitwise", "bitwise, any NaN matching any NaN",
                                         "as float SUMs"};

/* An output buffer of a call, and how it compares. */
typedef struct {
  sbuf sb;
  gpuprims_dtype t;
  size_t n;
  int cmp;
  const char *label;
} out_t;

/* How float SUM results (reduce, scan) compare: exactly when every order of the additions
 * gives the same sum, else within twice the bound that every order keeps to. */
typedef struct {
  double *absum; /* the sum of the finite |x| behind each result */
  size_t n;      /* the input's length */
  int scan, exclusive, exact;
} fsum_t;

/* Outputs of the context under test waiting to be read back, with the reference's. */
typedef struct {
  int used, pairs;
  unsigned long callno, due, order;
  char desc[DESC_LEN];
  int nout;
  out_t out[2];
  unsigned char *want[2];
  fsum_t fs; /* CMP_FSUM (out[0]) */
} pending_t;

typedef struct {
  unsigned char *p;
  size_t cap;
} hbuf;

/* Host arrays of a sequence: the call's inputs, what is read back, scratch. */
enum { H_IN, H_VAL, H_OFF, H_KS, H_GOT, H_GOT2, H_TMP, NUM_H };

enum { K_REDUCE, K_REDUCE_BUF, K_SCAN, K_RADIX, K_QUICK, K_SELECT, K_SELECT_BUF, K_TOPK, K_SEGSEL, K_SEGTOPK, K_LIFE,
       K_BUFFER, NUM_KINDS };

/* A motif: 1 to 3 long calls (the head), `len` short calls of one kind, a long call (the
 * tail): the shapes of the bugs above, where what the head left in the context's memory
 * met the tail. Calls number `step` (0-based) of head + len + 1. */
typedef struct {
  int active, step, head, len, small, tail;
  int head_kind[3];
} motif_t;

typedef struct seq {
  const char *variant;
  int thread; /* -1 outside the threads variant */
  uint64_t seed;
  tu_rng rng;
  side_t test[2], ref;
  int ntest, cur;
  int renew;                /* fresh variant: a new context, then a motif, a few calls, again */
  unsigned long renew_at;
  unsigned long callno, calls;
  int failed;
  char ring[RING][DESC_LEN]; /* the last calls' descriptions; slot callno % RING */
  char *desc;                /* this call's slot */
  char event[96];            /* what happened before this call (fresh context, stream) */
  pending_t pend[MAX_PENDING];
  unsigned long pend_order;
  hbuf h[NUM_H];
  motif_t motif;
  unsigned long motif_offset; /* the fresh variant's first (head kind, short calls) pair */
  int call_wrapped; /* buffers of this call that are wrapped views */
  unsigned long count[NUM_KINDS], deferred, illegal, wrapped, motifs;
} seq_t;

/* At least `bytes` bytes of host array h (its contents are not kept); never NULL, so an
 * empty input is a valid pointer too. */
static unsigned char *hb(hbuf *h, size_t bytes) {
  if (!h->p || bytes > h->cap) {
    free(h->p);
    h->cap = bytes > 64 ? bytes : 64;
    h->p = (unsigned char *)tu_xmalloc(h->cap);
  }
  return h->p;
}

static side_t *cur_side(seq_t *s) { return &s->test[s->cur]; }

static int one_in(seq_t *s, uint64_t n) { return tu_below(&s->rng, n) == 0; }

/* ------------------------------------------------------------------------------------- */
/* Descriptions and failure reports                                                       */
/* ------------------------------------------------------------------------------------- */

/* Starts this call's description, "#12 on B [event] text", in its ring slot. */
static void describe(seq_t *s, const char *fmt, ...) TU_PRINTF(2, 3);
static void describe(seq_t *s, const char *fmt, ...) {
  va_list ap;
  int len;
  s->desc = s->ring[s->callno % RING];
  len = snprintf(s->desc, DESC_LEN, "#%lu%s%s %s%s", s->callno, s->ntest > 1 ? " on " : "",
                 s->ntest > 1 ? cur_side(s)->name : "", s->event, s->event[0] ? " " : "");
  s->event[0] = '\0';
  if (len < 0 || len >= DESC_LEN) return;
  va_start(ap, fmt);
  vsnprintf(s->desc + len, DESC_LEN - (size_t)len, fmt, ap);
  va_end(ap);
}

static void desc_append(seq_t *s, const char *fmt, ...) TU_PRINTF(2, 3);
static void desc_append(seq_t *s, const char *fmt, ...) {
  size_t len = strlen(s->desc);
  va_list ap;
  if (len + 1 >= DESC_LEN) return;
  va_start(ap, fmt);
  vsnprintf(s->desc + len, DESC_LEN - len, fmt, ap);
  va_end(ap);
}

static void print_ring(const seq_t *s) {
  unsigned long first = s->callno >= RING ? s->callno - RING + 1 : 1, i;
  printf("  the calls up to now, oldest first:\n");
  for (i = first; i <= s->callno; i++) printf("    %s\n", s->ring[i % RING]);
}

static void print_replay(const seq_t *s) {
  const char *backend = getenv("GPUPRIMS_BACKEND");
  /* a sequence is the same up to any call with fewer calls; threads split the count,
     the fresh variant doubles it */
  unsigned long calls = s->thread >= 0 ? K.calls : s->renew ? (s->callno + 1) / 2 : s->callno;
  printf("  replay: %s%s%sGPUPRIMS_TEST_SEED=0x%016llx GPUPRIMS_SEQ_CALLS=%lu GPUPRIMS_SEQ_MAX_LOG2=%d%s%s%s %s %s\n",
         backend ? "GPUPRIMS_BACKEND=" : "", backend ? backend : "", backend ? " " : "",
         (unsigned long long)K.seed, calls, K.max_log2, K.kinds ? " GPUPRIMS_SEQ_KINDS=\"" : "",
         K.kinds ? K.kinds : "", K.kinds ? "\"" : "", K.prog, s->variant);
}

/*
 * Reports a failure of call `callno` (described by desc) with the calls before it and a
 * replay command; the sequence stops after it.
 */
static void seq_fail(seq_t *s, unsigned long callno, const char *desc, const char *fmt, ...) TU_PRINTF(4, 5);
static void seq_fail(seq_t *s, unsigned long callno, const char *desc, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  pthread_mutex_lock(&g_report_lock);
  pthread_mutex_lock(&tu_state.lock);
  tu_state.failures++;
  tu_state.checks++;
  pthread_mutex_unlock(&tu_state.lock);
  printf("%s: FAIL: variant %s", tu_state.name, s->variant);
  if (s->thread >= 0) printf(" (thread %d)", s->thread);
  printf(", call #%lu of %lu, backend %s, seed 0x%016llx (this sequence's 0x%016llx)\n", callno, s->calls,
         tu_state.backend, (unsigned long long)K.seed, (unsigned long long)s->seed);
  printf("  call: %s\n  %s\n", desc, msg);
  if (callno != s->callno) printf("  (its outputs were read back after call #%lu)\n", s->callno);
  print_ring(s);
  print_replay(s);
  fflush(stdout);
  pthread_mutex_unlock(&g_report_lock);
  s->failed = 1;
}

/* A call the test needs to work (making buffers, reading back): else report and stop. */
static void need_ok(seq_t *s, gpuprims_status st, const char *what) {
  char err[512];
  if (st == GPUPRIMS_STATUS_OK) return;
  tu_last_error_text(err, sizeof err);
  seq_fail(s, s->callno, s->desc ? s->desc : "(none yet)", "%s returned %s: \"%s\"", what, tu_status_name(st), err);
  tu_abort_();
}

/* The context under test must return what the reference returned. */
static int same_status(seq_t *s, gpuprims_status got, gpuprims_status want) {
  char err[512];
  tu_count_check_();
  if (got == want) {
    if (got != GPUPRIMS_STATUS_OK) s->illegal++;
    return 1;
  }
  /* the call under test came last: a failure of its own is this thread's last error */
  tu_last_error_text(err, sizeof err);
  seq_fail(s, s->callno, s->desc, "status %s, where the reference returned %s (last error: \"%s\")",
           tu_status_name(got), tu_status_name(want), err);
  return 0;
}

/* ------------------------------------------------------------------------------------- */
/* Sizes and inputs                                                                       */
/* ------------------------------------------------------------------------------------- */

/* Tile and block edges of the kernels (scan/reduce tiles of 8192, radix 4096/6144/6912,
 * quicksort's 12288 and 24576, warps and blocks). */
static const size_t EDGES[] = {31,    32,    33,    255,   256,   257,   1023,  1024,  1025,  2047,  2048,
                               2049,  4095,  4096,  4097,  6143,  6144,  6145,  6911,  6912,  6913,  8191,
                               8192,  8193,  12287, 12288, 12289, 16383, 16384, 16385, 24575, 24576, 24577,
                               65535, 65536, 65537};

static size_t near_2_20(tu_rng *r) { return ((size_t)1 << 20) - 64 + (size_t)tu_below(r, 129); }

/* One size from the classes the kernels tell apart, before the cap. */
static size_t draw_size(tu_rng *r) {
  unsigned c = (unsigned)tu_below(r, 100);
  int k;
  if (c < 3) return 0;
  if (c < 9) return 1;
  if (c < 42) return 2 + (size_t)tu_below(r, 1023);
  if (c < 62) return EDGES[tu_below(r, TU_ARRAY_LEN(EDGES))];
  if (c < 74) { /* 2^k - 1, 2^k, 2^k + 1 for k = 2..20 */
    k = 2 + (int)tu_below(r, 19);
    return ((size_t)1 << k) - 1 + (size_t)tu_below(r, 3);
  }
  if (c < 88) { /* log-uniform in [2, 2^18) */
    k = 1 + (int)tu_below(r, 17);
    return ((size_t)1 << k) + (size_t)tu_below(r, (uint64_t)1 << k);
  }
  if (c < 97) return near_2_20(r);
  k = 21 + (int)tu_below(r, (uint64_t)(K.max_log2 > 21 ? K.max_log2 - 20 : 1));
  if (tu_below(r, 2)) return ((size_t)1 << k) - 1 + (size_t)tu_below(r, 3);
  return ((size_t)1 << (k - 1)) + (size_t)tu_below(r, (uint64_t)1 << (k - 1));
}

static int motif_long(const motif_t *m) { return m->active && (m->step < m->head || m->step == m->head + m->len); }

/* A motif's long call: a little past 2^20, or a few tiles (more than one: a look-back). */
static size_t long_size(seq_t *s) {
  size_t n = tu_below(&s->rng, 2) ? near_2_20(&s->rng) : 8193 + (size_t)tu_below(&s->rng, (uint64_t)1 << 17);
  if (n > K.max_n) n = K.max_n / 2 + (size_t)tu_below(&s->rng, K.max_n / 2 + 1);
  return n;
}

/* The call's length: a motif's long or short one, else a draw from every class. */
static size_t pick_size(seq_t *s) {
  size_t n;
  if (motif_long(&s->motif)) return long_size(s);
  if (s->motif.active) return 1 + (size_t)tu_below(&s->rng, 1024);
  do n = draw_size(&s->rng);
  while (n > K.max_n);
  return n;
}

enum { P_RANDOM, P_BITS, P_SORTED, P_REVERSED, P_EQUAL, P_FEW, P_SPECIALS, P_SPRINKLED, P_SMALLINT, NUM_PATTERNS };
static const char *const PATTERN_NAMES[NUM_PATTERNS] = {
    "random", "random bits", "sorted", "reversed", "all equal", "few distinct", "specials", "sprinkled", "small integers"};

/* v as the dtype's bits (integers truncated, floats converted). */
static uint64_t small_value(const tu_dtype_info *d, int64_t v) {
  unsigned char b[8];
  if (!d->is_float) return (uint64_t)v & tu_width_mask(d->size);
  tu_put_f(d->id, b, 0, (double)v);
  return tu_get_bits(d->size, b, 0);
}

/* A value of the dtype: random bits, a special value (NaN, inf, -0.0, extremes) or small. */
static uint64_t some_value(tu_rng *r, const tu_dtype_info *d) {
  switch (tu_below(r, 3)) {
    case 0: return tu_next(r) & tu_width_mask(d->size);
    case 1: return tu_special_bits(d, r);
    default: return small_value(d, (int64_t)tu_below(r, 21) - 10);
  }
}

/* Element i of n of an ascending ramp: integers spread over the dtype's range (in its
 * order, so signed ones start at the lowest), floats (i - n/2) / 2. */
static uint64_t ramp_value(const tu_dtype_info *d, size_t i, size_t n) {
  unsigned char b[8];
  unsigned bits = (unsigned)d->size * 8;
  uint64_t key;
  if (d->is_float) {
    tu_put_f(d->id, b, 0, ((double)i - (double)(n / 2)) * 0.5);
    return tu_get_bits(d->size, b, 0);
  }
  if (bits <= 32) {
    key = ((uint64_t)i << bits) / n; /* i < 2^27: no overflow */
  } else {
    long double x = (long double)i * (18446744073709551616.0L / (long double)n);
    key = x >= 18446744073709551615.0L ? UINT64_MAX : (uint64_t)x;
  }
  return d->is_signed ? key ^ ((uint64_t)1 << (bits - 1)) : key;
}

/* The mantissa digits of a float type, and of the type its sums are computed in (f32 for
 * the 16-bit floats, which are rounded once at the end). */
static int mant_digits(const tu_dtype_info *d) {
  switch (d->id) {
    case GPUPRIMS_DTYPE_F16: return 11;
    case GPUPRIMS_DTYPE_BF16: return 8;
    case GPUPRIMS_DTYPE_F32: return FLT_MANT_DIG;
    default: return DBL_MANT_DIG;
  }
}
static int acc_is_f32(const tu_dtype_info *d) { return d->size <= 4; }

/* The bits a float grid may have so that n of its values add up exactly in any order. */
static int exact_grid_bits(const tu_dtype_info *d, size_t n) {
  int b = mant_digits(d) - 2;
  for (; n > 1 && b > 1; n >>= 1) b--;
  return b;
}

/* Integers: random bits. Floats, no specials: uniform in +-2^e for a random e; half the
 * time on a grid of 2^(e - b) coarse enough that SUM is exact whatever the order. */
static void fill_random(tu_rng *r, const tu_dtype_info *d, void *p, size_t n, char *what, size_t wl) {
  size_t i;
  int e, b;
  if (!d->is_float) {
    tu_fill_bytes(r, p, n * d->size);
    return;
  }
  e = d->size == 2 ? (int)tu_below(r, 21) - 12 : (int)tu_below(r, 61) - 30; /* f16 holds 2^-24 .. 65504 */
  if (tu_below(r, 2)) {
    for (i = 0; i < n; i++) tu_put_f(d->id, p, i, ldexp(tu_unit(r) * 2.0 - 1.0, e));
    snprintf(what, wl, "random in +-2^%d", e);
    return;
  }
  b = exact_grid_bits(d, n);
  for (i = 0; i < n; i++)
    tu_put_f(d->id, p, i, ldexp((double)((int64_t)tu_below(r, ((uint64_t)2 << b) + 1) - ((int64_t)1 << b)), e - b));
  snprintf(what, wl, "random in +-2^%d, multiples of 2^%d", e, e - b);
}

/* n elements of pattern pat at p; what names the input for the call's description. */
static void gen_input(tu_rng *r, const tu_dtype_info *d, void *p, size_t n, int pat, char *what, size_t wl) {
  uint64_t v[16];
  size_t i, m;
  snprintf(what, wl, "%s", PATTERN_NAMES[pat]);
  switch (pat) {
    case P_RANDOM: fill_random(r, d, p, n, what, wl); return;
    case P_BITS: tu_fill_bytes(r, p, n * d->size); return;
    case P_SORTED:
      for (i = 0; i < n; i++) tu_put_bits(d->id, p, i, ramp_value(d, i, n));
      return;
    case P_REVERSED:
      for (i = 0; i < n; i++) tu_put_bits(d->id, p, i, ramp_value(d, n - 1 - i, n));
      return;
    case P_EQUAL:
      v[0] = some_value(r, d);
      for (i = 0; i < n; i++) tu_put_bits(d->id, p, i, v[0]);
      return;
    case P_FEW:
      m = 2 + (size_t)tu_below(r, 15);
      for (i = 0; i < m; i++) v[i] = some_value(r, d);
      for (i = 0; i < n; i++) tu_put_bits(d->id, p, i, v[tu_below(r, m)]);
      snprintf(what, wl, "%zu distinct values", m);
      return;
    case P_SPECIALS:
      for (i = 0; i < n; i++)
        tu_put_bits(d->id, p, i, tu_below(r, 2) ? tu_special_bits(d, r) : tu_next(r) & tu_width_mask(d->size));
      return;
    case P_SPRINKLED: /* plain values with a few specials: float SUM stays comparable */
      fill_random(r, d, p, n, what, wl);
      m = n ? 1 + (size_t)tu_below(r, 4) : 0;
      for (i = 0; i < m; i++) tu_put_bits(d->id, p, (size_t)tu_below(r, n), tu_special_bits(d, r));
      i = strlen(what);
      snprintf(what + i, wl - i, ", %zu specials", m);
      return;
    default: tu_fill(r, d->id, p, n, TU_FILL_SMALLINT); return;
  }
}

/* A sort's values: the input index in the low bits, random bits above where they fit. */
static void fill_values(tu_rng *r, const tu_dtype_info *vd, void *p, size_t n) {
  size_t i;
  for (i = 0; i < n; i++) tu_put_bits(vd->id, p, i, (uint64_t)i | (tu_next(r) << 32));
}

static const tu_dtype_info *pick_dtype(seq_t *s) { return &tu_dtypes()[tu_below(&s->rng, TU_NUM_DTYPES)]; }

/* ------------------------------------------------------------------------------------- */
/* Buffers                                                                                */
/* ------------------------------------------------------------------------------------- */

static void sb_free(sbuf *x) {
  gpuprims_buffer_destroy(x->b); /* the view first: the memory it views must outlive it */
  gpuprims_buffer_destroy(x->backing);
  x->b = x->backing = NULL;
}

/* A view of n elements at the start of a new owned buffer of the side (a little longer);
 * 0 when the backend has no device pointers. */
static int make_wrapped(seq_t *s, side_t *sd, gpuprims_dtype t, size_t n, sbuf *x) {
  size_t slack = 1 + (size_t)tu_below(&s->rng, 64); /* drawn either way: the sequence stays the same */
  gpuprims_buffer *own = NULL;
  void *p = NULL;
  gpuprims_status st;
  if (sd->no_wrap) return 0;
  need_ok(s, gpuprims_buffer_create(sd->ctx, t, n + slack, &own), "gpuprims_buffer_create (to wrap)");
  st = gpuprims_buffer_device_ptr(own, &p);
  if (st == GPUPRIMS_STATUS_UNSUPPORTED) {
    sd->no_wrap = 1;
    gpuprims_buffer_destroy(own);
    printf("%s: variant %s: no device pointers on this backend: owned buffers only\n", tu_state.name, s->variant);
    return 0;
  }
  need_ok(s, st, "gpuprims_buffer_device_ptr");
  need_ok(s, gpuprims_buffer_wrap_device(sd->ctx, t, p, n, &x->b), "gpuprims_buffer_wrap_device");
  x->backing = own;
  s->wrapped++;
  s->call_wrapped++;
  return 1;
}

/* A buffer of n elements of t on the side, holding src unless it is NULL: made by
 * from_host or by create and write, or (wrapped variant, half the time) a view. */
static sbuf sb_make(seq_t *s, side_t *sd, gpuprims_dtype t, size_t n, const void *src) {
  sbuf x;
  x.b = x.backing = NULL;
  if (sd->wrap && tu_below(&s->rng, 2) && make_wrapped(s, sd, t, n, &x)) {
    if (src) need_ok(s, gpuprims_buffer_write(x.b, 0, src, n), "gpuprims_buffer_write");
    return x;
  }
  if (src && tu_below(&s->rng, 2)) {
    need_ok(s, gpuprims_buffer_from_host(sd->ctx, t, src, n, &x.b), "gpuprims_buffer_from_host");
    return x;
  }
  need_ok(s, gpuprims_buffer_create(sd->ctx, t, n, &x.b), "gpuprims_buffer_create");
  if (src) need_ok(s, gpuprims_buffer_write(x.b, 0, src, n), "gpuprims_buffer_write");
  return x;
}

/* An output buffer, every byte `poison`, so that an element never written is caught. */
static sbuf sb_poisoned(seq_t *s, side_t *sd, gpuprims_dtype t, size_t n, unsigned char poison) {
  size_t bytes = n * tu_dtype_size(t);
  unsigned char *p = hb(&s->h[H_TMP], bytes);
  memset(p, poison, bytes);
  return sb_make(s, sd, t, n, p);
}

static sbuf sb_none(void) {
  sbuf x;
  x.b = x.backing = NULL;
  return x;
}

/* ------------------------------------------------------------------------------------- */
/* Comparing                                                                              */
/* ------------------------------------------------------------------------------------- */

static double get_f(const tu_dtype_info *d, uint64_t bits) {
  float f;
  double x;
  if (d->size == 2) return tu_half_to_double(d->id, (uint16_t)bits);
  if (d->size == 4) {
    uint32_t b32 = (uint32_t)bits;
    memcpy(&f, &b32, 4);
    return (double)f;
  }
  memcpy(&x, &bits, 8);
  return x;
}

/* The number of additions behind result i. */
static size_t fsum_terms(const fsum_t *f, size_t i) { return !f->scan ? f->n : f->exclusive ? i : i + 1; }

/*
 * Any order of k additions is within gamma_k = k u / (1 - k u) times the sum of |x| of the
 * exact sum (u the unit roundoff), so two devices' sums within twice that; a denormal
 * flushed per addition besides. Infinite once k u nears 1: then nothing is bounded.
 */
static double fsum_tolerance(const tu_dtype_info *d, double absum, size_t k) {
  double u = (acc_is_f32(d) ? FLT_EPSILON : DBL_EPSILON) / 2, ku = (double)k * u;
  double tiny = acc_is_f32(d) ? FLT_MIN : DBL_MIN;
  if (ku >= 0.5) return INFINITY;
  return 2.0 * ku / (1.0 - ku) * absum + (double)k * tiny;
}

/* A float SUM (reduce, or one scan element) against the reference's. */
static int fsum_ok(const tu_dtype_info *d, uint64_t want, uint64_t got, const fsum_t *f, size_t i) {
  /* the 16-bit floats: their largest finite value; each side rounds its f32 sum once */
  double big = d->size == 2 ? get_f(d, d->id == GPUPRIMS_DTYPE_F16 ? 0x7BFFu : 0x7F7Fu) : d->size == 4 ? FLT_MAX : DBL_MAX;
  double w = get_f(d, want), g = get_f(d, got);
  double rounding = d->size == 2 ? (fabs(w) + fabs(g)) * ldexp(1.0, -mant_digits(d)) + ldexp(get_f(d, 1), 1) : 0;
  if (!(f->absum[i] <= big / 2)) return 1; /* overflow depends on the order: not compared */
  if (isnan(w) || isnan(g) || isinf(w) || isinf(g)) return (isnan(w) && isnan(g)) || w == g;
  if (f->exact) return g == w;
  return fabs(g - w) <= fsum_tolerance(d, f->absum[i], fsum_terms(f, i)) + rounding;
}

static int elem_ok(int cmp, const tu_dtype_info *d, uint64_t want, uint64_t got, const fsum_t *f, size_t i) {
  if (want == got) return 1;
  if (cmp == CMP_NAN) return tu_bits_is_nan(d, want) && tu_bits_is_nan(d, got);
  if (cmp == CMP_FSUM) return fsum_ok(d, want, got, f, i);
  return 0;
}

/* The first element of got[0..n) that does not match want under cmp; n when none. */
static size_t first_bad(int cmp, const tu_dtype_info *d, const void *want, const void *got, size_t n,
                        const fsum_t *f) {
  size_t i = tu_first_diff(want, got, d->size, n);
  for (; i < n; i++)
    if (!elem_ok(cmp, d, tu_get_bits(d->size, want, i), tu_get_bits(d->size, got, i), f, i)) return i;
  return n;
}

/* Reports output `label` of call (callno, desc): how many elements differ, the first and
 * the last, with got and expected. */
static void report_diff(seq_t *s, unsigned long callno, const char *desc, const char *label, int cmp,
                        const tu_dtype_info *d, const void *want, const void *got, size_t n, const fsum_t *f,
                        size_t first) {
  size_t i, bad = 0, last = first;
  uint64_t wb = tu_get_bits(d->size, want, first), gb = tu_get_bits(d->size, got, first);
  char w[64], g[64], extra[160] = "";
  for (i = first; i < n; i++)
    if (!elem_ok(cmp, d, tu_get_bits(d->size, want, i), tu_get_bits(d->size, got, i), f, i)) {
      bad++;
      last = i;
    }
  tu_fmt_elem(d->id, &wb, w, sizeof w);
  tu_fmt_elem(d->id, &gb, g, sizeof g);
  if (cmp == CMP_FSUM && f->exact)
    snprintf(extra, sizeof extra, " (exact in any order; sum of |x| behind it %.6g)", f->absum[first]);
  else if (cmp == CMP_FSUM)
    snprintf(extra, sizeof extra, " (sum of |x| behind it %.6g, tolerance %.3g)", f->absum[first],
             fsum_tolerance(d, f->absum[first], fsum_terms(f, first)));
  seq_fail(s, callno, desc, "%s (%s, compared %s): %zu of %zu elements differ, at indices %zu..%zu; at %zu got %s, expected %s%s",
           label, d->name, CMP_NAMES[cmp], bad, n, first, last, first, g, w, extra);
}

/* ------------------------------------------------------------------------------------- */
/* Quicksort: the (key, value) pairs, or the keys' bits, of each run of equal keys         */
/* ------------------------------------------------------------------------------------- */

typedef struct {
  uint64_t k, v;
} kv_t;

static int kv_cmp(const void *a_, const void *b_) {
  const kv_t *a = (const kv_t *)a_, *b = (const kv_t *)b_;
  if (a->k != b->k) return a->k < b->k ? -1 : 1;
  if (a->v != b->v) return a->v < b->v ? -1 : 1;
  return 0;
}

/* The pairs of [lo, hi) of keys k and values v (NULL: keys alone, values 0), sorted by
 * their bits. */
static kv_t *sorted_pairs(const tu_dtype_info *kd, const tu_dtype_info *vd, const void *k, const void *v, size_t lo,
                          size_t hi) {
  kv_t *p = (kv_t *)tu_xmalloc((hi - lo) * sizeof(kv_t));
  size_t i;
  for (i = lo; i < hi; i++) {
    p[i - lo].k = tu_get_bits(kd->size, k, i);
    p[i - lo].v = v ? tu_get_bits(vd->size, v, i) : 0;
  }
  qsort(p, hi - lo, sizeof(kv_t), kv_cmp);
  return p;
}

/* Whether got's pairs in [lo, hi) are want's; else reports the first that differs. */
static int same_run(seq_t *s, const pending_t *p, const void *gk, const void *gv, size_t lo, size_t hi) {
  const tu_dtype_info *kd = tu_dtype(p->out[0].t), *vd = gv ? tu_dtype(p->out[1].t) : kd;
  kv_t *w = sorted_pairs(kd, vd, p->want[0], gv ? p->want[1] : NULL, lo, hi), *g = sorted_pairs(kd, vd, gk, gv, lo, hi);
  size_t i = 0;
  char ws[64] = "-", gs[64] = "-";
  while (i < hi - lo && kv_cmp(&w[i], &g[i]) == 0) i++;
  if (i < hi - lo) {
    if (gv) tu_fmt_elem(vd->id, &g[i].v, gs, sizeof gs);
    if (gv) tu_fmt_elem(vd->id, &w[i].v, ws, sizeof ws);
    seq_fail(s, p->callno, p->desc,
             "%s: the (key bits, value) pairs of the %zu equal keys at [%zu, %zu) are not the reference's "
             "(compared as multisets); in (key bits, value) order, pair %zu: got (0x%llx, %s), expected (0x%llx, %s)",
             gv ? "values" : "keys", hi - lo, lo, hi, i, (unsigned long long)g[i].k, gs, (unsigned long long)w[i].k,
             ws);
  }
  free(w);
  free(g);
  return i == hi - lo;
}

/* Runs of equal keys (in the sort's order, so NaNs make one run) of the reference's keys:
 * each key's bits must survive and each value travel with its key (gv NULL: keys alone). */
static void check_pairs(seq_t *s, const pending_t *p, const void *gk, const void *gv) {
  const tu_dtype_info *kd = tu_dtype(p->out[0].t), *vd = gv ? tu_dtype(p->out[1].t) : kd;
  size_t n = p->out[0].n, i = 0, j;
  tu_count_check_();
  while (i < n) {
    uint64_t key = tu_sort_key(kd, tu_get_bits(kd->size, p->want[0], i));
    for (j = i + 1; j < n && tu_sort_key(kd, tu_get_bits(kd->size, p->want[0], j)) == key; j++) {
    }
    /* the common cases, without a sort: a run of one, and a run in the reference's order
     * (every run where the context under test is the host backend, as the reference is) */
    if (memcmp((const unsigned char *)p->want[0] + i * kd->size, (const unsigned char *)gk + i * kd->size,
               (j - i) * kd->size) == 0 &&
        (!gv || memcmp((const unsigned char *)p->want[1] + i * vd->size, (const unsigned char *)gv + i * vd->size,
                       (j - i) * vd->size) == 0)) {
      i = j;
      continue;
    }
    if (!same_run(s, p, gk, gv, i, j)) return;
    i = j;
  }
}

/* ------------------------------------------------------------------------------------- */
/* Deferred read-back                                                                     */
/* ------------------------------------------------------------------------------------- */

static void pending_free(pending_t *p) {
  int i;
  for (i = 0; i < p->nout; i++) {
    sb_free(&p->out[i].sb);
    free(p->want[i]);
    p->want[i] = NULL;
  }
  free(p->fs.absum);
  p->fs.absum = NULL;
  p->used = 0;
}

/* Reads the outputs of p back from the context under test and compares them. */
static void pending_check(seq_t *s, pending_t *p) {
  unsigned char *got[2];
  int i;
  for (i = 0; i < p->nout; i++) {
    const out_t *o = &p->out[i];
    got[i] = hb(&s->h[i ? H_GOT2 : H_GOT], o->n * tu_dtype_size(o->t));
    need_ok(s, gpuprims_buffer_read(o->sb.b, 0, got[i], o->n), "gpuprims_buffer_read (an output)");
  }
  for (i = 0; i < p->nout && !s->failed; i++) {
    const out_t *o = &p->out[i];
    const tu_dtype_info *d = tu_dtype(o->t);
    size_t bad;
    if (p->pairs && i == 1) break; /* values: by runs, below */
    tu_count_check_();
    bad = first_bad(o->cmp, d, p->want[i], got[i], o->n, &p->fs);
    if (bad < o->n) report_diff(s, p->callno, p->desc, o->label, o->cmp, d, p->want[i], got[i], o->n, &p->fs, bad);
  }
  if (p->pairs && !s->failed) check_pairs(s, p, got[0], p->nout > 1 ? got[1] : NULL);
  pending_free(p);
}

/* Checks the pending outputs that are due (all with `all`), oldest first. */
static void check_due(seq_t *s, int all) {
  for (;;) {
    pending_t *next = NULL;
    int i;
    for (i = 0; i < MAX_PENDING; i++) {
      pending_t *p = &s->pend[i];
      if (p->used && (all || p->due <= s->callno) && (!next || p->order < next->order)) next = p;
    }
    if (!next || s->failed) return;
    pending_check(s, next);
  }
}

/* A free slot; when every one is taken, the oldest is checked now. */
static pending_t *pending_slot(seq_t *s) {
  pending_t *oldest = &s->pend[0];
  int i;
  for (i = 0; i < MAX_PENDING; i++) {
    if (!s->pend[i].used) return &s->pend[i];
    if (s->pend[i].order < oldest->order) oldest = &s->pend[i];
  }
  pending_check(s, oldest);
  return oldest;
}

static void drop_pending(seq_t *s) {
  int i;
  for (i = 0; i < MAX_PENDING; i++)
    if (s->pend[i].used) pending_free(&s->pend[i]);
}

/* ------------------------------------------------------------------------------------- */
/* One call on both contexts                                                              */
/* ------------------------------------------------------------------------------------- */

/* Everything a call needs, the same for both contexts. */
typedef struct {
  const tu_dtype_info *d; /* the input's dtype */
  size_t n;               /* the input's length */
  unsigned char poison;
  int cmp;                /* how the main output compares */
  fsum_t fs;              /* CMP_FSUM: how the main output's sums compare */
  gpuprims_op op;
  gpuprims_scan_mode mode;
  int inplace;
  size_t out_len;         /* a scan's output length (n, or n + 1: illegal) */
  gpuprims_order order;
  int quick;
  const tu_dtype_info *vd; /* a sort's values (NULL: keys alone) */
  size_t vlen;            /* their length (n, or n + 1: illegal) */
  int pairs;              /* quicksort with values */
  uint64_t k;             /* select's rank, top-k's count (segmented: one for every row) */
  size_t kbuf;            /* top-k's output length (segmented: of every row) */
  int with_idx;
  size_t nrows;           /* segmented select and top-k */
  gpuprims_dtype offs_t, ks_t;
  int with_ks;
  size_t uniform_len;     /* segmented top-k: the rows' length without offsets; 0: offsets */
  size_t dst_len, woff, wcount, roff, rcount; /* buffer copy, write, read */
} call_t;

/* What a call left on one context: its status, its outputs. */
typedef struct {
  gpuprims_status st;
  int nout;
  out_t out[2];
  unsigned char host[8]; /* a result in host memory (reduce, select_kth) */
  int has_host;
} result_t;

typedef void (*run_fn)(seq_t *, side_t *, const call_t *, result_t *);

static void set_out(result_t *r, int i, sbuf sb, gpuprims_dtype t, size_t n, int cmp, const char *label) {
  r->out[i].sb = sb;
  r->out[i].t = t;
  r->out[i].n = n;
  r->out[i].cmp = cmp;
  r->out[i].label = label;
  if (r->nout < i + 1) r->nout = i + 1;
}

static void free_outputs(result_t *r) {
  int i;
  for (i = 0; i < r->nout; i++) sb_free(&r->out[i].sb);
  r->nout = 0;
}

/* The reference's output, read into new host memory. */
static unsigned char *read_all(seq_t *s, const out_t *o) {
  unsigned char *p = (unsigned char *)tu_xmalloc(o->n * tu_dtype_size(o->t));
  need_ok(s, gpuprims_buffer_read(o->sb.b, 0, p, o->n), "gpuprims_buffer_read (the reference's output)");
  return p;
}

/* Queues the outputs of the context under test, with the reference's, to be read back
 * 0 to 3 calls later (at once when large). */
static void queue_outputs(seq_t *s, call_t *c, result_t *want, result_t *got) {
  pending_t *p;
  size_t bytes = 0;
  int i;
  if (got->nout == 0) return;
  p = pending_slot(s);
  memset(p, 0, sizeof *p);
  p->nout = got->nout;
  p->pairs = c->pairs;
  p->callno = s->callno;
  snprintf(p->desc, sizeof p->desc, "%s", s->desc);
  p->fs = c->fs;
  c->fs.absum = NULL;
  for (i = 0; i < got->nout; i++) {
    p->out[i] = got->out[i];
    p->want[i] = read_all(s, &want->out[i]);
    bytes += got->out[i].n * tu_dtype_size(got->out[i].t);
  }
  free_outputs(want);
  got->nout = 0;
  p->due = s->callno + (bytes <= DEFER_MAX_BYTES ? tu_below(&s->rng, 4) : 0);
  if (p->due > s->callno) s->deferred++;
  p->order = s->pend_order++;
  p->used = 1;
}

/* A result in host memory (reduce, select_kth) against the reference's. */
static int host_ok(seq_t *s, const call_t *c, const result_t *want, const result_t *got) {
  tu_count_check_();
  if (first_bad(c->cmp, c->d, want->host, got->host, 1, &c->fs) == 0) {
    report_diff(s, s->callno, s->desc, "result", c->cmp, c->d, want->host, got->host, 1, &c->fs, 0);
    return 0;
  }
  return 1;
}

/* Makes the call on the reference, then on the context under test; compares the statuses
 * and the host result now, the output buffers later. */
static void run_compared(seq_t *s, call_t *c, run_fn run) {
  result_t want, got;
  memset(&want, 0, sizeof want);
  memset(&got, 0, sizeof got);
  run(s, &s->ref, c, &want);
  s->call_wrapped = 0;
  run(s, cur_side(s), c, &got);
  if (s->call_wrapped) desc_append(s, " [%d of its buffers wrapped]", s->call_wrapped);
  if (same_status(s, got.st, want.st) && (!got.has_host || host_ok(s, c, &want, &got)))
    queue_outputs(s, c, &want, &got);
  free_outputs(&want);
  free_outputs(&got);
  free(c->fs.absum);
  c->fs.absum = NULL;
}

/* A motif's long call: random or sorted/reversed keys mostly; a head call after one of
 * its kind sorts (scans, ...) sorted keys half the time, as a program sorting its sorted
 * output again would. */
static int motif_pattern(seq_t *s) {
  const motif_t *m = &s->motif;
  int again = m->step > 0 && m->step < m->head && m->head_kind[m->step] == m->head_kind[m->step - 1];
  if (again && tu_below(&s->rng, 2)) return P_SORTED + (int)tu_below(&s->rng, 2);
  if (one_in(s, 4)) return (int)tu_below(&s->rng, NUM_PATTERNS);
  return tu_below(&s->rng, 2) ? P_RANDOM + (int)tu_below(&s->rng, 2) : P_SORTED + (int)tu_below(&s->rng, 2);
}

/* Draws the dtype, length, input and poison of a call, and starts its description. */
static void begin_call(seq_t *s, call_t *c, const char *name) {
  char what[64];
  int pat;
  memset(c, 0, sizeof *c);
  c->d = pick_dtype(s);
  c->n = pick_size(s);
  c->poison = (unsigned char)(0x11 * (1 + tu_below(&s->rng, 14))); /* never 0x00 or 0xFF */
  pat = motif_long(&s->motif) ? motif_pattern(s) : (int)tu_below(&s->rng, NUM_PATTERNS);
  gen_input(&s->rng, c->d, hb(&s->h[H_IN], c->n * c->d->size), c->n, pat, what, sizeof what);
  describe(s, "%s %s n=%zu (%s)", name, c->d->name, c->n, what);
}

static int value_cmp(const tu_dtype_info *d, gpuprims_op op) {
  if (!d->is_float) return CMP_EXACT;
  return op == GPUPRIMS_OP_SUM ? CMP_FSUM : CMP_NAN;
}

static double fabs_finite(const tu_dtype_info *d, const void *p, size_t i) {
  double x = get_f(d, tu_get_bits(d->size, p, i));
  return isfinite(x) ? fabs(x) : 0.0;
}

/* Adds |x| / 2^q of in[0..n) (finite x only) while the total stays below `limit`. */
static long double units_below(const tu_dtype_info *d, const void *in, size_t n, int q, long double limit) {
  long double acc = 0;
  size_t i;
  for (i = 0; i < n && acc < limit; i++) {
    double x = get_f(d, tu_get_bits(d->size, in, i));
    if (isfinite(x)) acc += ldexpl(fabsl((long double)x), -q);
  }
  return acc;
}

/* The exponent of the lowest set bit of finite nonzero x (x is a multiple of 2^that). */
static int lowest_exponent(const tu_dtype_info *d, double x) {
  int e, digits = acc_is_f32(d) ? FLT_MANT_DIG : DBL_MANT_DIG;
  uint64_t m = (uint64_t)ldexp(fabs(frexp(x, &e)), digits); /* x = m 2^(e - digits) */
  e -= digits;
  while (!(m & 1)) {
    m >>= 1;
    e++;
  }
  return e;
}

/*
 * Whether every order of the additions gives the exact sum of in[0..n): the finite values
 * are multiples of 2^q, with 2^q a normal number, and their |x| add up below 2^(digits + q),
 * so that every partial sum is a number of the type.
 */
static int sum_is_exact(const tu_dtype_info *d, const void *in, size_t n) {
  /* in the type the sums are computed in (f32 for the 16-bit floats, rounded once after) */
  int digits = acc_is_f32(d) ? FLT_MANT_DIG : DBL_MANT_DIG, min_exp = (acc_is_f32(d) ? FLT_MIN_EXP : DBL_MIN_EXP) - 1;
  int q = INT_MAX;
  size_t i;
  for (i = 0; i < n; i++) {
    double x = get_f(d, tu_get_bits(d->size, in, i));
    if (isfinite(x) && x != 0) {
      int e = lowest_exponent(d, x);
      q = e < q ? e : q;
    }
  }
  if (q == INT_MAX) return 1; /* no finite nonzero value */
  return q >= min_exp && units_below(d, in, n, q, ldexpl(1.0L, digits)) < ldexpl(1.0L, digits);
}

/* The finite |x| behind a SUM: one total (reduce), or per element of a scan. */
static double *absum_of(const tu_dtype_info *d, const void *in, size_t n, int scan, int exclusive) {
  double *a = (double *)tu_xmalloc((scan && n ? n : 1) * sizeof(double)), acc = 0;
  size_t i;
  for (i = 0; i < n; i++) {
    double x = fabs_finite(d, in, i);
    if (scan && exclusive) a[i] = acc;
    acc += x;
    if (scan && !exclusive) a[i] = acc;
  }
  if (!scan) a[0] = acc;
  return a;
}

/* How the SUM of the call's input compares (reduce: one result; scan: one per element). */
static void fsum_init(seq_t *s, call_t *c, int scan, int exclusive) {
  c->fs.absum = absum_of(c->d, s->h[H_IN].p, c->n, scan, exclusive);
  c->fs.n = c->n;
  c->fs.scan = scan;
  c->fs.exclusive = exclusive;
  c->fs.exact = sum_is_exact(c->d, s->h[H_IN].p, c->n);
  desc_append(s, c->fs.exact ? " (exact sums)" : " (inexact sums)");
}

static const gpuprims_op OPS[3] = {GPUPRIMS_OP_SUM, GPUPRIMS_OP_MIN, GPUPRIMS_OP_MAX};

/* ------------------------------------------------------------------------------------- */
/* The primitives, on one context each                                                    */
/* ------------------------------------------------------------------------------------- */

static void reduce_on(seq_t *s, side_t *sd, const call_t *c, result_t *r) {
  sbuf in = sb_make(s, sd, c->d->id, c->n, s->h[H_IN].p);
  memset(r->host, c->poison, sizeof r->host);
  r->has_host = 1;
  r->st = gpuprims_reduce(sd->ctx, in.b, c->op, r->host);
  sb_free(&in);
}

static void reduce_buf_on(seq_t *s, side_t *sd, const call_t *c, result_t *r) {
  sbuf in = sb_make(s, sd, c->d->id, c->n, s->h[H_IN].p);
  sbuf out = sb_poisoned(s, sd, c->d->id, 1, c->poison);
  r->st = gpuprims_reduce_to_buffer(sd->ctx, in.b, c->op, out.b);
  set_out(r, 0, out, c->d->id, 1, c->cmp, "result");
  sb_free(&in);
}

static void scan_on(seq_t *s, side_t *sd, const call_t *c, result_t *r) {
  sbuf in = sb_make(s, sd, c->d->id, c->n, s->h[H_IN].p);
  sbuf out = c->inplace ? in : sb_poisoned(s, sd, c->d->id, c->out_len, c->poison);
  r->st = gpuprims_scan(sd->ctx, in.b, out.b, c->op, c->mode);
  set_out(r, 0, out, c->d->id, c->out_len, c->cmp, "out");
  if (!c->inplace) sb_free(&in);
}

static void sort_on(seq_t *s, side_t *sd, const call_t *c, result_t *r) {
  sbuf keys = sb_make(s, sd, c->d->id, c->n, s->h[H_IN].p);
  sbuf vals = c->vd ? sb_make(s, sd, c->vd->id, c->vlen, s->h[H_VAL].p) : sb_none();
  if (c->quick)
    r->st = gpuprims_quicksort(sd->ctx, keys.b, vals.b, c->order);
  else
    r->st = gpuprims_radix_sort(sd->ctx, keys.b, vals.b, c->order);
  set_out(r, 0, keys, c->d->id, c->n, c->cmp, "keys");
  if (c->vd) set_out(r, 1, vals, c->vd->id, c->vlen, CMP_EXACT, "values");
}

static void select_on(seq_t *s, side_t *sd, const call_t *c, result_t *r) {
  sbuf in = sb_make(s, sd, c->d->id, c->n, s->h[H_IN].p);
  memset(r->host, c->poison, sizeof r->host);
  r->has_host = 1;
  r->st = gpuprims_select_kth(sd->ctx, in.b, c->k, r->host);
  sb_free(&in);
}

static void select_buf_on(seq_t *s, side_t *sd, const call_t *c, result_t *r) {
  sbuf in = sb_make(s, sd, c->d->id, c->n, s->h[H_IN].p);
  sbuf out = sb_poisoned(s, sd, c->d->id, 1, c->poison);
  r->st = gpuprims_select_kth_to_buffer(sd->ctx, in.b, c->k, out.b);
  set_out(r, 0, out, c->d->id, 1, c->cmp, "result");
  sb_free(&in);
}

static void topk_on(seq_t *s, side_t *sd, const call_t *c, result_t *r) {
  sbuf in = sb_make(s, sd, c->d->id, c->n, s->h[H_IN].p);
  sbuf vals = sb_poisoned(s, sd, c->d->id, c->kbuf, c->poison);
  sbuf idx = c->with_idx ? sb_poisoned(s, sd, GPUPRIMS_DTYPE_U64, c->kbuf, c->poison) : sb_none();
  r->st = gpuprims_topk(sd->ctx, in.b, c->k, c->order, vals.b, idx.b);
  set_out(r, 0, vals, c->d->id, c->kbuf, CMP_EXACT, "values");
  if (c->with_idx) set_out(r, 1, idx, GPUPRIMS_DTYPE_U64, c->kbuf, CMP_EXACT, "indices");
  sb_free(&in);
}

static void segsel_on(seq_t *s, side_t *sd, const call_t *c, result_t *r) {
  sbuf vals = sb_make(s, sd, c->d->id, c->n, s->h[H_IN].p);
  sbuf offs = sb_make(s, sd, c->offs_t, c->nrows + 1, s->h[H_OFF].p);
  sbuf ks = c->with_ks ? sb_make(s, sd, c->ks_t, c->nrows, s->h[H_KS].p) : sb_none();
  sbuf out = sb_poisoned(s, sd, c->d->id, c->nrows, c->poison);
  r->st = gpuprims_segmented_select(sd->ctx, vals.b, offs.b, ks.b, out.b);
  set_out(r, 0, out, c->d->id, c->nrows, c->cmp, "out");
  sb_free(&vals);
  sb_free(&offs);
  sb_free(&ks);
}

/* Values and indices compare bitwise: a row's elements come back bit for bit (NaN
 * payloads too), and ties, NaNs among them, go lowest index first. */
static void segtopk_on(seq_t *s, side_t *sd, const call_t *c, result_t *r) {
  sbuf vals = sb_make(s, sd, c->d->id, c->n, s->h[H_IN].p);
  sbuf offs = c->uniform_len ? sb_none() : sb_make(s, sd, c->offs_t, c->nrows + 1, s->h[H_OFF].p);
  sbuf ks = c->with_ks ? sb_make(s, sd, c->ks_t, c->nrows, s->h[H_KS].p) : sb_none();
  sbuf out = sb_poisoned(s, sd, c->d->id, c->kbuf, c->poison);
  sbuf idx = c->with_idx ? sb_poisoned(s, sd, GPUPRIMS_DTYPE_U64, c->kbuf, c->poison) : sb_none();
  r->st = gpuprims_segmented_topk(sd->ctx, vals.b, offs.b, c->uniform_len, c->k, ks.b, c->order, out.b, idx.b);
  set_out(r, 0, out, c->d->id, c->kbuf, CMP_EXACT, "values");
  if (c->with_idx) set_out(r, 1, idx, GPUPRIMS_DTYPE_U64, c->kbuf, CMP_EXACT, "indices");
  sb_free(&vals);
  sb_free(&offs);
  sb_free(&ks);
}

/* Element j of the destination after the copy and the write, in host memory. */
static const unsigned char *copied_elem(seq_t *s, const call_t *c, size_t j) {
  if (j >= c->woff && j < c->woff + c->wcount) return s->h[H_VAL].p + (j - c->woff) * c->d->size;
  return s->h[H_IN].p + j * c->d->size;
}

/* The part read back right after the write (under test only: the reference's is known). */
static void check_read_part(seq_t *s, const call_t *c, gpuprims_buffer *dst) {
  unsigned char *got = hb(&s->h[H_GOT], c->rcount * c->d->size);
  size_t j;
  need_ok(s, gpuprims_buffer_read(dst, c->roff, got, c->rcount), "gpuprims_buffer_read (a part)");
  tu_count_check_();
  for (j = 0; j < c->rcount; j++) {
    const unsigned char *w = copied_elem(s, c, c->roff + j);
    if (memcmp(got + j * c->d->size, w, c->d->size) != 0) {
      report_diff(s, s->callno, s->desc, "the part read back", CMP_EXACT, c->d, w, got + j * c->d->size, 1, NULL, 0);
      return;
    }
  }
}

static void buffer_on(seq_t *s, side_t *sd, const call_t *c, result_t *r) {
  sbuf src = sb_make(s, sd, c->d->id, c->n, s->h[H_IN].p);
  sbuf dst = sb_poisoned(s, sd, c->d->id, c->dst_len, c->poison);
  r->st = gpuprims_buffer_copy(dst.b, src.b);
  if (r->st == GPUPRIMS_STATUS_OK) {
    need_ok(s, gpuprims_buffer_write(dst.b, c->woff, s->h[H_VAL].p, c->wcount), "gpuprims_buffer_write (a part)");
    if (sd != &s->ref) check_read_part(s, c, dst.b);
  }
  set_out(r, 0, dst, c->d->id, c->dst_len, CMP_EXACT, "destination");
  sb_free(&src);
}

/* ------------------------------------------------------------------------------------- */
/* The calls: parameters, then both contexts                                               */
/* ------------------------------------------------------------------------------------- */

static int illegal(seq_t *s) { return one_in(s, ILLEGAL_ONE_IN); }

static void reduce_call(seq_t *s, int to_buf) {
  call_t c;
  begin_call(s, &c, to_buf ? "reduce_to_buffer" : "reduce");
  c.op = OPS[tu_below(&s->rng, 3)];
  c.cmp = value_cmp(c.d, c.op);
  desc_append(s, " %s", tu_op_name(c.op));
  if (c.cmp == CMP_FSUM) fsum_init(s, &c, 0, 0);
  run_compared(s, &c, to_buf ? reduce_buf_on : reduce_on);
}

static void call_reduce(seq_t *s) { reduce_call(s, 0); }
static void call_reduce_buf(seq_t *s) { reduce_call(s, 1); }

static void call_scan(seq_t *s) {
  call_t c;
  begin_call(s, &c, "scan");
  c.op = OPS[tu_below(&s->rng, 3)];
  c.mode = tu_below(&s->rng, 2) ? GPUPRIMS_SCAN_EXCLUSIVE : GPUPRIMS_SCAN_INCLUSIVE;
  c.inplace = one_in(s, 3);
  c.out_len = !c.inplace && illegal(s) ? c.n + 1 : c.n;
  c.cmp = value_cmp(c.d, c.op);
  if (c.out_len != c.n) c.cmp = CMP_EXACT; /* a failed call: the output must stay as poisoned */
  desc_append(s, " %s %s%s%s", tu_op_name(c.op), tu_mode_name(c.mode), c.inplace ? ", in place" : "",
              c.out_len != c.n ? ", out of length n + 1 (illegal)" : "");
  if (c.cmp == CMP_FSUM) fsum_init(s, &c, 1, c.mode == GPUPRIMS_SCAN_EXCLUSIVE);
  run_compared(s, &c, scan_on);
}

static void sort_call(seq_t *s, int quick) {
  call_t c;
  begin_call(s, &c, quick ? "quicksort" : "radix_sort");
  c.quick = quick;
  c.order = tu_below(&s->rng, 2) ? GPUPRIMS_ORDER_DESCENDING : GPUPRIMS_ORDER_ASCENDING;
  if (tu_below(&s->rng, 2)) {
    c.vd = pick_dtype(s);
    c.vlen = illegal(s) ? c.n + 1 : c.n;
    fill_values(&s->rng, c.vd, hb(&s->h[H_VAL], c.vlen * c.vd->size), c.vlen);
  }
  /* quicksort is not stable: NaNs of other payloads may trade places, so keys compare by
     NaN-ness, then the bits and values of each run of equal keys as multisets */
  c.cmp = quick && c.d->is_float ? CMP_NAN : CMP_EXACT;
  c.pairs = quick && (c.vd ? c.vlen == c.n : c.d->is_float);
  desc_append(s, " %s, %s%s%s", tu_order_name(c.order), c.vd ? "values " : "keys alone", c.vd ? c.vd->name : "",
              c.vd && c.vlen != c.n ? " of length n + 1 (illegal)" : "");
  run_compared(s, &c, sort_on);
}

static void call_radix(seq_t *s) { sort_call(s, 0); }
static void call_quick(seq_t *s) { sort_call(s, 1); }

/* A rank for select_kth: the ends, the middle, a third, random; now and then k >= n. */
static uint64_t pick_rank(seq_t *s, size_t n) {
  if (n == 0) return tu_below(&s->rng, 2);
  if (illegal(s)) return n + tu_below(&s->rng, 3);
  switch (tu_below(&s->rng, 5)) {
    case 0: return 0;
    case 1: return n - 1;
    case 2: return (n - 1) / 2;
    case 3: return n / 3;
    default: return tu_below(&s->rng, n);
  }
}

static void select_call(seq_t *s, int to_buf) {
  call_t c;
  begin_call(s, &c, to_buf ? "select_kth_to_buffer" : "select_kth");
  c.k = pick_rank(s, c.n);
  c.cmp = c.d->is_float ? CMP_NAN : CMP_EXACT;
  desc_append(s, " k=%llu%s", (unsigned long long)c.k, c.k >= c.n ? " (illegal)" : "");
  run_compared(s, &c, to_buf ? select_buf_on : select_on);
}

static void call_select(seq_t *s) { select_call(s, 0); }
static void call_select_buf(seq_t *s) { select_call(s, 1); }

/* A count for top-k: 0, 1, a few, all, half, random; now and then n + 1. */
static uint64_t pick_count(seq_t *s, size_t n) {
  uint64_t few;
  if (illegal(s)) return (uint64_t)n + 1;
  switch (tu_below(&s->rng, 6)) {
    case 0: return 0;
    case 1: return n < 1 ? n : 1;
    case 2: few = 1 + tu_below(&s->rng, 64); return few < n ? few : n;
    case 3: return n;
    case 4: return n / 2;
    default: return tu_below(&s->rng, (uint64_t)n + 1);
  }
}

static void call_topk(seq_t *s) {
  call_t c;
  begin_call(s, &c, "topk");
  c.order = tu_below(&s->rng, 2) ? GPUPRIMS_ORDER_DESCENDING : GPUPRIMS_ORDER_ASCENDING;
  c.with_idx = (int)tu_below(&s->rng, 2);
  c.k = pick_count(s, c.n);
  c.kbuf = (size_t)c.k;
  desc_append(s, " k=%llu %s%s%s", (unsigned long long)c.k, tu_order_name(c.order), c.with_idx ? ", indices" : "",
              c.k > c.n ? " (illegal)" : "");
  run_compared(s, &c, topk_on);
}

/* A row's length: mostly short, some of the CUDA length classes' edges, rarely the rest.
 * Segmented top-k's (`topk`): its classes' edges (a warp's rows up to 256, long rows past
 * 16384), a warp's lengths among the short ones, and half the rare ones long (16385 to
 * about 66,000) rather than the rest. */
static size_t row_len(seq_t *s, size_t left, int short_rows, int topk) {
  static const size_t edges[] = {31, 32, 33, 192, 193, 256, 257, 1024, 1025, 4096, 4097, 8192, 8193};
  static const size_t topk_edges[] = {255, 256, 257, 2048, 2049, 8192, 8193, 16384, 16385};
  unsigned c = short_rows ? 0 : (unsigned)tu_below(&s->rng, 64);
  size_t len;
  if (c < 24) len = 1 + (size_t)tu_below(&s->rng, 8);
  else if (c < 40) len = 1 + (size_t)tu_below(&s->rng, topk ? 256 : 100);
  else if (c < 52) len = 1 + (size_t)tu_below(&s->rng, 5000);
  else if (c < 63 && topk) len = topk_edges[tu_below(&s->rng, TU_ARRAY_LEN(topk_edges))];
  else if (c < 63) len = edges[tu_below(&s->rng, TU_ARRAY_LEN(edges))];
  else if (topk && tu_below(&s->rng, 2)) len = 16385 + (size_t)tu_below(&s->rng, 50000);
  else len = left;
  return len < left ? len : left;
}

/* A row's rank: the first, the last, or random. */
static uint64_t row_rank(seq_t *s, uint64_t len) {
  switch (tu_below(&s->rng, 4)) {
    case 0: return 0;
    case 1: return len - 1;
    default: return tu_below(&s->rng, len);
  }
}

/* Narrows n U64 entries to U32 in place (front to back: entry i is read before written over). */
static void narrow_u32(unsigned char *p, size_t n) {
  size_t i;
  for (i = 0; i < n; i++) {
    uint64_t x;
    uint32_t y;
    memcpy(&x, p + 8 * i, 8);
    y = (uint32_t)x;
    memcpy(p + 4 * i, &y, 4);
  }
}

/* Rows over the call's n values into H_OFF (U64): the first may start past 0 and the last
 * end before n. Segmented top-k's (`topk`) take its lengths, and may be empty (a row in 8,
 * and now and then rows after the last values, so also rows of no values at all): never
 * more empty rows than others + 4, which H_OFF's 2n + 8 entries hold. Returns the number
 * of rows. */
static size_t build_offsets(seq_t *s, const call_t *c, int topk) {
  uint64_t *off = (uint64_t *)hb(&s->h[H_OFF], (2 * c->n + 8) * 8);
  size_t n = c->n, pos = n ? (size_t)tu_below(&s->rng, n < 8 ? n : 8) : 0, end = n, rows = 0, empty = 0;
  int short_rows = one_in(s, 4);
  if (n - pos > 1 && one_in(s, 4)) end = n - (size_t)tu_below(&s->rng, n - pos < 8 ? n - pos : 8);
  off[0] = pos;
  for (;;) {
    int may_empty = topk && empty < rows - empty + 4;
    size_t len;
    if (pos == end && !(may_empty && one_in(s, 4))) break;
    len = may_empty && (pos == end || one_in(s, 8)) ? 0 : row_len(s, end - pos, short_rows, topk);
    empty += len == 0;
    pos += len;
    off[++rows] = pos;
  }
  return rows;
}

/* The offsets (of ragged rows) and the ks in H_OFF and H_KS as the call's dtypes. */
static void narrow_rows(seq_t *s, const call_t *c) {
  if (c->offs_t == GPUPRIMS_DTYPE_U32 && !c->uniform_len) narrow_u32(s->h[H_OFF].p, c->nrows + 1);
  if (c->ks_t == GPUPRIMS_DTYPE_U32) narrow_u32(s->h[H_KS].p, c->nrows);
}

/* Segmented select's rows and ranks within them (one past its row when `bad`). */
static void build_rows(seq_t *s, call_t *c, int bad) {
  size_t rows = build_offsets(s, c, 0), i;
  uint64_t *off = (uint64_t *)s->h[H_OFF].p, *ks = (uint64_t *)hb(&s->h[H_KS], (rows ? rows : 1) * 8);
  for (i = 0; i < rows; i++) ks[i] = row_rank(s, off[i + 1] - off[i]);
  if (bad && rows) {
    i = (size_t)tu_below(&s->rng, rows);
    ks[i] = off[i + 1] - off[i] + tu_below(&s->rng, 3);
  }
  c->nrows = rows;
  narrow_rows(s, c);
}

static void call_segsel(seq_t *s) {
  call_t c;
  int bad;
  begin_call(s, &c, "segmented_select");
  c.offs_t = tu_below(&s->rng, 2) ? GPUPRIMS_DTYPE_U64 : GPUPRIMS_DTYPE_U32;
  c.ks_t = tu_below(&s->rng, 2) ? GPUPRIMS_DTYPE_U64 : GPUPRIMS_DTYPE_U32;
  c.with_ks = !one_in(s, 3);
  bad = c.with_ks && illegal(s);
  build_rows(s, &c, bad);
  c.cmp = c.d->is_float ? CMP_NAN : CMP_EXACT;
  desc_append(s, " %zu rows, offsets %s, %s%s", c.nrows, tu_dtype_name(c.offs_t),
              c.with_ks ? (c.ks_t == GPUPRIMS_DTYPE_U32 ? "ranks u32" : "ranks u64") : "ks NULL (lower medians)",
              bad && c.nrows ? ", a rank past its row (illegal)" : "");
  run_compared(s, &c, segsel_on);
}

/* A row's k for segmented top-k: none, a warp's (up to 16), a few hundred, the most that
 * a long row's block and a block give (1024, 2048) and one more, the whole row, one past
 * it (a pad), random. */
static uint64_t row_count(seq_t *s, uint64_t len) {
  static const uint64_t caps[] = {1024, 1025, 2048, 2049};
  switch (tu_below(&s->rng, 8)) {
    case 0: return 0;
    case 1: return 1 + tu_below(&s->rng, 16);
    case 2: return 17 + tu_below(&s->rng, 300);
    case 3: return caps[tu_below(&s->rng, TU_ARRAY_LEN(caps))];
    case 4: return len;
    case 5: return len + 1;
    default: return tu_below(&s->rng, len + 1);
  }
}

/* Uniform rows: a length of the classes, n cut to a multiple of it, unless `bad` leaves a
 * remainder (SIZE_MISMATCH). */
static void topk_uniform(seq_t *s, call_t *c, int bad) {
  c->uniform_len = row_len(s, c->n ? c->n : 1, 0, 1);
  c->nrows = c->n / c->uniform_len;
  if (!bad) c->n -= c->n % c->uniform_len;
}

/* Row i's length (before any is made bad). */
static uint64_t topk_row_n(const seq_t *s, const call_t *c, size_t i) {
  const uint64_t *off = (const uint64_t *)s->h[H_OFF].p;
  return c->uniform_len ? c->uniform_len : off[i + 1] - off[i];
}

/* Per-row ks into H_KS, each at most one past its row, or one k for every row drawn
 * against the longest, cut to keep the outputs within n + nrows + 4096 (more would only
 * be pads, which a few test as well); then the outputs' length. */
static void topk_counts(seq_t *s, call_t *c) {
  uint64_t *ks = (uint64_t *)hb(&s->h[H_KS], (c->nrows ? c->nrows : 1) * 8), longest = 0, most;
  size_t i;
  c->kbuf = 0;
  for (i = 0; i < c->nrows; i++) {
    uint64_t len = topk_row_n(s, c, i), k;
    if (len > longest) longest = len;
    if (!c->with_ks) continue;
    k = row_count(s, len);
    ks[i] = k < len + 1 ? k : len + 1;
    c->kbuf += (size_t)ks[i];
  }
  if (c->with_ks) return;
  most = c->nrows ? (c->n + c->nrows + 4096) / c->nrows : UINT64_MAX;
  c->k = row_count(s, longest);
  if (c->k > most) c->k = most;
  c->kbuf = c->nrows * (size_t)c->k;
}

/* A bad ragged row (INVALID_ARGUMENT naming it): row i ends before it starts, or past the
 * values when it starts at 0. Returns its description. */
static const char *break_row(seq_t *s, call_t *c, size_t *row) {
  uint64_t *off = (uint64_t *)s->h[H_OFF].p;
  size_t i = (size_t)tu_below(&s->rng, c->nrows);
  *row = i;
  if (off[i] == 0) {
    off[i + 1] = c->n + 1;
    return "ends past the values";
  }
  off[i + 1] = off[i] - 1;
  return "ends before it starts";
}

static void call_segtopk(seq_t *s) {
  call_t c;
  const char *broken = NULL;
  size_t bad_row = 0;
  int bad;
  begin_call(s, &c, "segmented_topk");
  c.order = tu_below(&s->rng, 2) ? GPUPRIMS_ORDER_DESCENDING : GPUPRIMS_ORDER_ASCENDING;
  c.with_idx = (int)tu_below(&s->rng, 2);
  c.offs_t = tu_below(&s->rng, 2) ? GPUPRIMS_DTYPE_U64 : GPUPRIMS_DTYPE_U32;
  c.ks_t = tu_below(&s->rng, 2) ? GPUPRIMS_DTYPE_U64 : GPUPRIMS_DTYPE_U32;
  c.with_ks = (int)tu_below(&s->rng, 2);
  bad = illegal(s);
  if (one_in(s, 3)) {
    size_t n = c.n;
    topk_uniform(s, &c, bad);
    desc_append(s, " %zu rows of %zu (row_len)", c.nrows, c.uniform_len);
    if (c.n % c.uniform_len) desc_append(s, ", not dividing n (illegal)");
    else if (c.n < n) desc_append(s, " over the first %zu values", c.n);
  } else {
    c.nrows = build_offsets(s, &c, 1);
    desc_append(s, " %zu rows, offsets %s", c.nrows, tu_dtype_name(c.offs_t));
  }
  topk_counts(s, &c);
  if (bad && !c.uniform_len && c.nrows) broken = break_row(s, &c, &bad_row);
  if (broken) desc_append(s, ", row %zu %s (illegal)", bad_row, broken);
  narrow_rows(s, &c);
  if (c.with_ks) desc_append(s, ", ks %s", tu_dtype_name(c.ks_t));
  else desc_append(s, ", k=%llu", (unsigned long long)c.k);
  desc_append(s, " %s%s, %zu results", tu_order_name(c.order), c.with_idx ? ", indices" : "", c.kbuf);
  run_compared(s, &c, segtopk_on);
}

static void call_buffer(seq_t *s) {
  call_t c;
  begin_call(s, &c, "buffer copy+write+read");
  c.dst_len = illegal(s) ? c.n + 1 : c.n;
  c.wcount = (size_t)tu_below(&s->rng, (uint64_t)c.n + 1);
  c.woff = (size_t)tu_below(&s->rng, (uint64_t)(c.n - c.wcount) + 1);
  c.rcount = (size_t)tu_below(&s->rng, (uint64_t)c.n + 1);
  c.roff = (size_t)tu_below(&s->rng, (uint64_t)(c.n - c.rcount) + 1);
  tu_fill_bytes(&s->rng, hb(&s->h[H_VAL], c.wcount * c.d->size), c.wcount * c.d->size);
  desc_append(s, ", write [%zu, %zu), read [%zu, %zu)%s", c.woff, c.woff + c.wcount, c.roff, c.roff + c.rcount,
              c.dst_len != c.n ? ", destination of length n + 1 (illegal)" : "");
  run_compared(s, &c, buffer_on);
}

/* ------------------------------------------------------------------------------------- */
/* Life: a grid per context under test, kept across calls, with its twin on the reference  */
/* ------------------------------------------------------------------------------------- */

static const uint64_t LIFE_DIMS[] = {1, 2, 3, 5, 8, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129, 255, 256, 257, 1000, 1024, 1025};
static const char *const RULES[] = {"B3/S23", "B36/S23", "B2/S", "B3678/S34678", "23/3"};
static const char *const RLES[] = {"x = 3, y = 3\nbo$2bo$3o!", "x = 3, y = 3, rule = B3/S23\nb2o$2o$bo!",
                                   "x = 5, y = 4\nbo2bo$o4b$o3bo$4o!"};
static const uint64_t RLE_W[] = {3, 3, 5}, RLE_H[] = {3, 3, 4};

static void life_free(life_t *L) {
  gpuprims_life_destroy(L->g[0]);
  gpuprims_life_destroy(L->g[1]);
  L->g[0] = L->g[1] = NULL;
}

/* Starts the grid with random cells or a pattern at a random place. */
static void life_fill(seq_t *s, life_t *L) {
  size_t cells = (size_t)(L->w * L->h), i, p = (size_t)tu_below(&s->rng, TU_ARRAY_LEN(RLES));
  unsigned density = 1 + (unsigned)tu_below(&s->rng, 7);
  unsigned char *c;
  int g;
  if (RLE_W[p] <= L->w && RLE_H[p] <= L->h && tu_below(&s->rng, 2)) {
    uint64_t x = tu_below(&s->rng, L->w - RLE_W[p] + 1), y = tu_below(&s->rng, L->h - RLE_H[p] + 1);
    for (g = 0; g < 2; g++) need_ok(s, gpuprims_life_load_rle(L->g[g], RLES[p], x, y), "gpuprims_life_load_rle");
    desc_append(s, ", load_rle pattern %zu at (%llu, %llu)", p, (unsigned long long)x, (unsigned long long)y);
    return;
  }
  c = hb(&s->h[H_TMP], cells);
  for (i = 0; i < cells; i++) c[i] = tu_below(&s->rng, 8) < density;
  for (g = 0; g < 2; g++) need_ok(s, gpuprims_life_write_cells(L->g[g], c), "gpuprims_life_write_cells");
  desc_append(s, ", write_cells (%u/8 alive)", density);
}

static void life_new(seq_t *s, side_t *sd) {
  life_t *L = &sd->life;
  gpuprims_life_boundary b = tu_below(&s->rng, 2) ? GPUPRIMS_LIFE_DEAD : GPUPRIMS_LIFE_TORUS;
  const char *rule = RULES[tu_below(&s->rng, TU_ARRAY_LEN(RULES))];
  life_free(L);
  do {
    L->w = LIFE_DIMS[tu_below(&s->rng, TU_ARRAY_LEN(LIFE_DIMS))];
    L->h = LIFE_DIMS[tu_below(&s->rng, TU_ARRAY_LEN(LIFE_DIMS))];
  } while (L->w * L->h > K.max_n);
  need_ok(s, gpuprims_life_create(sd->ctx, L->w, L->h, b, &L->g[0]), "gpuprims_life_create");
  need_ok(s, gpuprims_life_create(s->ref.ctx, L->w, L->h, b, &L->g[1]), "gpuprims_life_create (reference)");
  need_ok(s, gpuprims_life_set_rule(L->g[0], rule), "gpuprims_life_set_rule");
  need_ok(s, gpuprims_life_set_rule(L->g[1], rule), "gpuprims_life_set_rule (reference)");
  desc_append(s, " new %llux%llu %s %s", (unsigned long long)L->w, (unsigned long long)L->h,
              b == GPUPRIMS_LIFE_DEAD ? "dead edges" : "torus", rule);
  life_fill(s, L);
}

/* Cells and population of the grid under test against the reference's. */
static void life_compare(seq_t *s, life_t *L) {
  size_t cells = (size_t)(L->w * L->h), i;
  unsigned char *got = hb(&s->h[H_GOT], cells), *want = hb(&s->h[H_GOT2], cells);
  uint64_t pop[2] = {~0ull, ~0ull};
  need_ok(s, gpuprims_life_read_cells(L->g[1], want), "gpuprims_life_read_cells (reference)");
  need_ok(s, gpuprims_life_read_cells(L->g[0], got), "gpuprims_life_read_cells");
  tu_count_check_();
  i = tu_first_diff(want, got, 1, cells);
  if (i < cells) {
    seq_fail(s, s->callno, s->desc, "cells: %zu differ; first at (x %zu, y %zu): got %u, expected %u",
             tu_count_diff(want, got, 1, cells), i % (size_t)L->w, i / (size_t)L->w, got[i], want[i]);
    return;
  }
  need_ok(s, gpuprims_life_population(L->g[1], &pop[1]), "gpuprims_life_population (reference)");
  need_ok(s, gpuprims_life_population(L->g[0], &pop[0]), "gpuprims_life_population");
  tu_count_check_();
  if (pop[0] != pop[1])
    seq_fail(s, s->callno, s->desc, "population %llu, expected %llu", (unsigned long long)pop[0],
             (unsigned long long)pop[1]);
}

static void call_life(seq_t *s) {
  side_t *sd = cur_side(s);
  life_t *L = &sd->life;
  uint64_t gens;
  int g;
  describe(s, "life");
  if (!L->g[0] || one_in(s, 8)) {
    life_new(s, sd);
  } else if (one_in(s, 8)) {
    const char *rule = RULES[tu_below(&s->rng, TU_ARRAY_LEN(RULES))];
    for (g = 0; g < 2; g++) need_ok(s, gpuprims_life_set_rule(L->g[g], rule), "gpuprims_life_set_rule");
    desc_append(s, " %llux%llu, set_rule %s", (unsigned long long)L->w, (unsigned long long)L->h, rule);
  } else {
    desc_append(s, " %llux%llu", (unsigned long long)L->w, (unsigned long long)L->h);
  }
  gens = 1 + tu_below(&s->rng, L->w * L->h > 100000 ? 4 : 40);
  desc_append(s, ", step %llu", (unsigned long long)gens);
  need_ok(s, gpuprims_life_step(L->g[1], gens), "gpuprims_life_step (reference)");
  need_ok(s, gpuprims_life_step(L->g[0], gens), "gpuprims_life_step");
  life_compare(s, L);
}

/* ------------------------------------------------------------------------------------- */
/* The sequence                                                                           */
/* ------------------------------------------------------------------------------------- */

typedef struct {
  const char *name;
  unsigned weight;
  void (*fn)(seq_t *);
} kind_t;

static const kind_t KINDS[NUM_KINDS] = {
    {"reduce", 12, call_reduce},   {"reduce_to_buffer", 10, call_reduce_buf},
    {"scan", 14, call_scan},       {"radix_sort", 12, call_radix},
    {"quicksort", 10, call_quick}, {"select_kth", 7, call_select},
    {"select_kth_to_buffer", 6, call_select_buf}, {"topk", 10, call_topk},
    {"segmented_select", 8, call_segsel},         {"segmented_topk", 8, call_segtopk},
    {"life", 5, call_life},                       {"buffer", 6, call_buffer},
};

/* A motif's head: calls that leave state behind (passes, counters, digit look-backs);
 * its short calls: any call (Life keeps a grid of its own); its tail: calls that read
 * a look-back or partition by a scan. */
static const int HEAD_KINDS[] = {K_RADIX, K_QUICK, K_TOPK, K_SEGSEL, K_SEGTOPK, K_SCAN, K_SELECT_BUF};
static const int SHORT_KINDS[] = {K_REDUCE, K_REDUCE_BUF, K_SCAN,   K_RADIX,   K_QUICK, K_SELECT,
                                  K_SELECT_BUF, K_TOPK, K_SEGSEL, K_SEGTOPK, K_BUFFER};
/* segmented top-k: its ks' scan reads a look-back, and rows too big for a block go
 * through the device-wide top-k */
static const int TAIL_KINDS[] = {K_SCAN, K_REDUCE, K_REDUCE_BUF, K_TOPK, K_SEGTOPK, K_QUICK, K_RADIX};

#define DRAW_KIND(s, list) ((list)[tu_below(&(s)->rng, TU_ARRAY_LEN(list))])

/* The kinds GPUPRIMS_SEQ_KINDS names (all when it is unset). */
static int g_kind_on[NUM_KINDS];

/* A kind drawn by weight among those on. */
static int weighted_kind(seq_t *s) {
  unsigned total = 0, x;
  int i;
  for (i = 0; i < NUM_KINDS; i++) total += g_kind_on[i] ? KINDS[i].weight : 0;
  x = (unsigned)tu_below(&s->rng, total);
  for (i = 0; !g_kind_on[i] || x >= KINDS[i].weight; i++) x -= g_kind_on[i] ? KINDS[i].weight : 0;
  return i;
}

/* A motif's kind, or (GPUPRIMS_SEQ_KINDS leaves it out) one drawn among those on: the
 * motifs keep their shape over the kinds asked for. */
static int kind_on(seq_t *s, int kind) { return g_kind_on[kind] ? kind : weighted_kind(s); }

/* GPUPRIMS_SEQ_KINDS="segmented_topk,scan": only those kinds (names as in the summary). */
static void select_kinds(void) {
  const char *p = getenv("GPUPRIMS_SEQ_KINDS");
  int i;
  for (i = 0; i < NUM_KINDS; i++) g_kind_on[i] = !(p && *p);
  if (!(p && *p)) return;
  K.kinds = p;
  while (*p) {
    size_t len = strcspn(p, ", ");
    for (i = 0; len && i < NUM_KINDS; i++)
      if (strlen(KINDS[i].name) == len && strncmp(KINDS[i].name, p, len) == 0) break;
    if (len && i == NUM_KINDS) {
      printf("%s: unknown kind \"%.*s\" in GPUPRIMS_SEQ_KINDS; the kinds:", tu_state.name, (int)len, p);
      for (i = 0; i < NUM_KINDS; i++) printf(" %s", KINDS[i].name);
      printf("\n");
      exit(2);
    }
    if (len) g_kind_on[i] = 1;
    p += len;
    p += strspn(p, ", ");
  }
  for (i = 0; i < NUM_KINDS && !g_kind_on[i]; i++) {
  }
  if (i == NUM_KINDS) TU_FATAL("GPUPRIMS_SEQ_KINDS=\"%s\" names no kind", K.kinds);
}

#define MOTIF_MAX_SHORT 15

/*
 * A motif on a context that has been in use: a head of 1 to 3 long calls, half the time
 * of one kind ("rs": sorting twice, then the tail), no short call a third of the time.
 */
static void random_motif(seq_t *s, motif_t *m) {
  int i, same = (int)tu_below(&s->rng, 2);
  m->head = 1 + (int)tu_below(&s->rng, 3);
  m->len = one_in(s, 3) ? 0 : 1 + (int)tu_below(&s->rng, MOTIF_MAX_SHORT);
  m->head_kind[0] = DRAW_KIND(s, HEAD_KINDS);
  for (i = 1; i < m->head; i++) m->head_kind[i] = same ? m->head_kind[0] : DRAW_KIND(s, HEAD_KINDS);
}

/*
 * A motif on a fresh context (small epochs): one head call, whose kind and number of short
 * calls go through every pair in turn (from a seeded start), so that a few hundred
 * motifs cover them all, where drawing them would leave many out.
 */
static void fresh_motif(seq_t *s, motif_t *m) {
  unsigned long i = s->motifs + s->motif_offset;
  m->head = 1;
  m->len = (int)(i % (MOTIF_MAX_SHORT + 1));
  m->head_kind[0] = HEAD_KINDS[i / (MOTIF_MAX_SHORT + 1) % TU_ARRAY_LEN(HEAD_KINDS)];
}

static void start_motif(seq_t *s) {
  motif_t *m = &s->motif;
  int i;
  if (s->renew)
    fresh_motif(s, m);
  else
    random_motif(s, m);
  m->active = 1;
  m->step = 0;
  m->small = kind_on(s, DRAW_KIND(s, SHORT_KINDS));
  m->tail = kind_on(s, DRAW_KIND(s, TAIL_KINDS));
  for (i = 0; i < m->head; i++) m->head_kind[i] = kind_on(s, m->head_kind[i]);
  s->motifs++;
}

/* After a call: the motif's next step. The fresh variant renews its context a few calls
 * after a motif. */
static void motif_advance(seq_t *s) {
  motif_t *m = &s->motif;
  if (!m->active || ++m->step <= m->head + m->len) return;
  m->active = 0;
  if (s->renew) s->renew_at = s->callno + 1 + tu_below(&s->rng, 4);
}

static int pick_kind(seq_t *s) {
  const motif_t *m = &s->motif;
  if (m->active) {
    if (m->step < m->head) return m->head_kind[m->step];
    return m->step < m->head + m->len ? m->small : m->tail;
  }
  return weighted_kind(s);
}

/* Appends to what the next call's description starts with. */
static void add_event(seq_t *s, const char *fmt, ...) TU_PRINTF(2, 3);
static void add_event(seq_t *s, const char *fmt, ...) {
  size_t len = strlen(s->event);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s->event + len, sizeof s->event - len, fmt, ap);
  va_end(ap);
}

static gpuprims_context *open_ctx(gpuprims_backend b) {
  gpuprims_context *ctx = NULL;
  TU_REQUIRE_OK(gpuprims_context_create(b, 0, &ctx));
  return ctx;
}

/* The fresh variant's new context under test (its Life grid goes with the old one). */
static void renew_context(seq_t *s) {
  side_t *sd = &s->test[0];
  life_free(&sd->life);
  gpuprims_context_destroy(sd->ctx);
  sd->ctx = open_ctx(GPUPRIMS_BACKEND_AUTO);
  add_event(s, "[fresh context]");
}

/* The stream variant: between the caller's stream and the context's own. */
static void switch_stream(seq_t *s, side_t *sd) {
  void *to = sd->on_stream ? NULL : sd->stream->stream;
  need_ok(s, gpuprims_context_set_stream(sd->ctx, to), "gpuprims_context_set_stream");
  sd->on_stream = !sd->on_stream;
  add_event(s, "[now on %s stream]", sd->on_stream ? "the caller's" : "the context's own");
}

/* What the variant does between calls; when to start a motif (every fresh context starts
 * with one). */
static void before_call(seq_t *s) {
  s->cur = s->ntest > 1 ? (int)(s->callno % 2) : 0;
  if (s->test[0].stream && one_in(s, 32)) switch_stream(s, &s->test[0]);
  if (!s->motif.active) {
    if (s->renew && s->callno >= s->renew_at) {
      renew_context(s);
      s->renew_at = ULONG_MAX; /* set again when the motif ends */
      start_motif(s);
    } else if (one_in(s, 8)) {
      start_motif(s);
    }
  }
  if (s->motif.active) add_event(s, "[motif %d/%d]", s->motif.step + 1, s->motif.head + s->motif.len + 1);
}

static void seq_loop(seq_t *s) {
  double start = now_s(), shown = start;
  for (s->callno = 1; s->callno <= s->calls && !s->failed; s->callno++) {
    int kind;
    before_call(s);
    kind = pick_kind(s);
    KINDS[kind].fn(s);
    s->count[kind]++;
    if (s->failed) break;
    motif_advance(s);
    check_due(s, 0);
    if (now_s() - shown >= 20) { /* a long run shows that it is alive */
      shown = now_s();
      if (s->thread >= 0)
        printf("%s: variant %s thread %d: %lu of %lu calls (%.0f s)\n", tu_state.name, s->variant, s->thread,
               s->callno, s->calls, shown - start);
      else
        printf("%s: variant %s: %lu of %lu calls (%.0f s)\n", tu_state.name, s->variant, s->callno, s->calls,
               shown - start);
      fflush(stdout);
    }
  }
  if (s->callno > s->calls) s->callno = s->calls;
  check_due(s, 1);
  drop_pending(s);
}

static uint64_t derive_seed(int vindex, int thread) {
  uint64_t x = K.seed ^ (0x9E3779B97F4A7C15ull * (uint64_t)(vindex + 1)) ^ ((uint64_t)(thread + 1) << 48);
  return tu_splitmix64(&x);
}

static seq_t *seq_new(const char *variant, int vindex, int thread, int ntest, unsigned long calls) {
  seq_t *s = (seq_t *)calloc(1, sizeof(seq_t));
  int i;
  if (!s) TU_FATAL("out of memory");
  s->variant = variant;
  s->thread = thread;
  s->ntest = ntest;
  s->calls = calls;
  s->seed = derive_seed(vindex, thread);
  tu_rng_seed(&s->rng, s->seed);
  s->ref.ctx = open_ctx(GPUPRIMS_BACKEND_HOST);
  s->ref.name = "ref";
  for (i = 0; i < ntest; i++) {
    s->test[i].ctx = open_ctx(GPUPRIMS_BACKEND_AUTO);
    s->test[i].name = i ? "B" : "A";
  }
  return s;
}

static void seq_free(seq_t *s) {
  int i;
  drop_pending(s);
  for (i = 0; i < s->ntest; i++) {
    life_free(&s->test[i].life);
    gpuprims_context_destroy(s->test[i].ctx);
  }
  gpuprims_context_destroy(s->ref.ctx);
  for (i = 0; i < NUM_H; i++) free(s->h[i].p);
  free(s);
}

static void print_summary(const seq_t *s, double secs) {
  int i;
  printf("%s: variant %s", tu_state.name, s->variant);
  if (s->thread >= 0) printf(" thread %d", s->thread);
  printf(": %s after %lu calls in %.1f s (", s->failed ? "FAILED" : "passed", s->callno, secs);
  for (i = 0; i < NUM_KINDS; i++) printf("%s%s %lu", i ? ", " : "", KINDS[i].name, s->count[i]);
  printf("); %lu motifs, %lu read back later, %lu illegal, %lu wrapped buffers\n", s->motifs, s->deferred, s->illegal,
         s->wrapped);
  fflush(stdout);
}

static void run_one(seq_t *s) {
  double t0 = now_s();
  seq_loop(s);
  print_summary(s, now_s() - t0);
}

/* ------------------------------------------------------------------------------------- */
/* Variants                                                                               */
/* ------------------------------------------------------------------------------------- */

static void variant_single(int vi) {
  seq_t *s = seq_new("single", vi, -1, 1, K.calls);
  run_one(s);
  seq_free(s);
}

static void variant_alternate(int vi) {
  seq_t *s = seq_new("alternate", vi, -1, 2, K.calls);
  run_one(s);
  seq_free(s);
}

static void variant_wrapped(int vi) {
  seq_t *s = seq_new("wrapped", vi, -1, 1, K.calls);
  s->test[0].wrap = 1;
  run_one(s);
  seq_free(s);
}

static void variant_stream(int vi) {
  tu_cuda_stream cs;
  char why[256];
  seq_t *s;
  if (!K.cuda) {
    printf("%s: variant stream: skipped (the context under test is not CUDA: no caller's stream)\n", tu_state.name);
    return;
  }
  if (!TU_CHECKF(tu_cuda_stream_create(&cs, 0, why, sizeof why), "variant stream: %s", why)) return;
  s = seq_new("stream", vi, -1, 1, K.calls);
  s->test[0].stream = &cs;
  switch_stream(s, &s->test[0]); /* start on the caller's stream */
  run_one(s);
  /* the stream must outlive the work issued on it: back to the context's own first */
  if (s->test[0].on_stream) TU_EXPECT_OK(gpuprims_context_set_stream(s->test[0].ctx, NULL));
  TU_EXPECT_OK(gpuprims_context_synchronize(s->test[0].ctx));
  seq_free(s);
  TU_CHECKF(tu_cuda_stream_destroy(&cs), "variant stream: synchronizing or destroying the caller's stream failed");
}

static void *thread_main(void *arg) {
  run_one((seq_t *)arg);
  return NULL;
}

static void variant_threads(int vi) {
  seq_t *s[2];
  pthread_t th[2];
  int i;
  /* contexts are made here, so that the threads only run their sequences */
  for (i = 0; i < 2; i++) s[i] = seq_new("threads", vi, i, 1, (K.calls + 1) / 2);
  for (i = 0; i < 2; i++)
    if (pthread_create(&th[i], NULL, thread_main, s[i]) != 0) TU_FATAL("pthread_create failed");
  for (i = 0; i < 2; i++) pthread_join(th[i], NULL);
  for (i = 0; i < 2; i++) seq_free(s[i]);
}

/* Twice the calls of the others: most are short, and every motif needs a context. */
static void variant_fresh(int vi) {
  seq_t *s = seq_new("fresh", vi, -1, 1, 2 * K.calls);
  s->renew = 1;
  s->renew_at = 1;
  s->motif_offset = tu_below(&s->rng, (MOTIF_MAX_SHORT + 1) * TU_ARRAY_LEN(HEAD_KINDS));
  run_one(s);
  seq_free(s);
}

typedef struct {
  const char *name;
  void (*run)(int vindex);
} variant_t;

static const variant_t VARIANTS[] = {
    {"single", variant_single}, {"alternate", variant_alternate}, {"wrapped", variant_wrapped},
    {"stream", variant_stream}, {"threads", variant_threads},     {"fresh", variant_fresh},
};
#define NUM_VARIANTS ((int)TU_ARRAY_LEN(VARIANTS))

static int variant_index(const char *name, size_t len) {
  int i;
  for (i = 0; i < NUM_VARIANTS; i++)
    if (strlen(VARIANTS[i].name) == len && strncmp(VARIANTS[i].name, name, len) == 0) return i;
  printf("%s: unknown variant \"%.*s\"; the variants:", tu_state.name, (int)len, name);
  for (i = 0; i < NUM_VARIANTS; i++) printf(" %s", VARIANTS[i].name);
  printf("\n");
  exit(2);
}

/* The variants asked for: the arguments, else GPUPRIMS_SEQ_VARIANTS (comma separated),
 * else all. */
static void select_variants(int argc, char **argv, int *on) {
  const char *env = getenv("GPUPRIMS_SEQ_VARIANTS");
  int i;
  for (i = 0; i < NUM_VARIANTS; i++) on[i] = argc < 2 && !(env && *env);
  for (i = 1; i < argc; i++) on[variant_index(argv[i], strlen(argv[i]))] = 1;
  if (argc < 2 && env && *env) {
    const char *p = env;
    while (*p) {
      size_t len = strcspn(p, ", ");
      if (len) on[variant_index(p, len)] = 1;
      p += len;
      p += strspn(p, ", ");
    }
  }
}

int main(int argc, char **argv) {
  int on[NUM_VARIANTS], i;
  gpuprims_context *ctx;
  double t0 = now_s();
  K.seed = tu_init("test_sequences");
  read_knobs(argv[0]);
  select_variants(argc, argv, on);
  select_kinds();
  ctx = tu_open_context(); /* exits 77 when GPUPRIMS_BACKEND=cuda has no device */
  K.cuda = tu_is_cuda(ctx);
  gpuprims_context_destroy(ctx);
  printf("%s: %lu calls per variant, sizes up to %zu (GPUPRIMS_SEQ_CALLS, GPUPRIMS_SEQ_MAX_LOG2=%d)\n",
         tu_state.name, K.calls, K.max_n, K.max_log2);
  fflush(stdout);
  for (i = 0; i < NUM_VARIANTS; i++)
    if (on[i]) VARIANTS[i].run(i);
  printf("%s: %.1f s in all\n", tu_state.name, now_s() - t0);
  return tu_finish();
}
