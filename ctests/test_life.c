/*
 * test_life: the gpuprims_life_* family against a plain byte-per-cell reference written
 * here (each of the eight neighbour offsets taken modulo the size on a torus, cells
 * outside dead on DEAD; B0 rules applied literally to every cell of the grid).
 *
 * Known patterns (blinker period 2, block still, a glider back home after 4 x size
 * generations on tori, the Gosper gun gaining one glider every 30 generations, a glider
 * dying at a DEAD edge), random soups for both boundaries and several rules (B0 rules
 * included) at odd sizes (1 x 1, 1 x 7, 2 x 2, 3 x 200, 65 x 63, widths just past a
 * multiple of 64 and of a warp's 30-word strip, heights past a strip of rows) and step
 * counts that the 6-generation launches do not divide, RLE round trips, every RLE parse
 * error with its line and column, rule parsing, and argument errors; each failed call
 * must leave the grid (cells, rule, generation) as it was. A grid of more than 2^32 cells
 * runs on CUDA (unless GPUPRIMS_TEST_LARGE=0) and elsewhere with GPUPRIMS_TEST_LARGE=1.
 */
#include "test_util.h"

typedef struct {
  const char *text;
  unsigned birth, survive; /* bit n: n live neighbours */
} rule_t;

static const rule_t RULES[] = {
    {"B3/S23", 0x8, 0xC},          {"B36/S23", 0x48, 0xC},          {"B2/S", 0x4, 0x0},
    {"B01/S", 0x3, 0x0},           {"B3678/S34678", 0x1C8, 0x1D8}, {"B1357/S1357", 0xAA, 0xAA},
    {"B0123/S01234", 0xF, 0x1F},   {"B012345678/S012345678", 0x1FF, 0x1FF},
};

static const char *const GOSPER_GUN =
    "#N Gosper glider gun\n"
    "x = 36, y = 9, rule = B3/S23\n"
    "24bo$22bobo$12b2o6b2o12b2o$11bo3bo4b2o12b2o$2o8bo5bo3b2o$2o8bo3bob2o4bo\n"
    "bo$10bo5bo7bo$11bo3bo$12b2o!\n";

static const char *const GLIDER = "x = 3, y = 3\nbo$2bo$3o!\n";

static gpuprims_context *g_ctx;
static tu_rng g_rng;

/* ---------------------------------------------------------------------------------- */
/* The reference                                                                        */

static void ref_step(const uint8_t *in, uint8_t *out, uint64_t w, uint64_t h, int torus, const rule_t *r) {
  uint64_t x, y;
  int dx, dy;
  for (y = 0; y < h; y++)
    for (x = 0; x < w; x++) {
      unsigned n = 0;
      for (dy = -1; dy <= 1; dy++)
        for (dx = -1; dx <= 1; dx++) {
          uint64_t xx, yy;
          if (!dx && !dy) continue;
          if (torus) {
            xx = (x + w + (uint64_t)(int64_t)dx) % w;
            yy = (y + h + (uint64_t)(int64_t)dy) % h;
          } else {
            if ((dx < 0 && x == 0) || (dx > 0 && x == w - 1) || (dy < 0 && y == 0) || (dy > 0 && y == h - 1)) continue;
            xx = x + (uint64_t)(int64_t)dx;
            yy = y + (uint64_t)(int64_t)dy;
          }
          n += in[yy * w + xx];
        }
      out[y * w + x] = (uint8_t)((in[y * w + x] ? r->survive >> n : r->birth >> n) & 1u);
    }
}

static void ref_steps(uint8_t *cells, uint8_t *tmp, uint64_t w, uint64_t h, int torus, const rule_t *r, uint64_t n) {
  uint64_t i;
  for (i = 0; i < n; i++) {
    ref_step(cells, tmp, w, h, torus, r);
    memcpy(cells, tmp, (size_t)(w * h));
  }
}

static uint64_t ref_population(const uint8_t *cells, size_t n) {
  uint64_t p = 0;
  size_t i;
  for (i = 0; i < n; i++) p += cells[i];
  return p;
}

/* ---------------------------------------------------------------------------------- */
/* Helpers                                                                              */

