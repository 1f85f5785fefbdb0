// Derivatives through shard_map, numerically: JAX's shard_map facts
// (reference note c.7: psum(psum(x)) = [24.], all_gather_invariant and
// all_to_all gradients), JVPs and VJPs of JAX's systematic functions against
// central finite differences on meshes (1,), (2,), (2,2) and (4,2) with the
// variance check on and off, second order, and gradients run partitioned
// (the shard_maps lowered to manual regions with collectives) against the
// interpreter. Also the data-parallel loss ending in pmean: its gradient
// has one all-reduce per parameter and none on the loss path.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "tests/autodiff/shard_map_test_util.h"
#include "tests/testlib/status_matchers.h"
#include "driver/compile_stages.h"
#include "driver/spmd_runner.h"

namespace sharc::autodiff {
namespace {

using testing::CheckDerivatives;
using testing::CountOps;
using testing::ExpectNear;
using ::testing::HasSubstr;
using testing::Typed;

constexpr char kAdd[] = R"(
%add {
  %a = f64[] parameter(0)
  %b = f64[] parameter(1)
  ROOT %s = f64[] add(%a, %b)
}
)";

Literal Iota(const Shape& shape, double scale = 1) {
  Literal l(shape);
  for (int64_t i = 0; i < l.num_elements(); ++i) l.SetFromDouble(i, scale * static_cast<double>(i));
  return l;
}

Literal Values(const Shape& shape, const std::vector<double>& values) {
  Literal l(shape);
  for (size_t i = 0; i < values.size(); ++i) l.SetFromDouble(static_cast<int64_t>(i), values[i]);
  return l;
}

std::string Unchecked(const std::string& text) {
  return absl::StrReplaceAll(text, {{"to_apply=%body", "check_variance=false, to_apply=%body"}});
}

// `sharc grad`: the gradient module, typed, printed and re-parsed.
std::unique_ptr<Module> GradOf(const Module& module, std::vector<int64_t> wrt = {}) {
  absl::StatusOr<std::unique_ptr<Module>> grad = GradModule(module, std::move(wrt));
  EXPECT_TRUE(grad.ok()) << grad.status() << "\n" << hlo::PrintModule(module);
  if (!grad.ok()) return nullptr;
  absl::Status typed = spmd::InferDeviceVariance(**grad);
  EXPECT_TRUE(typed.ok()) << typed << "\n" << hlo::PrintModule(**grad);
  return typed.ok() ? testing::Reparse(**grad) : nullptr;
}

// Runs `module` with its shard_maps lowered and partitioned over `devices`,
// against the interpreter.
void ExpectPartitionedMatches(const Module& module, const std::vector<Literal>& args,
                              int64_t devices, const std::string& what) {
  Literal expected = testing::Run(module, args);
  std::unique_ptr<Module> prepared = module.Clone();
  driver::CompileOptions options;
  options.devices = devices;
  absl::Status st = driver::PrepareModule(*prepared, options);
  ASSERT_TRUE(st.ok()) << what << ": " << st;
  auto partitioned = driver::RunPartitioned(*prepared, args, devices);
  ASSERT_TRUE(partitioned.ok()) << what << ": " << partitioned.status();
  ExpectNear(*partitioned, expected, 1e-9, what);
}

// --------------------------------------------------------- JAX's facts --

TEST(ShardMapGradTest, RepeatedPsumIs24AndItsGradientIs4) {
  // test_repeated_psum_allowed: psum(psum(x)) over 4 devices of arange(4.).
  auto m = Typed(R"(HloModule repeated_psum, mesh={i=4}
%body {
  %a = f64[1] parameter(0)
  %s = f64[1] psum(%a), axes={i}
  ROOT %t = f64[1] psum(%s), axes={i}
}
ENTRY %main {
  %x = f64[4] parameter(0)
  %y = f64[1] shard_map(%x), in_specs={P(i)}, out_specs={P()}, to_apply=%body
  ROOT %r = f64[] reshape(%y)
}
)");
  ASSERT_NE(m, nullptr);
  const Shape x(PrimitiveType::kF64, {4});
  ExpectNear(testing::Run(*m, {Iota(x)}), Literal::Scalar<double>(24), 0, "psum(psum(x))");
  auto grad = GradOf(*m);
  ASSERT_NE(grad, nullptr);
  Literal g = testing::Run(*grad, {Iota(x)});
  ExpectNear(g.element(0), Values(x, {4, 4, 4, 4}), 0, "d psum(psum(x)) / dx");
  ExpectPartitionedMatches(*grad, {Iota(x)}, 4, "repeated psum gradient");
}

TEST(ShardMapGradTest, DocExamplePsum) {
  auto m = Typed(R"(HloModule doc, mesh={i=4}
%body {
  %a = f64[4] parameter(0)
  ROOT %s = f64[4] psum(%a), axes={i}
}
ENTRY %main {
  %x = f64[16] parameter(0)
  ROOT %y = f64[4] shard_map(%x), in_specs={P(i)}, out_specs={P()}, to_apply=%body
}
)");
  ASSERT_NE(m, nullptr);
  Literal x =
      Values(Shape(PrimitiveType::kF64, {16}), {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 1, 2});
  ExpectNear(testing::Run(*m, {x}), Values(Shape(PrimitiveType::kF64, {4}), {22, 20, 12, 17}), 0,
             "psum");
  CheckDerivatives(*m, 1, "doc psum");
}

TEST(ShardMapGradTest, AllGatherInvariantGradientToSecondOrder) {
  // test_all_gather_invariant_basic: out == arr, gradients to order 2,
  // the gradient has the shape of arr.
  const std::string text = absl::StrCat("HloModule agi, mesh={x=4}\n", kAdd, R"(
%body {
  %a = f64[2] parameter(0)
  ROOT %g = f64[8] all_gather_invariant(%a), axes={x}, dimension=0, tiled=true
}
ENTRY %main {
  %arr = f64[8] parameter(0)
  %out = f64[8] shard_map(%arr), in_specs={P(x)}, out_specs={P()}, to_apply=%body
  %s = f64[8] sine(%out)
  %sq = f64[8] multiply(%s, %out)
  %zero = f64[] constant(0)
  ROOT %l = f64[] reduce(%sq, %zero), dimensions={0}, to_apply=%add
}
)");
  auto m = Typed(text);
  ASSERT_NE(m, nullptr);
  const Shape arr(PrimitiveType::kF64, {8});
  auto forward = Typed(absl::StrReplaceAll(
      text, {{"  %s = f64[8] sine(%out)\n  %sq = f64[8] multiply(%s, %out)\n  %zero = f64[] "
              "constant(0)\n  ROOT %l = f64[] reduce(%sq, %zero), dimensions={0}, to_apply=%add\n",
              ""},
             {"  %out = f64[8]", "  ROOT %out = f64[8]"}}));
  ASSERT_NE(forward, nullptr);
  ExpectNear(testing::Run(*forward, {Iota(arr)}), Iota(arr), 0, "all_gather_invariant");
  CheckDerivatives(*m, 2, "all_gather_invariant loss");
  auto grad = GradOf(*m);
  ASSERT_NE(grad, nullptr);
  EXPECT_EQ(grad->entry()->root()->shape().tuple_shape(0), arr);
  EXPECT_EQ(CountOps(*grad, hlo::Opcode::kPScatter), 1);  // the local slice, no psum_scatter
  EXPECT_EQ(CountOps(*grad, hlo::Opcode::kPSumScatter), 0);
  CheckDerivatives(*grad, 3, "all_gather_invariant gradient (second order)");
  ExpectPartitionedMatches(*grad, {Iota(arr)}, 4, "all_gather_invariant gradient");
}

TEST(ShardMapGradTest, AllToAllGradientIsTwoOnes) {
  // test_all_to_all_grad: 8x8 sharded by rows comes out sharded by columns,
  // equal to the input; the gradient of 2 * sum is 2 * ones.
  const std::string text = absl::StrCat("HloModule a2a, mesh={x=4}\n", kAdd, R"(
%body {
  %a = f64[2,8] parameter(0)
  ROOT %t = f64[8,2] all_to_all(%a), axes={x}, split_dimension=1, concat_dimension=0, tiled=true
}
ENTRY %main {
  %arr = f64[8,8] parameter(0)
  %out = f64[8,8] shard_map(%arr), in_specs={P(x)}, out_specs={P(None, x)}, to_apply=%body
  %zero = f64[] constant(0)
  %sum = f64[] reduce(%out, %zero), dimensions={0,1}, to_apply=%add
  %two = f64[] constant(2)
  ROOT %l = f64[] multiply(%two, %sum)
}
)");
  auto m = Typed(text);
  ASSERT_NE(m, nullptr);
  const Shape arr(PrimitiveType::kF64, {8, 8});
  auto forward =
      Typed(absl::StrReplaceAll(text, {{"  %out = f64[8,8]", "  ROOT %out = f64[8,8]"},
                                       {"  ROOT %l = f64[] multiply(%two, %sum)\n", ""}}));
  ASSERT_NE(forward, nullptr);
  ExpectNear(testing::Run(*forward, {Iota(arr)}), Iota(arr), 0, "all_to_all");
  auto grad = GradOf(*m);
  ASSERT_NE(grad, nullptr);
  Literal twos(arr);
  for (int64_t i = 0; i < twos.num_elements(); ++i) twos.SetFromDouble(i, 2);
  ExpectNear(testing::Run(*grad, {Iota(arr)}).element(0), twos, 0, "grad of 2 sum(all_to_all)");
  ExpectPartitionedMatches(*grad, {Iota(arr)}, 4, "all_to_all gradient");
}

// ----------------------------------------------- systematic gradients --

struct MeshCase {
  std::string mesh;    // mesh={...}
  std::string all;     // all axes, as one spec entry: "i" or "(i,j)"
  std::string first;   // the first axis
  std::string second;  // the second axis, or "" for one-axis meshes
  int64_t devices = 1;
  int64_t first_size = 1;
};

std::vector<MeshCase> Meshes() {
  return {{"i=1", "i", "i", "", 1, 1},
          {"i=2", "i", "i", "", 2, 2},
          {"i=2, j=2", "(i,j)", "i", "j", 4, 2},
          {"i=4, j=2", "(i,j)", "i", "j", 8, 4}};
}

struct Func {
  std::string name;
  // The whole module for a mesh: body and entry; x is f64[8,8].
  std::string (*text)(const MeshCase&);
};

std::string Header(const MeshCase& m) { return absl::StrCat("HloModule f, mesh={", m.mesh, "}\n"); }

std::string Rows(const MeshCase& m) { return absl::StrCat(8 / m.devices); }

std::string SingleInput(const MeshCase& m, const std::string& body_param, const std::string& body,
                        const std::string& in_spec, const std::string& out_spec,
                        const std::string& out_shape) {
  return absl::StrCat(Header(m), "%body {\n  %x = ", body_param, " parameter(0)\n", body,
                      "}\nENTRY %main {\n  %x = f64[8,8] parameter(0)\n  ROOT %y = ", out_shape,
                      " shard_map(%x), in_specs={", in_spec, "}, out_specs={", out_spec,
                      "}, to_apply=%body\n}\n");
}

std::string Block(const MeshCase& m) { return absl::StrCat("f64[", Rows(m), ",8]"); }
std::string RowSpec(const MeshCase& m) { return absl::StrCat("P(", m.all, ")"); }

// x split by rows, w replicated: dot, sin(dot(sin)).
std::string DotText(const MeshCase& m, bool sines) {
  const std::string rows = Rows(m);
  std::string body =
      absl::StrCat("  %x = f64[", rows, ",8] parameter(0)\n", "  %w = f64[8,4] parameter(1)\n");
  std::string in = "%x";
  if (sines) {
    absl::StrAppend(&body, "  %sx = f64[", rows, ",8] sine(%x)\n");
    in = "%sx";
  }
  absl::StrAppend(&body, "  %d = f64[", rows, ",4] dot(", in,
                  ", %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n");
  absl::StrAppend(&body, sines ? absl::StrCat("  ROOT %r = f64[", rows, ",4] sine(%d)\n")
                               : absl::StrCat("  ROOT %r = f64[", rows, ",4] copy(%d)\n"));
  return absl::StrCat(Header(m), "%body {\n", body,
                      "}\nENTRY %main {\n  %x = f64[8,8] parameter(0)\n  %w = f64[8,4] "
                      "parameter(1)\n  ROOT %y = f64[8,4] shard_map(%x, %w), in_specs={",
                      RowSpec(m), ", P()}, out_specs={", RowSpec(m), "}, to_apply=%body\n}\n");
}

std::vector<Func> Funcs() {
  return {
      {"id",
       [](const MeshCase& m) {
         return SingleInput(
             m, Block(m),
             "  %r = " + Block(m) + " copy(%x)\n  ROOT %o = " + Block(m) + " negate(%r)\n",
             RowSpec(m), RowSpec(m), "f64[8,8]");
       }},
      {"flip",
       [](const MeshCase& m) {
         return SingleInput(m, Block(m),
                            "  ROOT %r = " + Block(m) + " reverse(%x), dimensions={0,1}\n",
                            RowSpec(m), RowSpec(m), "f64[8,8]");
       }},
      {"transpose",
       [](const MeshCase& m) {
         if (m.second.empty()) {
           return SingleInput(
               m, Block(m),
               absl::StrCat("  ROOT %r = f64[8,", Rows(m), "] transpose(%x), dimensions={1,0}\n"),
               "P(i)", "P(None, i)", "f64[8,8]");
         }
         const int64_t a = 8 / m.first_size, b = 8 / (m.devices / m.first_size);
         return SingleInput(
             m, absl::StrCat("f64[", a, ",", b, "]"),
             absl::StrCat("  ROOT %r = f64[", b, ",", a, "] transpose(%x), dimensions={1,0}\n"),
             "P(i, j)", "P(j, i)", "f64[8,8]");
       }},
      {"ravel",
       [](const MeshCase& m) {
         return SingleInput(m, Block(m),
                            absl::StrCat("  ROOT %r = f64[", 64 / m.devices, "] reshape(%x)\n"),
                            RowSpec(m), RowSpec(m), "f64[64]");
       }},
      {"dot", [](const MeshCase& m) { return DotText(m, false); }},
      {"sin_dot_sin", [](const MeshCase& m) { return DotText(m, true); }},
      {"dot_psum",
       [](const MeshCase& m) {
         // Contracting dimension split: partial products summed by psum.
         const std::string k = absl::StrCat(8 / m.devices);
         return absl::StrCat(
             Header(m), "%body {\n  %x = f64[8,", k, "] parameter(0)\n  %w = f64[", k,
             ",4] parameter(1)\n  %d = f64[8,4] dot(%x, %w), lhs_contracting_dims={1}, "
             "rhs_contracting_dims={0}\n  ROOT %s = f64[8,4] psum(%d), axes={",
             m.second.empty() ? "i" : "i,j",
             "}\n}\nENTRY %main {\n  %x = f64[8,8] parameter(0)\n  %w = f64[8,4] parameter(1)\n"
             "  ROOT %y = f64[8,4] shard_map(%x, %w), in_specs={P(None, ",
             m.all, "), P(", m.all, ")}, out_specs={P()}, to_apply=%body\n}\n");
       }},
      {"relu",
       [](const MeshCase& m) {
         const std::string b = Block(m);
         return SingleInput(
             m, b,
             absl::StrCat("  %one = f64[] constant(1)\n  %ones = ", b,
                          " broadcast(%one), dimensions={}\n  %p = ", b,
                          " add(%x, %ones)\n  %zero = f64[] constant(0)\n  %zeros = ", b,
                          " broadcast(%zero), dimensions={}\n  %m = ", b,
                          " maximum(%p, %zeros)\n  ROOT %r = ", b, " subtract(%m, %ones)\n"),
             RowSpec(m), RowSpec(m), "f64[8,8]");
       }},
      {"pmax",
       [](const MeshCase& m) {
         return SingleInput(m, Block(m),
                            absl::StrCat("  ROOT %r = ", Block(m), " pmax(%x), axes={",
                                         m.second.empty() ? "i" : "i,j", "}\n"),
                            RowSpec(m), "P()", absl::StrCat("f64[", Rows(m), ",8]"));
       }},
      {"sin_all_gather_invariant",
       [](const MeshCase& m) {
         return SingleInput(m, Block(m),
                            absl::StrCat("  %g = f64[8,8] all_gather_invariant(%x), axes={",
                                         m.second.empty() ? "i" : "i,j",
                                         "}, dimension=0, tiled=true\n"
                                         "  ROOT %r = f64[8,8] sine(%g)\n"),
                            RowSpec(m), "P()", "f64[8,8]");
       }},
      {"psum_scatter_of_replicated",
       [](const MeshCase& m) {
         return SingleInput(
             m, "f64[8,8]",
             absl::StrCat("  %s = f64[8,8] sine(%x)\n  ROOT %r = ", Block(m),
                          " psum_scatter(%s), axes={", m.second.empty() ? "i" : "i,j",
                          "}, dimension=0, tiled=true\n"),
             "P()", RowSpec(m), "f64[8,8]");
       }},
      {"ppermute_shift",
       [](const MeshCase& m) {
         std::string pairs;
         for (int64_t d = 0; d < m.devices; ++d) {
           absl::StrAppend(&pairs, d == 0 ? "" : ",", "{", d, ",", (d + 1) % m.devices, "}");
         }
         return SingleInput(
             m, Block(m),
             absl::StrCat("  %s = ", Block(m), " multiply(%x, %x)\n  ROOT %r = ", Block(m),
                          " ppermute(%s), axes={", m.second.empty() ? "i" : "i,j", "}, pairs={",
                          pairs, "}\n"),
             RowSpec(m), RowSpec(m), "f64[8,8]");
       }},
      {"all_to_all",
       [](const MeshCase& m) {
         return SingleInput(
             m, Block(m),
             absl::StrCat("  %s = ", Block(m), " sine(%x)\n  ROOT %r = f64[8,", Rows(m),
                          "] all_to_all(%s), axes={", m.second.empty() ? "i" : "i,j",
                          "}, split_dimension=1, concat_dimension=0, tiled=true\n"),
             RowSpec(m), absl::StrCat("P(None, ", m.all, ")"), "f64[8,8]");
       }},
  };
}

struct GradCase {
  MeshCase mesh;
  Func func;
  bool checked = true;
};

void PrintTo(const GradCase& c, std::ostream* os) {
  *os << c.func.name << " on " << c.mesh.mesh << (c.checked ? "" : " unchecked");
}

std::vector<GradCase> GradCases() {
  std::vector<GradCase> cases;
  for (const MeshCase& m : Meshes()) {
    for (const Func& f : Funcs()) {
      for (bool checked : {true, false}) cases.push_back({m, f, checked});
    }
  }
  return cases;
}

class SystematicGradTest : public ::testing::TestWithParam<GradCase> {};

TEST_P(SystematicGradTest, JvpAndVjpMatchFiniteDifferences) {
  const GradCase& c = GetParam();
  const std::string text = c.func.text(c.mesh);
  auto m = Typed(c.checked ? text : Unchecked(text));
  ASSERT_NE(m, nullptr) << text;
  std::ostringstream what;
  PrintTo(c, &what);
  CheckDerivatives(*m, 7, what.str());
}

TEST_P(SystematicGradTest, GradientRunsPartitioned) {
  const GradCase& c = GetParam();
  // loss = sum(f(x)^2): its gradient, partitioned over the mesh's devices.
  std::string text = c.func.text(c.mesh);
  const size_t root = text.find("  ROOT %y = ");
  const size_t end = text.find(']', root);
  const std::string out_shape = text.substr(root + 12, end - (root + 12) + 1);
  text.replace(root, 12, "  %y = ");
  const std::string dims = out_shape.find(',') == std::string::npos ? "{0}" : "{0,1}";
  text.insert(text.rfind('}'), absl::StrCat("  %sq = ", out_shape,
                                            " multiply(%y, %y)\n  %zero = f64[] constant(0)\n"
                                            "  ROOT %l = f64[] reduce(%sq, %zero), dimensions=",
                                            dims, ", to_apply=%add\n"));
  text.insert(text.find('\n') + 1, kAdd);
  auto m = Typed(c.checked ? text : Unchecked(text));
  ASSERT_NE(m, nullptr) << text;
  auto grad = GradOf(*m);
  ASSERT_NE(grad, nullptr);
  std::mt19937_64 rng(11);
  std::vector<Literal> args = testing::RandomArgs(*grad->entry(), rng);
  std::ostringstream what;
  PrintTo(c, &what);
  ExpectPartitionedMatches(*grad, args, c.mesh.devices, what.str());
}

INSTANTIATE_TEST_SUITE_P(
    Meshes, SystematicGradTest, ::testing::ValuesIn(GradCases()),
    [](const ::testing::TestParamInfo<GradCase>& info) {
      std::string mesh = absl::StrReplaceAll(info.param.mesh.mesh, {{"=", ""}, {", ", "_"}});
      return absl::StrCat(info.param.func.name, "_", mesh, info.param.checked ? "" : "_unchecked");
    });

// ------------------------------------------- control flow, tuple outputs --

TEST(ShardMapGradTest, CallsLoopsAndTupleOutputsInTheBody) {
  // A call, a fori loop whose carry the psum over j makes vary, and two
  // outputs: derivatives through the interpreter (the lowering does not
  // partition control flow in a body yet), checked and unchecked.
  const std::string text = R"(HloModule control_flow, mesh={i=2, j=2}

%square_sin {
  %v = f64[2] parameter(0)
  %s = f64[2] sine(%v)
  ROOT %m = f64[2] multiply(%s, %v)
}

%cond {
  %c = (s32[], f64[2]) parameter(0)
  %k = s32[] get-tuple-element(%c), index=0
  %n = s32[] constant(3)
  ROOT %lt = pred[] compare(%k, %n), direction=LT
}

%loop {
  %c = (s32[], f64[2]) parameter(0)
  %k = s32[] get-tuple-element(%c), index=0
  %v = f64[2] get-tuple-element(%c), index=1
  %one = s32[] constant(1)
  %k1 = s32[] add(%k, %one)
  %s = f64[2] sine(%v)
  %p = f64[2] psum(%s), axes={j}
  %v1 = f64[2] add(%v, %p)
  ROOT %t = (s32[], f64[2]) tuple(%k1, %v1)
}

%body {
  %x = f64[2] parameter(0)
  %w = f64[2] parameter(1)
  %c = f64[2] call(%x), to_apply=%square_sin
  %xw = f64[2] multiply(%c, %w)
  %zero = s32[] constant(0)
  %init = (s32[], f64[2]) tuple(%zero, %xw)
  %loop = (s32[], f64[2]) while(%init), condition=%cond, body=%loop
  %v = f64[2] get-tuple-element(%loop), index=1
  %a = f64[2] psum(%v), axes={i}
  ROOT %t = (f64[2], f64[2]) tuple(%a, %c)
}

ENTRY %main {
  %x = f64[8] parameter(0)
  %w = f64[2] parameter(1)
  ROOT %y = (f64[4], f64[8]) shard_map(%x, %w), in_specs={P((i,j)), P()}, out_specs={P(j), P((i,j))}, to_apply=%body
}
)";
  for (bool checked : {true, false}) {
    auto m = Typed(checked ? text : Unchecked(text));
    ASSERT_NE(m, nullptr);
    CheckDerivatives(*m, 9, checked ? "control flow" : "control flow unchecked");
  }
}

