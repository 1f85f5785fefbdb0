// Helpers shared by the propagation golden tests: run propagation on a
// module's text and compare shardings by meaning (device arrays, sorted
// replication groups), never by spelling.
#pragma once

#include <memory>
#include <source_location>
#include <string_view>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hlo/text/parser.h"
#include "spmd/propagation.h"

namespace sharc::spmd::testing_util {

inline const hlo::Instruction* FindInstruction(const hlo::Module& module, std::string_view name) {
  for (const hlo::Computation* comp : module.computations()) {
    if (const hlo::Instruction* inst = comp->FindInstruction(name)) return inst;
  }
  return nullptr;
}

inline void ExpectSharding(const hlo::Module& module, std::string_view name,
                           std::string_view expected,
                           std::source_location loc = std::source_location::current()) {
  ::testing::ScopedTrace trace(loc.file_name(), static_cast<int>(loc.line()), "ExpectSharding");
  absl::StatusOr<hlo::Sharding> want = hlo::ParseSharding(expected);
  ASSERT_TRUE(want.ok()) << want.status();
  const hlo::Instruction* inst = FindInstruction(module, name);
  ASSERT_NE(inst, nullptr) << "no instruction named " << name;
  ASSERT_TRUE(inst->has_sharding()) << name << " has no sharding\n" << module.ToString();
  EXPECT_TRUE(*inst->sharding() == *want)
      << name << ": got " << inst->sharding()->ToString() << ", expected " << want->ToString()
      << "\n"
      << module.ToString();
}

inline void ExpectNoSharding(const hlo::Module& module, std::string_view name,
                             std::source_location loc = std::source_location::current()) {
  ::testing::ScopedTrace trace(loc.file_name(), static_cast<int>(loc.line()), "ExpectNoSharding");
  const hlo::Instruction* inst = FindInstruction(module, name);
  ASSERT_NE(inst, nullptr) << "no instruction named " << name;
  EXPECT_FALSE(inst->has_sharding())
      << name << " got " << inst->sharding()->ToString() << "\n"
      << module.ToString();
}

// Fixture: Run(text) parses, verifies and propagates; module() and result_
// hold the outcome.
class PropagationTest : public ::testing::Test {
 protected:
  ::testing::AssertionResult Run(std::string_view text) {
    absl::StatusOr<std::unique_ptr<hlo::Module>> parsed = hlo::ParseAndVerifyModule(text);
    if (!parsed.ok()) return ::testing::AssertionFailure() << parsed.status();
    module_ = *std::move(parsed);
    absl::StatusOr<PropagationResult> result = PropagateShardings(*module_);
    if (!result.ok()) return ::testing::AssertionFailure() << result.status();
    result_ = *std::move(result);
    return ::testing::AssertionSuccess();
  }
  const hlo::Module& module() const { return *module_; }

  std::unique_ptr<hlo::Module> module_;
  PropagationResult result_;
};

}  // namespace sharc::spmd::testing_util
