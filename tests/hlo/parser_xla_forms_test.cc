// Tests of the XLA text forms sharc reads beyond its own printer's output:
// instructions without a result shape, module headers with XLA's attributes
// (kept, or dropped because they do not change what the program computes),
// headerless modules, and attributes accepted and ignored. Each accepted
// form round-trips (print(parse(x)) is a fixed point); each refused form
// fails with FILE:LINE:COL.
#include <string>

#include "hlo/passes/lower_for_compute.h"
#include "hlo/text/parser.h"
#include "hlo/text/printer.h"
#include "hlo/verifier/runnable_types.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::hlo {
namespace {

using ::sharc::testing::IsOk;
using ::sharc::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr absl::StatusCode kInvalid = absl::StatusCode::kInvalidArgument;

// Parses and verifies `text`, checks that its print is a fixed point and
// returns that print ("" on failure).
std::string RoundTrip(const std::string& text) {
  auto first = ParseAndVerifyModule(text);
  EXPECT_THAT(first, IsOk()) << text;
  if (!first.ok()) return "";
  std::string printed = PrintModule(**first);
  auto second = ParseAndVerifyModule(printed);
  EXPECT_THAT(second, IsOk()) << printed;
  if (!second.ok()) return "";
  EXPECT_EQ(PrintModule(**second), printed);
  return printed;
}

#define EXPECT_PARSE_ERROR(text, loc, message)                                                   \
  EXPECT_THAT(ParseModule(text), StatusIs(kInvalid, AllOf(HasSubstr("<input>:" loc ": error: "), \
                                                          HasSubstr(message))))

// ------------------------------------------------- shapes left out

TEST(ShapelessInstructionTest, ShapesComeFromTheOpTable) {
  std::string printed = RoundTrip(R"(HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = add(x, y)
}
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,4] parameter(1)
  d = dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  z = f32[] constant(0)
  r = reduce(d, z), dimensions={1}, to_apply=add
  n = negate(r)
  ROOT t = tuple(n, d, z)
})");
  EXPECT_THAT(printed, HasSubstr("ROOT %s = f32[] add(%x, %y)"));
  EXPECT_THAT(printed, HasSubstr("%d = f32[2,4] dot(%a, %b)"));
  EXPECT_THAT(printed, HasSubstr("%r = f32[2] reduce(%d, %z)"));
  EXPECT_THAT(printed, HasSubstr("ROOT %t = (f32[2], f32[2,4], f32[]) tuple(%n, %d, %z)"));
}

TEST(ShapelessInstructionTest, OpsWhoseShapeCannotBeInferredSaySo) {
  const std::string head = "HloModule m\nENTRY e {\n  a = f32[4] parameter(0)\n";
  EXPECT_PARSE_ERROR(head + "  ROOT c = convert(a)\n}\n", "4:12",
                     "cannot infer the result shape of 'convert'; write it before the opcode");
  EXPECT_PARSE_ERROR(head + "  ROOT r = reshape(a)\n}\n", "4:12",
                     "cannot infer the result shape of 'reshape'");
  EXPECT_PARSE_ERROR("HloModule m\nENTRY e {\n  ROOT a = parameter(0)\n}\n", "3:12",
                     "'parameter' needs its result shape written");
  EXPECT_PARSE_ERROR("HloModule m\nENTRY e {\n  ROOT c = constant(1)\n}\n", "3:12",
                     "'constant' needs its result shape written");
  // A misspelt element type is still reported as a shape error.
  EXPECT_PARSE_ERROR(head + "  ROOT n = f33[4] negate(a)\n}\n", "4:12", "expected a shape");
  // Inference errors name the operands' problem.
  EXPECT_PARSE_ERROR(head + "  b = f32[5] parameter(1)\n  ROOT s = add(a, b)\n}\n", "5:12",
                     "cannot infer the result shape of 'add'");
}

