// The key and value types of a sort module (the radix sort's, the quicksort's), from
// the options it is instantiated with: -DGP_KEY_BYTES=1|2|4|8 -DGP_KEY_FLOAT=0|1
// -DGP_VALUE_BYTES=0|1|2|4|8. Keys and values move as unsigned bit patterns of their
// width; Order maps a key to the pattern whose unsigned order is the wanted one.
#pragma once
#include "common/types.cuh"
#include "common/radix_key.cuh"

typedef gp::BitsOf<GP_KEY_BYTES>::type K;
typedef gp::KeyOrder<K, GP_KEY_FLOAT> Order;
#if GP_VALUE_BYTES > 0
typedef gp::BitsOf<GP_VALUE_BYTES>::type V;
constexpr bool HAS_VALUES = true;
#else
typedef u8 V;  // unused
constexpr bool HAS_VALUES = false;
#endif
