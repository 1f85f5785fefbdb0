#include "runtime/mpi_group_exchange.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>
#include <thread>

#include "hlo/base/status_macros.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/communicator_checks.h"
#include "runtime/mpi_session.h"
#include "runtime/mpi_watchdog.h"

namespace sharc::runtime {

using Clock = std::chrono::steady_clock;

namespace {

inline uint64_t Mix(uint64_t h, uint64_t v) {
  v *= 0x9e3779b97f4a7c15ull;
  v ^= v >> 29;
  return (h ^ v) * 0xbf58476d1ce4e5b9ull + 0x94d049bb133111ebull;
}

uint64_t HashShape(uint64_t h, const hlo::Shape& shape) {
  h = Mix(h, static_cast<uint64_t>(shape.type()));
  h = Mix(h, static_cast<uint64_t>(shape.rank()));
  for (int64_t d : shape.dims()) h = Mix(h, static_cast<uint64_t>(d));
  return h;
}

uint64_t HashString(std::string_view s) {
  uint64_t h = 0x6a09e667f3bcc909ull;
  for (char c : s) h = Mix(h, static_cast<unsigned char>(c));
  return h;
}

std::string Describe(const MpiCallHeader& h) {
  std::string name(h.name, strnlen(h.name, sizeof(h.name)));
  std::string text = absl::StrCat(h.opcode >= 0 && h.opcode < hlo::kNumOpcodes
                                      ? hlo::OpcodeName(static_cast<hlo::Opcode>(h.opcode))
                                      : "?",
                                  " %", name, " (");
  if (h.channel_id != 0) absl::StrAppend(&text, "channel_id=", h.channel_id, ", ");
  absl::StrAppend(&text, "sequence ", h.sequence, ", ", h.bytes, " bytes)");
  return text;
}

}  // namespace

std::string MpiGroup::DevicesOf(int index) const {
  std::vector<int64_t> devices;
  for (int64_t p : positions[static_cast<size_t>(index)]) {
    devices.push_back(members[static_cast<size_t>(p)]);
  }
  return absl::StrCat(devices.size() == 1 ? "device " : "devices ", absl::StrJoin(devices, ","),
                      " (process ", processes[static_cast<size_t>(index)], ")");
}

MpiCallHeader MakeCallHeader(uint64_t program, const CollectiveFingerprint& fp,
                             absl::Span<const int64_t> group, const Buffer& input,
                             const Buffer& output, uint64_t tag, int64_t first_device) {
  MpiCallHeader h;
  h.program = program;
  uint64_t c = Mix(0x5348415243ull, static_cast<uint64_t>(fp.opcode));
  c = Mix(c, HashString(fp.name));
  c = Mix(c, static_cast<uint64_t>(fp.channel_id));
  c = Mix(c, group.size());
  for (int64_t m : group) c = Mix(c, static_cast<uint64_t>(m));
  c = HashShape(c, input.shape());
  c = HashShape(c, output.shape());
  h.call = Mix(c, tag);
  h.sequence = fp.sequence;
  h.channel_id = fp.channel_id;
  h.bytes = input.size_bytes();
  h.opcode = static_cast<int32_t>(fp.opcode);
  h.first_device = static_cast<int32_t>(first_device);
  std::memcpy(h.name, fp.name.data(), std::min(fp.name.size(), sizeof(h.name) - 1));
  return h;
}

// Wrapping sums and products, max/min, and/or are associative and
// commutative, so MPI may combine the processes' partials in any order.
bool ExactMpiReduction(hlo::PrimitiveType type, ReductionKind kind, MPI_Datatype* dt, MPI_Op* op) {
  using hlo::PrimitiveType;
  if (type == PrimitiveType::kPred) {
    *dt = MPI_UINT8_T;
    *op = (kind == ReductionKind::kSum || kind == ReductionKind::kMax || kind == ReductionKind::kOr)
              ? MPI_BOR
              : MPI_BAND;
    return true;
  }
  MPI_Datatype signed_type, unsigned_type;
  switch (type) {
    case PrimitiveType::kS8:
      signed_type = MPI_INT8_T;
      unsigned_type = MPI_UINT8_T;
      break;
    case PrimitiveType::kS16:
      signed_type = MPI_INT16_T;
      unsigned_type = MPI_UINT16_T;
      break;
    case PrimitiveType::kS32:
      signed_type = MPI_INT32_T;
      unsigned_type = MPI_UINT32_T;
      break;
    case PrimitiveType::kS64:
      signed_type = MPI_INT64_T;
      unsigned_type = MPI_UINT64_T;
      break;
    case PrimitiveType::kU8:
      signed_type = unsigned_type = MPI_UINT8_T;
      break;
    case PrimitiveType::kU16:
      signed_type = unsigned_type = MPI_UINT16_T;
      break;
    case PrimitiveType::kU32:
      signed_type = unsigned_type = MPI_UINT32_T;
      break;
    case PrimitiveType::kU64:
      signed_type = unsigned_type = MPI_UINT64_T;
      break;
    default:
      return false;
  }
  // Open MPI 4.1's vectorised ops (op/avx) saturate 8- and 16-bit sums
  // instead of wrapping (measured: s8 sums of 1030 elements came back with
  // 0xff where they overflow), so narrow sums and products take the exact
  // gather path.
  const bool narrow = hlo::ByteWidth(type) < 4;
  if (narrow && (kind == ReductionKind::kSum || kind == ReductionKind::kProduct)) return false;
  switch (kind) {
    // Unsigned: wrapping is defined there and gives the signed bits too.
    case ReductionKind::kSum:
      *dt = unsigned_type;
      *op = MPI_SUM;
      return true;
    case ReductionKind::kProduct:
      *dt = unsigned_type;
      *op = MPI_PROD;
      return true;
    case ReductionKind::kMax:
      *dt = signed_type;
      *op = MPI_MAX;
      return true;
    case ReductionKind::kMin:
      *dt = signed_type;
      *op = MPI_MIN;
      return true;
    case ReductionKind::kAnd:
      *dt = unsigned_type;
      *op = MPI_BAND;
      return true;
    case ReductionKind::kOr:
      *dt = unsigned_type;
      *op = MPI_BOR;
      return true;
  }
  return false;
}

absl::StatusOr<int> MpiIntCount(int64_t n, std::string_view what) {
  if (n < 0 || n > INT_MAX) {
    return absl::ResourceExhaustedError(
        absl::StrCat(std::string(what), ": ", n, " elements exceed what one MPI call can carry (",
                     INT_MAX, ")"));
  }
  return static_cast<int>(n);
}

uint64_t PermutePairsTag(absl::Span<const std::pair<int64_t, int64_t>> pairs) {
  uint64_t tag = 500;
  for (const auto& [s, t] : pairs)
    tag = Mix(Mix(tag, static_cast<uint64_t>(s)), static_cast<uint64_t>(t));
  return tag;
}

void CopyStridedRows(uint8_t* dst, int64_t dst_stride, const uint8_t* src, int64_t src_stride,
                     int64_t rows, int64_t row_bytes) {
  if (row_bytes <= 0) return;
  for (int64_t r = 0; r < rows; ++r) {
    std::memcpy(dst + r * dst_stride, src + r * src_stride, static_cast<size_t>(row_bytes));
  }
}

MpiGroupExchange::MpiGroupExchange(const MpiWorld& world, MpiGroup& group,
                                   const CollectiveFingerprint& fp, const MpiCallHeader& header,
                                   int64_t device, absl::Duration timeout,
                                   InProcessCommunicator& local)
    : world_(world),
      group_(group),
      fp_(fp),
      header_(header),
      device_(device),
      timeout_(timeout),
      local_(local),
      deadline_(Clock::now() + absl::ToChronoNanoseconds(timeout)) {}

absl::Status MpiGroupExchange::Begin() {
  if (group_.comm == MPI_COMM_NULL) {
    if (absl::Status st = CreateComm(); !st.ok()) return st;
  }
  return ExchangeHeaders();
}

absl::StatusOr<std::vector<const void*>> MpiGroupExchange::GatherInputs(
    const InProcessCommunicator::Round& r, int64_t bytes) {
  const size_t n = group_.processes.size();
  std::vector<int> counts(n), displs(n);
  int64_t offset = 0;
  for (size_t i = 0; i < n; ++i) {
    const int64_t member_bytes = static_cast<int64_t>(group_.positions[i].size()) * bytes;
    ASSIGN_OR_RETURN(int c, MpiIntCount(member_bytes, fp_.ToString()));
    ASSIGN_OR_RETURN(int d, MpiIntCount(offset, fp_.ToString()));
    counts[i] = c;
    displs[i] = d;
    offset += c;
  }
  received_.resize(static_cast<size_t>(offset));
  // Our members' inputs, packed in member order (in place if only one).
  const void* send = r.inputs[0];
  if (r.size > 1) {
    packed_.resize(static_cast<size_t>(r.size * bytes));
    for (int64_t k = 0; k < r.size; ++k) {
      if (bytes > 0)
        std::memcpy(packed_.data() + k * bytes, r.inputs[k], static_cast<size_t>(bytes));
    }
    send = packed_.data();
  }
  MPI_Request request;
  int rc =
      MPI_Iallgatherv(send, counts[static_cast<size_t>(group_.my_index)], MPI_BYTE,
                      received_.data(), counts.data(), displs.data(), MPI_BYTE, comm(), &request);
  if (absl::Status st = MpiCallStatus(rc, fp_.ToString() + ": MPI_Iallgatherv"); !st.ok()) {
    return st;
  }
  std::vector<MPI_Request> requests = {request};
  if (absl::Status st = WaitData(requests, "MPI_Iallgatherv"); !st.ok()) return st;
  std::vector<const void*> all(group_.members.size());
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < group_.positions[i].size(); ++j) {
      all[static_cast<size_t>(group_.positions[i][j])] =
          received_.data() + displs[i] + static_cast<int64_t>(j) * bytes;
    }
  }
  return all;
}

