/*
 * fuzz_ops_buf.c: calls on contexts and buffers, and the info functions. Each op picks
 * its arguments (mostly valid, some hostile), works out from the model which statuses
 * the call may return (OK when nothing is wrong, else the status of one of the faults),
 * makes the call and checks the status, the out-parameters (written on OK, untouched
 * on failure) and the buffers it may write (right on OK, untouched on failure).
 */
#include "fuzz.h"

#define POISON 0xC3

/* An out-parameter: a real one, or NULL now and then. */
static int null_out(void) { return fz_pct(6); }

/* Host bytes the library must not have written: all `n` of them still POISON? */
static size_t first_written(const unsigned char *p, size_t n) {
  size_t i;
  for (i = 0; i < n; i++)
    if (p[i] != POISON) return i;
  return n;
}

/* ------------------------------------------------------------------------------------- */
/* Contexts                                                                               */
/* ------------------------------------------------------------------------------------- */

const char *fz_backend_words(gpuprims_backend b) {
  static char buf[32];
  if (b <= GPUPRIMS_BACKEND_HOST) return tu_backend_name(b);
  snprintf(buf, sizeof buf, "(backend)%lu", (unsigned long)b);
  return buf;
}

void fz_op_context_create(void) {
  static const int32_t odd_devices[] = {1, 7, -1, INT32_MIN, INT32_MAX};
  unsigned r = (unsigned)fz_below(100), faults = 0, allowed;
  gpuprims_backend be = r < 40 ? GPUPRIMS_BACKEND_AUTO : r < 75 ? GPUPRIMS_BACKEND_HOST
                      : r < 85 ? GPUPRIMS_BACKEND_CUDA : fz_bad_enum();
  int32_t dev = fz_pct(85) ? 0 : odd_devices[fz_below(TU_ARRAY_LEN(odd_devices))];
  int no_out = null_out();
  gpuprims_context *out = TU_SENTINEL_PTR(gpuprims_context);
  gpuprims_status s;
  if (no_out) faults |= FZ_S(NULL_ARGUMENT);
  if (be > GPUPRIMS_BACKEND_HOST || dev < 0) faults |= FZ_S(INVALID_ARGUMENT);
  if (faults) {
    allowed = faults;
  } else if (be == GPUPRIMS_BACKEND_HOST || (be == GPUPRIMS_BACKEND_AUTO && (dev == 0 || !fz.auto_cuda))) {
    allowed = FZ_OK;
  } else if (be == GPUPRIMS_BACKEND_CUDA && fz.auto_cuda && dev == 0) {
    allowed = FZ_OK;
  } else { /* CUDA without a device here, or another device ordinal */
    allowed = FZ_OK | FZ_S(NO_DEVICE) | (dev ? FZ_S(INVALID_ARGUMENT) : 0);
  }
  if (allowed & FZ_OK) fz_ctx_room(1, 1);
  fz_call("gpuprims_context_create(%s, %ld, %s)", fz_backend_words(be), (long)dev, no_out ? "NULL" : "&out");
  s = fz_done(gpuprims_context_create(be, dev, no_out ? NULL : &out), allowed);
  if (s == GPUPRIMS_STATUS_OK) {
    if (out == NULL || out == TU_SENTINEL_PTR(gpuprims_context)) fz_fail("context_create said OK but wrote %p", (void *)out);
    fz_ctx_add(out, dev);
  } else if (!no_out && out != TU_SENTINEL_PTR(gpuprims_context)) {
    fz_fail("a failed context_create wrote its out-parameter (%p)", (void *)out);
  }
}

void fz_op_context_destroy(void) {
  int c = fz_pick_live_ctx(), live = 0, i;
  for (i = 0; i < FZ_MAX_CTX; i++) live += fz.ctx[i].live;
  if (live > 1 && fz_pct(60)) {
    fz_ctx_destroy(c);
    return;
  }
  fz_destroy_hostile(FZ_KCTX);
}

static void op_context_backend(int c, const fz_h *a, unsigned faults) {
  gpuprims_backend out = 0xBADu;
  int no_out = null_out();
  gpuprims_status s;
  if (no_out) faults |= FZ_S(NULL_ARGUMENT);
  fz_call("gpuprims_context_backend(%s, %s)", a->what, no_out ? "NULL" : "&out");
  s = fz_done(gpuprims_context_backend((gpuprims_context *)a->p, no_out ? NULL : &out), faults ? faults : FZ_OK);
  if (s == GPUPRIMS_STATUS_OK && out != fz.ctx[c].backend)
    fz_fail("context_backend wrote %lu, the context is %s", (unsigned long)out, tu_backend_name(fz.ctx[c].backend));
  if (s != GPUPRIMS_STATUS_OK && out != 0xBADu) fz_fail("a failed context_backend wrote %lu", (unsigned long)out);
}

