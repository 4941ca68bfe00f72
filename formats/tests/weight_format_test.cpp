// The format tables against what docs/export.md and the plugin ABI document: stored dtypes, scale
// grids worked by hand for odd sizes, the e4m3 flavour rule, safetensors names and the ABI's numbers.
#include "formats/weight_format.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace moe {
namespace {

const WeightFormatInfo& info(WeightFormat f) { return weight_format_info(f); }

}  // namespace

TEST(WeightFormatTable, NamesAndIdFragmentsAreTheCaseSchemaSpellings) {
  const char* names[] = {"bf16", "fp16", "fp8_tensor", "fp8_channel", "fp8_block", "mxfp8", "mxfp4"};
  const char* ids[] = {"bf16", "fp16", "fp8pt", "fp8ch", "fp8blk", "mxfp8", "mxfp4"};
  ASSERT_EQ(kWeightFormatCount, std::size(names));
  std::set<std::string> seen;
  for (std::size_t i = 0; i < kWeightFormatCount; ++i) {
    EXPECT_STREQ(kWeightFormats[i].name, names[i]);
    EXPECT_STREQ(kWeightFormats[i].id_fragment, ids[i]);
    EXPECT_TRUE(seen.insert(kWeightFormats[i].id_fragment).second) << "two formats share an id fragment";
  }
}

TEST(WeightFormatTable, PluginAbiValuesAreTheDocumentedOnes) {
  // kernels/plugin/moe_plugin.h: MOE_WEIGHT_BF16 = 1 ... MOE_WEIGHT_MXFP4 = 7, never renumbered.
  EXPECT_EQ(info(WeightFormat::bf16).plugin_abi, 1);
  EXPECT_EQ(info(WeightFormat::fp8_channel).plugin_abi, 4);
  EXPECT_EQ(info(WeightFormat::mxfp4).plugin_abi, 7);
  EXPECT_EQ(dtype_info(DType::e2m1x2).plugin_abi, 9);
  EXPECT_EQ(dtype_info(DType::i32).plugin_abi, 10);
}

TEST(WeightFormatTable, StoredElementFollowsTheFlavourOnlyForFp8Formats) {
  EXPECT_EQ(stored_element(info(WeightFormat::fp8_block), Fp8Flavor::fnuz), DType::e4m3fnuz);
  EXPECT_EQ(stored_element(info(WeightFormat::fp8_tensor), Fp8Flavor::fn), DType::e4m3fn);
  EXPECT_EQ(stored_element(info(WeightFormat::mxfp8), Fp8Flavor::fnuz), DType::e4m3fn);  // OCP MX is e4m3 fn
  EXPECT_EQ(stored_element(info(WeightFormat::mxfp4), Fp8Flavor::fnuz), DType::e2m1x2);
  EXPECT_EQ(stored_element(info(WeightFormat::bf16), Fp8Flavor::fnuz), DType::bf16);
  for (const WeightFormatInfo& f : kWeightFormats) {
    // bits of one element agree with the dtype table, and a K of 128 fills whole bytes
    EXPECT_EQ(f.element_bits, dtype_info(f.element).element_bits) << f.name;
    EXPECT_EQ(row_bytes(f, 128) * 8, 128 * f.element_bits) << f.name;
  }
  EXPECT_EQ(row_bytes(info(WeightFormat::mxfp4), 2880), 1440);  // gpt-oss hidden: two codes a byte
}

TEST(WeightFormatTable, ScaleGridsOfTheDocumentedLayouts) {
  // docs/export.md: fp8_tensor [E]; fp8_channel [E, rows]; fp8_block [E, 2*ceil(I/128), ceil(H/128)] for w13 and
  // [E, ceil(H/128), ceil(I/128)] for w2; MX [E, rows, K/32]. I = 320, H = 200 (not multiples of 128).
  const WeightFormatInfo &t = info(WeightFormat::fp8_tensor), &c = info(WeightFormat::fp8_channel),
                         &b = info(WeightFormat::fp8_block), &m = info(WeightFormat::mxfp4);
  EXPECT_EQ(scale_grid_rows(t, 640, true) * scale_grid_cols(t, 200), 1);
  EXPECT_EQ(scale_grid_rows(c, 640, true), 640);
  EXPECT_EQ(scale_grid_cols(c, 200), 1);
  EXPECT_EQ(scale_grid_rows(b, 640, true), 6);   // 2 * ceil(320 / 128)
  EXPECT_EQ(scale_grid_rows(b, 640, false), 5);  // one matrix of 640 rows: ceil(640 / 128)
  EXPECT_EQ(scale_grid_cols(b, 200), 2);
  EXPECT_EQ(scale_grid_rows(m, 640, true), 640);
  EXPECT_EQ(scale_grid_cols(m, 256), 8);
  EXPECT_EQ(scale_grid_rows(info(WeightFormat::bf16), 640, true), 0);
}

