/*
 * test_large: sizes past 32 bits. A u8 buffer of 2^31 + 1000 elements (more elements than
 * an int32 counts) reduced with SUM, MIN, MAX and scanned in place; a u32 buffer of
 * 2^30 + 1000 elements (more than 2^32 bytes) reduced and scanned in place. The data is a
 * closed-form pattern written in chunks, the extremes placed past the 32-bit boundaries,
 * and the scans verified in full by reading back in chunks; host memory stays near 4.5 GiB
 * (the buffers themselves, on the host backend) plus 512 MiB.
 *
 * Sorts: a u8 buffer of 2^32 + 2^22 + 5 keys (a closed-form pattern whose histogram is
 * counted while writing, the smallest key planted last and past 2^32, the largest first)
 * sorted ascending, keys only, then the same buffer descending, then the quicksort the
 * same two ways; each verified by reading back in chunks: nondecreasing (nonincreasing)
 * and the per-value counts equal to the input's. Then the quicksort of the u16 selection
 * buffer below (2^31 + 1000 keys, the quicksort's own levels), verified the same way.
 * The radix sort needs one more buffer of
 * the keys' size as temporary device memory, the quicksort that and a byte a key:
 * OUT_OF_MEMORY from them is a skip (exit 77) when nothing failed before. On the host
 * backend the radix sort needs about 18 bytes per key more (some 80 GB).
 *
 * Selection: a u16 buffer of 2^31 + 1000 keys (odd values from a closed form, two zeros
 * planted past 2^31): select_kth of ranks 0, the median and n - 1 against a histogram
 * counted while writing, and top-100 ascending with indices against a scan of the
 * pattern (the two zeros first, lower index first, then the ties of the 100th key by
 * index).
 *
 * Runs when GPUPRIMS_TEST_LARGE=1, or on the CUDA backend (skipped, exit 77, when the device
 * memory is short); GPUPRIMS_TEST_LARGE=0 always skips, and so does GPUPRIMS_TEST_QUICK=1
 * (the C++ copy's setting: it has no quick size set) unless GPUPRIMS_TEST_LARGE=1.
 */
#include "test_util.h"

#define N8 (((size_t)1 << 31) + 1000)
#define N8_MIN_POS (((size_t)1 << 31) + 517)
#define N8_MAX_POS (N8 - 1)
#define N32 (((size_t)1 << 30) + 1000)
#define N32_MIN_POS (N32 - 5)
#define N32_MAX_POS (((size_t)1 << 30) + 100)
#define CHUNK ((size_t)1 << 26)

static uint8_t val8(size_t i) {
  if (i == N8_MIN_POS) return 3;
  if (i == N8_MAX_POS) return 250;
  return (uint8_t)(16 + (((i * 37u) ^ (i >> 9)) & 0x7F)); /* 16..143 */
}

static uint32_t val32(size_t i) {
  if (i == N32_MIN_POS) return 0;
  if (i == N32_MAX_POS) return 0xFFFFFFFFu;
  return (((uint32_t)(i * 2654435761u) ^ (uint32_t)(i >> 13) ^ 0x5bd1e995u) & 0xFFFFFFFDu) | 1u; /* 1..2^32-3 */
}

/* chunk[k] = val8(off + k) for k < cnt: the plain pattern (vectorised), then the extremes. */
static void fill8(uint8_t *chunk, size_t off, size_t cnt) {
  size_t k;
  for (k = 0; k < cnt; k++) chunk[k] = (uint8_t)(16 + ((((off + k) * 37u) ^ ((off + k) >> 9)) & 0x7F));
  if (N8_MIN_POS >= off && N8_MIN_POS < off + cnt) chunk[N8_MIN_POS - off] = val8(N8_MIN_POS);
  if (N8_MAX_POS >= off && N8_MAX_POS < off + cnt) chunk[N8_MAX_POS - off] = val8(N8_MAX_POS);
}

