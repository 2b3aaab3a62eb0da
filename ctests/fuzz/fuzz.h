/*
 * fuzz.h: what the parts of fuzz_abi share (see fuzz_abi.c for what the fuzzer does).
 *
 *   fuzz_log.c      the ring log of calls, status checks, failure reports, progress
 *   fuzz_pool.c     the pool of live handles and their shadows; hostile handle values
 *   fuzz_data.c     random data, and the references the results are checked against
 *   fuzz_ops_buf.c  calls on contexts, buffers and the info functions
 *   fuzz_ops_prim.c calls of the primitives (reduce ... quicksort)
 *   fuzz_ops_life.c calls on Life grids, with a reference step
 *   fuzz_ops_multi.c  communicators and groups, and their operations over ranks
 *   fuzz_life_text.c  rule and RLE texts: valid, malformed, mutated
 */
#ifndef GPUPRIMS_FUZZ_H
#define GPUPRIMS_FUZZ_H

#include "../test_util.h"

#include <stdarg.h>

#define FZ_MAX_CTX 16   /* context records (live handles, or destroyed ones that buffers, grids,
                           comms and groups keep alive) */
#define FZ_LIVE_CTX 3   /* live context handles at most, leaving out those of live groups */
#define FZ_MAX_BUF 40   /* live buffers */
#define FZ_MAX_GRID 6   /* live Life grids */
#define FZ_MAX_COMM 3   /* live communicators (one rank each) */
#define FZ_MAX_GROUP 2  /* live groups */
#define FZ_MAX_RANKS 3  /* devices of a group */
#define FZ_MAX_STALE 16 /* destroyed handles remembered, per kind */
#define FZ_DESC 640     /* one call's description */

/* What out-parameters hold before a call: no length, count or dtype the library could
 * write (a text of 4242 bytes, say, is a real length). */
#define FZ_UNSET ((size_t)UINT64_C(0xA5A5A5A5A5A5A5A5))
#define FZ_UNSET32 0xA5A5A5A5u

/* A status as a bit of a mask of allowed statuses. */
#define FZ_S(name) (1u << GPUPRIMS_STATUS_##name)
#define FZ_OK FZ_S(OK)

/* Handle kinds. */
enum { FZ_KCTX = TU_KCTX, FZ_KBUF = TU_KBUF, FZ_KGRID = TU_KGRID, FZ_KCOMM = TU_KCOMM, FZ_KGROUP = TU_KGROUP,
       FZ_KINDS = TU_KINDS };

/* What a handle argument is. */
enum { FZ_LIVE, FZ_NULL, FZ_STALE, FZ_WRONG_KIND, FZ_FORGED, FZ_GARBAGE };

/* A handle argument: its value, its class, the pool slot when live, and its words. */
typedef struct {
  void *p;
  int cls;
  int idx;
  char what[72];
} fz_h;

typedef struct {
  gpuprims_context *h;
  int used;       /* the record is in use (handle live, or buffers/grids still refer to it) */
  int live;       /* the handle is live */
  int id;         /* for the log: ctx#id */
  gpuprims_backend backend;
  int32_t device; /* the ordinal it was opened with (CUDA: its device) */
  int group;      /* 1 + the live group whose device's context it is (from gpuprims_group_context), else 0 */
} fz_ctx;

/* A buffer. Its contents live in the shadow of its owner (itself, unless it is a
 * wrap_device view of another buffer's memory: CUDA only), at byte offset off. */
typedef struct {
  gpuprims_buffer *h;
  int live;
  int id;
  int ctx;        /* index into fz.ctx */
  gpuprims_dtype dt;
  size_t len, es;
  int owner;      /* index into fz.buf of the buffer that owns the memory */
  size_t off;     /* bytes into the owner's memory */
  unsigned char *mem; /* the owner's shadow (owners only) */
  size_t nbytes;      /* its size (owners only) */
  uintptr_t dptr;     /* device address of the owner's memory, 0 when not known */
  unsigned char *wrapped; /* wrap_host: the caller's memory the library works on, freed after the buffer */
  int pinned;         /* the current fuzz call uses it: not to be evicted */
} fz_buf;

typedef struct {
  gpuprims_life_grid *h;
  int live;
  int id;
  int ctx;
  uint64_t w, hgt;
  unsigned bnd;
  uint16_t birth, survive;
  uint64_t gen;
  unsigned char *cells; /* w * hgt, 0 or 1 */
} fz_grid;

