// Random programs: chains of smooth elementwise ops, dots, reductions and
// broadcasts over shared values (so cotangents fan in from several users),
// differentiated in both modes and checked against finite differences.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/autodiff/autodiff_test_util.h"

namespace sharc::autodiff {
namespace {

// A module whose entry takes two f64[3] parameters and combines them through
// `steps` random ops; every value stays f64[3] (reductions are broadcast
// back) and in a range where the ops are smooth.
std::string RandomProgram(uint64_t seed, int steps) {
  std::mt19937_64 rng(seed);
  std::string body = "  %v0 = f64[3] parameter(0)\n  %v1 = f64[3] parameter(1)\n";
  int next = 2;
  auto pick = [&] { return absl::StrCat("%v", rng() % static_cast<uint64_t>(next)); };
  for (int i = 0; i < steps; ++i) {
    const std::string out = absl::StrCat("%v", next);
    const std::string a = pick();
    const std::string b = pick();
    switch (rng() % 8) {
      case 0:
        absl::StrAppend(&body, "  ", out, " = f64[3] add(", a, ", ", b, ")\n");
        break;
      case 1:
        absl::StrAppend(&body, "  ", out, " = f64[3] multiply(", a, ", ", b, ")\n");
        break;
      case 2:
        absl::StrAppend(&body, "  ", out, " = f64[3] sine(", a, ")\n");
        break;
      case 3:
        absl::StrAppend(&body, "  ", out, " = f64[3] tanh(", a, ")\n");
        break;
      case 4:
        absl::StrAppend(&body, "  ", out, " = f64[3] subtract(", a, ", ", b, ")\n");
        break;
      case 5:
        absl::StrAppend(&body, "  ", out, " = f64[3] logistic(", a, ")\n");
        break;
      case 6: {
        const std::string d = absl::StrCat("%d", next);
        absl::StrAppend(&body, "  ", d, " = f64[] dot(", a, ", ", b,
                        "), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n  ", out,
                        " = f64[3] broadcast(", d, "), dimensions={}\n");
        break;
      }
      default: {
        const std::string r = absl::StrCat("%r", next);
        const std::string z = absl::StrCat("%z", next);
        const std::string rev = absl::StrCat("%rev", next);
        absl::StrAppend(&body, "  ", z, " = f64[] constant(0)\n  ", rev, " = f64[3] reverse(", a,
                        "), dimensions={0}\n  ", r, " = f64[] reduce(", rev, ", ", z,
                        "), dimensions={0}, to_apply=%add\n  ", out, " = f64[3] broadcast(", r,
                        "), dimensions={}\n");
      }
    }
    ++next;
  }
  absl::StrAppend(&body, "  %s0 = f64[3] add(%v", next - 1, ", %v", next - 2, ")\n",
                  "  %zero = f64[] constant(0)\n",
                  "  ROOT %out = f64[] reduce(%s0, %zero), dimensions={0}, to_apply=%add\n");
  return absl::StrCat(R"(HloModule random
%add {
  %a = f64[] parameter(0)
  %b = f64[] parameter(1)
  ROOT %s = f64[] add(%a, %b)
}
ENTRY %main {
)",
                      body, "}\n");
}

TEST(RandomProgramsTest, DerivativesMatchFiniteDifferences) {
  for (uint64_t seed = 1; seed <= 25; ++seed) {
    const std::string text = RandomProgram(seed, 8);
    std::unique_ptr<Module> m = testing::Parse(text);
    ASSERT_NE(m, nullptr) << text;
    testing::CheckDerivatives(*m, seed, absl::StrCat("random program ", seed, ":\n", text));
  }
}

}  // namespace
}  // namespace sharc::autodiff
