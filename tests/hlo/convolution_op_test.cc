// convolution: hand-computed cases, a sweep against a naive reference that
// materialises the dilated, padded input (a different route from the op's
// direct index arithmetic), integer saturation, text round trips and the
// verifier's errors.
#include <random>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "hlo/eval/interpreter.h"
#include "hlo/passes/lower_for_compute.h"
#include "hlo/text/parser.h"
#include "hlo/text/printer.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::hlo {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<double> AsDoubles(const Literal& l) {
  std::vector<double> v;
  for (int64_t i = 0; i < l.num_elements(); ++i) v.push_back(l.GetAsDouble(i));
  return v;
}

absl::StatusOr<Literal> EvalText(const std::string& text, const std::vector<Literal>& args) {
  auto module = ParseAndVerifyModule(text);
  if (!module.ok()) return module.status();
  return Evaluate(**module, args);
}

TEST(ConvolutionTest, StridedTwoByTwoSums) {
  std::vector<float> x(16);
  for (int i = 0; i < 16; ++i) x[i] = static_cast<float>(i);
  std::vector<float> k(4, 1.0f);
  ASSERT_OK_AND_ASSIGN(Literal out, EvalText(R"(HloModule m
ENTRY e {
  lhs = f32[1,4,4,1] parameter(0)
  rhs = f32[2,2,1,1] parameter(1)
  ROOT conv = f32[1,2,2,1] convolution(lhs, rhs), window={size=2x2 stride=2x2 pad=0_0x0_0 lhs_dilate=1x1 rhs_dilate=1x1}, dim_labels=b01f_01io->b01f, feature_group_count=1, batch_group_count=1, operand_precision={highest,highest}
})",
                                        {Literal::FromValues<float>({1, 4, 4, 1}, x),
                                         Literal::FromValues<float>({2, 2, 1, 1}, k)}));
  EXPECT_THAT(AsDoubles(out), ElementsAre(10, 18, 42, 50));
}

// A transposed convolution: lhs_dilate=2 and padding 1 turn [1,2,3] into
// [0,1,0,2,0,3,0]; the kernel [1,10] then gives p[i] + 10 p[i+1].
TEST(ConvolutionTest, LhsDilationIsATransposedConvolution) {
  ASSERT_OK_AND_ASSIGN(Literal out, EvalText(R"(HloModule m
ENTRY e {
  lhs = f32[1,3,1] parameter(0)
  rhs = f32[2,1,1] parameter(1)
  ROOT conv = f32[1,6,1] convolution(lhs, rhs), window={size=2 pad=1_1 lhs_dilate=2}, dim_labels=b0f_0io->b0f
})",
                                        {Literal::FromValues<float>({1, 3, 1}, {1, 2, 3}),
                                         Literal::FromValues<float>({2, 1, 1}, {1, 10})}));
  EXPECT_THAT(AsDoubles(out), ElementsAre(10, 1, 20, 2, 30, 3));
}

// Atrous (rhs_dilate=2) with a negative low padding that drops input 0.
TEST(ConvolutionTest, RhsDilationAndNegativePadding) {
  ASSERT_OK_AND_ASSIGN(Literal out, EvalText(R"(HloModule m
ENTRY e {
  lhs = f32[1,1,6] parameter(0)
  rhs = f32[1,1,2] parameter(1)
  ROOT conv = f32[1,1,3] convolution(lhs, rhs), window={size=2 pad=-1_0 rhs_dilate=2}, dim_labels=bf0_oi0->bf0
})",
                                        {Literal::FromValues<float>({1, 1, 6}, {1, 2, 3, 4, 5, 6}),
                                         Literal::FromValues<float>({1, 1, 2}, {1, 100})}));
  // Inputs [2,3,4,5,6]; out[i] = in[i] + 100 in[i+2].
  EXPECT_THAT(AsDoubles(out), ElementsAre(402, 503, 604));
}