absl::StatusOr<std::vector<const uint8_t*>> MpiGroupExchange::ExchangeChunks(
    const InProcessCommunicator::Round& r, int64_t outer, int64_t chunk_bytes) {
  const size_t n = group_.processes.size();
  const int64_t g = static_cast<int64_t>(group_.members.size());
  const int64_t piece = outer * chunk_bytes;
  const int64_t row = g * chunk_bytes;
  const std::vector<int64_t>& mine = group_.positions[static_cast<size_t>(group_.my_index)];
  std::vector<int> send_counts(n), send_displs(n), recv_counts(n), recv_displs(n);
  int64_t send_total = 0, recv_total = 0;
  for (size_t q = 0; q < n; ++q) {
    const int64_t theirs = static_cast<int64_t>(group_.positions[q].size());
    const int64_t pair_bytes = static_cast<int64_t>(mine.size()) * theirs * piece;
    ASSIGN_OR_RETURN(send_counts[q], MpiIntCount(pair_bytes, fp_.ToString()));
    recv_counts[q] = send_counts[q];
    ASSIGN_OR_RETURN(send_displs[q], MpiIntCount(send_total, fp_.ToString()));
    ASSIGN_OR_RETURN(recv_displs[q], MpiIntCount(recv_total, fp_.ToString()));
    send_total += send_counts[q];
    recv_total += send_counts[q];
  }
  // To process q: for each of our members j, chunk p of its input for
  // each of q's members p (both in member order).
  packed_.resize(static_cast<size_t>(send_total));
  for (size_t q = 0; q < n; ++q) {
    uint8_t* at = packed_.data() + send_displs[q];
    for (int64_t k = 0; k < r.size; ++k) {
      const uint8_t* in = static_cast<const uint8_t*>(r.inputs[k]);
      for (int64_t p : group_.positions[q]) {
        CopyStridedRows(at, chunk_bytes, in + p * chunk_bytes, row, outer, chunk_bytes);
        at += piece;
      }
    }
  }
  received_.resize(static_cast<size_t>(recv_total));
  MPI_Request request;
  int rc = MPI_Ialltoallv(packed_.data(), send_counts.data(), send_displs.data(), MPI_BYTE,
                          received_.data(), recv_counts.data(), recv_displs.data(), MPI_BYTE,
                          comm(), &request);
  if (absl::Status st = MpiCallStatus(rc, fp_.ToString() + ": MPI_Ialltoallv"); !st.ok()) {
    return st;
  }
  std::vector<MPI_Request> requests = {request};
  if (absl::Status st = WaitData(requests, "MPI_Ialltoallv"); !st.ok()) return st;
  // From process q: for each of its members j, one piece per member of ours.
  std::vector<const uint8_t*> pieces(static_cast<size_t>(g * r.size));
  for (size_t q = 0; q < n; ++q) {
    const uint8_t* at = received_.data() + recv_displs[q];
    for (int64_t j : group_.positions[q]) {
      for (int64_t k = 0; k < r.size; ++k) {
        pieces[static_cast<size_t>(j * r.size + k)] = at;
        at += piece;
      }
    }
  }
  return pieces;
}