TEST(NestedInstructionTest, OperandsWrittenInPlace) {
  std::string printed = RoundTrip(R"(HloModule m
ENTRY e {
  add = add(f32[10] parameter(0), f32[10] parameter(1))
  ROOT root = tuple(add, add(add, multiply(add, f32[10] parameter(2))), add)
})");
  EXPECT_THAT(printed, HasSubstr("%parameter.1 = f32[10] parameter(0)"));
  EXPECT_THAT(printed, HasSubstr("%parameter.2 = f32[10] parameter(1)"));
  EXPECT_THAT(printed, HasSubstr("%add = f32[10] add(%parameter.1, %parameter.2)"));
  // Numbered in the order their opcodes are read.
  EXPECT_THAT(printed, HasSubstr("%multiply.4 = f32[10] multiply(%add, %parameter.5)"));
  EXPECT_THAT(printed, HasSubstr("%add.3 = f32[10] add(%add, %multiply.4)"));
  EXPECT_THAT(printed, HasSubstr("ROOT %root = (f32[10], f32[10], f32[10]) tuple(%add, %add.3, "
                                 "%add)"));
  // A nested instruction cannot carry attributes, so an op that needs one
  // says which.
  EXPECT_PARSE_ERROR("HloModule m\nENTRY e {\n  ROOT r = f32[2] reverse(f32[2] parameter(0))\n}\n",
                     "3:19", "missing required attribute");
  EXPECT_PARSE_ERROR("HloModule m\nENTRY e {\n  ROOT r = negate(parameter(0))\n}\n", "3:19",
                     "'parameter' needs its result shape written");
  // Nested instructions have their own bound, well inside the stack even
  // under the sanitizers (each level is a recursion), and the error says
  // so; 64 levels still parse.
  std::string deep;
  for (int i = 0; i < 3000; ++i) deep += "negate(";
  deep += "p";
  for (int i = 0; i < 3000; ++i) deep += ")";
  EXPECT_THAT(ParseModule("HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT r = " + deep +
                          "\n}\n"),
              StatusIs(kInvalid, HasSubstr("instructions nested as operands go deeper than the "
                                           "limit of 64 levels")));
  std::string ok;
  for (int i = 0; i < 64; ++i) ok += "negate(";
  ok += "p";
  for (int i = 0; i < 64; ++i) ok += ")";
  EXPECT_OK(ParseModule("HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT r = " + ok +
                        "\n}\n").status());
}

TEST(InlineComputationTest, CalledComputationsWrittenInPlace) {
  std::string printed = RoundTrip(R"(HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  z = f32[] constant(0)
  r = f32[] reduce(a, z), dimensions={0}, to_apply={
    x = f32[] parameter(0)
    y = f32[] parameter(1)
    ROOT s = f32[] add(x, y)
  }
  ROOT c = f32[] call(r), to_apply={ p = f32[] parameter(0)
    ROOT n = negate(p) }
})");
  EXPECT_THAT(printed, HasSubstr("%inline_computation.1 {\n  %x = f32[] parameter(0)"));
  EXPECT_THAT(printed, HasSubstr("to_apply=%inline_computation.1"));
  EXPECT_THAT(printed, HasSubstr("ROOT %c = f32[] call(%r), to_apply=%inline_computation.2"));
  // The body is checked like any computation's.
  EXPECT_PARSE_ERROR("HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n  ROOT c = f32[] "
                     "call(a), to_apply={ p = f32[] parameter(3) }\n}\n",
                     "4:38", "parameter number 3 of computation '%inline_computation.1' is out of "
                             "range");
}

// ------------------------------------------------- module headers

