// Which core a CPUID names, and what each core's tuning chooses
// (codegen/cpu_tuning.h).
#include "codegen/cpu_tuning.h"

#include "gtest/gtest.h"

namespace sharc::codegen {
namespace {

TEST(CpuTuningTest, ClassifiesAmdFamily19hByModel) {
  // Milan (EPYC 7xx3) and Vermeer: Zen 3.
  EXPECT_EQ(ClassifyCore("AuthenticAMD", 0x19, 0x01), CoreKind::kAmdZen3);
  EXPECT_EQ(ClassifyCore("AuthenticAMD", 0x19, 0x21), CoreKind::kAmdZen3);
  // Genoa (EPYC 9xx4, this project's host in session 18), Raphael, Bergamo: Zen 4.
  EXPECT_EQ(ClassifyCore("AuthenticAMD", 0x19, 0x11), CoreKind::kAmdZen4);
  EXPECT_EQ(ClassifyCore("AuthenticAMD", 0x19, 0x61), CoreKind::kAmdZen4);
  EXPECT_EQ(ClassifyCore("AuthenticAMD", 0x19, 0xa0), CoreKind::kAmdZen4);
}

TEST(CpuTuningTest, OtherCoresAreOther) {
  EXPECT_EQ(ClassifyCore("GenuineIntel", 6, 0x6a), CoreKind::kOther);  // Ice Lake server
  EXPECT_EQ(ClassifyCore("AuthenticAMD", 0x1a, 0x02), CoreKind::kOther);  // Zen 5
  EXPECT_EQ(ClassifyCore("AuthenticAMD", 0x17, 0x31), CoreKind::kOther);  // Zen 2
}

TEST(CpuTuningTest, OnlyZen4ReadsLongSumsFrontToBack) {
  EXPECT_TRUE(TuningFor(CoreKind::kOther).sums_walk_pages);
  EXPECT_TRUE(TuningFor(CoreKind::kAmdZen3).sums_walk_pages);
  EXPECT_FALSE(TuningFor(CoreKind::kAmdZen4).sums_walk_pages);
}

TEST(CpuTuningTest, NamesParseBack) {
  for (CoreKind core : {CoreKind::kOther, CoreKind::kAmdZen3, CoreKind::kAmdZen4}) {
    CoreKind parsed = CoreKind::kOther;
    ASSERT_TRUE(ParseCoreKind(CoreKindName(core), &parsed)) << CoreKindName(core);
    EXPECT_EQ(parsed, core);
  }
  CoreKind untouched = CoreKind::kAmdZen3;
  EXPECT_FALSE(ParseCoreKind("zen9", &untouched));
  EXPECT_EQ(untouched, CoreKind::kAmdZen3);
}

TEST(CpuTuningTest, HostTuningIsItsCoresTuning) {
  const CpuTuning& host = HostCpuTuning();
  EXPECT_EQ(host.sums_walk_pages, TuningFor(host.core).sums_walk_pages);
}

}  // namespace
}  // namespace sharc::codegen
