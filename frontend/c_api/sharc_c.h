/* sharc's C API: parse or build HLO modules, annotate their shardings,
 * compile them for a mesh of devices and run them on host buffers, from C or
 * any language with a C foreign-function interface. Plain C99; no C++ type
 * crosses this boundary and no C++ exception escapes it.
 *
 * Reference and examples: docs/c_api.md. Installed as <sharc/sharc_c.h>;
 * link with `find_package(sharc)` + `target_link_libraries(app sharc::sharc_c)`.
 *
 * ERRORS. Every function that can fail returns `sharc_error*`: NULL on
 * success, otherwise an error object the caller owns and releases with
 * sharc_error_free. It carries a stable code (sharc_error_code, numerically
 * Abseil's status codes) and a message that names what is at fault
 * (FILE:LINE:COL for text, the instruction for IR errors, the parameter for
 * inputs). On error, out-parameters are left unchanged. A NULL handle or
 * out-pointer is an SHARC_ERROR_INVALID_ARGUMENT error, never a crash.
 *
 * OWNERSHIP. Objects returned through `T** out` belong to the caller and are
 * released with the matching sharc_T_free (each accepts NULL). `const char*`
 * and sharc_array results are borrowed: valid until the object they came
 * from is freed. `char**` results are owned by
 * the caller and released with sharc_string_free. Input arrays and strings
 * are copied before the call returns; the caller may reuse them at once.
 *
 * THREADS. Distinct handles may be used from different threads at the same
 * time. One handle must not be used from two threads at once, except:
 * a compiled sharc_program may be run, reported and queried from several
 * threads (runs of one program take turns), and a sharc_module may be
 * compiled from several threads as long as nobody modifies it meanwhile.
 * sharc_error, sharc_result and sharc_report are immutable once returned.
 */
#ifndef SHARC_SHARC_C_H_
#define SHARC_SHARC_C_H_

#include <stddef.h>
#include <stdint.h>

#if defined(SHARC_C_BUILDING_LIBRARY)
#define SHARC_C_EXPORT __attribute__((visibility("default")))
#else
#define SHARC_C_EXPORT
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped when a function's meaning changes or one is removed. */
#define SHARC_C_API_VERSION 1

/* "0.1.0": the version of the library actually loaded. */
SHARC_C_EXPORT const char* sharc_version(void);

/* ------------------------------------------------------------------ errors */

/* The codes of Abseil's absl::StatusCode, with the same numbers. */
typedef enum sharc_error_code {
  SHARC_OK = 0,
  SHARC_ERROR_CANCELLED = 1,
  SHARC_ERROR_UNKNOWN = 2,
  /* Bad input: parse, verifier, sharding, mesh, shape or dtype errors; a
   * NULL handle; a compile error. */
  SHARC_ERROR_INVALID_ARGUMENT = 3,
  SHARC_ERROR_DEADLINE_EXCEEDED = 4,
  /* A file that does not exist. */
  SHARC_ERROR_NOT_FOUND = 5,
  SHARC_ERROR_ALREADY_EXISTS = 6,
  SHARC_ERROR_PERMISSION_DENIED = 7,
  /* Out of memory. */
  SHARC_ERROR_RESOURCE_EXHAUSTED = 8,
  SHARC_ERROR_FAILED_PRECONDITION = 9,
  /* The program was valid but running it failed (a collective between
   * devices failed or timed out, evaluation failed). */
  SHARC_ERROR_ABORTED = 10,
  /* An index past the end (parameter, output, value). */
  SHARC_ERROR_OUT_OF_RANGE = 11,
  /* Something sharc cannot do (Abseil's code 12), e.g. `--backend halide`
   * on an op Halide does not lower. */
  SHARC_ERROR_NOT_SUPPORTED = 12,
  /* A bug in sharc: please report it with the message. */
  SHARC_ERROR_INTERNAL = 13,
  SHARC_ERROR_UNAVAILABLE = 14,
  SHARC_ERROR_DATA_LOSS = 15,
  SHARC_ERROR_UNAUTHENTICATED = 16
} sharc_error_code;

