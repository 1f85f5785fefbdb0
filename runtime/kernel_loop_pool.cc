#include "runtime/kernel_loop_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"

#ifdef _OPENMP
#include <omp.h>
#endif
#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace sharc::runtime {

// The default pool: see docs/performance_log.md ("Kernels' parallel loops") for
// bm_kernel_threads measured with each.
const KernelLoopPool kDefaultKernelLoopPool = KernelLoopPool::kOpenMpExecutor;

namespace {

std::atomic<KernelLoopPool> pool{kDefaultKernelLoopPool};
std::atomic<KernelLoopRunner> library_runner{nullptr};
std::atomic<KernelLoopTaskObserver> observer{nullptr};

// HL_NUM_THREADS capped Halide's own pool; it caps this runner the same way,
// so commands that set it (the codegen benchmarks) keep their meaning. A
// value that is not a positive count is ignored, and said so once: read with
// atoi, "1x" capped at 1 and "x" silently at nothing.
int HalideThreadCap() {
  static const int cap = [] {
    const char* v = std::getenv("HL_NUM_THREADS");
    if (v == nullptr || *v == '\0') return 0;
    int n = 0;
    if (!absl::SimpleAtoi(v, &n) || n <= 0) {
      std::fprintf(stderr, "sharc: warning: HL_NUM_THREADS='%s' is not a positive thread count; ignored\n", v);
      return 0;
    }
    return n;
  }();
  return cap;
}

}  // namespace

int KernelLoopThreadCap() { return HalideThreadCap(); }

namespace {

int RunSerially(void* user_context, KernelLoopTask task, int min, int size, uint8_t* closure,
                KernelLoopTaskObserver watch) {
  for (int i = min; i < min + size; ++i) {
    if (watch != nullptr) watch(i);
    if (int r = task(user_context, i, closure); r != 0) return r;
  }
  return 0;
}

// A task handed to the library's pool with the observer in front of it (the
// closure is passed through untouched, so it can carry the real one).
struct ObservedTask {
  KernelLoopTask task;
  uint8_t* closure;
  KernelLoopTaskObserver watch;
};

int RunObservedTask(void* user_context, int index, uint8_t* closure) {
  const auto* t = reinterpret_cast<const ObservedTask*>(closure);
  t->watch(index);
  return t->task(user_context, index, t->closure);
}

int RunInLibraryPool(KernelLoopRunner runner, void* user_context, KernelLoopTask task, int min,
                     int size, uint8_t* closure, KernelLoopTaskObserver watch) {
  if (watch == nullptr) return runner(user_context, task, min, size, closure);
  ObservedTask observed{task, closure, watch};
  return runner(user_context, &RunObservedTask, min, size,
                reinterpret_cast<uint8_t*>(&observed));
}

// The threads a loop may use here: the device's OpenMP share, at most
// HL_NUM_THREADS, one inside a parallel region.
int LoopThreads(int size) {
#ifdef _OPENMP
  if (omp_in_parallel()) return 1;
  int threads = std::min(omp_get_max_threads(), size);
  if (HalideThreadCap() > 0) threads = std::min(threads, HalideThreadCap());
  return threads;
#else
  return 1;
#endif
}

int RunInOpenMpTeam(int threads, void* user_context, KernelLoopTask task, int min, int size,
                    uint8_t* closure, KernelLoopTaskObserver watch) {
  // Tasks may differ in cost (tails, triangular loops): hand them out one
  // by one. After a failure the remaining tasks are skipped, not run.
  std::atomic<int> error{0};
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
  for (int i = min; i < min + size; ++i) {
    if (error.load(std::memory_order_relaxed) != 0) continue;
    if (watch != nullptr) watch(i);
    if (int r = task(user_context, i, closure); r != 0) {
      int expected = 0;
      error.compare_exchange_strong(expected, r, std::memory_order_relaxed);
    }
  }
  return error.load(std::memory_order_relaxed);
}

// ------------------------------------------------ the shared OpenMP executor --

// How long a helper polls for the next loop, and a poster for its helpers to
// leave, before sleeping. A futex wake-up costs tens of microseconds on this
// VM, as much as a whole 256^3 GEMM task; kernels come back to back, so a
// short poll catches most of them. Bounded, so an idle process goes quiet.
constexpr std::chrono::microseconds kSpinBeforeSleep{50};

// Polls `done` until it holds or kSpinBeforeSleep has passed.
template <typename Done>
void SpinUntil(Done done) {
  const auto deadline = std::chrono::steady_clock::now() + kSpinBeforeSleep;
  for (int i = 0;; ++i) {
    if (done()) return;
#if defined(__x86_64__)
    _mm_pause();
#endif
    if ((i & 63) == 63 && std::chrono::steady_clock::now() >= deadline) return;
  }
}

// One OpenMP team for the whole process, started by the first loop that
// needs it, on a thread of its own: `omp parallel num_threads(cores - 1)`
// whose threads never leave the region. A thread of the team polls for
// kSpinBeforeSleep, then sleeps on a condition variable (a futex, not
// libgomp's unbounded spinning barrier: libgomp reads
// OMP_WAIT_POLICY / GOMP_SPINCOUNT once, when it loads, so a library cannot
// choose passive waiting for itself) until a loop is posted, joins it if the
// loop still has unclaimed iterations and fewer helpers than its device's
// share allows, claims iterations one at a time (its own share first, see
// Work) and leaves. The device thread that posted the loop claims
// iterations too; when none are left it withdraws the loop, so no helper
// can join any more, and waits only for the helpers inside (a helper joins
// while it runs, under the lock, and then claims iterations at once). A helper that the host has not scheduled
// therefore costs nothing but its help (Halide's pool behaves the same way;
// an OpenMP team's closing barrier would wait for it).
class LoopExecutor {
 public:
  static LoopExecutor& Get() {
    // Never destroyed: the team's threads wait on it until the process ends.
    static LoopExecutor* executor = new LoopExecutor;
    return *executor;
  }