static void fill32(uint32_t *chunk, size_t off, size_t cnt) {
  size_t k;
  for (k = 0; k < cnt; k++)
    chunk[k] = (((uint32_t)((off + k) * 2654435761u) ^ (uint32_t)((off + k) >> 13) ^ 0x5bd1e995u) & 0xFFFFFFFDu) | 1u;
  if (N32_MIN_POS >= off && N32_MIN_POS < off + cnt) chunk[N32_MIN_POS - off] = val32(N32_MIN_POS);
  if (N32_MAX_POS >= off && N32_MAX_POS < off + cnt) chunk[N32_MAX_POS - off] = val32(N32_MAX_POS);
}

/* Creates a buffer of n elements; OUT_OF_MEMORY gives NULL. */
static gpuprims_buffer *create_or_null(gpuprims_context *ctx, gpuprims_dtype t, size_t n) {
  gpuprims_buffer *b = NULL;
  gpuprims_status s = gpuprims_buffer_create(ctx, t, n, &b);
  if (s == GPUPRIMS_STATUS_OUT_OF_MEMORY) return NULL;
  if (!TU_EXPECT_OK(s)) tu_abort_();
  return b;
}

static double seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void large_u8(gpuprims_context *ctx, gpuprims_buffer *b) {
  uint8_t *chunk = (uint8_t *)tu_xmalloc(CHUNK);
  uint8_t sum = 0, got, acc;
  size_t off, i, len = 0, bad = 0, first_bad = 0;
  double t0 = seconds();

  TU_EXPECT_OK(gpuprims_buffer_len(b, &len));
  TU_CHECKF(len == N8, "u8 buffer length %zu, expected %zu", len, (size_t)N8);
  for (off = 0; off < N8; off += CHUNK) {
    size_t cnt = N8 - off < CHUNK ? N8 - off : CHUNK;
    fill8(chunk, off, cnt);
    for (i = 0; i < cnt; i++) sum = (uint8_t)(sum + chunk[i]);
    TU_REQUIRE_OK(gpuprims_buffer_write(b, off, chunk, cnt));
  }
  printf("test_large: u8 n=%zu written (%.1f s)\n", (size_t)N8, seconds() - t0);

  got = 0xA5;
  if (TU_EXPECT_OK(gpuprims_reduce(ctx, b, GPUPRIMS_OP_SUM, &got)))
    TU_CHECKF(got == sum, "u8 SUM over %zu elements: %u, expected %u", (size_t)N8, (unsigned)got, (unsigned)sum);
  got = 0xA5;
  if (TU_EXPECT_OK(gpuprims_reduce(ctx, b, GPUPRIMS_OP_MIN, &got)))
    TU_CHECKF(got == 3, "u8 MIN: %u, expected 3 (at index %zu)", (unsigned)got, (size_t)N8_MIN_POS);
  got = 0xA5;
  if (TU_EXPECT_OK(gpuprims_reduce(ctx, b, GPUPRIMS_OP_MAX, &got)))
    TU_CHECKF(got == 250, "u8 MAX: %u, expected 250 (at index %zu)", (unsigned)got, (size_t)N8_MAX_POS);
  printf("test_large: u8 reduced (%.1f s)\n", seconds() - t0);

  /* in-place inclusive SUM (wraps modulo 256), verified in full */
  if (TU_EXPECT_OK(gpuprims_scan(ctx, b, b, GPUPRIMS_OP_SUM, GPUPRIMS_SCAN_INCLUSIVE))) {
    printf("test_large: u8 scanned (%.1f s)\n", seconds() - t0);
    uint8_t *pat = (uint8_t *)tu_xmalloc(CHUNK);
    acc = 0;
    for (off = 0; off < N8; off += CHUNK) {
      size_t cnt = N8 - off < CHUNK ? N8 - off : CHUNK;
      TU_REQUIRE_OK(gpuprims_buffer_read(b, off, chunk, cnt));
      fill8(pat, off, cnt);
      for (i = 0; i < cnt; i++) {
        acc = (uint8_t)(acc + pat[i]);
        if (chunk[i] != acc && bad++ == 0) first_bad = off + i;
      }
    }
    free(pat);
    TU_CHECKF(bad == 0, "u8 inclusive SUM scan of %zu elements: %zu wrong, the first at index %zu", (size_t)N8, bad,
              first_bad);
    TU_CHECKF(acc == sum, "u8: the scan's last element and the SUM disagree");
    printf("test_large: u8 scan verified (%.1f s)\n", seconds() - t0);
  }
  free(chunk);
}

