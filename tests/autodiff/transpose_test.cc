// Every transpose rule by the dot-product test: for a program L linear in its
// first k parameters (the rest are fixed residuals), the transpose T must
// satisfy <T(v), w> = <v, L(w)> for random w and v. Also checks the
// transposed program prints, re-parses and verifies, and that non-linear
// programs are refused with the op named.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "autodiff/linearize.h"
#include "tests/autodiff/autodiff_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::autodiff {
namespace {

using ::testing::HasSubstr;

struct LinearCase {
  std::string name;
  std::string text;   // a module; its entry is linear in the first `linear` parameters
  int64_t linear = 1;
};

void PrintTo(const LinearCase& c, std::ostream* os) { *os << c.name; }

constexpr char kHeader[] = R"(HloModule m, mesh={clients=2}
%add {
  %a = f64[] parameter(0)
  %b = f64[] parameter(1)
  ROOT %s = f64[] add(%a, %b)
}
%overwrite {
  %current = f64[] parameter(0)
  ROOT %update = f64[] parameter(1)
}
)";

std::vector<LinearCase> Cases() {
  auto entry = [](const std::string& body) {
    return absl::StrCat(kHeader, "ENTRY %main {\n", body, "}\n");
  };
  return {
      {"add", entry("  %a = f64[3] parameter(0)\n  %b = f64[3] parameter(1)\n"
                    "  ROOT %r = f64[3] add(%a, %b)\n"), 2},
      {"subtract_negate", entry("  %a = f64[3] parameter(0)\n  %b = f64[3] parameter(1)\n"
                                "  %n = f64[3] negate(%b)\n  ROOT %r = f64[3] subtract(%a, %n)\n"), 2},
      {"scale", entry("  %a = f64[3] parameter(0)\n  %r0 = f64[3] parameter(1)\n"
                      "  %m = f64[3] multiply(%r0, %a)\n  ROOT %r = f64[3] divide(%m, %r0)\n")},
      {"select", entry("  %a = f64[3] parameter(0)\n  %b = f64[3] parameter(1)\n"
                       "  %p = pred[3] constant({true, false, true})\n"
                       "  ROOT %r = f64[3] select(%p, %a, %b)\n"), 2},
      {"convert_copy", entry("  %a = f32[3] parameter(0)\n  %c = f32[3] copy(%a)\n"
                             "  ROOT %r = f64[3] convert(%c)\n")},
      {"broadcast", entry("  %a = f64[2,3] parameter(0)\n"
                          "  ROOT %r = f64[2,4,3] broadcast(%a), dimensions={0,2}\n")},
      {"reshape_transpose", entry("  %a = f64[2,3,4] parameter(0)\n"
                                  "  %t = f64[4,2,3] transpose(%a), dimensions={2,0,1}\n"
                                  "  ROOT %r = f64[8,3] reshape(%t)\n")},
      {"slice", entry("  %a = f64[7,4] parameter(0)\n"
                      "  ROOT %r = f64[3,2] slice(%a), slice={[1:7:2], [0:4:3]}\n")},
      {"pad", entry("  %a = f64[3,2] parameter(0)\n  %v = f64[] parameter(1)\n"
                    "  ROOT %r = f64[9,3] pad(%a, %v), padding=1_3_1x0_1_0\n"), 2},
      {"concatenate_reverse", entry("  %a = f64[2,3] parameter(0)\n  %b = f64[2,1] parameter(1)\n"
                                    "  %c = f64[2,4] concatenate(%a, %b), dimensions={1}\n"
                                    "  ROOT %r = f64[2,4] reverse(%c), dimensions={0,1}\n"), 2},
      {"dynamic_slice", entry("  %a = f64[5,3] parameter(0)\n  %i = s32[] constant(4)\n"
                              "  %j = s32[] constant(1)\n"
                              "  ROOT %r = f64[2,2] dynamic-slice(%a, %i, %j), dynamic_slice_sizes={2,2}\n")},
      {"dynamic_update_slice", entry("  %a = f64[5] parameter(0)\n  %u = f64[2] parameter(1)\n"
                                     "  %i = s32[] constant(1)\n"
                                     "  ROOT %r = f64[5] dynamic-update-slice(%a, %u, %i)\n"), 2},
      {"gather", entry("  %a = f64[5,2] parameter(0)\n  %i = s32[3,1] constant({{0}, {3}, {0}})\n"
                       "  ROOT %r = f64[3,2] gather(%a, %i), offset_dims={1}, collapsed_slice_dims={0}, "
                       "start_index_map={0}, index_vector_dim=1, slice_sizes={1,2}\n")},
      {"scatter_add", entry("  %a = f64[4,2] parameter(0)\n  %u = f64[2,2] parameter(1)\n"
                            "  %i = s32[2,1] constant({{1}, {1}})\n"
                            "  ROOT %r = f64[4,2] scatter(%a, %i, %u), update_window_dims={1}, "
                            "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
                            "index_vector_dim=1, to_apply=%add\n"), 2},
      {"scatter_add_out_of_bounds",
       entry("  %a = f64[4,2] parameter(0)\n  %u = f64[3,2] parameter(1)\n"
             "  %i = s32[3,1] constant({{1}, {5}, {-1}})\n"
             "  ROOT %r = f64[4,2] scatter(%a, %i, %u), update_window_dims={1}, "
             "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
             "index_vector_dim=1, to_apply=%add\n"), 2},
      // Overwrite: a duplicate index, one out of bounds, a window of 2 rows
      // that fits at row 2 but not at row 3.
      {"scatter_overwrite",
       entry("  %a = f64[4,3] parameter(0)\n  %u = f64[4,2,3] parameter(1)\n"
             "  %i = s32[4] constant({2, 0, 3, 0})\n"
             "  ROOT %r = f64[4,3] scatter(%a, %i, %u), update_window_dims={1,2}, "
             "inserted_window_dims={}, scatter_dims_to_operand_dims={0}, "
             "index_vector_dim=1, to_apply=%overwrite\n"), 2},
      {"scatter_overwrite_runtime_indices",
       entry("  %a = f64[5] parameter(0)\n  %u = f64[4] parameter(1)\n"
             "  %n = s32[4] parameter(2)\n"
             "  %c = s32[4] constant({1, 5, 1, 2})\n"
             "  %i = s32[4] add(%n, %c)\n"
             "  ROOT %r = f64[5] scatter(%a, %i, %u), update_window_dims={}, "
             "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
             "index_vector_dim=1, to_apply=%overwrite\n"), 2},
      {"gather_out_of_bounds",
       entry("  %a = f64[5,3] parameter(0)\n  %i = s32[3,2] constant({{0, 2}, {7, 0}, {-2, 1}})\n"
             "  ROOT %r = f64[3,2] gather(%a, %i), offset_dims={1}, collapsed_slice_dims={0}, "
             "start_index_map={0,1}, index_vector_dim=1, slice_sizes={1,2}\n")},
      {"gather_runtime_indices",
       entry("  %a = f64[5,3] parameter(0)\n  %n = s32[3] parameter(1)\n"
             "  %c = s32[3] constant({6, 2, -3})\n  %i = s32[3] add(%n, %c)\n"
             "  ROOT %r = f64[3,3] gather(%a, %i), offset_dims={1}, collapsed_slice_dims={0}, "
             "start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}\n")},
      {"pad_negative", entry("  %a = f64[6,3] parameter(0)\n  %v = f64[] parameter(1)\n"
                             "  ROOT %r = f64[10,2] pad(%a, %v), padding=-2_1_1x1_-2\n"), 2},
      {"dot_lhs", entry("  %a = f64[3,2,4] parameter(0)\n  %b = f64[2,3,5] parameter(1)\n"
                        "  ROOT %r = f64[2,4,5] dot(%a, %b), lhs_batch_dims={1}, "
                        "lhs_contracting_dims={0}, rhs_batch_dims={0}, rhs_contracting_dims={1}\n")},
      {"dot_rhs", entry("  %b = f64[2,3,5] parameter(0)\n  %a = f64[3,2,4] parameter(1)\n"
                        "  ROOT %r = f64[2,4,5] dot(%a, %b), lhs_batch_dims={1}, "
                        "lhs_contracting_dims={0}, rhs_batch_dims={0}, rhs_contracting_dims={1}\n")},
      {"reduce_sum", entry("  %a = f64[2,3,4] parameter(0)\n  %z = f64[] parameter(1)\n"
                           "  ROOT %r = f64[3] reduce(%a, %z), dimensions={0,2}, to_apply=%add\n"), 2},
      {"reduce_window", entry("  %a = f64[7,5] parameter(0)\n  %z = f64[] parameter(1)\n"
                              "  ROOT %r = f64[3,5] reduce-window(%a, %z), window={size=3x2 "
                              "stride=2x1 pad=0_1x1_0}, to_apply=%add\n"), 2},
      {"reduce_window_dilated",
       entry("  %a = f64[5,4] parameter(0)\n  %z = f64[] parameter(1)\n"
             "  ROOT %r = f64[5,3] reduce-window(%a, %z), window={size=2x2 stride=2x1 pad=0_1x1_0 "
             "lhs_dilate=2x1 rhs_dilate=1x2}, to_apply=%add\n"), 2},
      {"reduce_window_negative_padding",
       entry("  %a = f64[9,3] parameter(0)\n  %z = f64[] parameter(1)\n"
             "  ROOT %r = f64[3,2] reduce-window(%a, %z), window={size=3x2 stride=2x2 "
             "pad=-2_1x0_-1 lhs_dilate=1x2}, to_apply=%add\n"), 2},
      {"tuple_gte", entry("  %a = f64[3] parameter(0)\n  %b = f64[3] parameter(1)\n"
                          "  %t = (f64[3], f64[3]) tuple(%a, %b)\n"
                          "  %x = f64[3] get-tuple-element(%t), index=1\n"
                          "  %y = f64[3] get-tuple-element(%t), index=0\n"
                          "  ROOT %r = (f64[3], f64[3], f64[3]) tuple(%x, %y, %x)\n"), 2},
      {"sharding", entry("  %a = f64[4] parameter(0)\n"
                         "  ROOT %r = f64[4] custom-call(%a), custom_call_target=\"Sharding\", "
                         "sharding={replicated}\n")},
      {"call", absl::StrCat(kHeader, R"(%scale {
  %x = f64[3] parameter(0)
  %s = f64[3] parameter(1)
  ROOT %m = f64[3] multiply(%x, %s)
}
ENTRY %main {
  %a = f64[3] parameter(0)
  %s = f64[3] parameter(1)
  ROOT %r = f64[3] call(%a, %s), to_apply=%scale
}
)")},
      {"conditional", absl::StrCat(kHeader, R"(%double {
  %x = f64[3] parameter(0)
  ROOT %d = f64[3] add(%x, %x)
}
%first {
  %x = (f64[3], f64[2]) parameter(0)
  ROOT %g = f64[3] get-tuple-element(%x), index=0
}
ENTRY %main {
  %a = f64[3] parameter(0)
  %b = f64[2] parameter(1)
  %i = s32[] constant(1)
  %t = (f64[3], f64[2]) tuple(%a, %b)
  ROOT %r = f64[3] conditional(%i, %a, %t), branch_computations={%double, %first}
}
)"), 2},
      {"while", absl::StrCat(kHeader, R"(%body {
  %c = (s32[], f64[3], f64[3]) parameter(0)
  %i = s32[] get-tuple-element(%c), index=0
  %x = f64[3] get-tuple-element(%c), index=1
  %s = f64[3] get-tuple-element(%c), index=2
  %one = s32[] constant(1)
  %i1 = s32[] add(%i, %one)
  %m = f64[3] multiply(%x, %s)
  %r = f64[3] reverse(%m), dimensions={0}
  ROOT %t = (s32[], f64[3], f64[3]) tuple(%i1, %r, %s)
}
%cond {
  %c = (s32[], f64[3], f64[3]) parameter(0)
  %i = s32[] get-tuple-element(%c), index=0
  %n = s32[] constant(3)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}
ENTRY %main {
  %a = f64[3] parameter(0)
  %s = f64[3] parameter(1)
  %zero = s32[] constant(0)
  %init = (s32[], f64[3], f64[3]) tuple(%zero, %a, %s)
  %w = (s32[], f64[3], f64[3]) while(%init), condition=%cond, body=%body
  ROOT %r = f64[3] get-tuple-element(%w), index=1
}
)")},
      {"mapreduce_broadcast_sum", entry("  %a = f64[2] parameter(0)\n  %b = f64[3,2] parameter(1)\n"
                                        "  %x = f64[3,2] mapreduce.broadcast(%a), placement=clients\n"
                                        "  %y = f64[3,2] add(%x, %b)\n"
                                        "  %s = f64[2] mapreduce.sum(%y), placement=clients\n"
                                        "  %m = f64[2] mapreduce.mean(%y), placement=clients\n"
                                        "  ROOT %r = (f64[2], f64[2]) tuple(%s, %m)\n"), 2},
      {"mapreduce_map", absl::StrCat(kHeader, R"(%f {
  %x = f64[2] parameter(0)
  %w = f64[2] parameter(1)
  %m = f64[2] multiply(%x, %w)
  %d = f64[] dot(%x, %w), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  ROOT %t = (f64[2], f64[]) tuple(%m, %d)
}
ENTRY %main {
  %a = f64[3,2] parameter(0)
  %w = f64[3,2] parameter(1)
  ROOT %r = (f64[3,2], f64[3]) mapreduce.map(%a, %w), placement=clients, to_apply=%f
}
)")},
  };
}