static gpuprims_life_grid *new_grid(uint64_t w, uint64_t h, gpuprims_life_boundary b) {
  gpuprims_life_grid *g = NULL;
  TU_REQUIRE_OK(gpuprims_life_create(g_ctx, w, h, b, &g));
  TU_REQUIRE(g != NULL);
  return g;
}

static const char *bname(gpuprims_life_boundary b) { return b == GPUPRIMS_LIFE_TORUS ? "torus" : "dead"; }

/* Does the grid hold exactly `want` (w x h bytes, 0/1)? Reports the first difference. */
static int holds(gpuprims_life_grid *g, const uint8_t *want, uint64_t w, uint64_t h, const char *what) {
  size_t n = (size_t)(w * h), i;
  uint8_t *got = (uint8_t *)tu_xmalloc(n);
  int ok;
  memset(got, 0xEE, n);
  if (!TU_EXPECT_OK(gpuprims_life_read_cells(g, got))) {
    free(got);
    return 0;
  }
  for (i = 0; i < n && got[i] == want[i]; i++) {
  }
  ok = i == n;
  TU_CHECKF(ok, "%s (%llu x %llu): cell (%llu, %llu) is %u, expected %u", what, (unsigned long long)w,
            (unsigned long long)h, (unsigned long long)(ok ? 0 : i % w), (unsigned long long)(ok ? 0 : i / w),
            ok ? 0u : got[i], ok ? 0u : want[i]);
  free(got);
  return ok;
}

static uint64_t population(gpuprims_life_grid *g) {
  uint64_t p = UINT64_MAX;
  TU_EXPECT_OK(gpuprims_life_population(g, &p));
  return p;
}

static uint64_t generation(gpuprims_life_grid *g) {
  uint64_t n = UINT64_MAX;
  TU_EXPECT_OK(gpuprims_life_generation(g, &n));
  return n;
}

static void get_rule(gpuprims_life_grid *g, char *buf, size_t len) {
  buf[0] = '\0';
  TU_EXPECT_OK(gpuprims_life_get_rule(g, buf, len, NULL));
}

/* The whole grid as RLE (malloc'd). */
static char *save(gpuprims_life_grid *g) {
  size_t needed = 0, again = 0;
  char *text;
  TU_REQUIRE_OK(gpuprims_life_save_rle(g, NULL, 0, &needed));
  text = (char *)tu_xmalloc(needed + 1);
  TU_REQUIRE_OK(gpuprims_life_save_rle(g, text, needed + 1, &again));
  TU_CHECKF(again == needed && strlen(text) == needed, "save_rle: length %zu, then %zu, strlen %zu", needed, again,
            strlen(text));
  return text;
}

static void random_cells(uint8_t *c, size_t n, double density) {
  size_t i;
  for (i = 0; i < n; i++) c[i] = tu_unit(&g_rng) < density;
}

/* ---------------------------------------------------------------------------------- */
/* Known patterns                                                                       */

static void test_blinker_and_block(void) {
  int b;
  for (b = 0; b < 2; b++) {
    gpuprims_life_boundary bd = b ? GPUPRIMS_LIFE_DEAD : GPUPRIMS_LIFE_TORUS;
    gpuprims_life_grid *g = new_grid(6, 5, bd);
    uint8_t vert[30] = {0}, horiz[30] = {0};
    int i;
    vert[1 * 6 + 2] = vert[2 * 6 + 2] = vert[3 * 6 + 2] = 1;
    horiz[2 * 6 + 1] = horiz[2 * 6 + 2] = horiz[2 * 6 + 3] = 1;
    TU_REQUIRE_OK(gpuprims_life_write_cells(g, vert));
    for (i = 1; i <= 6; i++) {
      TU_EXPECT_OK(gpuprims_life_step(g, 1));
      holds(g, i % 2 ? horiz : vert, 6, 5, bname(bd));
      TU_CHECKF(population(g) == 3, "blinker population %llu", (unsigned long long)population(g));
    }
    TU_CHECK(generation(g) == 6);
    TU_EXPECT_OK(gpuprims_life_step(g, 0));
    TU_CHECK(generation(g) == 6);
    gpuprims_life_destroy(g);

    g = new_grid(4, 4, bd);
    TU_REQUIRE_OK(gpuprims_life_load_rle(g, "x = 2, y = 2\n2o$2o!", 1, 1));
    {
      uint8_t block[16] = {0, 0, 0, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 0, 0, 0};
      holds(g, block, 4, 4, "block loaded");
      TU_EXPECT_OK(gpuprims_life_step(g, 17));
      holds(g, block, 4, 4, "block after 17");
    }
    gpuprims_life_destroy(g);
  }
}

