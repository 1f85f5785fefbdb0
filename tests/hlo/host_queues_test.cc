// The host queues and the ops that use them on the reference interpreter:
// infeed pops the host's values in order, outfeed pushes, an empty queue
// is an error naming the infeed and the device; tokens compute (in tuples,
// loop states); the memory-space custom calls are their operand.
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hlo/eval/host_queues.h"
#include "hlo/eval/interpreter.h"
#include "hlo/passes/lower_for_compute.h"
#include "hlo/text/parser.h"
#include "hlo/verifier/runnable_types.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::hlo {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<float> Floats(const Literal& l) {
  return std::vector<float>(l.data<float>().begin(), l.data<float>().end());
}

// Two infeeds chained by their tokens, a computation, and an outfeed of a
// tuple: the host's first value goes to %a, the second to %b.
constexpr char kFeedAndSend[] = R"(HloModule m
ENTRY %e {
  %t0 = token[] after-all()
  %a = (f32[3], token[]) infeed(%t0)
  %x = f32[3] get-tuple-element(%a), index=0
  %t1 = token[] get-tuple-element(%a), index=1
  %b = (f32[3], token[]) infeed(%t1)
  %y = f32[3] get-tuple-element(%b), index=0
  %t2 = token[] get-tuple-element(%b), index=1
  %s = f32[3] subtract(%x, %y)
  %pair = (f32[3], f32[3]) tuple(%s, %x)
  %o = token[] outfeed(%pair, %t2)
  %d = f32[3] add-dependency(%s, %o)
  ROOT %r = f32[3] multiply(%d, %d)
})";

TEST(HostQueuesTest, InfeedPopsInOrderAndOutfeedPushes) {
  ASSERT_OK_AND_ASSIGN(auto module, ParseAndVerifyModule(kFeedAndSend));
  ASSERT_OK(LowerForCompute(*module));
  ASSERT_OK(CheckRunnableTypes(*module));
  HostQueues queues(/*device=*/0);
  queues.PushInfeed(Literal::Vector<float>({5, 6, 7}));
  queues.PushInfeed(Literal::Vector<float>({1, 2, 4}));
  ASSERT_OK_AND_ASSIGN(Literal out, Evaluate(*module, {}, &queues));
  EXPECT_THAT(Floats(out), ElementsAre(16, 16, 9));
  std::vector<Literal> sent = queues.TakeOutfeed();
  ASSERT_EQ(sent.size(), 1u);
  ASSERT_TRUE(sent[0].is_tuple());
  EXPECT_THAT(Floats(sent[0].element(0)), ElementsAre(4, 4, 3));
  EXPECT_THAT(Floats(sent[0].element(1)), ElementsAre(5, 6, 7));
  EXPECT_TRUE(queues.TakeOutfeed().empty());
}

TEST(HostQueuesTest, EmptyQueueNamesTheInfeedAndTheDevice) {
  ASSERT_OK_AND_ASSIGN(auto module, ParseAndVerifyModule(kFeedAndSend));
  ASSERT_OK(LowerForCompute(*module));
  HostQueues queues(/*device=*/3);
  queues.PushInfeed(Literal::Vector<float>({5, 6, 7}));
  absl::Status status = Evaluate(*module, {}, &queues).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("infeed queue of device 3 is empty: '%b' reads value #1 (f32[3]) but "
                        "the host gave only 1"));
}

TEST(HostQueuesTest, ValueOfAnotherShapeIsRefused) {
  ASSERT_OK_AND_ASSIGN(auto module, ParseAndVerifyModule(kFeedAndSend));
  ASSERT_OK(LowerForCompute(*module));
  HostQueues queues;
  queues.PushInfeed(Literal::Vector<float>({5, 6}));
  EXPECT_THAT(std::string(Evaluate(*module, {}, &queues).status().message()),
              HasSubstr("infeed value #0 for device 0 is f32[2] but '%a' reads f32[3]"));
}

TEST(HostQueuesTest, WithoutQueuesAnInfeedSaysSo) {
  ASSERT_OK_AND_ASSIGN(auto module, ParseAndVerifyModule(kFeedAndSend));
  ASSERT_OK(LowerForCompute(*module));
  EXPECT_THAT(std::string(Evaluate(*module, {}).status().message()),
              HasSubstr("infeed needs a device's host queues"));
}