// Waits for data requests of peers that have all announced themselves; a
// timeout here means a peer stopped (or died) mid-exchange. MPI cannot
// withdraw a started collective, and it may still write into buffers the
// run is about to free, so a failure here ends the whole job at once,
// after saying why.
absl::Status MpiGroupExchange::WaitData(std::vector<MPI_Request>& requests, std::string_view call) {
  std::vector<bool> pending;
  absl::Status st = Poll(requests, pending);
  if (st.ok()) return st;
  if (absl::IsDeadlineExceeded(st)) {
    st = absl::DeadlineExceededError(
        absl::StrCat(fp_.ToString(), " on group ", GroupString(group_.members), ": ",
                     std::string(call), " with the other processes did not finish within ",
                     absl::FormatDuration(timeout_), " (device ", device_, " waited)"));
  } else {
    st = absl::Status(st.code(), absl::StrCat(fp_.ToString(), " on group ",
                                              GroupString(group_.members), ": ", st.message()));
  }
  std::fprintf(stderr, "sharc: error: process %d: %s\n", MpiRank(),
               std::string(st.message()).c_str());
  std::fflush(stderr);
  AbortMpiJob(kWatchdogExitCode);
}

absl::Status MpiGroupExchange::CreateComm() {
  MPI_Group mpi_group;
  int rc = MPI_Group_incl(world_.group, static_cast<int>(group_.processes.size()),
                          group_.processes.data(), &mpi_group);
  if (absl::Status st = MpiCallStatus(rc, "MPI_Group_incl"); !st.ok()) return st;
  // Leaders of different groups create their communicators concurrently;
  // the tag (the same on every process) keeps the creations apart.
  uint64_t h = 0x243f6a8885a308d3ull;
  for (int64_t m : group_.members) h = Mix(h, static_cast<uint64_t>(m));
  const int tag = static_cast<int>(h % static_cast<uint64_t>(world_.tag_bound));
  {
    // MPI_Comm_create_group has no non-blocking form: a peer process that
    // never comes ends the job through the watchdog.
    MpiWatchdogGuard guard(
        timeout_,
        absl::StrCat(fp_.ToString(), " on group ", GroupString(group_.members),
                     ": creating the group's MPI communicator timed out after ",
                     absl::FormatDuration(timeout_), " (device ", device_, " waited for processes ",
                     absl::StrJoin(group_.processes, ","), ")"));
    rc = MPI_Comm_create_group(world_.comm, mpi_group, tag, &group_.comm);
  }
  MPI_Group_free(&mpi_group);
  if (absl::Status st = MpiCallStatus(rc, "MPI_Comm_create_group"); !st.ok()) return st;
  MPI_Comm_set_errhandler(group_.comm, MPI_ERRORS_RETURN);
  return absl::OkStatus();
}

