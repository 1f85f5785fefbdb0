// Tests of vmap (hlo/batching/): every op with a batching rule is vmapped
// under every pattern of batched parameters and several batch sizes, and the
// vmapped computation, run by the interpreter on random inputs, must equal f
// evaluated slice by slice (bit for bit). Also: the rule table is complete,
// shardings get their leading dim, and unsupported ops say why.
#include "hlo/batching/vmap.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "hlo/batching/batching_rule.h"
#include "hlo/eval/interpreter.h"
#include "hlo/ir/module.h"
#include "hlo/passes/lower_for_compute.h"
#include "hlo/text/parser.h"
#include "hlo/verifier/verifier.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::hlo {
namespace {

using ::testing::HasSubstr;

// Small values so that integer ops stay interesting (indices partly out of
// range, shifts of a few bits) and floats are exact in every type.
Literal RandomLiteral(const Shape& shape, std::mt19937_64& rng) {
  if (shape.is_tuple()) {
    std::vector<Literal> elements;
    for (const Shape& s : shape.tuple_shapes()) elements.push_back(RandomLiteral(s, rng));
    return Literal::Tuple(std::move(elements));
  }
  Literal l(shape);
  for (int64_t i = 0; i < l.num_elements(); ++i) {
    if (shape.type() == PrimitiveType::kPred) {
      l.SetFromInt64(i, static_cast<int64_t>(rng() % 2));
    } else if (IsFloatingPoint(shape.type())) {
      l.SetFromDouble(i, static_cast<double>(static_cast<int64_t>(rng() % 41) - 20) / 4.0);
    } else if (IsUnsignedInteger(shape.type())) {
      l.SetFromInt64(i, static_cast<int64_t>(rng() % 9));
    } else {
      l.SetFromInt64(i, static_cast<int64_t>(rng() % 11) - 3);
    }
  }
  return l;
}

// Slice `b` of a value batched at dim 0 (every leaf).
Literal SliceOf(const Literal& batched, int64_t b) {
  if (batched.is_tuple()) {
    std::vector<Literal> elements;
    for (const Literal& e : batched.elements()) elements.push_back(SliceOf(e, b));
    return Literal::Tuple(std::move(elements));
  }
  const Shape& shape = batched.shape();
  Shape slice_shape(shape.type(),
                    std::vector<int64_t>(shape.dims().begin() + 1, shape.dims().end()));
  Literal slice(slice_shape);
  const int64_t bytes = slice.size_bytes();
  if (bytes > 0) {
    std::memcpy(slice.untyped_data(), batched.untyped_data() + b * bytes,
                static_cast<size_t>(bytes));
  }
  return slice;
}

Shape Batched(const Shape& shape, int64_t batch_size) {
  if (shape.is_tuple()) {
    std::vector<Shape> elements;
    for (const Shape& s : shape.tuple_shapes()) elements.push_back(Batched(s, batch_size));
    return Shape::Tuple(std::move(elements));
  }
  std::vector<int64_t> dims = {batch_size};
  dims.insert(dims.end(), shape.dims().begin(), shape.dims().end());
  return Shape(shape.type(), std::move(dims));
}

// Vmaps the entry of `text` with `batched` and `batch_size` and compares with
// slice-by-slice evaluation on random inputs.
void ExpectVmapMatchesSlices(const std::string& text, const std::vector<bool>& batched,
                             int64_t batch_size, uint64_t seed = 1) {
  std::string pattern;
  for (bool b : batched) pattern += b ? "B" : "-";
  SCOPED_TRACE(absl::StrCat("batched params ", pattern, ", batch size ", batch_size));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseAndVerifyModule(text));
  Computation* f = module->entry();
  std::unique_ptr<bool[]> flags(new bool[batched.size()]);
  for (size_t i = 0; i < batched.size(); ++i) flags[i] = batched[i];
  ASSERT_OK_AND_ASSIGN(Computation * vmapped,
                       Vmap(*module, *f, absl::Span<const bool>(flags.get(), batched.size()),
                            batch_size, "vmapped"));
  ASSERT_OK(VerifyModule(*module)) << module->ToString();
  // The result prints and parses back (names unique, callees first).
  ASSERT_OK(ParseAndVerifyModule(module->ToString()).status()) << module->ToString();

  std::mt19937_64 rng(seed);
  std::vector<Literal> args;
  for (int64_t i = 0; i < f->num_parameters(); ++i) {
    const Shape& shape = f->parameter(i)->shape();
    args.push_back(RandomLiteral(batched[i] ? Batched(shape, batch_size) : shape, rng));
  }
  module->set_entry(vmapped);
  ASSERT_OK_AND_ASSIGN(Literal result, Evaluate(*module, args));
  module->set_entry(f);
  ASSERT_EQ(result.shape(), Batched(f->root()->shape(), batch_size)) << module->ToString();
  for (int64_t b = 0; b < batch_size; ++b) {
    std::vector<Literal> slice_args;
    for (size_t i = 0; i < args.size(); ++i) {
      slice_args.push_back(batched[i] ? SliceOf(args[i], b) : args[i]);
    }
    ASSERT_OK_AND_ASSIGN(Literal expected, Evaluate(*module, slice_args));
    ASSERT_EQ(SliceOf(result, b), expected) << "slice " << b << "\n" << module->ToString();
  }
}

