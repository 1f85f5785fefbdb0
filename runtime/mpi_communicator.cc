#include "runtime/mpi_communicator.h"

#include <mpi.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "hlo/base/status_macros.h"
#include "absl/strings/str_cat.h"
#include "runtime/communicator_checks.h"
#include "runtime/mpi_group_exchange.h"
#include "runtime/mpi_session.h"
#include "runtime/mpi_watchdog.h"
#include "runtime/reduction.h"

namespace sharc::runtime {

struct MpiCommunicator::State {
  MpiWorld world;
  std::mutex groups_mu;
  std::map<std::vector<int64_t>, std::unique_ptr<MpiGroup>> groups;
};

namespace {

InProcessOptions LocalOptions(const MpiOptions& options) {
  InProcessOptions local = options.local;
  local.timeout = options.timeout;
  return local;
}

}  // namespace

MpiCommunicator::MpiCommunicator(const MpiOptions& options, int rank, int size)
    : options_(options),
      rank_(rank),
      size_(size),
      first_local_(options.num_devices / size * rank),
      num_local_(options.num_devices / size),
      local_(options.num_devices, LocalOptions(options)),
      state_(std::make_unique<State>()) {}

absl::StatusOr<std::unique_ptr<MpiCommunicator>> MpiCommunicator::Create(
    const MpiOptions& options) {
  if (!MpiInitialized()) return absl::FailedPreconditionError("MPI is not initialised");
  const int rank = MpiRank(), size = MpiSize();
  if (options.num_devices < 1 || options.num_devices % size != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(options.num_devices, " devices cannot be spread evenly over ", size,
                     " MPI processes: the device count must be a multiple of the process count"));
  }
  std::unique_ptr<MpiCommunicator> comm(new MpiCommunicator(options, rank, size));
  State& s = *comm->state_;
  {
    MpiWatchdogGuard guard(
        options.timeout, absl::StrCat("process ", rank, ": duplicating MPI_COMM_WORLD timed out"));
    if (absl::Status st =
            MpiCallStatus(MPI_Comm_dup(MPI_COMM_WORLD, &s.world.comm), "MPI_Comm_dup");
        !st.ok()) {
      return st;
    }
  }
  MPI_Comm_set_errhandler(s.world.comm, MPI_ERRORS_RETURN);
  MPI_Comm_group(s.world.comm, &s.world.group);
  int* tag_ub = nullptr;
  int found = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &found);
  if (found && tag_ub != nullptr && *tag_ub > 0) s.world.tag_bound = *tag_ub;
  return comm;
}

MpiCommunicator::~MpiCommunicator() {
  for (auto& [key, group] : state_->groups) {
    if (group->comm != MPI_COMM_NULL) MPI_Comm_free(&group->comm);
  }
  if (state_->world.group != MPI_GROUP_NULL) MPI_Group_free(&state_->world.group);
  if (state_->world.comm != MPI_COMM_NULL) MPI_Comm_free(&state_->world.comm);
}

absl::Status MpiCommunicator::CheckLocalDevice(int64_t device) const {
  if (device < first_local_ || device >= first_local_ + num_local_) {
    return absl::InvalidArgumentError(absl::StrCat("device ", device, " is not hosted by process ",
                                                   rank_, " (devices ", first_local_, "..",
                                                   first_local_ + num_local_ - 1, ")"));
  }
  return absl::OkStatus();
}

absl::Status MpiCommunicator::LocalError(int64_t device, const CollectiveFingerprint& fingerprint,
                                         const absl::Status& status) {
  absl::Status prefixed(status.code(),
                        absl::StrCat(fingerprint.ToString(), ": ", status.message()));
  local_.Abort(device, prefixed);
  return prefixed;
}