// ---------------------------------------------- data-parallel training --

// The mean squared error of a linear model over a batch split on `data`:
// each device's mean, then pmean (psum / 4).
constexpr char kDataParallelLoss[] = R"(HloModule data_parallel, mesh={data=4}

%add {
  %a = f64[] parameter(0)
  %b = f64[] parameter(1)
  ROOT %s = f64[] add(%a, %b)
}

%body {
  %w = f64[3] parameter(0)
  %bias = f64[] parameter(1)
  %x = f64[2,3] parameter(2)
  %y = f64[2] parameter(3)
  %pred = f64[2] dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %bb = f64[2] broadcast(%bias), dimensions={}
  %out = f64[2] add(%pred, %bb)
  %e = f64[2] subtract(%out, %y)
  %sq = f64[2] multiply(%e, %e)
  %zero = f64[] constant(0)
  %sum = f64[] reduce(%sq, %zero), dimensions={0}, to_apply=%add
  %batch = f64[] constant(2)
  %local = f64[] divide(%sum, %batch)
  %total = f64[] psum(%local), axes={data}
  %devices = f64[] constant(4)
  ROOT %mean = f64[] divide(%total, %devices)
}

ENTRY %main {
  %w = f64[3] parameter(0)
  %bias = f64[] parameter(1)
  %x = f64[8,3] parameter(2)
  %y = f64[8] parameter(3)
  ROOT %loss = f64[] shard_map(%w, %bias, %x, %y), in_specs={P(), P(), P(data), P(data)}, out_specs={P()}, to_apply=%body
}
)";