typedef struct sharc_error sharc_error;

/* SHARC_OK for NULL. */
SHARC_C_EXPORT sharc_error_code sharc_error_get_code(const sharc_error* error);
/* The message; "" for NULL. Borrowed from `error`. */
SHARC_C_EXPORT const char* sharc_error_message(const sharc_error* error);
/* The `sharc` command's exit code for this error (driver/exit_codes.h,
 * docs/cli.md): 0 for NULL, 1 invalid input or compile error, 3 runtime
 * failure, 70 internal error. */
SHARC_C_EXPORT int sharc_error_exit_code(const sharc_error* error);
/* "INVALID_ARGUMENT", ...; "UNKNOWN_CODE" for a value outside the enum. */
SHARC_C_EXPORT const char* sharc_error_code_name(sharc_error_code code);
SHARC_C_EXPORT void sharc_error_free(sharc_error* error);

/* Releases a string returned through `char**`. */
SHARC_C_EXPORT void sharc_string_free(char* text);

/* ------------------------------------------------------- element types, arrays */

/* Element types (HLO names in comments). PRED is one byte, 0 or 1; F16 and
 * BF16 are 16-bit patterns; C64 and C128 are (real, imaginary) pairs of F32
 * and F64, as C's float complex and double complex. */
typedef enum sharc_dtype {
  SHARC_DTYPE_INVALID = 0,
  SHARC_DTYPE_PRED = 1, /* pred */
  SHARC_DTYPE_S8 = 2,
  SHARC_DTYPE_S16 = 3,
  SHARC_DTYPE_S32 = 4,
  SHARC_DTYPE_S64 = 5,
  SHARC_DTYPE_U8 = 6,
  SHARC_DTYPE_U16 = 7,
  SHARC_DTYPE_U32 = 8,
  SHARC_DTYPE_U64 = 9,
  SHARC_DTYPE_F16 = 10,
  SHARC_DTYPE_BF16 = 11,
  SHARC_DTYPE_F32 = 12,
  SHARC_DTYPE_F64 = 13,
  SHARC_DTYPE_C64 = 14,  /* c64 */
  SHARC_DTYPE_C128 = 15  /* c128 */
} sharc_dtype;

/* Bytes per element; 0 for an unknown dtype. */
SHARC_C_EXPORT size_t sharc_dtype_size(sharc_dtype dtype);
/* "f32", "pred", ...; "invalid" for an unknown dtype. */
SHARC_C_EXPORT const char* sharc_dtype_name(sharc_dtype dtype);

/* A dense row-major (C order) array on the host. As an input, it is read
 * during the call only. As an output (sharc_result_output), its pointers are
 * borrowed from the result. `dims` may be NULL when rank is 0 (a scalar);
 * `data` may be NULL when the array has no elements. */
typedef struct sharc_array {
  sharc_dtype dtype;
  int32_t rank;
  const int64_t* dims;
  const void* data;
} sharc_array;

/* --------------------------------------------------------------- modules */

/* An HLO module: the global program with its sharding annotations. */
typedef struct sharc_module sharc_module;

/* Parses and verifies HLO text (XLA's syntax, NUL-terminated). `filename`
 * names the text in messages ("<input>" if NULL): a parse error reads
 * "FILE:LINE:COL: error: ..." with the offending line and a caret; a
 * verifier error "FILE: error: ..." quoting the instruction. */
SHARC_C_EXPORT sharc_error* sharc_module_parse(const char* text, const char* filename,
                                               sharc_module** out);
/* Reads, parses and verifies a file. A missing file is NOT_FOUND. */
SHARC_C_EXPORT sharc_error* sharc_module_parse_file(const char* path, sharc_module** out);
/* An independent copy. */
SHARC_C_EXPORT sharc_error* sharc_module_clone(const sharc_module* module, sharc_module** out);
SHARC_C_EXPORT void sharc_module_free(sharc_module* module);

/* The canonical text (`sharc fmt`); parse(print(m)) gives back m. */
SHARC_C_EXPORT sharc_error* sharc_module_print(const sharc_module* module, char** out_text);

