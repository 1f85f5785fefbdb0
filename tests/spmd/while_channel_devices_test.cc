// A loop whose body has a channel instruction on one device runs on that
// device: propagation refuses other devices in the body or on the while.
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hlo/text/parser.h"
#include "spmd/propagation.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::spmd {
namespace {

using ::sharc::testing::IsOk;
using ::sharc::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;

// A loop that sends its counter each step: `step` annotates the add, `send`
// the send, `loop` the while, `host` is the send's is_host_transfer.
std::string Loop(const std::string& step, const std::string& send, const std::string& loop,
                 bool host = false) {
  return R"(HloModule m, num_partitions=2
%cond {
  %s = (s32[]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %n = s32[] constant(4)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}
%body {
  %s = (s32[]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %one = s32[] constant(1)
  %next = s32[] add(%i, %one))" +
         step + R"(
  %tok = token[] after-all()
  %send = (s32[], u32[], token[]) send(%i, %tok), channel_id=7, is_host_transfer=)" +
         (host ? "true" : "false") + send + R"(
  %send-done = token[] send-done(%send), channel_id=7, is_host_transfer=)" +
         (host ? "true" : "false") + R"(
  ROOT %t = (s32[]) tuple(%next)
}
ENTRY %main {
  %zero = s32[] constant(0)
  %init = (s32[]) tuple(%zero)
  %w = (s32[]) while(%init), condition=%cond, body=%body)" +
         loop + R"(
  ROOT %r = s32[] get-tuple-element(%w), index=0
}
)";
}

absl::Status Propagate(const std::string& text) {
  auto module = hlo::ParseAndVerifyModule(text);
  if (!module.ok()) return module.status();
  return PropagateShardings(**module).status();
}

const char kOnDevice0[] = ", sharding={maximal device=0}";
const char kSendOnDevice1[] = ", sharding={{maximal device=1}, {maximal device=1}, {maximal device=1}}";
const char kSendOnDevice0[] = ", sharding={{maximal device=0}, {maximal device=0}, {maximal device=0}}";

TEST(WhileChannelDevicesTest, BodyInstructionOnAnotherDeviceThanTheChannel) {
  EXPECT_THAT(Propagate(Loop(kOnDevice0, kSendOnDevice1, "")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("'next' is on device 0, which conflicts with device 1 of "
                                       "channel instruction 'send' in the body of while 'w'"),
                             HasSubstr("<input>:12:3"))));
}

TEST(WhileChannelDevicesTest, WhileOnAnotherDeviceThanItsBodysChannel) {
  EXPECT_THAT(Propagate(Loop("", kSendOnDevice1, ", sharding={{maximal device=0}}")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("'w' is on device 0, which conflicts with device 1")));
}

TEST(WhileChannelDevicesTest, OneDeviceThroughoutOrNoChannelDeviceIsFine) {
  EXPECT_THAT(Propagate(Loop(kOnDevice0, kSendOnDevice0, ", sharding={{maximal device=0}}")),
              IsOk());
  EXPECT_THAT(Propagate(Loop(kOnDevice0, "", "")), IsOk());
  // A host transfer is not a channel between devices.
  EXPECT_THAT(Propagate(Loop(kOnDevice0, kSendOnDevice1, "", /*host=*/true)), IsOk());
}

}  // namespace
}  // namespace sharc::spmd
