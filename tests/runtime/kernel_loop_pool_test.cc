// Kernels' parallel loops run within the launching device's share of the
// cores (runtime/kernel_loop_pool.h): counted by the threads that executed
// loop bodies, first for the runner alone (OpenMP teams, the shared OpenMP
// executor, serial), then for real Halide kernels on a mesh of 8 devices (no
// more threads than devices x threads per device) and of 1 device (its loops
// still use two threads or more), with results checked.
#include "runtime/kernel_loop_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "codegen/halide_kernel_factory.h"
#include "codegen/kernel_compiler.h"
#include "hlo/text/parser.h"
#include "runtime/executable.h"
#include "runtime/mesh_runtime.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace sharc::runtime {
namespace {

// Threads that ran loop bodies, and how many bodies ran.
std::mutex seen_mu;
std::set<std::thread::id> seen_threads;
std::atomic<int64_t> seen_tasks{0};

void Observe(int) {
  seen_tasks.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(seen_mu);
  seen_threads.insert(std::this_thread::get_id());
}

void ResetObserved() {
  std::lock_guard<std::mutex> lock(seen_mu);
  seen_threads.clear();
  seen_tasks = 0;
}

size_t ObservedThreads() {
  std::lock_guard<std::mutex> lock(seen_mu);
  return seen_threads.size();
}

// Installs the observer for one test and removes it after.
class KernelLoopPoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ResetObserved();
    SetKernelLoopTaskObserver(&Observe);
  }
  void TearDown() override {
    SetKernelLoopTaskObserver(nullptr);
    SetKernelLoopPool(kDefaultKernelLoopPool);
  }
};

// A task that spins a little, so that a second thread has time to join.
int SlowTask(void*, int index, uint8_t* closure) {
  auto* hits = reinterpret_cast<std::atomic<int>*>(closure);
  volatile double x = index;
  for (int i = 0; i < 20000; ++i) x = x * 1.0000001 + 1e-9;
  hits[index].fetch_add(1);
  return 0;
}

TEST_F(KernelLoopPoolTest, LoopUsesTheCallersOpenMpThreads) {
  SetKernelLoopPool(KernelLoopPool::kOpenMpTeams);
  constexpr int kTasks = 64;
  std::vector<std::atomic<int>> hits(kTasks);
  std::thread caller([&] {
#ifdef _OPENMP
    omp_set_num_threads(2);
#endif
    // Under load the second thread may join late: a few loops give it time.
    for (int attempt = 0; attempt < 50 && ObservedThreads() < 2; ++attempt) {
      ASSERT_EQ(RunKernelParallelLoop(nullptr, &SlowTask, 0, kTasks,
                                      reinterpret_cast<uint8_t*>(hits.data())),
                0);
    }
  });
  caller.join();
  for (int i = 0; i < kTasks; ++i) EXPECT_GE(hits[i].load(), 1) << "task " << i;
#ifdef _OPENMP
  EXPECT_EQ(ObservedThreads(), 2u);
#endif
}

TEST_F(KernelLoopPoolTest, OneThreadPerDeviceRunsLoopsOnTheDeviceThread) {
  constexpr int kDevices = 8, kTasks = 16;
  std::vector<std::atomic<int>> hits(kTasks);
  std::vector<std::thread> devices;
  for (int d = 0; d < kDevices; ++d) {
    devices.emplace_back([&] {
#ifdef _OPENMP
      omp_set_num_threads(1);
#endif
      EXPECT_EQ(RunKernelParallelLoop(nullptr, &SlowTask, 0, kTasks,
                                      reinterpret_cast<uint8_t*>(hits.data())),
                0);
    });
  }
  for (std::thread& t : devices) t.join();
  EXPECT_EQ(seen_tasks.load(), kDevices * kTasks);
  EXPECT_EQ(ObservedThreads(), static_cast<size_t>(kDevices));  // the device threads themselves
  for (int i = 0; i < kTasks; ++i) EXPECT_EQ(hits[i].load(), kDevices);
}

int FailingTask(void*, int index, uint8_t*) { return index == 5 ? -7 : 0; }

TEST_F(KernelLoopPoolTest, FirstErrorCodeEndsTheLoop) {
  for (KernelLoopPool pool : {KernelLoopPool::kOpenMpTeams, KernelLoopPool::kOpenMpExecutor}) {
    SetKernelLoopPool(pool);
    for (int threads : {1, 2}) {
      int result = 0;
      std::thread caller([&] {
#ifdef _OPENMP
        omp_set_num_threads(threads);
#endif
        result = RunKernelParallelLoop(nullptr, &FailingTask, 0, 32, nullptr);
      });
      caller.join();
      EXPECT_EQ(result, -7) << "pool " << static_cast<int>(pool) << ", " << threads << " threads";
    }
  }
}