static void test_glider_home(void) {
  static const uint64_t sizes[] = {8, 31, 64, 65, 100, 130};
  size_t s;
  for (s = 0; s < TU_ARRAY_LEN(sizes); s++) {
    uint64_t n = sizes[s];
    gpuprims_life_grid *g = new_grid(n, n, GPUPRIMS_LIFE_TORUS);
    uint8_t *start = (uint8_t *)tu_xmalloc((size_t)(n * n));
    char what[64];
    TU_REQUIRE_OK(gpuprims_life_load_rle(g, GLIDER, n - 3, n / 2));
    TU_REQUIRE_OK(gpuprims_life_read_cells(g, start));
    TU_EXPECT_OK(gpuprims_life_step(g, 2 * n + 1));
    TU_CHECK(population(g) == 5);
    TU_EXPECT_OK(gpuprims_life_step(g, 2 * n - 1));
    snprintf(what, sizeof what, "glider after %llu generations", (unsigned long long)(4 * n));
    holds(g, start, n, n, what);
    TU_CHECK(generation(g) == 4 * n);
    free(start);
    gpuprims_life_destroy(g);
  }
}

static void test_gosper_gun(void) {
  const uint64_t w = 120, h = 100;
  gpuprims_life_grid *g = new_grid(w, h, GPUPRIMS_LIFE_DEAD);
  uint8_t *ref = (uint8_t *)tu_xmalloc((size_t)(w * h)), *tmp = (uint8_t *)tu_xmalloc((size_t)(w * h));
  uint64_t prev = 0, k;
  TU_REQUIRE_OK(gpuprims_life_load_rle(g, GOSPER_GUN, 2, 2));
  TU_CHECK(population(g) == 36);
  TU_REQUIRE_OK(gpuprims_life_read_cells(g, ref));
  for (k = 1; k <= 8; k++) {
    uint64_t p;
    TU_EXPECT_OK(gpuprims_life_step(g, 30));
    ref_steps(ref, tmp, w, h, 0, &RULES[0], 30);
    p = population(g);
    TU_CHECKF(p == ref_population(ref, (size_t)(w * h)), "gun population %llu at %llu, reference %llu",
              (unsigned long long)p, (unsigned long long)(30 * k), (unsigned long long)ref_population(ref, (size_t)(w * h)));
    /* One more glider (5 cells) every period, once the first ones are clear of the gun. */
    if (k >= 3) TU_CHECKF(p == prev + 5, "gun population %llu at %llu, %llu a period before", (unsigned long long)p,
                          (unsigned long long)(30 * k), (unsigned long long)prev);
    prev = p;
  }
  holds(g, ref, w, h, "Gosper gun after 240");
  free(ref);
  free(tmp);
  gpuprims_life_destroy(g);
}

static void test_glider_dies_at_dead_edge(void) {
  const uint64_t n = 12;
  gpuprims_life_grid *g = new_grid(n, n, GPUPRIMS_LIFE_DEAD);
  uint8_t ref[144], tmp[144];
  TU_REQUIRE_OK(gpuprims_life_load_rle(g, GLIDER, 4, 4));
  TU_REQUIRE_OK(gpuprims_life_read_cells(g, ref));
  TU_EXPECT_OK(gpuprims_life_step(g, 60));
  ref_steps(ref, tmp, n, n, 0, &RULES[0], 60);
  holds(g, ref, n, n, "glider at a dead corner");
  /* It reaches the corner and ends as a block: 4 still cells, not a glider of 5. */
  TU_CHECKF(population(g) == 4, "population %llu after the glider hit the corner", (unsigned long long)population(g));
  TU_EXPECT_OK(gpuprims_life_step(g, 5));
  holds(g, ref, n, n, "still after the crash");
  gpuprims_life_destroy(g);
}