  int threads() const { return threads_; }

  // Runs [min, min + size) on the calling thread and at most `helpers`
  // threads of the team.
  int Run(int helpers, void* user_context, KernelLoopTask task, int min, int size,
          uint8_t* closure, KernelLoopTaskObserver watch) {
    Job job;
    job.user_context = user_context;
    job.task = task;
    job.closure = closure;
    job.watch = watch;
    job.max_helpers = std::min(helpers, threads_);
    job.ranges = std::vector<Range>(static_cast<size_t>(job.max_helpers) + 1);
    // Participant p owns the p-th contiguous share of the iterations.
    const int parts = job.max_helpers + 1;
    for (int p = 0; p < parts; ++p) {
      const int64_t begin = min + static_cast<int64_t>(size) * p / parts;
      job.ranges[p].next.store(begin, std::memory_order_relaxed);
      job.ranges[p].end = min + static_cast<int64_t>(size) * (p + 1) / parts;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      jobs_.push_back(&job);
      posted_.fetch_add(1, std::memory_order_release);
    }
    if (job.max_helpers >= threads_) {
      work_cv_.notify_all();
    } else {
      for (int h = 0; h < job.max_helpers; ++h) work_cv_.notify_one();
    }
    Work(job, /*participant=*/0);
    {
      std::unique_lock<std::mutex> lock(mu_);
      jobs_.erase(std::find(jobs_.begin(), jobs_.end(), &job));
      if (job.joined.load(std::memory_order_acquire) != 0) {
        // No helper can join now; those inside are finishing their last
        // iteration, usually within microseconds.
        lock.unlock();
        SpinUntil([&] { return job.joined.load(std::memory_order_acquire) == 0; });
        lock.lock();
      }
      done_cv_.wait(lock, [&] { return job.joined.load(std::memory_order_acquire) == 0; });
    }
    return job.error.load(std::memory_order_relaxed);
  }

 private:
  // One participant's share of a loop's iterations; others steal from it
  // once their own share is done. A cache line each, so that claiming from
  // one's own share does not contend with the others.
  struct alignas(64) Range {
    std::atomic<int64_t> next{0};  // the share's next unclaimed iteration
    int64_t end = 0;
  };

  struct Job {
    void* user_context = nullptr;
    KernelLoopTask task = nullptr;
    uint8_t* closure = nullptr;
    KernelLoopTaskObserver watch = nullptr;
    std::vector<Range> ranges;  // the poster's, then one per helper slot
    int max_helpers = 0;
    std::atomic<int> joined{0};  // helpers inside; changed under mu_
    std::atomic<int> error{0};   // the first error code, 0 = none
  };

  LoopExecutor() {
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    threads_ = std::max(1, cores - 1);
    std::thread([this] {
#ifdef _OPENMP
      // Exactly threads_ (dynamic adjustment could hand out fewer).
      omp_set_dynamic(0);
#pragma omp parallel num_threads(threads_)
      HelperLoop(omp_get_thread_num());
#else
      std::vector<std::thread> team;
      for (int t = 1; t < threads_; ++t) team.emplace_back([this, t] { HelperLoop(t); });
      HelperLoop(0);
#endif
    }).detach();
  }

