// The MPI backend under `mpirun -np R` (ctest runs R = 2 and 4): every
// collective, dtype and group layout of collective_cases.h runs with its
// devices spread over the R processes, and each process's devices must get
// the bits an in-process run of the whole mesh gives them. Then the faults:
// processes running different programs or different collectives, a peer
// that never arrives and a device that fails all end in errors, within the
// timeout, on every process.
#include "runtime/mpi_communicator.h"

#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "hlo/text/parser.h"
#include "runtime/interpreter_kernels.h"
#include "runtime/mesh_runtime.h"
#include "runtime/mpi_session.h"
#include "tests/runtime/collective_cases.h"
#include "tests/runtime/runtime_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::runtime {
namespace {

using namespace collective_cases;
using testing_util::RandomLiteral;
using testing_util::RunDevices;
using testing_util::RunOnMesh;

// Generous for correctness cases (a bug should fail, not hang ctest), short
// for the fault cases that wait for it on purpose.
constexpr absl::Duration kTimeout = absl::Seconds(20);
constexpr absl::Duration kFaultTimeout = absl::Seconds(1);

std::unique_ptr<MpiCommunicator> MakeCommunicator(int64_t devices, absl::Duration timeout,
                                                  uint64_t program = 1) {
  // Start together: a fault case leaves some processes waiting out its
  // timeout while others have moved on to the next case.
  MPI_Barrier(MPI_COMM_WORLD);
  MpiOptions options;
  options.num_devices = devices;
  options.timeout = timeout;
  options.program_fingerprint = program;
  absl::StatusOr<std::unique_ptr<MpiCommunicator>> comm = MpiCommunicator::Create(options);
  EXPECT_TRUE(comm.ok()) << comm.status();
  return comm.ok() ? *std::move(comm) : nullptr;
}

// Runs `text` with random per-device inputs (the same on every process)
// over all processes, and in-process on this process alone; this process's
// devices must agree bit for bit.
void ExpectSameAsInProcess(const std::string& text, int64_t devices, uint32_t seed,
                           int nan_every = 0) {
  SCOPED_TRACE(text);
  absl::StatusOr<std::unique_ptr<hlo::Module>> module = hlo::ParseAndVerifyModule(text);
  ASSERT_TRUE(module.ok()) << module.status();
  std::mt19937 rng(seed);
  std::vector<std::vector<hlo::Literal>> args(static_cast<size_t>(devices));
  for (auto& a : args) {
    a.push_back(RandomLiteral((*module)->entry()->parameter(0)->shape(), rng, nan_every));
  }
  MeshOptions options;
  options.num_devices = devices;
  options.collective_timeout = kTimeout;
  options.threads_per_device = 1;
  absl::StatusOr<std::vector<hlo::Literal>> want = RunOnMesh(**module, args, options);
  ASSERT_TRUE(want.ok()) << want.status();

  InterpreterKernelFactory factory;
  absl::StatusOr<std::unique_ptr<Executable>> exe = Executable::Create(**module, factory);
  ASSERT_TRUE(exe.ok()) << exe.status();
  std::unique_ptr<MpiCommunicator> comm = MakeCommunicator(devices, kTimeout);
  ASSERT_NE(comm, nullptr);
  const int64_t first = comm->first_local_device();
  std::vector<std::vector<Buffer>> local_args;
  for (int64_t d = first; d < first + comm->num_local_devices(); ++d) {
    absl::StatusOr<Buffer> b = Buffer::FromLiteral(args[static_cast<size_t>(d)][0]);
    ASSERT_TRUE(b.ok()) << b.status();
    local_args.push_back({*std::move(b)});
  }
  absl::StatusOr<std::vector<Buffer>> got =
      DeviceMesh(options).RunLocalBuffers(**exe, *comm, first, local_args);
  ASSERT_TRUE(got.ok()) << got.status();
  const bool tuple = (*module)->entry()->root()->shape().is_tuple();
  for (size_t k = 0; k < got->size(); ++k) {
    const int64_t d = first + static_cast<int64_t>(k);
    const Buffer& b = (*got)[k];
    hlo::Literal literal;
    if (tuple) {
      std::vector<hlo::Literal> elements;
      for (const Buffer& e : b.elements()) elements.push_back(*e.ToLiteral());
      literal = hlo::Literal::Tuple(std::move(elements));
    } else {
      literal = *b.ToLiteral();
    }
    EXPECT_EQ(literal, (*want)[static_cast<size_t>(d)])
        << "device " << d << " (process " << MpiRank() << "): MPI run gives " << literal.ToString()
        << "\nin-process run gives " << (*want)[static_cast<size_t>(d)].ToString();
  }
}

// The layouts whose devices spread evenly over the processes, plus ones
// that put every device in its own process or interleave member order
// across processes.
std::vector<Layout> MpiLayouts() {
  std::vector<Layout> layouts = Layouts();
  layouts.push_back({4, {{1, 3, 0, 2}}});
  layouts.push_back({8, {{0, 2, 4, 6}, {1, 3, 5, 7}}});
  std::vector<Layout> out;
  for (const Layout& l : layouts) {
    if (l.devices % MpiSize() == 0 && l.devices > 1) out.push_back(l);
  }
  return out;
}

TEST(MpiCommunicatorTest, AllReduceMatchesInProcessForEveryDtypeAndLayout) {
  uint32_t seed = 1;
  for (const Layout& layout : MpiLayouts()) {
    SCOPED_TRACE(layout.ToString());
    for (PrimitiveType t : Dtypes()) {
      for (const std::string& op : ReducerOps(t)) {
        const bool minmax = op == "maximum" || op == "minimum";
        for (const std::vector<int64_t>& dims :
             std::vector<std::vector<int64_t>>{{3, 5}, {1030}, {0, 3}}) {
          if (dims[0] == 1030 && op != "add" && op != "or") continue;
          std::string attrs = absl::StrCat("all-reduce(%p), channel_id=1", GroupsAttr(layout),
                                           ", use_global_device_ids=true, to_apply=%reducer");
          ExpectSameAsInProcess(ModuleText(layout, t, dims, dims, attrs, op), layout.devices,
                                seed++, minmax ? 7 : 0);
        }
      }
    }
  }
}

TEST(MpiCommunicatorTest, GatherScatterAndAllToAllMatchInProcess) {
  uint32_t seed = 100;
  for (const Layout& layout : MpiLayouts()) {
    SCOPED_TRACE(layout.ToString());
    const int64_t g = layout.group_size();
    for (PrimitiveType t : Dtypes()) {
      for (auto [in, dim] :
           std::vector<std::pair<std::vector<int64_t>, size_t>>{{{2, 3}, 0}, {{3, 1, 5}, 1}}) {
        std::string attrs = absl::StrCat("all-gather(%p), channel_id=2", GroupsAttr(layout),
                                         ", dimensions={", dim, "}, use_global_device_ids=true");
        ExpectSameAsInProcess(ModuleText(layout, t, in, Scaled(in, dim, g), attrs, ""),
                              layout.devices, seed++);
      }
      std::vector<std::string> ops = ReducerOps(t);
      for (auto [out, dim] :
           std::vector<std::pair<std::vector<int64_t>, size_t>>{{{3, 5}, 0}, {{2, 3}, 1}}) {
        for (const std::string& op : {ops.front(), ops.back()}) {
          std::string attrs =
              absl::StrCat("reduce-scatter(%p), channel_id=3", GroupsAttr(layout), ", dimensions={",
                           dim, "}, use_global_device_ids=true, to_apply=%reducer");
          ExpectSameAsInProcess(ModuleText(layout, t, Scaled(out, dim, g), out, attrs, op),
                                layout.devices, seed++);
        }
      }
      for (auto [base, dim] :
           std::vector<std::pair<std::vector<int64_t>, size_t>>{{{2, 3}, 0}, {{2, 3, 5}, 1}}) {
        std::vector<int64_t> dims = Scaled(base, dim, g);
        std::string attrs = absl::StrCat("all-to-all(%p), channel_id=4", GroupsAttr(layout),
                                         ", dimensions={", dim, "}");
        ExpectSameAsInProcess(ModuleText(layout, t, dims, dims, attrs, ""), layout.devices, seed++);
      }
    }
  }
}

TEST(MpiCommunicatorTest, CollectivePermuteMatchesInProcess) {
  uint32_t seed = 400;
  for (const Layout& layout : MpiLayouts()) {
    SCOPED_TRACE(layout.ToString());
    std::vector<std::vector<int64_t>> groups = layout.groups;
    if (groups.empty()) {
      groups.emplace_back();
      for (int64_t d = 0; d < layout.devices; ++d) groups[0].push_back(d);
    }
    std::vector<std::string> ring;
    for (const auto& g : groups) {
      for (size_t i = 0; i < g.size(); ++i) {
        ring.push_back(absl::StrCat("{", g[i], ",", g[(i + 1) % g.size()], "}"));
      }
    }
    for (PrimitiveType t : Dtypes()) {
      for (const std::string& pairs : {absl::StrCat("{", absl::StrJoin(ring, ","), "}"),
                                       absl::StrCat("{{0,", layout.devices - 1, "}}")}) {
        std::string attrs =
            absl::StrCat("collective-permute(%p), channel_id=5, source_target_pairs=", pairs);
        ExpectSameAsInProcess(ModuleText(layout, t, {3, 5}, {3, 5}, attrs, ""), layout.devices,
                              seed++);
      }
    }
  }
}

TEST(MpiCommunicatorTest, VariadicAllReduceAndProgramWithSeveralCollectives) {
  const int64_t devices = 2 * MpiSize();
  const std::string text = absl::StrCat(
      R"(HloModule rt, num_partitions=)", devices, R"(

%sum {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %r = f32[] add(%a, %b)
}

ENTRY %main {
  %p = f32[4,3] parameter(0)
  %n = f32[4,3] negate(%p)
  %v = (f32[4,3], f32[4,3]) all-reduce(%p, %n), channel_id=1, use_global_device_ids=true, to_apply=%sum
  %v0 = f32[4,3] get-tuple-element(%v), index=0
  %v1 = f32[4,3] get-tuple-element(%v), index=1
  %m = f32[4,3] multiply(%v0, %v1)
  %g = f32[)",
      4 * devices, R"(,3] all-gather(%m), channel_id=2, dimensions={0}, use_global_device_ids=true
  ROOT %s = f32[4,3] reduce-scatter(%g), channel_id=3, dimensions={0}, use_global_device_ids=true, to_apply=%sum
}
)");
  ExpectSameAsInProcess(text, devices, 11);
}

// Runs `body(device)` on this process's devices of `comm` and returns their
// statuses.
std::vector<absl::Status> OnLocalDevices(MpiCommunicator& comm,
                                         const std::function<absl::Status(int64_t)>& body) {
  std::vector<absl::Status> statuses(static_cast<size_t>(comm.num_local_devices()));
  RunDevices(comm.num_local_devices(), [&](int64_t k) {
    const int64_t d = comm.first_local_device() + k;
    absl::Status st = body(d);
    statuses[static_cast<size_t>(k)] = st;
    if (st.ok()) {
      comm.MarkFinished(d);
    } else {
      comm.Abort(d, st);
    }
  });
  return statuses;
}

std::vector<int64_t> AllDevices(int64_t n) {
  std::vector<int64_t> all;
  for (int64_t d = 0; d < n; ++d) all.push_back(d);
  return all;
}

// One all-reduce over every device; fingerprint sequence `sequence`.
absl::Status SumAll(MpiCommunicator& comm, int64_t device, int64_t sequence) {
  static const std::string name = "sum";
  CollectiveFingerprint fp{hlo::Opcode::kAllReduce, name, 1, sequence};
  Buffer in = *Buffer::Allocate(hlo::Shape(hlo::PrimitiveType::kF32, {4}), /*zero=*/true);
  Buffer out = *Buffer::Allocate(in.shape());
  std::vector<int64_t> all = AllDevices(comm.num_devices());
  return comm.AllReduce(device, fp, all, ReductionKind::kSum, in, out);
}

int64_t LastProcessFirstDevice(int64_t devices) { return devices - devices / MpiSize(); }

TEST(MpiCommunicatorFaultTest, DifferentProgramsFailEveryProcess) {
  const int64_t devices = 2 * MpiSize();
  // Every process claims a different program.
  std::unique_ptr<MpiCommunicator> comm =
      MakeCommunicator(devices, kTimeout, /*program=*/100 + static_cast<uint64_t>(MpiRank()));
  ASSERT_NE(comm, nullptr);
  for (const absl::Status& st :
       OnLocalDevices(*comm, [&](int64_t d) { return SumAll(*comm, d, 0); })) {
    EXPECT_FALSE(st.ok());
    EXPECT_NE(st.message().find("runs a different program"), absl::string_view::npos) << st;
  }
}

TEST(MpiCommunicatorFaultTest, DifferentCollectivesFailEveryProcess) {
  const int64_t devices = 2 * MpiSize();
  std::unique_ptr<MpiCommunicator> comm = MakeCommunicator(devices, kTimeout);
  ASSERT_NE(comm, nullptr);
  const bool gathers = MpiRank() == MpiSize() - 1;
  static const std::string name = "odd";
  auto statuses = OnLocalDevices(*comm, [&](int64_t d) -> absl::Status {
    if (!gathers) return SumAll(*comm, d, 0);
    // The last process runs an all-gather where the others all-reduce.
    CollectiveFingerprint fp{hlo::Opcode::kAllGather, name, 1, 0};
    Buffer in = *Buffer::Allocate(hlo::Shape(hlo::PrimitiveType::kF32, {1}), true);
    Buffer out = *Buffer::Allocate(hlo::Shape(hlo::PrimitiveType::kF32, {devices}));
    return comm->AllGather(d, fp, AllDevices(devices), 0, in, out);
  });
  for (const absl::Status& st : statuses) {
    EXPECT_TRUE(absl::IsFailedPrecondition(st)) << st;
    EXPECT_NE(st.message().find("collective mismatch at sequence 0"), absl::string_view::npos)
        << st;
  }
}

TEST(MpiCommunicatorFaultTest, PeerThatNeverArrivesTimesOut) {
  const int64_t devices = 2 * MpiSize();
  std::unique_ptr<MpiCommunicator> comm = MakeCommunicator(devices, kFaultTimeout);
  ASSERT_NE(comm, nullptr);
  const bool absent = MpiRank() == MpiSize() - 1;
  const auto start = std::chrono::steady_clock::now();
  auto statuses = OnLocalDevices(*comm, [&](int64_t d) -> absl::Status {
    if (absl::Status st = SumAll(*comm, d, 0); !st.ok()) return st;
    // The last process's devices skip the second all-reduce.
    return absent ? absl::OkStatus() : SumAll(*comm, d, 1);
  });
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const int64_t missing = LastProcessFirstDevice(devices);
  for (const absl::Status& st : statuses) {
    if (absent) {
      EXPECT_TRUE(st.ok()) << st;
      continue;
    }
    EXPECT_TRUE(absl::IsDeadlineExceeded(st)) << st;
    EXPECT_NE(st.message().find(absl::StrCat("all-reduce %sum (channel_id=1, sequence 1)")),
              absl::string_view::npos)
        << st;
    EXPECT_NE(st.message().find(absl::StrCat("devices ", missing, ",", missing + 1, " (process ",
                                             MpiSize() - 1, ") never arrived")),
              absl::string_view::npos)
        << st;
  }
  EXPECT_LT(seconds, 10.0);
}

TEST(MpiCommunicatorFaultTest, FailedDeviceEndsEveryProcessWithinTheTimeout) {
  const int64_t devices = 2 * MpiSize();
  std::unique_ptr<MpiCommunicator> comm = MakeCommunicator(devices, kFaultTimeout);
  ASSERT_NE(comm, nullptr);
  const int64_t failing = LastProcessFirstDevice(devices);
  const auto start = std::chrono::steady_clock::now();
  auto statuses = OnLocalDevices(*comm, [&](int64_t d) -> absl::Status {
    if (absl::Status st = SumAll(*comm, d, 0); !st.ok()) return st;
    // Like a kernel that throws: the device fails instead of its next
    // collective.
    if (d == failing) return absl::InternalError("kernel threw: boom");
    return SumAll(*comm, d, 1);
  });
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (size_t k = 0; k < statuses.size(); ++k) {
    const int64_t d = comm->first_local_device() + static_cast<int64_t>(k);
    const absl::Status& st = statuses[k];
    EXPECT_FALSE(st.ok()) << "device " << d;
    if (d == failing) continue;
    if (MpiRank() == MpiSize() - 1) {
      // Its neighbour in the process learns the cause at once.
      EXPECT_NE(st.message().find(absl::StrCat("device ", failing, " failed: kernel threw: boom")),
                absl::string_view::npos)
          << st;
    } else {
      EXPECT_NE(st.message().find("never arrived"), absl::string_view::npos) << st;
    }
  }
  EXPECT_LT(seconds, 10.0);
}

}  // namespace
}  // namespace sharc::runtime

// MPI brackets the tests; every process runs all of them in the same order.
int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  if (absl::Status st = sharc::runtime::InitMpi(); !st.ok()) {
    std::fprintf(stderr, "%s\n", std::string(st.message()).c_str());
    return 1;
  }
  int failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  int any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  sharc::runtime::FinalizeMpi();
  return any;
}
