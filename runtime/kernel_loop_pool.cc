#include "runtime/kernel_loop_pool.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace sharc::runtime {
namespace {

std::atomic<KernelLoopPool> pool{KernelLoopPool::kDeviceThreads};
std::atomic<KernelLoopRunner> library_runner{nullptr};
std::atomic<KernelLoopTaskObserver> observer{nullptr};

// HL_NUM_THREADS capped Halide's own pool; it caps this runner the same way,
// so commands that set it (the codegen benchmarks) keep their meaning.
int HalideThreadCap() {
  static const int cap = [] {
    const char* v = std::getenv("HL_NUM_THREADS");
    const int n = v != nullptr ? std::atoi(v) : 0;
    return n > 0 ? n : 0;
  }();
  return cap;
}

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

}  // namespace

int RunKernelParallelLoop(void* user_context, KernelLoopTask task, int min, int size,
                          uint8_t* closure) {
  const KernelLoopTaskObserver watch = observer.load(std::memory_order_acquire);
  const KernelLoopPool mode = pool.load(std::memory_order_relaxed);
  const KernelLoopRunner library = library_runner.load(std::memory_order_acquire);
  if (mode == KernelLoopPool::kLibraryPool && library != nullptr) {
    return RunInLibraryPool(library, user_context, task, min, size, closure, watch);
  }
  const int threads = LoopThreads(size);
  if (threads <= 1) return RunSerially(user_context, task, min, size, closure, watch);
  if (mode == KernelLoopPool::kDeviceThreads && library != nullptr) {
    return RunInLibraryPool(library, user_context, task, min, size, closure, watch);
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
