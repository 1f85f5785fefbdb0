#include "runtime/executable.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hlo/base/status_macros.h"
#include "hlo/ir/computation.h"
#include "hlo/ops/collective_groups.h"
#include "hlo/ops/ragged_all_to_all.h"
#include "hlo/ops/op_def.h"

namespace sharc::runtime {

enum class ScheduleStepKind {
  kParameter,
  kConstant,
  kKernel,
  kCollective,
  kPartitionId,
  kReplicaId,
  kTuple,
  kGetTupleElement,
  kReshape,
  kWhile,
  kConditional,
  kCall,
  kToken,
  kForward,
  kInfeed,
  kOutfeed,
};

namespace {

const char* ScheduleStepKindName(ScheduleStepKind kind) {
  switch (kind) {
    case ScheduleStepKind::kParameter: return "parameter";
    case ScheduleStepKind::kConstant: return "constant";
    case ScheduleStepKind::kKernel: return "kernel";
    case ScheduleStepKind::kCollective: return "collective";
    case ScheduleStepKind::kPartitionId: return "partition-id";
    case ScheduleStepKind::kReplicaId: return "replica-id";
    case ScheduleStepKind::kTuple: return "tuple";
    case ScheduleStepKind::kGetTupleElement: return "get-tuple-element";
    case ScheduleStepKind::kReshape: return "reshape";
    case ScheduleStepKind::kWhile: return "while";
    case ScheduleStepKind::kConditional: return "conditional";
    case ScheduleStepKind::kCall: return "call";
    case ScheduleStepKind::kToken: return "token";
    case ScheduleStepKind::kForward: return "forward";
    case ScheduleStepKind::kInfeed: return "infeed";
    case ScheduleStepKind::kOutfeed: return "outfeed";
  }
  return "?";
}

absl::Status AtInstruction(const absl::Status& status, const hlo::Instruction& inst) {
  if (absl::StrContains(status.message(), " in `")) return status;
  return absl::Status(status.code(), absl::StrCat(status.message(), ", in ", inst.Describe()));
}

int64_t SteadyNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t LeafBytes(const Buffer& b) {
  if (!b.is_tuple()) return b.size_bytes();
  int64_t n = 0;
  for (const Buffer& e : b.elements()) n += LeafBytes(e);
  return n;
}

// Bytes that go away when this handle is dropped (memory nobody else holds).
int64_t ExclusiveBytes(const Buffer& b) {
  if (!b.is_tuple()) return b.valid() && b.unique() ? b.size_bytes() : 0;
  int64_t n = 0;
  for (const Buffer& e : b.elements()) n += ExclusiveBytes(e);
  return n;
}

}  // namespace

struct ExecutableStep {
  ScheduleStepKind kind = ScheduleStepKind::kKernel;
  const hlo::Instruction* inst = nullptr;
  std::vector<int> operands;  // slots
  int output = -1;            // slot
  std::vector<int> release;   // slots whose last use is this step
  int64_t index = 0;          // parameter number / tuple index
  std::unique_ptr<Kernel> kernel;
  Buffer constant;
  std::vector<const Executable::Program*> callees;
  // Collectives.
  ReductionKind reduction = ReductionKind::kSum;
  int64_t dim = -1;
};

struct Executable::Program {
  const hlo::Computation* computation = nullptr;
  std::vector<ExecutableStep> steps;
  int num_slots = 0;
  int root = -1;
  int num_parameters = 0;
};

bool RunsWithoutKernel(const hlo::Instruction& inst) {
  using hlo::Opcode;
  switch (inst.opcode()) {
    case Opcode::kParameter: case Opcode::kConstant: case Opcode::kPartitionId:
    case Opcode::kReplicaId: case Opcode::kTuple: case Opcode::kGetTupleElement:
    case Opcode::kWhile: case Opcode::kConditional: case Opcode::kCall:
    case Opcode::kAfterAll: case Opcode::kAddDependency: case Opcode::kInfeed:
    case Opcode::kOutfeed:
      return true;
    case Opcode::kReshape:
      return inst.shape().is_array() && inst.operand(0)->shape().is_array();
    default:
      return hlo::HasOpDef(inst.opcode()) && hlo::GetOpDef(inst.opcode()).traits.collective;
  }
}

struct Executable::RunState {
  const DeviceContext* device = nullptr;
  int64_t next_sequence = 0;
  int64_t live_bytes = 0;
  ExecutionStats stats;
};

namespace {

// Builds the Program of one computation and (recursively) of the
// computations its control flow calls.
class ProgramBuilder {
 public:
  ProgramBuilder(KernelFactory& factory,
                 std::vector<std::unique_ptr<Executable::Program>>& programs)
      : factory_(factory), programs_(programs) {}