/* A text output of at most len bytes with the NUL into buf[128] (poisoned), and its
 * full length in needed: checks what was written and what was not. */
static void check_text_out(const char *fn, const unsigned char *buf, size_t len, int buf_null, size_t needed,
                           int needed_null) {
  size_t n, i;
  if (!needed_null && (needed == FZ_UNSET || needed == 0)) fz_fail("%s said OK, needed is %zu", fn, needed);
  if (buf_null || len == 0) {
    if (first_written(buf, 128) < 128) fz_fail("%s with len 0 wrote into buf", fn);
    return;
  }
  for (n = 0; n < len && buf[n] != '\0'; n++) {
  }
  if (n == len) fz_fail("%s wrote no NUL within len %zu", fn, len);
  if (!needed_null && n != (needed < len - 1 ? needed : len - 1))
    fz_fail("%s wrote %zu bytes, full length %zu, len %zu", fn, n, needed, len);
  for (i = len; i < 128; i++)
    if (buf[i] != POISON) fz_fail("%s wrote byte %zu, past len %zu", fn, i, len);
}

static void op_device_name(int c, const fz_h *a, unsigned faults) {
  unsigned char buf[128];
  size_t len = (size_t)fz_below(97), needed = FZ_UNSET;
  int buf_null = fz_pct(10), needed_null = fz_pct(20);
  gpuprims_status s;
  if (buf_null && len && fz_pct(50)) len = 0;
  if (buf_null && len) faults |= FZ_S(NULL_ARGUMENT);
  memset(buf, POISON, sizeof buf);
  fz_call("gpuprims_context_device_name(%s, %s, %zu, %s)", a->what, buf_null ? "NULL" : "buf", len,
          needed_null ? "NULL" : "&needed");
  s = fz_done(gpuprims_context_device_name((gpuprims_context *)a->p, buf_null ? NULL : (char *)buf, len,
                                            needed_null ? NULL : &needed),
              faults ? faults : FZ_OK);
  if (s != GPUPRIMS_STATUS_OK) {
    if (needed != FZ_UNSET || first_written(buf, sizeof buf) < sizeof buf) fz_fail("a failed device_name wrote its outputs");
    return;
  }
  check_text_out("context_device_name", buf, len, buf_null, needed, needed_null);
  if (!buf_null && len > 4 && fz.ctx[c].backend == GPUPRIMS_BACKEND_HOST && strncmp((char *)buf, "host", 4) != 0)
    fz_fail("a host context's device name is \"%s\"", (char *)buf);
}

/* context_backend and context_device_name. */
void fz_op_context_query(void) {
  int c = fz_pick_live_ctx();
  fz_h a = fz_maybe_hostile(FZ_KCTX, fz_live_ctx(c), 12);
  unsigned faults = fz_handle_fault(&a, 0);
  if (fz_pct(40))
    op_context_backend(c, &a, faults);
  else
    op_device_name(c, &a, faults);
}

/* set_stream(NULL), synchronize, precompile: OK on a live context. */
void fz_op_context_misc(void) {
  static int precompiled[FZ_MAX_CTX + 1];
  int c = fz_pick_live_ctx();
  fz_h a = fz_maybe_hostile(FZ_KCTX, fz_live_ctx(c), 15);
  unsigned faults = fz_handle_fault(&a, 0);
  unsigned r = (unsigned)fz_below(100);
  if (r < 40) {
    fz_call("gpuprims_context_set_stream(%s, NULL)", a.what);
    fz_done(gpuprims_context_set_stream((gpuprims_context *)a.p, NULL), faults ? faults : FZ_OK);
  } else if (r < 90 || (a.cls == FZ_LIVE && fz_ctx_is_cuda(c) && precompiled[c])) {
    fz_call("gpuprims_context_synchronize(%s)", a.what);
    fz_done(gpuprims_context_synchronize((gpuprims_context *)a.p), faults ? faults : FZ_OK);
  } else {
    /* on CUDA a cold precompile compiles every module: once a context record */
    if (a.cls == FZ_LIVE) precompiled[c] = 1;
    fz_call("gpuprims_context_precompile(%s)", a.what);
    fz_done(gpuprims_context_precompile((gpuprims_context *)a.p), faults ? faults : FZ_OK);
  }
}

/* ------------------------------------------------------------------------------------- */
/* Making buffers                                                                         */
/* ------------------------------------------------------------------------------------- */