absl::Status MpiGroupExchange::ExchangeHeaders() {
  const int n = static_cast<int>(group_.processes.size());
  std::vector<MpiCallHeader> theirs(static_cast<size_t>(n));
  // MPI reads the sent header until the send completes, which a peer that
  // never comes may prevent: then the copy is left to MPI (never freed).
  auto* sent = new MpiCallHeader(header_);
  std::vector<MPI_Request> recvs, sends;
  std::vector<int> recv_from;
  for (int i = 0; i < n; ++i) {
    if (i == group_.my_index) continue;
    MPI_Request r;
    int rc = MPI_Irecv(&theirs[static_cast<size_t>(i)], sizeof(MpiCallHeader), MPI_BYTE, i,
                       kMpiHeaderTag, comm(), &r);
    if (absl::Status st = MpiCallStatus(rc, "MPI_Irecv"); !st.ok()) return st;
    recvs.push_back(r);
    recv_from.push_back(i);
    rc = MPI_Isend(sent, sizeof(MpiCallHeader), MPI_BYTE, i, kMpiHeaderTag, comm(), &r);
    if (absl::Status st = MpiCallStatus(rc, "MPI_Isend"); !st.ok()) return st;
    sends.push_back(r);
  }
  std::vector<bool> pending;
  absl::Status st = Poll(recvs, pending);
  if (!st.ok()) {
    // Withdraw what a late peer would otherwise match against a later
    // collective's header.
    std::vector<std::string> missing;
    for (size_t k = 0; k < recvs.size(); ++k) {
      if (!pending[k]) continue;
      missing.push_back(group_.DevicesOf(recv_from[k]));
      MPI_Cancel(&recvs[k]);
      MPI_Wait(&recvs[k], MPI_STATUS_IGNORE);
    }
    bool all_sent = true;
    for (MPI_Request& r : sends) {
      int done = 0;
      MPI_Test(&r, &done, MPI_STATUS_IGNORE);
      if (!done) {
        all_sent = false;
        MPI_Request_free(&r);
      }
    }
    if (all_sent) delete sent;
    if (absl::IsDeadlineExceeded(st)) {
      return absl::DeadlineExceededError(absl::StrCat(
          fp_.ToString(), " on group ", GroupString(group_.members), " timed out after ",
          absl::FormatDuration(timeout_), ": ", absl::StrJoin(missing, ", "),
          " never arrived (device ", device_, " waited)"));
    }
    return st;
  }
  std::vector<bool> unused;
  absl::Status sent_status = Poll(sends, unused);
  if (sent_status.ok()) delete sent;
  RETURN_IF_ERROR(sent_status);
  for (int k = 0; k < static_cast<int>(recv_from.size()); ++k) {
    const int i = recv_from[static_cast<size_t>(k)];
    const MpiCallHeader& h = theirs[static_cast<size_t>(i)];
    if (h.program != header_.program) {
      return absl::FailedPreconditionError(absl::StrCat(
          "collective mismatch at ", fp_.ToString(), ": process ",
          group_.processes[static_cast<size_t>(i)], " runs a different program than process ",
          group_.processes[static_cast<size_t>(group_.my_index)],
          " (their per-device modules differ; they run ", Describe(h), ")"));
    }
    if (h.call != header_.call || h.sequence != header_.sequence) {
      return absl::FailedPreconditionError(absl::StrCat(
          "collective mismatch at sequence ", fp_.sequence, ": device ", device_, " runs ",
          fp_.ToString(), " on group ", GroupString(group_.members), " with ", header_.bytes,
          " bytes, but ", group_.DevicesOf(i), " run ", Describe(h)));
    }
  }
  return absl::OkStatus();
}

// Polls until every request completes, the deadline passes
// (DeadlineExceeded; `pending` marks the requests still open) or this
// process fails otherwise (another of its devices failed).
absl::Status MpiGroupExchange::Poll(std::vector<MPI_Request>& requests,
                                    std::vector<bool>& pending) {
  pending.assign(requests.size(), true);
  int64_t rounds = 0;
  for (;;) {
    bool all = true;
    for (size_t k = 0; k < requests.size(); ++k) {
      if (!pending[k]) continue;
      int flag = 0;
      int rc = MPI_Test(&requests[k], &flag, MPI_STATUS_IGNORE);
      if (absl::Status st = MpiCallStatus(rc, fp_.ToString() + ": MPI_Test"); !st.ok()) return st;
      if (flag) {
        pending[k] = false;
      } else {
        all = false;
      }
    }
    if (all) return absl::OkStatus();
    ++rounds;
    if (rounds < 64) continue;
    if (Clock::now() >= deadline_) return absl::DeadlineExceededError("timed out");
    if (rounds % 64 == 0) {
      if (absl::Status f = local_.failure(); !f.ok()) return f;
    }
    // Leave the core to device threads once a wait is clearly not short.
    if (rounds < 2000) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
}

}  // namespace sharc::runtime
