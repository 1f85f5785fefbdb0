#include "hlo/eval/interpreter.h"

#include <map>
#include <optional>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "hlo/base/status_macros.h"
#include "hlo/ops/op_def.h"

namespace sharc::hlo {
namespace {

// Meeting point of the simulated devices. The k-th collective each device
// executes is round k; all devices must agree on which collective that is
// (same opcode and name), otherwise the programs have diverged.
class Rendezvous {
 public:
  Rendezvous(int64_t num_devices, absl::Duration timeout)
      : num_devices_(num_devices), timeout_(timeout) {}

  absl::StatusOr<std::vector<Literal>> Exchange(int64_t round, int64_t device,
                                                const Instruction& inst, Literal value) {
    std::string key = absl::StrCat(OpcodeName(inst.opcode()), " %", inst.name());
    absl::MutexLock lock(&mu_);
    if (!failure_.ok()) return failure_;
    Round& r = rounds_[round];
    if (r.contributions.empty()) {
      r.contributions.resize(static_cast<size_t>(num_devices_));
      r.key = key;
    } else if (r.key != key) {
      failure_ = absl::FailedPreconditionError(absl::StrCat(
          "devices disagree on collective #", round, ": device ", device, " runs ", key,
          " while others run ", r.key));
      return failure_;
    }
    r.contributions[static_cast<size_t>(device)] = std::move(value);
    ++r.arrived;
    auto ready = [&]() { return r.arrived == num_devices_ || !failure_.ok(); };
    if (!mu_.AwaitWithTimeout(absl::Condition(&ready), timeout_)) {
      std::vector<int64_t> missing;
      for (int64_t d = 0; d < num_devices_; ++d) {
        if (!r.contributions[static_cast<size_t>(d)].has_value()) missing.push_back(d);
      }
      failure_ = absl::DeadlineExceededError(absl::StrCat(
          "collective #", round, " (", key, ") timed out after ", absl::FormatDuration(timeout_),
          "; devices ", absl::StrJoin(missing, ","), " never arrived"));
      return failure_;
    }
    if (!failure_.ok()) return failure_;
    std::vector<Literal> all;
    all.reserve(r.contributions.size());
    for (const std::optional<Literal>& c : r.contributions) all.push_back(*c);
    if (++r.departed == num_devices_) rounds_.erase(round);
    return all;
  }

  // A device failed: wake everyone with its error instead of letting them
  // wait for the timeout.
  void Abort(int64_t device, const absl::Status& status) {
    absl::MutexLock lock(&mu_);
    if (failure_.ok()) {
      failure_ = absl::Status(status.code(),
                              absl::StrCat("device ", device, " failed: ", status.message()));
    }
  }

 private:
  struct Round {
    std::vector<std::optional<Literal>> contributions;
    std::string key;
    int64_t arrived = 0;
    int64_t departed = 0;
  };
  const int64_t num_devices_;
  const absl::Duration timeout_;
  absl::Mutex mu_;
  std::map<int64_t, Round> rounds_ ABSL_GUARDED_BY(mu_);
  absl::Status failure_ ABSL_GUARDED_BY(mu_);
};

class DeviceInterpreter : public EvalContext {
 public:
  DeviceInterpreter(int64_t partition_id, int64_t num_partitions, Rendezvous* rendezvous,
                    HostQueues* host_queues)
      : partition_id_(partition_id),
        num_partitions_(num_partitions),
        rendezvous_(rendezvous),
        host_queues_(host_queues) {}

  absl::StatusOr<Literal> Call(const Computation& computation,
                               absl::Span<const Literal* const> args) override {
    return EvaluateComputation(computation, args);
  }
  int64_t partition_id() const override { return partition_id_; }
  int64_t num_partitions() const override { return num_partitions_; }
  HostQueues* host_queues() override { return host_queues_; }

  absl::StatusOr<std::vector<Literal>> ExchangeWithAllDevices(const Instruction& instruction,
                                                              Literal value) override {
    if (rendezvous_ == nullptr) {
      std::vector<Literal> one;
      one.push_back(std::move(value));
      return one;
    }
    return rendezvous_->Exchange(next_round_++, partition_id_, instruction, std::move(value));
  }