/* A dtype: valid, or (pct percent) not a dtype. */
static gpuprims_dtype pick_dtype(unsigned pct, int *bad) {
  *bad = fz_pct(pct);
  return *bad ? fz_bad_dtype() : fz_rand_dtype()->id;
}

static const char *dtype_words(gpuprims_dtype t, int bad) {
  static char buf[32];
  if (!bad) return tu_dtype_name(t);
  snprintf(buf, sizeof buf, "(dtype)%lu", (unsigned long)t);
  return buf;
}

void fz_op_buffer_create(void) {
  int c = fz_pick_live_ctx(), bad_t, huge = fz_pct(6), no_out = null_out(), b;
  fz_h a = fz_maybe_hostile(FZ_KCTX, fz_live_ctx(c), 8);
  gpuprims_dtype t = pick_dtype(6, &bad_t);
  size_t len = huge ? fz_huge_len(bad_t ? 1 : tu_dtype_size(t)) : fz_rand_len();
  unsigned faults = fz_handle_fault(&a, 0);
  gpuprims_buffer *out = TU_SENTINEL_PTR(gpuprims_buffer);
  gpuprims_status s;
  if (bad_t) faults |= FZ_S(INVALID_ARGUMENT);
  if (no_out) faults |= FZ_S(NULL_ARGUMENT);
  if (huge) faults |= FZ_S(INVALID_ARGUMENT) | FZ_S(OUT_OF_MEMORY);
  if (!faults) fz_buf_room();
  fz_call("gpuprims_buffer_create(%s, %s, %zu, %s)", a.what, dtype_words(t, bad_t), len, no_out ? "NULL" : "&out");
  s = fz_done(gpuprims_buffer_create((gpuprims_context *)a.p, t, len, no_out ? NULL : &out), faults ? faults : FZ_OK);
  if (s != GPUPRIMS_STATUS_OK) {
    if (!no_out && out != TU_SENTINEL_PTR(gpuprims_buffer)) fz_fail("a failed buffer_create wrote its out-parameter");
    return;
  }
  if (out == NULL || out == TU_SENTINEL_PTR(gpuprims_buffer)) fz_fail("buffer_create said OK but wrote %p", (void *)out);
  b = fz_buf_add(out, c, t, len, -1, 0);
  fz_read_into(b, fz.buf[b].mem); /* contents unspecified: the model takes what is there */
}

void fz_op_buffer_from_host(void) {
  int c = fz_pick_live_ctx(), bad_t, huge = fz_pct(5), no_out = null_out(), no_src = fz_pct(6), b;
  fz_h a = fz_maybe_hostile(FZ_KCTX, fz_live_ctx(c), 8);
  gpuprims_dtype t = pick_dtype(6, &bad_t);
  size_t es = bad_t ? 1 : tu_dtype_size(t);
  size_t len = huge ? fz_huge_len(es) : fz_rand_len();
  unsigned faults = fz_handle_fault(&a, 0);
  unsigned char *src = (unsigned char *)tu_xmalloc(huge ? 64 : len * es + 1);
  gpuprims_buffer *out = TU_SENTINEL_PTR(gpuprims_buffer);
  gpuprims_status s;
  if (!huge && !bad_t) fz_fill(t, src, len);
  if (bad_t) faults |= FZ_S(INVALID_ARGUMENT);
  if (no_out) faults |= FZ_S(NULL_ARGUMENT);
  if (no_src && len > 0) faults |= FZ_S(NULL_ARGUMENT);
  if (huge) faults |= FZ_S(INVALID_ARGUMENT) | FZ_S(OUT_OF_MEMORY); /* src: 64 bytes, never to be read */
  if (!faults) fz_buf_room();
  fz_call("gpuprims_buffer_from_host(%s, %s, %s, %zu, %s)", a.what, dtype_words(t, bad_t), no_src ? "NULL" : "src",
          len, no_out ? "NULL" : "&out");
  s = fz_done(gpuprims_buffer_from_host((gpuprims_context *)a.p, t, no_src ? NULL : src, len, no_out ? NULL : &out),
              faults ? faults : FZ_OK);
  if (s != GPUPRIMS_STATUS_OK) {
    if (!no_out && out != TU_SENTINEL_PTR(gpuprims_buffer)) fz_fail("a failed buffer_from_host wrote its out-parameter");
  } else {
    if (out == NULL || out == TU_SENTINEL_PTR(gpuprims_buffer)) fz_fail("buffer_from_host said OK but wrote %p", (void *)out);
    b = fz_buf_add(out, c, t, len, -1, 0);
    if (len) memcpy(fz.buf[b].mem, src, len * es);
    if (fz_pct(50)) fz_verify_buf(b, "after buffer_from_host");
  }
  free(src);
}