// ------------------------------------------------- the shared OpenMP executor --

TEST_F(KernelLoopPoolTest, ExecutorUsesTheCallerAndItsShareOfHelpers) {
  SetKernelLoopPool(KernelLoopPool::kOpenMpExecutor);
  constexpr int kTasks = 64;
  std::vector<std::atomic<int>> hits(kTasks);
  int loops = 0;
  size_t most = 0;
  std::thread caller([&] {
#ifdef _OPENMP
    omp_set_num_threads(2);
#endif
    // Under load the helper may join late: a few loops give it time.
    for (int attempt = 0; attempt < 50 && most < 2; ++attempt) {
      ResetObserved();
      ASSERT_EQ(RunKernelParallelLoop(nullptr, &SlowTask, 0, kTasks,
                                      reinterpret_cast<uint8_t*>(hits.data())),
                0);
      ++loops;
      most = std::max(most, ObservedThreads());
    }
  });
  caller.join();
  for (int i = 0; i < kTasks; ++i) EXPECT_EQ(hits[i].load(), loops) << "task " << i;
  EXPECT_GE(OpenMpExecutorThreads(), 1);
#ifdef _OPENMP
  EXPECT_EQ(most, 2u);  // the caller and one helper (share 2), never more
#endif
}

// Each thread of a loop starts with its own contiguous share of the
// iterations, so that a kernel run again finds its rows in the same core's
// cache: the caller starts at the first, its helper at the middle. Every
// task waits (bounded) until both threads have started one, so that neither
// can finish its share and steal from the other's before the other begins.
struct ShareProbe {
  std::atomic<int> caller_started{0}, helper_started{0};
  std::atomic<bool> gave_up{false};  // after one wait timed out, no task waits
  std::thread::id caller;
  std::mutex mu;
  std::vector<std::pair<std::thread::id, int>> order;
};

int RecordShareOrder(void*, int index, uint8_t* closure) {
  auto* probe = reinterpret_cast<ShareProbe*>(closure);
  const bool on_caller = std::this_thread::get_id() == probe->caller;
  {
    std::lock_guard<std::mutex> lock(probe->mu);
    probe->order.emplace_back(std::this_thread::get_id(), index);
  }
  (on_caller ? probe->caller_started : probe->helper_started).store(1);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (probe->caller_started.load() == 0 || probe->helper_started.load() == 0) {
    if (probe->gave_up.load() || std::chrono::steady_clock::now() >= deadline) {
      probe->gave_up.store(true);
      break;
    }
    std::this_thread::yield();
  }
  return 0;
}

TEST_F(KernelLoopPoolTest, ExecutorGivesEachThreadItsOwnShareFirst) {
  SetKernelLoopPool(KernelLoopPool::kOpenMpExecutor);
  for (int loop = 0; loop < 3; ++loop) {
    ShareProbe probe;
    std::thread caller([&] {
#ifdef _OPENMP
      omp_set_num_threads(2);
#endif
      probe.caller = std::this_thread::get_id();
      EXPECT_EQ(RunKernelParallelLoop(nullptr, &RecordShareOrder, 10, 8,
                                      reinterpret_cast<uint8_t*>(&probe)),
                0);
    });
    caller.join();
    ASSERT_EQ(probe.order.size(), 8u);
    ASSERT_EQ(probe.helper_started.load(), 1) << "no helper joined within 20 s";
    std::set<int> indices;
    int caller_first = -1, helper_first = -1;
    for (const auto& [thread, index] : probe.order) {
      indices.insert(index);
      int& first = thread == probe.caller ? caller_first : helper_first;
      if (first < 0) first = index;
    }
    EXPECT_EQ(indices, (std::set<int>{10, 11, 12, 13, 14, 15, 16, 17}));
    EXPECT_EQ(caller_first, 10) << "loop " << loop;
    EXPECT_EQ(helper_first, 14) << "loop " << loop;
  }
}

TEST_F(KernelLoopPoolTest, ExecutorAtAShareOfOneRunsOnTheDeviceThread) {
  SetKernelLoopPool(KernelLoopPool::kOpenMpExecutor);
  constexpr int kTasks = 16;
  std::vector<std::atomic<int>> hits(kTasks);
  std::thread caller([&] {
#ifdef _OPENMP
    omp_set_num_threads(1);
#endif
    EXPECT_EQ(RunKernelParallelLoop(nullptr, &SlowTask, 0, kTasks,
                                    reinterpret_cast<uint8_t*>(hits.data())),
              0);
  });
  caller.join();
  EXPECT_EQ(ObservedThreads(), 1u);
  for (int i = 0; i < kTasks; ++i) EXPECT_EQ(hits[i].load(), 1);
}

