/* timer.h's two ways: CUDA events through cub_reference.cu's helpers, and the
 * wall clock. In a build without CUDA the helpers are cub_reference_stub.c's,
 * which create no stream, so the timer falls back to the wall clock: no
 * #ifdef needed here or in the tour. */
#define _POSIX_C_SOURCE 200809L
#include "timer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "cub_reference.h"

struct bench_timer {
  gpuprims_context *ctx;
  int events;          /* 1: CUDA events on `stream` */
  void *stream;        /* cudaStream_t handed to ctx */
  void *ev_start;
  void *ev_stop;
  double wall_start;
  char note[256];
};

double bench_wall_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

bench_timer *bench_timer_create(gpuprims_context *ctx) {
  bench_timer *t = (bench_timer *)calloc(1, sizeof *t);
  if (!t) return NULL;
  t->ctx = ctx;
  {
    gpuprims_backend b = GPUPRIMS_BACKEND_HOST;
    if (gpuprims_context_backend(ctx, &b) != GPUPRIMS_STATUS_OK || b != GPUPRIMS_BACKEND_CUDA) {
      snprintf(t->note, sizeof t->note, "context is not CUDA");
      return t;
    }
    t->stream = cubref_stream_create();
    t->ev_start = cubref_event_create();
    t->ev_stop = cubref_event_create();
    if (!t->stream || !t->ev_start || !t->ev_stop) {
      snprintf(t->note, sizeof t->note, "no CUDA stream/events: %s", cubref_last_error());
    } else {
      gpuprims_status s = gpuprims_context_set_stream(ctx, t->stream);
      if (s == GPUPRIMS_STATUS_OK) {
        t->events = 1;
        return t;
      }
      {
        char msg[160] = "";
        gpuprims_last_error(msg, sizeof msg);
        snprintf(t->note, sizeof t->note, "gpuprims_context_set_stream: %s (%s)", gpuprims_status_name(s), msg);
      }
    }
    /* Fall back to the wall clock; the context keeps its own stream. */
    cubref_event_destroy(t->ev_start);
    cubref_event_destroy(t->ev_stop);
    cubref_stream_destroy(t->stream);
    t->ev_start = t->ev_stop = t->stream = NULL;
  }
  return t;
}

void bench_timer_destroy(bench_timer *t) {
  if (!t) return;
  if (t->events) {
    gpuprims_context_synchronize(t->ctx);
    gpuprims_context_set_stream(t->ctx, NULL);
    cubref_event_destroy(t->ev_start);
    cubref_event_destroy(t->ev_stop);
    cubref_stream_destroy(t->stream);
  }
  free(t);
}

const char *bench_timer_kind(const bench_timer *t) { return t->events ? "cuda-events" : "wall-clock"; }

const char *bench_timer_note(const bench_timer *t) { return t->note; }

void *bench_timer_stream(const bench_timer *t) { return t->events ? t->stream : NULL; }

void bench_timer_start(bench_timer *t) {
  if (t->events) {
    if (cubref_event_record(t->ev_start, t->stream) != 0) t->events = -1; /* reported at stop */
    return;
  }
  t->wall_start = bench_wall_ms();
}

double bench_timer_stop_ms(bench_timer *t) {
  if (t->events) {
    if (t->events < 0) {
      t->events = 1;
      return -1.0;
    }
    if (cubref_event_record(t->ev_stop, t->stream) != 0) return -1.0;
    return cubref_event_elapsed_ms(t->ev_start, t->ev_stop);
  }
  if (gpuprims_context_synchronize(t->ctx) != GPUPRIMS_STATUS_OK) return -1.0;
  return bench_wall_ms() - t->wall_start;
}

double bench_time_call(bench_timer *timer, int reps, bench_call call, void *arg, const char *what) {
  double *ms = (double *)malloc(sizeof(double) * (size_t)reps), m;
  int i;
  if (!ms) return -1.0;
  for (i = -2; i < reps; ++i) {
    gpuprims_status s;
    double t;
    bench_timer_start(timer);
    s = call(arg);
    t = bench_timer_stop_ms(timer);
    if (s != GPUPRIMS_STATUS_OK || t < 0) {
      char err[256];
      gpuprims_last_error(err, sizeof err);
      printf("  ! %s: %s (%s)\n", what, gpuprims_status_name(s), err);
      free(ms);
      return -1.0;
    }
    if (i >= 0) ms[i] = t;
  }
  qsort(ms, (size_t)reps, sizeof(double), bench_cmp_double);
  m = ms[reps / 2];
  free(ms);
  return m;
}