/* The device address of an owned CUDA buffer (buffer_device_ptr, harness call). */
static uintptr_t owner_dptr(int o) {
  void *p = NULL;
  if (fz.buf[o].dptr) return fz.buf[o].dptr;
  fz_call("gpuprims_buffer_device_ptr(%s, &out) (check)", fz_live_buf(o).what);
  fz_done(gpuprims_buffer_device_ptr(fz.buf[o].h, &p), FZ_OK);
  fz.buf[o].dptr = (uintptr_t)p;
  return fz.buf[o].dptr;
}

/* wrap_device: on CUDA a view of part of a live buffer's memory (16-byte aligned), so
 * that buffers share memory; on the host UNSUPPORTED whatever the pointer. */
void fz_op_buffer_wrap(void) {
  int c = fz_pick_live_ctx(), bad_t, no_out = null_out(), o = -1, cuda = fz_ctx_is_cuda(c);
  fz_h a = fz_maybe_hostile(FZ_KCTX, fz_live_ctx(c), 8);
  gpuprims_dtype t = pick_dtype(cuda ? 3 : 10, &bad_t);
  unsigned faults = fz_handle_fault(&a, 0);
  size_t es = bad_t ? 1 : tu_dtype_size(t), len = 0, off = 0;
  void *ptr = NULL;
  gpuprims_buffer *out = TU_SENTINEL_PTR(gpuprims_buffer);
  gpuprims_status s;
  if (cuda) {
    int b, n = 0, pick[FZ_MAX_BUF];
    for (b = 0; b < FZ_MAX_BUF; b++)
      if (fz.buf[b].live && fz.buf[b].owner == b && fz_ctx_is_cuda(fz.buf[b].ctx) && fz.buf[b].nbytes >= 16 &&
          fz.ctx[fz.buf[b].ctx].device == fz.ctx[c].device) /* memory of the context's device */
        pick[n++] = b;
    if (n == 0) return;
    o = fz_pin(pick[fz_below((uint64_t)n)]);
    off = 16 * (size_t)fz_below(fz.buf[o].nbytes / 16);
    if ((fz.buf[o].nbytes - off) / es == 0) return;
    len = 1 + (size_t)fz_below((fz.buf[o].nbytes - off) / es); /* 1 .. what fits past off */
    ptr = (void *)(owner_dptr(o) + off);
    if (ptr == NULL) return;
  } else {
    len = fz_pct(10) ? 0 : fz_pct(10) ? fz_huge_len(es) : fz_rand_len();
    ptr = fz_pct(8) ? NULL : (void *)(uintptr_t)0x10000; /* never used: the host has no device memory */
    if (len > 0 && ptr == NULL) faults |= FZ_S(NULL_ARGUMENT);
    if (len >= ((size_t)1 << 48)) faults |= FZ_S(INVALID_ARGUMENT);
    if (a.cls == FZ_LIVE) faults |= FZ_S(UNSUPPORTED);
  }
  if (bad_t) faults |= FZ_S(INVALID_ARGUMENT);
  if (no_out) faults |= FZ_S(NULL_ARGUMENT);
  if (!faults) fz_buf_room();
  fz_call("gpuprims_buffer_wrap_device(%s, %s, %s, %zu, %s)", a.what, dtype_words(t, bad_t),
          o >= 0 ? "(a live buffer's device memory)" : ptr ? "(void *)0x10000" : "NULL", len, no_out ? "NULL" : "&out");
  s = fz_done(gpuprims_buffer_wrap_device((gpuprims_context *)a.p, t, ptr, len, no_out ? NULL : &out),
              faults ? faults : FZ_OK);
  if (s != GPUPRIMS_STATUS_OK) {
    if (!no_out && out != TU_SENTINEL_PTR(gpuprims_buffer)) fz_fail("a failed buffer_wrap_device wrote its out-parameter");
    return;
  }
  if (out == NULL || out == TU_SENTINEL_PTR(gpuprims_buffer)) fz_fail("buffer_wrap_device said OK but wrote %p", (void *)out);
  fz_buf_add(out, c, t, len, o, off);
  if (fz_pct(50)) fz_verify_buf(fz_pick_live_buf(), "after buffer_wrap_device");
}

/* wrap_host: on the host backend a buffer over memory the fuzzer allocates (filled at
 * random, so the model starts from it) and frees after the buffer; NULL, a pointer off
 * the element alignment and lengths past isize::MAX bytes are refused; on CUDA
 * UNSUPPORTED whatever the pointer. */