absl::StatusOr<MpiGroup*> MpiCommunicator::FindGroup(int64_t device,
                                                     absl::Span<const int64_t> group) {
  std::vector<int64_t> key(group.begin(), group.end());
  std::lock_guard<std::mutex> lock(state_->groups_mu);
  std::unique_ptr<MpiGroup>& slot = state_->groups[key];
  if (slot != nullptr) return slot.get();
  std::vector<int64_t> sorted = key;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (sorted[i] < 0 || sorted[i] >= options_.num_devices) {
      state_->groups.erase(key);
      return absl::InvalidArgumentError(absl::StrCat("group ", GroupString(group), " names device ",
                                                     sorted[i], ", outside [0, ",
                                                     options_.num_devices, ")"));
    }
    if (i > 0 && sorted[i] == sorted[i - 1]) {
      state_->groups.erase(key);
      return absl::InvalidArgumentError(
          absl::StrCat("group ", GroupString(group), " names device ", sorted[i], " twice"));
    }
  }
  auto g = std::make_unique<MpiGroup>();
  g->members = key;
  std::map<int, std::vector<int64_t>> by_process;
  for (size_t p = 0; p < key.size(); ++p) {
    by_process[static_cast<int>(key[p] / num_local_)].push_back(static_cast<int64_t>(p));
  }
  for (auto& [process, positions] : by_process) {
    if (process == rank_) g->my_index = static_cast<int>(g->processes.size());
    g->processes.push_back(process);
    g->positions.push_back(positions);
  }
  for (int64_t m : key) {
    if (m >= first_local_ && m < first_local_ + num_local_) g->local_members.push_back(m);
  }
  g->all_local = g->processes.size() == 1;
  slot = std::move(g);
  return slot.get();
}

absl::StatusOr<MpiGroup*> MpiCommunicator::EnterCollective(
    int64_t device, const CollectiveFingerprint& fingerprint, absl::Span<const int64_t> group) {
  if (absl::Status st = CheckLocalDevice(device); !st.ok()) return st;
  absl::StatusOr<MpiGroup*> found = FindGroup(device, group);
  if (!found.ok()) return LocalError(device, fingerprint, found.status());
  return found;
}

absl::Status MpiCommunicator::RunAcrossProcesses(
    int64_t device, const CollectiveFingerprint& fingerprint, MpiGroup& group,
    absl::Span<const int64_t> members, uint64_t tag, const Buffer& input, Buffer& output,
    absl::FunctionRef<absl::Status(MpiGroupExchange&, const InProcessCommunicator::Round&)>
        exchange) {
  if (absl::Status st = PositionInGroup(device, members).status(); !st.ok()) {
    return LocalError(device, fingerprint, st);
  }
  const MpiCallHeader header = MakeCallHeader(options_.program_fingerprint, fingerprint, members,
                                              input, output, tag, first_local_);
  return local_.RunLed(device, fingerprint, group.local_members, tag, input, output,
                       [&](const InProcessCommunicator::Round& r) -> absl::Status {
                         MpiGroupExchange step(state_->world, group, fingerprint, header, device,
                                               options_.timeout, local_);
                         if (absl::Status st = step.Begin(); !st.ok()) return st;
                         return exchange(step, r);
                       });
}

#define SHARC_MPI_CHECK(expr)                                                               \
  do {                                                                                      \
    absl::Status sharc_mpi_status_ = (expr);                                                \
    if (!sharc_mpi_status_.ok()) return LocalError(device, fingerprint, sharc_mpi_status_); \
  } while (false)

