// The executable: schedules with control flow and collectives inside loops
// and branches, buffers released after their last use, partition-id from the
// device, and the mesh-level failure contract (mismatched programs, a device
// whose kernel fails, a device that skips a collective).
#include "runtime/executable.h"

#include <algorithm>
#include <chrono>
#include <thread>
#include <random>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hlo/eval/interpreter.h"
#include "hlo/text/parser.h"
#include "runtime/interpreter_kernels.h"
#include "runtime/mesh_runtime.h"
#include "tests/runtime/runtime_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::runtime {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using testing_util::RandomLiteral;
using testing_util::RunOnMesh;

void ExpectMatchesInterpreter(const std::string& text, int64_t devices) {
  ASSERT_OK_AND_ASSIGN(auto module, hlo::ParseAndVerifyModule(text));
  std::mt19937 rng(5);
  std::vector<std::vector<hlo::Literal>> args(static_cast<size_t>(devices));
  for (auto& a : args) {
    for (const hlo::Instruction* p : module->entry()->parameters()) {
      a.push_back(RandomLiteral(p->shape(), rng));
    }
  }
  hlo::SpmdOptions spmd;
  spmd.num_devices = devices;
  ASSERT_OK_AND_ASSIGN(std::vector<hlo::Literal> want, hlo::EvaluateSpmd(*module, args, spmd));
  MeshOptions options;
  options.num_devices = devices;
  ASSERT_OK_AND_ASSIGN(std::vector<hlo::Literal> got, RunOnMesh(*module, args, options));
  for (size_t d = 0; d < got.size(); ++d) {
    EXPECT_EQ(got[d], want[d]) << "device " << d << ": " << got[d].ToString() << " vs "
                               << want[d].ToString();
  }
}

constexpr char kLoopWithCollectives[] = R"(HloModule loop, num_partitions=4

%sum {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %r = f32[] add(%a, %b)
}

%cond {
  %s = (s32[], f32[8]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %n = s32[] constant(5)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}

%body {
  %s = (s32[], f32[8]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %x = f32[8] get-tuple-element(%s), index=1
  %one = s32[] constant(1)
  %next = s32[] add(%i, %one)
  %ar = f32[8] all-reduce(%x), channel_id=1, replica_groups={{0,1},{2,3}}, use_global_device_ids=true, to_apply=%sum
  %half = f32[] constant(0.5)
  %halves = f32[8] broadcast(%half), dimensions={}
  %scaled = f32[8] multiply(%ar, %halves)
  %perm = f32[8] collective-permute(%scaled), channel_id=2, source_target_pairs={{0,1},{1,2},{2,3},{3,0}}
  ROOT %t = (s32[], f32[8]) tuple(%next, %perm)
}

%even {
  %v = f32[8] parameter(0)
  ROOT %g = f32[32] all-gather(%v), channel_id=3, dimensions={0}, use_global_device_ids=true
}

%odd {
  %v = f32[8] parameter(0)
  %e = f32[8] exponential(%v)
  ROOT %g = f32[32] all-gather(%e), channel_id=3, dimensions={0}, use_global_device_ids=true
}

%twice {
  %v = f32[32] parameter(0)
  ROOT %d = f32[32] add(%v, %v)
}

ENTRY %main {
  %x = f32[8] parameter(0)
  %zero = s32[] constant(0)
  %init = (s32[], f32[8]) tuple(%zero, %x)
  %loop = (s32[], f32[8]) while(%init), condition=%cond, body=%body
  %y = f32[8] get-tuple-element(%loop), index=1
  %pid = u32[] partition-id()
  %two = u32[] constant(2)
  %sel = u32[] remainder(%pid, %two)
  %idx = s32[] convert(%sel)
  %c = f32[32] conditional(%idx, %y, %y), branch_computations={%even, %odd}
  ROOT %out = f32[32] call(%c), to_apply=%twice
}
)";

TEST(ExecutableTest, ControlFlowWithCollectivesMatchesInterpreter) {
  ExpectMatchesInterpreter(kLoopWithCollectives, 4);
}

TEST(ExecutableTest, PartitionIdComesFromTheDevice) {
  constexpr char kText[] = R"(HloModule ids, num_partitions=3
ENTRY %main {
  %p = u32[] partition-id()
  %r = u32[] replica-id()
  ROOT %t = (u32[], u32[]) tuple(%p, %r)
}
)";
  ASSERT_OK_AND_ASSIGN(auto module, hlo::ParseAndVerifyModule(kText));
  InterpreterKernelFactory factory;
  ASSERT_OK_AND_ASSIGN(auto exe, Executable::Create(*module, factory));
  MeshOptions options;
  options.num_devices = 3;
  ASSERT_OK_AND_ASSIGN(auto results, DeviceMesh(options).Run(*exe, {{}, {}, {}}));
  for (int64_t d = 0; d < 3; ++d) {
    ASSERT_EQ(results[d].size(), 2u);
    EXPECT_EQ(results[d][0].data<uint32_t>()[0], d);
    EXPECT_EQ(results[d][1].data<uint32_t>()[0], 0u);
  }
}