void fz_op_buffer_wrap_host(void) {
  int c = fz_pick_live_ctx(), bad_t, no_out = null_out(), b;
  fz_h a = fz_maybe_hostile(FZ_KCTX, fz_live_ctx(c), 8);
  gpuprims_dtype t = pick_dtype(5, &bad_t);
  unsigned faults = fz_handle_fault(&a, 0);
  size_t es = bad_t ? 1 : tu_dtype_size(t);
  /* huge: SIZE_MAX / 2 + 1 elements or more, past isize::MAX bytes (a smaller bogus
   * length over a real pointer would be believed, as the header says it must be) */
  int huge = fz_pct(5), no_ptr = fz_pct(6), misaligned = es > 1 && fz_pct(6);
  size_t len = huge ? (size_t)fz_range(SIZE_MAX / 2 + 1, SIZE_MAX) : fz_pct(10) ? 0 : fz_rand_len();
  unsigned char *mem = (unsigned char *)tu_xmalloc(huge ? 64 : len * es + 16);
  void *ptr = no_ptr ? NULL : misaligned ? (void *)(mem + 1) : (void *)mem;
  gpuprims_buffer *out = TU_SENTINEL_PTR(gpuprims_buffer);
  gpuprims_status s;
  if (!huge && !bad_t) fz_fill(t, mem, len);
  if (bad_t) faults |= FZ_S(INVALID_ARGUMENT);
  if (no_out) faults |= FZ_S(NULL_ARGUMENT);
  if (no_ptr && len > 0) faults |= FZ_S(NULL_ARGUMENT);
  if (misaligned && !no_ptr) faults |= FZ_S(INVALID_ARGUMENT);
  if (huge) faults |= FZ_S(INVALID_ARGUMENT);
  if (a.cls == FZ_LIVE && fz_ctx_is_cuda(c)) faults |= FZ_S(UNSUPPORTED);
  if (!faults) fz_buf_room();
  fz_call("gpuprims_buffer_wrap_host(%s, %s, %s, %zu, %s)", a.what, dtype_words(t, bad_t),
          no_ptr ? "NULL" : misaligned ? "(misaligned host memory)" : "(host memory)", len, no_out ? "NULL" : "&out");
  s = fz_done(gpuprims_buffer_wrap_host((gpuprims_context *)a.p, t, ptr, len, no_out ? NULL : &out),
              faults ? faults : FZ_OK);
  if (s != GPUPRIMS_STATUS_OK) {
    if (!no_out && out != TU_SENTINEL_PTR(gpuprims_buffer)) fz_fail("a failed buffer_wrap_host wrote its out-parameter");
    free(mem);
    return;
  }
  if (out == NULL || out == TU_SENTINEL_PTR(gpuprims_buffer)) fz_fail("buffer_wrap_host said OK but wrote %p", (void *)out);
  b = fz_buf_add(out, c, t, len, -1, 0);
  fz.buf[b].wrapped = mem;
  if (len) memcpy(fz.buf[b].mem, mem, len * es);
  if (fz_pct(50)) fz_verify_buf(b, "after buffer_wrap_host");
}

void fz_op_buffer_destroy(void) {
  int b = fz_pick_live_buf();
  if (b >= 0 && fz_pct(70)) {
    fz_buf_destroy(b);
    return;
  }
  fz_destroy_hostile(FZ_KBUF);
}

/* ------------------------------------------------------------------------------------- */
/* Using buffers                                                                          */
/* ------------------------------------------------------------------------------------- */

/* A live buffer (-1 when there is none), pinned. */
static int any_buf(void) { return fz_pin(fz_pick_live_buf()); }

