// The five collectives of the in-process communicator
// (runtime/in_process_communicator.h), each a computation over one round of
// its members (in_process_rendezvous.cc), and RunLed for layered backends.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hlo/base/status_macros.h"
#include "runtime/communicator_checks.h"
#include "runtime/in_process_internal.h"
#include "runtime/reduction.h"

namespace sharc::runtime {

using namespace in_process;  // NOLINT: the communicator's shared helpers

namespace {

// Element loops larger than this may use the device's OpenMP threads.
constexpr int64_t kParallelBytes = int64_t{1} << 20;
// Work unit of the all-reduce: reduce a block into our output, then copy it
// to the other members while it is still in cache.
constexpr int64_t kAllReduceBlockBytes = 16384;
// Long rows are split into pieces of this size when copies run in parallel.
constexpr int64_t kCopyPieceBytes = 256 * 1024;

// Copies `rows` rows of `row_bytes` from src (stride src_stride) to dst
// (stride dst_stride), using up to `threads` OpenMP threads when large.
void StridedCopy(uint8_t* dst, int64_t dst_stride, const uint8_t* src, int64_t src_stride,
                 int64_t rows, int64_t row_bytes, int threads) {
  if (rows <= 0 || row_bytes <= 0) return;
  const int64_t total = rows * row_bytes;
  if (threads > 1 && total >= kParallelBytes) {
    const int64_t pieces = std::max<int64_t>(1, (row_bytes + kCopyPieceBytes - 1) / kCopyPieceBytes);
    const int64_t piece = (row_bytes + pieces - 1) / pieces;
    const int64_t tasks = rows * pieces;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t t = 0; t < tasks; ++t) {
      const int64_t r = t / pieces, k = t % pieces;
      const int64_t begin = k * piece, end = std::min(row_bytes, begin + piece);
      if (begin < end) {
        std::memcpy(dst + r * dst_stride + begin, src + r * src_stride + begin,
                    static_cast<size_t>(end - begin));
      }
    }
    return;
  }
  if (dst_stride == row_bytes && src_stride == row_bytes) {
    std::memcpy(dst, src, static_cast<size_t>(total));
    return;
  }
  for (int64_t r = 0; r < rows; ++r) {
    std::memcpy(dst + r * dst_stride, src + r * src_stride, static_cast<size_t>(row_bytes));
  }
}

// A device index the collective can be called for.
absl::Status CheckDeviceIndex(int64_t device, int64_t num_devices) {
  if (device >= 0 && device < num_devices) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("device ", device, " is outside [0, ", num_devices, ")"));
}

}  // namespace

// ---------------------------------------------------------------- the ops --

#define SHARC_LOCAL_CHECK(expr)                                                       \
  do {                                                                                \
    absl::Status sharc_local_status_ = (expr);                                        \
    if (!sharc_local_status_.ok()) {                                                  \
      return LocalError(device, absl::Status(sharc_local_status_.code(),              \
                                             absl::StrCat(fingerprint.ToString(), ": ", \
                                                          sharc_local_status_.message()))); \
    }                                                                                 \
  } while (false)

absl::Status InProcessCommunicator::AllReduce(int64_t device,
                                              const CollectiveFingerprint& fingerprint,
                                              absl::Span<const int64_t> group, ReductionKind kind,
                                              const Buffer& input, Buffer& output) {
  RETURN_IF_ERROR(CheckDeviceIndex(device, num_devices_));
  SHARC_LOCAL_CHECK(ValidateAllReduce(kind, input, output));
  absl::StatusOr<int64_t> position = PositionInGroup(device, group);
  SHARC_LOCAL_CHECK(position.status());

  const hlo::PrimitiveType type = input.type();
  const int64_t n = input.num_elements();
  const int64_t w = hlo::ByteWidth(type);
  const int threads = options_.threads_per_device;
  Call call = Call::For(device, fingerprint, group, *position, input, output,
                        100 + static_cast<uint64_t>(kind));
  // Eagerly every member reduces all g inputs itself, so stay eager only
  // while that is cheaper than the second rendezvous of the split path.
  call.eager_limit = 2 * kEagerBytes / static_cast<int64_t>(group.size());
  return Run(call, [&](const Round& r) {
    if (r.eager) {
      // Small: every member reduces everything into its own output.
      ReduceElements(type, kind, r.inputs, r.size, 0, n, r.outputs[r.position]);
      return;
    }
    // Member p reduces slice p (whole cache lines) and writes it to everyone.
    const int64_t unit = std::max<int64_t>(1, 64 / w);
    const int64_t units = (n + unit - 1) / unit;
    const int64_t per = ((units + r.size - 1) / r.size) * unit;
    const int64_t lo = std::min(n, r.position * per);
    const int64_t hi = std::min(n, lo + per);
    const int64_t block = std::max<int64_t>(unit, kAllReduceBlockBytes / w);
    const int64_t blocks = (hi - lo + block - 1) / block;
    auto do_block = [&](int64_t i) {
      const int64_t b = lo + i * block;
      const int64_t e = std::min(hi, b + block);
      uint8_t* own = static_cast<uint8_t*>(r.outputs[r.position]) + b * w;
      ReduceElements(type, kind, r.inputs, r.size, b, e - b, own);
      for (int64_t j = 0; j < r.size; ++j) {
        if (j == r.position) continue;
        std::memcpy(static_cast<uint8_t*>(r.outputs[j]) + b * w, own,
                    static_cast<size_t>((e - b) * w));
      }
    };
    if (threads > 1 && (hi - lo) * w >= kParallelBytes) {
#pragma omp parallel for num_threads(threads) schedule(static)
      for (int64_t i = 0; i < blocks; ++i) do_block(i);
    } else {
      for (int64_t i = 0; i < blocks; ++i) do_block(i);
    }
  });
}