TEST(ExecutableTest, OpenMpThreadsShareTheCores) {
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (int64_t n : {1, 2, 3, 8}) {
    MeshOptions options;
    options.num_devices = n;
    DeviceMesh mesh(options);
    EXPECT_EQ(mesh.threads_per_device(), std::max<int64_t>(1, cores / n));
    EXPECT_LE(mesh.threads_per_device() * n, std::max<int64_t>(n, cores));
  }
}

// A row-major reshape runs no kernel: its result is the operand's memory
// under the new shape (one kernel launch, for the negate), and the values
// are the interpreter's.
TEST(ExecutableTest, ReshapesAliasTheirOperand) {
  ASSERT_OK_AND_ASSIGN(auto module, hlo::ParseAndVerifyModule(R"(
HloModule reshapes
ENTRY %main {
  %x = f32[4,6] parameter(0)
  %n = f32[4,6] negate(%x)
  %flat = f32[24] reshape(%n)
  %cube = f32[2,3,4] reshape(%flat)
  %back = f32[6,4] reshape(%x)
  ROOT %t = (f32[24], f32[2,3,4], f32[6,4]) tuple(%flat, %cube, %back)
}
)"));
  InterpreterKernelFactory factory;
  ASSERT_OK_AND_ASSIGN(auto exe, Executable::Create(*module, factory));
  EXPECT_THAT(exe->ScheduleToString(), HasSubstr("reshape %flat"));
  std::mt19937 rng(3);
  hlo::Literal x = RandomLiteral(hlo::Shape(hlo::PrimitiveType::kF32, {4, 6}), rng);
  ASSERT_OK_AND_ASSIGN(Buffer arg, Buffer::FromLiteral(x));
  ExecutionStats stats;
  DeviceContext device;
  ASSERT_OK_AND_ASSIGN(Buffer out, exe->Run(device, {arg}, &stats));
  EXPECT_EQ(stats.kernel_launches, 1);
  EXPECT_EQ(out.element(0).data(), out.element(1).data());
  EXPECT_EQ(out.element(2).data(), arg.data());
  EXPECT_EQ(out.element(1).shape(), hlo::Shape(hlo::PrimitiveType::kF32, {2, 3, 4}));
  ASSERT_OK_AND_ASSIGN(hlo::Literal expected, hlo::Evaluate(*module, {x}));
  ASSERT_OK_AND_ASSIGN(hlo::Literal actual, out.ToLiteral());
  EXPECT_EQ(actual, expected);
}

TEST(ExecutableTest, BuffersAreFreedAfterTheirLastUse) {
  // A chain of 20 elementwise ops on 1 MiB values: only a couple are alive
  // at any time.
  std::string text = "HloModule chain\nENTRY %main {\n  %v0 = f32[262144] parameter(0)\n";
  for (int i = 1; i <= 20; ++i) {
    absl::StrAppend(&text, "  ", i == 20 ? "ROOT " : "", "%v", i, " = f32[262144] ",
                    i % 2 ? "negate" : "exponential", "(%v", i - 1, ")\n");
  }
  absl::StrAppend(&text, "}\n");
  ASSERT_OK_AND_ASSIGN(auto module, hlo::ParseAndVerifyModule(text));
  InterpreterKernelFactory factory;
  ASSERT_OK_AND_ASSIGN(auto exe, Executable::Create(*module, factory));
  EXPECT_THAT(exe->ScheduleToString(), HasSubstr("kernel %v2  free(v1)"));
  ASSERT_OK_AND_ASSIGN(Buffer arg,
                       Buffer::Allocate(hlo::Shape(hlo::PrimitiveType::kF32, {262144}), true));
  ExecutionStats stats;
  DeviceContext device;
  ASSERT_OK_AND_ASSIGN(Buffer out, exe->Run(device, {arg}, &stats));
  EXPECT_EQ(stats.kernel_launches, 20);
  EXPECT_LE(stats.peak_live_bytes, 2 * 262144 * 4);
  ASSERT_OK_AND_ASSIGN(hlo::Literal want, hlo::Evaluate(*module, {*arg.ToLiteral()}));
  EXPECT_EQ(*out.ToLiteral(), want);
}

// The second run of a program takes every buffer from the executable's pool:
// a training step allocates nothing from the system after the first.
TEST(ExecutableTest, RunsAfterTheFirstAllocateNothingFromTheSystem) {
  ASSERT_OK_AND_ASSIGN(auto module, hlo::ParseAndVerifyModule(R"(
HloModule pooled
ENTRY %main {
  %x = f32[64,96] parameter(0)
  %e = f32[64,96] exponential(%x)
  %n = f32[64,96] negate(%e)
  %t = f32[96,64] transpose(%n), dimensions={1,0}
  %s = f32[96,64] sine(%t)
  %w = f32[96,96] dot(%s, %n), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT %out = (f32[96,96], f32[64,96]) tuple(%w, %e)
}
)"));
  InterpreterKernelFactory factory;
  ASSERT_OK_AND_ASSIGN(auto exe, Executable::Create(*module, factory));
  std::mt19937 rng(5);
  ASSERT_OK_AND_ASSIGN(
      Buffer arg, Buffer::FromLiteral(RandomLiteral(hlo::Shape(hlo::PrimitiveType::kF32, {64, 96}), rng)));
  DeviceContext device;
  { ASSERT_OK(exe->Run(device, {arg}).status()); }
  const BufferPoolStats first = exe->pool_stats();
  EXPECT_GT(first.misses, 0);
  for (int run = 0; run < 3; ++run) {
    ASSERT_OK(exe->Run(device, {arg}).status());
  }
  const BufferPoolStats later = exe->pool_stats();
  EXPECT_EQ(later.misses, first.misses);
  EXPECT_GE(later.hits - first.hits, 3 * first.misses);
  EXPECT_EQ(later.in_use_bytes, 0);
}

TEST(ExecutableTest, BadArgumentsAndUnsupportedReducers) {
  ASSERT_OK_AND_ASSIGN(auto module, hlo::ParseAndVerifyModule(kLoopWithCollectives));
  InterpreterKernelFactory factory;
  ASSERT_OK_AND_ASSIGN(auto exe, Executable::Create(*module, factory));
  DeviceContext device;
  EXPECT_THAT(std::string(exe->Run(device, {}).status().message()), HasSubstr("takes 1 arguments"));
  ASSERT_OK_AND_ASSIGN(Buffer wrong, Buffer::Allocate(hlo::Shape(hlo::PrimitiveType::kF32, {3})));
  EXPECT_THAT(std::string(exe->Run(device, {wrong}).status().message()),
              HasSubstr("has shape f32[3], expected f32[8]"));
  MeshOptions options;
  options.num_devices = 2;
  EXPECT_THAT(std::string(DeviceMesh(options).Run(*exe, {{}}).status().message()),
              HasSubstr("expected arguments for 2 devices"));

  constexpr char kOddReducer[] = R"(HloModule odd, num_partitions=2
%weird {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  %s = f32[] add(%a, %b)
  ROOT %r = f32[] multiply(%s, %s)
}
ENTRY %main {
  %x = f32[4] parameter(0)
  ROOT %ar = f32[4] all-reduce(%x), to_apply=%weird
}
)";
  ASSERT_OK_AND_ASSIGN(auto odd, hlo::ParseAndVerifyModule(kOddReducer));
  absl::StatusOr<std::unique_ptr<Executable>> bad = Executable::Create(*odd, factory);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(bad.status().message()), AllOf(HasSubstr("weird"), HasSubstr("%ar")));
}

