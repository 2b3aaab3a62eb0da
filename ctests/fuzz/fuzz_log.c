/*
 * fuzz_log.c: the ring log of the last FZ_RING library calls (each in words, with its
 * status), the check every call's status goes through, and the failure report: the
 * seed, the call's number, a command line that replays the run and the log. A crash
 * (a sanitizer report, a signal) prints the same report on the way out.
 */
#include "fuzz.h"

#include <signal.h>

#define FZ_RING 200

typedef struct {
  unsigned long op;      /* the fuzz call it belongs to */
  unsigned long n;       /* library call number */
  char desc[FZ_DESC];
  char result[48];
} fz_entry;

static fz_entry ring[FZ_RING];
static unsigned long ring_n; /* entries written */
static int in_report;

fz_state_t fz;

void fz_log_init(void) {
  ring_n = 0;
  in_report = 0;
}

static fz_entry *cur(void) { return &ring[(ring_n ? ring_n - 1 : 0) % FZ_RING]; }

void fz_call(const char *fmt, ...) {
  fz_entry *e = &ring[ring_n % FZ_RING];
  va_list ap;
  ring_n++;
  fz.lib_calls++;
  e->op = fz.op;
  e->n = fz.lib_calls;
  va_start(ap, fmt);
  vsnprintf(e->desc, sizeof e->desc, fmt, ap);
  va_end(ap);
  snprintf(e->result, sizeof e->result, "(running)");
}

static void trace(const fz_entry *e) {
  if (!fz.trace) return;
  printf("  #%lu.%lu %s -> %s\n", e->op, e->n, e->desc, e->result);
  fflush(stdout);
}

void fz_mask_names(unsigned mask, char *out, size_t len) {
  size_t at = 0;
  unsigned s;
  out[0] = '\0';
  for (s = 0; s < 16 && at < len; s++) {
    if (mask & (1u << s)) {
      int w = snprintf(out + at, len - at, "%s%s", at ? " or " : "", tu_status_name(s) + strlen("GPUPRIMS_STATUS_"));
      if (w < 0) break;
      at += (size_t)w;
    }
  }
}

/* The function a description names: its text up to the '('. */
static void function_of(const char *desc, char *fn, size_t len) {
  size_t i = 0;
  while (desc[i] && desc[i] != '(' && desc[i] != ' ' && i + 1 < len) {
    fn[i] = desc[i];
    i++;
  }
  fn[i] = '\0';
}

gpuprims_status fz_done(gpuprims_status s, unsigned allowed) {
  fz_entry *e = cur();
  const char *name = gpuprims_status_name(s);
  snprintf(e->result, sizeof e->result, "%s", name ? name + (strncmp(name, "GPUPRIMS_STATUS_", 16) ? 0 : 16) : "?");
  fz.status_seen[s < 15 ? s : 15]++;
  trace(e);
  if (s > GPUPRIMS_STATUS_INTERNAL_ERROR) fz_fail("an unknown status %u", (unsigned)s);
  if (s == GPUPRIMS_STATUS_INTERNAL_ERROR) fz_fail("INTERNAL_ERROR: a bug in gpuprims by its own account");
  if (!(allowed & (1u << s))) {
    char want[160];
    fz_mask_names(allowed, want, sizeof want);
    fz_fail("the call returned %s, expected %s", tu_status_name(s), want);
  }
  if (s != GPUPRIMS_STATUS_OK) {
    /* (1) a failure always leaves a message, and it names the function */
    char msg[512], fn[64], want[80];
    size_t n = gpuprims_last_error(NULL, 0);
    tu_last_error_text(msg, sizeof msg);
    function_of(e->desc, fn, sizeof fn);
    snprintf(want, sizeof want, "%s: ", fn);
    if (n == 0 || msg[0] == '\0') fz_fail("%s returned %s with no last error message", fn, tu_status_name(s));
    if (strlen(msg) != (n < sizeof msg ? n : sizeof msg - 1))
      fz_fail("gpuprims_last_error says %zu bytes, the text has %zu", n, strlen(msg));
    if (strncmp(msg, want, strlen(want)) != 0)
      fz_fail("the last error \"%s\" does not start with \"%s\"", msg, want);
  }
  return s;
}

