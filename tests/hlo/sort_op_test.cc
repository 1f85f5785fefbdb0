// sort: hand-computed results (ascending, descending, stable ties, several
// operands, rows along either dimension, TOTALORDER with NaN and -0), the
// native path against the comparator-calling path on random data, and the
// verifier's errors.
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "hlo/eval/interpreter.h"
#include "hlo/text/parser.h"
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

// A module sorting (f32 keys, s32 values) of `dims` along `dim` with the
// comparator body `cmp` over %a, %b (keys) and %i, %j (values).
std::string KeyValueSort(const std::string& dims, int dim, const std::string& cmp) {
  return absl::StrCat(R"(HloModule m
%cmp (a: f32[], b: f32[], i: s32[], j: s32[]) -> pred[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  %i = s32[] parameter(2)
  %j = s32[] parameter(3)
  )", cmp, R"(
}
ENTRY %e {
  %k = f32[)", dims, R"(] parameter(0)
  %v = s32[)", dims, R"(] parameter(1)
  ROOT %s = (f32[)", dims, "], s32[", dims, "]) sort(%k, %v), dimensions={", dim,
                      R"(}, to_apply=%cmp
})");
}

std::string VerifyError(const std::string& text) {
  absl::Status status = ParseAndVerifyModule(text).status();
  return status.ok() ? "verified" : std::string(status.message());
}

constexpr char kLess[] = "ROOT %lt = pred[] compare(%a, %b), direction=LT";

TEST(SortTest, AscendingKeepsTiesInOrder) {
  Literal k = Literal::Vector<float>({3, 1, 2, 1, 3, 0});
  Literal v = Literal::Vector<int32_t>({0, 1, 2, 3, 4, 5});
  ASSERT_OK_AND_ASSIGN(Literal out, EvalText(KeyValueSort("6", 0, kLess), {k, v}));
  EXPECT_THAT(AsDoubles(out.element(0)), ElementsAre(0, 1, 1, 2, 3, 3));
  // Stable: the two 1s keep their order (1 before 3), and so do the 3s.
  EXPECT_THAT(AsDoubles(out.element(1)), ElementsAre(5, 1, 3, 2, 0, 4));
}

TEST(SortTest, DescendingWithGtOrSwappedParameters) {
  Literal k = Literal::Vector<float>({3, 1, 2, 1});
  Literal v = Literal::Vector<int32_t>({0, 1, 2, 3});
  for (const char* cmp : {"ROOT %gt = pred[] compare(%a, %b), direction=GT",
                          "ROOT %lt = pred[] compare(%b, %a), direction=LT"}) {
    ASSERT_OK_AND_ASSIGN(Literal out, EvalText(KeyValueSort("4", 0, cmp), {k, v}));
    EXPECT_THAT(AsDoubles(out.element(0)), ElementsAre(3, 2, 1, 1)) << cmp;
    EXPECT_THAT(AsDoubles(out.element(1)), ElementsAre(0, 2, 1, 3)) << cmp;
  }
}

TEST(SortTest, SortsEachRowAlongTheGivenDimension) {
  // [[5, 1, 4], [0, 9, 2]]
  Literal k = Literal::FromValues<float>({2, 3}, std::vector<float>{5, 1, 4, 0, 9, 2});
  Literal v = Literal::FromValues<int32_t>({2, 3}, std::vector<int32_t>{0, 1, 2, 3, 4, 5});
  ASSERT_OK_AND_ASSIGN(Literal rows, EvalText(KeyValueSort("2,3", 1, kLess), {k, v}));
  EXPECT_THAT(AsDoubles(rows.element(0)), ElementsAre(1, 4, 5, 0, 2, 9));
  EXPECT_THAT(AsDoubles(rows.element(1)), ElementsAre(1, 2, 0, 3, 5, 4));
  ASSERT_OK_AND_ASSIGN(Literal cols, EvalText(KeyValueSort("2,3", 0, kLess), {k, v}));
  EXPECT_THAT(AsDoubles(cols.element(0)), ElementsAre(0, 1, 2, 5, 9, 4));
  EXPECT_THAT(AsDoubles(cols.element(1)), ElementsAre(3, 1, 5, 0, 4, 2));
}

