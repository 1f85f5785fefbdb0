// One call for an op's partitioner test: parse, propagate shardings (unless
// asked not to: shardings as written), partition, verify the per-device
// module and check it against the global one on random inputs. Returns the
// per-device module's text for the test's own expectations ("" on failure,
// which the EXPECTs have reported).
#pragma once

#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "hlo/text/parser.h"
#include "hlo/verifier/verifier.h"
#include "spmd/partition/partitioner.h"
#include "spmd/propagation.h"
#include "tests/partition/partition_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::spmd::testing_util {

enum class Propagation { kPropagate, kAsWritten };

inline std::string PartitionAndCheck(const std::string& text,
                                     Propagation propagation = Propagation::kPropagate,
                                     uint32_t seed = 5) {
  auto global = hlo::ParseAndVerifyModule(text);
  EXPECT_TRUE(global.ok()) << global.status();
  if (!global.ok()) return "";
  if (propagation == Propagation::kPropagate) {
    EXPECT_OK(PropagateShardings(**global).status());
  }
  auto local = PartitionModule(**global);
  EXPECT_TRUE(local.ok()) << local.status();
  if (!local.ok()) return "";
  EXPECT_OK(hlo::VerifyModule(**local));
  EXPECT_OK(ExpectPartitionedMatchesGlobal(**global, **local, seed));
  return (*local)->ToString();
}

// How many instructions of `opcode` (e.g. "all-to-all") a module's text holds.
inline int CountOpcode(const std::string& text, const std::string& opcode) {
  int n = 0;
  const std::string needle = " " + opcode + "(";
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

}  // namespace sharc::spmd::testing_util
