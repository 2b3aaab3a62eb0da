/* The segmented top-k rows of the tour (segmented_topk_bench.c). */
#ifndef GPUPRIMS_BENCH_SEGMENTED_TOPK_H
#define GPUPRIMS_BENCH_SEGMENTED_TOPK_H

#include "gpuprims.h"
#include "timer.h"

/* Runs the segmented top-k rows (all, or none when `only` is set and names neither
 * "segtopk" nor "segmented") on `ctx`, timed with `timer`, with CUB's DeviceBatchedTopK
 * beside each where it can run when `cub_stream` is not NULL; each row checked against a
 * CPU reference on sampled rows. Returns the number of rows that failed. */
int segmented_topk_tour(gpuprims_context *ctx, bench_timer *timer, void *cub_stream, const char *only, int reps);

/* Prints the rows again, for the tour's summary. */
void segmented_topk_summary(void);

#endif