TEST(SortTest, OneOperandReturnsAnArray) {
  ASSERT_OK_AND_ASSIGN(Literal out, EvalText(R"(HloModule m
%cmp (a: s32[], b: s32[]) -> pred[] {
  %a = s32[] parameter(0)
  %b = s32[] parameter(1)
  ROOT %lt = pred[] compare(%a, %b), direction=LT
}
ENTRY %e {
  %x = s32[5] parameter(0)
  ROOT %s = s32[5] sort(%x), dimensions={0}, is_stable=false, to_apply=%cmp
})", {Literal::Vector<int32_t>({4, -2, 7, 0, -2})}));
  EXPECT_FALSE(out.is_tuple());
  EXPECT_THAT(AsDoubles(out), ElementsAre(-2, -2, 0, 4, 7));
}

TEST(SortTest, TotalOrderPlacesNegativeZeroAndNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Literal k = Literal::Vector<float>({nan, 0.0f, -0.0f, -1.0f, -nan});
  Literal v = Literal::Vector<int32_t>({0, 1, 2, 3, 4});
  ASSERT_OK_AND_ASSIGN(
      Literal out,
      EvalText(KeyValueSort("5", 0, "ROOT %lt = pred[] compare(%a, %b), direction=LT, type=TOTALORDER"),
               {k, v}));
  // -NaN < -1 < -0 < +0 < NaN.
  EXPECT_THAT(AsDoubles(out.element(1)), ElementsAre(4, 3, 2, 1, 0));
}

// A comparator the native path does not recognise (lexicographic on key,
// then value descending) is called per comparison.
TEST(SortTest, GeneralComparatorIsCalled) {
  Literal k = Literal::Vector<float>({2, 1, 2, 1});
  Literal v = Literal::Vector<int32_t>({0, 1, 2, 3});
  ASSERT_OK_AND_ASSIGN(Literal out, EvalText(KeyValueSort("4", 0, R"(%lt = pred[] compare(%a, %b), direction=LT
  %eq = pred[] compare(%a, %b), direction=EQ
  %vgt = pred[] compare(%i, %j), direction=GT
  %tie = pred[] and(%eq, %vgt)
  ROOT %or = pred[] or(%lt, %tie))"),
                                             {k, v}));
  EXPECT_THAT(AsDoubles(out.element(0)), ElementsAre(1, 1, 2, 2));
  EXPECT_THAT(AsDoubles(out.element(1)), ElementsAre(3, 1, 2, 0));
}

// The native path and the comparator-calling path give the same bits: the
// second comparator is `lt AND true`, which only the general path takes.
TEST(SortTest, NativePathMatchesCallingTheComparator) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> small(0, 9);  // many ties
  std::vector<float> keys(8 * 37);
  std::vector<int32_t> values(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    keys[i] = static_cast<float>(small(rng)) - 4.5f;
    values[i] = static_cast<int32_t>(i);
  }
  Literal k = Literal::FromValues<float>({8, 37}, keys);
  Literal v = Literal::FromValues<int32_t>({8, 37}, values);
  for (const char* dir : {"LT", "GT"}) {
    ASSERT_OK_AND_ASSIGN(
        Literal native,
        EvalText(KeyValueSort("8,37", 1, absl::StrCat("ROOT %c = pred[] compare(%a, %b), direction=", dir)),
                 {k, v}));
    ASSERT_OK_AND_ASSIGN(
        Literal called,
        EvalText(KeyValueSort("8,37", 1,
                              absl::StrCat("%c = pred[] compare(%a, %b), direction=", dir, R"(
  %t = pred[] constant(true)
  ROOT %r = pred[] and(%c, %t))")),
                 {k, v}));
    EXPECT_EQ(native, called) << dir;
  }
}

// JAX's total-order comparison of floats (a key made of the bits, then
// compare GT): sorted by the keys computed once per element
// (sort_key_function.h), it gives what calling the comparator gives, on
// rows with ties, -0 and +0, NaNs and infinities; descending and, with the
// parameters swapped, ascending.
TEST(SortTest, KeyFunctionPathMatchesCallingTheComparator) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> small(0, 7);
  const float specials[] = {-0.0f, 0.0f, nan, -nan, inf, -inf, 1.5f, -2.5f};
  std::vector<float> keys(6 * 41);
  std::vector<int32_t> values(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    keys[i] = i % 5 == 0 ? specials[small(rng)] : static_cast<float>(small(rng)) - 3.5f;
    values[i] = static_cast<int32_t>(i);
  }
  Literal k = Literal::FromValues<float>({6, 41}, keys);
  Literal v = Literal::FromValues<int32_t>({6, 41}, values);
  auto key_of = [](const std::string& x, const std::string& name) {
    return absl::StrCat("%", name, ".bits = s32[] bitcast-convert(%", x, ")\n  %", name,
                        ".neg = pred[] compare(%", name, ".bits, %zero), direction=LT\n  %", name,
                        ".u = u32[] bitcast-convert(%", x, ")\n  %", name,
                        ".flip = u32[] subtract(%max, %", name, ".u)\n  %", name,
                        ".flipped = s32[] bitcast-convert(%", name, ".flip)\n  %", name,
                        " = s32[] select(%", name, ".neg, %", name, ".flipped, %", name,
                        ".bits)\n  ");
  };
  for (const char* order : {"%ka, %kb", "%kb, %ka"}) {
    const std::string body = absl::StrCat(
        "%zero = s32[] constant(0)\n  %max = u32[] constant(2147483647)\n  ", key_of("a", "ka"),
        key_of("b", "kb"));
    ASSERT_OK_AND_ASSIGN(
        Literal keyed,
        EvalText(KeyValueSort("6,41", 1,
                              absl::StrCat(body, "ROOT %c = pred[] compare(", order,
                                           "), direction=GT")),
                 {k, v}));
    ASSERT_OK_AND_ASSIGN(
        Literal called,
        EvalText(KeyValueSort("6,41", 1,
                              absl::StrCat(body, "%c = pred[] compare(", order,
                                           R"(), direction=GT
  %t = pred[] constant(true)
  ROOT %r = pred[] and(%c, %t))")),
                 {k, v}));
    EXPECT_EQ(keyed, called) << order;
  }
}

// XLA's TopK comparator: the total-order key descending, its ties broken by
// the second operand ascending (select of an EQ of the two strict
// comparisons). Sorted by both keys, it matches calling the comparator, on
// keys with many ties and second keys with ties of their own.
TEST(SortTest, LexicographicPathMatchesCallingTheComparator) {
  std::mt19937 rng(13);
  std::uniform_int_distribution<int> small(0, 5);
  std::vector<float> keys(4 * 53);
  std::vector<int32_t> values(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    keys[i] = static_cast<float>(small(rng)) - 2.0f;
    if (i % 7 == 0) keys[i] = -0.0f;
    values[i] = small(rng);
  }
  Literal k = Literal::FromValues<float>({4, 53}, keys);
  Literal v = Literal::FromValues<int32_t>({4, 53}, values);
  const std::string body = R"(%zero = s32[] constant(0)
  %ba = s32[] bitcast-convert(%a)
  %bb = s32[] bitcast-convert(%b)
  %na = pred[] compare(%ba, %zero), direction=LT
  %nb = pred[] compare(%bb, %zero), direction=LT
  %ma = s32[] negate(%ba)
  %mb = s32[] negate(%bb)
  %ka = s32[] select(%na, %ma, %ba)
  %kb = s32[] select(%nb, %mb, %bb)
  %first = pred[] compare(%ka, %kb), direction=GT
  %reversed = pred[] compare(%kb, %ka), direction=GT
  %tie = pred[] compare(%first, %reversed), direction=EQ
  %second = pred[] compare(%i, %j), direction=LT
  )";
  ASSERT_OK_AND_ASSIGN(
      Literal keyed,
      EvalText(KeyValueSort("4,53", 1, body + "ROOT %r = pred[] select(%tie, %second, %first)"),
               {k, v}));
  ASSERT_OK_AND_ASSIGN(
      Literal called, EvalText(KeyValueSort("4,53", 1, body + R"(%s = pred[] select(%tie, %second, %first)
  %t = pred[] constant(true)
  ROOT %r = pred[] and(%s, %t))"),
                               {k, v}));
  EXPECT_EQ(keyed, called);
}

