// select-and-scatter's derivatives (jvp_rules/select_and_scatter.cc,
// transpose_rules/select_and_scatter.cc): linear in its source and init
// value, piecewise constant in its operand. Forward and reverse mode against
// central differences and the transpose by the dot-product test, for
// overlapping and non-overlapping windows, padding (a window of padding
// only too), 2-D windows, GE, LE and GT selects, and operands full of ties
// (where the transpose must pick the element the evaluator scattered to);
// and the cases refused, with the reason.
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "tests/autodiff/autodiff_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::autodiff {
namespace {

using ::testing::HasSubstr;

constexpr char kComputations[] = R"(%add {
  %a = f64[] parameter(0)
  %b = f64[] parameter(1)
  ROOT %s = f64[] add(%a, %b)
}
%multiply {
  %a = f64[] parameter(0)
  %b = f64[] parameter(1)
  ROOT %s = f64[] multiply(%a, %b)
}
%GE {
  %a = f64[] parameter(0)
  %b = f64[] parameter(1)
  ROOT %c = pred[] compare(%a, %b), direction=GE
}
%LE {
  %a = f64[] parameter(0)
  %b = f64[] parameter(1)
  ROOT %c = pred[] compare(%a, %b), direction=LE
}
%GT {
  %a = f64[] parameter(0)
  %b = f64[] parameter(1)
  ROOT %c = pred[] compare(%a, %b), direction=GT
}
)";

struct Window {
  const char* name;
  const char* operand;  // shape
  const char* source;   // the windows' shape
  const char* window;
};

constexpr Window kWindows[] = {
    {"non-overlapping", "f64[6]", "f64[3]", "size=2 stride=2"},
    {"overlapping", "f64[6]", "f64[4]", "size=3 stride=1"},
    {"padded", "f64[7]", "f64[4]", "size=3 stride=2 pad=1_1"},
    {"padded 2-D", "f64[5,4]", "f64[3,2]", "size=3x2 stride=2x2 pad=1_1x0_0"},
    {"overlapping 2-D", "f64[4,5]", "f64[3,2]", "size=2x3 stride=1x2 pad=0_0x1_0"},
    // The first window holds padding only: its source element goes nowhere.
    {"padding-only window", "f64[2]", "f64[3]", "size=2 stride=1 pad=2_0"},
};

// (source, init) are parameters 0 and 1; the operand is parameter 2, or
// the constant `operand` when it is given.
std::string Module(const Window& w, const std::string& select, const std::string& operand = "") {
  const std::string x = operand.empty() ? absl::StrCat(w.operand, " parameter(2)")
                                        : absl::StrCat(w.operand, " constant(", operand, ")");
  return absl::StrCat("HloModule sas\n", kComputations, "ENTRY %e {\n  %s = ", w.source,
                      " parameter(0)\n  %init = f64[] parameter(1)\n  %x = ", x,
                      "\n  ROOT %y = ", w.operand, " select-and-scatter(%x, %s, %init), window={",
                      w.window, "}, select=%", select, ", scatter=%add\n}\n");
}

TEST(SelectAndScatterDerivativesTest, MatchFiniteDifferencesForEveryWindowAndSelect) {
  uint64_t seed = 1;
  for (const Window& w : kWindows) {
    for (const char* select : {"GE", "LE", "GT"}) {
      const std::string text = Module(w, select);
      SCOPED_TRACE(text);
      std::unique_ptr<hlo::Module> module = testing::Parse(text);
      ASSERT_NE(module, nullptr);
      testing::CheckDerivatives(*module, ++seed, text);
      // Linear in (source, init) for a fixed operand: the transposed program
      // recomputes the selection.
      testing::CheckTransposeByDotProduct(*module, 2, text);
    }
  }
}

// Operands with few distinct values, so that most windows have several
// maxima (and minima): the transpose must read the cotangent where the
// evaluator scattered (the first extremum for GE and LE, the last for GT).
TEST(SelectAndScatterDerivativesTest, TransposeByDotProductOnTies) {
  const char* const tied[] = {
      "{1, 1, 0, 1, 0, 0}",
      "{1, 1, 0, 1, 0, 0}",
      "{2, 2, 2, 1, 2, 1, 1}",
      "{{1,1,0,1},{0,1,1,1},{1,0,0,1},{1,1,1,1},{0,0,1,0}}",
      "{{1,1,0,1,1},{0,1,1,1,0},{1,0,0,1,1},{1,1,1,1,0}}",
      "{1, 1}",
  };
  for (size_t i = 0; i < std::size(kWindows); ++i) {
    for (const char* select : {"GE", "LE", "GT"}) {
      const std::string text = Module(kWindows[i], select, tied[i]);
      SCOPED_TRACE(text);
      std::unique_ptr<hlo::Module> module = testing::Parse(text);
      ASSERT_NE(module, nullptr);
      testing::CheckTransposeByDotProduct(*module, 2, text);
    }
  }
}

TEST(SelectAndScatterDerivativesTest, NonAddingScatterIsRefused) {
  const std::string text = absl::StrCat("HloModule sas\n", kComputations, R"(ENTRY %e {
  %x = f64[4] parameter(0)
  %s = f64[2] parameter(1)
  %one = f64[] constant(1)
  ROOT %y = f64[4] select-and-scatter(%x, %s, %one), window={size=2 stride=2}, select=%GE, scatter=%multiply
}
)");
  std::unique_ptr<hlo::Module> module = testing::Parse(text);
  ASSERT_NE(module, nullptr);
  EXPECT_THAT(JvpModule(*module).status(),
              sharc::testing::StatusIs(absl::StatusCode::kUnimplemented,
                                       HasSubstr("scatter function is not an add")));
}

// A select function that calls another computation is not lifted to arrays:
// the transpose says so (the JVP, the same op on the tangent, needs no
// lifting).
TEST(SelectAndScatterDerivativesTest, SelectFunctionThatCallsIsRefusedInReverseMode) {
  const std::string text = absl::StrCat("HloModule sas\n", kComputations, R"(%calls_ge {
  %a = f64[] parameter(0)
  %b = f64[] parameter(1)
  ROOT %c = pred[] call(%a, %b), to_apply=%GE
}
ENTRY %e {
  %s = f64[2] parameter(0)
  %x = f64[4] constant({1, 2, 3, 4})
  %zero = f64[] constant(0)
  ROOT %y = f64[4] select-and-scatter(%x, %s, %zero), window={size=2 stride=2}, select=%calls_ge, scatter=%add
}
)");
  std::unique_ptr<hlo::Module> module = testing::Parse(text);
  ASSERT_NE(module, nullptr);
  EXPECT_TRUE(JvpModule(*module).ok());
  EXPECT_THAT(Transpose(*module, *module->entry(), 1).status(),
              sharc::testing::StatusIs(absl::StatusCode::kUnimplemented,
                                       ::testing::AllOf(HasSubstr("not a function of scalars"),
                                                        HasSubstr("%y"))));
}

}  // namespace
}  // namespace sharc::autodiff
