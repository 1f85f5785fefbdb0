// The in-process communicator called directly by device threads: results
// against closed forms, bitwise coherence and repeatability of all-reduce,
// and the failure contract (mismatch, abort, a device that never arrives, a
// device that finished, bad arguments) — every fault ends in an error within
// the timeout, never a hang.
#include "runtime/in_process_communicator.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/runtime/runtime_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::runtime {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using testing_util::RunDevices;

using Clock = std::chrono::steady_clock;

Buffer MakeF32(std::vector<int64_t> dims, float fill_base, int64_t device) {
  Buffer b = *Buffer::Allocate(hlo::Shape(hlo::PrimitiveType::kF32, std::move(dims)));
  auto v = b.typed<float>();
  for (size_t i = 0; i < v.size(); ++i) v[i] = fill_base + static_cast<float>(device * 1000 + i);
  return b;
}

CollectiveFingerprint Fp(hlo::Opcode op, std::string_view name, int64_t seq) {
  CollectiveFingerprint fp;
  fp.opcode = op;
  fp.name = name;
  fp.channel_id = 1;
  fp.sequence = seq;
  return fp;
}

TEST(InProcessCommunicatorTest, AllReduceSumClosedForm) {
  for (int64_t n : {1, 2, 3, 4, 8}) {
    InProcessCommunicator comm(n);
    std::vector<Buffer> outs(static_cast<size_t>(n));
    std::vector<int64_t> group;
    for (int64_t d = 0; d < n; ++d) group.push_back(d);
    std::vector<absl::Status> st(static_cast<size_t>(n));
    RunDevices(n, [&](int64_t d) {
      Buffer in = *Buffer::Allocate(hlo::Shape(hlo::PrimitiveType::kS32, {1001}));
      for (int i = 0; i < 1001; ++i) in.typed<int32_t>()[i] = static_cast<int32_t>(d + 1 + i);
      outs[d] = *Buffer::Allocate(in.shape());
      st[d] = comm.AllReduce(d, Fp(hlo::Opcode::kAllReduce, "ar", 0), group, ReductionKind::kSum,
                             in, outs[d]);
    });
    for (int64_t d = 0; d < n; ++d) {
      ASSERT_OK(st[d]);
      for (int i = 0; i < 1001; ++i) {
        ASSERT_EQ(outs[d].typed<int32_t>()[i], n * (n + 1) / 2 + n * i) << "n=" << n << " d=" << d;
      }
    }
  }
}

// Random floats reduce to the same bits on every device and in every run,
// whether waiting devices spin or block.
TEST(InProcessCommunicatorTest, AllReduceIsBitwiseCoherentAndRepeatable) {
  for (int64_t n : {2, 3, 4, 8}) {
    std::vector<std::vector<float>> inputs(static_cast<size_t>(n));
    std::mt19937 rng(static_cast<uint32_t>(n));
    std::uniform_real_distribution<float> dist(-1e3f, 1e3f);
    const int64_t size = 50000;
    for (auto& v : inputs) {
      v.resize(size);
      for (float& x : v) x = dist(rng);
    }
    std::vector<uint8_t> first;
    for (int run = 0; run < 6; ++run) {
      InProcessOptions options;
      options.spin = run % 2 == 0 ? absl::Microseconds(-1) : absl::ZeroDuration();
      options.threads_per_device = run % 3 == 2 ? 2 : 1;
      InProcessCommunicator comm(n, options);
      std::vector<Buffer> outs(static_cast<size_t>(n));
      std::vector<int64_t> group;
      for (int64_t d = n - 1; d >= 0; --d) group.push_back(d);  // not sorted on purpose
      RunDevices(n, [&](int64_t d) {
        Buffer in = *Buffer::Allocate(hlo::Shape(hlo::PrimitiveType::kF32, {size}));
        std::memcpy(in.data(), inputs[d].data(), size * 4);
        outs[d] = *Buffer::Allocate(in.shape());
        ASSERT_OK(comm.AllReduce(d, Fp(hlo::Opcode::kAllReduce, "ar", 5), group,
                                 ReductionKind::kSum, in, outs[d]));
      });
      std::vector<uint8_t> bits(static_cast<size_t>(size) * 4);
      std::memcpy(bits.data(), outs[0].data(), bits.size());
      for (int64_t d = 1; d < n; ++d) {
        ASSERT_EQ(std::memcmp(outs[d].data(), bits.data(), bits.size()), 0)
            << "device " << d << " differs from device 0 (n=" << n << ")";
      }
      if (run == 0) {
        first = bits;
        // Member order is the group's: ((x[n-1] + x[n-2]) + ...) + x[0].
        for (int64_t i = 0; i < size; i += 997) {
          float want = inputs[n - 1][i];
          for (int64_t d = n - 2; d >= 0; --d) want += inputs[d][i];
          float got;
          std::memcpy(&got, bits.data() + i * 4, 4);
          ASSERT_EQ(got, want) << "element " << i;
        }
      } else {
        ASSERT_EQ(bits, first) << "run " << run << " differs from run 0";
      }
    }
  }
}

