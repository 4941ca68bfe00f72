// The weight formats, one row each in kWeightFormats. Everything that differs between two formats is a column, and
// the code that stores, decodes, names, validates or exports expert weights reads the row instead of switching on
// the format (docs/adding-a-weight-format.md walks through adding one). Plain C++17 data with constexpr accessors,
// so host code, GPU kernels (kernels/moe), the plugin adapter and the export share it; device code reads it only in
// constant expressions (a format known at compile time: the kernels' template parameter).
//
// Columns:
//   name, id_fragment  the spelling in case files, case.json and the export's moe.weight_format; in canonical ids
//   element            the stored element dtype (formats/dtype.hpp); a format whose e4m3 flavour the case picks
//                      lists e4m3fn and sets case_flavor (its codes are e4m3fnuz under `flavor: fnuz`)
//   element_bits       bits of one element: 16, 8, or 4 (two e2m1 codes a byte, the even element in the low nibble)
//   scale              none, fp32 scales, or E8M0 codes (2^(code - 127); the 0x00 / 0xFF edges are the case's)
//   block_rows         rows of a [rows, K] expert matrix that share a scale; 0: every row (one scale a matrix)
//   block_k            elements of a row along K that share a scale; 0: the whole row
//   plugin_abi         its enum moe_weight_format value in kernels/plugin/moe_plugin.h (never renumbered)
//
// Decode rule (the kernel contract): w[r][c] = decode(element code) * scale of the block holding (r, c), the
// product formed in fp32. Scales of one expert's [rows, K] matrix are a row-major grid of
// [ceil(rows / block_rows), ceil(K / block_k)] blocks, a dimension dropped where its block is 0 (per tensor: one
// scale; per channel: [rows]). w13 ([2I, H]) blocks its gate and up halves separately, so no block spans both
// (this changes the grid only where block_rows > 1, which therefore needs a chunked gate/up layout). E8M0-scaled
// (MX) formats need K % block_k == 0: an MX block is always whole.
#pragma once
#include <cstddef>
#include <cstdint>

#include "formats/dtype.hpp"
#include "formats/format_tags.hpp"

namespace moe {

enum class WeightFormat : std::uint8_t { bf16, fp16, fp8_tensor, fp8_channel, fp8_block, mxfp8, mxfp4 };
enum class ScaleKind : std::uint8_t { none, f32, e8m0 };

struct WeightFormatInfo {
  WeightFormat format;
  const char* name;
  const char* id_fragment;
  DType element;
  bool case_flavor;
  int element_bits;
  ScaleKind scale;
  std::int32_t block_rows;
  std::int32_t block_k;
  int plugin_abi;
};

// Row i describes WeightFormat(i) (checked below).
inline constexpr WeightFormatInfo kWeightFormats[] = {
    // format                  name           id        element        flavor bits  scale             rows  K   abi
    {WeightFormat::bf16,        "bf16",        "bf16",   DType::bf16,   false, 16, ScaleKind::none, 0,   0,   1},
    {WeightFormat::fp16,        "fp16",        "fp16",   DType::f16,    false, 16, ScaleKind::none, 0,   0,   2},
    {WeightFormat::fp8_tensor,  "fp8_tensor",  "fp8pt",  DType::e4m3fn, true,  8,  ScaleKind::f32,  0,   0,   3},
    {WeightFormat::fp8_channel, "fp8_channel", "fp8ch",  DType::e4m3fn, true,  8,  ScaleKind::f32,  1,   0,   4},
    {WeightFormat::fp8_block,   "fp8_block",   "fp8blk", DType::e4m3fn, true,  8,  ScaleKind::f32,  128, 128, 5},
    {WeightFormat::mxfp8,       "mxfp8",       "mxfp8",  DType::e4m3fn, false, 8,  ScaleKind::e8m0, 1,   32,  6},
    {WeightFormat::mxfp4,       "mxfp4",       "mxfp4",  DType::e2m1x2, false, 4,  ScaleKind::e8m0, 1,   32,  7},
};
inline constexpr std::size_t kWeightFormatCount = sizeof(kWeightFormats) / sizeof(kWeightFormats[0]);

constexpr const WeightFormatInfo& weight_format_info(WeightFormat f) {
  return kWeightFormats[static_cast<std::size_t>(f)];
}

// The element dtype stored for a case with this e4m3 flavour.
constexpr DType stored_element(const WeightFormatInfo& f, Fp8Flavor flavor) {
  return f.case_flavor && flavor == Fp8Flavor::fnuz ? DType::e4m3fnuz : f.element;
}
constexpr DType scale_dtype(const WeightFormatInfo& f) {
  return f.scale == ScaleKind::e8m0 ? DType::e8m0 : DType::f32;  // meaningless for ScaleKind::none
}
constexpr bool is_mx(const WeightFormatInfo& f) { return f.scale == ScaleKind::e8m0; }
// Stored bytes of one row of K elements.
constexpr std::int64_t row_bytes(const WeightFormatInfo& f, std::int64_t k) {
  return k * f.element_bits / 8;
}

// The scale grid of one expert's [rows, K] matrix; `halves` for w13 (its gate and up halves blocked separately).
constexpr std::int64_t blocks_of(std::int64_t n, std::int32_t block) {
  return block == 0 ? 1 : (n + block - 1) / block;
}
constexpr std::int64_t scale_grid_rows(const WeightFormatInfo& f, std::int64_t rows, bool halves) {
  return f.scale == ScaleKind::none ? 0
         : halves && f.block_rows != 0 ? 2 * blocks_of(rows / 2, f.block_rows)
                                       : blocks_of(rows, f.block_rows);
}
constexpr std::int64_t scale_grid_cols(const WeightFormatInfo& f, std::int64_t k) {
  return f.scale == ScaleKind::none ? 0 : blocks_of(k, f.block_k);
}
// The grid row holding matrix row r, and the grid column holding element c of a row.
constexpr std::int64_t scale_row_of(const WeightFormatInfo& f, std::int64_t rows, bool halves,
                                                    std::int64_t r) {
  return f.block_rows == 0 ? 0
         : halves && r >= rows / 2 ? blocks_of(rows / 2, f.block_rows) + (r - rows / 2) / f.block_rows
                                   : r / f.block_rows;
}
constexpr std::int64_t scale_col_of(const WeightFormatInfo& f, std::int64_t c) {
  return f.block_k == 0 ? 0 : c / f.block_k;
}
// The number of elements along K one scale covers in a row of K elements.
constexpr std::int64_t scale_block_k(const WeightFormatInfo& f, std::int64_t k) {
  return f.block_k == 0 ? k : f.block_k;
}

constexpr bool weight_format_rows_in_enum_order() {
  for (std::size_t i = 0; i < kWeightFormatCount; ++i)
    if (kWeightFormats[i].format != WeightFormat(i) || kWeightFormats[i].plugin_abi != int(i) + 1) return false;
  return true;
}
static_assert(weight_format_rows_in_enum_order(),
              "kWeightFormats row i must describe WeightFormat(i), with plugin ABI value i + 1 (append new formats)");

}  // namespace moe
