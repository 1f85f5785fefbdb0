#include "tools/spmd_runner.h"

#include "absl/strings/str_cat.h"
#include "hlo/eval/interpreter.h"
#include "hlo/verifier/verifier.h"
#include "runtime/executable.h"
#include "runtime/interpreter_kernels.h"
#include "runtime/mesh_runtime.h"
#include "spmd/partition/device_values.h"
#include "spmd/partition/partitioner.h"
#include "spmd/propagation.h"

namespace sharc::tools {
namespace {

absl::Status Prefix(const absl::Status& status, absl::string_view what) {
  return absl::Status(status.code(), absl::StrCat(what, ": ", status.message()));
}

hlo::Sharding ShardingOrReplicated(const hlo::Instruction& instruction) {
  return instruction.sharding() ? *instruction.sharding() : hlo::Sharding::Replicated();
}

}  // namespace

absl::StatusOr<hlo::Literal> RunPartitioned(const hlo::Module& global,
                                            const std::vector<hlo::Literal>& args,
                                            int64_t num_devices) {
  // Propagation works in place; the caller's module stays as written.
  std::unique_ptr<hlo::Module> propagated = global.Clone();
  if (auto result = spmd::PropagateShardings(*propagated); !result.ok()) {
    return Prefix(result.status(), "sharding propagation failed");
  }
  spmd::PartitionOptions options;
  options.num_devices = num_devices;
  absl::StatusOr<std::unique_ptr<hlo::Module>> local = spmd::PartitionModule(*propagated, options);
  if (!local.ok()) return Prefix(local.status(), "partitioning failed");
  // A partitioner bug should surface as a clear compile error, not as a
  // confusing failure inside the interpreter.
  if (absl::Status verified = hlo::VerifyModule(**local); !verified.ok()) {
    return absl::InternalError(
        absl::StrCat("the partitioned module does not verify: ", verified.message()));
  }

  const hlo::Computation& entry = *propagated->entry();
  std::vector<std::vector<hlo::Literal>> device_args(static_cast<size_t>(num_devices));
  for (int64_t i = 0; i < entry.num_parameters(); ++i) {
    hlo::Sharding sharding = ShardingOrReplicated(*entry.parameter(i));
    for (int64_t d = 0; d < num_devices; ++d) {
      absl::StatusOr<hlo::Literal> part =
          spmd::ShardLiteral(args[static_cast<size_t>(i)], sharding, d);
      if (!part.ok()) {
        return Prefix(part.status(), absl::StrCat("splitting parameter ", i, " for device ", d));
      }
      device_args[static_cast<size_t>(d)].push_back(*std::move(part));
    }
  }

  // The per-device program runs on the runtime's in-process device mesh
  // (one thread per device, shared-memory collectives) with the reference
  // interpreter's kernels. Programs the runtime cannot schedule (a
  // collective with a non-elementary reducer) fall back to the
  // interpreter's own SPMD mode.
  std::vector<hlo::Literal> parts;
  runtime::InterpreterKernelFactory factory;
  absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
      runtime::Executable::Create(**local, factory);
  if (executable.ok()) {
    runtime::MeshOptions mesh_options;
    mesh_options.num_devices = num_devices;
    runtime::DeviceMesh mesh(mesh_options);
    auto outputs = mesh.Run(**executable, device_args);
    if (!outputs.ok()) {
      return absl::AbortedError(absl::StrCat("running on ", num_devices,
                                             " devices failed: ", outputs.status().message()));
    }
    const bool tuple_root = (*local)->entry()->root()->shape().is_tuple();
    for (std::vector<hlo::Literal>& device_values : *outputs) {
      parts.push_back(tuple_root ? hlo::Literal::Tuple(std::move(device_values))
                                 : std::move(device_values[0]));
    }
  } else if (absl::IsUnimplemented(executable.status())) {
    hlo::SpmdOptions spmd_options;
    spmd_options.num_devices = num_devices;
    absl::StatusOr<std::vector<hlo::Literal>> evaluated =
        hlo::EvaluateSpmd(**local, device_args, spmd_options);
    if (!evaluated.ok()) {
      return absl::AbortedError(absl::StrCat("running on ", num_devices,
                                             " devices failed: ", evaluated.status().message()));
    }
    parts = *std::move(evaluated);
  } else {
    return Prefix(executable.status(), "building the per-device executable");
  }
  const hlo::Instruction& root = *entry.root();
  absl::StatusOr<hlo::Literal> assembled =
      spmd::AssembleLiteral(parts, ShardingOrReplicated(root), root.shape());
  if (!assembled.ok()) return Prefix(assembled.status(), "assembling the result");
  return assembled;
}

}  // namespace sharc::tools
