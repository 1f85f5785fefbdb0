// Input that XLA's parser refuses is refused by sharc's too, with a located
// error, even where sharc drops what it checks: out-of-range float literals,
// the header's buffer aliasing, custom-call layout constraints, layout
// details, async chains, control predecessors and result_accuracy. And the
// aliasing maps sharc keeps are printed back so that a round trip keeps them.
#include <string>

#include "hlo/text/parser.h"
#include "hlo/text/printer.h"
#include "tests/hlo/parse_error_expectations.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::hlo {
namespace {

using ::sharc::testing::IsOk;
using ::sharc::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr absl::StatusCode kInvalid = absl::StatusCode::kInvalidArgument;



// ------------------------------------------------------------ float literals

TEST(ParserXlaChecksTest, FloatLiteralOutOfRangeForItsType) {
  // f16's largest value is 65504; 65520 is halfway to the next step and
  // rounds to infinity, 65519 rounds down to 65504.
  EXPECT_PARSE_ERROR(Entry("  ROOT %c = f16[] constant(65520)\n"), "3:28",
                     "value 65520 is out of range for f16");
  EXPECT_PARSE_ERROR(Entry("  ROOT %c = f16[2] constant({1, -70000})\n"), "3:33",
                     "value -70000 is out of range for f16");
  EXPECT_THAT(ParseModule(Entry("  ROOT %c = f16[] constant(65519)\n")), IsOk());
  // bf16 has f32's range.
  EXPECT_PARSE_ERROR(Entry("  ROOT %c = bf16[] constant(2e39)\n"), "3:29",
                     "value 2e39 is out of range for bf16");
  EXPECT_THAT(ParseModule(Entry("  ROOT %c = bf16[] constant(3e38)\n")), IsOk());
  EXPECT_PARSE_ERROR(Entry("  ROOT %c = f32[] constant(-3.5e38)\n"), "3:28",
                     "value -3.5e38 is out of range for f32");
  // A number beyond f64 is not read as infinity.
  EXPECT_PARSE_ERROR(Entry("  ROOT %c = f64[] constant(2.5e308)\n"), "3:28",
                     "value 2.5e308 is out of range for f64");
  EXPECT_PARSE_ERROR(Entry("  ROOT %c = f64[] constant(-2.5e308)\n"), "3:28",
                     "value -2.5e308 is out of range for f64");
  // Infinity and NaN are still written as words.
  EXPECT_THAT(ParseModule(Entry("  ROOT %c = f16[3] constant({inf, -inf, nan})\n")), IsOk());
  EXPECT_THAT(ParseModule(Entry("  ROOT %c = f64[] constant(1.5e308)\n")), IsOk());
}

// ---------------------------------------------------------- buffer aliasing

constexpr char kTwoOutputs[] = R"(
ENTRY %main {
  %p = (f32[], f32[2]) parameter(0)
  %q = f32[] parameter(1)
  %a = f32[] get-tuple-element(%p), index=0
  %b = f32[2] get-tuple-element(%p), index=1
  ROOT %t = (f32[], f32[2]) tuple(%a, %b)
}
)";

std::string WithHeader(const std::string& attributes) {
  return "HloModule m, " + attributes + "\n" + kTwoOutputs;
}

TEST(ParserXlaChecksTest, AliasingIsKeptAndPrintedBack) {
  std::string text = WithHeader(
      "input_output_alias={ {1}: (0, {1}, must-alias), {0}: (1, {}) }, "
      "buffer_donor={ (0, {0}), (1, {}) }");
  auto module = ParseModule(text);
  ASSERT_THAT(module, IsOk());
  const ModuleConfig& config = (*module)->config();
  ASSERT_EQ(config.input_output_alias.size(), 2u);
  EXPECT_EQ(config.input_output_alias[0],
            (InputOutputAlias{{1}, 0, {1}, /*must_alias=*/true}));
  EXPECT_EQ(config.input_output_alias[1], (InputOutputAlias{{0}, 1, {}, false}));
  ASSERT_EQ(config.buffer_donors.size(), 2u);
  EXPECT_EQ(config.buffer_donors[0], (BufferDonor{0, {0}}));
  EXPECT_EQ(config.buffer_donors[1], (BufferDonor{1, {}}));

  std::string printed = PrintModule(**module);
  EXPECT_THAT(printed, HasSubstr("input_output_alias={ {1}: (0, {1}, must-alias), "
                                 "{0}: (1, {}, may-alias) }"));
  EXPECT_THAT(printed, HasSubstr("buffer_donor={ (0, {0}), (1, {}) }"));
  auto reparsed = ParseModule(printed);
  ASSERT_THAT(reparsed, IsOk());
  EXPECT_EQ((*reparsed)->config().input_output_alias, config.input_output_alias);
  EXPECT_EQ((*reparsed)->config().buffer_donors, config.buffer_donors);
  EXPECT_EQ(PrintModule(**reparsed), printed);
  // A clone keeps them too.
  EXPECT_EQ((*module)->Clone()->config().input_output_alias, config.input_output_alias);
}