// Every pattern of batched parameters, batch sizes 0, 1 and 3.
void ExpectVmapMatchesSlicesForAllPatterns(const std::string& text) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseAndVerifyModule(text));
  const int64_t n = module->entry()->num_parameters();
  for (int64_t pattern = 0; pattern < (int64_t{1} << n); ++pattern) {
    std::vector<bool> batched;
    for (int64_t i = 0; i < n; ++i) batched.push_back(((pattern >> i) & 1) != 0);
    for (int64_t batch_size : {0, 1, 3}) {
      ExpectVmapMatchesSlices(text, batched, batch_size, static_cast<uint64_t>(pattern + 1));
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

// A module whose entry has parameters of `shapes` and the given body lines
// (the parameters are %p0, %p1, ...).
std::string Entry(const std::vector<std::string>& shapes, const std::string& body,
                  const std::string& computations = "", const std::string& header = "HloModule m") {
  std::string params;
  for (size_t i = 0; i < shapes.size(); ++i) {
    absl::StrAppend(&params, "  %p", i, " = ", shapes[i], " parameter(", i, ")\n");
  }
  return absl::StrCat(header, "\n\n", computations, "ENTRY %f {\n", params, body, "}\n");
}

const char* const kAdd = R"(%add {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

)";

// ------------------------------------------------------------ rule table --

TEST(VmapRuleTableTest, EveryOpcodeHasARuleOrAnUnsupportedReason) {
  for (int i = 0; i < kNumOpcodes; ++i) {
    const Opcode opcode = static_cast<Opcode>(i);
    const BatchingRule* rule = FindBatchingRule(opcode);
    ASSERT_NE(rule, nullptr) << OpcodeName(opcode) << " has no batching rule";
    EXPECT_TRUE(static_cast<bool>(rule->batch) != !rule->unsupported_reason.empty())
        << OpcodeName(opcode) << " must have exactly one of a rule and an unsupported reason";
  }
}

// ----------------------------------------------------------- elementwise --

TEST(VmapElementwiseTest, UnaryOps) {
  for (const char* op : {"abs",
                         "acos", "asin", "atanh", "asinh", "cosh", "sinh", "erf",
                         "cbrt",
                         "ceil",
                         "copy",
                         "cosine",
                         "exponential",
                         "exponential-minus-one",
                         "floor",
                         "log",
                         "log-plus-one",
                         "logistic",
                         "negate",
                         "round-nearest-afz",
                         "round-nearest-even",
                         "rsqrt",
                         "sign",
                         "sine",
                         "sqrt",
                         "tan",
                         "tanh"}) {
    SCOPED_TRACE(op);
    ExpectVmapMatchesSlicesForAllPatterns(
        Entry({"f32[2,3]"}, absl::StrCat("  ROOT %r = f32[2,3] ", op, "(%p0)\n")));
  }
  ExpectVmapMatchesSlicesForAllPatterns(
      Entry({"f32[2,3]"}, "  ROOT %r = pred[2,3] is-finite(%p0)\n"));
  ExpectVmapMatchesSlicesForAllPatterns(Entry({"pred[4]"}, "  ROOT %r = pred[4] not(%p0)\n"));
  ExpectVmapMatchesSlicesForAllPatterns(Entry({"s32[4]"}, "  ROOT %r = s32[4] not(%p0)\n"));
  ExpectVmapMatchesSlicesForAllPatterns(Entry({"s32[4]"}, "  ROOT %r = s32[4] popcnt(%p0)\n"));
  ExpectVmapMatchesSlicesForAllPatterns(
      Entry({"s32[4]"}, "  ROOT %r = s32[4] count-leading-zeros(%p0)\n"));
  ExpectVmapMatchesSlicesForAllPatterns(Entry(
      {"f32[2,3]"},
      "  ROOT %r = f32[2,3] reduce-precision(%p0), exponent_bits=5, mantissa_bits=2\n"));
  ExpectVmapMatchesSlicesForAllPatterns(Entry({"f32[3]"}, "  ROOT %r = s32[3] convert(%p0)\n"));
  ExpectVmapMatchesSlicesForAllPatterns(Entry({"s32[3]"}, "  ROOT %r = bf16[3] convert(%p0)\n"));
}

TEST(VmapElementwiseTest, BinaryOps) {
  for (const char* op : {"add", "subtract", "multiply", "divide", "maximum", "minimum", "power",
                         "remainder", "atan2"}) {
    SCOPED_TRACE(op);
    ExpectVmapMatchesSlicesForAllPatterns(
        Entry({"f32[2,3]", "f32[2,3]"}, absl::StrCat("  ROOT %r = f32[2,3] ", op, "(%p0, %p1)\n")));
  }
  for (const char* op : {"add", "divide", "remainder", "and", "or", "xor", "shift-left",
                         "shift-right-arithmetic", "shift-right-logical", "power"}) {
    SCOPED_TRACE(op);
    ExpectVmapMatchesSlicesForAllPatterns(
        Entry({"s32[3]", "s32[3]"}, absl::StrCat("  ROOT %r = s32[3] ", op, "(%p0, %p1)\n")));
  }
  ExpectVmapMatchesSlicesForAllPatterns(
      Entry({"pred[2]", "pred[2]"}, "  ROOT %r = pred[2] xor(%p0, %p1)\n"));
  ExpectVmapMatchesSlicesForAllPatterns(Entry({"bf16[2]", "f16[2]"}, R"(  %c = bf16[2] convert(%p1)
  ROOT %r = bf16[2] multiply(%p0, %c)
)"));
}

TEST(VmapElementwiseTest, CompareKeepsItsDirection) {
  for (const char* direction : {"EQ", "NE", "LT", "LE", "GT", "GE"}) {
    SCOPED_TRACE(direction);
    ExpectVmapMatchesSlicesForAllPatterns(
        Entry({"f32[4]", "f32[4]"},
              absl::StrCat("  ROOT %r = pred[4] compare(%p0, %p1), direction=", direction, "\n")));
  }
  ExpectVmapMatchesSlicesForAllPatterns(
      Entry({"u32[4]", "u32[4]"}, "  ROOT %r = pred[4] compare(%p0, %p1), direction=LT\n"));
}

TEST(VmapElementwiseTest, SelectAndClampWithScalarAndArrayOperands) {
  ExpectVmapMatchesSlicesForAllPatterns(
      Entry({"pred[2,3]", "f32[2,3]", "f32[2,3]"}, "  ROOT %r = f32[2,3] select(%p0, %p1, %p2)\n"));
  ExpectVmapMatchesSlicesForAllPatterns(
      Entry({"pred[]", "f32[2,3]", "f32[2,3]"}, "  ROOT %r = f32[2,3] select(%p0, %p1, %p2)\n"));
  ExpectVmapMatchesSlicesForAllPatterns(
      Entry({"f32[]", "f32[4]", "f32[]"}, "  ROOT %r = f32[4] clamp(%p0, %p1, %p2)\n"));
  ExpectVmapMatchesSlicesForAllPatterns(
      Entry({"s32[4]", "s32[4]", "s32[4]"}, "  ROOT %r = s32[4] clamp(%p0, %p1, %p2)\n"));
}

TEST(VmapElementwiseTest, RankZeroAndEmptyArrays) {
  ExpectVmapMatchesSlicesForAllPatterns(
      Entry({"f32[]", "f32[]"}, "  ROOT %r = f32[] multiply(%p0, %p1)\n"));
  ExpectVmapMatchesSlicesForAllPatterns(
      Entry({"f32[0,3]", "f32[0,3]"}, "  ROOT %r = f32[0,3] add(%p0, %p1)\n"));
}

TEST(VmapSourceTest, ConstantsAndIotaCombineWithBatchedValues) {
  ExpectVmapMatchesSlicesForAllPatterns(Entry({"s32[2,3]"}, R"(  %c = s32[] constant(7)
  %bc = s32[2,3] broadcast(%c), dimensions={}
  %i = s32[2,3] iota(), iota_dimension=1
  %s = s32[2,3] add(%i, %bc)
  ROOT %r = s32[2,3] multiply(%s, %p0)
)"));
  // f uses no parameter at all: the result is broadcast.
  ExpectVmapMatchesSlicesForAllPatterns(Entry({"f32[2]"}, R"(  ROOT %c = f32[3] constant({1, 2, 3})
)"));
  ExpectVmapMatchesSlicesForAllPatterns(Entry({"f32[2]"}, "  ROOT %r = f32[2] copy(%p0)\n"));
}

// ------------------------------------------------------------ shape ops --

TEST(VmapShapeTest, BroadcastReshapeTranspose) {
  ExpectVmapMatchesSlicesForAllPatterns(
      Entry({"f32[3]"}, "  ROOT %r = f32[2,3,4] broadcast(%p0), dimensions={1}\n"));
  ExpectVmapMatchesSlicesForAllPatterns(
      Entry({"f32[]"}, "  ROOT %r = f32[2,2] broadcast(%p0), dimensions={}\n"));
  ExpectVmapMatchesSlicesForAllPatterns(
      Entry({"f32[2,3]"}, "  ROOT %r = f32[3,1,2] reshape(%p0)\n"));
  ExpectVmapMatchesSlicesForAllPatterns(Entry({"f32[1]"}, "  ROOT %r = f32[] reshape(%p0)\n"));
  ExpectVmapMatchesSlicesForAllPatterns(
      Entry({"f32[2,3,4]"}, "  ROOT %r = f32[4,2,3] transpose(%p0), dimensions={2,0,1}\n"));
}

TEST(VmapShapeTest, SliceReverseConcatenate) {
  ExpectVmapMatchesSlicesForAllPatterns(
      Entry({"f32[5,4]"}, "  ROOT %r = f32[2,3] slice(%p0), slice={[1:4:2], [1:4]}\n"));
  ExpectVmapMatchesSlicesForAllPatterns(
      Entry({"f32[3,4]"}, "  ROOT %r = f32[3,4] reverse(%p0), dimensions={0,1}\n"));
  ExpectVmapMatchesSlicesForAllPatterns(
      Entry({"f32[2,1]", "f32[2,3]", "f32[2,0]"},
            "  ROOT %r = f32[2,4] concatenate(%p0, %p1, %p2), dimensions={1}\n"));
}

TEST(VmapShapeTest, PadWithBatchedOrUnbatchedValue) {
  ExpectVmapMatchesSlicesForAllPatterns(
      Entry({"f32[3,2]", "f32[]"}, "  ROOT %r = f32[8,1] pad(%p0, %p1), padding=1_2_1x0_-1\n"));
  ExpectVmapMatchesSlicesForAllPatterns(
      Entry({"s32[2]", "s32[]"}, "  ROOT %r = s32[0] pad(%p0, %p1), padding=-1_-1_0\n"));
}

TEST(VmapShapeTest, DynamicSliceWithBatchedOrUnbatchedIndices) {
  ExpectVmapMatchesSlicesForAllPatterns(
      Entry({"f32[5,4]", "s32[]", "u32[]"},
            "  ROOT %r = f32[2,3] dynamic-slice(%p0, %p1, %p2), dynamic_slice_sizes={2,3}\n"));
  ExpectVmapMatchesSlicesForAllPatterns(
      Entry({"f32[4]", "s64[]"},
            "  ROOT %r = f32[0] dynamic-slice(%p0, %p1), dynamic_slice_sizes={0}\n"));
  ExpectVmapMatchesSlicesForAllPatterns(
      Entry({"f32[]"}, "  ROOT %r = f32[] dynamic-slice(%p0), dynamic_slice_sizes={}\n"));
}

TEST(VmapShapeTest, DynamicUpdateSliceWithBatchedOrUnbatchedIndices) {
  ExpectVmapMatchesSlicesForAllPatterns(
      Entry({"f32[5,4]", "f32[2,3]", "s32[]", "u8[]"},
            "  ROOT %r = f32[5,4] dynamic-update-slice(%p0, %p1, %p2, %p3)\n"));
  ExpectVmapMatchesSlicesForAllPatterns(Entry(
      {"s32[3]", "s32[3]", "s32[]"}, "  ROOT %r = s32[3] dynamic-update-slice(%p0, %p1, %p2)\n"));
}

// ------------------------------------------------------- gather/scatter --

TEST(VmapGatherScatterTest, GatherRowsAndBatchedGather) {
  // Embedding lookup: rows of %p0 at %p1.
  ExpectVmapMatchesSlicesForAllPatterns(
      Entry({"f32[5,3]", "s32[4,1]"},
            "  ROOT %r = f32[4,3] gather(%p0, %p1), offset_dims={1}, collapsed_slice_dims={0}, "
            "start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}\n"));
  // Implicit index vector dim, windows of 2 columns.
  ExpectVmapMatchesSlicesForAllPatterns(
      Entry({"f32[3,5]", "s32[2]"},
            "  ROOT %r = f32[3,2,2] gather(%p0, %p1), offset_dims={0,2}, collapsed_slice_dims={}, "
            "start_index_map={1}, index_vector_dim=1, slice_sizes={3,2}\n"));
  // A gather that already has batching dims.
  ExpectVmapMatchesSlicesForAllPatterns(
      Entry({"f32[2,5]", "s32[2,3]"},
            "  ROOT %r = f32[2,3] gather(%p0, %p1), offset_dims={}, collapsed_slice_dims={1}, "
            "start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={0}, "
            "index_vector_dim=2, slice_sizes={1,1}\n"));
}

TEST(VmapGatherScatterTest, ScatterAddAndVariadicScatter) {
  ExpectVmapMatchesSlicesForAllPatterns(
      Entry({"f32[5,3]", "s32[4,1]", "f32[4,3]"},
            "  ROOT %r = f32[5,3] scatter(%p0, %p1, %p2), update_window_dims={1}, "
            "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, "
            "to_apply=%add\n",
            kAdd));
  ExpectVmapMatchesSlicesForAllPatterns(
      Entry({"f32[4]", "s32[3]", "f32[3]", "f32[4]", "f32[3]"},
            "  ROOT %r = (f32[4], f32[4]) scatter(%p0, %p3, %p1, %p2, %p4), "
            "update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
            "index_vector_dim=1, to_apply=%pair_add\n",
            R"(%pair_add {
  %a0 = f32[] parameter(0)
  %a1 = f32[] parameter(1)
  %b0 = f32[] parameter(2)
  %b1 = f32[] parameter(3)
  %s0 = f32[] add(%a0, %b0)
  %s1 = f32[] multiply(%a1, %b1)
  ROOT %t = (f32[], f32[]) tuple(%s0, %s1)
}

)"));
}

// ----------------------------------------------------------- reductions --

TEST(VmapReductionTest, ReduceAndVariadicReduce) {
  ExpectVmapMatchesSlicesForAllPatterns(Entry({"f32[2,3,4]"}, R"(  %z = f32[] constant(0)
  ROOT %r = f32[3] reduce(%p0, %z), dimensions={0,2}, to_apply=%add
)",
                                              kAdd));
  ExpectVmapMatchesSlicesForAllPatterns(Entry({"f32[]"}, R"(  %z = f32[] constant(1)
  ROOT %r = f32[] reduce(%p0, %z), dimensions={}, to_apply=%add
)",
                                              kAdd));
  // Argmax over dim 1: values and their indices.
  ExpectVmapMatchesSlicesForAllPatterns(Entry({"f32[2,4]", "s32[2,4]"},
                                              R"(  %lo = f32[] constant(-inf)
  %zero = s32[] constant(0)
  ROOT %r = (f32[2], s32[2]) reduce(%p0, %p1, %lo, %zero), dimensions={1}, to_apply=%argmax
)",
                                              R"(%argmax {
  %av = f32[] parameter(0)
  %ai = s32[] parameter(1)
  %bv = f32[] parameter(2)
  %bi = s32[] parameter(3)
  %gt = pred[] compare(%bv, %av), direction=GT
  %v = f32[] select(%gt, %bv, %av)
  %i = s32[] select(%gt, %bi, %ai)
  ROOT %t = (f32[], s32[]) tuple(%v, %i)
}

)"));
}

TEST(VmapReductionTest, ReduceWindow) {
  ExpectVmapMatchesSlicesForAllPatterns(Entry({"f32[4,5]"}, R"(  %z = f32[] constant(0)
  ROOT %r = f32[2,3] reduce-window(%p0, %z), window={size=2x3 stride=2x2 pad=0_0x1_1}, to_apply=%add
)",
                                              kAdd));
}