  absl::StatusOr<const Executable::Program*> Build(const hlo::Computation& computation) {
    auto it = built_.find(&computation);
    if (it != built_.end()) {
      if (it->second == nullptr) {
        return absl::InvalidArgumentError(
            absl::StrCat("computation '", computation.name(), "' calls itself"));
      }
      return it->second;
    }
    built_[&computation] = nullptr;
    auto program = std::make_unique<Executable::Program>();
    program->computation = &computation;
    program->num_parameters = static_cast<int>(computation.num_parameters());
    std::vector<hlo::Instruction*> order = computation.instructions();
    absl::flat_hash_map<const hlo::Instruction*, int> slot;
    for (size_t i = 0; i < order.size(); ++i) slot[order[i]] = static_cast<int>(i);
    program->num_slots = static_cast<int>(order.size());
    if (computation.root() == nullptr || !slot.contains(computation.root())) {
      return absl::InvalidArgumentError(
          absl::StrCat("computation '", computation.name(), "' has no root"));
    }
    program->root = slot[computation.root()];

    // Last use of every value, for releasing it.
    std::vector<int> last_use(order.size(), -1);
    for (size_t i = 0; i < order.size(); ++i) {
      for (const hlo::Instruction* op : order[i]->operands()) {
        auto s = slot.find(op);
        if (s == slot.end()) {
          return absl::InvalidArgumentError(absl::StrCat(
              "operand ", op->name(), " is not in computation '", computation.name(), "', in ",
              order[i]->Describe()));
        }
        last_use[static_cast<size_t>(s->second)] = static_cast<int>(i);
      }
    }

    for (size_t i = 0; i < order.size(); ++i) {
      const hlo::Instruction& inst = *order[i];
      ExecutableStep step;
      step.inst = &inst;
      step.output = static_cast<int>(i);
      for (const hlo::Instruction* op : inst.operands()) step.operands.push_back(slot[op]);
      absl::Status st = Fill(inst, step);
      if (!st.ok()) return AtInstruction(st, inst);
      program->steps.push_back(std::move(step));
    }
    // Release each value after its last use; values nobody uses (other than
    // the root) right after they are made.
    for (size_t v = 0; v < order.size(); ++v) {
      if (static_cast<int>(v) == program->root) continue;
      int at = last_use[v] >= 0 ? last_use[v] : static_cast<int>(v);
      ExecutableStep& s = program->steps[static_cast<size_t>(at)];
      if (std::find(s.release.begin(), s.release.end(), static_cast<int>(v)) == s.release.end()) {
        s.release.push_back(static_cast<int>(v));
      }
    }
    const Executable::Program* result = program.get();
    programs_.push_back(std::move(program));
    built_[&computation] = result;
    return result;
  }

 private:
  absl::Status Fill(const hlo::Instruction& inst, ExecutableStep& step) {
    using hlo::Opcode;
    switch (inst.opcode()) {
      case Opcode::kParameter:
        step.kind = ScheduleStepKind::kParameter;
        step.index = inst.parameter_number();
        return absl::OkStatus();
      case Opcode::kConstant: {
        step.kind = ScheduleStepKind::kConstant;
        ASSIGN_OR_RETURN(step.constant, Buffer::FromLiteral(inst.literal()));
        return absl::OkStatus();
      }
      case Opcode::kPartitionId:
        step.kind = ScheduleStepKind::kPartitionId;
        return absl::OkStatus();
      case Opcode::kReplicaId:
        step.kind = ScheduleStepKind::kReplicaId;
        return absl::OkStatus();
      case Opcode::kTuple:
        step.kind = ScheduleStepKind::kTuple;
        return absl::OkStatus();
      // Ordering: a token is an empty value; add-dependency is its value.
      case Opcode::kAfterAll:
        step.kind = ScheduleStepKind::kToken;
        return absl::OkStatus();
      case Opcode::kAddDependency:
        step.kind = ScheduleStepKind::kForward;
        return absl::OkStatus();
      // The device's host queues (DeviceContext::host_queues).
      case Opcode::kInfeed:
        step.kind = ScheduleStepKind::kInfeed;
        return absl::OkStatus();
      case Opcode::kOutfeed:
        step.kind = ScheduleStepKind::kOutfeed;
        return absl::OkStatus();
      case Opcode::kReshape:
        // Row-major reshapes keep every element where it is: the result
        // shares the operand's memory, no kernel runs.
        if (!inst.shape().is_array() || !inst.operand(0)->shape().is_array()) break;
        step.kind = ScheduleStepKind::kReshape;
        return absl::OkStatus();
      case Opcode::kGetTupleElement:
        step.kind = ScheduleStepKind::kGetTupleElement;
        step.index = inst.attr_int("index", -1);
        if (inst.operand_count() != 1 || !inst.operand(0)->shape().is_tuple() || step.index < 0 ||
            step.index >= inst.operand(0)->shape().tuple_size()) {
          return absl::InvalidArgumentError("get-tuple-element index out of range");
        }
        return absl::OkStatus();
      case Opcode::kWhile: {
        step.kind = ScheduleStepKind::kWhile;
        const hlo::Computation* cond = inst.attr_computation("condition");
        const hlo::Computation* body = inst.attr_computation("body");
        if (cond == nullptr || body == nullptr || inst.operand_count() != 1) {
          return absl::InvalidArgumentError("while needs one operand, a condition and a body");
        }
        return AddCallees(step, {cond, body});
      }
      case Opcode::kConditional: {
        step.kind = ScheduleStepKind::kConditional;
        std::vector<const hlo::Computation*> branches;
        if (inst.has_attr("branch_computations")) {
          for (const hlo::Computation* c : inst.attr_computations("branch_computations")) {
            branches.push_back(c);
          }
        } else {
          branches = {inst.attr_computation("true_computation"),
                      inst.attr_computation("false_computation")};
        }
        if (branches.empty() ||
            static_cast<int64_t>(branches.size()) + 1 != inst.operand_count()) {
          return absl::InvalidArgumentError(
              "conditional needs one operand per branch after the selector");
        }
        return AddCallees(step, branches);
      }
      case Opcode::kCall: {
        // A fusion the factory runs as one kernel, else a plain call.
        ASSIGN_OR_RETURN(std::unique_ptr<Kernel> fused, factory_.MakeCallKernel(inst));
        if (fused != nullptr) {
          step.kind = ScheduleStepKind::kKernel;
          step.kernel = std::move(fused);
          return absl::OkStatus();
        }
        step.kind = ScheduleStepKind::kCall;
        return AddCallees(step, {inst.attr_computation("to_apply")});
      }
      default:
        break;
    }
    if (!hlo::HasOpDef(inst.opcode())) {
      return absl::UnimplementedError("op has no definition");
    }
    if (hlo::GetOpDef(inst.opcode()).traits.collective) return FillCollective(inst, step);
    step.kind = ScheduleStepKind::kKernel;
    ASSIGN_OR_RETURN(step.kernel, factory_.MakeKernel(inst));
    return absl::OkStatus();
  }