TEST(ParserXlaChecksTest, AliasingSyntaxErrors) {
  EXPECT_PARSE_ERROR(WithHeader("input_output_alias={ {0, x}: (0, {0}) }"), "1:39",
                     "expected an integer in an output shape index, found");
  EXPECT_PARSE_ERROR(WithHeader("input_output_alias={ {0}: (0, {0}), (1, {}) }"), "1:50",
                     "expected '{' to start an output shape index, found '('");
  EXPECT_PARSE_ERROR(WithHeader("input_output_alias={ {0}: (0, {0}): {1} }"), "1:48",
                     "expected '}' or ',' in 'input_output_alias', found ':'");
  EXPECT_PARSE_ERROR(WithHeader("input_output_alias={ {0}: (one, {0}) }"), "1:41",
                     "expected a parameter number, found");
  EXPECT_PARSE_ERROR(WithHeader("input_output_alias={ {0} (0, {0}) }"), "1:39",
                     "expected ':' after the output index");
  EXPECT_PARSE_ERROR(WithHeader("input_output_alias={ {0}: (0, {0}, alias) }"), "1:49",
                     "expected 'must-alias' or 'may-alias'");
  EXPECT_PARSE_ERROR(WithHeader("buffer_donor={ (0, {1, y}) }"), "1:37",
                     "expected an integer in a parameter shape index");
  EXPECT_PARSE_ERROR(WithHeader("buffer_donor={ (zero, {0}) }"), "1:30",
                     "expected a parameter number, found");
  EXPECT_PARSE_ERROR(WithHeader("buffer_donor={ {0}: (0, {0}) }"), "1:29",
                     "expected '(' to start a donor");
}

TEST(ParserXlaChecksTest, AliasingMustNameWhatTheEntryHas) {
  EXPECT_PARSE_ERROR(WithHeader("input_output_alias={ {2}: (0, {0}) }"), "1:35",
                     "input_output_alias: the entry's result ((f32[], f32[2])) has no element at "
                     "output index {2}");
  EXPECT_PARSE_ERROR(WithHeader("input_output_alias={ {0}: (0, {0}), {1}: (2, {}) }"), "1:50",
                     "input_output_alias names parameter 2, but the entry computation '%main' has "
                     "2 parameters");
  EXPECT_PARSE_ERROR(WithHeader("input_output_alias={ {1}: (0, {1, 0}) }"), "1:35",
                     "parameter 0 ('%p', (f32[], f32[2])) has no element at index {1, 0}");
  EXPECT_PARSE_ERROR(WithHeader("input_output_alias={ {0}: (0, {0}), {0}: (1, {}) }"), "1:50",
                     "output index {0} is already aliased (at 1:35)");
  EXPECT_PARSE_ERROR(WithHeader("input_output_alias={ {0}: (0, {1}) }"), "1:35",
                     "input_output_alias: output {0} (f32[]) and parameter 0 at {1} (f32[2]) are "
                     "not arrays of the same size");
  EXPECT_PARSE_ERROR(WithHeader("input_output_alias={ {}: (0, {}) }"), "1:35",
                     "are not arrays of the same size");
  EXPECT_PARSE_ERROR("HloModule m, input_output_alias={ {0}: (0, {}), {1}: (0, {}) }\n"
                     "ENTRY %main {\n  %p = f32[] parameter(0)\n"
                     "  ROOT %t = (f32[], f32[]) tuple(%p, %p)\n}\n",
                     "1:49", "input_output_alias: parameter 0 at {} is already aliased (at 1:35)");
  EXPECT_PARSE_ERROR(WithHeader("buffer_donor={ (1, {0}) }"), "1:29",
                     "buffer_donor: parameter 1 ('%q', f32[]) has no element at index {0}");
  EXPECT_PARSE_ERROR(WithHeader("buffer_donor={ (-1, {}) }"), "1:29",
                     "buffer_donor names parameter -1");
}

