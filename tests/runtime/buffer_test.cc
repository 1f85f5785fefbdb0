#include "runtime/buffer.h"

#include <cstdint>
#include <random>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/runtime/runtime_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::runtime {
namespace {

using ::testing::HasSubstr;

TEST(BufferTest, LiteralRoundTripEveryDtype) {
  std::mt19937 rng(3);
  int count = 0;
  const hlo::PrimitiveType* types = hlo::AllArrayTypes(&count);
  for (int i = 0; i < count; ++i) {
    for (const std::vector<int64_t>& dims :
         std::vector<std::vector<int64_t>>{{}, {0}, {7}, {3, 5}, {2, 1, 33}}) {
      hlo::Literal l = testing_util::RandomLiteral(hlo::Shape(types[i], dims), rng);
      ASSERT_OK_AND_ASSIGN(Buffer b, Buffer::FromLiteral(l));
      EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % kBufferAlignment, 0u);
      EXPECT_EQ(b.shape(), l.shape());
      EXPECT_EQ(b.size_bytes(), l.size_bytes());
      ASSERT_OK_AND_ASSIGN(hlo::Literal back, b.ToLiteral());
      EXPECT_EQ(back, l) << l.ToString();
    }
  }
}

TEST(BufferTest, TuplesAliasTheirElements) {
  hlo::Literal a = hlo::Literal::Vector<float>({1, 2, 3});
  hlo::Literal s = hlo::Literal::Scalar<int32_t>(7);
  ASSERT_OK_AND_ASSIGN(Buffer ba, Buffer::FromLiteral(a));
  ASSERT_OK_AND_ASSIGN(Buffer bs, Buffer::FromLiteral(s));
  Buffer t = Buffer::Tuple({ba, bs});
  EXPECT_EQ(t.shape().ToString(), "(f32[3], s32[])");
  EXPECT_EQ(t.element(0).data(), ba.data());  // no copy
  EXPECT_FALSE(ba.unique());
  ASSERT_OK_AND_ASSIGN(hlo::Literal back, t.ToLiteral());
  EXPECT_EQ(back, hlo::Literal::Tuple({a, s}));
  ASSERT_OK_AND_ASSIGN(Buffer clone, t.Clone());
  EXPECT_NE(clone.element(0).data(), ba.data());
  ASSERT_OK_AND_ASSIGN(hlo::Literal cloned, clone.ToLiteral());
  EXPECT_EQ(cloned, back);
  ASSERT_OK_AND_ASSIGN(Buffer nested, Buffer::FromLiteral(hlo::Literal::Tuple({back, a})));
  EXPECT_EQ(nested.element(0).element(1).typed<int32_t>()[0], 7);
}

TEST(BufferTest, BadShapesAndCopiesAreErrors) {
  EXPECT_FALSE(Buffer::Allocate(hlo::Shape(hlo::PrimitiveType::kF32, {-1})).ok());
  EXPECT_FALSE(Buffer::Allocate(hlo::Shape()).ok());
#if !defined(__SANITIZE_ADDRESS__)
  // 4 TiB: more than any machine we run on (AddressSanitizer aborts on such
  // requests instead of failing them, so it is skipped there).
  absl::StatusOr<Buffer> huge =
      Buffer::Allocate(hlo::Shape(hlo::PrimitiveType::kF64, {int64_t{1} << 39}));
  EXPECT_EQ(huge.status().code(), absl::StatusCode::kResourceExhausted);
#endif
  ASSERT_OK_AND_ASSIGN(Buffer b, Buffer::Allocate(hlo::Shape(hlo::PrimitiveType::kF32, {2}), true));
  EXPECT_EQ(b.typed<float>()[1], 0.0f);
  absl::Status st = b.CopyFrom(hlo::Literal::Vector<float>({1, 2, 3}));
  EXPECT_THAT(std::string(st.message()), HasSubstr("f32[3] into a buffer of f32[2]"));
  EXPECT_FALSE(Buffer().ToLiteral().ok());
}

}  // namespace
}  // namespace sharc::runtime
