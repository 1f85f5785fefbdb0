#include "driver/host_transfers.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "hlo/base/status_macros.h"
#include "hlo/eval/interpreter.h"
#include "hlo/ir/computation.h"

namespace sharc::driver {

InfeedSource::InfeedSource(std::vector<hlo::Literal> leaves, MakeFn make)
    : leaves_(std::move(leaves)), make_(std::move(make)) {}

namespace {

// A value of `shape` from consecutive leaves starting at `next`.
hlo::Literal FromLeaves(const hlo::Shape& shape, std::vector<hlo::Literal>& leaves, size_t& next) {
  if (!shape.is_tuple()) return std::move(leaves[next++]);
  std::vector<hlo::Literal> elements;
  for (const hlo::Shape& s : shape.tuple_shapes()) elements.push_back(FromLeaves(s, leaves, next));
  return hlo::Literal::Tuple(std::move(elements));
}

}  // namespace

absl::StatusOr<std::optional<hlo::Literal>> InfeedSource::Value(int64_t index,
                                                                const hlo::Shape& shape) {
  absl::MutexLock lock(&mu_);
  if (index < static_cast<int64_t>(values_.size())) return values_[static_cast<size_t>(index)];
  if (index != static_cast<int64_t>(values_.size())) {
    return absl::InternalError(absl::StrCat("infeed value #", index, " asked for before #",
                                            values_.size()));
  }
  const size_t left = leaves_.size() - next_leaf_;
  if (left > 0) {
    const int64_t needed = shape.leaf_count();
    if (static_cast<int64_t>(left) < needed) {
      return absl::InvalidArgumentError(absl::StrCat(
          "infeed value #", index, " is ", shape.ToString(), ", ", needed,
          " array(s), but only ", left, " infeed array(s) are left"));
    }
    values_.push_back(FromLeaves(shape, leaves_, next_leaf_));
  } else if (make_) {
    values_.push_back(make_(shape, index));
    ++made_;
  } else {
    return std::nullopt;
  }
  return values_.back();
}

int64_t InfeedSource::unread_leaves() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int64_t>(leaves_.size() - next_leaf_);
}

int64_t InfeedSource::made_values() const {
  absl::MutexLock lock(&mu_);
  return made_;
}

std::vector<std::unique_ptr<hlo::HostQueues>> MakeDeviceQueues(int64_t num_devices,
                                                               InfeedSource* source) {
  std::vector<std::unique_ptr<hlo::HostQueues>> queues;
  for (int64_t d = 0; d < num_devices; ++d) {
    auto q = std::make_unique<hlo::HostQueues>(d);
    if (source != nullptr) {
      // Every device reads the whole global value.
      q->SetInfeedSupplier([source](int64_t index, const hlo::Shape& shape) {
        return source->Value(index, shape);
      });
    }
    queues.push_back(std::move(q));
  }
  return queues;
}

std::vector<hlo::HostQueues*> Pointers(
    const std::vector<std::unique_ptr<hlo::HostQueues>>& queues) {
  std::vector<hlo::HostQueues*> out;
  for (const auto& q : queues) out.push_back(q.get());
  return out;
}

absl::StatusOr<std::vector<hlo::Literal>> GlobalOutfeed(
    const std::vector<std::unique_ptr<hlo::HostQueues>>& queues) {
  std::vector<std::vector<hlo::Literal>> sent;
  for (const auto& q : queues) sent.push_back(q->TakeOutfeed());
  if (sent.empty()) return std::vector<hlo::Literal>();
  for (size_t d = 1; d < sent.size(); ++d) {
    if (sent[d].size() != sent[0].size()) {
      return absl::InternalError(absl::StrCat("device ", d, " outfed ", sent[d].size(),
                                              " value(s) but device 0 outfed ", sent[0].size()));
    }
    for (size_t k = 0; k < sent[d].size(); ++k) {
      if (sent[d][k] != sent[0][k]) {
        return absl::InternalError(absl::StrCat(
            "outfeed value #", k, " of device ", d, " differs from device 0's (",
            sent[d][k].shape().ToString(), " vs ", sent[0][k].shape().ToString(),
            "): every device outfeeds the whole value"));
      }
    }
  }
  return std::move(sent[0]);
}

absl::StatusOr<hlo::Literal> EvaluateWithHost(const hlo::Module& module,
                                              const std::vector<hlo::Literal>& args,
                                              HostTransfers* host) {
  std::vector<std::unique_ptr<hlo::HostQueues>> queues =
      MakeDeviceQueues(1, host != nullptr ? host->infeed : nullptr);
  ASSIGN_OR_RETURN(hlo::Literal result, hlo::Evaluate(module, args, queues[0].get()));
  if (host != nullptr) {
    ASSIGN_OR_RETURN(host->outfeed, GlobalOutfeed(queues));
  }
  return result;
}

bool UsesHostQueues(const hlo::Module& module) {
  for (const hlo::Computation* c : module.computations()) {
    for (const hlo::Instruction* inst : c->instructions()) {
      if (inst->opcode() == hlo::Opcode::kInfeed || inst->opcode() == hlo::Opcode::kOutfeed) {
        return true;
      }
    }
  }
  return false;
}

}  // namespace sharc::driver