// rhs_reversal reads the kernel back to front: [1,10] acts as [10,1].
TEST(ConvolutionTest, WindowReversal) {
  const char* text = R"(HloModule m
ENTRY e {
  lhs = f32[1,3,1] parameter(0)
  rhs = f32[2,1,1] parameter(1)
  ROOT conv = f32[1,2,1] convolution(lhs, rhs), window={size=2 rhs_reversal=1}, dim_labels=b0f_0io->b0f
})";
  ASSERT_OK_AND_ASSIGN(Literal out, EvalText(text, {Literal::FromValues<float>({1, 3, 1}, {1, 2, 3}),
                                               Literal::FromValues<float>({2, 1, 1}, {1, 10})}));
  EXPECT_THAT(AsDoubles(out), ElementsAre(12, 23));
  ASSERT_OK_AND_ASSIGN(auto module, ParseAndVerifyModule(text));
  EXPECT_THAT(PrintModule(*module), HasSubstr("window={size=2 rhs_reversal=1}"));
  // reduce-window has no kernel to reverse.
  auto rw = ParseAndVerifyModule(R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[3] reduce-window(x, z), window={size=2 rhs_reversal=1}, to_apply=add
})");
  ASSERT_FALSE(rw.ok());
  EXPECT_THAT(rw.status().message(), HasSubstr("reduce-window does not take rhs_reversal"));
}

TEST(ConvolutionTest, IntegerResultsSaturate) {
  ASSERT_OK_AND_ASSIGN(Literal out, EvalText(R"(HloModule m
ENTRY e {
  lhs = s8[1,2,1] parameter(0)
  rhs = s8[1,1,1] parameter(1)
  ROOT conv = s8[1,2,1] convolution(lhs, rhs), window={size=1}, dim_labels=b0f_0io->b0f
})",
                                        {Literal::FromValues<int8_t>({1, 2, 1}, {100, -100}),
                                         Literal::FromValues<int8_t>({1, 1, 1}, {2})}));
  EXPECT_THAT(AsDoubles(out), ElementsAre(127, -128));
}

// ------------------------------------------------ sweep against reference --

struct Config {
  std::string lhs_labels, rhs_labels, out_labels;
  int64_t batch, in_features, out_features, groups, batch_groups;
  int64_t in[2], k[2], stride[2], lo[2], hi[2], ld[2], rd[2];
};

int64_t OutSize(const Config& c, int s) {
  int64_t dilated = (c.in[s] - 1) * c.ld[s] + 1;
  int64_t padded = dilated + c.lo[s] + c.hi[s];
  int64_t span = (c.k[s] - 1) * c.rd[s] + 1;
  return padded < span ? 0 : (padded - span) / c.stride[s] + 1;
}

// Dims of a tensor laid out by `labels` from its canonical (role) sizes:
// role 0 = 'b'/'o', role 1 = 'f'/'i', then spatial 0, 1.
std::vector<int64_t> LaidOut(const std::string& labels, char r0, char r1,
                             const std::vector<int64_t>& canonical) {
  std::vector<int64_t> dims;
  for (char c : labels) {
    dims.push_back(c == r0 ? canonical[0] : c == r1 ? canonical[1] : canonical[2 + (c - '0')]);
  }
  return dims;
}

// Linear index of canonical index `idx` in a tensor laid out by `labels`.
int64_t IndexOf(const std::string& labels, char r0, char r1, const std::vector<int64_t>& canonical,
                const std::vector<int64_t>& idx) {
  std::vector<int64_t> dims = LaidOut(labels, r0, r1, canonical);
  int64_t linear = 0;
  for (size_t d = 0; d < labels.size(); ++d) {
    char c = labels[d];
    int64_t i = c == r0 ? idx[0] : c == r1 ? idx[1] : idx[2 + (c - '0')];
    linear = linear * dims[d] + i;
  }
  return linear;
}

