/* gpuprims_bench --json FILE: see bench_json.h. */
#define _POSIX_C_SOURCE 200809L

#include "bench_json.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static FILE *out = NULL;
static const char *out_path = NULL;
static int nrows = 0;
/* The facts every row repeats: "device": ..., "backend": ..., "cccl": ..., "date": ... */
static char facts[1024];

void bench_json_string(char *buf, size_t len, const char *s) {
  size_t o = 0;
  if (len < 3) return;
  buf[o++] = '"';
  for (; s && *s && o + 8 < len; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') {
      buf[o++] = '\\';
      buf[o++] = (char)c;
    } else if (c < 0x20) {
      o += (size_t)snprintf(buf + o, len - o, "\\u%04x", c);
    } else {
      buf[o++] = (char)c;
    }
  }
  buf[o++] = '"';
  buf[o] = '\0';
}

/* A number, or null when negative (not measured). */
static void number(char *buf, size_t len, double v) {
  if (v < 0) snprintf(buf, len, "null");
  else snprintf(buf, len, "%.6g", v);
}

int bench_json_open(const char *path, const char *backend, const char *device, uint32_t cccl, uint32_t version,
                    int argc, char **argv) {
  char dev[512], cccl_s[32], date[32], arg[512];
  time_t now = time(NULL);
  struct tm tm;
  int i;
  out = fopen(path, "w");
  if (!out) {
    fprintf(stderr, "gpuprims_bench: cannot write --json %s\n", path);
    return -1;
  }
  out_path = path;
  gmtime_r(&now, &tm);
  strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
  bench_json_string(dev, sizeof dev, device);
  if (cccl) snprintf(cccl_s, sizeof cccl_s, "\"%u.%u.%u\"", cccl / 1000000, cccl / 1000 % 1000, cccl % 1000);
  else snprintf(cccl_s, sizeof cccl_s, "null");
  snprintf(facts, sizeof facts, "\"device\": %s, \"backend\": \"%s\", \"cccl\": %s, \"date\": \"%s\"", dev, backend,
           cccl_s, date);
  fprintf(out, "{\"gpuprims\": \"%u.%u.%u\", %s,\n \"command\": [", version >> 16, (version >> 8) & 0xff,
          version & 0xff, facts);
  for (i = 0; i < argc; i++) {
    bench_json_string(arg, sizeof arg, argv[i]);
    fprintf(out, "%s%s", i ? ", " : "", arg);
  }
  fprintf(out, "],\n \"rows\": [\n");
  return 0;
}

void bench_json_add(const bench_json_row *r) {
  char label[160], dtype[96], variant[96], cub[160], ms[32], cub_ms[32], ratio[32], bytes[32];
  static const char *checks[] = {"\"FAIL\"", "\"OK\"", "\"OK*\""};
  if (!out) return;
  bench_json_string(label, sizeof label, r->label);
  bench_json_string(dtype, sizeof dtype, r->dtype);
  bench_json_string(variant, sizeof variant, r->variant ? r->variant : "");
  if (r->cub && r->cub_ms >= 0) bench_json_string(cub, sizeof cub, r->cub);
  else snprintf(cub, sizeof cub, "null");
  number(ms, sizeof ms, r->ms);
  number(cub_ms, sizeof cub_ms, r->cub && r->cub_ms >= 0 ? r->cub_ms : -1.0);
  number(ratio, sizeof ratio, r->cub && r->cub_ms >= 0 && r->ms > 0 ? r->cub_ms / r->ms : -1.0);
  if (r->bytes < 0) snprintf(bytes, sizeof bytes, "null");
  else snprintf(bytes, sizeof bytes, "%.0f", r->bytes);
  fprintf(out,
          "%s  {\"primitive\": \"%s\", \"label\": %s, \"dtype\": %s, \"variant\": %s, \"n\": %.0f, \"items\": %.0f, "
          "\"bytes\": %s, \"ms\": %s, \"cub_ms\": %s, \"cub\": %s, \"ratio\": %s, \"check\": %s, \"ours\": %s, "
          "\"extra\": %s%s%s, %s}",
          nrows ? ",\n" : "", r->primitive, label, dtype, variant, r->n, r->items, bytes, ms, cub_ms, cub, ratio,
          r->check >= 0 && r->check <= 2 ? checks[r->check] : "null", r->not_ours ? "false" : "true",
          r->extra ? "{" : "null", r->extra ? r->extra : "", r->extra ? "}" : "", facts);
  nrows++;
}

int bench_json_close(void) {
  int bad;
  if (!out) return 0;
  fprintf(out, "\n ]}\n");
  bad = ferror(out);
  bad |= fclose(out) != 0;
  out = NULL;
  if (bad) fprintf(stderr, "gpuprims_bench: writing --json %s failed\n", out_path);
  else fprintf(stderr, "gpuprims_bench: %d rows written to %s\n", nrows, out_path);
  return bad ? -1 : 0;
}