/* The entry computation's parameters and their shapes. A tuple-shaped
 * parameter reports SHARC_DTYPE_INVALID and rank -1. `dims` receives up to
 * `dims_capacity` entries; *out_rank is the full rank either way. */
SHARC_C_EXPORT sharc_error* sharc_module_num_parameters(const sharc_module* module,
                                                        int64_t* out_count);
SHARC_C_EXPORT sharc_error* sharc_module_parameter_shape(const sharc_module* module,
                                                         int64_t index, sharc_dtype* out_dtype,
                                                         int32_t* out_rank, int64_t* dims,
                                                         int32_t dims_capacity);

/* Sets the header's named mesh (`mesh={...}`) from the `--mesh` syntax,
 * "clients=2,data=2", and num_partitions to its device count. Partition
 * specs are resolved against this mesh. */
SHARC_C_EXPORT sharc_error* sharc_module_set_mesh(sharc_module* module, const char* mesh);

/* Annotates entry parameter `index`, or the entry's root, with a sharding,
 * either in HLO text, "{devices=[2,1]0,1}", "{replicated}",
 * "{devices=[2,1,2]<=[4] last_tile_dim_replicate}", or as a partition spec
 * over the module's mesh, "P(data, None)", "P((clients,data))", "P()".
 * The sharding must fit the value's rank; device ids are checked against the
 * device count when compiling. A tuple root takes a tuple sharding
 * "{{...}, {...}}". */
SHARC_C_EXPORT sharc_error* sharc_module_set_parameter_sharding(sharc_module* module,
                                                                int64_t index,
                                                                const char* sharding);
SHARC_C_EXPORT sharc_error* sharc_module_set_root_sharding(sharc_module* module,
                                                           const char* sharding);

/* --------------------------------------------------------------- builder */

/* Builds a module's entry computation op by op. Values are numbered in the
 * order they are added; a sharc_value is valid only with its builder. Every
 * op checks shapes as it is added, so a mistake is reported by the call that
 * makes it. Elementwise ops need operands of equal shape: broadcast first. */
typedef struct sharc_builder sharc_builder;
typedef int64_t sharc_value;

SHARC_C_EXPORT sharc_error* sharc_builder_create(const char* module_name, sharc_builder** out);
SHARC_C_EXPORT void sharc_builder_free(sharc_builder* builder);

/* The next entry parameter (numbered from 0 in the order of these calls).
 * `name` (without '%') may be NULL: "p<number>". */
SHARC_C_EXPORT sharc_error* sharc_builder_parameter(sharc_builder* builder, const char* name,
                                                    sharc_dtype dtype, int32_t rank,
                                                    const int64_t* dims, sharc_value* out);
/* A constant holding a copy of `value`. */
SHARC_C_EXPORT sharc_error* sharc_builder_constant(sharc_builder* builder,
                                                   const sharc_array* value, sharc_value* out);
/* Elementwise ops by their HLO names: unary "negate", "abs", "exponential",
 * "log", "tanh", "sqrt", "rsqrt", "logistic", "sine", "cosine", "floor",
 * "ceil", "sign", "not", ...; binary "add", "subtract", "multiply",
 * "divide", "maximum", "minimum", "power", "remainder", "and", "or", ... */
SHARC_C_EXPORT sharc_error* sharc_builder_unary(sharc_builder* builder, const char* op,
                                                sharc_value operand, sharc_value* out);
SHARC_C_EXPORT sharc_error* sharc_builder_binary(sharc_builder* builder, const char* op,
                                                 sharc_value lhs, sharc_value rhs,
                                                 sharc_value* out);
/* Element type conversion (HLO `convert`). */
SHARC_C_EXPORT sharc_error* sharc_builder_convert(sharc_builder* builder, sharc_value operand,
                                                  sharc_dtype dtype, sharc_value* out);
/* HLO `dot`: contracts lhs dims `lhs_contracting[i]` with rhs dims
 * `rhs_contracting[i]`; the batch dims pair likewise (both lists may be NULL
 * when their count is 0). A matrix product is one contracting pair (1, 0). */