  // Claims and runs iterations until none are left or one has failed; after
  // a failure the remaining iterations are skipped, not run. A participant
  // first runs its own share in order, then steals from the others' shares.
  // Why shares rather than one counter: a kernel run again (or the next
  // kernel over the same rows) then gives each thread the rows it had last
  // time, which are still in its core's L2. With one shared counter the
  // rows moved between cores from run to run: a 256^3 GEMM on two threads
  // took 0.151-0.168 ms with one counter, 0.140-0.158 ms with shares
  // (docs/performance_log.md, session 7).
  static void Work(Job& job, int participant) {
    const int parts = static_cast<int>(job.ranges.size());
    for (int k = 0; k < parts; ++k) {
      Range& range = job.ranges[(participant + k) % parts];
      while (job.error.load(std::memory_order_relaxed) == 0) {
        if (range.next.load(std::memory_order_relaxed) >= range.end) break;
        const int64_t i = range.next.fetch_add(1, std::memory_order_relaxed);
        if (i >= range.end) break;
        const int index = static_cast<int>(i);
        if (job.watch != nullptr) job.watch(index);
        if (int r = job.task(job.user_context, index, job.closure); r != 0) {
          int expected = 0;
          job.error.compare_exchange_strong(expected, r, std::memory_order_relaxed);
        }
      }
    }
  }

  // Whether any share of `job` has unclaimed iterations left (a hint: they
  // may all be claimed a moment later, and a helper that joins then leaves
  // at once).
  static bool HasUnclaimed(const Job& job) {
    for (const Range& range : job.ranges) {
      if (range.next.load(std::memory_order_relaxed) < range.end) return true;
    }
    return false;
  }

  // A posted loop this helper may join; mu_ held.
  Job* Pick() {
    for (Job* job : jobs_) {
      if (job->joined.load(std::memory_order_relaxed) < job->max_helpers &&
          job->error.load(std::memory_order_relaxed) == 0 && HasUnclaimed(*job)) {
        return job;
      }
    }
    return nullptr;
  }

  // `slot` is the helper's place in the team, so that the same thread takes
  // the same share of every loop (when a loop admits fewer helpers than the
  // team has, slots share shares: slot % max_helpers).
  [[noreturn]] void HelperLoop(int slot) {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      Job* job = Pick();
      if (job == nullptr) {
        const uint64_t seen = posted_.load(std::memory_order_acquire);
        lock.unlock();
        SpinUntil([&] { return posted_.load(std::memory_order_acquire) != seen; });
        lock.lock();
        work_cv_.wait(lock, [&] { return (job = Pick()) != nullptr; });
      }
      job->joined.fetch_add(1, std::memory_order_relaxed);
      lock.unlock();
      Work(*job, 1 + slot % job->max_helpers);
      lock.lock();
      // Release: the iterations' writes happen before the poster returns.
      // The job may be gone once joined reaches 0; only the cv is touched.
      if (job->joined.fetch_sub(1, std::memory_order_release) == 1) done_cv_.notify_all();
    }
  }

  std::mutex mu_;
  std::condition_variable work_cv_;  // helpers: a loop was posted
  std::condition_variable done_cv_;  // posters: a loop's last helper left
  std::vector<Job*> jobs_;           // posted loops, oldest first
  std::atomic<uint64_t> posted_{0};  // loops ever posted, for polling helpers
  int threads_ = 1;
};

std::atomic<bool> executor_started{false};

}  // namespace

int OpenMpExecutorThreads() {
  return executor_started.load(std::memory_order_acquire) ? LoopExecutor::Get().threads() : 0;
}

int RunKernelParallelLoop(void* user_context, KernelLoopTask task, int min, int size,
                          uint8_t* closure) {
  const KernelLoopTaskObserver watch = observer.load(std::memory_order_acquire);
  const KernelLoopPool mode = pool.load(std::memory_order_relaxed);
  const KernelLoopRunner library = library_runner.load(std::memory_order_acquire);
  if (mode == KernelLoopPool::kLibraryPool && library != nullptr) {
    return RunInLibraryPool(library, user_context, task, min, size, closure, watch);
  }
  const int threads = mode == KernelLoopPool::kSerial ? 1 : LoopThreads(size);
  if (threads <= 1) return RunSerially(user_context, task, min, size, closure, watch);
  switch (mode) {
    case KernelLoopPool::kDeviceThreads:
      if (library != nullptr) {
        return RunInLibraryPool(library, user_context, task, min, size, closure, watch);
      }
      break;
    case KernelLoopPool::kOpenMpExecutor: {
      LoopExecutor& executor = LoopExecutor::Get();
      executor_started.store(true, std::memory_order_release);
      return executor.Run(threads - 1, user_context, task, min, size, closure, watch);
    }
    default:
      break;
  }
  return RunInOpenMpTeam(threads, user_context, task, min, size, closure, watch);
}

void SetKernelLoopPool(KernelLoopPool p) { pool.store(p, std::memory_order_relaxed); }

KernelLoopPool GetKernelLoopPool() { return pool.load(std::memory_order_relaxed); }

void SetLibraryKernelLoopRunner(KernelLoopRunner runner) {
  // The library's own runner must never be this one (a loader installing
  // twice would otherwise make the library pool recurse forever).
  if (runner == &RunKernelParallelLoop) return;
  library_runner.store(runner, std::memory_order_release);
}

void SetKernelLoopTaskObserver(KernelLoopTaskObserver o) {
  observer.store(o, std::memory_order_release);
}

}  // namespace sharc::runtime