void fz_op_buffer_query(void) {
  int b = any_buf(), no_out = null_out();
  unsigned r = (unsigned)fz_below(3), faults;
  fz_h a;
  gpuprims_status s;
  if (b < 0) return;
  a = fz_maybe_hostile(FZ_KBUF, fz_live_buf(b), 12);
  faults = fz_handle_fault(&a, 0) | (no_out ? FZ_S(NULL_ARGUMENT) : 0);
  if (r == 0) {
    size_t out = FZ_UNSET;
    fz_call("gpuprims_buffer_len(%s, %s)", a.what, no_out ? "NULL" : "&out");
    s = fz_done(gpuprims_buffer_len((gpuprims_buffer *)a.p, no_out ? NULL : &out), faults ? faults : FZ_OK);
    if (s == GPUPRIMS_STATUS_OK && out != fz.buf[b].len) fz_fail("buffer_len wrote %zu, expected %zu", out, fz.buf[b].len);
    if (s != GPUPRIMS_STATUS_OK && out != FZ_UNSET) fz_fail("a failed buffer_len wrote %zu", out);
  } else if (r == 1) {
    gpuprims_dtype out = FZ_UNSET32;
    fz_call("gpuprims_buffer_dtype(%s, %s)", a.what, no_out ? "NULL" : "&out");
    s = fz_done(gpuprims_buffer_dtype((gpuprims_buffer *)a.p, no_out ? NULL : &out), faults ? faults : FZ_OK);
    if (s == GPUPRIMS_STATUS_OK && out != fz.buf[b].dt) fz_fail("buffer_dtype wrote %lu", (unsigned long)out);
    if (s != GPUPRIMS_STATUS_OK && out != FZ_UNSET32) fz_fail("a failed buffer_dtype wrote %lu", (unsigned long)out);
  } else {
    void *out = TU_SENTINEL_PTR(void);
    if (a.cls == FZ_LIVE && !fz_ctx_is_cuda(fz.buf[b].ctx)) faults |= FZ_S(UNSUPPORTED);
    fz_call("gpuprims_buffer_device_ptr(%s, %s)", a.what, no_out ? "NULL" : "&out");
    s = fz_done(gpuprims_buffer_device_ptr((gpuprims_buffer *)a.p, no_out ? NULL : &out), faults ? faults : FZ_OK);
    if (s != GPUPRIMS_STATUS_OK && out != TU_SENTINEL_PTR(void)) fz_fail("a failed buffer_device_ptr wrote %p", out);
    if (s == GPUPRIMS_STATUS_OK) {
      int o = fz.buf[b].owner;
      if (out == TU_SENTINEL_PTR(void)) fz_fail("buffer_device_ptr said OK and wrote nothing");
      if (fz.buf[o].dptr && fz.buf[b].len && (uintptr_t)out != fz.buf[o].dptr + fz.buf[b].off)
        fz_fail("buffer_device_ptr wrote %p, expected %p", out, (void *)(fz.buf[o].dptr + fz.buf[b].off));
      if (o == b && fz.buf[b].len) fz.buf[b].dptr = (uintptr_t)out;
    }
  }
}

/* An element range of buffer b: valid, just past the end, or huge (offset + count
 * overflowing included). Returns 1 when the range is valid. */
static int pick_range(int b, size_t *offset, size_t *count) {
  size_t len = fz.buf[b].len;
  unsigned r = (unsigned)fz_below(100);
  if (r < 70) {
    *offset = (size_t)fz_below(len + 1);
    *count = (size_t)fz_below(len - *offset + 1);
    return 1;
  }
  if (r < 88) {
    *offset = (size_t)fz_below(len + 2);
    *count = len + 1 - (*offset < len + 1 ? *offset : len + 1) + (size_t)fz_below(4);
    if (*offset > len && fz_pct(50)) *count = 0;
    return 0;
  }
  *offset = fz_pct(50) ? (size_t)fz_below(len + 1) : fz_huge_len(1);
  *count = fz_pct(50) ? fz_huge_len(1) : (size_t)fz_below(3) + (*offset > len ? 0 : len + 1);
  return 0;
}

/* A buffer_write or buffer_read of buffer b (maybe through a hostile handle, a): its
 * range, whether it is valid, and the statuses the call may return (no_ptr: the host
 * pointer is NULL). */
static unsigned range_call(int b, int no_ptr, fz_h *a, size_t *offset, size_t *count, int *valid) {
  unsigned faults;
  *valid = pick_range(b, offset, count);
  *a = fz_maybe_hostile(FZ_KBUF, fz_live_buf(b), 10);
  faults = fz_handle_fault(a, 0);
  if (!*valid && a->cls == FZ_LIVE) faults |= FZ_S(INVALID_ARGUMENT);
  if (no_ptr && *count > 0) faults |= FZ_S(NULL_ARGUMENT);
  return faults;
}

void fz_op_buffer_write(void) {
  int b = any_buf(), no_src = fz_pct(6), valid;
  size_t offset, count, es;
  unsigned faults;
  unsigned char *src;
  fz_h a;
  gpuprims_status s;
  if (b < 0) return;
  es = fz.buf[b].es;
  faults = range_call(b, no_src, &a, &offset, &count, &valid);
  /* src holds count elements where the range is valid; else 64 bytes the library must
     not read (an ASan report if it does) */
  src = (unsigned char *)tu_xmalloc(valid ? count * es + 1 : 64);
  if (valid) fz_fill(fz.buf[b].dt, src, count);
  fz_call("gpuprims_buffer_write(%s, %zu, %s, %zu)", a.what, offset, no_src ? "NULL" : "src", count);
  s = fz_done(gpuprims_buffer_write((gpuprims_buffer *)a.p, offset, no_src ? NULL : src, count), faults ? faults : FZ_OK);
  if (s == GPUPRIMS_STATUS_OK && a.cls == FZ_LIVE && count) memcpy(fz_shadow(b) + offset * es, src, count * es);
  if (a.cls == FZ_LIVE) fz_verify_buf(b, s == GPUPRIMS_STATUS_OK ? "after buffer_write" : "after a failed buffer_write");
  free(src);
}

