// Every differentiable op's JVP and VJP against central finite differences in
// f64 at random points: for a random tangent t, the JVP's dy must match
// (f(x + e t) - f(x - e t)) / 2e, and for a random cotangent c the VJP must
// satisfy <vjp(c), t> = <c, dy>. Each case is a small HLO module; the
// derivative modules are also printed, re-parsed and verified.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/autodiff/autodiff_test_util.h"

namespace sharc::autodiff {
namespace {

using testing::CheckDerivatives;

struct OpCase {
  std::string name;
  std::string body;     // computations before ENTRY (may be empty)
  std::string entry;    // the ENTRY's instructions
};

void PrintTo(const OpCase& c, std::ostream* os) { *os << c.name; }

constexpr char kAdd[] = R"(
%add {
  %a = f64[] parameter(0)
  %b = f64[] parameter(1)
  ROOT %s = f64[] add(%a, %b)
}
%max {
  %a = f64[] parameter(0)
  %b = f64[] parameter(1)
  ROOT %s = f64[] maximum(%a, %b)
}
)";

// Reducers and combiners beyond add and max: min, multiply, a composite
// (log-add-exp), argmax's value-and-index pairs (ties to the lower index),
// and scatter's overwrite.
constexpr char kReducers[] = R"(
%min {
  %a = f64[] parameter(0)
  %b = f64[] parameter(1)
  ROOT %s = f64[] minimum(%a, %b)
}
%max {
  %a = f64[] parameter(0)
  %b = f64[] parameter(1)
  ROOT %s = f64[] maximum(%a, %b)
}
%mul {
  %a = f64[] parameter(0)
  %b = f64[] parameter(1)
  ROOT %s = f64[] multiply(%a, %b)
}
%add {
  %a = f64[] parameter(0)
  %b = f64[] parameter(1)
  ROOT %s = f64[] add(%a, %b)
}
%logaddexp {
  %a = f64[] parameter(0)
  %b = f64[] parameter(1)
  %ea = f64[] exponential(%a)
  %eb = f64[] exponential(%b)
  %s = f64[] add(%ea, %eb)
  ROOT %l = f64[] log(%s)
}
%argmax {
  %av = f64[] parameter(0)
  %ai = s32[] parameter(1)
  %bv = f64[] parameter(2)
  %bi = s32[] parameter(3)
  %gt = pred[] compare(%av, %bv), direction=GT
  %eq = pred[] compare(%av, %bv), direction=EQ
  %lt = pred[] compare(%ai, %bi), direction=LT
  %tie = pred[] and(%eq, %lt)
  %pick = pred[] or(%gt, %tie)
  %v = f64[] select(%pick, %av, %bv)
  %i = s32[] select(%pick, %ai, %bi)
  ROOT %t = (f64[], s32[]) tuple(%v, %i)
}
%overwrite {
  %current = f64[] parameter(0)
  ROOT %update = f64[] parameter(1)
}
)";