// The reference: per batch and feature, build the lhs-dilated, padded (and,
// for negative padding, cropped) plane, then slide the dilated kernel.
std::vector<double> Reference(const Config& c, const std::vector<double>& lhs,
                              const std::vector<double>& rhs) {
  const int64_t out0 = OutSize(c, 0), out1 = OutSize(c, 1);
  const int64_t cig = c.in_features / c.groups;
  const int64_t out_batch = c.batch / c.batch_groups;
  std::vector<int64_t> lcanon = {c.batch, c.in_features, c.in[0], c.in[1]};
  std::vector<int64_t> rcanon = {c.out_features, cig, c.k[0], c.k[1]};
  std::vector<int64_t> ocanon = {out_batch, c.out_features, out0, out1};
  int64_t p[2];
  for (int s = 0; s < 2; ++s) p[s] = (c.in[s] - 1) * c.ld[s] + 1 + c.lo[s] + c.hi[s];
  std::vector<double> out(static_cast<size_t>(out_batch * c.out_features * out0 * out1));
  for (int64_t b = 0; b < out_batch; ++b) {
    for (int64_t o = 0; o < c.out_features; ++o) {
      const int64_t g = o / (c.out_features / c.groups);
      const int64_t bg = o / (c.out_features / c.batch_groups);
      const int64_t in_b = bg * out_batch + b;
      for (int64_t ci = 0; ci < cig; ++ci) {
        const int64_t in_f = g * cig + ci;
        // The padded plane of this (batch, feature).
        std::vector<double> plane(static_cast<size_t>(std::max<int64_t>(p[0], 0) *
                                                      std::max<int64_t>(p[1], 0)));
        for (int64_t y = 0; y < p[0]; ++y) {
          for (int64_t x = 0; x < p[1]; ++x) {
            int64_t dy = y - c.lo[0], dx = x - c.lo[1];
            if (dy < 0 || dx < 0 || dy % c.ld[0] || dx % c.ld[1]) continue;
            int64_t sy = dy / c.ld[0], sx = dx / c.ld[1];
            if (sy >= c.in[0] || sx >= c.in[1]) continue;
            plane[static_cast<size_t>(y * p[1] + x)] =
                lhs[static_cast<size_t>(IndexOf(c.lhs_labels, 'b', 'f', lcanon, {in_b, in_f, sy, sx}))];
          }
        }
        for (int64_t y = 0; y < out0; ++y) {
          for (int64_t x = 0; x < out1; ++x) {
            double sum = 0;
            for (int64_t ky = 0; ky < c.k[0]; ++ky) {
              for (int64_t kx = 0; kx < c.k[1]; ++kx) {
                int64_t py = y * c.stride[0] + ky * c.rd[0], px = x * c.stride[1] + kx * c.rd[1];
                sum += plane[static_cast<size_t>(py * p[1] + px)] *
                       rhs[static_cast<size_t>(IndexOf(c.rhs_labels, 'o', 'i', rcanon, {o, ci, ky, kx}))];
              }
            }
            out[static_cast<size_t>(IndexOf(c.out_labels, 'b', 'f', ocanon, {b, o, y, x}))] += sum;
          }
        }
      }
    }
  }
  return out;
}

std::string ShapeText(const std::string& type, const std::vector<int64_t>& dims) {
  std::string s = type + "[";
  for (size_t i = 0; i < dims.size(); ++i) s += absl::StrCat(i ? "," : "", dims[i]);
  return s + "]";
}

void CheckAgainstReference(const Config& c, const std::string& type) {
  SCOPED_TRACE(absl::StrCat(c.lhs_labels, "_", c.rhs_labels, "->", c.out_labels, " groups ",
                            c.groups, " batch groups ", c.batch_groups, " ", type));
  const int64_t cig = c.in_features / c.groups;
  std::vector<int64_t> ldims = LaidOut(c.lhs_labels, 'b', 'f', {c.batch, c.in_features, c.in[0], c.in[1]});
  std::vector<int64_t> rdims = LaidOut(c.rhs_labels, 'o', 'i', {c.out_features, cig, c.k[0], c.k[1]});
  std::vector<int64_t> odims = LaidOut(c.out_labels, 'b', 'f',
                                       {c.batch / c.batch_groups, c.out_features, OutSize(c, 0), OutSize(c, 1)});
  std::string text = absl::StrCat(
      "HloModule m\nENTRY e {\n  lhs = ", ShapeText(type, ldims), " parameter(0)\n  rhs = ",
      ShapeText(type, rdims), " parameter(1)\n  ROOT conv = ", ShapeText(type, odims),
      " convolution(lhs, rhs), window={size=", c.k[0], "x", c.k[1], " stride=", c.stride[0], "x",
      c.stride[1], " pad=", c.lo[0], "_", c.hi[0], "x", c.lo[1], "_", c.hi[1], " lhs_dilate=",
      c.ld[0], "x", c.ld[1], " rhs_dilate=", c.rd[0], "x", c.rd[1], "}, dim_labels=",
      c.lhs_labels, "_", c.rhs_labels, "->", c.out_labels, ", feature_group_count=", c.groups,
      ", batch_group_count=", c.batch_groups, "\n}\n");
  auto module = ParseAndVerifyModule(text);
  ASSERT_TRUE(module.ok()) << module.status() << "\n" << text;
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> small(-4, 4);
  auto fill = [&](const std::vector<int64_t>& dims, std::vector<double>& values) {
    Literal l(Shape(*PrimitiveTypeFromName(type), dims));
    for (int64_t i = 0; i < l.num_elements(); ++i) {
      // Small integers: exact in every type, so all types match exactly.
      l.SetFromDouble(i, small(rng));
      values.push_back(l.GetAsDouble(i));
    }
    return l;
  };
  std::vector<double> lv, rv;
  std::vector<Literal> args;
  args.push_back(fill(ldims, lv));
  args.push_back(fill(rdims, rv));
  ASSERT_OK_AND_ASSIGN(Literal out, Evaluate(**module, args));
  // The reference is exact; the op rounds once into the result type.
  std::vector<double> expected = Reference(c, lv, rv);
  Literal rounded(out.shape());
  for (int64_t i = 0; i < rounded.num_elements(); ++i) {
    rounded.SetFromDouble(i, expected[static_cast<size_t>(i)]);
  }
  EXPECT_EQ(AsDoubles(out), AsDoubles(rounded));
}