TEST(InProcessCommunicatorTest, ManyCollectivesOnMoreDevicesThanCores) {
  // 8 devices (more than this machine's cores): thousands of small
  // collectives must complete promptly because waiting devices block.
  const int64_t n = 8;
  InProcessCommunicator comm(n);
  const int rounds = 400;
  std::vector<absl::Status> st(n);
  auto start = Clock::now();
  RunDevices(n, [&](int64_t d) {
    Buffer in = MakeF32({256}, 0, d);
    Buffer out = *Buffer::Allocate(in.shape());
    Buffer gathered = *Buffer::Allocate(hlo::Shape(hlo::PrimitiveType::kF32, {256 * 2}));
    const std::vector<int64_t> all = {0, 1, 2, 3, 4, 5, 6, 7};
    const std::vector<int64_t> pair = {d & ~int64_t{1}, d | 1};
    for (int r = 0; r < rounds; ++r) {
      absl::Status s = comm.AllReduce(d, Fp(hlo::Opcode::kAllReduce, "ar", 2 * r), all,
                                      ReductionKind::kMax, in, out);
      if (s.ok()) {
        s = comm.AllGather(d, Fp(hlo::Opcode::kAllGather, "ag", 2 * r + 1), pair, 0, in, gathered);
      }
      if (!s.ok()) {
        st[d] = s;
        return;
      }
    }
  });
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  for (const absl::Status& s : st) ASSERT_OK(s);
  EXPECT_LT(seconds, 20.0);
  std::printf("8 devices: %d all-reduce + all-gather rounds in %.3f s (%.1f us per collective)\n",
              rounds, seconds, seconds * 1e6 / (2 * rounds));
}