void fz_done_void(const char *note) {
  fz_entry *e = cur();
  snprintf(e->result, sizeof e->result, "%s", note);
  trace(e);
}

static void print_log(FILE *f) {
  unsigned long first = ring_n > FZ_RING ? ring_n - FZ_RING : 0, i;
  fprintf(f, "the last %lu library calls (#fuzz-call.library-call; '(check)' calls are the fuzzer's own reads):\n",
          ring_n - first);
  for (i = first; i < ring_n; i++) {
    const fz_entry *e = &ring[i % FZ_RING];
    fprintf(f, "  #%lu.%lu %s -> %s\n", e->op, e->n, e->desc, e->result);
  }
}

static void print_replay(FILE *f) {
  fprintf(f, "seed 0x%016llx, fuzz call #%lu; replay: GPUPRIMS_FUZZ_SEED=0x%016llx GPUPRIMS_FUZZ_CALLS=%lu%s%s "
             "(GPUPRIMS_FUZZ_TRACE=1 prints every call)\n",
          (unsigned long long)fz.seed, fz.op, (unsigned long long)fz.seed, fz.op + 1,
          getenv("GPUPRIMS_BACKEND") ? " GPUPRIMS_BACKEND=" : "",
          getenv("GPUPRIMS_BACKEND") ? getenv("GPUPRIMS_BACKEND") : "");
}

void fz_fail(const char *fmt, ...) {
  va_list ap;
  char err[512];
  tu_last_error_text(err, sizeof err);
  in_report = 1;
  fflush(stdout);
  printf("\nfuzz_abi: FAIL at fuzz call #%lu (library call #%lu): ", fz.op, fz.lib_calls);
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  printf("\n  [last error of this thread: \"%s\"]\n", err);
  print_replay(stdout);
  print_log(stdout);
  print_replay(stdout);
  fflush(stdout);
  exit(1);
}

void fz_progress(double elapsed, int final) {
  unsigned s;
  printf("fuzz_abi: %s%.0f s, %lu fuzz calls, %lu library calls, %lu results compared, %lu float sums not compared;",
         final ? "done: " : "", elapsed, fz.op, fz.lib_calls, fz.checked_results, fz.unchecked_sums);
  for (s = 0; s < 16; s++)
    if (fz.status_seen[s]) printf(" %s %lu", s < 15 ? tu_status_name(s) + 16 : "other", fz.status_seen[s]);
  printf("\n");
  fflush(stdout);
}

/* ---- on the way out of a crash ---- */

static void dying(void) {
  if (in_report) return;
  in_report = 1;
  fflush(stdout);
  fprintf(stderr, "\nfuzz_abi: the process is dying (see the report above) during fuzz call #%lu\n", fz.op);
  print_replay(stderr);
  print_log(stderr);
  print_replay(stderr);
  fflush(stderr);
}

#if defined(__SANITIZE_ADDRESS__)
#define FZ_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FZ_ASAN 1
#endif
#endif

#ifdef FZ_ASAN
void __sanitizer_set_death_callback(void (*callback)(void));
/* Huge requests return NULL (the library reports OUT_OF_MEMORY) rather than abort, and
 * nothing above 4 GiB is ever handed out: the fuzzer's sizes are small or hopeless.
 * protect_shadow_gap=0: the CUDA driver maps memory in the range ASan would otherwise
 * reserve (cuInit fails without it); the range stays unmapped on the host, so a wild
 * access there still faults. ASAN_OPTIONS in the environment adds to these. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) {
  return "allocator_may_return_null=1:max_allocation_size_mb=4096:protect_shadow_gap=0:detect_leaks=1";
}
#endif
const char *__ubsan_default_options(void);
const char *__ubsan_default_options(void) { return "print_stacktrace=1:halt_on_error=1"; }

static void on_signal(int sig) {
  dying();
  signal(sig, SIG_DFL);
  raise(sig);
}

void fz_install_crash_handlers(void) {
#ifdef FZ_ASAN
  __sanitizer_set_death_callback(dying);
#else
  signal(SIGSEGV, on_signal);
  signal(SIGBUS, on_signal);
  signal(SIGFPE, on_signal);
  signal(SIGILL, on_signal);
#endif
  signal(SIGABRT, on_signal); /* a Rust abort, an assert */
}