// Device 0 takes one branch, the others another: different all-reduces at
// the same point of the program.
constexpr char kDivergent[] = R"(HloModule divergent, num_partitions=2
%sum {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %r = f32[] add(%a, %b)
}
%left {
  %v = f32[4] parameter(0)
  ROOT %grads = f32[4] all-reduce(%v), channel_id=1, to_apply=%sum
}
%right {
  %v = f32[4] parameter(0)
  ROOT %loss = f32[4] all-reduce(%v), channel_id=1, to_apply=%sum
}
ENTRY %main {
  %x = f32[4] parameter(0)
  %pid = u32[] partition-id()
  %zero = u32[] constant(0)
  %is0 = pred[] compare(%pid, %zero), direction=EQ
  ROOT %c = f32[4] conditional(%is0, %x, %x), true_computation=%left, false_computation=%right
}
)";

TEST(MeshFaultTest, MismatchedProgramsFail) {
  ASSERT_OK_AND_ASSIGN(auto module, hlo::ParseAndVerifyModule(kDivergent));
  MeshOptions options;
  options.num_devices = 2;
  options.collective_timeout = absl::Seconds(30);
  auto start = std::chrono::steady_clock::now();
  std::vector<std::vector<hlo::Literal>> args(2);
  for (auto& a : args) a.push_back(hlo::Literal(hlo::Shape(hlo::PrimitiveType::kF32, {4})));
  absl::StatusOr<std::vector<hlo::Literal>> r = RunOnMesh(*module, args, options);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(r.status().message()),
              AllOf(HasSubstr("mismatch"), HasSubstr("%grads"), HasSubstr("%loss")));
}