SHARC_C_EXPORT sharc_error* sharc_builder_dot(sharc_builder* builder, sharc_value lhs,
                                              sharc_value rhs, const int64_t* lhs_contracting,
                                              const int64_t* rhs_contracting,
                                              int32_t num_contracting, const int64_t* lhs_batch,
                                              const int64_t* rhs_batch, int32_t num_batch,
                                              sharc_value* out);
/* Sum over `dims` of `operand` (HLO `reduce` with an add computation and a
 * zero of the operand's type); the other dims stay in order. */
SHARC_C_EXPORT sharc_error* sharc_builder_reduce_sum(sharc_builder* builder, sharc_value operand,
                                                     const int64_t* dims, int32_t num_dims,
                                                     sharc_value* out);
/* Same elements in row-major order, new dims. */
SHARC_C_EXPORT sharc_error* sharc_builder_reshape(sharc_builder* builder, sharc_value operand,
                                                  int32_t rank, const int64_t* dims,
                                                  sharc_value* out);
/* Result dim i is operand dim permutation[i]; `rank` is the operand's. */
SHARC_C_EXPORT sharc_error* sharc_builder_transpose(sharc_builder* builder, sharc_value operand,
                                                    const int64_t* permutation, int32_t rank,
                                                    sharc_value* out);
/* Broadcast to `dims` (`rank` entries); operand dim i becomes result dim
 * operand_dims_in_result[i] (one entry per operand dim; NULL for a scalar
 * operand). */
SHARC_C_EXPORT sharc_error* sharc_builder_broadcast(sharc_builder* builder, sharc_value operand,
                                                    int32_t rank, const int64_t* dims,
                                                    const int64_t* operand_dims_in_result,
                                                    sharc_value* out);
/* Any op from one line of HLO text, e.g.
 *   "%s = f32[4,2] slice(%x), slice={[0:4], [0:2]}"
 * Operands are referred to by their names (sharc_builder_value_name);
 * called computations by the names of those the builder made (reductions
 * make "%sharc.add.<type>"). Parameters use sharc_builder_parameter. Errors
 * read "<instruction>:1:COL: error: ..." with a caret under the line. */
SHARC_C_EXPORT sharc_error* sharc_builder_instruction(sharc_builder* builder,
                                                      const char* hlo_line, sharc_value* out);
/* The value's instruction name without '%' (borrowed). */
SHARC_C_EXPORT sharc_error* sharc_builder_value_name(const sharc_builder* builder,
                                                     sharc_value value, const char** out_name);
/* The value's shape, as sharc_module_parameter_shape reports shapes. */
SHARC_C_EXPORT sharc_error* sharc_builder_value_shape(const sharc_builder* builder,
                                                      sharc_value value, sharc_dtype* out_dtype,
                                                      int32_t* out_rank, int64_t* dims,
                                                      int32_t dims_capacity);
/* The module's mesh, as sharc_module_set_mesh. */
SHARC_C_EXPORT sharc_error* sharc_builder_set_mesh(sharc_builder* builder, const char* mesh);
/* Annotates a value, as sharc_module_set_parameter_sharding (HLO sharding
 * text or a partition spec over the builder's mesh). */
SHARC_C_EXPORT sharc_error* sharc_builder_set_sharding(sharc_builder* builder, sharc_value value,
                                                       const char* sharding);
/* A verified module whose entry returns `outputs` (one value, or a tuple of
 * several). The builder is unchanged and may go on. */
SHARC_C_EXPORT sharc_error* sharc_builder_finish(const sharc_builder* builder,
                                                 const sharc_value* outputs, int32_t num_outputs,
                                                 sharc_module** out);

/* ---------------------------------------------------------- compile options */

/* How MapReduce blocks (mr.* ops) are lowered before propagation
 * (`--mapreduce-mode`, docs/mapreduce.md). */
