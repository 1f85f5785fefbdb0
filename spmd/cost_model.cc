#include "spmd/cost_model.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "hlo/ops/convolution_dims.h"

namespace sharc::spmd {

using hlo::Instruction;
using hlo::Opcode;

namespace {

using CostFn = std::function<OpCost(const Instruction&)>;

double Elements(const hlo::Shape& s) {
  if (s.is_tuple()) {
    double n = 0;
    for (const hlo::Shape& e : s.tuple_shapes()) n += Elements(e);
    return n;
  }
  return static_cast<double>(s.num_elements());
}

double IoBytes(const Instruction& inst) {
  double b = static_cast<double>(inst.shape().byte_size());
  for (const Instruction* op : inst.operands()) b += static_cast<double>(op->shape().byte_size());
  return b;
}

OpCost Free(const Instruction&) { return {}; }
OpCost MovesData(const Instruction& inst) { return {0, 0, IoBytes(inst)}; }
OpCost PerElement(const Instruction& inst) { return {Elements(inst.shape()), 0, IoBytes(inst)}; }
OpCost Transcendental(const Instruction& inst) {
  return {Elements(inst.shape()), Elements(inst.shape()), IoBytes(inst)};
}

// 2 * (product of all dims of the result) * (product of contracting dims).
OpCost DotCost(const Instruction& inst) {
  double k = 1;
  for (int64_t d : inst.attr_ints("lhs_contracting_dims")) k *= inst.operand(0)->shape().dim(d);
  return {2.0 * Elements(inst.shape()) * k, 0, IoBytes(inst)};
}

// n^3 / 3 multiply-adds per n x n matrix, as LAPACK counts potrf.
OpCost CholeskyCost(const Instruction& inst) {
  const double n = static_cast<double>(inst.shape().dim(inst.shape().rank() - 1));
  if (n == 0) return {};
  return {Elements(inst.shape()) / (n * n) * (n * n * n / 3.0), Elements(inst.shape()) / n,
          IoBytes(inst)};
}

// m^2 multiply-adds per right-hand side of m unknowns: m * (result elements).
OpCost TriangularSolveCost(const Instruction& inst) {
  const hlo::Shape& a = inst.operand(0)->shape();
  return {static_cast<double>(a.dim(a.rank() - 1)) * Elements(inst.shape()), 0, IoBytes(inst)};
}

// A fast transform's 5 n log2 n per signal of n = prod(fft_length) points,
// as FFTW counts it (the reference evaluator sums directly; this is the cost
// a real backend pays).
OpCost FftCost(const Instruction& inst) {
  double n = 1;
  for (int64_t length : inst.attr_ints("fft_length")) n *= static_cast<double>(length);
  const double points = std::max(Elements(inst.operand(0)->shape()), Elements(inst.shape()));
  return {n > 1 ? 5 * points * std::log2(n) : 0, 0, IoBytes(inst)};
}

// 2 * (result elements) * (kernel window elements) * (input features per
// group): every output element is a multiply-add over its window and its
// group's input features; padding and dilation holes are counted as work,
// as XLA's cost analysis does.
OpCost ConvolutionCost(const Instruction& inst) {
  absl::StatusOr<hlo::ConvDims> cd = hlo::GetConvDims(inst);
  if (!cd.ok()) return {0, 0, IoBytes(inst)};
  const hlo::Shape& kernel = inst.operand(1)->shape();
  double per_output = static_cast<double>(kernel.dim(cd->rhs_input_feature));
  for (int64_t d : cd->rhs_spatial) per_output *= static_cast<double>(kernel.dim(d));
  return {2.0 * Elements(inst.shape()) * per_output, 0, IoBytes(inst)};
}

// One combine per input element (per input of a variadic reduce).
OpCost ReduceCost(const Instruction& inst) {
  double in = 0;
  for (int64_t i = 0; i < inst.operand_count() / 2; ++i) in += Elements(inst.operand(i)->shape());
  return {in, 0, IoBytes(inst)};
}

// mapreduce.sum/mean: one add per element of the placed operand.
OpCost GroupReductionCost(const Instruction& inst) {
  return {Elements(inst.operand(0)->shape()), 0, IoBytes(inst)};
}

OpCost ReduceWindowCost(const Instruction& inst) {
  double window = 1;
  for (const auto& w : inst.attr_int_lists("window"))
    if (!w.empty()) window *= static_cast<double>(w[0]);
  return {Elements(inst.shape()) * window, 0, IoBytes(inst)};
}

// sort: about n log2 n comparisons per row of n (a comparison counted as one
// flop), over every row.
OpCost SortCost(const Instruction& inst) {
  const hlo::Shape& shape = inst.operand(0)->shape();
  const hlo::IntList& dims = inst.attr_ints("dimensions");
  double n = dims.size() == 1 && dims[0] >= 0 && dims[0] < shape.rank()
                 ? static_cast<double>(shape.dim(dims[0]))
                 : 1;
  double per_element = n > 1 ? std::ceil(std::log2(n)) : 0;
  return {Elements(shape) * per_element, 0, IoBytes(inst)};
}

std::vector<CostFn> BuildTable() {
  std::vector<CostFn> t(static_cast<size_t>(hlo::kNumOpcodes));
  auto set = [&](Opcode op, CostFn fn) { t[static_cast<size_t>(op)] = std::move(fn); };
  for (Opcode op : {Opcode::kConstant, Opcode::kParameter, Opcode::kPartitionId,
                    Opcode::kReplicaId, Opcode::kTuple, Opcode::kGetTupleElement, Opcode::kCall,
                    Opcode::kWhile, Opcode::kConditional, Opcode::kMapReduceMap}) {
    set(op, Free);
  }
  for (Opcode op : {Opcode::kIota, Opcode::kConvert, Opcode::kCopy, Opcode::kBroadcast,
                    Opcode::kConcatenate, Opcode::kDynamicSlice, Opcode::kDynamicUpdateSlice,
                    Opcode::kGather, Opcode::kPad, Opcode::kReshape, Opcode::kReverse,
                    Opcode::kSlice, Opcode::kTranspose, Opcode::kCustomCall, Opcode::kAllGather,
                    Opcode::kAllToAll, Opcode::kCollectivePermute, Opcode::kMapReduceBroadcast}) {
    set(op, MovesData);
  }
  for (Opcode op : {Opcode::kAbs, Opcode::kClz, Opcode::kPopcnt, Opcode::kReducePrecision,
                    Opcode::kCeil, Opcode::kFloor, Opcode::kIsFinite,
                    Opcode::kNegate, Opcode::kNot, Opcode::kRoundNearestAfz,
                    Opcode::kRoundNearestEven, Opcode::kSign, Opcode::kAdd, Opcode::kAnd,
                    Opcode::kClamp, Opcode::kCompare, Opcode::kDivide, Opcode::kMaximum,
                    Opcode::kMinimum, Opcode::kMultiply, Opcode::kOr, Opcode::kRemainder,
                    Opcode::kSelect, Opcode::kShiftLeft, Opcode::kShiftRightArithmetic,
                    Opcode::kShiftRightLogical, Opcode::kSubtract, Opcode::kXor,
                    Opcode::kScatter, Opcode::kAllReduce, Opcode::kReduceScatter}) {
    set(op, PerElement);
  }
  for (Opcode op : {Opcode::kAcos, Opcode::kAcosh, Opcode::kAsin, Opcode::kAsinh, Opcode::kAtanh,
                    Opcode::kCosh, Opcode::kErf, Opcode::kSinh, Opcode::kCbrt, Opcode::kCos, Opcode::kExp, Opcode::kExpm1, Opcode::kLog,
                    Opcode::kLog1p, Opcode::kLogistic, Opcode::kRsqrt, Opcode::kSin,
                    Opcode::kSqrt, Opcode::kTan, Opcode::kTanh, Opcode::kAtan2, Opcode::kPower}) {
    set(op, Transcendental);
  }
  set(Opcode::kDot, DotCost);
  // An upper bound: as if every group multiplied every row.
  set(Opcode::kRaggedDot, DotCost);
  for (Opcode op : {Opcode::kReal, Opcode::kImag, Opcode::kComplex, Opcode::kStochasticConvert}) {
    set(op, PerElement);
  }
  set(Opcode::kConvolution, ConvolutionCost);
  set(Opcode::kReduce, ReduceCost);
  set(Opcode::kSort, SortCost);
  // fusion, opt-barrier and add-dependency are rewritten before any cost is
  // counted (lower_for_compute.h); tokens are free, transfers move data.
  for (Opcode op : {Opcode::kFusion, Opcode::kOptimizationBarrier, Opcode::kAddDependency,
                    Opcode::kAfterAll}) {
    set(op, Free);
  }
  set(Opcode::kBitcastConvert, MovesData);
  set(Opcode::kBitcast, MovesData);
  // Async pairs become their synchronous op before costs are counted
  // (lower_for_compute.h).
  for (Opcode op : {Opcode::kAllGatherDone, Opcode::kAllGatherStart, Opcode::kAllReduceDone, Opcode::kAllReduceStart, Opcode::kAsyncDone, Opcode::kAsyncStart, Opcode::kAsyncUpdate, Opcode::kCollectivePermuteDone, Opcode::kCollectivePermuteStart, Opcode::kCopyDone, Opcode::kCopyStart}) {
    set(op, Free);
  }
  for (Opcode op : {Opcode::kBatchNormGrad, Opcode::kBatchNormInference,
                    Opcode::kBatchNormTraining, Opcode::kSelectAndScatter, Opcode::kMap,
                    Opcode::kTopK}) {
    set(op, PerElement);
  }
  for (Opcode op : {Opcode::kDomain, Opcode::kGetDimensionSize}) set(op, Free);
  for (Opcode op : {Opcode::kSetDimensionSize, Opcode::kCollectiveBroadcast,
                    Opcode::kRaggedAllToAll}) {
    set(op, MovesData);
  }
  set(Opcode::kRng, PerElement);
  set(Opcode::kRngBitGenerator, PerElement);
  set(Opcode::kRngGetAndUpdateState, Free);
  set(Opcode::kCholesky, CholeskyCost);
  set(Opcode::kTriangularSolve, TriangularSolveCost);
  set(Opcode::kFft, FftCost);
  for (Opcode op : {Opcode::kSend, Opcode::kSendDone, Opcode::kRecv, Opcode::kRecvDone,
                    Opcode::kInfeed, Opcode::kOutfeed}) {
    set(op, MovesData);
  }
  set(Opcode::kReduceWindow, ReduceWindowCost);
  set(Opcode::kMapReduceSum, GroupReductionCost);
  set(Opcode::kMapReduceMean, GroupReductionCost);
  // shard_map: the body's ops are counted where they are (Free, like call);
  // named collectives cost what the XLA collective they lower to costs, and
  // the casts pbroadcast and axis_index are free.
  for (Opcode op : {Opcode::kShardMap, Opcode::kPBroadcast, Opcode::kAxisIndex}) set(op, Free);
  for (Opcode op : {Opcode::kPSum, Opcode::kPMax, Opcode::kPMin, Opcode::kPSumScatter}) {
    set(op, PerElement);
  }
  for (Opcode op : {Opcode::kNamedAllGather, Opcode::kNamedAllGatherInvariant,
                    Opcode::kNamedAllToAll, Opcode::kPPermute, Opcode::kPScatter}) {
    set(op, MovesData);
  }
  return t;
}

const std::vector<CostFn>& Table() {
  static const auto* table = new std::vector<CostFn>(BuildTable());
  return *table;
}

}  // namespace

bool HasCostFunction(Opcode opcode) { return static_cast<bool>(Table()[static_cast<size_t>(opcode)]); }

OpCost CostOf(const Instruction& inst) {
  const CostFn& fn = Table()[static_cast<size_t>(inst.opcode())];
  return fn ? fn(inst) : OpCost{};
}

}  // namespace sharc::spmd