// Small (eager, one rendezvous) and large (two rendezvous) rounds
// interleaved on overlapping groups: staging buffers must not be reused
// before every reader is done, and results must stay exact.
TEST(InProcessCommunicatorTest, MixedEagerAndLargeRoundsStayCorrect) {
  for (absl::Duration spin : {absl::Microseconds(-1), absl::ZeroDuration()}) {
    InProcessOptions options;
    options.spin = spin;
    const int64_t n = 4;
    InProcessCommunicator comm(n, options);
    std::vector<std::string> errors(n);
    RunDevices(n, [&](int64_t d) {
      const std::vector<int64_t> all = {0, 1, 2, 3};
      const std::vector<int64_t> row = {d & 2, (d & 2) + 1};
      const std::vector<int64_t> column = {d & 1, (d & 1) + 2};
      for (int64_t r = 0; r < 150; ++r) {
        const int64_t kind = r % 3;
        const int64_t elems = kind == 0 ? 40000 : 16;
        Buffer in = *Buffer::Allocate(hlo::Shape(hlo::PrimitiveType::kS64, {elems}));
        for (int64_t i = 0; i < elems; ++i) in.typed<int64_t>()[i] = r * 100 + d * 10 + i % 7;
        CollectiveFingerprint fp = Fp(hlo::Opcode::kAllReduce, "mixed", r);
        absl::Status st;
        Buffer out;
        if (kind == 2) {
          fp.opcode = hlo::Opcode::kAllGather;
          out = *Buffer::Allocate(hlo::Shape(hlo::PrimitiveType::kS64, {2 * elems}));
          st = comm.AllGather(d, fp, column, 0, in, out);
        } else {
          out = *Buffer::Allocate(in.shape());
          st = comm.AllReduce(d, fp, kind == 0 ? all : row, ReductionKind::kSum, in, out);
        }
        // Scribble over the input: eager peers must have copied it.
        for (int64_t i = 0; i < elems; ++i) in.typed<int64_t>()[i] = -1;
        if (!st.ok()) {
          errors[d] = std::string(st.message());
          return;
        }
        for (int64_t i = 0; i < out.num_elements(); ++i) {
          int64_t want;
          if (kind == 0) {
            want = 4 * (r * 100 + i % 7) + 10 * (0 + 1 + 2 + 3);
          } else if (kind == 1) {
            want = 2 * (r * 100 + i % 7) + 10 * (row[0] + row[1]);
          } else {
            int64_t src = column[i / elems];
            want = r * 100 + src * 10 + (i % elems) % 7;
          }
          if (out.typed<int64_t>()[i] != want) {
            errors[d] = absl::StrCat("round ", r, " element ", i, ": ", out.typed<int64_t>()[i],
                                     " != ", want);
            return;
          }
        }
      }
    });
    for (int64_t d = 0; d < n; ++d) EXPECT_EQ(errors[d], "") << "device " << d;
  }
}

// Only small (one-rendezvous) rounds, on groups that change from round to
// round, with devices that skip rounds and pause at random: a device reuses
// a staging buffer only after every reader of its last round is done, even
// when those readers are not in the group it meets next.
TEST(InProcessCommunicatorTest, EagerRoundsOnChangingGroupsStayCorrect) {
  const int64_t n = 4;
  const std::vector<std::vector<int64_t>> groups = {
      {0, 1}, {1, 2}, {0, 1, 2, 3}, {2, 3}, {0, 2}, {3, 1, 0}, {0, 3}, {1, 3}};
  for (absl::Duration spin : {absl::Microseconds(-1), absl::ZeroDuration()}) {
    InProcessOptions options;
    options.spin = spin;
    options.timeout = absl::Seconds(30);
    InProcessCommunicator comm(n, options);
    std::vector<std::string> errors(n);
    RunDevices(n, [&](int64_t d) {
      std::mt19937 rng(static_cast<uint32_t>(d + 1));
      for (int64_t r = 0; r < 400; ++r) {
        const std::vector<int64_t>& group = groups[static_cast<size_t>((r * 5 + r / 8) % 8)];
        if (std::find(group.begin(), group.end(), d) == group.end()) continue;
        if (rng() % 16 == 0) std::this_thread::sleep_for(std::chrono::microseconds(rng() % 300));
        const int64_t elems = 1 + (r % 9) * 50;
        Buffer in = *Buffer::Allocate(hlo::Shape(hlo::PrimitiveType::kS32, {elems}));
        for (int64_t i = 0; i < elems; ++i) {
          in.typed<int32_t>()[i] = static_cast<int32_t>(r * 1000 + d * 100 + i % 13);
        }
        Buffer out = *Buffer::Allocate(in.shape());
        absl::Status st = comm.AllReduce(d, Fp(hlo::Opcode::kAllReduce, "changing", r), group,
                                         ReductionKind::kSum, in, out);
        // Scribble over the input: peers read only the staged copy.
        for (int64_t i = 0; i < elems; ++i) in.typed<int32_t>()[i] = -1;
        if (!st.ok()) {
          errors[d] = std::string(st.message());
          return;
        }
        int64_t members = 0;
        for (int64_t m : group) members += m;
        const int64_t g = static_cast<int64_t>(group.size());
        for (int64_t i = 0; i < elems; ++i) {
          const int64_t want = g * (r * 1000 + i % 13) + 100 * members;
          if (out.typed<int32_t>()[i] != want) {
            errors[d] = absl::StrCat("round ", r, " element ", i, ": ", out.typed<int32_t>()[i],
                                     " != ", want);
            return;
          }
        }
      }
    });
    for (int64_t d = 0; d < n; ++d) EXPECT_EQ(errors[d], "") << "device " << d;
  }
}