  absl::Status AddCallees(ExecutableStep& step, std::vector<const hlo::Computation*> callees) {
    for (const hlo::Computation* c : callees) {
      if (c == nullptr) return absl::InvalidArgumentError("missing called computation");
      ASSIGN_OR_RETURN(const Executable::Program* p, Build(*c));
      step.callees.push_back(p);
    }
    return absl::OkStatus();
  }

  absl::Status FillCollective(const hlo::Instruction& inst, ExecutableStep& step) {
    using hlo::Opcode;
    step.kind = ScheduleStepKind::kCollective;
    for (const hlo::Instruction* op : inst.operands()) {
      if (!op->shape().is_array()) {
        return absl::InvalidArgumentError("collective operands must be arrays");
      }
    }
    if (inst.opcode() == Opcode::kAllReduce || inst.opcode() == Opcode::kReduceScatter) {
      const hlo::Computation* reducer = inst.attr_computation("to_apply");
      if (reducer == nullptr) return absl::InvalidArgumentError("missing to_apply");
      ASSIGN_OR_RETURN(step.reduction, ReductionKindFromReducer(*reducer));
    }
    if (inst.opcode() == Opcode::kAllGather || inst.opcode() == Opcode::kReduceScatter ||
        (inst.opcode() == Opcode::kAllToAll && inst.has_attr("dimensions"))) {
      const hlo::IntList& dims = inst.attr_ints("dimensions");
      if (dims.size() != 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("expects exactly one dimension, got {", absl::StrJoin(dims, ","), "}"));
      }
      step.dim = dims[0];
      if (inst.opcode() == Opcode::kAllToAll && inst.operand_count() != 1) {
        return absl::InvalidArgumentError("array all-to-all takes one operand");
      }
    }
    if (inst.opcode() == Opcode::kCollectivePermute) {
      if (inst.operand_count() != 1) {
        return absl::UnimplementedError(absl::StrCat(
            "the runtime permutes one operand per collective-permute; this one has ",
            inst.operand_count(), " (--backend interpreter runs it), in ", inst.Describe()));
      }
    }
    return absl::OkStatus();
  }

  KernelFactory& factory_;
  std::vector<std::unique_ptr<Executable::Program>>& programs_;
  absl::flat_hash_map<const hlo::Computation*, const Executable::Program*> built_;
};

bool ReadPred(const Buffer& b) {
  return b.size_bytes() > 0 && *static_cast<const uint8_t*>(b.data()) != 0;
}

int64_t ReadIndex(const Buffer& b) {
  int64_t v = 0;
  hlo::DispatchPrimitiveType(b.type(), [&](auto t) {
    using T = decltype(t);
    if constexpr (std::is_integral_v<T>) v = static_cast<int64_t>(b.typed<T>()[0]);
  });
  return v;
}

}  // namespace

Executable::~Executable() = default;

absl::StatusOr<std::unique_ptr<Executable>> Executable::Create(const hlo::Module& module,
                                                               KernelFactory& factory) {
  if (module.entry() == nullptr) return absl::InvalidArgumentError("module has no entry");
  std::unique_ptr<Executable> exe(new Executable());
  exe->module_ = module.Clone();
  ProgramBuilder builder(factory, exe->programs_);
  ASSIGN_OR_RETURN(exe->entry_, builder.Build(*exe->module_->entry()));
  return exe;
}

int64_t Executable::num_parameters() const { return entry_->num_parameters; }

const hlo::Shape& Executable::parameter_shape(int64_t i) const {
  return module_->entry()->parameter(i)->shape();
}

const hlo::Shape& Executable::result_shape() const { return module_->entry()->root()->shape(); }

std::string Executable::ScheduleToString() const {
  std::string out;
  for (const auto& p : programs_) {
    absl::StrAppend(&out, p->computation->name(), p.get() == entry_ ? " (entry)" : "", ":\n");
    for (const ExecutableStep& s : p->steps) {
      absl::StrAppend(&out, "  ", ScheduleStepKindName(s.kind), " %", s.inst->name());
      if (!s.release.empty()) {
        std::vector<std::string> names;
        for (int r : s.release) names.push_back(p->steps[static_cast<size_t>(r)].inst->name());
        absl::StrAppend(&out, "  free(", absl::StrJoin(names, ","), ")");
      }
      absl::StrAppend(&out, "\n");
    }
  }
  return out;
}