TEST(WeightFormatTable, ScaleOfARowAndColumn) {
  const WeightFormatInfo& b = info(WeightFormat::fp8_block);
  // w13 with I = 320: gate rows 0..319 in blocks 0, 1, 2 (rows 256..319 the short third), up rows from block 3.
  EXPECT_EQ(scale_row_of(b, 640, true, 0), 0);
  EXPECT_EQ(scale_row_of(b, 640, true, 319), 2);
  EXPECT_EQ(scale_row_of(b, 640, true, 320), 3);  // the up half starts a block of its own
  EXPECT_EQ(scale_row_of(b, 640, true, 639), 5);
  EXPECT_EQ(scale_row_of(b, 640, false, 320), 2);  // w2 is one matrix
  EXPECT_EQ(scale_col_of(b, 127), 0);
  EXPECT_EQ(scale_col_of(b, 199), 1);
  EXPECT_EQ(scale_block_k(b, 200), 128);
  const WeightFormatInfo& c = info(WeightFormat::fp8_channel);
  EXPECT_EQ(scale_row_of(c, 640, true, 321), 321);
  EXPECT_EQ(scale_col_of(c, 199), 0);
  EXPECT_EQ(scale_block_k(c, 200), 200);  // one scale for the whole row
  EXPECT_EQ(scale_row_of(info(WeightFormat::fp8_tensor), 640, true, 639), 0);
  EXPECT_EQ(scale_col_of(info(WeightFormat::mxfp8), 95), 2);
}

TEST(WeightFormatTable, ScaleKindsAndDtypes) {
  EXPECT_EQ(info(WeightFormat::fp16).scale, ScaleKind::none);
  EXPECT_EQ(scale_dtype(info(WeightFormat::fp8_channel)), DType::f32);
  EXPECT_EQ(scale_dtype(info(WeightFormat::mxfp8)), DType::e8m0);
  EXPECT_TRUE(is_mx(info(WeightFormat::mxfp4)));
  EXPECT_FALSE(is_mx(info(WeightFormat::fp8_block)));
}

TEST(DTypeTable, SafetensorsNamesAndSizes) {
  // https://github.com/huggingface/safetensors dtypes; the others are stored as U8 and named in the metadata.
  EXPECT_STREQ(dtype_info(DType::bf16).safetensors, "BF16");
  EXPECT_STREQ(dtype_info(DType::e4m3fn).safetensors, "F8_E4M3");
  EXPECT_STREQ(dtype_info(DType::e5m2).safetensors, "F8_E5M2");
  EXPECT_EQ(dtype_info(DType::e4m3fnuz).safetensors, nullptr);
  EXPECT_EQ(dtype_info(DType::e8m0).safetensors, nullptr);
  EXPECT_EQ(dtype_info(DType::e2m1x2).safetensors, nullptr);
  EXPECT_EQ(dtype_size(DType::f32), 4u);
  EXPECT_EQ(dtype_size(DType::bf16), 2u);
  EXPECT_EQ(dtype_size(DType::e2m1x2), 1u);
  EXPECT_EQ(dtype_name(DType::e5m2fnuz), "e5m2fnuz");
  EXPECT_EQ(parse_dtype("e2m1x2"), DType::e2m1x2);
  EXPECT_FALSE(parse_dtype("e2m1"));
  EXPECT_EQ(dtype_names_list(), "f32, f16, bf16, i32, u8, e4m3fn, e4m3fnuz, e5m2, e5m2fnuz, e8m0, e2m1x2");
}

}  // namespace moe