absl::Status MpiCommunicator::AllReduce(int64_t device, const CollectiveFingerprint& fingerprint,
                                        absl::Span<const int64_t> group, ReductionKind kind,
                                        const Buffer& input, Buffer& output) {
  ASSIGN_OR_RETURN(MpiGroup* found, EnterCollective(device, fingerprint, group));
  if (found->all_local) return local_.AllReduce(device, fingerprint, group, kind, input, output);
  SHARC_MPI_CHECK(ValidateAllReduce(kind, input, output));
  const hlo::PrimitiveType type = input.type();
  const int64_t n = input.num_elements();
  const int64_t bytes = input.size_bytes();
  return RunAcrossProcesses(
      device, fingerprint, *found, group, 100 + static_cast<uint64_t>(kind), input, output,
      [&](MpiGroupExchange& step, const InProcessCommunicator::Round& r) -> absl::Status {
        void* out = r.outputs[0];
        MPI_Datatype dt;
        MPI_Op op;
        if (ExactMpiReduction(type, kind, &dt, &op)) {
          // Fold our members, then let MPI combine the processes' partials.
          ReduceElements(type, kind, r.inputs, r.size, 0, n, out);
          ASSIGN_OR_RETURN(int count, MpiIntCount(n, fingerprint.ToString()));
          MPI_Request request;
          int rc = MPI_Iallreduce(MPI_IN_PLACE, out, count, dt, op, step.comm(), &request);
          if (absl::Status st = MpiCallStatus(rc, fingerprint.ToString() + ": MPI_Iallreduce");
              !st.ok()) {
            return st;
          }
          std::vector<MPI_Request> requests = {request};
          if (absl::Status st = step.WaitData(requests, "MPI_Iallreduce"); !st.ok()) return st;
        } else {
          ASSIGN_OR_RETURN(std::vector<const void*> all, step.GatherInputs(r, bytes));
          ReduceElements(type, kind, all.data(), static_cast<int64_t>(all.size()), 0, n, out);
        }
        for (int64_t k = 1; k < r.size; ++k) {
          if (bytes > 0) std::memcpy(r.outputs[k], out, static_cast<size_t>(bytes));
        }
        return absl::OkStatus();
      });
}

absl::Status MpiCommunicator::AllGather(int64_t device, const CollectiveFingerprint& fingerprint,
                                        absl::Span<const int64_t> group, int64_t dim,
                                        const Buffer& input, Buffer& output) {
  ASSIGN_OR_RETURN(MpiGroup* found, EnterCollective(device, fingerprint, group));
  if (found->all_local) return local_.AllGather(device, fingerprint, group, dim, input, output);
  const int64_t g = static_cast<int64_t>(group.size());
  SHARC_MPI_CHECK(ValidateAllGather(g, dim, input, output));
  const std::vector<int64_t>& dims = input.shape().dims();
  const int64_t outer = DimProduct(dims, 0, static_cast<size_t>(dim));
  const int64_t piece =
      DimProduct(dims, static_cast<size_t>(dim), dims.size()) * hlo::ByteWidth(input.type());
  const int64_t bytes = input.size_bytes();
  return RunAcrossProcesses(
      device, fingerprint, *found, group, 200 + static_cast<uint64_t>(dim), input, output,
      [&](MpiGroupExchange& step, const InProcessCommunicator::Round& r) -> absl::Status {
        ASSIGN_OR_RETURN(std::vector<const void*> all, step.GatherInputs(r, bytes));
        for (int64_t k = 0; k < r.size; ++k) {
          uint8_t* out = static_cast<uint8_t*>(r.outputs[k]);
          for (int64_t j = 0; j < g; ++j) {
            CopyStridedRows(out + j * piece, g * piece,
                            static_cast<const uint8_t*>(all[static_cast<size_t>(j)]), piece,
                            outer, piece);
          }
        }
        return absl::OkStatus();
      });
}