absl::StatusOr<Buffer> Executable::Run(const DeviceContext& device,
                                       absl::Span<const Buffer> arguments,
                                       ExecutionStats* stats) const {
  if (static_cast<int64_t>(arguments.size()) != num_parameters()) {
    return absl::InvalidArgumentError(absl::StrCat("the entry computation takes ",
                                                   num_parameters(), " arguments, got ",
                                                   arguments.size()));
  }
  for (int64_t i = 0; i < num_parameters(); ++i) {
    if (arguments[static_cast<size_t>(i)].shape() != parameter_shape(i)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "argument ", i, " of device ", device.device_id, " has shape ",
          arguments[static_cast<size_t>(i)].shape().ToString(), ", expected ",
          parameter_shape(i).ToString()));
    }
  }
  if (device.num_devices > 1 && device.communicator == nullptr) {
    return absl::InvalidArgumentError("a device of a multi-device mesh needs a communicator");
  }
  RunState state;
  state.device = &device;
  absl::StatusOr<Buffer> result = Execute(*entry_, arguments, state);
  if (stats != nullptr) *stats = state.stats;
  return result;
}

// One run of one program: its value slots and the run state it shares with
// the programs it calls. Run() is the loop; each step kind and each
// collective is one entry of a table below.
class Executable::Frame {
 public:
  Frame(const Executable& exe, const Program& program, absl::Span<const Buffer> arguments,
        RunState& state)
      : exe_(exe),
        program_(program),
        arguments_(arguments),
        state_(state),
        device_(*state.device),
        slots_(static_cast<size_t>(program.num_slots)) {}

  absl::StatusOr<Buffer> Run() {
    for (const ExecutableStep& step : program_.steps) {
      // Kernels and collectives are what a profile times; the rest is plumbing.
      const bool timed = device_.profile && (step.kind == ScheduleStepKind::kKernel ||
                                             step.kind == ScheduleStepKind::kCollective);
      const int64_t start_ns = timed ? SteadyNanos() : 0;
      ASSIGN_OR_RETURN(slots_[static_cast<size_t>(step.output)], (this->*StepFor(step.kind))(step));
      if (timed) state_.stats.events.push_back({step.inst, start_ns, SteadyNanos()});
      for (int r : step.release) {
        Buffer& b = slots_[static_cast<size_t>(r)];
        state_.live_bytes -= ExclusiveBytes(b);
        b = Buffer();
      }
    }
    Buffer result = std::move(slots_[static_cast<size_t>(program_.root)]);
    if (!result.valid()) {
      return absl::InternalError(
          absl::StrCat("root of '", program_.computation->name(), "' not computed"));
    }
    return result;
  }

 private:
  using StepFn = absl::StatusOr<Buffer> (Frame::*)(const ExecutableStep&);

  // The step table: what each kind of step does.
  static StepFn StepFor(ScheduleStepKind kind) {
    switch (kind) {
      case ScheduleStepKind::kParameter: return &Frame::Parameter;
      case ScheduleStepKind::kConstant: return &Frame::Constant;
      case ScheduleStepKind::kKernel: return &Frame::Kernel;
      case ScheduleStepKind::kCollective: return &Frame::Collective;
      case ScheduleStepKind::kPartitionId: return &Frame::DeviceId;
      case ScheduleStepKind::kReplicaId: return &Frame::DeviceId;
      case ScheduleStepKind::kTuple: return &Frame::Tuple;
      case ScheduleStepKind::kGetTupleElement: return &Frame::GetTupleElement;
      case ScheduleStepKind::kReshape: return &Frame::Reshape;
      case ScheduleStepKind::kWhile: return &Frame::While;
      case ScheduleStepKind::kConditional: return &Frame::Conditional;
      case ScheduleStepKind::kCall: return &Frame::Call;
      case ScheduleStepKind::kToken: return &Frame::Token;
      case ScheduleStepKind::kForward: return &Frame::Forward;
      case ScheduleStepKind::kInfeed: return &Frame::Infeed;
      case ScheduleStepKind::kOutfeed: return &Frame::Outfeed;
    }
    return &Frame::Unknown;
  }

  const Buffer& Operand(const ExecutableStep& step, size_t i) const {
    return slots_[static_cast<size_t>(step.operands[i])];
  }

  absl::StatusOr<Buffer> Allocate(const hlo::Shape& shape) {
    ASSIGN_OR_RETURN(Buffer b, Buffer::Allocate(shape, /*zero=*/false, exe_.pool_.get()));
    state_.live_bytes += LeafBytes(b);
    state_.stats.peak_live_bytes = std::max(state_.stats.peak_live_bytes, state_.live_bytes);
    return b;
  }

  absl::StatusOr<Buffer> Unknown(const ExecutableStep& step) {
    return absl::InternalError(absl::StrCat("unknown step kind, in ", step.inst->Describe()));
  }

  absl::StatusOr<Buffer> Parameter(const ExecutableStep& step) {
    if (step.index < 0 || step.index >= static_cast<int64_t>(arguments_.size())) {
      return absl::InvalidArgumentError(
          absl::StrCat("parameter ", step.index, " out of range, in ", step.inst->Describe()));
    }
    return arguments_[static_cast<size_t>(step.index)];
  }

