/* The tour's timer: one small interface, two ways to time.
 *
 * Built with CUB support (GPUPRIMS_BENCH_WITH_CUB) and given a CUDA context,
 * the timer creates a CUDA stream, hands it to the context with
 * gpuprims_context_set_stream, and times with CUDA events recorded on that
 * stream around the call: device time, as the anchor figures and the CUB
 * reference are timed, on the same stream.
 *
 * Otherwise (host backend, a build without CUDA, or a context that refused
 * the stream) it reads CLOCK_MONOTONIC around the call and a
 * gpuprims_context_synchronize.
 */
#ifndef GPUPRIMS_BENCH_TIMER_H
#define GPUPRIMS_BENCH_TIMER_H

#include "gpuprims.h"

typedef struct bench_timer bench_timer;

/* NULL only when out of memory. Never fails for lack of CUDA: it falls back
 * to the wall clock and says why in bench_timer_note. */
bench_timer *bench_timer_create(gpuprims_context *ctx);

/* Restores the context's own stream, then frees the timer and its stream. */
void bench_timer_destroy(bench_timer *t);

/* "cuda-events" or "wall-clock". */
const char *bench_timer_kind(const bench_timer *t);

/* Why the timer is what it is ("" when there is nothing to say). */
const char *bench_timer_note(const bench_timer *t);

/* The cudaStream_t the context runs on (NULL for the wall clock). */
void *bench_timer_stream(const bench_timer *t);

/* Marks the start of a timed call. */
void bench_timer_start(bench_timer *t);

/* Waits until the work issued since bench_timer_start has finished; returns
 * the milliseconds it took, or a negative number on error (the wall clock
 * path reports a failed synchronize the same way). */
double bench_timer_stop_ms(bench_timer *t);

/* Wall-clock milliseconds since an arbitrary fixed point (CLOCK_MONOTONIC). */
double bench_wall_ms(void);

/* The median of `reps` timed calls of call(arg) (after 2 untimed ones), each between
 * bench_timer_start and bench_timer_stop_ms; < 0 when a call fails (its status and the
 * library's message are printed, naming `what`). */
typedef gpuprims_status (*bench_call)(void *arg);
double bench_time_call(bench_timer *timer, int reps, bench_call call, void *arg, const char *what);

#endif /* GPUPRIMS_BENCH_TIMER_H */