void fz_op_buffer_read(void) {
  int b = any_buf(), no_dst = fz_pct(6), valid;
  size_t offset, count, es, cap, i;
  unsigned faults;
  unsigned char *dst;
  fz_h a;
  gpuprims_status s;
  if (b < 0) return;
  es = fz.buf[b].es;
  faults = range_call(b, no_dst, &a, &offset, &count, &valid);
  cap = (valid ? count * es : 32) + 32; /* 32 guard bytes past what may be written */
  dst = (unsigned char *)tu_xmalloc(cap);
  memset(dst, POISON, cap);
  fz_call("gpuprims_buffer_read(%s, %zu, %s, %zu)", a.what, offset, no_dst ? "NULL" : "dst", count);
  s = fz_done(gpuprims_buffer_read((gpuprims_buffer *)a.p, offset, no_dst ? NULL : dst, count), faults ? faults : FZ_OK);
  if (s != GPUPRIMS_STATUS_OK || a.cls != FZ_LIVE) {
    if ((i = first_written(dst, cap)) < cap) fz_fail("buffer_read (%s) wrote dst byte %zu", tu_status_name(s), i);
  } else {
    if ((i = tu_first_diff(dst, fz_shadow(b) + offset * es, es, count)) < count)
      fz_fail("buffer_read: element %zu of the range differs", i);
    if ((i = first_written(dst + count * es, 32)) < 32) fz_fail("buffer_read wrote %zu bytes past count", i + 1);
    fz.checked_results++;
  }
  free(dst);
}

void fz_op_buffer_copy(void) {
  int src = any_buf(), dst;
  unsigned faults;
  fz_h d, sa;
  gpuprims_status s;
  if (src < 0) return;
  if (fz_pct(65) && fz.ctx[fz.buf[src].ctx].live)
    dst = fz_pin(fz_find_or_make(fz.buf[src].ctx, fz.buf[src].dt, fz.buf[src].len, &src, fz_pct(90)));
  else
    dst = any_buf();
  if (dst < 0) return;
  if (fz_overlap(dst, src) && !fz_same_range(dst, src)) return; /* partial overlap: the header says nothing */
  d = fz_maybe_hostile(FZ_KBUF, fz_live_buf(dst), 8);
  sa = fz_maybe_hostile(FZ_KBUF, fz_live_buf(src), 8);
  faults = fz_handle_fault(&d, 0) | fz_handle_fault(&sa, 0);
  if (d.cls == FZ_LIVE && sa.cls == FZ_LIVE) {
    if (!fz_same_ctx(dst, src)) faults |= FZ_S(CONTEXT_MISMATCH);
    if (fz.buf[dst].dt != fz.buf[src].dt) faults |= FZ_S(TYPE_MISMATCH);
    if (fz.buf[dst].len != fz.buf[src].len) faults |= FZ_S(SIZE_MISMATCH);
  }
  fz_call("gpuprims_buffer_copy(%s, %s)", d.what, sa.what);
  s = fz_done(gpuprims_buffer_copy((gpuprims_buffer *)d.p, (gpuprims_buffer *)sa.p), faults ? faults : FZ_OK);
  if (s == GPUPRIMS_STATUS_OK) memmove(fz_shadow(dst), fz_shadow(src), fz.buf[src].len * fz.buf[src].es);
  fz_verify_buf(dst, s == GPUPRIMS_STATUS_OK ? "after buffer_copy" : "after a failed buffer_copy");
}

/* ------------------------------------------------------------------------------------- */
/* version, status_name, last_error, dtype_size                                           */
/* ------------------------------------------------------------------------------------- */