/* A communicator of one rank (rank 0 of 1) on context record ctx. */
typedef struct {
  gpuprims_comm *h;
  int live;
  int id;
  int ctx;
} fz_comm;

/* A group of n devices; device i's context is record ctx[i] (a handle of its own from
 * gpuprims_group_context, which outlives the group unless destroyed). */
typedef struct {
  gpuprims_group *h;
  int live;
  int id;
  int n;
  int ctx[FZ_MAX_RANKS];
} fz_group;

typedef struct {
  tu_rng rng;
  uint64_t seed;
  int auto_cuda;            /* AUTO opens CUDA contexts in this run */
  fz_ctx ctx[FZ_MAX_CTX];
  fz_buf buf[FZ_MAX_BUF];
  fz_grid grid[FZ_MAX_GRID];
  fz_comm comm[FZ_MAX_COMM];
  fz_group group[FZ_MAX_GROUP];
  void *stale[FZ_KINDS][FZ_MAX_STALE];
  int nstale[FZ_KINDS];
  int next_id;
  unsigned long op;         /* the fuzz call being made (0-based) */
  unsigned long lib_calls;  /* every library call, checks included */
  unsigned long status_seen[16];
  unsigned long unchecked_sums; /* float sums whose values could overflow: not compared */
  unsigned long checked_results;
  unsigned oom_tries;        /* sizes that reach the allocator (each one an ASan warning) */
  int trace;                /* GPUPRIMS_FUZZ_TRACE=1: print every call */
} fz_state_t;

extern fz_state_t fz;

/* ---- RNG ---- */
static inline uint64_t fz_below(uint64_t n) { return tu_below(&fz.rng, n); }
static inline int fz_pct(unsigned p) { return tu_below(&fz.rng, 100) < p; }
static inline uint64_t fz_range(uint64_t lo, uint64_t hi) { return lo + tu_below(&fz.rng, hi - lo + 1); }

/* ---- fuzz_log.c ---- */
void fz_log_init(void);
/* Starts the log entry of a library call: its description in words. */
void fz_call(const char *fmt, ...) TU_PRINTF(1, 2);
/* Ends it: records the status, checks it is in `allowed` (a mask of FZ_S bits) and that a
 * failure left a message naming `fn`. Returns s. */
gpuprims_status fz_done(gpuprims_status s, unsigned allowed);
/* A call that returns nothing (destroy, info): ends the entry with a note. */
void fz_done_void(const char *note);
/* A check failed: prints the seed, the call, the log; exits 1. */
TU_NORETURN void fz_fail(const char *fmt, ...) TU_PRINTF(1, 2);
/* Names of the statuses in a mask, for messages. */
void fz_mask_names(unsigned mask, char *out, size_t len);
void fz_progress(double elapsed, int final);
void fz_install_crash_handlers(void);

/* ---- fuzz_pool.c ---- */
void fz_pool_init(void);
void fz_pool_teardown(void);
int fz_new_id(void);
int fz_main_ctx(void);                  /* a live context, always there */
int fz_pick_live_ctx(void);
int fz_pick_live_buf(void);             /* -1 when none */
int fz_pick_live_grid(void);            /* -1 when none */
fz_h fz_live_ctx(int c);
fz_h fz_live_buf(int b);
fz_h fz_live_grid(int g);
fz_h fz_hostile(int kind);              /* NULL, stale, wrong kind, forged or garbage */
void fz_destroy_as(int kind, void *h, const char *what); /* gpuprims_<kind>_destroy(h), logged (ended by the caller) */
/* After a create: on failure the out-parameter (unless NULL was passed) still holds
 * TU_SENTINEL_PTR, on OK a handle. Returns whether the call was OK. */
int fz_created(gpuprims_status s, int no_out, const void *out, const char *fn);
fz_h fz_maybe_hostile(int kind, fz_h live, unsigned pct);
unsigned fz_handle_fault(const fz_h *a, int optional);
void fz_remember_stale(int kind, void *p);
int fz_ctx_add(gpuprims_context *h, int32_t device); /* records a new live context (queries its backend) */
void fz_ctx_release_if_unused(int c);
void fz_ctx_destroy(int c);             /* destroys the handle, logged; the record stays while used */
/* Room for `records` more context records, and (ordinary) for one more live context
 * outside groups: destroys contexts, and what keeps destroyed ones' records, as needed. */
