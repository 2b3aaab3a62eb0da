// The device-side names kernels/common's headers use, for host checks that include them
// (scripts/ordered-screen-check.cpp, scripts/closed-band-check.cpp). The value
// reinterpretations are never called by what those checks run.
#pragma once
#include <algorithm>
#define __device__
#define __forceinline__ inline
using std::max;
using std::min;
static inline float __int_as_float(int) { return 0; }
static inline float __uint_as_float(unsigned) { return 0; }
static inline double __longlong_as_double(long long) { return 0; }
static inline int __float_as_int(float) { return 0; }
static inline long long __double_as_longlong(double) { return 0; }