TEST(InProcessCommunicatorTest, MismatchedCollectivesFailEveryParticipant) {
  InProcessOptions options;
  options.timeout = absl::Seconds(10);
  InProcessCommunicator comm(2, options);
  std::vector<absl::Status> st(2);
  auto start = Clock::now();
  RunDevices(2, [&](int64_t d) {
    Buffer in = MakeF32({4}, 0, d);
    Buffer out = *Buffer::Allocate(in.shape());
    st[d] = comm.AllReduce(d, Fp(hlo::Opcode::kAllReduce, d == 0 ? "sum_grads" : "sum_loss", 3),
                           {0, 1}, ReductionKind::kSum, in, out);
  });
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 5.0);
  for (const absl::Status& s : st) {
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
    EXPECT_THAT(std::string(s.message()),
                AllOf(HasSubstr("mismatch"), HasSubstr("sum_grads"), HasSubstr("sum_loss"),
                      HasSubstr("sequence 3")));
  }
}

TEST(InProcessCommunicatorTest, DifferentOpcodesAndShapesMismatch) {
  InProcessOptions options;
  options.timeout = absl::Seconds(10);
  {
    InProcessCommunicator comm(2, options);
    std::vector<absl::Status> st(2);
    RunDevices(2, [&](int64_t d) {
      Buffer in = MakeF32({4}, 0, d);
      if (d == 0) {
        Buffer out = *Buffer::Allocate(in.shape());
        st[d] = comm.AllReduce(d, Fp(hlo::Opcode::kAllReduce, "x", 0), {0, 1}, ReductionKind::kSum,
                               in, out);
      } else {
        Buffer out = *Buffer::Allocate(hlo::Shape(hlo::PrimitiveType::kF32, {8}));
        st[d] = comm.AllGather(d, Fp(hlo::Opcode::kAllGather, "x", 0), {0, 1}, 0, in, out);
      }
    });
    for (const absl::Status& s : st) {
      EXPECT_THAT(std::string(s.message()), AllOf(HasSubstr("all-reduce"), HasSubstr("all-gather")))
          << s;
    }
  }
  {
    // Same collective, different shapes (an uneven shard): refused, not read
    // out of bounds.
    InProcessCommunicator comm(2, options);
    std::vector<absl::Status> st(2);
    RunDevices(2, [&](int64_t d) {
      Buffer in = MakeF32({d == 0 ? 4 : 5}, 0, d);
      Buffer out = *Buffer::Allocate(in.shape());
      st[d] = comm.AllReduce(d, Fp(hlo::Opcode::kAllReduce, "x", 0), {0, 1}, ReductionKind::kSum,
                             in, out);
    });
    for (const absl::Status& s : st) {
      EXPECT_THAT(std::string(s.message()), AllOf(HasSubstr("mismatch"), HasSubstr("16 bytes"),
                                                  HasSubstr("20 bytes")))
          << s;
    }
  }
}

TEST(InProcessCommunicatorTest, DeviceThatFailsWakesItsPeers) {
  InProcessOptions options;
  options.timeout = absl::Seconds(30);
  InProcessCommunicator comm(4, options);
  std::vector<absl::Status> st(4);
  auto start = Clock::now();
  RunDevices(4, [&](int64_t d) {
    Buffer in = MakeF32({64}, 0, d);
    Buffer out = *Buffer::Allocate(in.shape());
    const std::vector<int64_t> all = {0, 1, 2, 3};
    st[d] = comm.AllReduce(d, Fp(hlo::Opcode::kAllReduce, "first", 0), all, ReductionKind::kSum,
                           in, out);
    if (!st[d].ok()) return;
    if (d == 2) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      comm.Abort(2, absl::InternalError("kernel %dot.3 ran out of memory"));
      st[d] = absl::InternalError("failed on purpose");
      return;
    }
    st[d] = comm.AllReduce(d, Fp(hlo::Opcode::kAllReduce, "second", 1), all, ReductionKind::kSum,
                           in, out);
  });
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 5.0);
  for (int64_t d : {0, 1, 3}) {
    EXPECT_THAT(std::string(st[d].message()),
                HasSubstr("device 2 failed: kernel %dot.3 ran out of memory"))
        << st[d];
  }
  EXPECT_THAT(std::string(comm.failure().message()), HasSubstr("device 2 failed"));
}