  absl::StatusOr<Buffer> Constant(const ExecutableStep& step) { return step.constant; }

  absl::StatusOr<Buffer> DeviceId(const ExecutableStep& step) {
    ASSIGN_OR_RETURN(Buffer b, Allocate(step.inst->shape()));
    const uint32_t id = static_cast<uint32_t>(
        step.kind == ScheduleStepKind::kPartitionId ? device_.device_id : device_.replica_id);
    if (b.size_bytes() != 4) {
      return absl::InvalidArgumentError(
          absl::StrCat("expects a u32[] result, in ", step.inst->Describe()));
    }
    std::memcpy(b.data(), &id, 4);
    return b;
  }

  absl::StatusOr<Buffer> Tuple(const ExecutableStep& step) {
    std::vector<Buffer> elements;
    elements.reserve(step.operands.size());
    for (size_t i = 0; i < step.operands.size(); ++i) elements.push_back(Operand(step, i));
    return Buffer::Tuple(std::move(elements));
  }

  absl::StatusOr<Buffer> Token(const ExecutableStep&) { return TokenBuffer(); }

  absl::StatusOr<Buffer> Forward(const ExecutableStep& step) { return Operand(step, 0); }

  absl::StatusOr<hlo::HostQueues*> Queues(const ExecutableStep& step) const {
    if (device_.host_queues == nullptr) {
      return absl::FailedPreconditionError(
          absl::StrCat("device ", device_.device_id, " has no host queues, in ",
                       step.inst->Describe()));
    }
    return device_.host_queues;
  }

  absl::StatusOr<Buffer> Infeed(const ExecutableStep& step) {
    ASSIGN_OR_RETURN(hlo::HostQueues * queues, Queues(step));
    ASSIGN_OR_RETURN(hlo::Literal value, queues->PopInfeed(*step.inst));
    ASSIGN_OR_RETURN(Buffer data, Buffer::FromLiteral(value));
    ASSIGN_OR_RETURN(Buffer token, TokenBuffer());
    return Buffer::Tuple({std::move(data), std::move(token)});
  }

  absl::StatusOr<Buffer> Outfeed(const ExecutableStep& step) {
    ASSIGN_OR_RETURN(hlo::HostQueues * queues, Queues(step));
    absl::StatusOr<hlo::Literal> value = Operand(step, 0).ToLiteral();
    if (!value.ok()) return AtInstruction(value.status(), *step.inst);
    queues->PushOutfeed(*std::move(value));
    return TokenBuffer();
  }

  static absl::StatusOr<Buffer> TokenBuffer() {
    return Buffer::Allocate(hlo::Shape::Scalar(hlo::PrimitiveType::kToken));
  }

  absl::StatusOr<Buffer> Reshape(const ExecutableStep& step) {
    return Operand(step, 0).Reshaped(step.inst->shape());
  }

  absl::StatusOr<Buffer> GetTupleElement(const ExecutableStep& step) {
    const Buffer& t = Operand(step, 0);
    if (!t.is_tuple() || step.index >= t.tuple_size()) {
      return absl::InternalError(absl::StrCat("not a tuple, in ", step.inst->Describe()));
    }
    return t.element(step.index);
  }

  absl::StatusOr<Buffer> Kernel(const ExecutableStep& step) {
    inputs_.clear();
    for (size_t i = 0; i < step.operands.size(); ++i) inputs_.push_back(&Operand(step, i));
    absl::StatusOr<Buffer> b = Allocate(step.inst->shape());
    if (!b.ok()) return AtInstruction(b.status(), *step.inst);
    if (absl::Status st = step.kernel->Run(inputs_, &*b); !st.ok()) {
      return AtInstruction(st, *step.inst);
    }
    ++state_.stats.kernel_launches;
    return b;
  }

  absl::StatusOr<Buffer> While(const ExecutableStep& step) {
    Buffer loop_state = Operand(step, 0);
    const Program& cond = *step.callees[0];
    const Program& body = *step.callees[1];
    for (;;) {
      ASSIGN_OR_RETURN(Buffer keep_going,
                       exe_.Execute(cond, absl::MakeConstSpan(&loop_state, 1), state_));
      if (keep_going.is_tuple() || keep_going.type() != hlo::PrimitiveType::kPred) {
        return absl::InvalidArgumentError(
            absl::StrCat("condition returned ", keep_going.shape().ToString(),
                         " instead of pred[], in ", step.inst->Describe()));
      }
      if (!ReadPred(keep_going)) return loop_state;
      ASSIGN_OR_RETURN(Buffer next, exe_.Execute(body, absl::MakeConstSpan(&loop_state, 1), state_));
      state_.live_bytes -= ExclusiveBytes(loop_state);
      loop_state = std::move(next);
    }
  }

  absl::StatusOr<Buffer> Conditional(const ExecutableStep& step) {
    const Buffer& selector = Operand(step, 0);
    const int64_t n = static_cast<int64_t>(step.callees.size());
    int64_t chosen;
    if (selector.type() == hlo::PrimitiveType::kPred) {
      chosen = ReadPred(selector) ? 0 : 1;
    } else {
      chosen = ReadIndex(selector);
      if (chosen < 0 || chosen >= n) chosen = n - 1;  // XLA: out of range runs the last
    }
    return exe_.Execute(*step.callees[static_cast<size_t>(chosen)],
                        absl::MakeConstSpan(&Operand(step, static_cast<size_t>(chosen) + 1), 1),
                        state_);
  }