typedef enum sharc_mapreduce_mode {
  SHARC_MAPREDUCE_ANNOTATED = 0, /* internal sharding constraints (default) */
  SHARC_MAPREDUCE_NS = 1,        /* no internal constraints */
  SHARC_MAPREDUCE_LOOP = 2       /* map unrolled over the groups */
} sharc_mapreduce_mode;

/* Which kernels run the per-device program (`--backend`). */
typedef enum sharc_backend {
  /* Halide; the interpreter's kernels when Halide cannot run an op (the
   * program's notes say which). */
  SHARC_BACKEND_DEFAULT = 0,
  /* Halide, or a compile error naming the op Halide cannot run. */
  SHARC_BACKEND_HALIDE = 1,
  /* The reference interpreter's kernels. */
  SHARC_BACKEND_INTERPRETER = 2
} sharc_backend;

typedef struct sharc_options sharc_options;

/* Defaults: the module's own mesh and num_partitions, annotated MapReduce
 * lowering, the default backend, a 60 s collective timeout. */
SHARC_C_EXPORT sharc_error* sharc_options_create(sharc_options** out);
SHARC_C_EXPORT void sharc_options_free(sharc_options* options);
/* Overrides the module's mesh, like `--mesh clients=2,data=2`; it also sets
 * the device count. NULL or "" removes the override. */
SHARC_C_EXPORT sharc_error* sharc_options_set_mesh(sharc_options* options, const char* mesh);
/* Devices to partition for, like `--devices N` (must agree with a mesh
 * override); 0 removes the override. 1 runs the global program as written. */
SHARC_C_EXPORT sharc_error* sharc_options_set_num_devices(sharc_options* options,
                                                          int64_t num_devices);
SHARC_C_EXPORT sharc_error* sharc_options_set_mapreduce_mode(sharc_options* options,
                                                             sharc_mapreduce_mode mode);
SHARC_C_EXPORT sharc_error* sharc_options_set_backend(sharc_options* options,
                                                      sharc_backend backend);
/* A collective whose peers do not all arrive within `seconds` fails the run
 * with SHARC_ERROR_ABORTED naming the collective and the missing devices. */
SHARC_C_EXPORT sharc_error* sharc_options_set_collective_timeout(sharc_options* options,
                                                                 double seconds);
/* Nonzero: time every compiler pass, like `--pass-timings`; the program's
 * sharc_program_pass_timings returns the report. */
SHARC_C_EXPORT sharc_error* sharc_options_set_pass_timings(sharc_options* options, int enabled);

/* ---------------------------------------------------------------- programs */

/* A module compiled once for a device count: MapReduce and shard_map
 * lowering, sharding propagation, SPMD partitioning, kernels. The device
 * mesh stays up between runs. */
typedef struct sharc_program sharc_program;

/* Compiles a copy of `module` (later changes to it do not affect the
 * program). `options` may be NULL for the defaults. The device count is the
 * options' (mesh or num_devices), else the module's num_partitions. */
SHARC_C_EXPORT sharc_error* sharc_compile(const sharc_module* module,
                                          const sharc_options* options, sharc_program** out);
SHARC_C_EXPORT void sharc_program_free(sharc_program* program);

SHARC_C_EXPORT sharc_error* sharc_program_num_devices(const sharc_program* program,
                                                      int64_t* out_count);
/* 1 if the kernels are Halide's, 0 if the interpreter's. */
SHARC_C_EXPORT sharc_error* sharc_program_uses_halide(const sharc_program* program,
                                                      int* out_flag);
/* Notes for the user from compiling (e.g. why the interpreter's kernels
 * run); "" if none. Borrowed. */
SHARC_C_EXPORT sharc_error* sharc_program_notes(const sharc_program* program,
                                                const char** out_text);

/* With sharc_options_set_pass_timings, each compiler pass's wall time, as
 * `--pass-timings` prints it: "Total runtime (ms) of HLO passes: T", then
 * "Pass name, num runs, time (ms)" and one line per pass, longest first;
 * "" without it. Borrowed. */
SHARC_C_EXPORT sharc_error* sharc_program_pass_timings(const sharc_program* program,
                                                       const char** out_text);