TEST(InProcessCommunicatorTest, DeviceThatNeverArrivesTimesOut) {
  InProcessOptions options;
  options.timeout = absl::Seconds(1);
  InProcessCommunicator comm(4, options);
  std::vector<absl::Status> st(4);
  std::vector<double> elapsed(4);
  RunDevices(4, [&](int64_t d) {
    auto start = Clock::now();
    Buffer in = MakeF32({64}, 0, d);
    Buffer out = *Buffer::Allocate(in.shape());
    if (d == 3) std::this_thread::sleep_for(std::chrono::milliseconds(1600));
    st[d] = comm.AllReduce(d, Fp(hlo::Opcode::kAllReduce, "grad_sum", 7), {0, 1, 2, 3},
                           ReductionKind::kSum, in, out);
    elapsed[d] = std::chrono::duration<double>(Clock::now() - start).count();
  });
  for (int64_t d : {0, 1, 2}) {
    EXPECT_EQ(st[d].code(), absl::StatusCode::kDeadlineExceeded) << st[d];
    EXPECT_THAT(std::string(st[d].message()),
                AllOf(HasSubstr("all-reduce %grad_sum"), HasSubstr("sequence 7"),
                      HasSubstr("{0,1,2,3}"), HasSubstr("device 3 never arrived")));
    EXPECT_GE(elapsed[d], 0.9);
    EXPECT_LT(elapsed[d], 1.5);
  }
  // The late device finds the communicator failed instead of waiting again.
  EXPECT_EQ(st[3].code(), absl::StatusCode::kDeadlineExceeded) << st[3];
  EXPECT_LT(elapsed[3], 1.9);
}

TEST(InProcessCommunicatorTest, PeerThatFinishedFailsTheWaitAtOnce) {
  InProcessOptions options;
  options.timeout = absl::Seconds(30);
  InProcessCommunicator comm(2, options);
  absl::Status st;
  auto start = Clock::now();
  RunDevices(2, [&](int64_t d) {
    if (d == 1) {
      comm.MarkFinished(1);
      return;
    }
    Buffer in = MakeF32({4}, 0, d);
    Buffer out = *Buffer::Allocate(in.shape());
    st = comm.AllReduce(0, Fp(hlo::Opcode::kAllReduce, "tail", 0), {0, 1}, ReductionKind::kSum, in,
                        out);
  });
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 5.0);
  EXPECT_THAT(std::string(st.message()),
              HasSubstr("device 1 finished its program without reaching all-reduce %tail"));
}