// ------------------------------------------------------------- custom-call

TEST(ParserXlaChecksTest, OperandLayoutConstraintsMatchTheOperands) {
  const std::string operands =
      "  %a = f32[4,2] parameter(0)\n  %b = s32[3] parameter(1)\n"
      "  ROOT %c = f32[4] custom-call(%a, %b), custom_call_target=\"t\", ";
  EXPECT_THAT(ParseModule(Entry(
                  operands + "operand_layout_constraints={f32[4,2]{0,1}, s32[3]{0}}\n")),
              IsOk());
  EXPECT_PARSE_ERROR(Entry(operands + "operand_layout_constraints={f32[4,2]{1,0}}\n"), "5:65",
                     "operand_layout_constraints has 1 shapes but the custom-call has 2 operands");
  EXPECT_PARSE_ERROR(Entry(operands + "operand_layout_constraints={f32[4,2]{1,0}, s32[4]{0}}\n"),
                     "5:108",
                     "operand_layout_constraints shape s32[4] for operand 1 is not the operand's "
                     "shape s32[3]");
}

TEST(ParserXlaChecksTest, CustomCallApiVersionMustBeAVersion) {
  const std::string call =
      "  %a = f32[2] parameter(0)\n  ROOT %c = f32[2] custom-call(%a), custom_call_target=\"t\", ";
  EXPECT_THAT(ParseAndVerifyModule(Entry(call + "api_version=API_VERSION_TYPED_FFI\n")), IsOk());
  EXPECT_THAT(ParseAndVerifyModule(Entry(call + "api_version=API_VERSION_UNSPECIFIED\n")),
              StatusIs(kInvalid, AllOf(HasSubstr("api_version must be one of API_VERSION_ORIGINAL"),
                                       HasSubstr("%c"), HasSubstr("<input>:4:8"))));
}

// ----------------------------------------------------------------- layouts

TEST(ParserXlaChecksTest, LayoutDetailsAreChecked) {
  EXPECT_PARSE_ERROR(Entry("  ROOT %p = f32[4,4]{1,0:D(D,Q)} parameter(0)\n"), "3:21",
                     "invalid dim level type 'Q' in layout {1,0:D(D,Q)}: expected D, C, S or H");
  EXPECT_PARSE_ERROR(Entry("  ROOT %p = f32[4,4]{1,0:T(8,128)P(f32[4,4])} parameter(0)\n"),
                     "3:21", "has a physical shape (P(...)) but the array is not sparse");
  EXPECT_THAT(ParseModule(Entry("  ROOT %p = f32[4,4]{1,0:D(D,D)T(8,128)} parameter(0)\n")),
              IsOk());
  // A dim index too large for any array (found by the parser fuzzer, where
  // the digits overflowed) names no dim; the layout only reorders.
  EXPECT_THAT(ParseModule(Entry("  ROOT %p = f32[4,4]{88888888888888888888888,0} parameter(0)\n")),
              IsOk());
}

// ---------------------------------------------------------- async chains

TEST(ParserXlaChecksTest, AsyncStartsDoNotShareAComputation) {
  const std::string text = R"(HloModule m
%wrapped (x: f32[3]) -> f32[3] {
  %x = f32[3] parameter(0)
  ROOT %n = f32[3] negate(%x)
}
ENTRY %main {
  %p = f32[3] parameter(0)
  %s1 = ((f32[3]), f32[3], s32[]) async-start(%p), calls=%wrapped
  %d1 = f32[3] async-done(%s1)
  %s2 = ((f32[3]), f32[3], s32[]) async-start(%d1), calls=%wrapped
  ROOT %d2 = f32[3] async-done(%s2)
}
)";
  EXPECT_PARSE_ERROR(text, "10:3",
                     "computation '%wrapped' is already called by the async-start at 8:3");
}

