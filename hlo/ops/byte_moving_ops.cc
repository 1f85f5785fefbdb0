#include "hlo/ops/byte_moving_ops.h"

namespace sharc::hlo {

bool MovesValuesAsBytes(Opcode op) {
  switch (op) {
    case Opcode::kParameter:
    case Opcode::kConstant:
    case Opcode::kTuple:
    case Opcode::kGetTupleElement:
    case Opcode::kCopy:
    case Opcode::kReshape:
    case Opcode::kTranspose:
    case Opcode::kBroadcast:
    case Opcode::kSlice:
    case Opcode::kConcatenate:
    case Opcode::kReverse:
    case Opcode::kPad:
    case Opcode::kDynamicSlice:
    case Opcode::kDynamicUpdateSlice:
    case Opcode::kGather:
    case Opcode::kBitcast:
    case Opcode::kCall:
    case Opcode::kWhile:
    case Opcode::kConditional:
    case Opcode::kFusion:
    case Opcode::kOptimizationBarrier:
    case Opcode::kDomain:
    case Opcode::kAddDependency:
    case Opcode::kAfterAll:
    case Opcode::kInfeed:
    case Opcode::kOutfeed:
    case Opcode::kSend:
    case Opcode::kSendDone:
    case Opcode::kRecv:
    case Opcode::kRecvDone:
    case Opcode::kAsyncStart:
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
    case Opcode::kCopyStart:
    case Opcode::kCopyDone:
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart:
    case Opcode::kAllGatherDone:
    case Opcode::kAllToAll:
    case Opcode::kCollectivePermute:
    case Opcode::kCollectivePermuteStart:
    case Opcode::kCollectivePermuteDone:
    case Opcode::kCollectiveBroadcast:
    case Opcode::kGetDimensionSize:
    case Opcode::kSetDimensionSize:
    case Opcode::kPartitionId:
    case Opcode::kReplicaId:
    case Opcode::kShardMap:
    case Opcode::kAxisIndex:
    case Opcode::kNamedAllGather:
    case Opcode::kNamedAllGatherInvariant:
    case Opcode::kNamedAllToAll:
    case Opcode::kPBroadcast:
    case Opcode::kPPermute:
    case Opcode::kPScatter:
    case Opcode::kMapReduceBroadcast:
    case Opcode::kMapReduceMap:
      return true;
    default:
      return false;
  }
}

}  // namespace sharc::hlo
