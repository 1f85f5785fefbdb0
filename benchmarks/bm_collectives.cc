// In-process collectives (runtime::InProcessCommunicator) on 2 and 4 device
// threads, 4 KiB..64 MiB, next to memcpy of the same sizes in the same
// binary. Convention (as nccl-tests and ../shared/reference/perf_anchors.md
// section 5): S = the size of one device's full buffer: all-reduce in = out
// = S; all-gather in = S/n, out = S; reduce-scatter in = S, out = S/n;
// all-to-all in = out = S. bytes_per_second = S / t (algbw), t = wall time
// per collective. f32 data, sum reductions.
//
//   build-bench/benchmarks/bm_collectives --benchmark_min_time=0.2
// scripts/bench_collectives.sh runs it next to Open MPI (bm_mpi_collectives).
#include <benchmark/benchmark.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

#include "runtime/buffer.h"
#include "runtime/in_process_communicator.h"

namespace sharc::runtime {
namespace {

enum class Op { kAllReduce, kAllGather, kReduceScatter, kAllToAll };

const char* OpName(Op op) {
  switch (op) {
    case Op::kAllReduce: return "all-reduce";
    case Op::kAllGather: return "all-gather";
    case Op::kReduceScatter: return "reduce-scatter";
    case Op::kAllToAll: return "all-to-all";
  }
  return "?";
}

// Buffers and communicator for one (op, devices, size); shared by the
// benchmark's device threads. Only one fixture lives at a time so that the
// 64 MiB cases do not pile up.
struct Fixture {
  Fixture(Op op, int64_t n, int64_t bytes) : comm(n) {
    const int64_t elems = bytes / 4;
    for (int64_t d = 0; d < n; ++d) {
      group.push_back(d);
      int64_t in_elems = op == Op::kAllGather ? elems / n : elems;
      int64_t out_elems = op == Op::kReduceScatter ? elems / n : elems;
      in.push_back(*Buffer::Allocate(hlo::Shape(hlo::PrimitiveType::kF32, {in_elems})));
      out.push_back(*Buffer::Allocate(hlo::Shape(hlo::PrimitiveType::kF32, {out_elems}), true));
      auto v = in.back().typed<float>();
      for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i + d) % 17);
    }
    next_sequence.assign(static_cast<size_t>(n), 0);
  }
  InProcessCommunicator comm;
  std::vector<int64_t> group;
  std::vector<Buffer> in, out;
  std::vector<int64_t> next_sequence;  // slot d touched only by device d
};

std::mutex fixture_mu;
std::tuple<Op, int64_t, int64_t> fixture_key;
std::unique_ptr<Fixture> fixture;

Fixture* GetFixture(Op op, int64_t n, int64_t bytes) {
  std::lock_guard<std::mutex> lock(fixture_mu);
  auto key = std::make_tuple(op, n, bytes);
  if (fixture == nullptr || fixture_key != key) {
    fixture.reset();
    fixture = std::make_unique<Fixture>(op, n, bytes);
    fixture_key = key;
  }
  return fixture.get();
}

template <Op kOp>
void BM_Collective(benchmark::State& state) {
  const int64_t n = state.threads();
  const int64_t bytes = state.range(0);
  const int64_t d = state.thread_index();
  Fixture* f = GetFixture(kOp, n, bytes);
  CollectiveFingerprint fp;
  fp.opcode = kOp == Op::kAllReduce       ? hlo::Opcode::kAllReduce
              : kOp == Op::kAllGather     ? hlo::Opcode::kAllGather
              : kOp == Op::kReduceScatter ? hlo::Opcode::kReduceScatter
                                          : hlo::Opcode::kAllToAll;
  fp.name = OpName(kOp);
  int64_t& seq = f->next_sequence[static_cast<size_t>(d)];
  for (auto _ : state) {
    fp.sequence = seq++;
    absl::Status st;
    switch (kOp) {
      case Op::kAllReduce:
        st = f->comm.AllReduce(d, fp, f->group, ReductionKind::kSum, f->in[d], f->out[d]);
        break;
      case Op::kAllGather:
        st = f->comm.AllGather(d, fp, f->group, 0, f->in[d], f->out[d]);
        break;
      case Op::kReduceScatter:
        st = f->comm.ReduceScatter(d, fp, f->group, ReductionKind::kSum, 0, f->in[d], f->out[d]);
        break;
      case Op::kAllToAll:
        st = f->comm.AllToAll(d, fp, f->group, 0, f->in[d], f->out[d]);
        break;
    }
    if (!st.ok()) {
      state.SkipWithError(std::string(st.message()).c_str());
      break;
    }
  }
  if (d == 0) state.SetBytesProcessed(state.iterations() * bytes);
}