static void large_u32(gpuprims_context *ctx, gpuprims_buffer *b) {
  uint32_t *chunk = (uint32_t *)tu_xmalloc(CHUNK * 4);
  uint32_t sum = 0, got, acc;
  size_t off, i, len = 0, bad = 0, first_bad = 0;
  double t0 = seconds();

  TU_EXPECT_OK(gpuprims_buffer_len(b, &len));
  TU_CHECKF(len == N32, "u32 buffer length %zu, expected %zu", len, (size_t)N32);
  for (off = 0; off < N32; off += CHUNK) {
    size_t cnt = N32 - off < CHUNK ? N32 - off : CHUNK;
    fill32(chunk, off, cnt);
    for (i = 0; i < cnt; i++) sum += chunk[i];
    TU_REQUIRE_OK(gpuprims_buffer_write(b, off, chunk, cnt));
  }
  /* a read across the 2^32-byte boundary */
  {
    uint32_t probe[8];
    size_t at = ((size_t)1 << 30) - 4;
    TU_EXPECT_OK(gpuprims_buffer_read(b, at, probe, 8));
    for (i = 0; i < 8; i++)
      TU_CHECKF(probe[i] == val32(at + i), "u32 read at element %zu (past 2^32 bytes): 0x%08lx, expected 0x%08lx",
                at + i, (unsigned long)probe[i], (unsigned long)val32(at + i));
  }
  printf("test_large: u32 n=%zu (%zu bytes) written (%.1f s)\n", (size_t)N32, (size_t)N32 * 4, seconds() - t0);

  got = 0xA5A5A5A5u;
  if (TU_EXPECT_OK(gpuprims_reduce(ctx, b, GPUPRIMS_OP_SUM, &got)))
    TU_CHECKF(got == sum, "u32 SUM over %zu elements: %lu, expected %lu", (size_t)N32, (unsigned long)got,
              (unsigned long)sum);
  got = 0xA5A5A5A5u;
  if (TU_EXPECT_OK(gpuprims_reduce(ctx, b, GPUPRIMS_OP_MIN, &got)))
    TU_CHECKF(got == 0, "u32 MIN: %lu, expected 0 (at index %zu)", (unsigned long)got, (size_t)N32_MIN_POS);
  got = 0xA5A5A5A5u;
  if (TU_EXPECT_OK(gpuprims_reduce(ctx, b, GPUPRIMS_OP_MAX, &got)))
    TU_CHECKF(got == 0xFFFFFFFFu, "u32 MAX: %lu, expected 4294967295 (at index %zu)", (unsigned long)got,
              (size_t)N32_MAX_POS);
  printf("test_large: u32 reduced (%.1f s)\n", seconds() - t0);

  /* in-place exclusive SUM, verified in full */
  if (TU_EXPECT_OK(gpuprims_scan(ctx, b, b, GPUPRIMS_OP_SUM, GPUPRIMS_SCAN_EXCLUSIVE))) {
    printf("test_large: u32 scanned (%.1f s)\n", seconds() - t0);
    uint32_t *pat = (uint32_t *)tu_xmalloc(CHUNK * 4);
    acc = 0;
    for (off = 0; off < N32; off += CHUNK) {
      size_t cnt = N32 - off < CHUNK ? N32 - off : CHUNK;
      TU_REQUIRE_OK(gpuprims_buffer_read(b, off, chunk, cnt));
      fill32(pat, off, cnt);
      for (i = 0; i < cnt; i++) {
        if (chunk[i] != acc && bad++ == 0) first_bad = off + i;
        acc += pat[i];
      }
    }
    free(pat);
    TU_CHECKF(bad == 0, "u32 exclusive SUM scan of %zu elements: %zu wrong, the first at index %zu", (size_t)N32,
              bad, first_bad);
    printf("test_large: u32 scan verified (%.1f s)\n", seconds() - t0);
  }
  free(chunk);
}