TEST(VmapReductionTest, VariadicReduceWindow) {
  ExpectVmapMatchesSlicesForAllPatterns(Entry({"f32[5]", "s32[5]"}, R"(  %lo = f32[] constant(-inf)
  %zero = s32[] constant(0)
  ROOT %r = (f32[3], s32[3]) reduce-window(%p0, %p1, %lo, %zero), window={size=3 stride=1}, to_apply=%argmax
)",
                                              R"(%argmax {
  %av = f32[] parameter(0)
  %ai = s32[] parameter(1)
  %bv = f32[] parameter(2)
  %bi = s32[] parameter(3)
  %gt = pred[] compare(%bv, %av), direction=GT
  %v = f32[] select(%gt, %bv, %av)
  %i = s32[] select(%gt, %bi, %ai)
  ROOT %t = (f32[], s32[]) tuple(%v, %i)
}

)"));
}

// Overlapping, padded windows; the operand, the source or both batched (the
// init value too, which is refused: see below).
TEST(VmapReductionTest, SelectAndScatter) {
  const std::string computations = absl::StrCat(kAdd, R"(%ge {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %c = pred[] compare(%a, %b), direction=GE
}

)");
  const std::string text = Entry({"f32[4,5]", "f32[3,3]"}, R"(  %z = f32[] constant(0)
  ROOT %r = f32[4,5] select-and-scatter(%p0, %p1, %z), window={size=2x3 stride=1x2 pad=0_0x1_1}, select=%ge, scatter=%add
)",
                                   computations);
  ExpectVmapMatchesSlicesForAllPatterns(text);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module,
                       ParseAndVerifyModule(Entry({"f32[4]", "f32[2]", "f32[]"},
                                                  "  ROOT %r = f32[4] select-and-scatter(%p0, %p1, "
                                                  "%p2), window={size=2 stride=2}, select=%ge, "
                                                  "scatter=%add\n",
                                                  computations)));
  EXPECT_THAT(Vmap(*module, *module->entry(), {false, false, true}, 2, "v"),
              sharc::testing::StatusIs(absl::StatusCode::kUnimplemented,
                                       HasSubstr("init value")));
}