void fz_ctx_room(int records, int ordinary);
int fz_pick_live(int kind);             /* a live record of `kind`, -1 when none */
int fz_free_slot(int kind);             /* a free comm or group record (destroys one when all are taken) */
fz_h fz_live_comm(int m);
fz_h fz_live_group(int g);
void fz_comm_destroy(int m);            /* logged */
void fz_group_destroy(int g);           /* logged; its contexts' handles stay */
int fz_buf_add(gpuprims_buffer *h, int ctx, gpuprims_dtype dt, size_t len, int owner, size_t off);
void fz_buf_forget(int b);              /* after the handle was destroyed */
void fz_buf_destroy(int b);             /* destroys (its views first), logged */
int fz_grid_slot(void);                 /* a free grid slot (destroys one when full) */
void fz_grid_destroy(int g);
int fz_buf_room(void);                  /* a free buffer slot (destroys one when full) */
int fz_pin(int b);                      /* marks it used by the current call; returns b */
void fz_unpin_all(void);
unsigned char *fz_shadow(int b);        /* the buffer's contents as the model has them */
int fz_ctx_is_cuda(int c);
int fz_same_ctx(int a, int b);          /* the buffers' contexts are the same */
int fz_overlap(int a, int b);           /* the buffers share memory (or are one buffer) */
int fz_same_range(int a, int b);
/* Checks: read back and compare with the shadow / adopt what the library has. */
void fz_verify_buf(int b, const char *why);
void fz_verify_all(const char *why);
void fz_read_into(int b, void *dst);    /* whole buffer, harness call */
/* A live buffer of context c, dtype t, length n, other than the ones in `avoid`
 * (n_avoid of them): found in the pool or made (buffer_create + contents). */
int fz_find_or_make(int c, gpuprims_dtype t, size_t n, const int *avoid, int n_avoid);
int fz_make_buf(int c, gpuprims_dtype t, size_t n, const void *src); /* harness from_host */

/* ---- fuzz_data.c ---- */
const tu_dtype_info *fz_rand_dtype(void);
gpuprims_dtype fz_bad_dtype(void);
uint32_t fz_bad_enum(void);
size_t fz_rand_len(void);
size_t fz_huge_len(size_t es);
void fz_fill(gpuprims_dtype t, void *p, size_t n);
void fz_fill_index(gpuprims_dtype t, void *p, size_t n, uint64_t lim);
const char *fz_op_name(gpuprims_op op);
/* Float SUM of n elements whose result is fixed up to rounding (no partial sum can overflow). */
int fz_fsum_checkable(gpuprims_dtype t, const void *x, size_t n);
int fz_has_nan(gpuprims_dtype t, const void *x, size_t n);
/* Equal bits, or (nan_any) both NaN. */
int fz_same_elem(gpuprims_dtype t, const void *a, const void *b, int nan_any);
/* The element of rank k of x[0..n) in ascending total order, into out (es bytes). */
void fz_rank_ref(gpuprims_dtype t, const void *x, size_t n, size_t k, void *out);
void fz_fmt_elems(gpuprims_dtype t, const void *p, size_t n, char *out, size_t len);
uint64_t fz_get_index(gpuprims_dtype t, const void *p, size_t i);

/* ---- fuzz_ops_prim.c: what the multi-rank ops share with the one-context ones ---- */
uint32_t fz_pick_enum(uint32_t n_valid, unsigned bad_pct, int *bad); /* a valid value, or (bad_pct %) an unknown one */
uint64_t fz_pick_rank(size_t n, int inclusive_end);                  /* mostly below n (or up to n), else past it */
/* An output buffer of context c, dtype t, length n sharing no memory with the `avoid`
 * buffers (mostly), else any live buffer; pinned. -1 when none. */
int fz_pick_out(int c, gpuprims_dtype t, size_t n, const int *avoid, int n_avoid);
fz_h fz_opt_buf_arg(int b, unsigned hostile_pct);     /* b's handle (hostile now and then); NULL when b < 0 */
unsigned fz_ctx_fault(const fz_h *ca, int c, const fz_h *ba, int b); /* CONTEXT_MISMATCH: both live, b not of c */
/* The faults of a call's buffers as each primitive checks them, against the call's
 * context argument ca (record c; a comm or group's handle and a rank's context for the
 * multi-rank calls): handles, contexts, dtypes, lengths, shared memory. */
