/* The selection rows of the tour (select_bench.c). */
#ifndef GPUPRIMS_BENCH_SELECT_H
#define GPUPRIMS_BENCH_SELECT_H

#include <stddef.h>

#include "gpuprims.h"
#include "timer.h"

/* Runs the selection rows (all, or when `only` names "select" or "topk", or a row's
 * label contains it) at each of the `nsizes` sizes on `ctx`, timed with `timer`, with
 * CUB's sort beside each when `cub_stream` is not NULL; prints each row. Returns the
 * number of rows that failed. */
int select_tour(gpuprims_context *ctx, bench_timer *timer, void *cub_stream, const char *only, int reps,
                const size_t *sizes, int nsizes);

/* Prints the rows again, for the tour's summary. */
void select_summary(void);

#endif