TEST(VmapReductionTest, BatchedInitValueIsRefused) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module,
                       ParseAndVerifyModule(Entry({"f32[3]", "f32[]"},
                                                  "  ROOT %sum = f32[] reduce(%p0, %p1), "
                                                  "dimensions={0}, to_apply=%add\n",
                                                  kAdd)));
  EXPECT_THAT(
      Vmap(*module, *module->entry(), {false, true}, 2, "v"),
      sharc::testing::StatusIs(absl::StatusCode::kUnimplemented,
                               ::testing::AllOf(HasSubstr("reduce cannot be batched"),
                                                HasSubstr("%sum"), HasSubstr("init value"))));
  // Nothing was left behind in the module.
  EXPECT_EQ(module->computations().size(), 2u);
}

// ------------------------------------------------------------------ dot --

TEST(VmapDotTest, MatmulBatchMatmulAndVectorDot) {
  ExpectVmapMatchesSlicesForAllPatterns(Entry(
      {"f32[2,3]", "f32[3,4]"},
      "  ROOT %r = f32[2,4] dot(%p0, %p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"));
  ExpectVmapMatchesSlicesForAllPatterns(
      Entry({"f32[2,3,4]", "f32[2,5,3]"},
            "  ROOT %r = f32[2,4,5] dot(%p0, %p1), lhs_batch_dims={0}, rhs_batch_dims={0}, "
            "lhs_contracting_dims={1}, rhs_contracting_dims={2}\n"));
  ExpectVmapMatchesSlicesForAllPatterns(Entry(
      {"f32[3]", "f32[3]"},
      "  ROOT %r = f32[] dot(%p0, %p1), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n"));
  // Outer product: no contraction at all.
  ExpectVmapMatchesSlicesForAllPatterns(
      Entry({"s32[2]", "s32[3]"}, "  ROOT %r = s32[2,3] dot(%p0, %p1)\n"));
}

// cholesky and triangular-solve take batch dims leading: the vmapped dim
// becomes one more. The matrices get a large diagonal so that every slice
// factors (no NaNs that would hide a misplaced slice).
TEST(VmapLinalgTest, CholeskyAndTriangularSolveTakeTheBatchDimFirst) {
  const std::string diagonal =
      "  %d = f32[2,3,3] constant({ { {20,0,0},{0,20,0},{0,0,20} }, "
      "{ {20,0,0},{0,20,0},{0,0,20} } })\n  %a = f32[2,3,3] add(%p0, %d)\n";
  ExpectVmapMatchesSlicesForAllPatterns(
      Entry({"f32[2,3,3]"}, diagonal + "  ROOT %c = f32[2,3,3] cholesky(%a), lower=false\n"));
  ExpectVmapMatchesSlicesForAllPatterns(
      Entry({"f32[2,3,3]", "f32[2,3,2]"},
            diagonal + "  ROOT %x = f32[2,3,2] triangular-solve(%a, %p1), left_side=true, "
                       "lower=true, transpose_a=TRANSPOSE\n"));
  ExpectVmapMatchesSlicesForAllPatterns(
      Entry({"f32[2,3,3]", "f32[2,4,3]"},
            diagonal + "  ROOT %x = f32[2,4,3] triangular-solve(%a, %p1), left_side=false, "
                       "lower=false, unit_diagonal=true, transpose_a=NO_TRANSPOSE\n"));
}

