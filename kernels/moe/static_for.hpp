// static_for<N>(fn): calls fn(std::integral_constant<int, U>{}) for U = 0 .. N-1, a loop unrolled by the language,
// which no optimizer can leave rolled. Clang 15 for gfx90a/gfx940 left the grouped kernels' stage-1 loops over the
// fetched chunks, over the tokens of a pass and over a chunk's 8-element pieces rolled in some instantiations
// ("unrolled size is too large"), the chunk and accumulator arrays then in scratch memory; and a compile-time index
// is what a template argument (decode_piece's piece, chunk_word's word) needs. Device code of the kernels: included
// by grouped_stages.hpp and mma_decode.hip (internal linkage, a copy in each translation unit).
#pragma once
#include <type_traits>
#include <utility>

#include "kernels/runtime/hip_compat.hpp"

namespace moe::gpu {
namespace {

template <class Fn, int... U>
__device__ inline void static_for_impl(Fn& fn, std::integer_sequence<int, U...>) {
  (fn(std::integral_constant<int, U>{}), ...);
}
template <int N, class Fn>
__device__ inline void static_for(Fn&& fn) {
  static_for_impl(fn, std::make_integer_sequence<int, N>{});
}

}  // namespace
}  // namespace moe::gpu