TEST(ShardMapGradTest, DataParallelGradientHasOneAllReducePerParameter) {
  auto m = Typed(kDataParallelLoss);
  ASSERT_NE(m, nullptr);
  CheckDerivatives(*m, 5, "data-parallel loss");
  auto grad = GradOf(*m, {0, 1});
  ASSERT_NE(grad, nullptr);
  const std::string printed = hlo::PrintModule(*grad);
  // The loss's psum transposes to a pbroadcast; the forward psum, which
  // only computed the loss value, is gone; the psums left are those of the
  // replicated parameters' cotangents (the transposes of their pbroadcasts).
  EXPECT_EQ(CountOps(*grad, hlo::Opcode::kPSum), 2) << printed;
  const hlo::Computation* backward = grad->FindComputation("body.linear.transpose");
  ASSERT_NE(backward, nullptr) << printed;
  const hlo::Instruction* ct = backward->parameter(0);  // the loss's cotangent
  ASSERT_EQ(ct->users().size(), 1u) << printed;
  const hlo::Instruction* scaled = ct->users()[0];  // / 4, the pmean's divide
  ASSERT_EQ(scaled->users().size(), 1u) << printed;
  EXPECT_EQ(scaled->users()[0]->opcode(), hlo::Opcode::kPBroadcast) << printed;
  std::mt19937_64 rng(3);
  std::vector<Literal> args = testing::RandomArgs(*grad->entry(), rng);
  ExpectPartitionedMatches(*grad, args, 4, "data-parallel gradient");

  // Lowered and partitioned: exactly one all-reduce per parameter gradient.
  std::unique_ptr<Module> lowered = grad->Clone();
  driver::CompileOptions options;
  options.devices = 4;
  ASSERT_OK(driver::PrepareModule(*lowered, options));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> partitioned, driver::PartitionGlobal(*lowered, 4));
  EXPECT_EQ(CountOps(*partitioned, hlo::Opcode::kAllReduce), 2) << hlo::PrintModule(*partitioned);
}