TEST(HostQueuesTest, SupplierMakesValuesAfterThePushedOnes) {
  ASSERT_OK_AND_ASSIGN(auto module, ParseAndVerifyModule(kFeedAndSend));
  ASSERT_OK(LowerForCompute(*module));
  HostQueues queues;
  queues.PushInfeed(Literal::Vector<float>({5, 6, 7}));
  std::vector<int64_t> asked;
  queues.SetInfeedSupplier(
      [&](int64_t index, const Shape& shape) -> absl::StatusOr<std::optional<Literal>> {
        asked.push_back(index);
        EXPECT_EQ(shape.ToString(), "f32[3]");
        return Literal::Vector<float>({1, 1, 1});
      });
  ASSERT_OK_AND_ASSIGN(Literal out, Evaluate(*module, {}, &queues));
  EXPECT_THAT(Floats(out), ElementsAre(16, 25, 36));
  EXPECT_THAT(asked, ElementsAre(1));
  EXPECT_EQ(queues.infeed_popped(), 2);
}

// Tokens are values: they ride in a loop's state and come out of it.
TEST(HostQueuesTest, TokensFlowThroughAWhileLoop) {
  ASSERT_OK_AND_ASSIGN(auto module, ParseAndVerifyModule(R"(HloModule m
%body (s: (s32[], token[], f32[2])) -> (s32[], token[], f32[2]) {
  %s = (s32[], token[], f32[2]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %t = token[] get-tuple-element(%s), index=1
  %v = f32[2] get-tuple-element(%s), index=2
  %in = (f32[2], token[]) infeed(%t)
  %x = f32[2] get-tuple-element(%in), index=0
  %t2 = token[] get-tuple-element(%in), index=1
  %one = s32[] constant(1)
  %j = s32[] add(%i, %one)
  %w = f32[2] add(%v, %x)
  ROOT %n = (s32[], token[], f32[2]) tuple(%j, %t2, %w)
}
%cond (s: (s32[], token[], f32[2])) -> pred[] {
  %s = (s32[], token[], f32[2]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %three = s32[] constant(3)
  ROOT %lt = pred[] compare(%i, %three), direction=LT
}
ENTRY %e {
  %zero = s32[] constant(0)
  %t = token[] after-all()
  %z = f32[2] constant({0, 0})
  %init = (s32[], token[], f32[2]) tuple(%zero, %t, %z)
  %loop = (s32[], token[], f32[2]) while(%init), condition=%cond, body=%body
  %sum = f32[2] get-tuple-element(%loop), index=2
  %done = token[] get-tuple-element(%loop), index=1
  ROOT %r = (f32[2], token[]) tuple(%sum, %done)
})"));
  ASSERT_OK(LowerForCompute(*module));
  ASSERT_OK(CheckRunnableTypes(*module));
  HostQueues queues;
  for (float v : {1.0f, 10.0f, 100.0f}) queues.PushInfeed(Literal::Vector<float>({v, -v}));
  ASSERT_OK_AND_ASSIGN(Literal out, Evaluate(*module, {}, &queues));
  ASSERT_TRUE(out.is_tuple());
  EXPECT_THAT(Floats(out.element(0)), ElementsAre(111, -111));
  EXPECT_EQ(out.element(1).shape().ToString(), "token[]");
}

TEST(HostQueuesTest, MemorySpaceAnnotationsAreTheirOperand) {
  ASSERT_OK_AND_ASSIGN(auto module, ParseAndVerifyModule(R"(HloModule m
ENTRY %e {
  %p = f32[3] parameter(0)
  %h = f32[3] custom-call(%p), custom_call_target="MoveToHost"
  %n = f32[3] negate(%h)
  %d = f32[3] custom-call(%n), custom_call_target="MoveToDevice"
  %pin = f32[3] custom-call(%d), custom_call_target="PinToDevice"
  ROOT %a = f32[3] custom-call(%pin), custom_call_target="annotate_device_placement"
})"));
  ASSERT_OK(CheckRunnableTypes(*module));
  ASSERT_OK_AND_ASSIGN(Literal out, Evaluate(*module, {Literal::Vector<float>({1, -2, 3})}));
  EXPECT_THAT(Floats(out), ElementsAre(-1, 2, -3));
}

}  // namespace
}  // namespace sharc::hlo
