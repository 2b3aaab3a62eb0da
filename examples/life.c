/*
 * life: runs a Life pattern with gpuprims and writes the result as RLE.
 *
 *   life PATTERN.rle [-n GENERATIONS] [-s WIDTHxHEIGHT] [-b torus|dead] [-r RULE]
 *        [-e EVERY] [-o OUT.rle]
 *
 * Loads the pattern into the middle of a grid (default 4096 x 4096, torus), runs the
 * generations (default 1000) in steps of EVERY (default n / 10), printing the
 * generation, the population and the rate in cells per second, then writes the final
 * grid as RLE to OUT (default: stdout is left alone and nothing is written).
 * GPUPRIMS_BACKEND=cuda|host picks the backend.
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpuprims.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int fail(const char *what, gpuprims_status s) {
  char msg[512];
  gpuprims_last_error(msg, sizeof msg);
  fprintf(stderr, "life: %s: %s: %s\n", what, gpuprims_status_name(s), msg);
  return 1;
}

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  char *text = NULL;
  size_t len = 0, cap = 0, got;
  if (!f) return NULL;
  do {
    if (cap - len < 4096) {
      char *more = (char *)realloc(text, cap = cap * 2 + 4096);
      if (!more) {
        free(text);
        fclose(f);
        return NULL;
      }
      text = more;
    }
    got = fread(text + len, 1, cap - len - 1, f);
    len += got;
  } while (got > 0);
  fclose(f);
  text[len] = '\0';
  return text;
}

/* The pattern's box from its header ("x = W, y = H"), to centre it. */
static void pattern_box(const char *rle, uint64_t *w, uint64_t *h) {
  const char *line = rle;
  *w = *h = 0;
  while (line && *line) {
    while (*line == ' ' || *line == '\t' || *line == '\r' || *line == '\n') line++;
    if (*line != '#') {
      unsigned long long x = 0, y = 0;
      if (sscanf(line, "x = %llu , y = %llu", &x, &y) == 2 || sscanf(line, "x=%llu,y=%llu", &x, &y) == 2) {
        *w = x;
        *h = y;
      }
      return;
    }
    line = strchr(line, '\n');
  }
}

int main(int argc, char **argv) {
  const char *in = NULL, *out = NULL, *rule = NULL;
  unsigned long long n = 1000, every = 0, width = 4096, height = 4096;
  gpuprims_life_boundary boundary = GPUPRIMS_LIFE_TORUS;
  gpuprims_context *ctx = NULL;
  gpuprims_life_grid *g = NULL;
  gpuprims_status s;
  uint64_t pw, ph, pop = 0, done = 0;
  char device[128], *text;
  size_t needed = 0;
  double t_total = 0.0;
  int i;

  for (i = 1; i < argc; i++) {
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(argv[i], "-n") && v) n = strtoull(argv[++i], NULL, 0);
    else if (!strcmp(argv[i], "-e") && v) every = strtoull(argv[++i], NULL, 0);
    else if (!strcmp(argv[i], "-o") && v) out = argv[++i];
    else if (!strcmp(argv[i], "-r") && v) rule = argv[++i];
    else if (!strcmp(argv[i], "-s") && v && sscanf(argv[i + 1], "%llux%llu", &width, &height) == 2) i++;
    else if (!strcmp(argv[i], "-b") && v) boundary = !strcmp(argv[++i], "dead") ? GPUPRIMS_LIFE_DEAD : GPUPRIMS_LIFE_TORUS;
    else if (argv[i][0] != '-' && !in) in = argv[i];
    else {
      fprintf(stderr, "usage: life PATTERN.rle [-n GENERATIONS] [-s WIDTHxHEIGHT] [-b torus|dead] [-r RULE] "
                      "[-e EVERY] [-o OUT.rle]\n");
      return 2;
    }
  }
  if (!in) {
    fprintf(stderr, "life: no pattern file (try examples/patterns/gosper_gun.rle)\n");
    return 2;
  }
  if (!(text = read_file(in))) {
    fprintf(stderr, "life: cannot read %s\n", in);
    return 1;
  }
  if (every == 0) every = n / 10 ? n / 10 : 1;
  pattern_box(text, &pw, &ph);

  if ((s = gpuprims_context_create(GPUPRIMS_BACKEND_AUTO, 0, &ctx))) return fail("context", s);
  gpuprims_context_device_name(ctx, device, sizeof device, &needed);
  if ((s = gpuprims_life_create(ctx, width, height, boundary, &g))) return fail("create", s);
  if (pw > width || ph > height) {
    fprintf(stderr, "life: the %" PRIu64 " x %" PRIu64 " pattern does not fit %llu x %llu\n", pw, ph, width, height);
    return 1;
  }
  if ((s = gpuprims_life_load_rle(g, text, (width - pw) / 2, (height - ph) / 2))) return fail(in, s);
  free(text);
  if (rule && (s = gpuprims_life_set_rule(g, rule))) return fail("rule", s);
  gpuprims_life_population(g, &pop);
  printf("%s on %s: %llu x %llu %s, population %" PRIu64 "\n", in, device, width, height,
         boundary == GPUPRIMS_LIFE_TORUS ? "torus" : "dead edges", pop);

  while (done < n) {
    uint64_t k = n - done < every ? n - done : every;
    double t0 = now_s(), dt;
    if ((s = gpuprims_life_step(g, k))) return fail("step", s);
    if ((s = gpuprims_life_population(g, &pop))) return fail("population", s);
    dt = now_s() - t0;
    t_total += dt;
    done += k;
    printf("generation %8" PRIu64 "  population %10" PRIu64 "  %.3g cells/s\n", done, pop,
           (double)width * (double)height * (double)k / dt);
  }
  if (n) printf("%llu generations in %.3f s: %.3g cells/s\n", n, t_total, (double)width * (double)height * (double)n / t_total);

  if (out) {
    FILE *f = fopen(out, "w");
    char *rle;
    if (!f) {
      fprintf(stderr, "life: cannot write %s\n", out);
      return 1;
    }
    if ((s = gpuprims_life_save_rle(g, NULL, 0, &needed))) return fail("save", s);
    rle = (char *)malloc(needed + 1);
    if (!rle || (s = gpuprims_life_save_rle(g, rle, needed + 1, &needed))) return fail("save", s);
    fputs(rle, f);
    fclose(f);
    free(rle);
    printf("wrote %s (%zu bytes)\n", out, needed);
  }
  gpuprims_life_destroy(g);
  gpuprims_context_destroy(ctx);
  return 0;
}