absl::Status InProcessCommunicator::AllGather(int64_t device,
                                              const CollectiveFingerprint& fingerprint,
                                              absl::Span<const int64_t> group, int64_t dim,
                                              const Buffer& input, Buffer& output) {
  RETURN_IF_ERROR(CheckDeviceIndex(device, num_devices_));
  SHARC_LOCAL_CHECK(ValidateAllGather(static_cast<int64_t>(group.size()), dim, input, output));
  absl::StatusOr<int64_t> position = PositionInGroup(device, group);
  SHARC_LOCAL_CHECK(position.status());
  const std::vector<int64_t>& dims = input.shape().dims();
  const int64_t outer = DimProduct(dims, 0, static_cast<size_t>(dim));
  const int64_t piece = DimProduct(dims, static_cast<size_t>(dim), dims.size()) *
                        hlo::ByteWidth(input.type());
  const int threads = options_.threads_per_device;
  Call call = Call::For(device, fingerprint, group, *position, input, output,
                        200 + static_cast<uint64_t>(dim));
  return Run(call, [&](const Round& r) {
    // Pull every member's piece of each row into our own output.
    uint8_t* out = static_cast<uint8_t*>(r.outputs[r.position]);
    for (int64_t j = 0; j < r.size; ++j) {
      StridedCopy(out + j * piece, r.size * piece, static_cast<const uint8_t*>(r.inputs[j]), piece,
                  outer, piece, threads);
    }
  });
}

absl::Status InProcessCommunicator::ReduceScatter(int64_t device,
                                                  const CollectiveFingerprint& fingerprint,
                                                  absl::Span<const int64_t> group,
                                                  ReductionKind kind, int64_t dim,
                                                  const Buffer& input, Buffer& output) {
  RETURN_IF_ERROR(CheckDeviceIndex(device, num_devices_));
  SHARC_LOCAL_CHECK(
      ValidateReduceScatter(static_cast<int64_t>(group.size()), kind, dim, input, output));
  absl::StatusOr<int64_t> position = PositionInGroup(device, group);
  SHARC_LOCAL_CHECK(position.status());
  const hlo::Shape& expected = output.shape();
  const hlo::PrimitiveType type = input.type();
  const int64_t w = hlo::ByteWidth(type);
  const std::vector<int64_t>& dims = expected.dims();
  const int64_t outer = DimProduct(dims, 0, static_cast<size_t>(dim));
  const int64_t chunk = DimProduct(dims, static_cast<size_t>(dim), dims.size());  // elements
  const int threads = options_.threads_per_device;
  Call call = Call::For(device, fingerprint, group, *position, input, output,
                        300 + static_cast<uint64_t>(dim) * 8 + static_cast<uint64_t>(kind));
  return Run(call, [&](const Round& r) {
    // Each member reduces its own chunk of every row, into its own output.
    uint8_t* out = static_cast<uint8_t*>(r.outputs[r.position]);
    const int64_t row = r.size * chunk;
    const int64_t total = outer * chunk;
    if (threads > 1 && total * w >= kParallelBytes) {
      // Split rows into pieces so that a single long row also spreads out.
      const int64_t piece_elems = std::max<int64_t>(1, kCopyPieceBytes / w);
      const int64_t pieces = (chunk + piece_elems - 1) / piece_elems;
      const int64_t tasks = outer * pieces;
#pragma omp parallel for num_threads(threads) schedule(static)
      for (int64_t t = 0; t < tasks; ++t) {
        const int64_t o = t / pieces, k = t % pieces;
        const int64_t b = k * piece_elems, e = std::min(chunk, b + piece_elems);
        ReduceElements(type, kind, r.inputs, r.size, o * row + r.position * chunk + b, e - b,
                       out + (o * chunk + b) * w);
      }
      return;
    }
    for (int64_t o = 0; o < outer; ++o) {
      ReduceElements(type, kind, r.inputs, r.size, o * row + r.position * chunk, chunk,
                     out + o * chunk * w);
    }
  });
}