TEST(ModuleHeaderTest, XlaAttributesAreReadAndTheKeptOnesPrinted) {
  std::string printed = RoundTrip(R"(HloModule m, is_scheduled=true, entry_computation_layout={(f32[4]{0:T(128)S(1)})->(f32[4]{0})}, input_output_alias={ {}: (0, {}, may-alias) }, buffer_donor={ (0, {}) }, alias_passthrough_params=true, replica_count=2, num_partitions=2, allow_spmd_sharding_propagation_to_parameters={true}, allow_spmd_sharding_propagation_to_output={false,true}, frontend_attributes={xla.sdy.meshes="{mesh = #sdy.mesh<[\"x\"=2]>}"}, origin_recovery_table={}
ENTRY e {
  ROOT a = f32[4] parameter(0)
})");
  EXPECT_THAT(printed,
              HasSubstr("HloModule m, replica_count=2, num_partitions=2, "
                        "allow_spmd_sharding_propagation_to_parameters={true}, "
                        "allow_spmd_sharding_propagation_to_output={false,true}, "
                        "input_output_alias={ {}: (0, {}, may-alias) }, buffer_donor={ (0, {}) }, "
                        "frontend_attributes={xla.sdy.meshes="));
  EXPECT_THAT(printed, Not(HasSubstr("is_scheduled")));
}

TEST(ModuleHeaderTest, ColonAfterTheNameAndHeaderlessModules) {
  EXPECT_THAT(RoundTrip("HloModule old_style:\nENTRY e {\n  ROOT a = f32[] parameter(0)\n}\n"),
              HasSubstr("HloModule old_style\n"));
  // Without a header XLA names the module after its entry computation.
  EXPECT_THAT(RoundTrip("fusion {\n  ROOT a = f32[] parameter(0)\n}\n"),
              HasSubstr("HloModule module_fusion\n"));
  EXPECT_THAT(RoundTrip("c {\n  ROOT a = f32[] parameter(0)\n}\nENTRY e {\n  ROOT b = s32[] "
                        "parameter(0)\n}\n"),
              HasSubstr("HloModule module_e\n"));
  EXPECT_PARSE_ERROR("garbage here\n", "1:1", "expected 'HloModule'");
  EXPECT_PARSE_ERROR("HloModule m, bogus_attribute=1\nENTRY e {}\n", "1:14",
                     "unknown module attribute 'bogus_attribute'");
}

TEST(ModuleHeaderTest, StackFrameTablesAndMetadataFieldsAreDropped) {
  std::string printed = RoundTrip(R"(HloModule m
ENTRY e {
  a = f32[] parameter(0)
  ROOT n = f32[] negate(a), metadata={op_type="neg" op_name="jit(f)/neg" source_file="f.py" source_line=3 stack_frame_id=2 origin="x" result_accuracy={tolerance={atol=0}}}
}

FileNames
1 "f.py"
FunctionNames
1 "f"
FileLocations
1 {file_name_id=1 function_name_id=1 line=3 end_line=3 column=5 end_column=9}
StackFrames
1 {file_location_id=1 parent_frame_id=0}
2 {file_location_id=1 parent_frame_id=1}
)");
  EXPECT_THAT(printed, HasSubstr("metadata={op_type=\"neg\" op_name=\"jit(f)/neg\" "
                                 "source_file=\"f.py\" source_line=3}"));
  EXPECT_THAT(printed, Not(HasSubstr("StackFrames")));
  // A computation may still be called FileNames.
  EXPECT_THAT(RoundTrip("HloModule m\nFileNames {\n  ROOT a = f32[] parameter(0)\n}\n"),
              HasSubstr("ENTRY %FileNames {"));
  EXPECT_PARSE_ERROR("HloModule m\nENTRY e {\n  ROOT a = f32[] parameter(0)\n}\nFileNames\n1 f\n",
                     "6:3", "expected a string or '{' in a stack frame table row");
}

// ------------------------------------------------- ignored attributes

TEST(IgnoredAttributeTest, AttributesThatDoNotChangeValuesAreAccepted) {
  std::string printed = RoundTrip(R"(HloModule m
f {
  x = f32[] parameter(0)
  ROOT n = f32[] negate(x)
}
ENTRY e {
  p = f32[] parameter(0), origin={{"p"}}
  ROOT c = f32[] call(p), to_apply=f, is_composite=true, frontend_attributes={composite.name="foo",composite.version="1"}, statistics={visualizing_index=1,stat-1=33}
})");
  EXPECT_THAT(printed, Not(HasSubstr("is_composite")));
  EXPECT_THAT(printed, Not(HasSubstr("origin")));
  EXPECT_THAT(printed, HasSubstr("frontend_attributes={composite.name=\"foo\""));
}

TEST(IgnoredAttributeTest, BracedValuesMayHoldAnotherLanguagesText) {
  // MLIR attributes (`dense<1> : tensor<i32>`) inside frontend_attributes
  // and backend_config are kept verbatim; braces inside strings do not count.
  std::string printed = RoundTrip(R"(HloModule m
ENTRY e {
  p = f32[] parameter(0), frontend_attributes={composite.attributes={n = 1 : i32, tensor = dense<1> : tensor<i32>},composite.name="a}b"}
  ROOT n = f32[] negate(p), backend_config={user_attr = dense<42> : tensor<i32>}
})");
  EXPECT_THAT(printed, HasSubstr("tensor = dense<1> : tensor<i32>},composite.name=\"a}b\"}"));
  EXPECT_PARSE_ERROR("HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0), "
                     "frontend_attributes={a=\"x\"\n",
                     "3:52", "unbalanced braces: this '{' has no matching '}'");
}

TEST(IgnoredAttributeTest, UnknownAttributesStillFailWithALocation) {
  EXPECT_PARSE_ERROR(
      "HloModule m\nENTRY e {\n  a = f32[4] parameter(0)\n  ROOT n = f32[4] negate(a), "
      "rounding=up\n}\n",
      "4:30", "unknown attribute 'rounding' for op 'negate'");
}

// ------------------------------------------------- types without storage

TEST(TypesWithoutStorageTest, ParsePrintAndVerify) {
  std::string printed = RoundTrip(R"(HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = s4[8] parameter(1)
  c = u4[2,2] parameter(2)
  d = s2[1] parameter(3)
  e = u2[1] parameter(4)
  z = c64[3] parameter(5)
  w = c128[] parameter(6)
  f = f8e4m3fn[4] convert(a)
  g = f8e5m2[4] convert(f)
  h = f8e4m3b11fnuz[4] convert(a)
  i = f8e4m3fnuz[4] convert(a)
  j = f8e5m2fnuz[4] convert(a)
  k = f8e4m3[4] convert(a)
  l = f8e3m4[4] convert(a)
  m = f4e2m1fn[4] convert(a)
  n = f8e8m0fnu[4] convert(a)
  s = add(g, g)
  ROOT t = tuple(b, c, d, e, z, w, h, i, j, k, l, m, n, s)
})");
  EXPECT_THAT(printed, HasSubstr("%s = f8e5m2[4] add(%g, %g)"));
  EXPECT_THAT(printed, HasSubstr("(s4[8], u4[2,2], s2[1], u2[1], c64[3], c128[], f8e4m3b11fnuz[4], "
                                 "f8e4m3fnuz[4], f8e5m2fnuz[4], f8e4m3[4], f8e3m4[4], "
                                 "f4e2m1fn[4], f8e8m0fnu[4], f8e5m2[4]) tuple("));
  auto module = ParseAndVerifyModule(printed);
  ASSERT_THAT(module, IsOk());
  // Arithmetic on a narrow type runs only once LowerForCompute has moved it
  // to f32 between converts (narrow_types_test.cc runs such programs).
  EXPECT_THAT(CheckRunnableTypes(**module),
              StatusIs(absl::StatusCode::kUnimplemented,
                       AllOf(HasSubstr("unsupported: f8e5m2 add"), HasSubstr("at <input>:20:3"))));
  ASSERT_THAT(LowerForCompute(**module), IsOk());
  EXPECT_THAT(CheckRunnableTypes(**module), IsOk());
}

