// The kernels' target only names features the CPU has (codegen/host_target.h):
// Halide 14 calls a Zen 4 "avx512_sapphirerapids", and LLVM then emits
// AVX512-FP16 moves that the CPU cannot execute.
#include "codegen/host_target.h"

#include <string>

#include "gtest/gtest.h"

namespace sharc::codegen {
namespace {

// What Halide 14's get_host_target() says on a Zen 4.
constexpr const char* kZen4AsHalideNamesIt =
    "x86-64-linux-avx-avx2-avx512-avx512_cannonlake-avx512_sapphirerapids-avx512_skylake-f16c-"
    "fma-sse41";
constexpr const char* kCannonlake =
    "x86-64-linux-avx-avx2-avx512-avx512_cannonlake-avx512_skylake-f16c-fma-sse41";

TEST(HostTargetTest, Zen4StepsDownToCannonlake) {
  // Zen 4 has AVX-512 BF16 and VNNI (why Halide says sapphirerapids), but
  // neither AVX512-FP16 nor AVX-VNNI.
  EXPECT_EQ(WithoutMissingFeatures(kZen4AsHalideNamesIt, {}), kCannonlake);
}

TEST(HostTargetTest, OneMissingFeatureIsEnough) {
  EXPECT_EQ(WithoutMissingFeatures(kZen4AsHalideNamesIt, {.avx512_fp16 = true}), kCannonlake);
  EXPECT_EQ(WithoutMissingFeatures(kZen4AsHalideNamesIt, {.avx_vnni = true}), kCannonlake);
}

TEST(HostTargetTest, ASapphireRapidsKeepsItsTarget) {
  EXPECT_EQ(WithoutMissingFeatures(kZen4AsHalideNamesIt, {.avx512_fp16 = true, .avx_vnni = true}),
            kZen4AsHalideNamesIt);
}

TEST(HostTargetTest, OtherTargetsAreLeftAsTheyAre) {
  for (const char* target : {kCannonlake, "x86-64-linux-avx-avx2-f16c-fma-sse41",
                             "arm-64-linux-arm_dot_prod-arm_fp16"}) {
    EXPECT_EQ(WithoutMissingFeatures(target, {}), target);
  }
}

TEST(HostTargetTest, ThisHostsTargetNamesOnlyWhatItsCpuHas) {
  const X86Extensions cpu = DetectX86Extensions();
  const std::string host = HostTargetName();
  if (host.find("avx512_sapphirerapids") != std::string::npos) {
    EXPECT_TRUE(cpu.avx512_fp16 && cpu.avx_vnni) << host;
  }
}

}  // namespace
}  // namespace sharc::codegen
