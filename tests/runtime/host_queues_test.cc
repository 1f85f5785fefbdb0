// Infeed and outfeed as steps of the runtime's schedule: each device pops its
// own host queue and pushes to its own outfeed queue; tokens are empty
// values; a device whose queue is empty fails the run (naming itself and
// the infeed) and wakes the devices waiting for it in a collective.
#include <chrono>
#include <memory>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hlo/eval/host_queues.h"
#include "hlo/text/parser.h"
#include "runtime/executable.h"
#include "runtime/interpreter_kernels.h"
#include "runtime/mesh_runtime.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::runtime {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// Each device infeeds a value, adds everyone's (all-reduce) and outfeeds
// the sum; the root is the token of the outfeed with the sum.
constexpr char kFeedReduceSend[] = R"(HloModule feed, num_partitions=2
%sum {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %r = f32[] add(%a, %b)
}
ENTRY %main {
  %t0 = token[] after-all()
  %in = (f32[3], token[]) infeed(%t0)
  %x = f32[3] get-tuple-element(%in), index=0
  %t1 = token[] get-tuple-element(%in), index=1
  %s = f32[3] all-reduce(%x), channel_id=1, to_apply=%sum
  %o = token[] outfeed(%s, %t1)
  %d = f32[3] add-dependency(%s, %o)
  ROOT %r = (f32[3], token[]) tuple(%d, %o)
}
)";

std::vector<float> Floats(const hlo::Literal& l) {
  return std::vector<float>(l.data<float>().begin(), l.data<float>().end());
}

TEST(RuntimeHostQueuesTest, EachDeviceUsesItsOwnQueues) {
  ASSERT_OK_AND_ASSIGN(auto module, hlo::ParseAndVerifyModule(kFeedReduceSend));
  InterpreterKernelFactory factory;
  ASSERT_OK_AND_ASSIGN(auto exe, Executable::Create(*module, factory));
  const std::string schedule = exe->ScheduleToString();
  EXPECT_THAT(schedule, AllOf(HasSubstr("token %t0"), HasSubstr("infeed %in"),
                              HasSubstr("outfeed %o"), HasSubstr("forward %d")));
  hlo::HostQueues q0(0), q1(1);
  q0.PushInfeed(hlo::Literal::Vector<float>({1, 2, 3}));
  q1.PushInfeed(hlo::Literal::Vector<float>({10, 20, 30}));
  MeshOptions options;
  options.num_devices = 2;
  DeviceMesh mesh(options);
  mesh.set_host_queues({&q0, &q1});
  ASSERT_OK_AND_ASSIGN(std::vector<Buffer> out, mesh.RunBuffers(*exe, {{}, {}}));
  for (hlo::HostQueues* q : {&q0, &q1}) {
    std::vector<hlo::Literal> sent = q->TakeOutfeed();
    ASSERT_EQ(sent.size(), 1u) << "device " << q->device();
    EXPECT_EQ(Floats(sent[0]), (std::vector<float>{11, 22, 33}));
  }
  ASSERT_OK_AND_ASSIGN(hlo::Literal root, out[1].ToLiteral());
  EXPECT_EQ(Floats(root.element(0)), (std::vector<float>{11, 22, 33}));
  EXPECT_EQ(root.element(1).shape().ToString(), "token[]");
}

TEST(RuntimeHostQueuesTest, AnEmptyQueueFailsTheRunAndWakesThePeers) {
  ASSERT_OK_AND_ASSIGN(auto module, hlo::ParseAndVerifyModule(kFeedReduceSend));
  InterpreterKernelFactory factory;
  ASSERT_OK_AND_ASSIGN(auto exe, Executable::Create(*module, factory));
  hlo::HostQueues q0(0), q1(1);
  q0.PushInfeed(hlo::Literal::Vector<float>({1, 2, 3}));  // device 1 gets nothing
  MeshOptions options;
  options.num_devices = 2;
  options.collective_timeout = absl::Seconds(30);
  DeviceMesh mesh(options);
  mesh.set_host_queues({&q0, &q1});
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::vector<Buffer>> out = mesh.RunBuffers(*exe, {{}, {}});
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(std::string(out.status().message()),
              HasSubstr("infeed queue of device 1 is empty: '%in' reads value #0"));
}

TEST(RuntimeHostQueuesTest, WithoutQueuesTheInfeedSaysSo) {
  ASSERT_OK_AND_ASSIGN(auto module, hlo::ParseAndVerifyModule(kFeedReduceSend));
  InterpreterKernelFactory factory;
  ASSERT_OK_AND_ASSIGN(auto exe, Executable::Create(*module, factory));
  DeviceContext device;
  EXPECT_THAT(std::string(exe->Run(device, {}).status().message()),
              HasSubstr("device 0 has no host queues"));
}

}  // namespace
}  // namespace sharc::runtime