/* B0: every dead cell with no live neighbour is born, literally, on the bounded grid. */
static void test_b0_rules(void) {
  int b;
  for (b = 0; b < 2; b++) {
    gpuprims_life_boundary bd = b ? GPUPRIMS_LIFE_DEAD : GPUPRIMS_LIFE_TORUS;
    gpuprims_life_grid *g = new_grid(70, 9, bd);
    TU_REQUIRE_OK(gpuprims_life_set_rule(g, "B0/S"));
    TU_EXPECT_OK(gpuprims_life_step(g, 1));
    TU_CHECKF(population(g) == 630, "B0/S %s: %llu alive after 1, expected all 630", bname(bd),
              (unsigned long long)population(g));
    TU_EXPECT_OK(gpuprims_life_step(g, 1));
    TU_CHECKF(population(g) == 0, "B0/S %s: %llu alive after 2, expected none", bname(bd),
              (unsigned long long)population(g));
    TU_REQUIRE_OK(gpuprims_life_set_rule(g, "B0/S8"));
    TU_EXPECT_OK(gpuprims_life_step(g, 2));
    /* Torus: all born, then all survive with 8. Dead edge: the border has fewer than 8. */
    TU_CHECKF(population(g) == (b ? 68u * 7u : 630u), "B0/S8 %s: %llu alive after 2", bname(bd),
              (unsigned long long)population(g));
    gpuprims_life_destroy(g);
  }
}

/* ---------------------------------------------------------------------------------- */
/* Random soups against the reference                                                   */

static void soup(uint64_t w, uint64_t h, gpuprims_life_boundary bd, const rule_t *r, const uint64_t *steps,
                 size_t nsteps) {
  size_t n = (size_t)(w * h), i;
  uint8_t *ref = (uint8_t *)tu_xmalloc(n), *tmp = (uint8_t *)tu_xmalloc(n);
  gpuprims_life_grid *g = new_grid(w, h, bd);
  char what[160];
  uint64_t total = 0;
  random_cells(ref, n, 0.2 + 0.5 * tu_unit(&g_rng));
  TU_REQUIRE_OK(gpuprims_life_set_rule(g, r->text));
  TU_REQUIRE_OK(gpuprims_life_write_cells(g, ref));
  for (i = 0; i < nsteps; i++) {
    total += steps[i];
    TU_EXPECT_OK(gpuprims_life_step(g, steps[i]));
    ref_steps(ref, tmp, w, h, bd == GPUPRIMS_LIFE_TORUS, r, steps[i]);
    snprintf(what, sizeof what, "%s %s after %llu generations (steps of %llu)", r->text, bname(bd),
             (unsigned long long)total, (unsigned long long)steps[i]);
    if (!holds(g, ref, w, h, what)) break;
    TU_CHECKF(population(g) == ref_population(ref, n), "%s: population %llu, reference %llu", what,
              (unsigned long long)population(g), (unsigned long long)ref_population(ref, n));
  }
  TU_CHECK(generation(g) == total);
  gpuprims_life_destroy(g);
  free(ref);
  free(tmp);
}

static void test_soups(void) {
  /* Widths around 64 (a word) and 1920 (30 words: a warp's strip); heights past the
   * strip rows the planner picks (at least 72 for 6 generations a launch, 4 pipeline
   * depths of 3 x 6 rows). Step counts: 6 divides some, not others. */
  static const uint64_t sizes[][2] = {{1, 1},    {1, 7},   {7, 1},    {2, 2},   {2, 5},    {3, 200},  {200, 3},
                                      {65, 63},  {63, 65}, {64, 64},  {129, 31}, {193, 17}, {1921, 9}, {1985, 5},
                                      {97, 193}, {70, 385}, {1919, 4}, {130, 73}, {65, 145}};
  static const uint64_t steps_life[] = {1, 2, 3, 7, 8, 9, 13, 17};
  static const uint64_t steps_other[] = {3, 8, 11};
  size_t s, r;
  int b;
  for (b = 0; b < 2; b++) {
    gpuprims_life_boundary bd = b ? GPUPRIMS_LIFE_DEAD : GPUPRIMS_LIFE_TORUS;
    for (s = 0; s < TU_ARRAY_LEN(sizes); s++) {
      soup(sizes[s][0], sizes[s][1], bd, &RULES[0], steps_life, TU_ARRAY_LEN(steps_life));
      for (r = 1; r < TU_ARRAY_LEN(RULES); r++)
        if ((s + r) % 3 == 0 || sizes[s][0] * sizes[s][1] < 64)
          soup(sizes[s][0], sizes[s][1], bd, &RULES[r], steps_other, TU_ARRAY_LEN(steps_other));
    }
    for (r = 1; r < TU_ARRAY_LEN(RULES); r++) soup(131, 67, bd, &RULES[r], steps_other, TU_ARRAY_LEN(steps_other));
  }
}