// Constants of the complex and narrow types hold their values (printed
// back exactly; a narrow float's to the pattern nearest the written value).
TEST(TypesWithoutStorageTest, ComplexAndSubByteConstantsRoundTrip) {
  std::string printed = RoundTrip(R"(HloModule m
ENTRY e {
  z = c64[3] constant({(1, -2.5), (-inf, nan), (0.1, 3e+38)})
  w = c128[] constant((1e+300, -0))
  s = s4[3] constant({-8, 7, 0})
  u = u2[2] constant({3, 0})
  f = f8e4m3fn[3] constant({0.1, -448, nan})
  ROOT t = tuple(z, w, s, u, f)
})");
  EXPECT_THAT(printed, HasSubstr("%f = f8e4m3fn[3] constant({0.1015625, -448, nan})"));
  EXPECT_THAT(printed, HasSubstr("%z = c64[3] constant({(1, -2.5), (-inf, nan), (0.100000001, 3.00000001e+38)})"));
  EXPECT_THAT(printed, HasSubstr("%w = c128[] constant((1.0000000000000001e+300, -0))"));
  EXPECT_THAT(printed, HasSubstr("%s = s4[3] constant({-8, 7, 0})"));
  EXPECT_THAT(printed, HasSubstr("%u = u2[2] constant({3, 0})"));
  EXPECT_PARSE_ERROR("HloModule m\nENTRY e {\n  ROOT c = s4[2] constant({-9, 0})\n}\n", "3:28",
                     "value -9 is out of range for s4");
  EXPECT_PARSE_ERROR("HloModule m\nENTRY e {\n  ROOT c = c64[] constant((1e+100, 0))\n}\n", "3:28",
                     "value 1e+100 is out of range for the parts of c64 (f32)");
  EXPECT_PARSE_ERROR("HloModule m\nENTRY e {\n  ROOT c = c64[] constant(1)\n}\n", "3:27",
                     "'(' to start a c64 value (real, imaginary)");
}