// One f32 operand is sorted by its values; that path gives the bits the
// comparator-calling path gives, with rows full of ties between -0 and +0
// (whose signs must stay in their original order) and a row with a NaN
// (which takes the permutation path), along either dimension.
TEST(SortTest, ValuePathMatchesCallingTheComparator) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> pick(0, 5);
  std::vector<float> x(6 * 400);
  for (float& v : x) {
    const int p = pick(rng);
    v = p == 0 ? 0.0f : p == 1 ? -0.0f : static_cast<float>(p) - 3.5f;
  }
  const Literal finite = Literal::FromValues<float>({6, 400}, x);
  x[7] = nan;  // row 0 (along dim 1), column 7 (along dim 0)
  const Literal with_nan = Literal::FromValues<float>({6, 400}, x);
  auto module = [](int dim, const char* direction, bool general) {
    return absl::StrCat(R"(HloModule m
%cmp (a: f32[], b: f32[]) -> pred[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  )", general ? absl::StrCat("%c = pred[] compare(%a, %b), direction=", direction,
                             "\n  %t = pred[] constant(true)\n  ROOT %r = pred[] and(%c, %t)")
              : absl::StrCat("ROOT %c = pred[] compare(%a, %b), direction=", direction),
                        R"(
}
ENTRY %e {
  %x = f32[6,400] parameter(0)
  ROOT %s = f32[6,400] sort(%x), dimensions={)", dim, R"(}, to_apply=%cmp
})");
  };
  for (const Literal* input : {&finite, &with_nan}) {
    for (int dim : {0, 1}) {
      for (const char* direction : {"LT", "GT"}) {
        ASSERT_OK_AND_ASSIGN(Literal by_value, EvalText(module(dim, direction, false), {*input}));
        ASSERT_OK_AND_ASSIGN(Literal called, EvalText(module(dim, direction, true), {*input}));
        // Literal equality compares bits: -0 and +0 differ, NaNs match.
        EXPECT_EQ(by_value, called) << "dim " << dim << " " << direction
                                    << (input == &with_nan ? " with a NaN" : "");
      }
    }
  }
}