  absl::StatusOr<Buffer> Call(const ExecutableStep& step) {
    std::vector<Buffer> args;
    for (size_t i = 0; i < step.operands.size(); ++i) args.push_back(Operand(step, i));
    return exe_.Execute(*step.callees[0], args, state_);
  }

  // --- collectives ---

  // What every collective of one step shares: the group, the communicator
  // (none for a lone device) and the fingerprint the devices agree on.
  struct CollectiveCall {
    const ExecutableStep& step;
    Communicator* comm;
    std::vector<int64_t> group;
    CollectiveFingerprint fp;
    std::vector<Buffer> results;
  };
  using CollectiveFn = absl::Status (Frame::*)(CollectiveCall&);

  // The collective table: one entry per collective the runtime executes.
  static CollectiveFn CollectiveFor(hlo::Opcode opcode) {
    switch (opcode) {
      case hlo::Opcode::kAllReduce: return &Frame::PerOperandCollective;
      case hlo::Opcode::kAllGather: return &Frame::PerOperandCollective;
      case hlo::Opcode::kReduceScatter: return &Frame::PerOperandCollective;
      case hlo::Opcode::kAllToAll: return &Frame::AllToAll;
      case hlo::Opcode::kCollectivePermute: return &Frame::CollectivePermute;
      case hlo::Opcode::kCollectiveBroadcast: return &Frame::CollectiveBroadcast;
      case hlo::Opcode::kRaggedAllToAll: return &Frame::RaggedAllToAll;
      default: return nullptr;
    }
  }

  absl::StatusOr<Buffer> Collective(const ExecutableStep& step) {
    const hlo::Instruction& inst = *step.inst;
    CollectiveFn run = CollectiveFor(inst.opcode());
    if (run == nullptr) {
      return absl::UnimplementedError(
          absl::StrCat("collective not supported by the runtime, in ", inst.Describe()));
    }
    absl::StatusOr<std::vector<int64_t>> group = hlo::CollectiveGroup(
        inst, device_.device_id, std::max<int64_t>(device_.num_devices, 1));
    if (!group.ok()) return AtInstruction(group.status(), inst);
    CollectiveCall call{step, device_.communicator, *std::move(group), {}, {}};
    call.fp.opcode = inst.opcode();
    call.fp.name = inst.name();
    call.fp.channel_id = inst.attr_int("channel_id", 0);
    // A lone device (no communicator) still runs group-of-one collectives.
    const int64_t g = static_cast<int64_t>(call.group.size());
    if (call.comm == nullptr && !(g == 1 || inst.opcode() == hlo::Opcode::kCollectivePermute)) {
      return absl::FailedPreconditionError(
          absl::StrCat("no communicator for a group of ", g, ", in ", inst.Describe()));
    }
    RETURN_IF_ERROR((this->*run)(call));
    ++state_.stats.collectives;
    if (inst.shape().is_tuple()) return Buffer::Tuple(std::move(call.results));
    return std::move(call.results[0]);
  }

  CollectiveFingerprint NextFingerprint(CollectiveCall& call) {
    call.fp.sequence = state_.next_sequence++;
    return call.fp;
  }

  // all-reduce, all-gather and reduce-scatter: one exchange per operand.
  absl::Status PerOperandCollective(CollectiveCall& call) {
    const ExecutableStep& step = call.step;
    const hlo::Instruction& inst = *step.inst;
    for (size_t k = 0; k < step.operands.size(); ++k) {
      const Buffer& in = Operand(step, k);
      const hlo::Shape& result_shape =
          inst.shape().is_tuple() ? inst.shape().tuple_shape(static_cast<int64_t>(k)) : inst.shape();
      absl::StatusOr<Buffer> o = Allocate(result_shape);
      if (!o.ok()) return AtInstruction(o.status(), inst);
      const CollectiveFingerprint f = NextFingerprint(call);
      absl::Status st;
      if (call.comm == nullptr) {
        // A group of one: the result is the operand itself.
        if (o->shape() != in.shape()) {
          st = absl::InvalidArgumentError("result shape differs from operand on one device");
        } else if (in.size_bytes() > 0) {
          std::memcpy(o->data(), in.data(), static_cast<size_t>(in.size_bytes()));
        }
      } else if (inst.opcode() == hlo::Opcode::kAllReduce) {
        st = call.comm->AllReduce(device_.device_id, f, call.group, step.reduction, in, *o);
      } else if (inst.opcode() == hlo::Opcode::kAllGather) {
        st = call.comm->AllGather(device_.device_id, f, call.group, step.dim, in, *o);
      } else {
        st = call.comm->ReduceScatter(device_.device_id, f, call.group, step.reduction, step.dim,
                                      in, *o);
      }
      call.results.push_back(*std::move(o));
      RETURN_IF_ERROR(st);
    }
    return absl::OkStatus();
  }