TEST(VmapDotTest, BatchDimIsADotBatchDimOnlyWhenBothSidesAreBatched) {
  const std::string text = Entry(
      {"f32[2,3]", "f32[3,4]"},
      "  ROOT %r = f32[2,4] dot(%p0, %p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n");
  {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseAndVerifyModule(text));
    ASSERT_OK_AND_ASSIGN(Computation * v, Vmap(*module, *module->entry(), {true, true}, 5, "v"));
    const Instruction* root = v->root();
    ASSERT_EQ(root->opcode(), Opcode::kDot) << module->ToString();
    EXPECT_EQ(root->attr_ints("lhs_batch_dims"), IntList({0}));
    EXPECT_EQ(root->attr_ints("rhs_batch_dims"), IntList({0}));
    EXPECT_EQ(root->attr_ints("lhs_contracting_dims"), IntList({2}));
  }
  {
    // rhs only: its new dim is a free dim after lhs's, moved to the front.
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseAndVerifyModule(text));
    ASSERT_OK_AND_ASSIGN(Computation * v, Vmap(*module, *module->entry(), {false, true}, 5, "v"));
    const Instruction* root = v->root();
    ASSERT_EQ(root->opcode(), Opcode::kTranspose) << module->ToString();
    EXPECT_EQ(root->attr_ints("dimensions"), IntList({1, 0, 2}));
    EXPECT_EQ(root->operand(0)->shape().ToString(), "f32[2,5,4]");
  }
}

TEST(VmapConvolutionTest, BatchedLhsFoldsIntoTheBatchDim) {
  for (const std::string& text :
       {Entry({"f32[2,5,4,2]", "f32[3,2,2,3]"},
              "  ROOT %r = f32[2,3,2,3] convolution(%p0, %p1), window={size=3x2 stride=1x2 "
              "pad=0_0x1_0}, dim_labels=b01f_01io->b01f\n"),
        // Batch dim in the middle, grouped, output in another layout.
        Entry({"f32[4,2,5]", "f32[3,2,4]"},
              "  ROOT %r = f32[2,4,5] convolution(%p0, %p1), window={size=3 pad=1_1}, "
              "dim_labels=fb0_0io->bf0, feature_group_count=2\n")}) {
    for (int64_t batch_size : {0, 1, 3}) ExpectVmapMatchesSlices(text, {true, false}, batch_size);
  }
}

// A vmapped kernel folds into its output features; with the lhs vmapped too
// the convolution takes one set of groups per slice.
TEST(VmapConvolutionTest, BatchedKernelFoldsIntoTheOutputFeatures) {
  for (const std::string& text :
       {Entry({"f32[2,5,4,2]", "f32[3,2,2,3]"},
              "  ROOT %r = f32[2,3,2,3] convolution(%p0, %p1), window={size=3x2 stride=1x2 "
              "pad=0_0x1_0}, dim_labels=b01f_01io->b01f\n"),
        // Feature groups, output in another layout.
        Entry({"f32[4,2,5]", "f32[3,2,4]"},
              "  ROOT %r = f32[2,4,5] convolution(%p0, %p1), window={size=3 pad=1_1}, "
              "dim_labels=fb0_0io->bf0, feature_group_count=2\n"),
        // Batch groups.
        Entry({"f32[6,5,3]", "f32[2,3,4]"},
              "  ROOT %r = f32[3,4,4] convolution(%p0, %p1), window={size=2}, "
              "dim_labels=b0f_0io->b0f, batch_group_count=2\n")}) {
    for (int64_t batch_size : {1, 3}) {
      ExpectVmapMatchesSlices(text, {false, true}, batch_size);
      ExpectVmapMatchesSlices(text, {true, true}, batch_size);
    }
  }
}

TEST(VmapConvolutionTest, BatchedLhsWithBatchGroupsIsRefusedWithTheReason) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module,
                       ParseAndVerifyModule(Entry({"f32[6,5,3]", "f32[2,3,4]"},
                                                  "  ROOT %r = f32[3,4,4] convolution(%p0, %p1), "
                                                  "window={size=2}, dim_labels=b0f_0io->b0f, "
                                                  "batch_group_count=2\n")));
  auto v = Vmap(*module, *module->entry(), {true, false}, 2, "v");
  ASSERT_FALSE(v.ok());
  EXPECT_THAT(v.status().message(), HasSubstr("batch_group_count"));
}

// --------------------------------------------------------- control flow --

TEST(VmapControlFlowTest, TupleRootGivesTupleOfBatchedLeaves) {
  ExpectVmapMatchesSlicesForAllPatterns(Entry({"f32[2]", "s32[]"}, R"(  %n = f32[2] negate(%p0)
  %inner = (f32[2], s32[]) tuple(%n, %p1)
  %g = f32[2] get-tuple-element(%inner), index=0
  ROOT %t = ((f32[2], s32[]), f32[2], s32[]) tuple(%inner, %g, %p1)
)"));
}

TEST(VmapControlFlowTest, CallBatchesTheCallee) {
  ExpectVmapMatchesSlicesForAllPatterns(Entry({"f32[3]", "f32[3]"},
                                              R"(  %c = (f32[3], f32[3]) call(%p0, %p1), to_apply=%g
  %x = f32[3] get-tuple-element(%c), index=0
  %y = f32[3] get-tuple-element(%c), index=1
  ROOT %r = f32[3] subtract(%x, %y)
)",
                                              R"(%g {
  %a = f32[3] parameter(0)
  %b = f32[3] parameter(1)
  %m = f32[3] multiply(%a, %b)
  ROOT %t = (f32[3], f32[3]) tuple(%m, %a)
}

)"));
}

const char* const kCountedLoop = R"(%cond {
  %s = (s32[], f32[2], f32[2]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %three = s32[] constant(3)
  ROOT %lt = pred[] compare(%i, %three), direction=LT
}

%body {
  %s = (s32[], f32[2], f32[2]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %x = f32[2] get-tuple-element(%s), index=1
  %acc = f32[2] get-tuple-element(%s), index=2
  %one = s32[] constant(1)
  %next = s32[] add(%i, %one)
  %sum = f32[2] add(%acc, %x)
  ROOT %t = (s32[], f32[2], f32[2]) tuple(%next, %x, %sum)
}

)";

TEST(VmapControlFlowTest, WhileWithUnbatchedPredicateBatchesCarriedValuesFromTheStart) {
  // The accumulator starts unbatched (a constant) but the body adds the
  // batched %x to it: the fixpoint must batch it from the first iteration.
  ExpectVmapMatchesSlicesForAllPatterns(Entry({"f32[2]"}, R"(  %zero = s32[] constant(0)
  %z = f32[2] constant({0, 0})
  %init = (s32[], f32[2], f32[2]) tuple(%zero, %p0, %z)
  ROOT %loop = (s32[], f32[2], f32[2]) while(%init), condition=%cond, body=%body
)",
                                              kCountedLoop));
}