/* Both sorts of 2^32 + 2^22 + 5 u8 keys: past 32-bit counts (the quicksort's levels count
 * in 32 bits, so on CUDA this length takes the radix sort's kernels) */

#define NS (((size_t)1 << 32) + ((size_t)1 << 22) + 5)
#define NS_MIN_POS (((size_t)1 << 32) + 517) /* a 0 past 2^32 */
#define NS_MIN_POS2 (NS - 1)                 /* a 0 at the very end */
#define NS_MAX_POS 0                         /* a 255 at the very start */

static uint8_t sortval8(size_t i) {
  if (i == NS_MIN_POS || i == NS_MIN_POS2) return 0;
  if (i == NS_MAX_POS) return 255;
  return (uint8_t)(((i * 37u) ^ (i >> 9)) & 0xFF);
}

/* chunk[pos - off] = sortval8(pos) when pos is in the chunk */
static void plant_sort8(uint8_t *chunk, size_t off, size_t cnt, size_t pos) {
  if (pos >= off && pos < off + cnt) chunk[pos - off] = sortval8(pos);
}

static void fill_sort8(uint8_t *chunk, size_t off, size_t cnt) {
  size_t k;
  for (k = 0; k < cnt; k++) chunk[k] = (uint8_t)((((off + k) * 37u) ^ ((off + k) >> 9)) & 0xFF);
  plant_sort8(chunk, off, cnt, NS_MIN_POS);
  plant_sort8(chunk, off, cnt, NS_MIN_POS2);
  plant_sort8(chunk, off, cnt, NS_MAX_POS);
}

/* Reads b back in chunks: ordered (nondecreasing ascending, nonincreasing descending) and
 * the per-value counts equal to want[]. */
static void verify_sorted8(gpuprims_buffer *b, const char *sort, gpuprims_order o, const size_t *want, uint8_t *chunk) {
  size_t got[256], off, i, bad = 0, first_bad = 0;
  int desc = o == GPUPRIMS_ORDER_DESCENDING, v, first_v = -1;
  uint8_t prev = desc ? 255 : 0;
  memset(got, 0, sizeof got);
  for (off = 0; off < NS; off += CHUNK) {
    size_t cnt = NS - off < CHUNK ? NS - off : CHUNK;
    TU_REQUIRE_OK(gpuprims_buffer_read(b, off, chunk, cnt));
    for (i = 0; i < cnt; i++) {
      uint8_t x = chunk[i];
      if ((desc ? x > prev : x < prev) && bad++ == 0) first_bad = off + i;
      prev = x;
      got[x]++;
    }
  }
  TU_CHECKF(bad == 0, "u8 %s %s of %zu keys: %zu keys out of order, the first at index %zu", sort,
            desc ? "descending" : "ascending", (size_t)NS, bad, first_bad);
  for (v = 0; v < 256; v++)
    if (got[v] != want[v] && first_v < 0) first_v = v;
  TU_CHECKF(first_v < 0, "u8 %s %s of %zu keys: the counts differ from the input's, first for key %d (%zu, expected %zu)",
            sort, desc ? "descending" : "ascending", (size_t)NS, first_v, first_v < 0 ? (size_t)0 : got[first_v],
            first_v < 0 ? (size_t)0 : want[first_v]);
}