absl::Status MpiCommunicator::ReduceScatter(int64_t device,
                                            const CollectiveFingerprint& fingerprint,
                                            absl::Span<const int64_t> group, ReductionKind kind,
                                            int64_t dim, const Buffer& input, Buffer& output) {
  ASSIGN_OR_RETURN(MpiGroup* found, EnterCollective(device, fingerprint, group));
  if (found->all_local) {
    return local_.ReduceScatter(device, fingerprint, group, kind, dim, input, output);
  }
  const int64_t g = static_cast<int64_t>(group.size());
  SHARC_MPI_CHECK(ValidateReduceScatter(g, kind, dim, input, output));
  const hlo::PrimitiveType type = input.type();
  const int64_t w = hlo::ByteWidth(type);
  const std::vector<int64_t>& dims = output.shape().dims();
  const int64_t outer = DimProduct(dims, 0, static_cast<size_t>(dim));
  const int64_t chunk = DimProduct(dims, static_cast<size_t>(dim), dims.size());  // elements
  const uint64_t tag = 300 + static_cast<uint64_t>(dim) * 8 + static_cast<uint64_t>(kind);
  return RunAcrossProcesses(
      device, fingerprint, *found, group, tag, input, output,
      [&](MpiGroupExchange& step, const InProcessCommunicator::Round& r) -> absl::Status {
        ASSIGN_OR_RETURN(std::vector<const uint8_t*> pieces,
                         step.ExchangeChunks(r, outer, chunk * w));
        // Our member k's output is the member-order fold of every member's
        // piece for it (the pieces are laid out like the output).
        std::vector<const void*> inputs(static_cast<size_t>(g));
        for (int64_t k = 0; k < r.size; ++k) {
          for (int64_t j = 0; j < g; ++j) {
            inputs[static_cast<size_t>(j)] = pieces[static_cast<size_t>(j * r.size + k)];
          }
          ReduceElements(type, kind, inputs.data(), g, 0, outer * chunk, r.outputs[k]);
        }
        return absl::OkStatus();
      });
}

absl::Status MpiCommunicator::AllToAll(int64_t device, const CollectiveFingerprint& fingerprint,
                                       absl::Span<const int64_t> group, int64_t dim,
                                       const Buffer& input, Buffer& output) {
  ASSIGN_OR_RETURN(MpiGroup* found, EnterCollective(device, fingerprint, group));
  if (found->all_local) return local_.AllToAll(device, fingerprint, group, dim, input, output);
  const int64_t g = static_cast<int64_t>(group.size());
  SHARC_MPI_CHECK(ValidateAllToAll(g, dim, input, output));
  const std::vector<int64_t>& dims = input.shape().dims();
  const int64_t outer = DimProduct(dims, 0, static_cast<size_t>(dim));
  const int64_t chunk_bytes = (dims[static_cast<size_t>(dim)] / g) *
                              DimProduct(dims, static_cast<size_t>(dim) + 1, dims.size()) *
                              hlo::ByteWidth(input.type());
  return RunAcrossProcesses(
      device, fingerprint, *found, group, 400 + static_cast<uint64_t>(dim), input, output,
      [&](MpiGroupExchange& step, const InProcessCommunicator::Round& r) -> absl::Status {
        ASSIGN_OR_RETURN(std::vector<const uint8_t*> pieces,
                         step.ExchangeChunks(r, outer, chunk_bytes));
        // Our member k's output chunk j is member j's piece for it, row by row.
        const int64_t row = g * chunk_bytes;
        for (int64_t k = 0; k < r.size; ++k) {
          uint8_t* out = static_cast<uint8_t*>(r.outputs[k]);
          for (int64_t j = 0; j < g; ++j) {
            CopyStridedRows(out + j * chunk_bytes, row,
                            pieces[static_cast<size_t>(j * r.size + k)], chunk_bytes, outer,
                            chunk_bytes);
          }
        }
        return absl::OkStatus();
      });
}