TEST(VmapControlFlowTest, WhileWithBatchedPredicateRunsUntilEverySliceIsDone) {
  // Each slice doubles its value until it exceeds its own limit.
  ExpectVmapMatchesSlicesForAllPatterns(Entry({"s32[]", "s32[]"}, R"(  %one = s32[] constant(1)
  %start = s32[] maximum(%p0, %one)
  %init = (s32[], s32[], s32[]) tuple(%start, %p1, %one)
  ROOT %loop = (s32[], s32[], s32[]) while(%init), condition=%dcond, body=%dbody
)",
                                              R"(%dcond {
  %s = (s32[], s32[], s32[]) parameter(0)
  %v = s32[] get-tuple-element(%s), index=0
  %limit = s32[] get-tuple-element(%s), index=1
  ROOT %lt = pred[] compare(%v, %limit), direction=LT
}

%dbody {
  %s = (s32[], s32[], s32[]) parameter(0)
  %v = s32[] get-tuple-element(%s), index=0
  %limit = s32[] get-tuple-element(%s), index=1
  %steps = s32[] get-tuple-element(%s), index=2
  %two = s32[] constant(2)
  %one = s32[] constant(1)
  %v2 = s32[] multiply(%v, %two)
  %n = s32[] add(%steps, %one)
  ROOT %t = (s32[], s32[], s32[]) tuple(%v2, %limit, %n)
}

)"));
}

TEST(VmapControlFlowTest, WhileFixpointTakesSeveralRounds) {
  // Batchedness flows a -> b -> c one step per iteration: the loop state
  // must be batched in all three from the start when only %p0 is.
  ExpectVmapMatchesSlicesForAllPatterns(Entry({"f32[2]", "f32[2]", "s32[]"},
                                              R"(  %z = f32[2] constant({0, 0})
  %zero = s32[] constant(0)
  %init = (f32[2], f32[2], f32[2], s32[]) tuple(%p0, %p1, %z, %zero)
  %loop = (f32[2], f32[2], f32[2], s32[]) while(%init), condition=%shift_cond, body=%shift_body
  ROOT %c = f32[2] get-tuple-element(%loop), index=2
)",
                                              R"(%shift_cond {
  %s = (f32[2], f32[2], f32[2], s32[]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=3
  %four = s32[] constant(4)
  ROOT %lt = pred[] compare(%i, %four), direction=LT
}

%shift_body {
  %s = (f32[2], f32[2], f32[2], s32[]) parameter(0)
  %a = f32[2] get-tuple-element(%s), index=0
  %b = f32[2] get-tuple-element(%s), index=1
  %c = f32[2] get-tuple-element(%s), index=2
  %i = s32[] get-tuple-element(%s), index=3
  %one = s32[] constant(1)
  %next = s32[] add(%i, %one)
  %bc = f32[2] add(%b, %c)
  ROOT %t = (f32[2], f32[2], f32[2], s32[]) tuple(%a, %a, %bc, %next)
}

)"));
}

TEST(VmapControlFlowTest, NestedCallsLoopsAndConditionals) {
  // A conditional whose branch calls a computation that runs a loop.
  ExpectVmapMatchesSlicesForAllPatterns(Entry({"s32[]", "f32[2]"}, R"(  %one = s32[] constant(1)
  %is_one = pred[] compare(%p0, %one), direction=EQ
  ROOT %c = f32[2] conditional(%is_one, %p1, %p1), true_computation=%looping, false_computation=%flip
)",
                                              absl::StrCat(kCountedLoop, R"(%run_loop {
  %x = f32[2] parameter(0)
  %zero = s32[] constant(0)
  %init = (s32[], f32[2], f32[2]) tuple(%zero, %x, %x)
  %loop = (s32[], f32[2], f32[2]) while(%init), condition=%cond, body=%body
  ROOT %acc = f32[2] get-tuple-element(%loop), index=2
}

%looping {
  %x = f32[2] parameter(0)
  ROOT %r = f32[2] call(%x), to_apply=%run_loop
}

%flip {
  %x = f32[2] parameter(0)
  ROOT %r = f32[2] reverse(%x), dimensions={0}
}

)")));
}

const char* const kBranches = R"(%neg {
  %x = f32[3] parameter(0)
  ROOT %n = f32[3] negate(%x)
}

%same {
  %x = f32[3] parameter(0)
  ROOT %c = f32[3] constant({1, 2, 3})
}

%twice {
  %x = f32[3] parameter(0)
  ROOT %d = f32[3] add(%x, %x)
}

)";

TEST(VmapControlFlowTest, ConditionalWithPredicateOrIndexSelector) {
  ExpectVmapMatchesSlicesForAllPatterns(Entry(
      {"pred[]", "f32[3]", "f32[3]"},
      R"(  ROOT %c = f32[3] conditional(%p0, %p1, %p2), true_computation=%neg, false_computation=%same
)",
      kBranches));
  // Indices range over [-3, 7]: out-of-range ones run the last branch.
  ExpectVmapMatchesSlicesForAllPatterns(Entry(
      {"s32[]", "f32[3]", "f32[3]"},
      R"(  ROOT %c = f32[3] conditional(%p0, %p1, %p2, %p1), branch_computations={%neg, %same, %twice}
)",
      kBranches));
}

// ------------------------------------------------------------ shardings --

TEST(VmapShardingTest, ShardingsGetALeadingDim) {
  const std::string text = Entry(
      {"f32[4,6]"},
      R"(  %s = f32[4,6] custom-call(%p0), custom_call_target="Sharding", sharding={devices=[2,1]0,1}
  ROOT %n = f32[4,6] negate(%s), sharding={devices=[1,2]0,1}
)",
      "", "HloModule m, num_partitions=2");
  {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseAndVerifyModule(text));
    ASSERT_OK_AND_ASSIGN(Computation * v, Vmap(*module, *module->entry(), {true}, 3, "v"));
    ASSERT_OK_AND_ASSIGN(Sharding leading_1x2x1, ParseSharding("{devices=[1,2,1]0,1}"));
    ASSERT_OK_AND_ASSIGN(Sharding leading_1x1x2, ParseSharding("{devices=[1,1,2]0,1}"));
    EXPECT_EQ(v->FindInstruction("s")->sharding(), leading_1x2x1) << module->ToString();
    EXPECT_EQ(v->FindInstruction("n")->sharding(), leading_1x1x2) << module->ToString();
    EXPECT_EQ(v->FindInstruction("s")->shape().ToString(), "f32[3,4,6]");
  }
  {
    // A callback that shards the new dim (as the MapReduce lowering does).
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseAndVerifyModule(text));
    VmapOptions options;
    options.batch_sharding = [](const Sharding& inner,
                                const Shape& batched) -> absl::StatusOr<Sharding> {
      EXPECT_EQ(batched.rank(), 3);
      std::vector<int64_t> dims = {2, 1, 1};
      return Sharding::Tiled(TileAssignment(dims, {0, 1}));
    };
    ASSERT_OK_AND_ASSIGN(Computation * v, Vmap(*module, *module->entry(), {true}, 4, "v", options));
    ASSERT_OK_AND_ASSIGN(Sharding batch_split, ParseSharding("{devices=[2,1,1]0,1}"));
    EXPECT_EQ(v->FindInstruction("s")->sharding(), batch_split);
    EXPECT_EQ(v->FindInstruction("n")->sharding(), batch_split);
  }
  ExpectVmapMatchesSlicesForAllPatterns(text);
}