std::vector<OpCase> Cases() {
  std::vector<OpCase> cases;
  for (const char* op :
       {"abs", "cbrt", "ceil", "cosine", "exponential", "exponential-minus-one", "floor", "log",
        "log-plus-one", "logistic", "negate", "round-nearest-afz", "round-nearest-even", "rsqrt",
        "sign", "sine", "sqrt", "tan", "tanh", "copy", "asinh", "cosh", "sinh", "erf"}) {
    cases.push_back({op, "", absl::StrCat("  %p = f64[3] parameter(0)\n  ROOT %r = f64[3] ", op,
                                          "(%p)\n")});
  }
  for (const char* op : {"add", "subtract", "multiply", "divide", "maximum", "minimum", "power",
                         "remainder", "atan2"}) {
    cases.push_back({op, "", absl::StrCat("  %a = f64[3] parameter(0)\n  %b = f64[3] parameter(1)\n"
                                          "  ROOT %r = f64[3] ", op, "(%a, %b)\n")});
  }
  // Parameters are drawn from [0.5, 2]: scaled into (-1, 1) for acos, asin
  // and atanh, shifted above 1 for acosh.
  for (const char* op : {"acos", "asin", "atanh"}) {
    cases.push_back({op, "", absl::StrCat("  %p = f64[3] parameter(0)\n"
                                          "  %c = f64[3] constant({0.4, 0.4, 0.4})\n"
                                          "  %x = f64[3] multiply(%p, %c)\n"
                                          "  ROOT %r = f64[3] ", op, "(%x)\n")});
  }
  cases.push_back({"acosh", "", R"(  %p = f64[3] parameter(0)
  %c = f64[3] constant({1, 1, 1})
  %x = f64[3] add(%p, %c)
  ROOT %r = f64[3] acosh(%x)
)"});
  // Keeping every bit of f64 it is the identity, so finite differences
  // check the plumbing (attributes copied to the tangent and cotangent).
  cases.push_back({"reduce_precision", "", R"(  %p = f64[3] parameter(0)
  %r = f64[3] reduce-precision(%p), exponent_bits=11, mantissa_bits=52
  ROOT %s = f64[3] multiply(%r, %r)
)"});
  cases.push_back({"convert", "", R"(  %p = f64[3] parameter(0)
  %f = f64[3] convert(%p)
  %i = s32[3] convert(%p)
  %g = f64[3] convert(%i)
  ROOT %r = f64[3] add(%f, %g)
)"});
  cases.push_back({"select_compare", "", R"(  %a = f64[3] parameter(0)
  %b = f64[3] parameter(1)
  %c = pred[3] compare(%a, %b), direction=GT
  %n = pred[3] not(%c)
  %f = pred[3] is-finite(%a)
  %m = pred[3] and(%n, %f)
  ROOT %r = f64[3] select(%m, %a, %b)
)"});
  cases.push_back({"clamp", "", R"(  %lo = f64[3] parameter(0)
  %x = f64[3] parameter(1)
  %hi = f64[3] parameter(2)
  %one = f64[] constant(1)
  %l = f64[3] broadcast(%one), dimensions={}
  %lo1 = f64[3] subtract(%lo, %l)
  %hi1 = f64[3] add(%hi, %l)
  ROOT %r = f64[3] clamp(%lo1, %x, %hi1)
)"});
  cases.push_back({"iota_constant", "", R"(  %p = f64[3] parameter(0)
  %i = f64[3] iota(), iota_dimension=0
  %c = f64[3] constant({1, 2, 3})
  %m = f64[3] multiply(%p, %i)
  ROOT %r = f64[3] multiply(%m, %c)
)"});
  cases.push_back({"broadcast", "", R"(  %p = f64[3] parameter(0)
  ROOT %r = f64[2,3] broadcast(%p), dimensions={1}
)"});
  cases.push_back({"broadcast_inner", "", R"(  %p = f64[2,3] parameter(0)
  ROOT %r = f64[2,4,3] broadcast(%p), dimensions={0,2}
)"});
  cases.push_back({"reshape", "", R"(  %p = f64[2,3] parameter(0)
  ROOT %r = f64[3,2] reshape(%p)
)"});
  cases.push_back({"transpose", "", R"(  %p = f64[2,3,4] parameter(0)
  ROOT %r = f64[4,2,3] transpose(%p), dimensions={2,0,1}
)"});
  cases.push_back({"slice", "", R"(  %p = f64[5,4] parameter(0)
  ROOT %r = f64[2,2] slice(%p), slice={[1:5:2], [1:3]}
)"});
  cases.push_back({"reverse", "", R"(  %p = f64[2,3] parameter(0)
  ROOT %r = f64[2,3] reverse(%p), dimensions={1}
)"});
  cases.push_back({"concatenate", "", R"(  %a = f64[2] parameter(0)
  %b = f64[3] parameter(1)
  ROOT %r = f64[5] concatenate(%a, %b), dimensions={0}
)"});
  cases.push_back({"pad", "", R"(  %p = f64[3] parameter(0)
  %v = f64[] parameter(1)
  ROOT %r = f64[8] pad(%p, %v), padding=1_2_1
)"});
  cases.push_back({"dynamic_slice", "", R"(  %p = f64[5] parameter(0)
  %i = s32[] constant(1)
  ROOT %r = f64[3] dynamic-slice(%p, %i), dynamic_slice_sizes={3}
)"});
  cases.push_back({"dynamic_update_slice", "", R"(  %p = f64[5] parameter(0)
  %u = f64[2] parameter(1)
  %i = s32[] constant(2)
  ROOT %r = f64[5] dynamic-update-slice(%p, %u, %i)
)"});
  cases.push_back({"gather", "", R"(  %p = f64[5,2] parameter(0)
  %i = s32[3,1] constant({{0}, {3}, {0}})
  ROOT %r = f64[3,2] gather(%p, %i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,2}
)"});
  cases.push_back({"scatter_add", kAdd, R"(  %p = f64[4] parameter(0)
  %u = f64[2] parameter(1)
  %i = s32[2,1] constant({{1}, {1}})
  ROOT %r = f64[4] scatter(%p, %i, %u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%add
)"});
  cases.push_back({"dot", "", R"(  %a = f64[2,3] parameter(0)
  %b = f64[3,4] parameter(1)
  ROOT %r = f64[2,4] dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
)"});
  cases.push_back({"dot_batch", "", R"(  %a = f64[3,2,4] parameter(0)
  %b = f64[2,3,5] parameter(1)
  ROOT %r = f64[2,4,5] dot(%a, %b), lhs_batch_dims={1}, lhs_contracting_dims={0}, rhs_batch_dims={0}, rhs_contracting_dims={1}
)"});
  cases.push_back({"reduce_sum", kAdd, R"(  %p = f64[2,3] parameter(0)
  %z = f64[] parameter(1)
  ROOT %r = f64[3] reduce(%p, %z), dimensions={0}, to_apply=%add
)"});
  cases.push_back({"reduce_max", kAdd, R"(  %p = f64[2,3] parameter(0)
  %z = f64[] constant(-inf)
  ROOT %r = f64[2] reduce(%p, %z), dimensions={1}, to_apply=%max
)"});
  cases.push_back({"reduce_min_init", kReducers, R"(  %p = f64[4,3] parameter(0)
  %z = f64[] parameter(1)
  ROOT %r = f64[3] reduce(%p, %z), dimensions={0}, to_apply=%min
)"});
  cases.push_back({"reduce_window_sum", kAdd, R"(  %p = f64[5] parameter(0)
  %z = f64[] constant(0)
  ROOT %r = f64[3] reduce-window(%p, %z), window={size=3}, to_apply=%add
)"});
  cases.push_back({"reduce_window_strided", kAdd, R"(  %p = f64[7,4] parameter(0)
  %z = f64[] parameter(1)
  ROOT %r = f64[4,2] reduce-window(%p, %z), window={size=2x3 stride=2x1 pad=1_0x0_0}, to_apply=%add
)"});
  cases.push_back({"reduce_window_dilated_sum", kAdd, R"(  %p = f64[5,4] parameter(0)
  %z = f64[] parameter(1)
  ROOT %r = f64[5,3] reduce-window(%p, %z), window={size=2x2 stride=2x1 pad=0_1x1_0 lhs_dilate=2x1 rhs_dilate=1x2}, to_apply=%add
)"});
  cases.push_back({"reduce_window_negative_padding", kAdd, R"(  %p = f64[7] parameter(0)
  %z = f64[] constant(0)
  ROOT %r = f64[2] reduce-window(%p, %z), window={size=3 stride=2 pad=-2_1}, to_apply=%add
)"});
  // Max and min pooling: overlapping windows, padding, dilation, and an init
  // value that is itself differentiated (and sometimes wins).
  cases.push_back({"max_pool", kReducers, R"(  %p = f64[6,5] parameter(0)
  %z = f64[] constant(-inf)
  ROOT %r = f64[3,4] reduce-window(%p, %z), window={size=3x2 stride=2x1 pad=1_1x0_0}, to_apply=%max
)"});
  cases.push_back({"max_pool_dilated_init", kReducers, R"(  %p = f64[5,4] parameter(0)
  %z = f64[] parameter(1)
  ROOT %r = f64[9,2] reduce-window(%p, %z), window={size=2x2 stride=1x2 pad=1_0x1_1 lhs_dilate=2x1 rhs_dilate=1x2}, to_apply=%max
)"});
  cases.push_back({"min_pool_negative_padding", kReducers, R"(  %p = f64[6] parameter(0)
  %z = f64[] constant(inf)
  ROOT %r = f64[3] reduce-window(%p, %z), window={size=2 stride=2 pad=-1_1}, to_apply=%min
)"});
  // Reducers that are not one of add, maximum, minimum.
  cases.push_back({"reduce_multiply", kReducers, R"(  %p = f64[5,3] parameter(0)
  %z = f64[] parameter(1)
  ROOT %r = f64[3] reduce(%p, %z), dimensions={0}, to_apply=%mul
)"});
  cases.push_back({"reduce_logaddexp", kReducers, R"(  %p = f64[2,7,3] parameter(0)
  %z = f64[] parameter(1)
  ROOT %r = f64[3] reduce(%p, %z), dimensions={1,0}, to_apply=%logaddexp
)"});
  cases.push_back({"reduce_argmax", kReducers, R"(  %p = f64[3,6] parameter(0)
  %i = s32[3,6] iota(), iota_dimension=1
  %ninf = f64[] constant(-inf)
  %zero = s32[] constant(0)
  %r = (f64[3], s32[3]) reduce(%p, %i, %ninf, %zero), dimensions={1}, to_apply=%argmax
  %v = f64[3] get-tuple-element(%r), index=0
  %w = f64[3] multiply(%v, %v)
  %k = s32[3] get-tuple-element(%r), index=1
  ROOT %t = (f64[3], s32[3]) tuple(%w, %k)
)"});
  cases.push_back({"reduce_window_multiply", kReducers, R"(  %p = f64[5] parameter(0)
  %z = f64[] parameter(1)
  ROOT %r = f64[6] reduce-window(%p, %z), window={size=2 pad=1_1}, to_apply=%mul
)"});
  cases.push_back({"reduce_window_argmax", kReducers, R"(  %p = f64[6] parameter(0)
  %i = s32[6] iota(), iota_dimension=0
  %ninf = f64[] constant(-inf)
  %zero = s32[] constant(-1)
  ROOT %r = (f64[3], s32[3]) reduce-window(%p, %i, %ninf, %zero), window={size=3 stride=2 pad=1_0}, to_apply=%argmax
)"});
  // Scatter that overwrites: a duplicate index (the later update wins) and
  // one out of bounds (skipped); then with indices only known at run time
  // (all zero here: every update hits row 0).
  cases.push_back({"scatter_overwrite", kReducers, R"(  %p = f64[5,2] parameter(0)
  %u = f64[4,2] parameter(1)
  %i = s32[4,1] constant({{1}, {3}, {1}, {7}})
  ROOT %r = f64[5,2] scatter(%p, %i, %u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%overwrite
)"});
  cases.push_back({"scatter_overwrite_runtime_indices", kReducers, R"(  %p = f64[5,2] parameter(0)
  %u = f64[3,2] parameter(1)
  %i = s32[3] parameter(2)
  ROOT %r = f64[5,2] scatter(%p, %i, %u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%overwrite
)"});
  cases.push_back({"scatter_add_out_of_bounds", kReducers, R"(  %p = f64[4] parameter(0)
  %u = f64[3] parameter(1)
  %i = s32[3,1] constant({{1}, {9}, {-1}})
  ROOT %r = f64[4] scatter(%p, %i, %u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%add
)"});
  cases.push_back({"gather_out_of_bounds", "", R"(  %p = f64[5,3] parameter(0)
  %i = s32[3,2] constant({{0, 2}, {7, 0}, {-2, 1}})
  ROOT %r = f64[3,2] gather(%p, %i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={1,2}
)"});
  cases.push_back({"pad_negative", "", R"(  %p = f64[6] parameter(0)
  %v = f64[] parameter(1)
  ROOT %r = f64[10] pad(%p, %v), padding=-2_1_1
)"});
  cases.push_back({"tuple", "", R"(  %a = f64[3] parameter(0)
  %b = f64[3] parameter(1)
  %t = (f64[3], f64[3]) tuple(%a, %b)
  %x = f64[3] get-tuple-element(%t), index=0
  %y = f64[3] get-tuple-element(%t), index=1
  %m = f64[3] multiply(%x, %y)
  ROOT %r = (f64[3], f64[3]) tuple(%m, %x)
)"});
  cases.push_back({"sharding_constraint", "", R"(  %p = f64[4] parameter(0)
  %s = f64[4] custom-call(%p), custom_call_target="Sharding", sharding={replicated}
  ROOT %r = f64[4] multiply(%s, %s)
)"});
  return cases;
}

std::string ModuleText(const OpCase& c) {
  return absl::StrCat("HloModule ", c.name, "\n", c.body, "\nENTRY %main {\n", c.entry, "}\n");
}

class OpDerivativesTest : public ::testing::TestWithParam<OpCase> {};

TEST_P(OpDerivativesTest, MatchesFiniteDifferences) {
  const OpCase& c = GetParam();
  std::unique_ptr<Module> module = testing::Parse(ModuleText(c));
  ASSERT_NE(module, nullptr);
  for (uint64_t seed : {1, 2, 3}) CheckDerivatives(*module, seed, c.name);
}

INSTANTIATE_TEST_SUITE_P(AllOps, OpDerivativesTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<OpCase>& info) {
                           std::string name = info.param.name;
                           for (char& ch : name) {
                             if (ch == '-') ch = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace sharc::autodiff