class TransposeTest : public ::testing::TestWithParam<LinearCase> {};

TEST_P(TransposeTest, DotProductTest) {
  const LinearCase& c = GetParam();
  std::unique_ptr<Module> module = testing::Parse(c.text);
  ASSERT_NE(module, nullptr);
  // f32 cases round; the f64 ones agree far more closely than 1e-6.
  testing::CheckTransposeByDotProduct(*module, c.linear, c.name);
}

INSTANTIATE_TEST_SUITE_P(LinearOps, TransposeTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<LinearCase>& info) {
                           return info.param.name;
                         });

TEST(TransposeErrorsTest, NonLinearProgramNamesTheOp) {
  std::unique_ptr<Module> module = testing::Parse(R"(HloModule m
ENTRY %main {
  %a = f64[3] parameter(0)
  ROOT %r = f64[3] sine(%a)
}
)");
  ASSERT_NE(module, nullptr);
  EXPECT_THAT(Transpose(*module, *module->entry(), 1),
              sharc::testing::StatusIs(absl::StatusCode::kUnimplemented,
                                       HasSubstr("cannot transpose sine")));
  std::unique_ptr<Module> square = testing::Parse(R"(HloModule m
ENTRY %main {
  %a = f64[3] parameter(0)
  ROOT %r = f64[3] multiply(%a, %a)
}
)");
  ASSERT_NE(square, nullptr);
  EXPECT_THAT(Transpose(*square, *square->entry(), 1),
              sharc::testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                       HasSubstr("both factors")));
}

}  // namespace
}  // namespace sharc::autodiff