  // collective-broadcast: every member receives the value of its group's
  // first. The communicator has no one-to-many exchange, so the members
  // gather the group's values as rows and keep the first row: g times the
  // traffic of a broadcast, on an op programs use rarely.
  absl::Status CollectiveBroadcast(CollectiveCall& call) {
    const ExecutableStep& step = call.step;
    const hlo::Instruction& inst = *step.inst;
    const Buffer& in = Operand(step, 0);
    absl::StatusOr<Buffer> o = Allocate(inst.shape());
    if (!o.ok()) return AtInstruction(o.status(), inst);
    const size_t bytes = static_cast<size_t>(in.size_bytes());
    absl::Status st;
    if (call.comm == nullptr) {
      if (bytes > 0) std::memcpy(o->data(), in.data(), bytes);
      ++state_.next_sequence;
    } else {
      const hlo::Shape& shape = inst.shape();
      const int64_t g = static_cast<int64_t>(call.group.size());
      const hlo::Shape row(shape.type(), {1, shape.num_elements()});
      // Scratch, not a value of the program: outside the live-bytes count.
      absl::StatusOr<Buffer> rows = Buffer::Allocate(
          hlo::Shape(shape.type(), {g, shape.num_elements()}), false, exe_.pool_.get());
      if (!rows.ok()) return AtInstruction(rows.status(), inst);
      st = call.comm->AllGather(device_.device_id, NextFingerprint(call), call.group, 0,
                                in.Reshaped(row), *rows);
      if (st.ok() && bytes > 0) std::memcpy(o->data(), rows->data(), bytes);
    }
    call.results.push_back(*std::move(o));
    return st;
  }

  // ragged-all-to-all(input, output, input_offsets, send_sizes,
  // output_offsets, recv_sizes): member j's rows [input_offsets[p],
  // + send_sizes[p]) land in member p's output at its output_offsets[p]
  // (the sender's), over the output operand's values. As with
  // collective-broadcast, the members gather every member's input and its
  // three vectors (as int64) in one packet each, and each assembles its own
  // output; the interpreter's evaluator (hlo/ops/collective_ops.cc) defines
  // the same result.
  absl::Status RaggedAllToAll(CollectiveCall& call) {
    const ExecutableStep& step = call.step;
    const hlo::Instruction& inst = *step.inst;
    const int64_t g = static_cast<int64_t>(call.group.size());
    const Buffer& input = Operand(step, 0);
    const Buffer& init = Operand(step, 1);
    absl::StatusOr<Buffer> o = Allocate(inst.shape());
    if (!o.ok()) return AtInstruction(o.status(), inst);
    if (init.size_bytes() > 0) {
      std::memcpy(o->data(), init.data(), static_cast<size_t>(init.size_bytes()));
    }
    const int64_t updates = Operand(step, 2).shape().num_elements();
    absl::StatusOr<int64_t> per_member = hlo::UpdatesPerMember(updates, g);
    if (!per_member.ok()) return AtInstruction(per_member.status(), inst);
    // The packet: the input's bytes, then input_offsets, send_sizes and
    // output_offsets as int64.
    const int64_t in_bytes = input.size_bytes();
    const int64_t packet = in_bytes + 3 * updates * 8;
    // Scratch, not values of the program: outside the live-bytes count.
    absl::StatusOr<Buffer> mine =
        Buffer::Allocate(hlo::Shape(hlo::PrimitiveType::kU8, {1, packet}), false, exe_.pool_.get());
    absl::StatusOr<Buffer> all =
        Buffer::Allocate(hlo::Shape(hlo::PrimitiveType::kU8, {g, packet}), false, exe_.pool_.get());
    if (!mine.ok() || !all.ok()) return AtInstruction(mine.ok() ? all.status() : mine.status(), inst);
    uint8_t* out = static_cast<uint8_t*>(mine->data());
    if (in_bytes > 0) std::memcpy(out, input.data(), static_cast<size_t>(in_bytes));
    for (int64_t v = 0; v < 3; ++v) {
      const Buffer& vec = Operand(step, static_cast<size_t>(2 + v));
      for (int64_t k = 0; k < updates; ++k) {
        const int64_t value =
            vec.shape().type() == hlo::PrimitiveType::kS32
                ? static_cast<const int32_t*>(vec.data())[k]
                : static_cast<const int64_t*>(vec.data())[k];
        std::memcpy(out + in_bytes + (v * updates + k) * 8, &value, 8);
      }
    }
    absl::Status st;
    if (call.comm == nullptr) {
      std::memcpy(all->data(), mine->data(), static_cast<size_t>(packet));
      ++state_.next_sequence;
    } else {
      st = call.comm->AllGather(device_.device_id, NextFingerprint(call), call.group, 0, *mine,
                                *all);
    }
    if (!st.ok()) return st;
    const int64_t position =
        std::find(call.group.begin(), call.group.end(), device_.device_id) - call.group.begin();
    const hlo::Shape& out_shape = inst.shape();
    const int64_t out_rows = out_shape.dim(0);
    const int64_t in_rows = input.shape().dim(0);
    const int64_t row_bytes = out_rows == 0 ? 0 : o->size_bytes() / out_rows;
    for (int64_t j = 0; j < g; ++j) {
      const uint8_t* from = static_cast<const uint8_t*>(all->data()) + j * packet;
      for (int64_t u = 0; u < *per_member; ++u) {
        const int64_t update = position * *per_member + u;
        int64_t field[3];
        for (int64_t v = 0; v < 3; ++v) {
          std::memcpy(&field[v], from + in_bytes + (v * updates + update) * 8, 8);
        }
        const int64_t in_offset = field[0], size = field[1], out_offset = field[2];
        if (absl::Status rows = hlo::CheckRaggedRows(call.group[static_cast<size_t>(j)], in_offset,
                                                     size, in_rows, out_offset, out_rows);
            !rows.ok()) {
          return AtInstruction(rows, inst);
        }
        if (size > 0) {
          std::memcpy(static_cast<uint8_t*>(o->data()) + out_offset * row_bytes,
                      from + in_offset * row_bytes, static_cast<size_t>(size * row_bytes));
        }
      }
    }
    call.results.push_back(*std::move(o));
    return absl::OkStatus();
  }