TEST(ParserXlaChecksTest, AsyncUpdateAndDoneKeepTheirStartsThread) {
  auto chain = [](const std::string& start, const std::string& update, const std::string& done) {
    return Entry("  %p = f32[3] parameter(0)\n"
                 "  %s = ((f32[3]), f32[3], s32[]) custom-call-start(%p), custom_call_target=\"f\"" +
                 start + "\n  %u = ((f32[3]), f32[3], s32[]) custom-call-update(%s)" + update +
                 "\n  ROOT %d = f32[3] custom-call-done(%u)" + done + "\n");
  };
  EXPECT_THAT(ParseModule(chain("", "", "")), IsOk());
  EXPECT_THAT(ParseModule(chain("", ", async_execution_thread=\"main\"", "")), IsOk());
  EXPECT_THAT(ParseModule(chain(", async_execution_thread=\"side\"", "",
                                ", async_execution_thread=\"side\"")),
              IsOk());
  // The thread written before a computation written in place still counts.
  EXPECT_THAT(ParseModule(Entry(
                  "  %p = f32[3] parameter(0)\n"
                  "  %s = ((f32[3]), f32[3], s32[]) async-start(%p), async_execution_thread=\"side\", "
                  "calls={ %x = f32[3] parameter(0)\n ROOT %n = f32[3] negate(%x) }\n"
                  "  ROOT %d = f32[3] async-done(%s), async_execution_thread=\"side\"\n")),
              IsOk());
  EXPECT_PARSE_ERROR(chain("", ", async_execution_thread=\"side\"", ""), "5:81",
                     "async_execution_thread is \"side\" but the async-start '%s' runs on \"main\"");
  EXPECT_PARSE_ERROR(chain(", async_execution_thread=\"side\"", "",
                           ", async_execution_thread=\"other\""),
                     "6:65",
                     "async_execution_thread is \"other\" but the async-start '%s' runs on "
                     "\"side\"");
}

// ---------------------------------------------------- control predecessors

TEST(ParserXlaChecksTest, ControlPredecessorsMustBeDefined) {
  EXPECT_PARSE_ERROR(Entry("  %a = f32[] parameter(0)\n"
                           "  ROOT %b = f32[] negate(%a), control-predecessors={%a, %gone}\n"),
                     "4:57", "control predecessor '%gone' is not defined in computation '%main'");
  EXPECT_THAT(ParseModule(Entry("  %a = f32[] parameter(0)\n"
                                "  %b = f32[] negate(%a), control-predecessors={%c}\n"
                                "  ROOT %c = f32[] abs(%a)\n")),
              IsOk());
}

// ---------------------------------------------------------- result_accuracy

TEST(ParserXlaChecksTest, ResultAccuracyIsCheckedThenDropped) {
  const std::string unary = "  %x = f32[] parameter(0)\n  ROOT %y = f32[] ";
  for (const char* ok :
       {"exponential(%x), result_accuracy={mode=highest}", "log(%x), result_accuracy={mode=DEFAULT}",
        "tanh(%x), result_accuracy={tolerance={atol=0.5,rtol=0,ulps=4}}"}) {
    EXPECT_THAT(ParseModule(Entry(unary + ok + "\n")), IsOk()) << ok;
  }
  EXPECT_PARSE_ERROR(Entry(unary + "sine(%x), result_accuracy={mode=fast}\n"), "4:51",
                     "unknown result_accuracy mode 'fast'; expected 'default' or 'highest'");
  EXPECT_PARSE_ERROR(Entry(unary + "sine(%x), result_accuracy={2}\n"), "4:46",
                     "expected 'mode' or 'tolerance' in 'result_accuracy'");
  EXPECT_PARSE_ERROR(Entry(unary + "sine(%x), result_accuracy={speed=2}\n"), "4:46",
                     "unknown result_accuracy field 'speed'; expected 'mode' or 'tolerance'");
  EXPECT_PARSE_ERROR(Entry(unary + "sine(%x), result_accuracy={tolerance={eps=1}}\n"), "4:57",
                     "unknown result_accuracy tolerance field 'eps'");
  EXPECT_PARSE_ERROR(Entry(unary + "negate(%x), result_accuracy={mode=highest}\n"), "4:31",
                     "unexpected attribute 'result_accuracy' for op 'negate'");
}

}  // namespace
}  // namespace sharc::hlo