/* The program's modules as text. */
typedef enum sharc_program_stage {
  SHARC_STAGE_PREPARED = 0,   /* global, MapReduce blocks and shard_maps lowered */
  SHARC_STAGE_PROPAGATED = 1, /* global, every value with its sharding */
  SHARC_STAGE_PER_DEVICE = 2  /* what each device runs, with collectives */
} sharc_program_stage;
SHARC_C_EXPORT sharc_error* sharc_program_print(const sharc_program* program,
                                                sharc_program_stage stage, char** out_text);

/* Parameters the program takes (those of the module's entry). */
SHARC_C_EXPORT sharc_error* sharc_program_num_parameters(const sharc_program* program,
                                                         int64_t* out_count);
SHARC_C_EXPORT sharc_error* sharc_program_parameter_shape(const sharc_program* program,
                                                          int64_t index, sharc_dtype* out_dtype,
                                                          int32_t* out_rank, int64_t* dims,
                                                          int32_t dims_capacity);

/* The outputs of one run: the root's arrays (a tuple root flattened into its
 * leaves, depth first). */
typedef struct sharc_result sharc_result;

/* Runs on global (unpartitioned) inputs, one per entry parameter, in order;
 * each must have the parameter's dtype and dims exactly (otherwise
 * INVALID_ARGUMENT naming the parameter and both shapes). The inputs are
 * split by the parameters' shardings, run on the devices, and the outputs
 * assembled. A failed run is SHARC_ERROR_ABORTED. */
SHARC_C_EXPORT sharc_error* sharc_program_run(sharc_program* program, const sharc_array* inputs,
                                              int64_t num_inputs, sharc_result** out);

SHARC_C_EXPORT void sharc_result_free(sharc_result* result);
SHARC_C_EXPORT sharc_error* sharc_result_num_outputs(const sharc_result* result,
                                                     int64_t* out_count);
/* Output `index` as an array whose dims and data are borrowed from `result`. */
SHARC_C_EXPORT sharc_error* sharc_result_output(const sharc_result* result, int64_t index,
                                                sharc_array* out);
/* Copies output `index` into caller memory of `capacity_bytes`, which must
 * be at least its size (element count times sharc_dtype_size). */
SHARC_C_EXPORT sharc_error* sharc_result_copy_output(const sharc_result* result, int64_t index,
                                                     void* destination, size_t capacity_bytes);

/* ------------------------------------------------------------ cost report */

/* What one device computes, reads, holds and sends in the program
 * (`sharc report`, spmd::CostReport). */
typedef struct sharc_report sharc_report;

SHARC_C_EXPORT sharc_error* sharc_program_report(const sharc_program* program,
                                                 sharc_report** out);
SHARC_C_EXPORT void sharc_report_free(sharc_report* report);
/* `sharc report --json`: an object with "schema_version" (1 today), flops,
 * bytes accessed, peak memory, collectives and the largest buffers.
 * Borrowed. */
SHARC_C_EXPORT sharc_error* sharc_report_json(const sharc_report* report, const char** out_json);
/* `sharc report` as text. Borrowed. */
SHARC_C_EXPORT sharc_error* sharc_report_text(const sharc_report* report, const char** out_text);
/* Per-device figures. */
SHARC_C_EXPORT sharc_error* sharc_report_num_devices(const sharc_report* report,
                                                     int64_t* out_count);
SHARC_C_EXPORT sharc_error* sharc_report_flops(const sharc_report* report, double* out_flops);
SHARC_C_EXPORT sharc_error* sharc_report_bytes_accessed(const sharc_report* report,
                                                        double* out_bytes);
SHARC_C_EXPORT sharc_error* sharc_report_peak_memory_bytes(const sharc_report* report,
                                                           int64_t* out_bytes);
/* Bytes this device sends, summed over the collectives. */
SHARC_C_EXPORT sharc_error* sharc_report_communication_bytes(const sharc_report* report,
                                                             int64_t* out_bytes);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SHARC_SHARC_C_H_ */
