// Global module -> sharding propagation -> SPMD partitioner -> runtime
// (Executable with interpreter kernels on a DeviceMesh) -> assembled result,
// compared with the interpreter on the global module; the per-device results
// must also be bit-identical to the interpreter's own SPMD run.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "hlo/eval/interpreter.h"
#include "hlo/text/parser.h"
#include "hlo/verifier/verifier.h"
#include "spmd/partition/device_values.h"
#include "spmd/partition/partitioner.h"
#include "spmd/propagation.h"
#include "tests/runtime/runtime_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::runtime {
namespace {

hlo::Sharding ShardingOf(const hlo::Instruction& inst) {
  return inst.sharding() ? *inst.sharding() : hlo::Sharding::Replicated();
}

// Integer-valued inputs, so sums are exact in any order.
hlo::Literal SmallIntegers(const hlo::Shape& shape, std::mt19937& rng) {
  if (shape.is_tuple()) {
    std::vector<hlo::Literal> elements;
    for (const hlo::Shape& s : shape.tuple_shapes()) elements.push_back(SmallIntegers(s, rng));
    return hlo::Literal::Tuple(std::move(elements));
  }
  hlo::Literal l(shape);
  std::uniform_int_distribution<int> dist(-4, 4);
  for (int64_t i = 0; i < l.num_elements(); ++i) {
    l.SetFromInt64(i, shape.type() == hlo::PrimitiveType::kPred ? dist(rng) > 0 : dist(rng));
  }
  return l;
}

void ExpectClose(const hlo::Literal& want, const hlo::Literal& got, const std::string& where) {
  ASSERT_EQ(want.shape(), got.shape()) << where;
  if (want.is_tuple()) {
    for (size_t i = 0; i < want.elements().size(); ++i) {
      ExpectClose(want.elements()[i], got.elements()[i], absl::StrCat(where, "{", i, "}"));
    }
    return;
  }
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    double a = want.GetAsDouble(i), b = got.GetAsDouble(i);
    if (std::isnan(a) && std::isnan(b)) continue;
    // An infinity matches only itself (its relative bound would take anything).
    if (!std::isfinite(a) || !std::isfinite(b)) {
      ASSERT_EQ(a, b) << where << " element " << i;
      continue;
    }
    ASSERT_LE(std::fabs(a - b), 1e-4 + 1e-4 * std::fabs(a)) << where << " element " << i;
  }
}

void RunPipeline(const std::string& text, const std::string& name, uint32_t seed) {
  SCOPED_TRACE(name);
  ASSERT_OK_AND_ASSIGN(auto global, hlo::ParseAndVerifyModule(text));
  ASSERT_OK(spmd::PropagateShardings(*global).status());
  ASSERT_OK_AND_ASSIGN(auto local, spmd::PartitionModule(*global));
  ASSERT_OK(hlo::VerifyModule(*local));
  const int64_t n = local->config().num_partitions;

  std::mt19937 rng(seed);
  const hlo::Computation& entry = *global->entry();
  std::vector<hlo::Literal> args;
  for (const hlo::Instruction* p : entry.parameters()) args.push_back(SmallIntegers(p->shape(), rng));
  ASSERT_OK_AND_ASSIGN(hlo::Literal want, hlo::Evaluate(*global, args));

  std::vector<std::vector<hlo::Literal>> device_args(static_cast<size_t>(n));
  for (size_t i = 0; i < args.size(); ++i) {
    for (int64_t d = 0; d < n; ++d) {
      ASSERT_OK_AND_ASSIGN(hlo::Literal part,
                           spmd::ShardLiteral(args[i], ShardingOf(*entry.parameter(i)), d));
      device_args[static_cast<size_t>(d)].push_back(std::move(part));
    }
  }
  MeshOptions options;
  options.num_devices = n;
  options.collective_timeout = absl::Seconds(30);
  ASSERT_OK_AND_ASSIGN(std::vector<hlo::Literal> parts,
                       testing_util::RunOnMesh(*local, device_args, options));

  hlo::SpmdOptions spmd_options;
  spmd_options.num_devices = n;
  ASSERT_OK_AND_ASSIGN(std::vector<hlo::Literal> reference,
                       hlo::EvaluateSpmd(*local, device_args, spmd_options));
  for (int64_t d = 0; d < n; ++d) {
    EXPECT_EQ(parts[static_cast<size_t>(d)], reference[static_cast<size_t>(d)]) << "device " << d;
  }
  ASSERT_OK_AND_ASSIGN(hlo::Literal got,
                       spmd::AssembleLiteral(parts, ShardingOf(*entry.root()), entry.root()->shape()));
  ExpectClose(want, got, "result");
}

// The example from examples/sharded_matmul.hlo, with most annotations left
// to propagation.
constexpr char kMlp[] = R"(HloModule sharded_mlp_layer, num_partitions=2

%add_f32 {
  %lhs = f32[] parameter(0)
  %rhs = f32[] parameter(1)
  ROOT %sum = f32[] add(%lhs, %rhs)
}

ENTRY %main {
  %x = f32[8,16] parameter(0), sharding={devices=[2,1]0,1}
  %w = f32[16,4] parameter(1), sharding={replicated}
  %bias = f32[4] parameter(2), sharding={replicated}
  %matmul = f32[8,4] dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %bias_rows = f32[8,4] broadcast(%bias), dimensions={1}
  %preactivation = f32[8,4] add(%matmul, %bias_rows)
  %activation = f32[8,4] tanh(%preactivation)
  %zero = f32[] constant(0)
  %row_sum = f32[8] reduce(%activation, %zero), dimensions={1}, to_apply=%add_f32
  ROOT %result = (f32[8,4], f32[8]) tuple(%activation, %row_sum), sharding={{devices=[2,1]0,1}, {devices=[2]0,1}}
}
)";

// Contracting dimension split over 4 devices (an all-reduce of partial
// sums), then a layout change that needs an all-to-all, on a 2x2 mesh.
constexpr char kContracting[] = R"(HloModule contracting, num_partitions=4

%add_f32 {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %main {
  %x = f32[6,16] parameter(0), sharding={devices=[1,4]0,1,2,3}
  %w = f32[16,8] parameter(1), sharding={devices=[4,1]0,1,2,3}
  %y = f32[6,8] dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[2,2]0,1,2,3}
  %z = f32[6,8] copy(%y), sharding={devices=[1,4]0,1,2,3}
  %zero = f32[] constant(0)
  ROOT %r = f32[8] reduce(%z, %zero), dimensions={0}, to_apply=%add_f32, sharding={replicated}
}
)";

TEST(EndToEndTest, ShardedMlpOnTwoDevices) { RunPipeline(kMlp, "mlp", 1); }

TEST(EndToEndTest, ContractingSplitOnFourDevices) { RunPipeline(kContracting, "contracting", 2); }

TEST(EndToEndTest, PartitionConformanceCorpus) {
  namespace fs = std::filesystem;
  fs::path dir = fs::path(SHARC_SHARED_DIR) / "conformance" / "partition";
  if (!fs::exists(dir)) FAIL() << dir << " not found";
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".hlo") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  ASSERT_FALSE(files.empty());
  uint32_t seed = 10;
  for (const fs::path& f : files) {
    std::ifstream in(f);
    std::stringstream ss;
    ss << in.rdbuf();
    RunPipeline(ss.str(), f.filename().string(), seed++);
  }
}

}  // namespace
}  // namespace sharc::runtime
