// Tests of the HLO text parser on bad input: every error is InvalidArgument,
// names FILE:LINE:COL and says what was expected and what was found, and no
// input crashes, hangs or allocates without bound.
#include <string>

#include "hlo/text/parser.h"
#include "tests/hlo/parse_error_expectations.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::hlo {
namespace {

using ::sharc::testing::IsOk;
using ::sharc::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr absl::StatusCode kInvalid = absl::StatusCode::kInvalidArgument;



TEST(ParserErrorsTest, MessageHasFileLineColumnSourceLineAndCaret) {
  ParseOptions options;
  options.filename = "bad.hlo";
  auto result =
      ParseModule(Entry("  %x = f32[] parameter(0)\n  %y = f32[] addd(%x, %x)\n"), options);
  EXPECT_THAT(result, StatusIs(kInvalid, HasSubstr("bad.hlo:4:14: error: unknown opcode 'addd'; "
                                                   "did you mean 'add'?\n"
                                                   "  %y = f32[] addd(%x, %x)\n"
                                                   "             ^")));
}

TEST(ParserErrorsTest, EmptyAndGarbageInput) {
  EXPECT_PARSE_ERROR("", "1:1", "expected 'HloModule', found end of input");
  EXPECT_PARSE_ERROR("   // only a comment\n", "2:1", "expected 'HloModule'");
  EXPECT_PARSE_ERROR(std::string("\x00\xff\x13garbage", 10), "1:1", "unexpected byte 0x00");
  EXPECT_PARSE_ERROR("HloModule m\n\x7f\x80", "2:1", "unexpected byte 0x7f");
  EXPECT_PARSE_ERROR("HloModule m\nENTRY %e { # }", "2:12", "unexpected character '#'");
  EXPECT_PARSE_ERROR("HloModule", "1:10", "expected a module name, found end of input");
  EXPECT_PARSE_ERROR("HloModule m", "1:12", "expected a computation, found end of input");
  EXPECT_PARSE_ERROR("HloModule m\nENTRY %e {\n  %p = f32[] parameter(0)\n", "4:1",
                     "expected an instruction name or '}'");
}

TEST(ParserErrorsTest, UnterminatedStringAndComment) {
  EXPECT_PARSE_ERROR(Entry("  %p = f32[] custom-call(), custom_call_target=\"abc\n"), "3:48",
                     "unterminated string");
  EXPECT_PARSE_ERROR("HloModule m /* never closed\nENTRY", "1:13", "unterminated comment");
}

TEST(ParserErrorsTest, UnknownOpcodeSuggestsClosest) {
  EXPECT_PARSE_ERROR(Entry("  %a = f32[2,2] parameter(0)\n  %d = f32[2,2] dott(%a, %a)\n"), "4:17",
                     "unknown opcode 'dott'; did you mean 'dot'?");
  EXPECT_PARSE_ERROR(Entry("  %a = f32[] parameter(0)\n  %d = f32[] all_reduce(%a)\n"), "4:14",
                     "did you mean 'all-reduce'?");
  // Nothing close: no suggestion.
  auto far = ParseModule(Entry("  %d = f32[] qwertyuiopasdf()\n"));
  EXPECT_THAT(far, StatusIs(kInvalid, HasSubstr("unknown opcode 'qwertyuiopasdf'")));
  EXPECT_THAT(far.status().message(), ::testing::Not(HasSubstr("did you mean")));
}

// XLA's buffer type is named as what it is, not as an unknown opcode 'b'.
TEST(ParserErrorsTest, BufferTypesAreNamed) {
  EXPECT_PARSE_ERROR(Entry("  %a = f32[] parameter(0)\n"
                           "  %p = b(f32[]) custom-call(%a), custom_call_target=\"Pin\"\n"),
                     "4:8", "unsupported: the buffer type 'b(...)'");
}

TEST(ParserErrorsTest, UndefinedAndDuplicateNames) {
  EXPECT_PARSE_ERROR(Entry("  %a = f32[] parameter(0)\n  ROOT %n = f32[] add(%a, %x)\n"), "4:27",
                     "use of undefined value '%x'");
  EXPECT_PARSE_ERROR(Entry("  %a = f32[] parameter(0)\n  %a = f32[] negate(%a)\n"), "4:3",
                     "duplicate instruction name '%a' in computation '%main' (first defined "
                     "at 3:3)");
  EXPECT_PARSE_ERROR(
      "HloModule m\n%f {\n  ROOT %p = f32[] parameter(0)\n}\n%f {\n  ROOT %q = "
      "f32[] parameter(0)\n}\n",
      "5:1", "duplicate computation name '%f'");
  EXPECT_PARSE_ERROR(Entry("  %p = f32[] parameter(0)\n  ROOT %c = f32[] call(%p), to_apply=%g\n"),
                     "4:38", "use of undefined computation '%g'");
  // Callees must come before their callers.
  EXPECT_PARSE_ERROR(
      "HloModule m\nENTRY %main {\n  %p = f32[] parameter(0)\n  ROOT %c = f32[] "
      "call(%p), to_apply=%later\n}\n%later {\n  ROOT %x = f32[] parameter(0)\n}\n",
      "4:38",
      "use of undefined computation '%later' (a computation must be "
      "defined before it is called)");
}

TEST(ParserErrorsTest, RootAndEntry) {
  EXPECT_PARSE_ERROR(Entry("  ROOT %a = f32[] parameter(0)\n  ROOT %b = f32[] negate(%a)\n"), "4:3",
                     "computation '%main' has a second ROOT (the first is '%a')");
  EXPECT_PARSE_ERROR(
      "HloModule m\nENTRY %a {\n  ROOT %p = f32[] parameter(0)\n}\nENTRY %b {\n  "
      "ROOT %p = f32[] parameter(0)\n}\n",
      "5:1", "second ENTRY computation (the first is '%a')");
  EXPECT_PARSE_ERROR("HloModule m\nENTRY %e {\n}\n", "2:7", "computation '%e' has no instructions");
}

TEST(ParserErrorsTest, Attributes) {
  const std::string p = "  %p = f32[4] parameter(0)\n";
  EXPECT_PARSE_ERROR(Entry(p + "  ROOT %n = f32[4] negate(%p), foo=1\n"), "4:32",
                     "unknown attribute 'foo' for op 'negate'");
  // `dimensions` is op-specific, not generic.
  EXPECT_PARSE_ERROR(Entry(p + "  ROOT %n = f32[4] add(%p, %p), dimensions={0}\n"), "4:33",
                     "unknown attribute 'dimensions' for op 'add'");
  EXPECT_PARSE_ERROR(Entry(p + "  ROOT %b = f32[4,2] broadcast(%p), dimension={0}\n"), "4:37",
                     "unknown attribute 'dimension' for op 'broadcast'; did you mean "
                     "'dimensions'?");
  // dimensions= may be left out only when broadcasting a scalar (as XLA
  // allows); the verifier asks for it otherwise.
  EXPECT_THAT(ParseAndVerifyModule(Entry(p + "  ROOT %b = f32[4,2] broadcast(%p)\n")),
              StatusIs(kInvalid, HasSubstr("broadcast needs an integer-list attribute "
                                           "'dimensions'")));
  EXPECT_THAT(ParseAndVerifyModule(Entry("  %s = f32[] parameter(0)\n"
                                         "  ROOT %b = f32[4,2] broadcast(%s)\n")),
              IsOk());
  EXPECT_PARSE_ERROR(
      Entry(p + "  ROOT %t = f32[4] transpose(%p), dimensions={0}, dimensions={0}\n"), "4:51",
      "duplicate attribute 'dimensions'");
  EXPECT_PARSE_ERROR(
      Entry(p + "  ROOT %n = f32[4] negate(%p), sharding={replicated}, sharding={manual}\n"),
      "4:55", "duplicate attribute 'sharding'");
  EXPECT_PARSE_ERROR(Entry(p + "  ROOT %t = f32[4] transpose(%p), dimensions=0\n"), "4:46",
                     "expected '{' to start 'dimensions', found integer '0'");
  EXPECT_PARSE_ERROR(Entry(p + "  ROOT %g = f32[4] get-tuple-element(%p), index=x\n"), "4:49",
                     "expected an integer for 'index', found 'x'");
  EXPECT_PARSE_ERROR(Entry(p + "  ROOT %s = f32[2] slice(%p), slice={[0:2:]}\n"), "4:43",
                     "expected the slice stride");
  EXPECT_PARSE_ERROR(
      Entry(p + "  %z = f32[] constant(0)\n  ROOT %q = f32[6] pad(%p, %z), padding=1_1_1_1\n"),
      "5:41", "invalid padding '1_1_1_1'");
  EXPECT_PARSE_ERROR(Entry(p + "  %z = f32[] constant(0)\n  ROOT %r = f32[2] reduce-window(%p, "
                               "%z), window={size=2 strde=2}, to_apply=%f\n"),
                     "5:58", "unknown window field 'strde'");
  EXPECT_PARSE_ERROR(Entry(p + "  ROOT %c = f32[4] collective-permute(%p), "
                               "source_target_pairs={{0,1,2}}\n"),
                     "4:64", "'source_target_pairs' needs pairs {a,b}; found {0,1,2}");
  EXPECT_PARSE_ERROR(Entry(p + "  ROOT %c = f32[4] all-gather(%p), replica_groups=[2,2]<=[3], "
                               "dimensions={0}\n"),
                     "4:58", "iota reshape [3] does not have the 4 elements of [2,2]");
  EXPECT_PARSE_ERROR(Entry(p + "  ROOT %c = f32[4] custom-call(%p), custom_call_target=\"a\\q\"\n"),
                     "4:56", "invalid escape in string");
}

TEST(ParserErrorsTest, OperandCounts) {
  const std::string p = "  %p = f32[4] parameter(0)\n";
  EXPECT_PARSE_ERROR(Entry(p + "  ROOT %n = f32[4] add(%p)\n"), "4:20",
                     "'add' takes 2 operands, found 1");
  EXPECT_PARSE_ERROR(Entry(p + "  ROOT %n = f32[4] negate(%p, %p)\n"), "4:20",
                     "'negate' takes 1 operand, found 2");
  EXPECT_PARSE_ERROR(Entry(p + "  ROOT %n = f32[4] add(%p, %p, , %p)\n"), "4:32",
                     "expected an operand name, found ','");
}

TEST(ParserErrorsTest, Literals) {
  EXPECT_PARSE_ERROR(Entry("  ROOT %c = f32[3] constant({1, 2})\n"), "3:34",
                     "literal element count mismatch: dimension 0 of f32[3] has 3 elements, "
                     "found 2");
  EXPECT_PARSE_ERROR(Entry("  ROOT %c = f32[2] constant({1, 2, 3})\n"), "3:36",
                     "literal element count mismatch: dimension 0 of f32[2] has 2 elements, "
                     "found more");
  EXPECT_PARSE_ERROR(Entry("  ROOT %c = f32[2,2] constant({1, 2, 3, 4})\n"), "3:32",
                     "expected '{' for dimension 1 of f32[2,2], found integer '1'");
  EXPECT_PARSE_ERROR(Entry("  ROOT %c = s8[2] constant({1, 300})\n"), "3:32",
                     "value 300 is out of range for s8");
  EXPECT_PARSE_ERROR(Entry("  ROOT %c = u32[] constant(-1)\n"), "3:28",
                     "value -1 is out of range for u32");
  EXPECT_PARSE_ERROR(Entry("  ROOT %c = s64[] constant(9223372036854775808)\n"), "3:28",
                     "value 9223372036854775808 is out of range for s64");
  EXPECT_PARSE_ERROR(Entry("  ROOT %c = s32[] constant(1.5)\n"), "3:28",
                     "expected an integer of type s32, found number '1.5'");
  EXPECT_PARSE_ERROR(Entry("  ROOT %c = pred[] constant(2)\n"), "3:29",
                     "expected 'true' or 'false'");
  EXPECT_PARSE_ERROR(Entry("  ROOT %c = f32[] constant(-x)\n"), "3:29",
                     "expected 'inf' or 'nan' after '-'");
  EXPECT_PARSE_ERROR(Entry("  ROOT %c = f32[2] constant(f32[3] {1, 2, 3})\n"), "3:29",
                     "literal shape f32[3] differs from the instruction's shape f32[2]");
  EXPECT_PARSE_ERROR(Entry("  ROOT %c = (f32[], s32[]) constant((1))\n"), "3:39",
                     "expected ',' and tuple element 1 of (f32[], s32[])");
}

TEST(ParserErrorsTest, HugeShapesAreRejectedWithoutAllocating) {
  // Valid shape but the literal has one element: the count check fails before
  // anything of the declared size is allocated.
  EXPECT_PARSE_ERROR(Entry("  ROOT %c = f32[1000000000000] constant({1})\n"), "3:43",
                     "literal element count mismatch");
  EXPECT_PARSE_ERROR(Entry("  ROOT %c = f32[99999999999,99999999999] parameter(0)\n"), "3:13",
                     "has too many elements");
  EXPECT_PARSE_ERROR(Entry("  ROOT %c = f32[-3] parameter(0)\n"), "3:13", "negative dimension");
  EXPECT_PARSE_ERROR(Entry("  ROOT %c = f32[99999999999999999999] parameter(0)\n"), "3:17",
                     "integer '99999999999999999999' does not fit in 64 bits");
  // Bounded dynamic dimensions parse (parser_xla_forms_test.cc); a bound
  // must follow the '<='.
  EXPECT_PARSE_ERROR(Entry("  ROOT %c = f32[<=] parameter(0)\n"), "3:19",
                     "expected a dimension size");
  EXPECT_PARSE_ERROR(Entry("  ROOT %c = f32[?] parameter(0)\n"), "3:17",
                     "unbounded dynamic dimensions ('?') are not supported");
  EXPECT_PARSE_ERROR(Entry("  ROOT %c = token[1] parameter(0)\n"), "3:13",
                     "a token has no dimensions: write token[]");
  EXPECT_PARSE_ERROR(Entry("  ROOT %c = f32[4] parameter(99999999999999)\n"), "3:8",
                     "parameter number 99999999999999 of computation '%main' is out of range");
}

TEST(ParserErrorsTest, Parameters) {
  EXPECT_PARSE_ERROR(Entry("  %a = f32[] parameter(0)\n  ROOT %b = f32[] parameter(0)\n"), "4:8",
                     "parameter number 0 of computation '%main' is already used by '%a'");
  EXPECT_PARSE_ERROR(Entry("  %a = f32[] parameter(0)\n  ROOT %b = f32[] parameter(2)\n"), "4:8",
                     "parameter number 2 of computation '%main' is out of range");
  EXPECT_PARSE_ERROR(Entry("  ROOT %a = f32[] parameter(-1)\n"), "3:29",
                     "parameter number must not be negative");
}

TEST(ParserErrorsTest, SignatureResultMustMatchTheRoot) {
  EXPECT_PARSE_ERROR(
      "HloModule m\nENTRY %e (a: f32[4]) -> s32[] {\n  ROOT %a = f32[4] "
      "parameter(0)\n}\n",
      "2:10", "the root of '%e' has shape f32[4] but the signature says s32[]");
}

// As XLA's parser does, the signature's parameter list is read and ignored:
// the body's parameter instructions define the computation.
TEST(ParserErrorsTest, SignatureParametersAreIgnored) {
  for (const char* text :
       {"HloModule m\nENTRY %e (a: f32[4]) -> f32[2] {\n  ROOT %a = f32[2] parameter(0)\n}\n",
        "HloModule m\nENTRY %e () -> f32[4] {\n  ROOT %a = f32[4] parameter(0)\n}\n",
        "HloModule m\nENTRY %e (t: ()) -> f32[4] {\n  ROOT %a = f32[4] parameter(0)\n}\n"}) {
    absl::StatusOr<std::unique_ptr<hlo::Module>> module = hlo::ParseModule(text);
    ASSERT_TRUE(module.ok()) << text << ": " << module.status();
    EXPECT_EQ((*module)->entry()->parameter(0)->shape().ToString(),
              std::string(text).find("f32[2] parameter") != std::string::npos ? "f32[2]" : "f32[4]");
  }
}

TEST(ParserErrorsTest, Header) {
  EXPECT_PARSE_ERROR("HloModule m, colour=blue\nENTRY %e {\n  ROOT %p = f32[] parameter(0)\n}\n",
                     "1:14", "unknown module attribute 'colour'");
  EXPECT_PARSE_ERROR("HloModule m, num_partitions=0\n", "1:29", "'num_partitions' must be in [1, ");
  EXPECT_PARSE_ERROR("HloModule m, num_partitions=2, num_partitions=2\n", "1:32",
                     "duplicate module attribute 'num_partitions'");
  EXPECT_PARSE_ERROR("HloModule m, mesh={a=2, a=2}\n", "1:25", "mesh axis 'a' appears twice");
  EXPECT_PARSE_ERROR("HloModule m, allow_spmd_sharding_propagation_to_output={yes}\n", "1:57",
                     "expected 'true' or 'false', found 'yes'");
}

TEST(ParserErrorsTest, Shardings) {
  const std::string p = "  ROOT %p = f32[4,4] parameter(0), sharding=";
  EXPECT_PARSE_ERROR(Entry(p + "{devices=[2,2]0,1,2}\n"), "3:59",
                     "tile assignment [2,2] needs 4 devices, but 3 are listed");
  EXPECT_PARSE_ERROR(Entry(p + "{devices=[2,2]0,1,2,3,4}\n"), "3:59",
                     "tile assignment [2,2] needs 4 devices, but more are listed");
  EXPECT_PARSE_ERROR(Entry(p + "{devices=[2,2]<=[4]T(0,0)}\n"), "3:61",
                     "iota transpose T(0,0) is not a permutation");
  EXPECT_PARSE_ERROR(Entry(p + "{devices=[0,2]0}\n"), "3:54",
                     "tile assignment dimensions must be positive");
  EXPECT_PARSE_ERROR(Entry(p + "{devices=[1048576,1048576]<=[1]}\n"), "3:54",
                     "tile assignment dimensions must be positive and name at most");
  EXPECT_PARSE_ERROR(Entry(p + "{replicated manual}\n"), "3:57",
                     "sharding already has a kind ('replicated'); found 'manual'");
  EXPECT_PARSE_ERROR(Entry(p + "{tiled}\n"), "3:46", "unknown sharding part 'tiled'");
  EXPECT_PARSE_ERROR(Entry(p + "{maximal}\n"), "3:46", "'maximal' needs 'device=N'");
  EXPECT_PARSE_ERROR(Entry(p + "{{replicated}, {{manual}}}\n"), "3:61",
                     "nested tuple shardings are written as one flat list of leaves");
  EXPECT_PARSE_ERROR(
      Entry(p + "{devices=[2]0,1 last_tile_dims={manual, replicated}}\n"), "3:46",
      "the sharding names 2 subgroup dimensions but its tile assignment has only 1 dimension");

  EXPECT_THAT(ParseSharding("{devices=[2]0,1} trailing"),
              StatusIs(kInvalid, HasSubstr("<sharding>:1:18: error: expected end of input, found "
                                           "'trailing'")));
  EXPECT_THAT(ParseSharding(""), StatusIs(kInvalid, HasSubstr("expected '{' to start a sharding")));
  EXPECT_THAT(ParseShape("f32[2]x"), StatusIs(kInvalid, HasSubstr("<shape>:1:7: error: expected "
                                                                  "end of input, found 'x'")));
  EXPECT_THAT(ParseShape("(f32[2]"), StatusIs(kInvalid, HasSubstr("expected ')' or ','")));
}

TEST(ParserErrorsTest, NestingDepthIsBounded) {
  ParseOptions options;
  options.max_nesting_depth = 10;
  EXPECT_THAT(
      ParseModule(Entry("  ROOT %p = ((((((((((((f32[])))))))))))) parameter(0)\n"), options),
      StatusIs(kInvalid, HasSubstr("<input>:3:22: error: nesting is deeper than the "
                                   "limit of 10 levels")));
  // Deep nesting at the default limit fails cleanly instead of overflowing the stack.
  std::string deep = Entry("  ROOT %p = " + std::string(200000, '(') + "f32[]" +
                           std::string(200000, ')') + " parameter(0)\n");
  EXPECT_THAT(ParseModule(deep), StatusIs(kInvalid, HasSubstr("nesting is deeper than the limit "
                                                              "of 1000 levels")));
  std::string braces = "HloModule m, frontend_attributes=" + std::string(100000, '{');
  EXPECT_THAT(ParseModule(braces), StatusIs(kInvalid, HasSubstr("nesting is deeper")));
  EXPECT_THAT(ParseSharding(std::string(5000, '{')), StatusIs(kInvalid, HasSubstr("error: ")));
}

TEST(ParserErrorsTest, InputSizeLimit) {
  ParseOptions options;
  options.max_input_bytes = 16;
  EXPECT_THAT(ParseModule("HloModule a_rather_long_name\n", options),
              StatusIs(kInvalid, HasSubstr("<input>:1:1: error: input is 29 bytes, more than the "
                                           "limit of 16 bytes")));
}

TEST(ParserErrorsTest, OperandShapeMustMatch) {
  EXPECT_PARSE_ERROR(Entry("  %p = f32[4] parameter(0)\n  ROOT %n = f32[4] negate(f32[2] %p)\n"),
                     "4:34", "operand '%p' has shape f32[4] but is written as f32[2]");
}

TEST(ParserErrorsTest, ParseAndVerifyReportsVerifierErrors) {
  // Syntactically fine, but the declared shape is wrong.
  auto result =
      ParseAndVerifyModule(Entry("  %p = f32[4] parameter(0)\n  ROOT %n = f32[5] negate(%p)\n"));
  EXPECT_THAT(result, StatusIs(kInvalid, HasSubstr("negate")));
}

}  // namespace
}  // namespace sharc::hlo