TEST(SortTest, VerifierNamesTheProblem) {
  const std::string good_cmp = R"(%cmp (a: f32[], b: f32[]) -> pred[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %lt = pred[] compare(%a, %b), direction=LT
}
)";
  EXPECT_THAT(VerifyError(absl::StrCat("HloModule m\n", good_cmp, R"(ENTRY %e {
  %x = f32[4] parameter(0)
  ROOT %s = f32[4] sort(%x), dimensions={1}, to_apply=%cmp
})")),
              HasSubstr("dimension 1 is out of range"));
  EXPECT_THAT(VerifyError(absl::StrCat("HloModule m\n", good_cmp, R"(ENTRY %e {
  %x = f32[4] parameter(0)
  %y = s32[4] parameter(1)
  ROOT %s = (f32[4], s32[4]) sort(%x, %y), dimensions={0}, to_apply=%cmp
})")),
              HasSubstr("takes 2 parameters, expected 4"));
  EXPECT_THAT(VerifyError(absl::StrCat("HloModule m\n", good_cmp, R"(ENTRY %e {
  %x = f32[4] parameter(0)
  %y = f32[5] parameter(1)
  ROOT %s = (f32[4], f32[5]) sort(%x, %y), dimensions={0}, to_apply=%cmp
})")),
              HasSubstr("sort"));
  EXPECT_THAT(VerifyError(absl::StrCat("HloModule m\n", good_cmp, R"(ENTRY %e {
  %x = f32[4] parameter(0)
  ROOT %s = f32[4] sort(%x), to_apply=%cmp
})")),
              HasSubstr("missing required attribute 'dimensions'"));
}

}  // namespace
}  // namespace sharc::hlo