/* ---------------------------------------------------------------------------------- */
/* RLE and rules                                                                        */

static void test_rle_round_trip(void) {
  static const uint64_t sizes[][2] = {{1, 1}, {5, 3}, {70, 9}, {300, 40}, {64, 2}};
  size_t s;
  for (s = 0; s < TU_ARRAY_LEN(sizes); s++) {
    uint64_t w = sizes[s][0], h = sizes[s][1];
    size_t n = (size_t)(w * h);
    uint8_t *cells = (uint8_t *)tu_xmalloc(n);
    gpuprims_life_grid *a = new_grid(w, h, GPUPRIMS_LIFE_TORUS), *b = new_grid(w, h, GPUPRIMS_LIFE_DEAD);
    char *text, *line, rule[32], small[8];
    size_t needed = 0, longest = 0, len = 0;
    random_cells(cells, n, s == 0 ? 1.0 : 0.4);
    if (h > 2) memset(cells + w, 0, (size_t)w); /* an empty row inside */
    TU_REQUIRE_OK(gpuprims_life_write_cells(a, cells));
    TU_REQUIRE_OK(gpuprims_life_set_rule(a, "b63/s32"));
    text = save(a);
    for (line = text; *line; line++) {
      len = *line == '\n' ? 0 : len + 1;
      if (len > longest) longest = len;
    }
    TU_CHECKF(longest <= 70, "save_rle: a line of %zu characters", longest);
    TU_CHECKF(strncmp(text, "x = ", 4) == 0 && strstr(text, "rule = B36/S23") != NULL, "save_rle header: %.60s", text);
    TU_EXPECT_OK(gpuprims_life_load_rle(b, text, 0, 0));
    holds(b, cells, w, h, "RLE round trip");
    get_rule(b, rule, sizeof rule);
    TU_CHECKF(strcmp(rule, "B36/S23") == 0, "the loaded rule is %s", rule);
    /* Truncation: a NUL-terminated prefix, the full length reported. */
    memset(small, 'Z', sizeof small);
    TU_EXPECT_OK(gpuprims_life_save_rle(a, small, sizeof small, &needed));
    TU_CHECK(needed == strlen(text) && small[7] == '\0' && strncmp(small, text, 7) == 0);
    TU_EXPECT_STATUS(gpuprims_life_save_rle(a, NULL, 5, &needed), GPUPRIMS_STATUS_NULL_ARGUMENT);
    free(text);
    free(cells);
    gpuprims_life_destroy(a);
    gpuprims_life_destroy(b);
  }
}

/* Loads stamp: live cells are set, others keep their state. */
static void test_rle_stamps(void) {
  gpuprims_life_grid *g = new_grid(10, 4, GPUPRIMS_LIFE_DEAD);
  uint8_t want[40] = {0};
  want[0] = want[9] = want[39] = 1;
  want[1 * 10 + 3] = want[1 * 10 + 5] = want[2 * 10 + 4] = 1;
  TU_REQUIRE_OK(gpuprims_life_write_cells(g, want));
  want[1 * 10 + 4] = 1;
  TU_EXPECT_OK(gpuprims_life_load_rle(g, "#C comment\n\nx=3,y=2\n  b o\n$ 3b!", 3, 1));
  holds(g, want, 10, 4, "stamped");
  TU_EXPECT_OK(gpuprims_life_load_rle(g, "x = 0, y = 0\n!", 10, 4));
  holds(g, want, 10, 4, "empty pattern");
  gpuprims_life_destroy(g);
}

typedef struct {
  const char *text;
  int line, column;
} parse_case;