absl::Status MpiCommunicator::CollectivePermute(int64_t device,
                                                const CollectiveFingerprint& fingerprint,
                                                absl::Span<const std::pair<int64_t, int64_t>> pairs,
                                                const Buffer& input, Buffer& output) {
  if (absl::Status st = CheckLocalDevice(device); !st.ok()) return st;
  SHARC_MPI_CHECK(ValidateCollectivePermute(input, output));
  if (absl::Status f = local_.failure(); !f.ok()) return f;
  std::vector<int64_t> participants;
  for (const auto& [s, t] : pairs) {
    if (s < 0 || s >= options_.num_devices || t < 0 || t >= options_.num_devices) {
      SHARC_MPI_CHECK(absl::InvalidArgumentError(absl::StrCat(
          "pair {", s, ",", t, "} names a device outside [0, ", options_.num_devices, ")")));
    }
    participants.push_back(s);
    participants.push_back(t);
  }
  std::sort(participants.begin(), participants.end());
  participants.erase(std::unique(participants.begin(), participants.end()), participants.end());
  if (std::find(participants.begin(), participants.end(), device) == participants.end()) {
    if (output.size_bytes() > 0)
      std::memset(output.data(), 0, static_cast<size_t>(output.size_bytes()));
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(MpiGroup* found, EnterCollective(device, fingerprint, participants));
  MpiGroup& gr = *found;
  if (gr.all_local) return local_.CollectivePermute(device, fingerprint, pairs, input, output);
  int64_t targeted = 0;
  for (const auto& [s, t] : pairs) targeted += t == device;
  if (targeted > 1) {
    SHARC_MPI_CHECK(absl::InvalidArgumentError(
        absl::StrCat("device ", device, " is the target of more than one pair")));
  }
  const int64_t bytes = output.size_bytes();
  return RunAcrossProcesses(
      device, fingerprint, gr, participants, PermutePairsTag(pairs), input, output,
      [&](MpiGroupExchange& step, const InProcessCommunicator::Round& r) -> absl::Status {
        auto local_index = [&](int64_t d) -> int64_t {
          for (size_t k = 0; k < gr.local_members.size(); ++k) {
            if (gr.local_members[k] == d) return static_cast<int64_t>(k);
          }
          return -1;
        };
        auto comm_rank = [&](int64_t d) -> int {
          const int process = static_cast<int>(d / num_local_);
          return static_cast<int>(
              std::lower_bound(gr.processes.begin(), gr.processes.end(), process) -
              gr.processes.begin());
        };
        // Outputs no pair targets are zeros.
        for (int64_t k = 0; k < r.size; ++k) {
          if (bytes > 0) std::memset(r.outputs[k], 0, static_cast<size_t>(bytes));
        }
        ASSIGN_OR_RETURN(int count, MpiIntCount(bytes, fingerprint.ToString()));
        std::vector<MPI_Request> requests;
        for (size_t p = 0; p < pairs.size(); ++p) {
          const auto [s, t] = pairs[p];
          const int64_t ls = local_index(s), lt = local_index(t);
          const int mpi_tag = kMpiPermuteTagBase + static_cast<int>(p);
          if (ls >= 0 && lt >= 0) {
            if (bytes > 0) std::memcpy(r.outputs[lt], r.inputs[ls], static_cast<size_t>(bytes));
          } else if (lt >= 0) {
            MPI_Request q;
            int rc = MPI_Irecv(r.outputs[lt], count, MPI_BYTE, comm_rank(s), mpi_tag, step.comm(),
                               &q);
            if (absl::Status st = MpiCallStatus(rc, "MPI_Irecv"); !st.ok()) return st;
            requests.push_back(q);
          } else if (ls >= 0) {
            MPI_Request q;
            int rc = MPI_Isend(r.inputs[ls], count, MPI_BYTE, comm_rank(t), mpi_tag, step.comm(),
                               &q);
            if (absl::Status st = MpiCallStatus(rc, "MPI_Isend"); !st.ok()) return st;
            requests.push_back(q);
          }
        }
        return step.WaitData(requests, "MPI_Isend/MPI_Irecv");
      });
}

#undef SHARC_MPI_CHECK

void MpiCommunicator::Abort(int64_t device, const absl::Status& reason) {
  local_.Abort(device, reason);
}

void MpiCommunicator::MarkFinished(int64_t device) { local_.MarkFinished(device); }

absl::Status MpiCommunicator::failure() const { return local_.failure(); }

}  // namespace sharc::runtime
