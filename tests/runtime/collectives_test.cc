// Every collective, run by the runtime (Executable + DeviceMesh + in-process
// communicator) against the reference interpreter's SPMD mode, for every
// dtype, 1-D groups and 2-D subgroups (rows and columns), member orders that
// are not sorted, uneven sizes and 1, 2, 3, 4, 6 and 8 devices. Results must
// be bit-identical to the interpreter's (both combine in member order).
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hlo/eval/interpreter.h"
#include "hlo/text/parser.h"
#include "tests/runtime/collective_cases.h"
#include "tests/runtime/runtime_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::runtime {
namespace {

using hlo::PrimitiveType;
using testing_util::RandomLiteral;
using testing_util::RunOnMesh;
using namespace collective_cases;

// Runs `text` on the runtime and on the interpreter with random per-device
// inputs; every device's result must be bit-identical.
void ExpectSameAsInterpreter(const std::string& text, int64_t devices, uint32_t seed,
                             int nan_every = 0) {
  SCOPED_TRACE(text);
  ASSERT_OK_AND_ASSIGN(auto module, hlo::ParseAndVerifyModule(text));
  std::mt19937 rng(seed);
  std::vector<std::vector<hlo::Literal>> args(static_cast<size_t>(devices));
  for (auto& a : args) a.push_back(RandomLiteral(module->entry()->parameter(0)->shape(), rng, nan_every));
  hlo::SpmdOptions spmd;
  spmd.num_devices = devices;
  ASSERT_OK_AND_ASSIGN(std::vector<hlo::Literal> want, hlo::EvaluateSpmd(*module, args, spmd));
  MeshOptions options;
  options.num_devices = devices;
  options.collective_timeout = absl::Seconds(20);
  ASSERT_OK_AND_ASSIGN(std::vector<hlo::Literal> got, RunOnMesh(*module, args, options));
  ASSERT_EQ(got.size(), want.size());
  for (size_t d = 0; d < got.size(); ++d) {
    EXPECT_EQ(got[d], want[d]) << "device " << d << ": got " << got[d].ToString() << "\nwant "
                               << want[d].ToString();
  }
}

TEST(CollectivesTest, AllReduceEveryDtypeLayoutAndReduction) {
  uint32_t seed = 1;
  for (const Layout& layout : Layouts()) {
    SCOPED_TRACE(layout.ToString());
    for (PrimitiveType t : Dtypes()) {
      for (const std::string& op : ReducerOps(t)) {
        bool minmax = op == "maximum" || op == "minimum";
        for (const std::vector<int64_t>& dims :
             std::vector<std::vector<int64_t>>{{3, 5}, {1030}, {0, 3}}) {
          if (dims[0] == 1030 && op != "add" && op != "or") continue;
          std::string attrs = absl::StrCat("all-reduce(%p), channel_id=1", GroupsAttr(layout),
                                           ", use_global_device_ids=true, to_apply=%reducer");
          ExpectSameAsInterpreter(ModuleText(layout, t, dims, dims, attrs, op), layout.devices,
                                  seed++, minmax ? 7 : 0);
          if (HasFatalFailure()) return;
        }
      }
    }
  }
}

TEST(CollectivesTest, AllGatherAlongEachDim) {
  uint32_t seed = 100;
  for (const Layout& layout : Layouts()) {
    SCOPED_TRACE(layout.ToString());
    const int64_t g = layout.group_size();
    for (PrimitiveType t : Dtypes()) {
      for (auto [in, dim] : std::vector<std::pair<std::vector<int64_t>, size_t>>{
               {{2, 3}, 0}, {{3, 2}, 1}, {{3, 1, 5}, 1}, {{5}, 0}}) {
        std::string attrs = absl::StrCat("all-gather(%p), channel_id=2", GroupsAttr(layout),
                                         ", dimensions={", dim, "}, use_global_device_ids=true");
        ExpectSameAsInterpreter(ModuleText(layout, t, in, Scaled(in, dim, g), attrs, ""),
                                layout.devices, seed++);
        if (HasFatalFailure()) return;
      }
    }
  }
}

TEST(CollectivesTest, ReduceScatterAlongEachDim) {
  uint32_t seed = 200;
  for (const Layout& layout : Layouts()) {
    SCOPED_TRACE(layout.ToString());
    const int64_t g = layout.group_size();
    for (PrimitiveType t : Dtypes()) {
      std::vector<std::string> ops = ReducerOps(t);
      for (auto [out, dim] : std::vector<std::pair<std::vector<int64_t>, size_t>>{
               {{3, 5}, 0}, {{2, 3}, 1}, {{7}, 0}}) {
        for (const std::string& op : {ops.front(), ops.back()}) {
          std::string attrs =
              absl::StrCat("reduce-scatter(%p), channel_id=3", GroupsAttr(layout), ", dimensions={",
                           dim, "}, use_global_device_ids=true, to_apply=%reducer");
          ExpectSameAsInterpreter(ModuleText(layout, t, Scaled(out, dim, g), out, attrs, op),
                                  layout.devices, seed++);
          if (HasFatalFailure()) return;
        }
      }
    }
  }
}

TEST(CollectivesTest, AllToAllAlongEachDim) {
  uint32_t seed = 300;
  for (const Layout& layout : Layouts()) {
    SCOPED_TRACE(layout.ToString());
    const int64_t g = layout.group_size();
    for (PrimitiveType t : Dtypes()) {
      for (auto [base, dim] : std::vector<std::pair<std::vector<int64_t>, size_t>>{
               {{2, 3}, 0}, {{3, 1}, 1}, {{2, 3, 5}, 1}}) {
        std::vector<int64_t> dims = Scaled(base, dim, g);
        std::string attrs = absl::StrCat("all-to-all(%p), channel_id=4", GroupsAttr(layout),
                                         ", dimensions={", dim, "}");
        ExpectSameAsInterpreter(ModuleText(layout, t, dims, dims, attrs, ""), layout.devices,
                                seed++);
        if (HasFatalFailure()) return;
      }
    }
  }
}

TEST(CollectivesTest, TupleAllToAll) {
  // The tuple form: operand j goes to member j.
  for (const Layout& layout : std::vector<Layout>{{2, {}}, {4, {{0, 2}, {1, 3}}}, {3, {}}}) {
    SCOPED_TRACE(layout.ToString());
    const int64_t g = layout.group_size();
    std::string text = absl::StrCat("HloModule rt, num_partitions=", layout.devices,
                                    "\n\nENTRY %main {\n  %p = s32[2,3] parameter(0)\n");
    std::vector<std::string> ops, shapes;
    for (int64_t j = 0; j < g; ++j) {
      absl::StrAppend(&text, "  %n", j, " = s32[2,3] negate(%p)\n  %x", j,
                      " = s32[2,3] add(%p, %n", j, ")\n");
      ops.push_back(absl::StrCat(j == 0 ? "%p" : absl::StrCat("%x", j)));
      shapes.push_back("s32[2,3]");
    }
    absl::StrAppend(&text, "  ROOT %c = (", absl::StrJoin(shapes, ", "), ") all-to-all(",
                    absl::StrJoin(ops, ", "), "), channel_id=1", GroupsAttr(layout), "\n}\n");
    ExpectSameAsInterpreter(text, layout.devices, 7);
  }
}

TEST(CollectivesTest, CollectivePermuteRingsAndPartialPairs) {
  uint32_t seed = 400;
  for (const Layout& layout : Layouts()) {
    SCOPED_TRACE(layout.ToString());
    std::vector<std::vector<int64_t>> groups = layout.groups;
    if (groups.empty()) {
      groups.emplace_back();
      for (int64_t d = 0; d < layout.devices; ++d) groups[0].push_back(d);
    }
    // A ring within every group, and a single pair (everyone else gets zeros).
    std::vector<std::string> ring;
    for (const auto& g : groups) {
      for (size_t i = 0; i < g.size(); ++i) {
        ring.push_back(absl::StrCat("{", g[i], ",", g[(i + 1) % g.size()], "}"));
      }
    }
    std::vector<std::string> pair_sets = {
        absl::StrCat("{", absl::StrJoin(ring, ","), "}"),
        absl::StrCat("{{0,", layout.devices - 1, "}}")};
    for (PrimitiveType t : Dtypes()) {
      for (const std::string& pairs : pair_sets) {
        std::string attrs =
            absl::StrCat("collective-permute(%p), channel_id=5, source_target_pairs=", pairs);
        ExpectSameAsInterpreter(ModuleText(layout, t, {3, 5}, {3, 5}, attrs, ""), layout.devices,
                                seed++);
        if (HasFatalFailure()) return;
      }
    }
  }
}

TEST(CollectivesTest, VariadicAllReduce) {
  const std::string text = R"(HloModule rt, num_partitions=4

%sum {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %r = f32[] add(%a, %b)
}

ENTRY %main {
  %p = f32[5,3] parameter(0)
  %n = f32[5,3] negate(%p)
  ROOT %c = (f32[5,3], f32[5,3]) all-reduce(%p, %n), channel_id=1, replica_groups={{0,2},{1,3}}, use_global_device_ids=true, to_apply=%sum
}
)";
  ExpectSameAsInterpreter(text, 4, 11);
}

}  // namespace
}  // namespace sharc::runtime