TEST(TypesWithoutStorageTest, ConstantsAndUnsupportedOpsFailCleanly) {
  EXPECT_PARSE_ERROR("HloModule m\nENTRY e {\n  ROOT c = f8e4m3fn[] constant(1000)\n}\n", "3:32",
                     "value 1000 is out of range for f8e4m3fn");
  // maximum of complex values has no meaning (complex numbers are not
  // ordered): the verifier says so rather than computing. complex_eval_test.cc
  // runs the arithmetic that has one.
  EXPECT_THAT(ParseAndVerifyModule("HloModule m\nENTRY e {\n  a = c64[2] parameter(0)\n"
                                   "  ROOT s = c64[2] maximum(a, a)\n}\n"),
              StatusIs(kInvalid, HasSubstr("c64")));
  // A token is a type of its own (token_ops_test.cc), with no dimensions.
  EXPECT_PARSE_ERROR("HloModule m\nENTRY e {\n  ROOT t = token[2] parameter(0)\n}\n", "3:12",
                     "a token has no dimensions: write token[]");
}

TEST(BoundedDynamicShapeTest, ParsePrintVerifyButDoNotRun) {
  std::string printed = RoundTrip(R"(HloModule m
ENTRY e {
  a = f32[<=8,4] parameter(0)
  n = f32[<=8,4] negate(a)
  ROOT t = (f32[<=8,4], s32[<=3]) tuple(n, s32[<=3] parameter(1))
})");
  EXPECT_THAT(printed, HasSubstr("%n = f32[<=8,4] negate(%a)"));
  EXPECT_THAT(printed, HasSubstr("ROOT %t = (f32[<=8,4], s32[<=3]) tuple(%n, %parameter.1)"));
  auto module = ParseAndVerifyModule(printed);
  ASSERT_THAT(module, IsOk());
  EXPECT_THAT(CheckRunnableTypes(**module),
              StatusIs(kInvalid, HasSubstr("value '%a' has a bounded dynamic shape f32[<=8,4], "
                                           "which sharc reads and verifies but cannot compute")));
}

// ------------------------------------------------- long lines in messages

TEST(LongMessageTest, ParseErrorsCutLongLinesWithAnEllipsisAroundTheCaret) {
  std::string values;
  for (int i = 0; i < 400; ++i) values += i == 0 ? "1" : ", 1";
  auto result = ParseModule("HloModule m\nENTRY e {\n  ROOT c = f32[399] constant({" + values +
                            "})\n}\n");
  ASSERT_FALSE(result.ok());
  std::string message(result.status().message());
  EXPECT_THAT(message, HasSubstr("<input>:3:"));
  EXPECT_THAT(message, HasSubstr("\n..., 1, 1"));
  EXPECT_LT(message.size(), 400u) << message;
  // The caret still points at the offending element, past the "...".
  std::string caret_line = message.substr(message.rfind('\n') + 1);
  std::string source_line = message.substr(0, message.rfind('\n'));
  source_line = source_line.substr(source_line.rfind('\n') + 1);
  ASSERT_EQ(caret_line.back(), '^');
  EXPECT_EQ(source_line[caret_line.size() - 1], '1');
}

TEST(LongMessageTest, VerifierErrorsCutLongInstructions) {
  std::string name(5000, 'x');
  auto result = ParseAndVerifyModule("HloModule m\nENTRY e {\n  a = f32[3] parameter(0)\n"
                                     "  ROOT n = f32[4] negate(a), metadata={op_name=\"" + name +
                                     "\"}\n}\n");
  ASSERT_FALSE(result.ok());
  std::string message(result.status().message());
  EXPECT_THAT(message, HasSubstr("characters)` at <input>:4:8"));
  EXPECT_LT(message.size(), 500u);
}

}  // namespace
}  // namespace sharc::hlo
