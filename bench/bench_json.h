/* The tour's rows as JSON (gpuprims_bench --json FILE), for scripts/bench-table.py and
 * scripts/bench-plot.py.
 *
 * The file is one object: the run's facts (gpuprims version, backend, device, CCCL
 * version or null, date, sizes, reps, command line) and "rows", one object a measured
 * row with those facts repeated (so rows of several files can be pooled):
 *
 *   {"primitive": "radix_sort", "label": "sort pairs u32/u32", "dtype": "u32/u32",
 *    "variant": "", "n": 1048576, "items": 1048576, "bytes": 16777216,
 *    "ms": 0.0953, "cub_ms": 0.0992, "cub": "DeviceRadixSort::SortPairs",
 *    "ratio": 1.04, "check": "OK", "ours": true, "extra": {...}, "device": ..., ...}
 *
 * primitive: reduce, scan, radix_sort, quicksort, select_kth, topk, segmented_select,
 * life. ms: gpuprims' median; cub_ms / cub: CUB's median and which CUB call (null where
 * CUB did not run); ratio = cub_ms / ms (> 1: gpuprims faster) or null; items: the
 * elements (cells x generations for Life) a call processes, bytes: the least it must
 * move (null where not defined); ours: false for a reference that is not gpuprims (Life's
 * naive kernel); extra: more figures of the row (null or an object). */
#ifndef GPUPRIMS_BENCH_JSON_H
#define GPUPRIMS_BENCH_JSON_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
  const char *primitive, *label, *dtype, *variant;
  double n, items, bytes; /* bytes < 0: null */
  double ms, cub_ms;      /* < 0: null */
  const char *cub;        /* the CUB call, or NULL */
  int check;              /* 1 OK, 2 OK* (checked without the host reference), 0 FAIL, -1 none */
  int not_ours;           /* a reference, not gpuprims */
  const char *extra;      /* JSON members without braces ("\"radix_ms\": 1.5"), or NULL */
} bench_json_row;

/* Opens FILE and writes the run's facts; 0, or -1 with a message on stderr. Without a
 * call to it (no --json) the other functions do nothing. */
int bench_json_open(const char *path, const char *backend, const char *device, uint32_t cccl, uint32_t version,
                    int argc, char **argv);
void bench_json_add(const bench_json_row *row);
/* Ends the file; 0, or -1 when something could not be written. */
int bench_json_close(void);
/* A JSON string of s (quoted, escaped) into buf. */
void bench_json_string(char *buf, size_t len, const char *s);

#endif