// Several device threads post loops at once; each loop runs every index
// exactly once, whichever threads help.
TEST_F(KernelLoopPoolTest, ExecutorServesConcurrentDevices) {
  SetKernelLoopPool(KernelLoopPool::kOpenMpExecutor);
  constexpr int kDevices = 4, kTasks = 48, kLoops = 20;
  std::vector<std::vector<std::atomic<int>>> hits(kDevices);
  for (auto& h : hits) h = std::vector<std::atomic<int>>(kTasks);
  std::vector<std::thread> devices;
  for (int d = 0; d < kDevices; ++d) {
    devices.emplace_back([&, d] {
#ifdef _OPENMP
      omp_set_num_threads(2);
#endif
      for (int l = 0; l < kLoops; ++l) {
        EXPECT_EQ(RunKernelParallelLoop(nullptr, &SlowTask, 0, kTasks,
                                        reinterpret_cast<uint8_t*>(hits[d].data())),
                  0);
      }
    });
  }
  for (std::thread& t : devices) t.join();
  EXPECT_EQ(seen_tasks.load(), int64_t{kDevices} * kTasks * kLoops);
  for (int d = 0; d < kDevices; ++d) {
    for (int i = 0; i < kTasks; ++i) EXPECT_EQ(hits[d][i].load(), kLoops) << d << " " << i;
  }
}

// A task that runs a loop of its own (Halide nests parallel loops): on a
// helper it runs serially, on the posting thread it is posted in turn.
std::atomic<int> inner_hits{0};
int InnerTask(void*, int, uint8_t*) {
  inner_hits.fetch_add(1);
  return 0;
}
int OuterTask(void* user_context, int index, uint8_t* closure) {
  return RunKernelParallelLoop(user_context, &InnerTask, 0, 8, nullptr);
}

TEST_F(KernelLoopPoolTest, ExecutorRunsNestedLoops) {
  SetKernelLoopPool(KernelLoopPool::kOpenMpExecutor);
  inner_hits = 0;
  std::thread caller([&] {
#ifdef _OPENMP
    omp_set_num_threads(2);
#endif
    for (int l = 0; l < 10; ++l) {
      EXPECT_EQ(RunKernelParallelLoop(nullptr, &OuterTask, 0, 16, nullptr), 0);
    }
  });
  caller.join();
  EXPECT_EQ(inner_hits.load(), 10 * 16 * 8);
}

TEST_F(KernelLoopPoolTest, SerialPoolNeverLeavesTheCaller) {
  SetKernelLoopPool(KernelLoopPool::kSerial);
  constexpr int kTasks = 32;
  std::vector<std::atomic<int>> hits(kTasks);
  std::thread caller([&] {
#ifdef _OPENMP
    omp_set_num_threads(2);
#endif
    EXPECT_EQ(RunKernelParallelLoop(nullptr, &SlowTask, 0, kTasks,
                                    reinterpret_cast<uint8_t*>(hits.data())),
              0);
  });
  caller.join();
  EXPECT_EQ(ObservedThreads(), 1u);
  for (int i = 0; i < kTasks; ++i) EXPECT_EQ(hits[i].load(), 1);
}

// ---------------------------------------------------------- Halide kernels --

// Every element is exact in f32 (no contraction: the kernel keeps strict
// float), so the result is known bit for bit.
constexpr const char* kParallelModule = R"(
HloModule parallel_kernel
ENTRY e {
  x = f32[256,1024] parameter(0)
  y = f32[256,1024] parameter(1)
  s = f32[256,1024] add(x, y)
  ROOT m = f32[256,1024] multiply(s, x)
}
)";

void UseFreshKernelCache() {
  static bool done = [] {
    static char dir[] = "/tmp/sharc_kernel_loop_test_XXXXXX";
    if (mkdtemp(dir) != nullptr) {
      codegen::KernelCompiler::Global().set_cache_dir(dir);
      std::atexit([] {
        std::error_code ec;
        std::filesystem::remove_all(dir, ec);
      });
    }
    return true;
  }();
  (void)done;
}

struct MeshRun {
  size_t threads = 0;  // the most threads that ran loop bodies in one run
  int64_t tasks = 0;   // loop bodies run, over all runs
};