TEST(ConvolutionTest, MatchesTheReferenceAcrossLayoutsWindowsAndGroups) {
  const Config configs[] = {
      // lhs, rhs, out labels; batch, in f, out f, groups, batch groups;
      // in, k, stride, lo, hi, lhs_dilate, rhs_dilate
      {"b01f", "01io", "b01f", 2, 3, 4, 1, 1, {5, 6}, {3, 2}, {1, 1}, {0, 0}, {0, 0}, {1, 1}, {1, 1}},
      {"bf01", "oi01", "bf01", 1, 2, 3, 1, 1, {7, 5}, {3, 3}, {2, 2}, {1, 1}, {1, 0}, {1, 1}, {1, 1}},
      {"01bf", "io01", "f01b", 2, 2, 2, 1, 1, {4, 4}, {2, 3}, {1, 2}, {-1, 2}, {1, -1}, {1, 1}, {2, 1}},
      {"b01f", "01io", "b01f", 1, 2, 2, 1, 1, {3, 4}, {3, 2}, {1, 1}, {2, 1}, {2, 1}, {2, 3}, {1, 1}},
      // Grouped and depthwise.
      {"b01f", "01io", "b01f", 2, 4, 6, 2, 1, {5, 4}, {2, 2}, {1, 1}, {1, 0}, {0, 1}, {1, 1}, {1, 2}},
      {"bf01", "oi01", "bf01", 1, 3, 6, 3, 1, {4, 5}, {3, 1}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
      // Batch groups (the weight gradient of a grouped convolution).
      {"f01b", "i01o", "01bf", 4, 2, 6, 1, 2, {4, 3}, {2, 2}, {1, 1}, {0, 0}, {1, 0}, {1, 1}, {1, 1}},
      {"b01f", "01io", "b01f", 6, 1, 3, 1, 3, {3, 3}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
      // An output with an empty spatial dim.
      {"b01f", "01io", "b01f", 1, 1, 1, 1, 1, {2, 3}, {3, 1}, {1, 1}, {0, 0}, {0, 0}, {1, 1}, {1, 1}},
  };
  for (const Config& c : configs) {
    for (const char* type : {"f32", "f64", "bf16", "f16", "s32", "u8"}) {
      if (std::string(type) == "u8") continue;  // negative test values
      CheckAgainstReference(c, type);
    }
  }
}

// ------------------------------------------------------ text and verifier --

TEST(ConvolutionTest, PrintsAndParsesBack) {
  const char* text = R"(HloModule m
ENTRY e {
  x = f32[8,3,9,9] parameter(0)
  k = f32[3,3,3,4] parameter(1)
  ROOT c = f32[8,4,3,7] convolution(x, k), window={size=3x3 stride=2x1 pad=0_-1x1_-1 lhs_dilate=1x1 rhs_dilate=1x1}, dim_labels=bf01_01io->bf01, feature_group_count=1, precision_config={highest,highest}
})";
  ASSERT_OK_AND_ASSIGN(auto module, ParseAndVerifyModule(text));
  std::string printed = PrintModule(*module);
  EXPECT_THAT(printed, HasSubstr("window={size=3x3 stride=2x1 pad=0_-1x1_-1}"));
  EXPECT_THAT(printed, HasSubstr("dim_labels=bf01_01io->bf01"));
  ASSERT_OK_AND_ASSIGN(auto again, ParseAndVerifyModule(printed));
  EXPECT_EQ(PrintModule(*again), printed);
}

std::string VerifyError(const std::string& root) {
  std::string text = absl::StrCat("HloModule m\nENTRY e {\n  x = f32[2,6,6,4] parameter(0)\n"
                                  "  k = f32[3,3,2,8] parameter(1)\n  ROOT ",
                                  root, "\n}\n");
  auto module = ParseAndVerifyModule(text);
  return module.ok() ? "ok" : std::string(module.status().message());
}

TEST(ConvolutionTest, VerifierNamesTheInstructionAndTheDimension) {
  EXPECT_EQ(VerifyError("c = f32[2,4,4,8] convolution(x, k), window={size=3x3}, "
                        "dim_labels=b01f_01io->b01f, feature_group_count=2"),
            "ok");
  std::string e = VerifyError("c = f32[2,4,4,8] convolution(x, k), window={size=3x3}, "
                              "dim_labels=b01f_01io->b01f");
  EXPECT_THAT(e, HasSubstr("lhs feature dim 3 has size 4"));
  EXPECT_THAT(e, HasSubstr("kernel dim 2: 2"));
  EXPECT_THAT(e, HasSubstr("%c"));
  EXPECT_THAT(VerifyError("c = f32[2,4,4,8] convolution(x, k), window={size=3x2}, "
                          "dim_labels=b01f_01io->b01f, feature_group_count=2"),
              HasSubstr("window dimension 1 has size 2 but the kernel's spatial dim 1 has size 3"));
  EXPECT_THAT(VerifyError("c = f32[2,4,4,8] convolution(x, k), window={size=3x3}, "
                          "dim_labels=b01f_01oo->b01f, feature_group_count=2"),
              HasSubstr("dim_labels give kernel the label 'o' twice (dims 2 and 3)"));
  EXPECT_THAT(VerifyError("c = f32[2,4,4,8] convolution(x, k), window={size=3x3}, "
                          "dim_labels=b01f_01io->b0f, feature_group_count=2"),
              HasSubstr("dim_labels give output 3 labels ('b0f') but it has rank 4"));
  EXPECT_THAT(VerifyError("c = f32[2,4,4,8] convolution(x, k), window={size=3}, "
                          "dim_labels=b01f_01io->b01f, feature_group_count=2"),
              HasSubstr("window has 1 dimensions but dim_labels give 2 spatial dimensions"));
  EXPECT_THAT(VerifyError("c = f32[1,4,4,8] convolution(x, k), window={size=3x3}, "
                          "dim_labels=b01f_01io->b01f, feature_group_count=2, batch_group_count=3"),
              HasSubstr("has feature_group_count 2 and batch_group_count 3; at most one"));
  // The declared shape is checked against the inferred one.
  EXPECT_NE(VerifyError("c = f32[2,5,4,8] convolution(x, k), window={size=3x3}, "
                        "dim_labels=b01f_01io->b01f, feature_group_count=2"),
            "ok");
}

// A pred operand beside a numeric one is its 0/1 values (XLA's importer
// converts it); LowerForCompute makes the convert explicit, and the
// convolution equals the one of the converted kernel. A pred result, or two
// pred operands, stay refused.
TEST(ConvolutionTest, PredOperandReadsAsZeroOrOne) {
  const std::string conv = R"(HloModule m
ENTRY e {
  x = f32[1,5,1] parameter(0)
  k = pred[3,1,1] constant({ { {1} }, { {0} }, { {1} } })
  ROOT c = f32[1,5,1] convolution(x, k), window={size=3 pad=1_1}, dim_labels=b0f_0io->b0f
})";
  ASSERT_OK_AND_ASSIGN(auto module, ParseAndVerifyModule(conv));
  ASSERT_OK(LowerForCompute(*module));
  EXPECT_THAT(PrintModule(*module), HasSubstr("f32[3,1,1] convert(%k)"));
  const Literal x = Literal::FromValues<float>({1, 5, 1}, {1, 2, 3, 4, 5});
  ASSERT_OK_AND_ASSIGN(Literal lowered, Evaluate(*module, {x}));
  ASSERT_OK_AND_ASSIGN(Literal as_written, EvalText(conv, {x}));
  // Each output adds its left and right neighbours.
  EXPECT_THAT(AsDoubles(lowered), ElementsAre(2, 4, 6, 8, 4));
  EXPECT_EQ(lowered, as_written);
  auto pred_result = ParseAndVerifyModule(R"(HloModule m
ENTRY e {
  x = f32[1,5,1] parameter(0)
  k = pred[3,1,1] parameter(1)
  ROOT c = pred[1,5,1] convolution(x, k), window={size=3 pad=1_1}, dim_labels=b0f_0io->b0f
})");
  EXPECT_THAT(pred_result.status().message(), HasSubstr("a pred operand needs a numeric one"));
}

}  // namespace
}  // namespace sharc::hlo