static void test_rle_errors(void) {
  static const parse_case cases[] = {
      {"", 1, 1},
      {"#N only a comment\n", 2, 1},
      {"x = 3\nbo!", 1, 6},
      {"x = 3, y = 3 , rule = B3/S23\nbo$obo$2o\n", 3, 1},
      {"y = 3, x = 3\n!", 1, 1},
      {"x = 3, y = 3, rule = B9/S23\no!", 1, 23},
      {"x = 3, y = 3, rule = Life\no!", 1, 22},
      {"x = 3, y = 3, rul = B3/S23\no!", 1, 18},
      {"x = 3, y = 3 junk\no!", 1, 14},
      {"x = , y = 3\no!", 1, 5},
      {"x = 3, y = 99999999999999999999\n!", 1, 12},
      {"x = 3, y = 3\nbo\n4o!", 3, 1},
      {"x = 3, y = 3\nob2$o$o!", 2, 7},
      {"x = 3, y = 3\n2o.!", 2, 3},
      {"x = 3, y = 3\n2oA!", 2, 3},
      {"x = 3, y = 3\n0o!", 2, 1},
      {"x = 3, y = 3\nbo$\n#C late comment\n!", 3, 1},
      {"x = 3, y = 3\n\n  o2\n", 4, 1},
  };
  gpuprims_life_grid *g = new_grid(20, 20, GPUPRIMS_LIFE_TORUS);
  uint8_t cells[400];
  size_t i;
  char rule[32];
  random_cells(cells, sizeof cells, 0.3);
  TU_REQUIRE_OK(gpuprims_life_write_cells(g, cells));
  TU_REQUIRE_OK(gpuprims_life_set_rule(g, "B36/S23"));
  TU_REQUIRE_OK(gpuprims_life_step(g, 1));
  TU_REQUIRE_OK(gpuprims_life_read_cells(g, cells));
  for (i = 0; i < TU_ARRAY_LEN(cases); i++) {
    char want[64], err[1024];
    gpuprims_status s = gpuprims_life_load_rle(g, cases[i].text, 0, 0);
    tu_last_error_text(err, sizeof err);
    snprintf(want, sizeof want, "line %d, column %d:", cases[i].line, cases[i].column);
    TU_CHECKF(s == GPUPRIMS_STATUS_PARSE_ERROR && strstr(err, want) != NULL,
              "RLE case %zu %s: status %s, message \"%s\", expected PARSE_ERROR at \"%s\"", i, cases[i].text,
              tu_status_name(s), err, want);
  }
  /* Boxes that do not fit: INVALID_ARGUMENT; the rule in the header is not taken. */
  TU_EXPECT_STATUS(gpuprims_life_load_rle(g, "x = 3, y = 3, rule = B2/S\nobo!", 18, 0), GPUPRIMS_STATUS_INVALID_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_life_load_rle(g, "x = 3, y = 3, rule = B2/S\nobo!", 0, 18), GPUPRIMS_STATUS_INVALID_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_life_load_rle(g, "x = 3, y = 3\nobo!", UINT64_MAX - 1, 0), GPUPRIMS_STATUS_INVALID_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_life_load_rle(g, "x = 21, y = 1\no!", 0, 0), GPUPRIMS_STATUS_INVALID_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_life_load_rle(g, NULL, 0, 0), GPUPRIMS_STATUS_NULL_ARGUMENT);
  holds(g, cells, 20, 20, "after failed loads");
  get_rule(g, rule, sizeof rule);
  TU_CHECKF(strcmp(rule, "B36/S23") == 0, "rule after failed loads: %s", rule);
  TU_CHECK(generation(g) == 1);
  /* It fits exactly at the far corner. */
  TU_EXPECT_OK(gpuprims_life_load_rle(g, "x = 3, y = 3, rule = B2/S\nobo!", 17, 17));
  get_rule(g, rule, sizeof rule);
  TU_CHECKF(strcmp(rule, "B2/S") == 0, "rule after a load with a rule: %s", rule);
  gpuprims_life_destroy(g);
}