  absl::Status AllToAll(CollectiveCall& call) {
    const ExecutableStep& step = call.step;
    if (step.dim >= 0) {
      absl::StatusOr<Buffer> o = Allocate(step.inst->shape());
      if (!o.ok()) return AtInstruction(o.status(), *step.inst);
      const Buffer& in = Operand(step, 0);
      absl::Status st;
      if (call.comm == nullptr) {
        if (in.size_bytes() > 0) {
          std::memcpy(o->data(), in.data(), static_cast<size_t>(in.size_bytes()));
        }
        ++state_.next_sequence;
      } else {
        st = call.comm->AllToAll(device_.device_id, NextFingerprint(call), call.group, step.dim,
                                 in, *o);
      }
      call.results.push_back(*std::move(o));
      return st;
    }
    return TupleAllToAll(call);
  }

  // Tuple form: operand j goes to member j. Stack the operands as rows of
  // one array, exchange rows, and split the result.
  absl::Status TupleAllToAll(CollectiveCall& call) {
    const ExecutableStep& step = call.step;
    const hlo::Shape& each = step.inst->operand(0)->shape();
    const int64_t g = static_cast<int64_t>(call.group.size());
    if (static_cast<int64_t>(step.operands.size()) != g) {
      return absl::InvalidArgumentError(absl::StrCat("has ", step.operands.size(),
                                                     " operands for a group of ", g, ", in ",
                                                     step.inst->Describe()));
    }
    hlo::Shape stacked(each.type(), {g, each.num_elements()});
    ASSIGN_OR_RETURN(Buffer packed, Buffer::Allocate(stacked, false, exe_.pool_.get()));
    ASSIGN_OR_RETURN(Buffer exchanged, Buffer::Allocate(stacked, false, exe_.pool_.get()));
    const int64_t row = hlo::ByteWidth(each.type()) * each.num_elements();
    for (int64_t j = 0; j < g && row > 0; ++j) {
      std::memcpy(static_cast<uint8_t*>(packed.data()) + j * row,
                  Operand(step, static_cast<size_t>(j)).data(), static_cast<size_t>(row));
    }
    if (call.comm == nullptr) {
      exchanged = packed;
      ++state_.next_sequence;
    } else {
      RETURN_IF_ERROR(call.comm->AllToAll(device_.device_id, NextFingerprint(call), call.group, 0,
                                          packed, exchanged));
    }
    for (int64_t j = 0; j < g; ++j) {
      ASSIGN_OR_RETURN(Buffer o, Allocate(each));
      if (row > 0) {
        std::memcpy(o.data(), static_cast<const uint8_t*>(exchanged.data()) + j * row,
                    static_cast<size_t>(row));
      }
      call.results.push_back(std::move(o));
    }
    return absl::OkStatus();
  }

  absl::Status CollectivePermute(CollectiveCall& call) {
    const ExecutableStep& step = call.step;
    absl::StatusOr<Buffer> o = Allocate(step.inst->shape());
    if (!o.ok()) return AtInstruction(o.status(), *step.inst);
    absl::Status st;
    // The written pairs as global device ids (collective_groups.h).
    absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> pairs =
        hlo::GlobalPairs(*step.inst, std::max<int64_t>(device_.num_devices, 1));
    if (!pairs.ok()) return AtInstruction(pairs.status(), *step.inst);
    if (call.comm == nullptr) {
      ++state_.next_sequence;
      std::memset(o->data(), 0, static_cast<size_t>(o->size_bytes()));
      for (const auto& [s, t] : *pairs) {
        if (s == device_.device_id && t == device_.device_id && o->size_bytes() > 0) {
          std::memcpy(o->data(), Operand(step, 0).data(), static_cast<size_t>(o->size_bytes()));
        }
      }
    } else {
      st = call.comm->CollectivePermute(device_.device_id, NextFingerprint(call), *pairs,
                                        Operand(step, 0), *o);
    }
    call.results.push_back(*std::move(o));
    return st;
  }

  const Executable& exe_;
  const Program& program_;
  absl::Span<const Buffer> arguments_;
  RunState& state_;
  const DeviceContext& device_;
  std::vector<Buffer> slots_;
  std::vector<const Buffer*> inputs_;  // a kernel's operands, reused across steps
};

absl::StatusOr<Buffer> Executable::Execute(const Program& program,
                                           absl::Span<const Buffer> arguments,
                                           RunState& state) const {
  return Frame(*this, program, arguments, state).Run();
}

}  // namespace sharc::runtime
