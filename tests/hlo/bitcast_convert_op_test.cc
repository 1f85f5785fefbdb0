// bitcast-convert: bits as they lie in memory, same width and width-changing
// forms, and the verifier's errors.
#include <cstring>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hlo/eval/interpreter.h"
#include "hlo/text/parser.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::hlo {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

absl::StatusOr<Literal> EvalText(const std::string& text, const std::vector<Literal>& args) {
  auto module = ParseAndVerifyModule(text);
  if (!module.ok()) return module.status();
  return Evaluate(**module, args);
}

std::string VerifyError(const std::string& text) {
  absl::Status status = ParseAndVerifyModule(text).status();
  return status.ok() ? "verified" : std::string(status.message());
}

TEST(BitcastConvertTest, SameWidthKeepsTheBits) {
  ASSERT_OK_AND_ASSIGN(Literal out, EvalText(R"(HloModule m
ENTRY %e {
  %p = f32[3] parameter(0)
  ROOT %b = u32[3] bitcast-convert(%p)
})", {Literal::Vector<float>({1.0f, -2.0f, 0.0f})}));
  // 1.0f = 0x3f800000, -2.0f = 0xc0000000.
  EXPECT_THAT(std::vector<uint32_t>(out.data<uint32_t>().begin(), out.data<uint32_t>().end()),
              ElementsAre(0x3f800000u, 0xc0000000u, 0u));
  ASSERT_OK_AND_ASSIGN(Literal neg, EvalText(R"(HloModule m
ENTRY %e {
  %p = s32[2] parameter(0)
  ROOT %b = u32[2] bitcast-convert(%p)
})", {Literal::Vector<int32_t>({-1, 7})}));
  EXPECT_THAT(std::vector<uint32_t>(neg.data<uint32_t>().begin(), neg.data<uint32_t>().end()),
              ElementsAre(0xffffffffu, 7u));
}

TEST(BitcastConvertTest, NarrowerAddsATrailingDimOfBytesAndWiderRemovesIt) {
  ASSERT_OK_AND_ASSIGN(Literal bytes, EvalText(R"(HloModule m
ENTRY %e {
  %p = u32[2] parameter(0)
  ROOT %b = u8[2,4] bitcast-convert(%p)
})", {Literal::Vector<uint32_t>({0x04030201u, 0xa0b0c0d0u})}));
  // Little-endian: the lowest byte first.
  EXPECT_THAT(std::vector<uint8_t>(bytes.data<uint8_t>().begin(), bytes.data<uint8_t>().end()),
              ElementsAre(1, 2, 3, 4, 0xd0, 0xc0, 0xb0, 0xa0));
  ASSERT_OK_AND_ASSIGN(Literal back, EvalText(R"(HloModule m
ENTRY %e {
  %p = u16[3,2] parameter(0)
  ROOT %b = f32[3] bitcast-convert(%p)
})", {Literal::FromValues<uint16_t>({3, 2}, std::vector<uint16_t>{0, 0x3f80, 0, 0xc000, 0, 0})}));
  EXPECT_THAT(std::vector<float>(back.data<float>().begin(), back.data<float>().end()),
              ElementsAre(1.0f, -2.0f, 0.0f));
}

TEST(BitcastConvertTest, VerifierNamesTheProblem) {
  EXPECT_THAT(VerifyError(R"(HloModule m
ENTRY %e {
  %p = u8[3,2] parameter(0)
  ROOT %b = f32[3] bitcast-convert(%p)
})"),
              HasSubstr("needs a last dimension of 4"));
  EXPECT_THAT(VerifyError(R"(HloModule m
ENTRY %e {
  %p = f32[3] parameter(0)
  ROOT %b = u8[3] bitcast-convert(%p)
})"),
              HasSubstr("declares u8[3] but its operands imply u8[3,4]"));
  EXPECT_THAT(VerifyError(R"(HloModule m
ENTRY %e {
  %p = pred[3] parameter(0)
  ROOT %b = u8[3] bitcast-convert(%p)
})"),
              HasSubstr("cannot reinterpret pred as bits"));
}

}  // namespace
}  // namespace sharc::hlo