/* Returns 0 when a sort answered OUT_OF_MEMORY (nothing verified after that), else 1. */
static int large_sort_u8(gpuprims_context *ctx, gpuprims_buffer *b) {
  uint8_t *chunk = (uint8_t *)tu_xmalloc(CHUNK);
  size_t want[256], off, i, len = 0;
  gpuprims_status s;
  int step, ran = 1;
  double t0 = seconds();

  TU_EXPECT_OK(gpuprims_buffer_len(b, &len));
  TU_CHECKF(len == NS, "u8 sort buffer length %zu, expected %zu", len, (size_t)NS);
  memset(want, 0, sizeof want);
  for (off = 0; off < NS; off += CHUNK) {
    size_t cnt = NS - off < CHUNK ? NS - off : CHUNK;
    fill_sort8(chunk, off, cnt);
    for (i = 0; i < cnt; i++) want[chunk[i]]++;
    TU_REQUIRE_OK(gpuprims_buffer_write(b, off, chunk, cnt));
  }
  printf("test_large: u8 sort keys n=%zu written (%.1f s)\n", (size_t)NS, seconds() - t0);

  /* the radix sort ascending, then the same buffer descending; then the quicksort the
   * same two ways (from sorted input, then from the opposite order) */
  for (step = 0; step < 4; step++) {
    gpuprims_order o = step % 2 == 0 ? GPUPRIMS_ORDER_ASCENDING : GPUPRIMS_ORDER_DESCENDING;
    const char *on = step % 2 == 0 ? "ascending" : "descending";
    const char *sort = step < 2 ? "radix sort" : "quicksort";
    s = step < 2 ? gpuprims_radix_sort(ctx, b, NULL, o) : gpuprims_quicksort(ctx, b, NULL, o);
    if (s == GPUPRIMS_STATUS_OK) s = gpuprims_context_synchronize(ctx);
    if (s == GPUPRIMS_STATUS_OUT_OF_MEMORY) {
      char err[1024];
      tu_last_error_text(err, sizeof err);
      printf("test_large: u8 %s %s: OUT_OF_MEMORY (%s)\n", sort, on, err);
      ran = 0;
      break;
    }
    if (!TU_CHECKF(s == GPUPRIMS_STATUS_OK, "u8 %s %s of %zu keys: status %s", sort, on, (size_t)NS,
                   tu_status_name(s)))
      break;
    printf("test_large: u8 %s %s (%.1f s)\n", sort, on, seconds() - t0);
    verify_sorted8(b, sort, o, want, chunk);
    printf("test_large: u8 %s %s verified (%.1f s)\n", sort, on, seconds() - t0);
  }
  free(chunk);
  return ran;
}

/* Selection past 2^31: u16 keys (the sample-and-band path, candidates with indices past
 * 2^31), odd values from a closed form, two zeros planted past 2^31 (a tie that top-k
 * must give lowest index first). */
#define N16 (((size_t)1 << 31) + 1000)
#define N16_ZERO_A (((size_t)1 << 31) + 300)
#define N16_ZERO_B (((size_t)1 << 31) + 900)

static uint16_t val16(size_t i) {
  if (i == N16_ZERO_A || i == N16_ZERO_B) return 0;
  return (uint16_t)((((uint32_t)i * 40503u) ^ (uint32_t)(i >> 11)) | 1u);
}

/* The value of rank k from a histogram of all 65536 values. */
static uint16_t rank_in(const size_t *hist, size_t k) {
  size_t v, below = 0;
  for (v = 0; v < 65536; v++) {
    if (k < below + hist[v]) return (uint16_t)v;
    below += hist[v];
  }
  return 0xFFFF;
}