unsigned fz_one_out_faults(const fz_h *ca, int c, const fz_h *ia, int in, const fz_h *oa, int out);
unsigned fz_scan_faults(const fz_h *ca, int c, const fz_h *ia, int in, const fz_h *oa, int out);
unsigned fz_sort_faults(const fz_h *ca, int c, const fz_h *ka, int keys, const fz_h *va, int vals);
unsigned fz_topk_faults(const fz_h *ca, int c, const fz_h *ia, int in, uint64_t k, uint64_t limit, const fz_h *va,
                        int vals, const fz_h *xa, int idx);
/* Results against the references (fn, what: the call, for messages; ranks: the ranks whose
 * partials a float sum combined, 1 for one context). */
void fz_check_reduce(gpuprims_dtype t, gpuprims_op op, const void *in, size_t n, int ranks, const void *got,
                     const char *fn);
void fz_check_rank(gpuprims_dtype t, const void *x, size_t n, size_t k, const void *got, const char *what);
void fz_check_scan(gpuprims_dtype t, gpuprims_op op, gpuprims_scan_mode mode, const void *x, size_t n, int ranks,
                   const void *got, const char *fn);
void fz_check_topk(gpuprims_dtype t, const unsigned char *x, size_t n, uint64_t k, gpuprims_order order, int vals, int idx,
                   const char *fn);

/* ---- op families ---- */
void fz_op_context_create(void);
void fz_op_context_destroy(void);
void fz_op_context_query(void);
void fz_op_context_misc(void);
void fz_op_buffer_create(void);
void fz_op_buffer_from_host(void);
void fz_op_buffer_wrap(void);
void fz_op_buffer_wrap_host(void);
void fz_op_buffer_destroy(void);
void fz_op_buffer_query(void);
void fz_op_buffer_write(void);
void fz_op_buffer_read(void);
void fz_op_buffer_copy(void);
void fz_op_info(void);
const char *fz_backend_words(gpuprims_backend b);
void fz_op_fault(void);
void fz_destroy_hostile(int kind);
void fz_op_reduce(void);
void fz_op_reduce_to_buffer(void);
void fz_op_scan(void);
void fz_op_select_kth(void);
void fz_op_select_kth_to_buffer(void);
void fz_op_topk(void);
void fz_op_segmented_select(void);
void fz_op_segmented_topk(void);
void fz_op_sort(void);
void fz_op_comm_create(void);
void fz_op_comm_destroy(void);
void fz_op_comm_query(void);
void fz_op_group_create(void);
void fz_op_group_destroy(void);
void fz_op_group_query(void);
void fz_op_multi_reduce(void);
void fz_op_multi_scan(void);
void fz_op_multi_sort(void);
void fz_op_multi_select(void);
void fz_op_multi_topk(void);
void fz_op_life_create(void);
void fz_op_life_destroy(void);
void fz_op_life_rule(void);
void fz_op_life_cells(void);
void fz_op_life_rle_load(void);
void fz_op_life_rle_save(void);
void fz_op_life_step(void);
void fz_op_life_query(void);
void fz_verify_grid(int g, const char *why);

/* ---- fuzz_life_text.c ---- */
/* Rule texts: *kind 0 valid (the rule is birth/survive), 1 malformed, 2 unknown. */
void fz_rule_text(char *out, size_t len, uint16_t *birth, uint16_t *survive, int *kind);
void fz_rule_canon(uint16_t birth, uint16_t survive, char *out, size_t len);
int fz_rule_parse_canon(const char *s, uint16_t *birth, uint16_t *survive);
/* An RLE text of the pw x ph pattern `cells` with a header box bw x bh (>= the pattern's
 * extent), and a rule when has_rule. Malloc'd. */
char *fz_rle_text(uint64_t bw, uint64_t bh, const unsigned char *cells, uint64_t pw, uint64_t ph, int has_rule,
                  uint16_t birth, uint16_t survive);
/* Spoils a valid RLE text (header box bw x bh; has_runs: its body has a 'b' or 'o') so
 * that it must be PARSE_ERROR (*certain = 1), or mutates it at random (*certain = 0).
 * Returns a malloc'd text; how: what was done, in words. */
char *fz_rle_spoil(const char *text, uint64_t bw, uint64_t bh, int has_runs, int *certain, char *how, size_t how_len);

#endif /* GPUPRIMS_FUZZ_H */