// The baseline of perf_anchors.md 5.3 ("copy-out" mode), measured in the same
// binary for reference: device t sums slice t of all inputs into one shared
// buffer, a sense-reversing barrier (spin, then sched_yield), every device
// copies the shared result to its own output, barrier. No fingerprints, no
// timeouts, no failure handling.
struct BaselineBarrier {
  std::atomic<int> count{0};
  std::atomic<int> sense{0};
  void Wait(int n, int& local_sense) {
    local_sense ^= 1;
    if (count.fetch_add(1) + 1 == n) {
      count.store(0);
      sense.store(local_sense);
      return;
    }
    for (int spins = 0; sense.load(std::memory_order_acquire) != local_sense; ++spins) {
      if (spins > 2000) std::this_thread::yield();
    }
  }
};

struct Baseline {
  Baseline(int64_t n, int64_t bytes) : elems(bytes / 4), shared(static_cast<size_t>(elems)) {
    for (int64_t d = 0; d < n; ++d) {
      in.emplace_back(static_cast<size_t>(elems), static_cast<float>(d));
      out.emplace_back(static_cast<size_t>(elems), 0.0f);
    }
  }
  int64_t elems;
  std::vector<float> shared;
  std::vector<std::vector<float>> in, out;
  BaselineBarrier barrier;
};

std::mutex baseline_mu;
std::unique_ptr<Baseline> baseline;

void BM_BaselineSharedAllReduce(benchmark::State& state) {
  const int n = state.threads();
  const int64_t bytes = state.range(0);
  const int d = state.thread_index();
  Baseline* b;
  {
    std::lock_guard<std::mutex> lock(baseline_mu);
    if (baseline == nullptr || baseline->elems != bytes / 4 ||
        static_cast<int>(baseline->in.size()) != n) {
      baseline = std::make_unique<Baseline>(n, bytes);
    }
    b = baseline.get();
  }
  int sense = 0;
  const int64_t per = (b->elems + n - 1) / n;
  const int64_t lo = std::min(b->elems, d * per), hi = std::min(b->elems, lo + per);
  for (auto _ : state) {
    float* r = b->shared.data();
    for (int64_t i = lo; i < hi; ++i) r[i] = b->in[0][i];
    for (int j = 1; j < n; ++j) {
      const float* x = b->in[j].data();
      for (int64_t i = lo; i < hi; ++i) r[i] += x[i];
    }
    b->barrier.Wait(n, sense);
    std::memcpy(b->out[d].data(), r, static_cast<size_t>(bytes));
    b->barrier.Wait(n, sense);
  }
  if (d == 0) state.SetBytesProcessed(state.iterations() * bytes);
}

void BM_Memcpy(benchmark::State& state) {
  const size_t bytes = static_cast<size_t>(state.range(0));
  std::vector<char> src(bytes, 1), dst(bytes, 0);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), bytes);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(bytes));
}

constexpr int64_t kMin = 4 << 10;
constexpr int64_t kMax = 64 << 20;

#define SHARC_COLLECTIVE_BENCHMARK(op)                                                    \
  BENCHMARK_TEMPLATE(BM_Collective, op)->RangeMultiplier(4)->Range(kMin, kMax)->Threads(2) \
      ->Threads(4)->UseRealTime()

SHARC_COLLECTIVE_BENCHMARK(Op::kAllReduce);
SHARC_COLLECTIVE_BENCHMARK(Op::kAllGather);
SHARC_COLLECTIVE_BENCHMARK(Op::kReduceScatter);
SHARC_COLLECTIVE_BENCHMARK(Op::kAllToAll);
BENCHMARK(BM_BaselineSharedAllReduce)->RangeMultiplier(4)->Range(kMin, kMax)->Threads(2)
    ->Threads(4)->UseRealTime();
BENCHMARK(BM_Memcpy)->RangeMultiplier(4)->Range(kMin, kMax)->UseRealTime();

}  // namespace
}  // namespace sharc::runtime

BENCHMARK_MAIN();
