/* The Life rows of the tour (life_bench.c). */
#ifndef GPUPRIMS_BENCH_LIFE_H
#define GPUPRIMS_BENCH_LIFE_H

#include "gpuprims.h"
#include "timer.h"

/* Runs the Life rows whose label contains `only` (all when NULL) on `ctx` (the CUDA
 * rows when it is a CUDA context, timed with `timer`) and on `host` (the host-backend
 * rows, wall clock); prints each row. Returns the number of failed checks. */
int life_tour(gpuprims_context *ctx, gpuprims_context *host, bench_timer *timer, const char *only, int reps);

/* Prints the rows again, for the tour's summary. */
void life_summary(void);

#endif