static void test_rules(void) {
  static const char *const good[][2] = {{"B3/S23", "B3/S23"},   {"b3/s23", "B3/S23"},   {"23/3", "B3/S23"},
                                        {"B36/S23", "B36/S23"}, {"B2/S", "B2/S"},       {"S23/B3", "B3/S23"},
                                        {"B3S23", "B3/S23"},    {" B01/S ", "B01/S"},   {"/2", "B2/S"}};
  static const char *const bad[] = {"", "B9/S23", "B3/S23/", "Life", "B3", "B3/S2a", "S23", "3/23/4", "B3/B3"};
  gpuprims_life_grid *g = new_grid(3, 3, GPUPRIMS_LIFE_TORUS);
  char rule[32], tiny[4];
  size_t i, needed = 0;
  get_rule(g, rule, sizeof rule);
  TU_CHECKF(strcmp(rule, "B3/S23") == 0, "default rule %s", rule);
  for (i = 0; i < TU_ARRAY_LEN(good); i++) {
    TU_EXPECT_OK(gpuprims_life_set_rule(g, good[i][0]));
    get_rule(g, rule, sizeof rule);
    TU_CHECKF(strcmp(rule, good[i][1]) == 0, "rule \"%s\" reads back as %s, expected %s", good[i][0], rule, good[i][1]);
  }
  TU_REQUIRE_OK(gpuprims_life_set_rule(g, "B36/S23"));
  for (i = 0; i < TU_ARRAY_LEN(bad); i++) {
    TU_EXPECT_STATUS(gpuprims_life_set_rule(g, bad[i]), GPUPRIMS_STATUS_PARSE_ERROR);
    get_rule(g, rule, sizeof rule);
    TU_CHECKF(strcmp(rule, "B36/S23") == 0, "after bad rule \"%s\" the rule is %s", bad[i], rule);
  }
  TU_EXPECT_STATUS(gpuprims_life_set_rule(g, NULL), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_EXPECT_OK(gpuprims_life_get_rule(g, tiny, sizeof tiny, &needed));
  TU_CHECK(needed == 7 && strcmp(tiny, "B36") == 0);
  gpuprims_life_destroy(g);
}

/* ---------------------------------------------------------------------------------- */
/* Argument errors                                                                      */

static void test_arguments(void) {
  gpuprims_life_grid *g = TU_SENTINEL_PTR(gpuprims_life_grid), *live;
  gpuprims_buffer *buf = NULL;
  uint8_t cells[12] = {0}, before[12];
  uint64_t v = 77;
  TU_EXPECT_STATUS(gpuprims_life_create(NULL, 3, 4, GPUPRIMS_LIFE_TORUS, &g), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_life_create(g_ctx, 3, 4, GPUPRIMS_LIFE_TORUS, NULL), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_life_create(g_ctx, 3, 4, 2, &g), GPUPRIMS_STATUS_INVALID_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_life_create(g_ctx, 3, 4, 0xFFFFFFFFu, &g), GPUPRIMS_STATUS_INVALID_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_life_create(g_ctx, 0, 4, GPUPRIMS_LIFE_TORUS, &g), GPUPRIMS_STATUS_INVALID_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_life_create(g_ctx, 3, 0, GPUPRIMS_LIFE_DEAD, &g), GPUPRIMS_STATUS_INVALID_ARGUMENT);
  TU_EXPECT_STATUS2(gpuprims_life_create(g_ctx, UINT64_MAX, UINT64_MAX, GPUPRIMS_LIFE_DEAD, &g),
                    GPUPRIMS_STATUS_INVALID_ARGUMENT, GPUPRIMS_STATUS_OUT_OF_MEMORY);
  TU_CHECK(g == TU_SENTINEL_PTR(gpuprims_life_grid));

  live = new_grid(3, 4, GPUPRIMS_LIFE_TORUS);
  cells[4] = cells[5] = cells[6] = 1;
  TU_REQUIRE_OK(gpuprims_life_write_cells(live, cells));
  TU_EXPECT_STATUS(gpuprims_life_write_cells(live, NULL), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_life_read_cells(live, NULL), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_life_population(live, NULL), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_life_generation(live, NULL), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_life_step(NULL, 1), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_life_population(NULL, &v), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_life_generation(NULL, &v), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_life_read_cells(NULL, cells), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_life_write_cells(NULL, cells), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_life_load_rle(NULL, GLIDER, 0, 0), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_life_save_rle(NULL, NULL, 0, NULL), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_life_set_rule(NULL, "B3/S23"), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_CHECK(v == 77);

  /* A handle of another kind. */
  TU_REQUIRE_OK(gpuprims_buffer_create(g_ctx, GPUPRIMS_DTYPE_U8, 64, &buf));
  TU_EXPECT_STATUS(gpuprims_life_step((gpuprims_life_grid *)(void *)buf, 1), GPUPRIMS_STATUS_INVALID_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_life_population((gpuprims_life_grid *)(void *)buf, &v), GPUPRIMS_STATUS_INVALID_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_life_create((gpuprims_context *)(void *)buf, 3, 3, GPUPRIMS_LIFE_TORUS, &g),
                   GPUPRIMS_STATUS_INVALID_ARGUMENT);
  gpuprims_life_destroy((gpuprims_life_grid *)(void *)buf); /* ignored: not a grid */
  gpuprims_buffer_destroy(buf);
  TU_CHECK(v == 77);

  /* Nothing changed on the live grid. */
  memcpy(before, cells, sizeof before);
  holds(live, before, 3, 4, "after argument errors");
  TU_CHECK(generation(live) == 0);
  gpuprims_life_destroy(live);
  gpuprims_life_destroy(NULL);
  /* A destroyed grid (test_handles passes destroyed handles to every function). */
  TU_EXPECT_STATUS(gpuprims_life_step(live, 1), GPUPRIMS_STATUS_INVALID_ARGUMENT);
}

/* A grid outlives its context handle. */
static void test_context_lifetime(void) {
  gpuprims_context *ctx = NULL;
  gpuprims_backend b = tu_backend_of(g_ctx);
  gpuprims_life_grid *g = NULL;
  TU_REQUIRE_OK(gpuprims_context_create(b, 0, &ctx));
  TU_REQUIRE_OK(gpuprims_life_create(ctx, 40, 30, GPUPRIMS_LIFE_TORUS, &g));
  gpuprims_context_destroy(ctx);
  TU_EXPECT_OK(gpuprims_life_load_rle(g, GLIDER, 10, 10));
  TU_EXPECT_OK(gpuprims_life_step(g, 40));
  TU_CHECK(population(g) == 5);
  gpuprims_life_destroy(g);
}

/* More than 2^32 cells: a glider crossing both wrapped edges of a 65536 x 65537 torus. */
static void test_large(void) {
  const uint64_t w = 65536, h = 65537;
  gpuprims_life_grid *a, *b;
  char *ta, *tb;
  const char *env = getenv("GPUPRIMS_TEST_LARGE");
  if (env && *env ? *env != '1' : !tu_is_cuda(g_ctx)) {
    printf("test_life: the 2^32-cell grid runs on CUDA unless GPUPRIMS_TEST_LARGE=0, elsewhere with =1\n");
    return;
  }
  a = new_grid(w, h, GPUPRIMS_LIFE_TORUS);
  b = new_grid(w, h, GPUPRIMS_LIFE_TORUS);
  TU_REQUIRE_OK(gpuprims_life_load_rle(a, GLIDER, w - 10, h - 10));
  TU_EXPECT_OK(gpuprims_life_step(a, 45)); /* 11 cells right and down, and one phase on */
  TU_REQUIRE_OK(gpuprims_life_load_rle(b, GLIDER, 1, 1));
  TU_EXPECT_OK(gpuprims_life_step(b, 1));
  TU_CHECK(population(a) == 5);
  ta = save(a);
  tb = save(b);
  TU_CHECKF(strcmp(ta, tb) == 0, "large torus: the glider is not where expected:\n%.200s\nvs\n%.200s", ta, tb);
  free(ta);
  free(tb);
  gpuprims_life_destroy(a);
  gpuprims_life_destroy(b);
}

int main(void) {
  tu_rng_seed(&g_rng, tu_init("test_life"));
  g_ctx = tu_open_context();
  test_arguments();
  test_rules();
  test_blinker_and_block();
  test_glider_home();
  test_glider_dies_at_dead_edge();
  test_gosper_gun();
  test_b0_rules();
  test_rle_stamps();
  test_rle_round_trip();
  test_rle_errors();
  test_context_lifetime();
  test_soups();
  test_large();
  gpuprims_context_destroy(g_ctx);
  return tu_finish();
}
