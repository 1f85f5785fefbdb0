#include "frontend/jit.h"

#include <mutex>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "driver/compile_stages.h"

namespace sharc::frontend {

// A compiled program and the lock that keeps its runs one at a time.
struct Jitted::Compiled {
  std::shared_ptr<driver::CompiledProgram> program;
  std::mutex run_mu;
};

struct Jitted::State {
  TreeFunction fn;
  JitOptions options;
  std::source_location loc;
  std::mutex mu;
  // Keyed by the input signature: structure, then every leaf's shape.
  absl::flat_hash_map<std::string, std::shared_ptr<const TracedModule>> cache;
  absl::flat_hash_map<std::string, std::shared_ptr<Compiled>> compiled;
  int64_t trace_count = 0;
};

namespace {

std::string SignatureKey(const ShapeTree& args) {
  std::string key = StructureOf(args).ToString();
  for (const hlo::Shape& shape : Leaves(args)) absl::StrAppend(&key, "|", shape.ToString());
  return key;
}

}  // namespace

Jitted::Jitted(TreeFunction fn, JitOptions options, bool positional, std::source_location loc)
    : state_(std::make_shared<State>()), positional_(positional) {
  state_->fn = std::move(fn);
  state_->options = std::move(options);
  state_->loc = loc;
}

int64_t Jitted::trace_count() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->trace_count;
}

absl::StatusOr<std::shared_ptr<const TracedModule>> Jitted::Traced(const ShapeTree& args) const {
  const std::string key = SignatureKey(args);
  // Tracing runs under the lock: a function is traced once per signature even
  // when called from several threads.
  std::lock_guard<std::mutex> lock(state_->mu);
  auto it = state_->cache.find(key);
  if (it != state_->cache.end()) return it->second;
  ++state_->trace_count;
  absl::StatusOr<TracedModule> traced = TraceModule(state_->fn, args, state_->options, state_->loc);
  if (!traced.ok()) return traced.status();
  auto shared = std::make_shared<const TracedModule>(*std::move(traced));
  state_->cache.emplace(key, shared);
  return shared;
}

absl::StatusOr<std::unique_ptr<hlo::Module>> Jitted::Trace(const ShapeTree& args) const {
  absl::StatusOr<std::shared_ptr<const TracedModule>> traced = Traced(args);
  if (!traced.ok()) return traced.status();
  return (*traced)->module->Clone();
}

absl::StatusOr<std::unique_ptr<hlo::Module>> Jitted::Lower(const HostTree& args) const {
  return Trace(ShapesOf(args));
}

absl::StatusOr<std::shared_ptr<Jitted::Compiled>> Jitted::CompiledFor(
    const ShapeTree& args) const {
  absl::StatusOr<std::shared_ptr<const TracedModule>> traced = Traced(args);
  if (!traced.ok()) return traced.status();
  const std::string key = SignatureKey(args);
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    auto it = state_->compiled.find(key);
    if (it != state_->compiled.end()) return it->second;
  }
  const TracedModule& program = **traced;
  // The traced module keeps the MapReduce blocks (so it prints like the
  // papers' jaxprs); what runs has them lowered in the chosen mode, through
  // the compiler's first passes (driver/compiler_passes.h). On a mesh,
  // shard_maps become the partitioner's manual regions; on one device the
  // interpreter runs them.
  std::unique_ptr<hlo::Module> runnable = program.module->Clone();
  driver::ProgramOptions options;
  options.num_devices = program.mesh.has_value() ? program.mesh->num_devices() : 1;
  driver::CompileOptions prepare;
  prepare.mapreduce_mode = state_->options.mapreduce_mode;
  prepare.lower_shard_maps = options.num_devices > 1;
  if (absl::Status lowered = driver::PrepareModule(*runnable, prepare); !lowered.ok()) {
    return absl::Status(lowered.code(), absl::StrCat(FormatLocation(state_->loc), ": compiling ",
                                                     program.module->name(), ": ",
                                                     lowered.message()));
  }
  options.backend = state_->options.backend;
  absl::StatusOr<std::unique_ptr<driver::CompiledProgram>> compiled =
      driver::CompiledProgram::Compile(*runnable, options);
  if (!compiled.ok()) {
    return absl::Status(compiled.status().code(),
                        absl::StrCat(FormatLocation(state_->loc), ": compiling ",
                                     program.module->name(), ": ", compiled.status().message()));
  }
  auto entry = std::make_shared<Compiled>();
  entry->program = *std::move(compiled);
  std::lock_guard<std::mutex> lock(state_->mu);
  // Two threads may have compiled the same signature; the first one stays.
  return state_->compiled.emplace(key, std::move(entry)).first->second;
}

absl::StatusOr<std::shared_ptr<driver::CompiledProgram>> Jitted::Compile(
    const ShapeTree& args) const {
  absl::StatusOr<std::shared_ptr<Compiled>> compiled = CompiledFor(args);
  if (!compiled.ok()) return compiled.status();
  return (*compiled)->program;
}

absl::StatusOr<HostTree> Jitted::operator()(const HostTree& args) const {
  std::vector<hlo::Literal> inputs = Leaves(args);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].shape().is_array()) {
      return absl::InvalidArgumentError(absl::StrCat(FormatLocation(state_->loc), ": argument leaf ",
                                                     i, " is ", inputs[i].shape().ToString(),
                                                     "; leaves must be arrays"));
    }
  }
  absl::StatusOr<std::shared_ptr<Compiled>> compiled = CompiledFor(ShapesOf(args));
  if (!compiled.ok()) return compiled.status();
  absl::StatusOr<std::shared_ptr<const TracedModule>> traced = Traced(ShapesOf(args));
  if (!traced.ok()) return traced.status();
  absl::StatusOr<hlo::Literal> result;
  {
    std::lock_guard<std::mutex> lock((*compiled)->run_mu);
    result = (*compiled)->program->Run(inputs);
  }
  if (!result.ok()) {
    return absl::Status(result.status().code(),
                        absl::StrCat(FormatLocation(state_->loc), ": running ",
                                     (*traced)->module->name(), ": ", result.status().message()));
  }
  std::vector<hlo::Literal> outputs = std::move(result->elements());
  return Unflatten((*traced)->outputs, std::move(outputs));
}

}  // namespace sharc::frontend
