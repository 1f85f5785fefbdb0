// Every opcode has an entry in every op table (docs/adding_an_op.md): a rule,
// or a declared reason that users see as the error message. One test walks
// all the tables so that adding an op to opcode.def fails here, listing every
// table the new op still lacks, until each has an entry.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "autodiff/jvp_rule.h"
#include "autodiff/transpose_rule.h"
#include "codegen/kernel_graph.h"
#include "hlo/batching/batching_rule.h"
#include "hlo/ir/opcode.h"
#include "hlo/ops/op_def.h"
#include "spmd/cost_model.h"
#include "spmd/sharding_rule.h"

namespace sharc {
namespace {

using hlo::Opcode;

// The tables an op must be in that `op` is missing from.
std::vector<std::string> MissingTables(Opcode op) {
  std::vector<std::string> missing;
  // hlo/ops: definition, shape inference and the reference evaluator.
  if (!hlo::HasOpDef(op)) {
    missing.push_back("op definition (hlo/ops/*_ops.cc)");
  } else {
    const hlo::OpDef& def = hlo::GetOpDef(op);
    if (!def.infer_shape) missing.push_back("shape inference (OpDef::infer_shape)");
    if (!def.evaluate) missing.push_back("reference evaluator (OpDef::evaluate)");
  }
  // spmd: the sharding rule (propagation and partitioning read it) and cost.
  if (!spmd::HasShardingRule(op)) missing.push_back("sharding rule (spmd/rules/)");
  if (!spmd::HasCostFunction(op)) missing.push_back("cost (spmd/cost_model.cc)");
  // autodiff: JVP and transpose, each a rule or a reason.
  const autodiff::JvpRule* jvp = autodiff::FindJvpRule(op);
  if (jvp == nullptr || !(jvp->tangent || jvp->primal_and_tangent || jvp->zero_derivative ||
                          !jvp->unsupported_reason.empty())) {
    missing.push_back("JVP (autodiff/jvp_rules/)");
  }
  const autodiff::TransposeRule* transpose = autodiff::FindTransposeRule(op);
  if (transpose == nullptr || !(transpose->transpose || !transpose->unsupported_reason.empty())) {
    missing.push_back("transpose (autodiff/transpose_rules/)");
  }
  // vmap: a batching rule or a reason, never both.
  const hlo::BatchingRule* batching = hlo::FindBatchingRule(op);
  if (batching == nullptr ||
      static_cast<bool>(batching->batch) == !batching->unsupported_reason.empty()) {
    missing.push_back("batching (hlo/batching/)");
  }
  // codegen: a Halide lowering or the reason there is none.
  if (!codegen::HasLoweringRule(op)) missing.push_back("Halide lowering (codegen/)");
  return missing;
}

TEST(OpTablesTest, EveryOpcodeIsInEveryTableOrDeclaresWhyNot) {
  std::string report;
  for (int i = 0; i < hlo::kNumOpcodes; ++i) {
    const auto op = static_cast<Opcode>(i);
    for (const std::string& table : MissingTables(op)) {
      report += "  " + std::string(hlo::OpcodeName(op)) + ": no " + table + "\n";
    }
  }
  EXPECT_TRUE(report.empty()) << "ops missing from tables (see docs/adding_an_op.md):\n"
                              << report;
}

// The reasons are user-facing error messages: they must say something.
TEST(OpTablesTest, DeclaredReasonsNameTheirOp) {
  for (int i = 0; i < hlo::kNumOpcodes; ++i) {
    const auto op = static_cast<Opcode>(i);
    const autodiff::JvpRule* jvp = autodiff::FindJvpRule(op);
    if (jvp != nullptr && !jvp->unsupported_reason.empty()) {
      EXPECT_GE(jvp->unsupported_reason.size(), 10u) << hlo::OpcodeName(op);
    }
    const hlo::BatchingRule* batching = hlo::FindBatchingRule(op);
    if (batching != nullptr && !batching->unsupported_reason.empty()) {
      EXPECT_GE(batching->unsupported_reason.size(), 10u) << hlo::OpcodeName(op);
    }
    if (codegen::HasLoweringRule(op) && !codegen::UnsupportedReason(op).empty()) {
      EXPECT_GE(codegen::UnsupportedReason(op).size(), 10u) << hlo::OpcodeName(op);
    }
  }
}

}  // namespace
}  // namespace sharc