TEST(ShardMapGradTest, UncheckedDataParallelGradientIsDefensive) {
  // The same loss with the check off: the cotangent of the unmapped loss is
  // divided by 4 and the loss's psum transposes to a psum, so the gradient
  // has an all-reduce on the loss path as well; its values are the same.
  auto checked = Typed(kDataParallelLoss);
  auto m = Typed(Unchecked(kDataParallelLoss));
  ASSERT_NE(m, nullptr);
  auto grad = GradOf(*m, {0, 1});
  auto checked_grad = GradOf(*checked, {0, 1});
  ASSERT_NE(grad, nullptr);
  ASSERT_NE(checked_grad, nullptr);
  EXPECT_EQ(CountOps(*grad, hlo::Opcode::kPSum), 3) << hlo::PrintModule(*grad);
  std::mt19937_64 rng(4);
  std::vector<Literal> args = testing::RandomArgs(*grad->entry(), rng);
  ExpectNear(testing::Run(*grad, args), testing::Run(*checked_grad, args), 1e-12,
             "unchecked vs checked gradient");
}

TEST(ShardMapGradTest, JvpOfShardMapIsOneShardMapWithTangentSpecs) {
  auto m = Typed(kDataParallelLoss);
  ASSERT_NE(m, nullptr);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> jvp, JvpModule(*m));
  const std::string printed = hlo::PrintModule(*jvp);
  EXPECT_EQ(CountOps(*jvp, hlo::Opcode::kShardMap), 1) << printed;
  EXPECT_THAT(printed, HasSubstr("in_specs={P(), P(), P(data), P(data), P(), P(), P(data), "
                                 "P(data)}, out_specs={P(), P()}"));
}

}  // namespace
}  // namespace sharc::autodiff