// Runs kParallelModule on every device of a mesh (each device its own
// inputs) and checks every device's result.
MeshRun RunParallelKernel(int64_t devices, int threads_per_device, int repeats) {
  UseFreshKernelCache();
  absl::StatusOr<std::unique_ptr<hlo::Module>> module = hlo::ParseModule(kParallelModule);
  EXPECT_TRUE(module.ok()) << module.status();
  codegen::HalideKernelFactory factory;
  absl::StatusOr<std::unique_ptr<Executable>> exe = Executable::Create(**module, factory);
  EXPECT_TRUE(exe.ok()) << exe.status();
  if (!exe.ok()) return {};
  const hlo::Shape shape(hlo::PrimitiveType::kF32, {256, 1024});
  std::vector<std::vector<Buffer>> args(static_cast<size_t>(devices));
  for (int64_t d = 0; d < devices; ++d) {
    for (int k = 0; k < 2; ++k) {
      Buffer b = *Buffer::Allocate(shape);
      auto v = b.typed<float>();
      for (size_t i = 0; i < v.size(); ++i) {
        v[i] = static_cast<float>((i * (k + 3) + static_cast<size_t>(d)) % 101) * 0.25f - 7.0f;
      }
      args[static_cast<size_t>(d)].push_back(std::move(b));
    }
  }
  MeshOptions options;
  options.num_devices = devices;
  options.threads_per_device = threads_per_device;
  DeviceMesh mesh(options);
  // Thread ids of finished threads may be reused, so count per run.
  MeshRun result;
  for (int r = 0; r < repeats; ++r) {
    ResetObserved();
    absl::StatusOr<std::vector<Buffer>> out = mesh.RunBuffers(**exe, args);
    result.threads = std::max(result.threads, ObservedThreads());
    result.tasks += seen_tasks.load();
    EXPECT_TRUE(out.ok()) << out.status();
    if (!out.ok()) return {};
    for (int64_t d = 0; d < devices; ++d) {
      auto x = args[static_cast<size_t>(d)][0].typed<float>();
      auto y = args[static_cast<size_t>(d)][1].typed<float>();
      auto m = (*out)[static_cast<size_t>(d)].typed<float>();
      for (size_t i = 0; i < m.size(); ++i) {
        const float want = (x[i] + y[i]) * x[i];
        if (m[i] != want) {
          ADD_FAILURE() << "device " << d << " element " << i << ": " << m[i] << " != " << want;
          return {};
        }
      }
    }
    // A helper may join late on a loaded machine (the caller then runs every
    // task itself); stop once one has.
    if (threads_per_device > 1 && result.threads >= static_cast<size_t>(threads_per_device)) {
      break;
    }
  }
  return result;
}

TEST_F(KernelLoopPoolTest, EightDevicesKeepHalideLoopsOnTheirOwnThreads) {
  const int per_device = DefaultThreadsPerDevice(8);  // 1 on fewer than 16 cores
  MeshRun run = RunParallelKernel(8, per_device, 5);
  // The kernels' loops came through the runner (not Halide's own pool) ...
  EXPECT_GT(run.tasks, 0);
  // ... and ran on no more threads than the devices' share of the cores.
  EXPECT_GE(run.threads, 1u);
  EXPECT_LE(run.threads, static_cast<size_t>(8 * per_device));
  const size_t cores = std::max(1u, std::thread::hardware_concurrency());
  if (cores <= 8) {
    EXPECT_LE(run.threads, 8u);
  }
}

TEST_F(KernelLoopPoolTest, OneDeviceStillParallelisesItsKernels) {
  // By default a device with two threads hands its loops to the shared
  // OpenMP executor: the device thread and one helper ...
  MeshRun shared = RunParallelKernel(1, 2, 300);
  EXPECT_GT(shared.tasks, 0);
#ifdef _OPENMP
  if (kDefaultKernelLoopPool == KernelLoopPool::kOpenMpExecutor) {
    EXPECT_EQ(shared.threads, 2u);
  }
#endif
  // ... or, selected, to Halide's pool (the caller works too, so up to
  // pool size + 1 threads) ...
  SetKernelLoopPool(KernelLoopPool::kDeviceThreads);
  MeshRun pooled = RunParallelKernel(1, 2, 300);
  EXPECT_GT(pooled.tasks, 0);
  EXPECT_GE(pooled.threads, 2u);
  // ... or to an OpenMP team of exactly its two threads.
  SetKernelLoopPool(KernelLoopPool::kOpenMpTeams);
  MeshRun team = RunParallelKernel(1, 2, 300);
  EXPECT_GT(team.tasks, 0);
#ifdef _OPENMP
  EXPECT_EQ(team.threads, 2u);
#endif
}

TEST_F(KernelLoopPoolTest, EveryPoolGivesTheSameResults) {
  // RunParallelKernel checks every element against the exact result.
  for (KernelLoopPool p : {KernelLoopPool::kDeviceThreads, KernelLoopPool::kOpenMpTeams,
                           KernelLoopPool::kLibraryPool, KernelLoopPool::kOpenMpExecutor,
                           KernelLoopPool::kSerial}) {
    SetKernelLoopPool(p);
    MeshRun run = RunParallelKernel(2, 1, 1);
    EXPECT_GT(run.tasks, 0) << static_cast<int>(p);
    MeshRun wide = RunParallelKernel(1, 2, 2);  // one device with a share of two
    EXPECT_GT(wide.tasks, 0) << static_cast<int>(p);
  }
}

}  // namespace
}  // namespace sharc::runtime
