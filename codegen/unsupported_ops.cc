// Ops that are not Halide kernels, each with the reason a user sees when a
// module asks the Halide backend for one. Most are not computation at all
// (the runtime runs them).
#include "codegen/lowering.h"

namespace sharc::codegen {

void RegisterUnsupportedOps(LoweringTable& table) {
  using hlo::Opcode;
  constexpr const char* kRuntime = " is run by the runtime, not by a kernel";
  table.AddUnsupported(Opcode::kParameter, std::string("parameter") + kRuntime);
  table.AddUnsupported(Opcode::kPartitionId,
                       "partition-id differs per device while kernels are shared by all devices; "
                       "the runtime answers it");
  table.AddUnsupported(Opcode::kReplicaId,
                       "replica-id differs per device while kernels are shared by all devices; "
                       "the runtime answers it");
  table.AddUnsupported(Opcode::kTuple, std::string("tuple") + kRuntime + " (zero-copy plumbing)");
  table.AddUnsupported(Opcode::kGetTupleElement,
                       std::string("get-tuple-element") + kRuntime + " (zero-copy plumbing)");
  table.AddUnsupported(Opcode::kCall, std::string("call") + kRuntime + " (control flow)");
  table.AddUnsupported(Opcode::kWhile, std::string("while") + kRuntime + " (control flow)");
  table.AddUnsupported(Opcode::kConditional,
                       std::string("conditional") + kRuntime + " (control flow)");
  // custom-call: the identity targets lower (custom_call_lowering.cc).
  for (Opcode op : {Opcode::kAllGather, Opcode::kAllReduce, Opcode::kAllToAll,
                    Opcode::kCollectivePermute, Opcode::kReduceScatter,
                    Opcode::kCollectiveBroadcast, Opcode::kRaggedAllToAll}) {
    table.AddUnsupported(op, "collectives are run by the runtime's communicator, not by a kernel");
  }
  for (Opcode op : {Opcode::kMapReduceBroadcast, Opcode::kMapReduceMap, Opcode::kMapReduceMean,
                    Opcode::kMapReduceSum}) {
    table.AddUnsupported(op, "MapReduce blocks are lowered to ordinary ops (spmd/) before codegen");
  }
  table.AddUnsupported(Opcode::kSort,
                       "sort has no Halide lowering: the default backend runs it on the "
                       "interpreter's kernel, which sorts each row with std::stable_sort on a "
                       "permutation when the comparator is a compare LT/GT of one operand and "
                       "calls the comparator per comparison otherwise");
  // Tokens and the host queues are steps of the runtime's schedule, never kernels.
  for (Opcode op : {Opcode::kAfterAll, Opcode::kAddDependency, Opcode::kInfeed, Opcode::kOutfeed}) {
    table.AddUnsupported(op, std::string(hlo::OpcodeName(op)) +
                                 " is run by the runtime's schedule (runtime/executable.h), not "
                                 "by a kernel");
  }
  for (Opcode op : {Opcode::kFusion, Opcode::kOptimizationBarrier, Opcode::kDomain}) {
    table.AddUnsupported(op, std::string(hlo::OpcodeName(op)) +
                                 " is rewritten before codegen (hlo/passes/lower_for_compute.h)");
  }
  table.AddUnsupported(Opcode::kBitcastConvert,
                       "bitcast-convert has no Halide lowering yet (the default backend runs it "
                       "on the interpreter's kernels)");
  table.AddUnsupported(Opcode::kRng,
                       "rng has no Halide lowering (the default backend draws on the "
                       "interpreter's kernels)");
  table.AddUnsupported(Opcode::kRngBitGenerator,
                       "rng-bit-generator has no Halide lowering (the default backend draws XLA's "
                       "Philox or ThreeFry bits on the interpreter's kernels)");
  table.AddUnsupported(Opcode::kRngGetAndUpdateState,
                       "rng-get-and-update-state cannot run in sharc: it reads a random state "
                       "XLA's backend keeps");
  for (Opcode op : {Opcode::kAllGatherDone, Opcode::kAllGatherStart, Opcode::kAllReduceDone, Opcode::kAllReduceStart, Opcode::kAsyncDone, Opcode::kAsyncStart, Opcode::kAsyncUpdate, Opcode::kCollectivePermuteDone, Opcode::kCollectivePermuteStart, Opcode::kCopyDone, Opcode::kCopyStart}) {
    table.AddUnsupported(op, std::string(hlo::OpcodeName(op)) +
                                 " is rewritten to its synchronous op before codegen "
                                 "(hlo/passes/lower_for_compute.h)");
  }
  table.AddUnsupported(Opcode::kBitcast,
                       "bitcast is a reshape by codegen (hlo/passes/lower_for_compute.h) unless it "
                       "changes the element type; that form runs on the interpreter's kernels");
  for (Opcode op : {Opcode::kBatchNormGrad, Opcode::kBatchNormInference,
                    Opcode::kBatchNormTraining}) {
    table.AddUnsupported(op, std::string(hlo::OpcodeName(op)) +
                                 " is expanded into primitive ops before codegen "
                                 "(hlo/passes/expand_batch_norm.h)");
  }
  for (Opcode op : {Opcode::kMap,
                    Opcode::kTopK, Opcode::kGetDimensionSize, Opcode::kRaggedDot,
                    Opcode::kStochasticConvert, Opcode::kReal, Opcode::kImag,
                    Opcode::kCholesky, Opcode::kTriangularSolve, Opcode::kFft}) {
    table.AddUnsupported(op, std::string(hlo::OpcodeName(op)) +
                                 " has no Halide lowering yet (the default backend runs it on "
                                 "the interpreter's kernels)");
  }
  table.AddUnsupported(Opcode::kSetDimensionSize,
                       "set-dimension-size cannot run: sharc keeps dynamic dims at their bound");
  table.AddUnsupported(Opcode::kComplex,
                       "complex has no Halide lowering (complex values run on the interpreter's "
                       "kernels on the default backend)");
  for (Opcode op : {Opcode::kSend, Opcode::kSendDone, Opcode::kRecv, Opcode::kRecvDone}) {
    table.AddUnsupported(op, std::string(hlo::OpcodeName(op)) +
                                 " transfers data to another program, which sharc cannot run");
  }
  for (Opcode op : {Opcode::kShardMap, Opcode::kAxisIndex, Opcode::kNamedAllGather,
                    Opcode::kNamedAllGatherInvariant, Opcode::kNamedAllToAll, Opcode::kPBroadcast,
                    Opcode::kPMax, Opcode::kPMin, Opcode::kPPermute, Opcode::kPScatter,
                    Opcode::kPSum, Opcode::kPSumScatter}) {
    table.AddUnsupported(op,
                         "shard_map and its named-axis ops are lowered to ordinary ops and "
                         "collectives (spmd/) before codegen");
  }
}

}  // namespace sharc::codegen