TEST(InProcessCommunicatorTest, BadArgumentsFailAndPoisonPeers) {
  InProcessOptions options;
  options.timeout = absl::Seconds(30);
  InProcessCommunicator comm(2, options);
  std::vector<absl::Status> st(2);
  RunDevices(2, [&](int64_t d) {
    Buffer in = MakeF32({4}, 0, d);
    Buffer out = *Buffer::Allocate(hlo::Shape(hlo::PrimitiveType::kF32, {d == 0 ? 4 : 3}));
    st[d] = comm.AllReduce(d, Fp(hlo::Opcode::kAllReduce, "ar", 0), {0, 1}, ReductionKind::kSum,
                           in, out);
  });
  EXPECT_THAT(std::string(st[1].message()), HasSubstr("output f32[3] differs from input f32[4]"));
  EXPECT_THAT(std::string(st[0].message()), HasSubstr("device 1 failed"));

  InProcessCommunicator comm2(2, options);
  Buffer in = MakeF32({4}, 0, 0);
  Buffer out = *Buffer::Allocate(in.shape());
  EXPECT_THAT(std::string(comm2.AllReduce(0, Fp(hlo::Opcode::kAllReduce, "ar", 0), {1}, ReductionKind::kSum, in, out).message()),
              HasSubstr("not in its group"));
  InProcessCommunicator comm3(2, options);
  EXPECT_THAT(std::string(comm3.AllReduce(0, Fp(hlo::Opcode::kAllReduce, "ar", 0), {0, 0}, ReductionKind::kSum, in, out).message()),
              HasSubstr("twice"));
  InProcessCommunicator comm4(2, options);
  EXPECT_THAT(std::string(comm4.AllReduce(0, Fp(hlo::Opcode::kAllReduce, "ar", 0), {0, 5}, ReductionKind::kSum, in, out).message()),
              HasSubstr("outside"));
  InProcessCommunicator comm5(1, options);
  EXPECT_THAT(std::string(comm5.AllReduce(0, Fp(hlo::Opcode::kAllReduce, "ar", 0), {0}, ReductionKind::kAnd, in, out).message()),
              HasSubstr("not defined on f32"));
  InProcessCommunicator comm6(1, options);
  Buffer bad_gather = *Buffer::Allocate(hlo::Shape(hlo::PrimitiveType::kF32, {5}));
  EXPECT_THAT(std::string(comm6.AllGather(0, Fp(hlo::Opcode::kAllGather, "ag", 0), {0}, 2, in, bad_gather).message()),
              HasSubstr("out of range"));
  EXPECT_FALSE(comm6.AllGather(7, Fp(hlo::Opcode::kAllGather, "ag", 0), {0}, 0, in, bad_gather).ok());
}

TEST(InProcessCommunicatorTest, LargeCollectivesWithOpenMpLoops) {
  // Buffers past the OpenMP threshold, with 2 threads per device.
  InProcessOptions options;
  options.threads_per_device = 2;
  const int64_t n = 2, rows = 3, cols = 2 * 300000;
  InProcessCommunicator comm(n, options);
  std::vector<absl::Status> st(n);
  std::vector<Buffer> rs(n), a2a(n), ag(n);
  RunDevices(n, [&](int64_t d) {
    Buffer in = MakeF32({rows, cols}, 1, d);
    rs[d] = *Buffer::Allocate(hlo::Shape(hlo::PrimitiveType::kF32, {rows, cols / n}));
    a2a[d] = *Buffer::Allocate(in.shape());
    ag[d] = *Buffer::Allocate(hlo::Shape(hlo::PrimitiveType::kF32, {rows, cols * n}));
    st[d] = comm.ReduceScatter(d, Fp(hlo::Opcode::kReduceScatter, "rs", 0), {0, 1},
                               ReductionKind::kSum, 1, in, rs[d]);
    if (st[d].ok()) st[d] = comm.AllToAll(d, Fp(hlo::Opcode::kAllToAll, "a2a", 1), {0, 1}, 1, in, a2a[d]);
    if (st[d].ok()) st[d] = comm.AllGather(d, Fp(hlo::Opcode::kAllGather, "ag", 2), {0, 1}, 1, in, ag[d]);
  });
  for (const absl::Status& s : st) ASSERT_OK(s);
  auto value = [&](int64_t dev, int64_t r, int64_t c) {
    return 1 + static_cast<float>(dev * 1000 + r * cols + c);
  };
  for (int64_t d = 0; d < n; ++d) {
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols / n; c += 4999) {
        int64_t src = d * (cols / n) + c;
        ASSERT_EQ(rs[d].typed<float>()[r * (cols / n) + c], value(0, r, src) + value(1, r, src));
        for (int64_t j = 0; j < n; ++j) {
          ASSERT_EQ(a2a[d].typed<float>()[r * cols + j * (cols / n) + c], value(j, r, src));
        }
      }
      for (int64_t c = 0; c < cols * n; c += 7919) {
        ASSERT_EQ(ag[d].typed<float>()[r * cols * n + c], value(c / cols, r, c % cols));
      }
    }
  }
}

}  // namespace
}  // namespace sharc::runtime