TEST(MeshFaultTest, DeviceWhoseKernelFailsStopsTheRun) {
  // Device 1 runs a custom-call nobody can evaluate, then everyone meets at
  // an all-reduce; the others must wake with device 1's error.
  constexpr char kText[] = R"(HloModule failing, num_partitions=3
%sum {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %r = f32[] add(%a, %b)
}
%fine {
  %v = f32[4] parameter(0)
  ROOT %n = f32[4] negate(%v)
}
%broken {
  %v = f32[4] parameter(0)
  ROOT %cc = f32[4] custom-call(%v), custom_call_target="no_such_kernel"
}
ENTRY %main {
  %x = f32[4] parameter(0)
  %pid = u32[] partition-id()
  %one = u32[] constant(1)
  %is1 = pred[] compare(%pid, %one), direction=EQ
  %c = f32[4] conditional(%is1, %x, %x), true_computation=%broken, false_computation=%fine
  ROOT %ar = f32[4] all-reduce(%c), channel_id=1, to_apply=%sum
}
)";
  ASSERT_OK_AND_ASSIGN(auto module, hlo::ParseAndVerifyModule(kText));
  MeshOptions options;
  options.num_devices = 3;
  options.collective_timeout = absl::Seconds(30);
  std::vector<std::vector<hlo::Literal>> args(3);
  for (auto& a : args) a.push_back(hlo::Literal(hlo::Shape(hlo::PrimitiveType::kF32, {4})));
  auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::vector<hlo::Literal>> r = RunOnMesh(*module, args, options);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
  EXPECT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()),
              AllOf(HasSubstr("device 1 failed"), HasSubstr("no_such_kernel")));
}

TEST(MeshFaultTest, DeviceThatSkipsACollectiveEndsTheRun) {
  // Device 1 skips the all-reduce and finishes; the others must not wait
  // for it until the timeout.
  constexpr char kText[] = R"(HloModule skipping, num_partitions=2
%sum {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %r = f32[] add(%a, %b)
}
%with {
  %v = f32[4] parameter(0)
  ROOT %total = f32[4] all-reduce(%v), channel_id=1, to_apply=%sum
}
%without {
  %v = f32[4] parameter(0)
  ROOT %n = f32[4] negate(%v)
}
ENTRY %main {
  %x = f32[4] parameter(0)
  %pid = u32[] partition-id()
  %zero = u32[] constant(0)
  %is0 = pred[] compare(%pid, %zero), direction=EQ
  ROOT %c = f32[4] conditional(%is0, %x, %x), true_computation=%with, false_computation=%without
}
)";
  ASSERT_OK_AND_ASSIGN(auto module, hlo::ParseAndVerifyModule(kText));
  MeshOptions options;
  options.num_devices = 2;
  options.collective_timeout = absl::Seconds(1);
  std::vector<std::vector<hlo::Literal>> args(2);
  for (auto& a : args) a.push_back(hlo::Literal(hlo::Shape(hlo::PrimitiveType::kF32, {4})));
  auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::vector<hlo::Literal>> r = RunOnMesh(*module, args, options);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 1.5);
  EXPECT_THAT(std::string(r.status().message()),
              HasSubstr("device 1 finished its program without reaching all-reduce %total"));
}

}  // namespace
}  // namespace sharc::runtime