void fz_op_info(void) {
  unsigned r = (unsigned)fz_below(4);
  if (r == 0) {
    uint32_t v;
    fz_call("gpuprims_version()");
    v = gpuprims_version();
    fz_done_void("(value)");
    if (v != (uint32_t)GPUPRIMS_VERSION) fz_fail("gpuprims_version() is 0x%06lx", (unsigned long)v);
  } else if (r == 1) {
    gpuprims_status st = fz_pct(70) ? (gpuprims_status)fz_below(16) : fz_bad_enum();
    const char *n;
    fz_call("gpuprims_status_name(%lu)", (unsigned long)st);
    n = gpuprims_status_name(st);
    fz_done_void("(name)");
    if (n == NULL || strncmp(n, "GPUPRIMS_STATUS_", 16) != 0 || n[16] == '\0') fz_fail("status_name(%lu) is bad", (unsigned long)st);
    if ((st > GPUPRIMS_STATUS_INTERNAL_ERROR) != (strcmp(n, "GPUPRIMS_STATUS_UNKNOWN") == 0))
      fz_fail("status_name(%lu) is \"%s\"", (unsigned long)st, n);
  } else if (r == 2) {
    size_t full = gpuprims_last_error(NULL, 0), len, got, i;
    unsigned char buf[600];
    memset(buf, POISON, sizeof buf);
    len = full + 1 < sizeof buf - 8 ? (size_t)fz_below(full + 3) : (size_t)fz_below(sizeof buf - 8);
    fz_call("gpuprims_last_error(%s, %zu)", len ? "buf" : "NULL", len);
    got = gpuprims_last_error(len ? (char *)buf : NULL, len);
    fz_done_void("(length)");
    if (got != full) fz_fail("last_error returned %zu, then %zu", full, got);
    if (len) {
      size_t keep = len - 1 < full ? len - 1 : full;
      if (buf[keep] != '\0' || strlen((char *)buf) != keep) fz_fail("last_error(buf, %zu) did not truncate right", len);
      for (i = len; i < sizeof buf; i++)
        if (buf[i] != POISON) fz_fail("last_error(buf, %zu) wrote byte %zu", len, i);
    }
  } else {
    gpuprims_dtype t = fz_pct(60) ? fz_rand_dtype()->id : fz_bad_dtype();
    size_t want = t >= GPUPRIMS_DTYPE_I8 && t <= GPUPRIMS_DTYPE_BF16 ? tu_dtype_size(t) : 0, got;
    fz_call("gpuprims_dtype_size(%lu)", (unsigned long)t);
    got = gpuprims_dtype_size(t);
    fz_done_void("(size)");
    if (got != want) fz_fail("dtype_size(%lu) is %zu, expected %zu", (unsigned long)t, got, want);
  }
}

/* ------------------------------------------------------------------------------------- */
/* fault_inject, fault_get_counts: hostile arguments only (an armed fault would make the  */
/* fuzzer's expected statuses wrong; ctests/test_faults.c walks real ones)                 */
/* ------------------------------------------------------------------------------------- */

void fz_op_fault(void) {
  static const char *bad[] = {"alloc", "alloc:0", "alloc:-3", "launch:x", "load:1:1", "nope:2", ":5", "alloc: 1x",
                              "compile:18446744073709551616", "alloc:1,oops:2", "\xff\xfe:1"};
  if (fz_pct(50)) {
    int use_null = fz_pct(15);
    const char *spec = use_null ? NULL : bad[fz_below(TU_ARRAY_LEN(bad))];
    fz_call("gpuprims_fault_inject(%s%s%s)", spec ? "\"" : "", spec ? spec : "NULL", spec ? "\"" : "");
    fz_done(gpuprims_fault_inject(spec), use_null ? FZ_S(NULL_ARGUMENT) : FZ_S(INVALID_ARGUMENT));
  } else {
    gpuprims_fault_counts n;
    int no_out = fz_pct(20);
    memset(&n, 0xA5, sizeof n);
    fz_call("gpuprims_fault_get_counts(%s)", no_out ? "NULL" : "&out");
    if (fz_done(gpuprims_fault_get_counts(no_out ? NULL : &n), no_out ? FZ_S(NULL_ARGUMENT) : FZ_OK) == GPUPRIMS_STATUS_OK &&
        n.injected != 0)
      fz_fail("a fault was made, yet none was armed (%llu)", (unsigned long long)n.injected);
  }
}

/* Destroys a hostile handle of `kind` (one of the FZ_K kinds): a no-op, which must
 * not change this thread's last error either. */
void fz_destroy_hostile(int kind) {
  char before[256], after[256];
  fz_h a = fz_hostile(kind);
  tu_last_error_text(before, sizeof before);
  fz_destroy_as(kind, a.p, a.what);
  fz_done_void("(void, a no-op)");
  tu_last_error_text(after, sizeof after);
  if (strcmp(before, after) != 0) fz_fail("a no-op destroy of %s changed the last error to \"%s\"", a.what, after);
}