TEST(VmapShardingTest, ManualRegionMarkersTakeTheBatchDim) {
  const std::string text = Entry(
      {"f32[4,6]"},
      R"(  %s = f32[4,6] custom-call(%p0), custom_call_target="Sharding", sharding={devices=[2,1]0,1}
  %local = f32[2,6] custom-call(%s), custom_call_target="SPMDFullToShardShape", sharding={manual}
  %n = f32[2,6] negate(%local), sharding={manual}
  ROOT %full = f32[4,6] custom-call(%n), custom_call_target="SPMDShardToFullShape", sharding={devices=[2,1]0,1}
)",
      "", "HloModule m, num_partitions=2");
  ExpectVmapMatchesSlicesForAllPatterns(text);
  // Splitting the batch dim across the devices at the region boundary
  // would give the region a per-device batch size: refused.
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseAndVerifyModule(text));
  VmapOptions options;
  options.batch_sharding = [](const Sharding& inner,
                              const Shape& batched) -> absl::StatusOr<Sharding> {
    if (!inner.IsTiled()) return inner;
    return Sharding::Tiled(TileAssignment({2, 1, 1}, {0, 1}));
  };
  EXPECT_THAT(
      Vmap(*module, *module->entry(), {true}, 4, "v", options),
      sharc::testing::StatusIs(absl::StatusCode::kUnimplemented,
                               ::testing::AllOf(HasSubstr("%local"), HasSubstr("manual region"))));
}

TEST(VmapShardingTest, TupleShardingsFollowTheirLeaves) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module,
                       ParseAndVerifyModule(Entry({"f32[4]", "f32[4]"}, R"(  %n = f32[4] negate(%p0)
  ROOT %t = (f32[4], f32[4]) tuple(%n, %p1), sharding={{devices=[2]0,1}, {devices=[2]0,1}}
)",
                                                  "", "HloModule m, num_partitions=2")));
  // The root tuple of f is rebuilt with both leaves batched, but the
  // sharding of the tuple instruction itself covers %n batched and %p1 not.
  ASSERT_OK_AND_ASSIGN(Computation * v, Vmap(*module, *module->entry(), {true, false}, 3, "v"));
  ASSERT_OK_AND_ASSIGN(Sharding expected, ParseSharding("{{devices=[1,2]0,1}, {devices=[2]0,1}}"));
  EXPECT_EQ(v->FindInstruction("t")->sharding(), expected) << module->ToString();
  ASSERT_OK(VerifyModule(*module));
}

TEST(VmapNamingTest, RepeatedVmapsGetDistinctComputations) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module,
                       ParseAndVerifyModule(Entry({"f32[4]"}, "  ROOT %r = f32[4] negate(%p0)\n")));
  ASSERT_OK_AND_ASSIGN(Computation * first, Vmap(*module, *module->entry(), {true}, 2, "v"));
  ASSERT_OK_AND_ASSIGN(Computation * second, Vmap(*module, *module->entry(), {true}, 5, "v"));
  EXPECT_EQ(first->name(), "v");
  EXPECT_NE(second->name(), "v");
  EXPECT_EQ(second->root()->shape().ToString(), "f32[5,4]");
  ASSERT_OK(ParseAndVerifyModule(module->ToString()).status());
}

TEST(VmapShardingTest, UnbatchedValuesKeepTheirSharding) {
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<Module> module,
      ParseAndVerifyModule(Entry({"f32[4]", "f32[4]"},
                                 R"(  %n = f32[4] negate(%p1), sharding={devices=[2]0,1}
  ROOT %r = f32[4] add(%p0, %n)
)",
                                 "", "HloModule m, num_partitions=2")));
  ASSERT_OK_AND_ASSIGN(Computation * v, Vmap(*module, *module->entry(), {true, false}, 2, "v"));
  ASSERT_OK_AND_ASSIGN(Sharding split, ParseSharding("{devices=[2]0,1}"));
  EXPECT_EQ(v->FindInstruction("n")->sharding(), split);
  EXPECT_EQ(v->FindInstruction("n")->shape().ToString(), "f32[4]");
}

// --------------------------------------------------------------- errors --

TEST(VmapErrorTest, CollectivesAreRefusedNamingTheInstruction) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module,
                       ParseAndVerifyModule(Entry({"f32[4]"},
                                                  "  ROOT %total = f32[4] all-reduce(%p0), "
                                                  "replica_groups={}, to_apply=%add\n",
                                                  kAdd)));
  EXPECT_THAT(
      Vmap(*module, *module->entry(), {true}, 2, "v"),
      sharc::testing::StatusIs(absl::StatusCode::kUnimplemented,
                               ::testing::AllOf(HasSubstr("all-reduce cannot be batched"),
                                                HasSubstr("%total"), HasSubstr("collectives"))));
}

TEST(VmapErrorTest, OpaqueCustomCallIsRefused) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module,
                       ParseAndVerifyModule(Entry({"f32[4]"},
                                                  "  ROOT %k = f32[4] custom-call(%p0), "
                                                  "custom_call_target=\"my_kernel\"\n")));
  EXPECT_THAT(Vmap(*module, *module->entry(), {true}, 2, "v"),
              sharc::testing::StatusIs(
                  absl::StatusCode::kUnimplemented,
                  ::testing::AllOf(HasSubstr("%k"), HasSubstr("\"my_kernel\" is opaque"))));
}

TEST(VmapErrorTest, BatchedLoopPredicateWithSideEffectingBodyIsRefused) {
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<Module> module,
      ParseAndVerifyModule(
          Entry({"s32[]"}, R"(  ROOT %loop = s32[] while(%p0), condition=%positive, body=%noisy
)",
                R"(%positive {
  %x = s32[] parameter(0)
  %zero = s32[] constant(0)
  ROOT %gt = pred[] compare(%x, %zero), direction=GT
}

%noisy {
  %x = s32[] parameter(0)
  %one = s32[] constant(1)
  %k = s32[] custom-call(%one), custom_call_target="trace", custom_call_has_side_effect=true
  ROOT %y = s32[] subtract(%x, %one)
}

)")));
  EXPECT_THAT(
      Vmap(*module, *module->entry(), {true}, 2, "v"),
      sharc::testing::StatusIs(absl::StatusCode::kUnimplemented,
                               ::testing::AllOf(HasSubstr("while cannot be batched"),
                                                HasSubstr("%loop"), HasSubstr("side effects"))));
  // Nothing was left behind in the module.
  EXPECT_EQ(module->computations().size(), 3u);
}

TEST(VmapErrorTest, ComputationOfAnotherModule) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module,
                       ParseAndVerifyModule(Entry({"f32[4]"}, "  ROOT %r = f32[4] negate(%p0)\n")));
  Module other("other");
  EXPECT_THAT(Vmap(other, *module->entry(), {true}, 2, "v"),
              sharc::testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                       HasSubstr("not part of module 'other'")));
}

TEST(VmapErrorTest, WrongNumberOfBatchingFlags) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module,
                       ParseAndVerifyModule(Entry({"f32[4]"}, "  ROOT %r = f32[4] negate(%p0)\n")));
  EXPECT_THAT(Vmap(*module, *module->entry(), {true, false}, 2, "v"),
              sharc::testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                       HasSubstr("2 batching flags for 1 parameters")));
}

