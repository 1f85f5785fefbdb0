// Golden tests for the end of propagation at the entry's parameters and
// root (spmd/propagation_entry_rules.cc): the header's per-element
// allow_spmd_sharding_propagation_to_parameters / _to_output flags, and
// the fallback to replicated for a propagated tiling that does not divide
// a parameter or root element evenly. Expected values are XLA GSPMD's
// (ShardingPropagation::Run after its fix point).
#include <gtest/gtest.h>

#include "tests/spmd/propagation_test_util.h"

namespace sharc::spmd {
namespace {

using testing_util::ExpectNoSharding;
using testing_util::ExpectSharding;
using testing_util::PropagationTest;

TEST_F(PropagationTest, AParameterWhoseFlagIsFalseKeepsWhatItWasWrittenWith) {
  ASSERT_TRUE(Run(R"(
HloModule m, num_partitions=2, allow_spmd_sharding_propagation_to_parameters={false,true,false}
ENTRY %e {
  %a = f32[6] parameter(0), sharding={replicated}
  %b = f32[6] parameter(1), sharding={replicated}
  %c = f32[6] parameter(2)
  %ab = f32[6] multiply(%a, %b)
  ROOT %abc = f32[6] subtract(%ab, %c), sharding={devices=[2]0,1}
})"));
  ExpectSharding(module(), "a", "{replicated}");
  ExpectSharding(module(), "b", "{devices=[2]0,1}");
  // Written with none, and not allowed one: propagation's goes again.
  ExpectNoSharding(module(), "c");
}

TEST_F(PropagationTest, ARootElementWhoseFlagIsFalseKeepsItsSharding) {
  ASSERT_TRUE(Run(R"(
HloModule m, num_partitions=2, allow_spmd_sharding_propagation_to_output={false,true}
ENTRY %e {
  %p = f32[6] parameter(0), sharding={devices=[2]0,1}
  %q = f32[6] negate(%p)
  %r = f32[6] exponential(%p)
  ROOT %t = (f32[6], f32[6]) tuple(%q, %r), sharding={{replicated}, {replicated}}
})"));
  ExpectSharding(module(), "t", "{{replicated}, {devices=[2]0,1}}");
}

TEST_F(PropagationTest, AnUnevenPropagatedParameterFallsBackToReplicated) {
  ASSERT_TRUE(Run(R"(
HloModule m, num_partitions=4, allow_spmd_sharding_propagation_to_parameters={true,true}
ENTRY %e {
  %even = f32[8] parameter(0)
  %odd = f32[7] parameter(1)
  %zero = f32[] constant(0)
  %padded = f32[8] pad(%odd, %zero), padding=0_1
  ROOT %sum = f32[8] add(%even, %padded), sharding={devices=[4]0,1,2,3}
})"));
  ExpectSharding(module(), "even", "{devices=[4]0,1,2,3}");
  ExpectSharding(module(), "odd", "{replicated}");
}

}  // namespace
}  // namespace sharc::spmd