static void large_select_u16(gpuprims_context *ctx, gpuprims_buffer *b) {
  enum { K = 100 };
  uint16_t *chunk = (uint16_t *)tu_xmalloc(CHUNK * 2), got, t;
  size_t *hist = (size_t *)calloc(65536, sizeof(size_t));
  size_t off, i, ranks[3] = {0, (N16 - 1) / 2, N16 - 1}, less = 0, taken = 0, r;
  uint16_t want_v[K];
  uint64_t want_i[K], got_i[K];
  gpuprims_buffer *vals = NULL, *idx = NULL;
  double t0 = seconds();
  for (off = 0; off < N16; off += CHUNK) {
    size_t cnt = N16 - off < CHUNK ? N16 - off : CHUNK;
    for (i = 0; i < cnt; i++) hist[chunk[i] = val16(off + i)]++;
    TU_REQUIRE_OK(gpuprims_buffer_write(b, off, chunk, cnt));
  }
  printf("test_large: u16 n=%zu written (%.1f s)\n", (size_t)N16, seconds() - t0);
  for (r = 0; r < 3; r++) {
    got = 0xA5A5;
    if (TU_EXPECT_OK(gpuprims_select_kth(ctx, b, ranks[r], &got)))
      TU_CHECKF(got == rank_in(hist, ranks[r]), "u16 select_kth rank %zu of %zu: %u, expected %u", ranks[r],
                (size_t)N16, (unsigned)got, (unsigned)rank_in(hist, ranks[r]));
  }
  /* top-k ascending with indices: the keys below the k-th, then its ties by index */
  t = rank_in(hist, K - 1);
  for (i = 0; i < t; i++) less += hist[i];
  {
    size_t n_lt = 0, n_eq = 0;
    uint16_t *lt_v = (uint16_t *)tu_xmalloc(K * 2);
    uint64_t *lt_i = (uint64_t *)tu_xmalloc(K * 8);
    for (i = 0; i < N16 && (n_lt < less || n_eq < K - less); i++) {
      uint16_t v = val16(i);
      if (v < t) {
        lt_v[n_lt] = v;
        lt_i[n_lt++] = i;
      } else if (v == t && n_eq < K - less) {
        want_v[less + n_eq] = v;
        want_i[less + n_eq++] = i;
      }
    }
    /* the keys below t in (value, index) order: few, so insertion sort */
    for (r = 0; r < n_lt; r++) {
      size_t j = r;
      while (j > 0 && (lt_v[j - 1] > lt_v[r] || (lt_v[j - 1] == lt_v[r] && lt_i[j - 1] > lt_i[r]))) j--;
      memmove(want_v + j + 1, want_v + j, (r - j) * 2);
      memmove(want_i + j + 1, want_i + j, (r - j) * 8);
      want_v[j] = lt_v[r];
      want_i[j] = lt_i[r];
    }
    taken = n_lt + n_eq;
    free(lt_v);
    free(lt_i);
  }
  TU_CHECKF(taken == K, "test bug: %zu of %d reference elements", taken, K);
  TU_REQUIRE_OK(gpuprims_buffer_create(ctx, GPUPRIMS_DTYPE_U16, K, &vals));
  TU_REQUIRE_OK(gpuprims_buffer_create(ctx, GPUPRIMS_DTYPE_U64, K, &idx));
  if (TU_EXPECT_OK(gpuprims_topk(ctx, b, K, GPUPRIMS_ORDER_ASCENDING, vals, idx))) {
    TU_REQUIRE_OK(gpuprims_buffer_read(vals, 0, chunk, K));
    TU_REQUIRE_OK(gpuprims_buffer_read(idx, 0, got_i, K));
    for (r = 0; r < K && chunk[r] == want_v[r] && got_i[r] == want_i[r]; r++) {
    }
    TU_CHECKF(r == K, "u16 top-%d of %zu: element %zu is %u at %llu, expected %u at %llu", K, (size_t)N16, r,
              r < K ? (unsigned)chunk[r] : 0u, r < K ? (unsigned long long)got_i[r] : 0ull,
              r < K ? (unsigned)want_v[r] : 0u, r < K ? (unsigned long long)want_i[r] : 0ull);
  }
  printf("test_large: u16 selected (%.1f s)\n", seconds() - t0);
  gpuprims_buffer_destroy(vals);
  gpuprims_buffer_destroy(idx);
  free(hist);
  free(chunk);
}

/* The quicksort of the selection's u16 keys (2^31 + 1000, its own 32-bit levels),
 * ascending: nondecreasing, and the per-value counts equal to the input's. */