absl::Status InProcessCommunicator::AllToAll(int64_t device,
                                             const CollectiveFingerprint& fingerprint,
                                             absl::Span<const int64_t> group, int64_t dim,
                                             const Buffer& input, Buffer& output) {
  RETURN_IF_ERROR(CheckDeviceIndex(device, num_devices_));
  SHARC_LOCAL_CHECK(ValidateAllToAll(static_cast<int64_t>(group.size()), dim, input, output));
  absl::StatusOr<int64_t> position = PositionInGroup(device, group);
  SHARC_LOCAL_CHECK(position.status());
  const int64_t g = static_cast<int64_t>(group.size());
  const std::vector<int64_t>& dims = input.shape().dims();
  const int64_t outer = DimProduct(dims, 0, static_cast<size_t>(dim));
  const int64_t chunk_bytes = (dims[static_cast<size_t>(dim)] / g) *
                              DimProduct(dims, static_cast<size_t>(dim) + 1, dims.size()) *
                              hlo::ByteWidth(input.type());
  const int threads = options_.threads_per_device;
  Call call = Call::For(device, fingerprint, group, *position, input, output,
                        400 + static_cast<uint64_t>(dim));
  return Run(call, [&](const Round& r) {
    // Our output chunk j is member j's input chunk p, in every row.
    uint8_t* out = static_cast<uint8_t*>(r.outputs[r.position]);
    const int64_t row = r.size * chunk_bytes;
    for (int64_t j = 0; j < r.size; ++j) {
      StridedCopy(out + j * chunk_bytes, row,
                  static_cast<const uint8_t*>(r.inputs[j]) + r.position * chunk_bytes, row, outer,
                  chunk_bytes, threads);
    }
  });
}

absl::Status InProcessCommunicator::CollectivePermute(
    int64_t device, const CollectiveFingerprint& fingerprint,
    absl::Span<const std::pair<int64_t, int64_t>> pairs, const Buffer& input, Buffer& output) {
  RETURN_IF_ERROR(CheckDeviceIndex(device, num_devices_));
  SHARC_LOCAL_CHECK(ValidateCollectivePermute(input, output));
  if (poisoned_.load(std::memory_order_acquire)) return failure();
  // Everyone named in a pair takes part, in id order.
  absl::InlinedVector<int64_t, 8> participants;
  int64_t source = -1;
  for (const auto& [s, t] : pairs) {
    if (s < 0 || s >= num_devices_ || t < 0 || t >= num_devices_) {
      SHARC_LOCAL_CHECK(absl::InvalidArgumentError(absl::StrCat(
          "pair {", s, ",", t, "} names a device outside [0, ", num_devices_, ")")));
    }
    if (t == device) {
      if (source >= 0) {
        SHARC_LOCAL_CHECK(absl::InvalidArgumentError(
            absl::StrCat("device ", device, " is the target of more than one pair")));
      }
      source = s;
    }
    participants.push_back(s);
    participants.push_back(t);
  }
  std::sort(participants.begin(), participants.end());
  participants.erase(std::unique(participants.begin(), participants.end()), participants.end());
  if (std::find(participants.begin(), participants.end(), device) == participants.end()) {
    if (output.size_bytes() > 0) std::memset(output.data(), 0, static_cast<size_t>(output.size_bytes()));
    return absl::OkStatus();
  }
  absl::Span<const int64_t> group(participants.data(), participants.size());
  absl::StatusOr<int64_t> position = PositionInGroup(device, group);
  SHARC_LOCAL_CHECK(position.status());
  int64_t source_position = -1;
  if (source >= 0) source_position = *PositionInGroup(source, group);
  uint64_t pair_hash = 500;
  for (const auto& [s, t] : pairs) pair_hash = Mix(Mix(pair_hash, static_cast<uint64_t>(s)), static_cast<uint64_t>(t));
  const int64_t bytes = output.size_bytes();
  Call call = Call::For(device, fingerprint, group, *position, input, output,
                        pair_hash);
  return Run(call, [&](const Round& r) {
    void* out = r.outputs[r.position];
    if (bytes == 0) return;
    if (source_position < 0) {
      std::memset(out, 0, static_cast<size_t>(bytes));
    } else {
      std::memcpy(out, r.inputs[source_position], static_cast<size_t>(bytes));
    }
  });
}

absl::Status InProcessCommunicator::RunLed(int64_t device,
                                           const CollectiveFingerprint& fingerprint,
                                           absl::Span<const int64_t> group, uint64_t tag,
                                           const Buffer& input, Buffer& output,
                                           absl::FunctionRef<absl::Status(const Round&)> lead) {
  RETURN_IF_ERROR(CheckDeviceIndex(device, num_devices_));
  absl::StatusOr<int64_t> position = PositionInGroup(device, group);
  SHARC_LOCAL_CHECK(position.status());
  Call call = Call::For(device, fingerprint, group, *position, input, output, tag);
  // Never eager: the leader writes every member's output in place, so all
  // of them must stay until it is done (the departure rendezvous).
  call.eager_limit = -1;
  absl::Status led;
  absl::Status st = Run(call, [&](const Round& r) {
    if (r.position != 0) return;
    led = lead(r);
    if (!led.ok()) Poison(led);
  });
  RETURN_IF_ERROR(st);
  RETURN_IF_ERROR(led);
  // The leader poisons before it departs, so a failed lead is visible here.
  if (poisoned_.load(std::memory_order_acquire)) return failure();
  return absl::OkStatus();
}

#undef SHARC_LOCAL_CHECK

}  // namespace sharc::runtime