TEST(VmapErrorTest, BatchedSelectorWithSideEffectingBranchIsRefused) {
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<Module> module,
      ParseAndVerifyModule(Entry(
          {"pred[]", "f32[3]"},
          R"(  ROOT %c = f32[3] conditional(%p0, %p1, %p1), true_computation=%effect, false_computation=%neg
)",
          absl::StrCat(kBranches, R"(%effect {
  %x = f32[3] parameter(0)
  ROOT %k = f32[3] custom-call(%x), custom_call_target="log", custom_call_has_side_effect=true
}

)"))));
  EXPECT_THAT(
      Vmap(*module, *module->entry(), {true, false}, 2, "v"),
      sharc::testing::StatusIs(absl::StatusCode::kUnimplemented,
                               ::testing::AllOf(HasSubstr("%c"), HasSubstr("side effects"))));
}

// ------------------------------------------------------------- shard_map --

TEST(VmapShardMapTest, RegionWithPsumAllGatherAndAxisIndexBatches) {
  // The vmapped dim enters every region operand unsplit; psum acts per
  // element, all_gather's dimension moves right, axis_index is unbatched.
  ExpectVmapMatchesSlicesForAllPatterns(R"(HloModule m
%body {
  %a = f32[2,3]{V:i} parameter(0)
  %w = f32[3] parameter(1)
  %wa = f32[3]{V:i} pbroadcast(%w), axes={i}
  %wb = f32[2,3]{V:i} broadcast(%wa), dimensions={1}
  %m = f32[2,3]{V:i} multiply(%a, %wb)
  %s = f32[2,3] psum(%m), axes={i}
  %g = f32[4,3]{V:i} all_gather(%m), axes={i}, dimension=0, tiled=true
  %k = s32[]{V:i} axis_index(), axes={i}
  %kf = f32[]{V:i} convert(%k)
  %kb = f32[4,3]{V:i} broadcast(%kf), dimensions={}
  %gk = f32[4,3]{V:i} add(%g, %kb)
  ROOT %t = (f32[2,3], f32[4,3]) tuple(%s, %gk)
}
ENTRY %e {
  %x = f32[4,3] parameter(0)
  %y = f32[3] parameter(1)
  ROOT %r = (f32[2,3], f32[8,3]) shard_map(%x, %y), mesh={i=2}, in_specs={P(i), P()}, out_specs={P(), P(i)}, to_apply=%body
})");
}

TEST(VmapShardMapTest, AllToAllAndPsumScatterShiftTheirDimensions) {
  ExpectVmapMatchesSlicesForAllPatterns(R"(HloModule m
%body {
  %a = f32[2,4]{V:i} parameter(0)
  %t = f32[4,2]{V:i} all_to_all(%a), axes={i}, split_dimension=1, concat_dimension=0, tiled=true
  %s = f32[2,2]{V:i} psum_scatter(%t), axes={i}, dimension=0, tiled=true
  ROOT %r = f32[2,2]{V:i} negate(%s)
}
ENTRY %e {
  %x = f32[4,4] parameter(0)
  ROOT %r = f32[4,2] shard_map(%x), mesh={i=2}, in_specs={P(i)}, out_specs={P(i)}, to_apply=%body
})");
}

}  // namespace
}  // namespace sharc::hlo

namespace sharc::hlo {
namespace {

// sort: every operand batched at 0 (an unbatched one is broadcast and
// sorted along with the batched keys), the sort dimension shifted. Random
// keys with a general comparator exercise the comparator-calling path too.
TEST(VmapSortTest, EveryPatternOfBatchedOperands) {
  const std::string lt = R"(%lt (a: f32[], b: f32[], i: s32[], j: s32[]) -> pred[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  %i = s32[] parameter(2)
  %j = s32[] parameter(3)
  ROOT %c = pred[] compare(%a, %b), direction=LT
}
)";
  ExpectVmapMatchesSlicesForAllPatterns(Entry(
      {"f32[3,4]", "s32[3,4]"},
      "  ROOT %s = (f32[3,4], s32[3,4]) sort(%p0, %p1), dimensions={1}, to_apply=%lt\n", lt));
  ExpectVmapMatchesSlicesForAllPatterns(Entry(
      {"f32[3,4]", "s32[3,4]"},
      "  ROOT %s = (f32[3,4], s32[3,4]) sort(%p0, %p1), dimensions={0}, to_apply=%lt\n", lt));
}

// An elementwise map is inlined into array ops first (inline_map.h).
TEST(VmapMapTest, ElementwiseMapIsBatchedAsItsOps) {
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<Module> module,
      ParseAndVerifyModule(Entry({"f32[3,2]", "f32[3,2]"},
            "  ROOT %m = f32[3,2] map(%p0, %p1), dimensions={0,1}, to_apply=%fma\n",
            R"(%fma (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  %two = f32[] constant(2)
  %ab = f32[] multiply(%a, %b)
  ROOT %r = f32[] add(%ab, %two)
}
)")));
  // What every command that loads a module does first.
  ASSERT_OK(LowerForCompute(*module));
  ExpectVmapMatchesSlicesForAllPatterns(module->ToString());
}

// ragged-dot in its three modes, with every pattern of batched rows,
// weights and group sizes (batched sizes give one size list per batch).
TEST(VmapRaggedDotTest, EveryModeAndPattern) {
  ExpectVmapMatchesSlicesForAllPatterns(Entry(
      {"f32[6,3]", "f32[2,3,4]", "s32[2]"},
      "  ROOT %r = f32[6,4] ragged-dot(%p0, %p1, %p2), lhs_contracting_dims={1}, "
      "rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}\n"));
  ExpectVmapMatchesSlicesForAllPatterns(Entry(
      {"f32[2,5]", "f32[5,3]", "s32[2]"},
      "  ROOT %r = f32[2,2,3] ragged-dot(%p0, %p1, %p2), lhs_contracting_dims={1}, "
      "rhs_contracting_dims={0}, lhs_ragged_dims={1}\n"));
  ExpectVmapMatchesSlicesForAllPatterns(Entry(
      {"f32[3,2,4]", "f32[3,4,2]", "s32[2]"},
      "  ROOT %r = f32[3,2,2] ragged-dot(%p0, %p1, %p2), lhs_batch_dims={0}, "
      "rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}, "
      "lhs_ragged_dims={0}\n"));
}

// topk works on the last dim: the batch dim leads, k is unchanged.
TEST(VmapTopKTest, BatchDimLeads) {
  ExpectVmapMatchesSlicesForAllPatterns(
      Entry({"f32[3,6]"}, "  ROOT %t = (f32[3,2], s32[3,2]) topk(%p0), k=2, largest=true\n"));
  ExpectVmapMatchesSlicesForAllPatterns(
      Entry({"f32[5]"}, "  ROOT %t = (f32[3], s32[3]) topk(%p0), k=3, largest=false\n"));
}

}  // namespace
}  // namespace sharc::hlo