static void large_quicksort_u16(gpuprims_context *ctx, gpuprims_buffer *b) {
  uint16_t *chunk = (uint16_t *)tu_xmalloc(CHUNK * 2), prev = 0;
  size_t *want = (size_t *)calloc(65536, sizeof(size_t)), *got = (size_t *)calloc(65536, sizeof(size_t));
  size_t off, i, bad = 0, first_bad = 0, v, first_v = 65536;
  double t0 = seconds();
  gpuprims_status s;
  for (i = 0; i < N16; i++) want[val16(i)]++;
  s = gpuprims_quicksort(ctx, b, NULL, GPUPRIMS_ORDER_ASCENDING);
  if (s == GPUPRIMS_STATUS_OK) s = gpuprims_context_synchronize(ctx);
  if (s == GPUPRIMS_STATUS_OUT_OF_MEMORY) {
    printf("test_large: u16 quicksort of %zu keys: OUT_OF_MEMORY, left out\n", (size_t)N16);
  } else if (TU_CHECKF(s == GPUPRIMS_STATUS_OK, "u16 quicksort of %zu keys: status %s", (size_t)N16, tu_status_name(s))) {
    for (off = 0; off < N16; off += CHUNK) {
      size_t cnt = N16 - off < CHUNK ? N16 - off : CHUNK;
      TU_REQUIRE_OK(gpuprims_buffer_read(b, off, chunk, cnt));
      for (i = 0; i < cnt; i++) {
        if (chunk[i] < prev && bad++ == 0) first_bad = off + i;
        prev = chunk[i];
        got[chunk[i]]++;
      }
    }
    for (v = 0; v < 65536 && first_v == 65536; v++)
      if (got[v] != want[v]) first_v = v;
    TU_CHECKF(bad == 0, "u16 quicksort of %zu keys: %zu keys out of order, the first at index %zu", (size_t)N16, bad,
              first_bad);
    TU_CHECKF(first_v == 65536, "u16 quicksort of %zu keys: the counts differ from the input's, first for key %zu",
              (size_t)N16, first_v);
    printf("test_large: u16 quicksort verified (%.1f s)\n", seconds() - t0);
  }
  free(want);
  free(got);
  free(chunk);
}

int main(void) {
  const char *large = getenv("GPUPRIMS_TEST_LARGE");
  int forced = large && strcmp(large, "1") == 0;
  gpuprims_context *ctx;
  gpuprims_buffer *b;
  int sort_ran;

  tu_init("test_large");
  if (large && strcmp(large, "0") == 0) tu_skip("GPUPRIMS_TEST_LARGE=0");
  if (!forced && getenv("GPUPRIMS_TEST_QUICK"))
    tu_skip("GPUPRIMS_TEST_QUICK: no quick size set, only sizes past 32 bits (GPUPRIMS_TEST_LARGE=1 runs them)");
  ctx = tu_open_context();
  if (!forced && !tu_is_cuda(ctx))
    tu_skip("host backend: set GPUPRIMS_TEST_LARGE=1 to run (2^31+ elements, about 4.5 GiB of memory, "
            "and some 80 GB more for the sorts)");
  if (sizeof(size_t) < 8) tu_skip("32-bit size_t");

  b = create_or_null(ctx, GPUPRIMS_DTYPE_U8, N8);
  if (!b) tu_skip("OUT_OF_MEMORY for %zu bytes", (size_t)N8);
  large_u8(ctx, b);
  gpuprims_buffer_destroy(b);

  b = create_or_null(ctx, GPUPRIMS_DTYPE_U32, N32);
  if (!b) {
    printf("test_large: OUT_OF_MEMORY for %zu bytes: the u32 part is left out\n", (size_t)N32 * 4);
  } else {
    large_u32(ctx, b);
    gpuprims_buffer_destroy(b);
  }

  b = create_or_null(ctx, GPUPRIMS_DTYPE_U16, N16);
  if (!b) {
    printf("test_large: OUT_OF_MEMORY for %zu bytes: the u16 selection part is left out\n", (size_t)N16 * 2);
  } else {
    large_select_u16(ctx, b);
    large_quicksort_u16(ctx, b);
    gpuprims_buffer_destroy(b);
  }

  /* last, with the other buffers freed: the sort wants its keys' size again as temporary */
  b = create_or_null(ctx, GPUPRIMS_DTYPE_U8, NS);
  if (!b) {
    sort_ran = 0;
  } else {
    sort_ran = large_sort_u8(ctx, b);
    gpuprims_buffer_destroy(b);
  }
  gpuprims_context_destroy(ctx);
  if (!sort_ran && tu_state.failures == 0)
    tu_skip("OUT_OF_MEMORY for the u8 radix sort of %zu keys (the keys and as much again of temporary memory)",
            (size_t)NS);
  return tu_finish();
}