  absl::StatusOr<Literal> EvaluateComputation(const Computation& computation,
                                              absl::Span<const Literal* const> args) {
    if (static_cast<int64_t>(args.size()) != computation.num_parameters()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "computation '", computation.name(), "' takes ", computation.num_parameters(),
          " arguments, got ", args.size()));
    }
    std::vector<Instruction*> order = computation.instructions();
    // Values are dropped after their last use to bound memory.
    absl::flat_hash_map<const Instruction*, size_t> last_use;
    for (size_t i = 0; i < order.size(); ++i) {
      for (const Instruction* op : order[i]->operands()) last_use[op] = i;
    }
    absl::flat_hash_map<const Instruction*, Literal> values;
    std::vector<const Literal*> operands;
    for (size_t i = 0; i < order.size(); ++i) {
      const Instruction* inst = order[i];
      if (inst->opcode() == Opcode::kParameter) {
        const Literal* arg = args[static_cast<size_t>(inst->parameter_number())];
        if (arg->shape() != inst->shape()) {
          return absl::InvalidArgumentError(absl::StrCat(
              "argument ", inst->parameter_number(), " of computation '", computation.name(),
              "' has shape ", arg->shape().ToString(), ", expected ", inst->shape().ToString()));
        }
        values[inst] = *arg;
      } else {
        operands.clear();
        for (const Instruction* op : inst->operands()) operands.push_back(&values.at(op));
        const OpDef& def = GetOpDef(inst->opcode());
        absl::StatusOr<Literal> result = def.evaluate(*inst, operands, *this);
        if (!result.ok()) {
          // Errors from nested computations already name their instruction.
          if (absl::StrContains(result.status().message(), " in `")) return result.status();
          return absl::Status(result.status().code(),
                              absl::StrCat(result.status().message(), ", in ", inst->Describe()));
        }
        values[inst] = *std::move(result);
      }
      for (const Instruction* op : inst->operands()) {
        auto it = last_use.find(op);
        if (it != last_use.end() && it->second == i && op != computation.root()) values.erase(op);
      }
    }
    auto it = values.find(computation.root());
    if (it == values.end()) {
      return absl::InternalError(absl::StrCat("root of '", computation.name(), "' not evaluated"));
    }
    return std::move(it->second);
  }

 private:
  int64_t partition_id_;
  int64_t num_partitions_;
  Rendezvous* rendezvous_;
  HostQueues* host_queues_;
  int64_t next_round_ = 0;
};

std::vector<const Literal*> Pointers(const std::vector<Literal>& args) {
  std::vector<const Literal*> out;
  out.reserve(args.size());
  for (const Literal& l : args) out.push_back(&l);
  return out;
}

}  // namespace

absl::StatusOr<Literal> Evaluate(const Module& module, const std::vector<Literal>& args,
                                 HostQueues* host_queues) {
  if (module.entry() == nullptr) return absl::InvalidArgumentError("module has no entry");
  DeviceInterpreter interpreter(/*partition_id=*/0, /*num_partitions=*/1, nullptr, host_queues);
  std::vector<const Literal*> ptrs = Pointers(args);
  return interpreter.EvaluateComputation(*module.entry(), ptrs);
}

absl::StatusOr<std::vector<Literal>> EvaluateSpmd(const Module& module,
                                                  const std::vector<std::vector<Literal>>& args,
                                                  const SpmdOptions& options) {
  if (module.entry() == nullptr) return absl::InvalidArgumentError("module has no entry");
  return EvaluateComputationSpmd(*module.entry(), args, options);
}

absl::StatusOr<std::vector<Literal>> EvaluateComputationSpmd(
    const Computation& computation, const std::vector<std::vector<Literal>>& args,
    const SpmdOptions& options) {
  const int64_t n = options.num_devices;
  if (n < 1) return absl::InvalidArgumentError("num_devices must be at least 1");
  if (static_cast<int64_t>(args.size()) != n) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected arguments for ", n, " devices, got ", args.size()));
  }
  if (!options.host_queues.empty() && static_cast<int64_t>(options.host_queues.size()) != n) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected host queues for ", n, " devices, got ", options.host_queues.size()));
  }
  Rendezvous rendezvous(n, options.collective_timeout);
  std::vector<absl::StatusOr<Literal>> results(static_cast<size_t>(n),
                                               absl::UnknownError("not run"));
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(n));
  for (int64_t d = 0; d < n; ++d) {
    threads.emplace_back([&, d] {
      DeviceInterpreter interpreter(
          d, n, &rendezvous,
          options.host_queues.empty() ? nullptr : options.host_queues[static_cast<size_t>(d)]);
      std::vector<const Literal*> ptrs = Pointers(args[static_cast<size_t>(d)]);
      results[static_cast<size_t>(d)] = interpreter.EvaluateComputation(computation, ptrs);
      if (!results[static_cast<size_t>(d)].ok()) {
        rendezvous.Abort(d, results[static_cast<size_t>(d)].status());
      }
    });
  }
  for (std::thread& t : threads) t.join();
  std::vector<Literal> out;
  out.reserve(static_cast<size_t>(n));
  for (int64_t d = 0; d < n; ++d) {
    if (!results[static_cast<size_t>(d)].ok()) {
      const absl::Status& s = results[static_cast<size_t>(d)].status();
      return absl::Status(s.code(), absl::StrCat("device ", d, ": ", s.message()));
    }
    out.push_back(*std::move(results[static_cast<size_t>(d)]));
  }
  return out;
}

}  // namespace sharc::hlo
