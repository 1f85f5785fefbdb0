// Ops that neither forward nor reverse mode ever differentiates, with the
// one reason both rule registries (jvp_rule.h, transpose_rule.h) give:
// fusion, opt-barrier and add-dependency are rewritten away before any
// transform (hlo/passes/lower_for_compute.h), and the transfers move data
// to another program or the host, which sharc cannot run.
#pragma once

#include "absl/strings/str_cat.h"
#include "hlo/ir/opcode.h"

namespace sharc::autodiff {

template <typename Registry>
void RegisterOpsOutsideAutodiff(Registry& r) {
  using hlo::Opcode;
  r.RegisterUnsupported(Opcode::kAddDependency,
                        "add-dependency is dropped before computing (hlo/passes/lower_for_compute.h) "
                        "unless it orders a value after a transfer, which cannot run");
  for (Opcode op : {Opcode::kFusion, Opcode::kOptimizationBarrier}) {
    r.RegisterUnsupported(op, absl::StrCat(hlo::OpcodeName(op),
                                           " is rewritten before autodiff "
                                           "(hlo/passes/lower_for_compute.h)"));
  }
  for (Opcode op : {Opcode::kDomain, Opcode::kBitcast, Opcode::kAllGatherDone, Opcode::kAllGatherStart, Opcode::kAllReduceDone, Opcode::kAllReduceStart, Opcode::kAsyncDone, Opcode::kAsyncStart, Opcode::kAsyncUpdate, Opcode::kCollectivePermuteDone, Opcode::kCollectivePermuteStart, Opcode::kCopyDone, Opcode::kCopyStart}) {
    r.RegisterUnsupported(op, absl::StrCat(hlo::OpcodeName(op),
                                           " is rewritten before autodiff "
                                           "(hlo/passes/lower_for_compute.h)"));
  }
  for (Opcode op : {Opcode::kBatchNormGrad, Opcode::kBatchNormInference,
                    Opcode::kBatchNormTraining}) {
    r.RegisterUnsupported(op, absl::StrCat(hlo::OpcodeName(op),
                                           " is expanded into primitive ops before autodiff "
                                           "(hlo/passes/expand_batch_norm.h)"));
  }
  r.RegisterUnsupported(Opcode::kMap,
                        "map whose function is not elementwise has no derivative rule yet "
                        "(elementwise ones become array ops on load, hlo/passes/inline_map.h)");
  for (Opcode op : {Opcode::kGetDimensionSize, Opcode::kSetDimensionSize, Opcode::kCollectiveBroadcast,
                    Opcode::kRaggedAllToAll, Opcode::kStochasticConvert}) {
    r.RegisterUnsupported(op, absl::StrCat(hlo::OpcodeName(op), " has no derivative rule yet"));
  }
  for (Opcode op : {Opcode::kSend, Opcode::kSendDone, Opcode::kRecv, Opcode::kRecvDone,
                    Opcode::kInfeed, Opcode::kOutfeed}) {
    r.RegisterUnsupported(op, absl::StrCat(hlo::OpcodeName(op),
                                           " transfers data to another program or the host, "
                                           "which sharc cannot run"));
  }
}

}  // namespace sharc::autodiff
