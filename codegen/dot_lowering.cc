// Halide lowering of dot (XLA's dot_general) and its schedules.
//
// Result dims are batch, lhs free, rhs free. The contraction is an RDom over
// the contracting dims. Floats accumulate in the compute type (f32 for
// f16/bf16, rounded once at the end; the interpreter accumulates in double,
// so results agree to rounding); integers accumulate in the unsigned type of
// the result's width, which wraps exactly like the interpreter's uint64 sum
// truncated to the result.
//
// The f32 schedule is the register-blocked outer-product kernel measured in
// perf_anchors.md §2.1 (Halide "v2"): output tiles (columns x rows) whose
// accumulators fill the register file (64x6, 24 zmm accumulators, with
// AVX-512, or 32x12 or 16x24 where 64 columns do not fit; 24x4 or 16x6,
// 12 ymm, with AVX2: ChooseRegisterTile), the
// tile-wide panel of the right-hand side packed contiguously once per
// parallel task when it holds 256 KiB of f32 or more, and tasks of (panel,
// chunk of row tiles), at least 8 of them. A large lhs is taken in serial
// blocks of rows, each a parallel loop over the panels (RowTilesPerBlock),
// and packed block by block into the tile's row order, as is a transposed
// lhs of 1 MiB or more, whole (PacksLhs).
#include <algorithm>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "codegen/gemm_packing.h"
#include "codegen/host_caches.h"
#include "codegen/lowering.h"
#include "codegen/register_tile.h"

namespace sharc::codegen {
namespace {

using Halide::Expr;

std::vector<int64_t> FreeDims(int64_t rank, const hlo::IntList& batch,
                              const hlo::IntList& contracting) {
  std::vector<int64_t> free;
  for (int64_t d = 0; d < rank; ++d) {
    if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
        std::find(contracting.begin(), contracting.end(), d) == contracting.end()) {
      free.push_back(d);
    }
  }
  return free;
}

Halide::Type AccumulatorType(hlo::PrimitiveType result) {
  if (hlo::IsFloatingPoint(result)) return ComputeType(result);
  return Halide::UInt(StorageType(result).bits());
}

Expr ToAccumulator(const Expr& v, hlo::PrimitiveType type, Halide::Type acc) {
  Expr c = ToCompute(v, type);
  if (acc.is_uint() && !c.type().is_float()) {
    // Sign- or zero-extend first, then wrap to the accumulator's width.
    c = Halide::cast(c.type().is_int() ? Halide::Int(64) : Halide::UInt(64), c);
  }
  return Halide::cast(acc, c);
}

// Schedules `out` (the dot's result, or an elementwise epilogue of it with
// the same dims) and the dot's stages. `x` is the innermost result dim
// (rhs free), `y` the next one (lhs free), batch dims outside.
struct DotStages {
  Halide::Func accumulator;
  Halide::Func packed_rhs;  // defined only for the plain 2-D contraction
  Halide::Func packed_lhs;  // defined only where PacksLhs
  bool lhs_transposed = false;  // the lhs's contracting dim is its outer one
  // Row tiles outside column panels, the whole rhs packed once by panels
  // (RowTileOrder). packed_rhs is then (column in panel, k, panel).
  bool row_tile_order = false;
  Halide::RDom r;
  hlo::PrimitiveType type;
  std::vector<int64_t> dims;  // result dims, HLO order
  int64_t k = 0;              // extent of a single contracting dim
  // Leading batch dims of a batched GEMM (one lhs free, one rhs free and
  // one contracting dim): each batch is a 2-D GEMM, and batches are the
  // parallel tasks (BatchedGemmSchedule). 0 otherwise.
  int64_t batch_dims = 0;
};

// Rows of the result per serial block. Each block is a parallel loop over
// all the column panels, so the lhs rows of one block are read once per
// panel while they are, presumably, still in the L3 (32 MiB on this Zen 3,
// shared with the host's other tenants; there are no cache counters here to
// confirm it). Each block repacks every rhs panel, a strided read of the
// whole rhs, so blocks cannot be small. Measured on Zen 3 against OpenBLAS
// in the same run (docs/performance_log.md, session 14), 2048^3 on 1 thread:
// 0.87-0.95 unblocked, 0.91-1.00 in two blocks of 1024 rows (8 MiB of lhs
// each), 0.92-0.96 in four of 512, 0.84-0.85 in eight of 256; alternated
// in the same minutes, two blocks won two rounds of three. 2 threads:
// 0.90-0.97 unblocked, 1.00-1.03 in two blocks in the paired runs, but 0.93
// and 0.97 in the later sweeps. 2048x1024x2048 (8 MiB of lhs) ran 108-127 ms
// in two blocks against 116-143 unblocked. 1024^3 (4 MiB) lost in two
// blocks (0.92-0.99 against 1.05-1.09), so an lhs of 4 MiB or less stays
// one block. Only the tiled f32 schedule with at least 8 column panels is
// blocked (with fewer, tasks split the rows instead), and only with a single
// contracting dim (`k` is 0 otherwise).
constexpr int64_t kUnblockedLhsBytes = int64_t{4} << 20;
// The rhs (as f32) from which the tiled schedule packs it (ScheduleDot).
constexpr int64_t kPackedRhsBytes = int64_t{256} << 10;
constexpr int64_t kLhsBlockBytes = int64_t{8} << 20;

// Row tiles per block for an lhs of `m` rows of `k` f32 (the rows as they
// are, not padded to whole tiles, so the rule does not depend on the tile):
// one block up to 4 MiB, else at least two of at most 8 MiB, give or take
// a row tile.
int64_t RowTilesPerBlock(int64_t m, int64_t k, int64_t row_tiles) {
  const int64_t lhs_bytes = m * k * 4;
  if (lhs_bytes <= kUnblockedLhsBytes) return row_tiles;
  const int64_t blocks = std::max<int64_t>(2, (lhs_bytes + kLhsBlockBytes - 1) / kLhsBlockBytes);
  return (row_tiles + blocks - 1) / blocks;
}

// How the tiled f32 schedule splits an [m, n] result into parallel tasks:
// (column panel, chunk of row tiles) pairs, at least 8 (MinGemmTasks where
// the lhs is one block) when there are rows enough, so that few panels
// (small n) still give every thread work in one parallel loop. With a
// single chunk, a large lhs is taken in serial blocks of rows
// (RowTilesPerBlock).
struct TaskSplit {
  int64_t panels = 0;
  int64_t row_tiles = 0;
  int64_t chunks = 0;               // of row tiles per panel
  int64_t row_tiles_per_block = 0;  // row_tiles: one block
};

// Tasks a GEMM's parallel loop needs at least, where its lhs is one block
// (RowTilesPerBlock): two a core, up to 8. More chunks than that cost time,
// as each chunk of a panel packs the whole panel again. On the session 28
// host (2 cores), a weight gradient's [256,256] GEMM over k = 2048 (4
// panels of 64 columns) took 2.07-2.14 ms in 4 tasks against 2.47-2.68 in 8
// (TN; NN 1.79-1.85 against 1.99-2.12), one thread, four alternations of
// `sharc run --profile`; in the medium training step its 16 such GEMMs took
// 36.6-37.3 ms against 42.8. A larger lhs keeps 8: as one chunk it would be
// taken in blocks, and the step's [2048,1024]x[1024,256] GEMMs took 8.8-10.3
// ms that way against 7.1-7.9. The kernel cache is per machine, so a
// kernel keeps the core count it was compiled for.
int64_t MinGemmTasks() {
  static const int64_t tasks =
      std::min<int64_t>(8, 2 * std::max<int64_t>(1, std::thread::hardware_concurrency()));
  return tasks;
}

TaskSplit SplitTasks(int64_t m, int64_t n, int64_t k, RegisterTile tile, int lanes) {
  TaskSplit t;
  t.panels = (n + tile.vectors * lanes - 1) / (tile.vectors * lanes);
  t.row_tiles = (m + tile.rows - 1) / tile.rows;
  // (k is 0 for several contracting dims: the lhs's size is unknown here.)
  const int64_t min_tasks = k > 0 && m * k * 4 <= kUnblockedLhsBytes ? MinGemmTasks() : 8;
  t.chunks = std::min<int64_t>(t.row_tiles, (min_tasks + t.panels - 1) / t.panels);
  t.row_tiles_per_block = t.chunks > 1 ? t.row_tiles : RowTilesPerBlock(m, k, t.row_tiles);
  return t;
}

// Where the lhs is taken in blocks (over 4 MiB, at least 8 panels), each
// block is first packed into the register tile's row order: for each row
// tile, its rows' k-th values side by side, so that a k step's broadcasts
// come from one run of `rows` floats and a tile's lhs is one contiguous
// stream rather than `rows` streams a row apart. Every panel of the block
// reads it again. The price is a copy of the block (at most 8 MiB, f32),
// allocated while the block runs.
// Compared in one process on Zen 3 (`bm_codegen_kernel --vs`, packed over
// unpacked, run each way round: docs/performance_log.md, session 17), 1 thread:
// 16384x256x1024 1.43 / 1.50, 4096x1024x1024 1.04 / 1.04, 2048^3 1.02 /
// 1.07; 2 threads: 1.35 / 1.26, 1.04 / 1.06, 1.04 / 1.04. Per FLOP against
// 1024^3 in one process, 16384x256x1024 went from 0.67 to 0.93, 4096x1024x1024
// from 0.82-0.84 to 0.93 and 2048^3 from 0.89-0.91 to 0.98. Packing every
// lhs did not pay where it fits (one block): 1024^3 1.03 / 1.01 (1 thread),
// 0.99 / 1.01 (2), 512^3 0.99 / 0.97, and 256^3 on 2 threads 0.89 / 0.88
// (one more parallel loop in a 0.25 ms kernel).
bool LhsTakenInBlocks(const TaskSplit& t) { return t.row_tiles_per_block < t.row_tiles; }

// Whether the f32 tiled schedule packs an lhs of `elements`: where it is
// taken in blocks (LhsTakenInBlocks), and, from 1 MiB, where it is
// transposed (its contracting dim the outer one), whose k steps are a whole
// row apart, so that every step of a tile reads another cache line; that
// one is packed once, at the root. Transposed, packed over unpacked, each
// way round (session 17): 1024^3 1.95 / 1.84 on 1 thread, 1.76 / 1.68 on
// 2 (then within 1% of the untransposed GEMM per FLOP), 512^3 1.32 / 1.26
// and 1.24 / 1.26; 256^3 (256 KiB) 1.06 / 1.00 and 0.98 / 0.93, so not
// below 1 MiB.
bool PacksLhs(const TaskSplit& t, int64_t elements, bool transposed) {
  return LhsTakenInBlocks(t) || (transposed && PacksTransposedLhs(elements));
}

// Whether a plain 2-D f32 GEMM runs row tiles outside column panels: for
// each row tile, every panel in turn, with the whole rhs packed once
// beforehand, panel after panel (DotStages::row_tile_order). The packed rhs
// must stay in the L2 (half of it, leaving room for the lhs and output
// streams), and packing must pay (256 KiB, ScheduleDot). The usual order
// (each panel down all rows) writes the output, and reads an epilogue's
// extra input, as column strips a row apart, one cache line per row and 4
// KiB page, which the prefetchers do not follow; row tiles outside write
// and read whole rows, and the lhs tile stays in L1 across the panels.
// Measured on the session 29 host (Emerald Rapids, 2 MiB L2, one thread,
// `bm_codegen_kernel`, alternated four times each way): [2048,256] x
// [256,1024] 139-149 -> 146-155 GFLOP/s, its transposed-rhs form 146-147
// -> 153-154, with the ReLU gradient's epilogue 133-136 -> 136-144,
// [2048,256] x [256,256] 153-155 -> 161-164, [2048,1024] x [1024,256]
// (1 MiB) level at 155-159. Panels must be whole (n a multiple of the
// tile's columns) so that a column's panel and offset in it are plain
// divisions, and row tiles as many as the tasks the usual order would make
// (MinGemmTasks); a lhs taken in blocks keeps the usual order (not
// measured).
bool RowTileOrder(int64_t m, int64_t n, int64_t k, RegisterTile tile, int lanes) {
  if (k <= 0 || tile.vectors == 0 || n % (int64_t{tile.vectors} * lanes) != 0) return false;
  // The row tiles are the parallel tasks: as many as the usual split's.
  if ((m + tile.rows - 1) / tile.rows < MinGemmTasks()) return false;
  const int64_t rhs_bytes = k * n * 4;
  return rhs_bytes >= kPackedRhsBytes && rhs_bytes <= HostCacheSizes().l2_bytes / 2 &&
         !LhsTakenInBlocks(SplitTasks(m, n, k, tile, lanes));
}

// k steps per iteration of the register tile's loop: 2 when they divide the
// single contracting dim (`k`; with several, `k` is 0 and the loop stays
// one step, since the innermost of them may be odd), so the unrolled steps
// need no guard. One step is 12 FMAs and 7 loads (AVX2's 24x4 tile)
// plus the loop's own add, compare and branch. Compared in one process on
// Zen 3 (`bm_codegen_kernel --vs`, the rate of the unrolled kernel over the
// rolled one), 1 thread: 2048^3 1.13 by 2 and 1.04-1.09 by 4; by 4 over by
// 2 read 1.006 (2048^3) and 1.014 (1024^3), by 8 over by 4 0.997. By 4,
// 1024^3 1.067, 512^3 1.03, 256^3 1.16, 4096x1024x1024 1.049; 2 threads
// 2048^3 1.098, 1024^3 1.069. Each step unrolled costs compile time (the
// loop is emitted twice, once for the last, shifted panel): a cold 1024
// GEMM compiled in 58-63 ms rolled, 82-90 by 2, 110-119 by 4; by 4 read
// about 1% faster than by 2, inside the noise, so the compile time decides.
int KStepsPerIteration(int64_t k) { return k > 0 && k % 2 == 0 ? 2 : 1; }

// A batched GEMM (attention's [batch, heads, seq, head_dim] products and
// their gradients): the 2-D register tile inside each batch, the batches
// fused into one parallel loop (a batch is one task: 128x128x32 is 0.5M
// FMAs, and splitting it would add a parallel loop per batch), and a
// packed rhs per batch where it is given (a transposed rhs, whose n runs
// are a row apart, as in q k^T).
void ScheduleBatchedGemm(const DotStages& s, Halide::Func out, RegisterTile tile, int lanes) {
  std::vector<Halide::Var> args = out.args();  // innermost first
  Halide::Var x = args[0], y = args[1], xi("xi"), yi("yi");
  out.tile(x, y, xi, yi, tile.vectors * lanes, tile.rows).vectorize(xi, lanes).unroll(xi).unroll(yi);
  out.reorder(xi, yi, y, x);
  Halide::Var batch = args[2];
  for (size_t i = 3; i < args.size(); ++i) {
    Halide::Var fused(absl::StrCat("batch", i));
    out.fuse(batch, args[i], fused);
    batch = fused;
  }
  out.parallel(batch);
  Halide::Func acc = s.accumulator;
  std::vector<Halide::Var> aargs = acc.args();
  acc.compute_at(out, y).vectorize(aargs[0], lanes).unroll(aargs[0]).unroll(aargs[1]);
  std::vector<Halide::VarOrRVar> order = {aargs[0], aargs[1], s.r[0]};
  for (size_t i = 2; i < aargs.size(); ++i) order.push_back(aargs[i]);
  acc.update().reorder(order).vectorize(aargs[0], lanes).unroll(aargs[0]).unroll(aargs[1]);
  if (const int steps = KStepsPerIteration(s.k); steps > 1) {
    Halide::RVar k_outer("k_outer"), k_inner("k_inner");
    acc.update().split(s.r[0], k_outer, k_inner, steps).unroll(k_inner);
  }
  if (s.packed_rhs.defined()) {
    Halide::Func p = s.packed_rhs;
    p.compute_at(out, batch).vectorize(p.args()[0], lanes);
  }
}

void ScheduleDot(DotStages s, Halide::Func out) {
  const int64_t rank = static_cast<int64_t>(s.dims.size());
  std::vector<Halide::VarOrRVar> reduction_order;
  for (int i = 0; i < s.r.dimensions(); ++i) reduction_order.push_back(s.r[i]);
  if (rank == 0) {
    s.accumulator.compute_at(out, Halide::Var::outermost());
    return;
  }
  std::vector<Halide::Var> args = out.args();  // innermost first
  Halide::Var x = args[0];
  const int64_t n = s.dims[static_cast<size_t>(rank - 1)];
  const int64_t m = rank >= 2 ? s.dims[static_cast<size_t>(rank - 2)] : 1;
  const bool f32 = s.type == hlo::PrimitiveType::kF32;
  const int lanes = NativeLanes(Halide::Float(32));
  const RegisterTile tile = ChooseRegisterTile(m, n, lanes, NativeVectorRegisters());
  const int tile_cols = tile.vectors * lanes;
  const int tile_rows = tile.rows;
  // Small or non-f32 dots: one native f32 vector, 8 lanes of anything else.
  const int vec = f32 ? lanes : 8;
  if (s.batch_dims > 0 && f32 && tile.vectors > 0) {
    ScheduleBatchedGemm(s, out, tile, lanes);
    return;
  }
  if (rank >= 2 && f32 && tile.vectors > 0) {
    Halide::Var y = args[1], xi("xi"), yi("yi");
    out.tile(x, y, xi, yi, tile_cols, tile_rows).vectorize(xi, lanes).unroll(xi).unroll(yi);
    // The accumulator tile is computed at `acc_at`, tasks are `task`, and
    // the packed lhs (PacksLhs) at `lhs_packed_at`.
    Halide::Var acc_at = y, task = x;
    Halide::LoopLevel lhs_packed_at = Halide::LoopLevel::root();
    if (s.row_tile_order) {
      // Tasks are row tiles, each over every panel; the rhs is packed once,
      // in parallel by panels.
      out.reorder(xi, yi, x, y);
      acc_at = x;
      task = y;
      Halide::Func p = s.packed_rhs;
      std::vector<Halide::Var> pargs = p.args();  // column in panel, k, panel
      p.compute_root()
          .bound(pargs[0], 0, tile_cols)
          .vectorize(pargs[0], lanes)
          .unroll(pargs[0])
          .parallel(pargs[2]);
    } else {
      out.reorder(xi, yi, y, x);
      const TaskSplit split = SplitTasks(m, n, s.k, tile, lanes);
      // Tasks are (column panel, chunk of row tiles) pairs (SplitTasks).
      // Each task packs its own panel (a chunked panel is packed once per
      // chunk). The packed lhs goes per block or else at the root.
      if (split.chunks > 1) {
        Halide::Var yo("yo"), yc("yc"), t("t");
        const int64_t per = (split.row_tiles + split.chunks - 1) / split.chunks;
        out.split(y, yo, yc, static_cast<int>(per), Halide::TailStrategy::GuardWithIf);
        out.reorder(xi, yi, yc, x, yo).fuse(x, yo, t);
        acc_at = yc;
        task = t;
      } else if (LhsTakenInBlocks(split)) {
        // Tasks are whole panels: a large lhs goes through them in serial
        // blocks of rows, each packed first.
        Halide::Var block("row_block");
        out.split(y, block, y, static_cast<int>(split.row_tiles_per_block),
                  Halide::TailStrategy::GuardWithIf);
        out.reorder(xi, yi, y, x, block);
        lhs_packed_at = Halide::LoopLevel(out, block);
      }
      // Packing the rhs panel pays once the rhs is 256 KiB (counted as the
      // packed f32, whatever the rhs type): unpacked, an NxN GEMM's panel
      // rows are then 1 KiB apart or more and fall into a few L1 sets, so
      // every k step reloads its row from L2. On Zen 3 (1 thread) N=256
      // packed took 0.41-0.46 ms against 0.45-0.50 unpacked, five
      // alternations out of five; N=128 (64 KiB) was level or slower packed.
      // (On Ice Lake, 1 MiB L2 and 48 KiB L1, N=256 was level and N=512
      // fell from 161 to 119 GFLOP/s unpacked.)
      if (s.packed_rhs.defined() && s.k * n * 4 >= kPackedRhsBytes) {
        Halide::Func p = s.packed_rhs;
        p.compute_at(out, task).vectorize(p.args()[0], lanes).unroll(p.args()[0]);
      }
    }
    if (s.packed_lhs.defined()) {
      // In parallel, 8 row tiles a task; guarded, since a shifted first task
      // of fewer row tiles would start before row 0 (a long k leaves few
      // rows in a block of 8 MiB).
      Halide::Func p = s.packed_lhs;
      std::vector<Halide::Var> pargs = p.args();  // row in tile, k, row tile
      p.compute_at(lhs_packed_at).bound(pargs[0], 0, tile_rows);
      if (s.lhs_transposed) {
        // A transposed lhs ([k, m]) holds a row tile's values for one k side
        // by side, and a task's 8 row tiles are one run of its row: copy
        // that run for each k (8 short vectors into 8 sequential streams).
        // Vectorised along k instead, every lane loaded from another row
        // (4 KiB apart for m = 1024, all in one L1 set), and packing an
        // 8 MiB lhs took a fifth of its GEMM's time.
        Halide::Var task("qtask"), tile_in_task("qtile");
        p.split(pargs[2], task, tile_in_task, 8, Halide::TailStrategy::GuardWithIf)
            .reorder(pargs[0], tile_in_task, pargs[1], task)
            .vectorize(pargs[0])
            .unroll(tile_in_task)
            .parallel(task);
      } else {
        p.unroll(pargs[0])
            .vectorize(pargs[1], lanes)
            .parallel(pargs[2], 8, Halide::TailStrategy::GuardWithIf);
      }
    }
    out.parallel(task);
    Halide::Func acc = s.accumulator;
    std::vector<Halide::Var> aargs = acc.args();
    acc.compute_at(out, acc_at).vectorize(aargs[0], lanes).unroll(aargs[0]).unroll(aargs[1]);
    std::vector<Halide::VarOrRVar> order = {aargs[0], aargs[1]};
    order.insert(order.end(), reduction_order.begin(), reduction_order.end());
    for (size_t i = 2; i < aargs.size(); ++i) order.push_back(aargs[i]);
    acc.update().reorder(order).vectorize(aargs[0], lanes).unroll(aargs[0]).unroll(aargs[1]);
    if (const int steps = KStepsPerIteration(s.k); steps > 1) {
      Halide::RVar k_outer("k_outer"), k_inner("k_inner");
      acc.update().split(s.r[0], k_outer, k_inner, steps).unroll(k_inner);
    }
    return;
  }
  // Small or non-f32 dots: vectorise the result rows, parallelise over rows.
  Halide::Func acc = s.accumulator;
  std::vector<Halide::Var> aargs = acc.args();
  if (rank >= 2) {
    Halide::Var y = args[1];
    if (n >= vec) out.vectorize(x, vec);
    // Splits must not exceed the extent (the shifted tail would start
    // before 0).
    if (m >= 16) {
      out.parallel(y, 8);
    } else if (m >= 2) {
      out.parallel(y);
    }
    acc.compute_at(out, y);
  } else {
    if (n >= vec) out.vectorize(x, vec);
    acc.compute_at(out, Halide::Var::outermost());
  }
  if (n >= vec) {
    acc.vectorize(aargs[0], vec);
    std::vector<Halide::VarOrRVar> order = {aargs[0]};
    order.insert(order.end(), reduction_order.begin(), reduction_order.end());
    for (size_t i = 1; i < aargs.size(); ++i) order.push_back(aargs[i]);
    acc.update().reorder(order).vectorize(aargs[0], vec);
  }
}

absl::StatusOr<Lowered> LowerDot(const hlo::Instruction& inst,
                                 absl::Span<const LoweredValue> ops) {
  const hlo::PrimitiveType t = inst.shape().type();
  if (t == hlo::PrimitiveType::kPred) return LoweringError(inst, "dot of pred is not defined");
  const hlo::IntList& lb = inst.attr_ints("lhs_batch_dims");
  const hlo::IntList& lc = inst.attr_ints("lhs_contracting_dims");
  const hlo::IntList& rb = inst.attr_ints("rhs_batch_dims");
  const hlo::IntList& rc = inst.attr_ints("rhs_contracting_dims");
  const hlo::Shape& lhs = ops[0].shape;
  const hlo::Shape& rhs = ops[1].shape;
  std::vector<int64_t> lf = FreeDims(lhs.rank(), lb, lc);
  std::vector<int64_t> rf = FreeDims(rhs.rank(), rb, rc);
  const Halide::Type acc_type = AccumulatorType(t);

  std::vector<Halide::Var> vars = HloVars(inst.shape().rank());
  std::vector<Halide::Range> ranges;
  for (size_t i = lc.size(); i-- > 0;) ranges.emplace_back(0, static_cast<int>(lhs.dim(lc[i])));
  const bool empty_contraction = [&] {
    for (int64_t d : lc) if (lhs.dim(d) == 0) return true;
    return false;
  }();

  Lowered out;
  out.kind = LoweringKind::kDot;
  out.func = Halide::Func(HalideName("dot", inst));
  DotStages stages;
  stages.type = t;
  stages.dims = inst.shape().dims();
  if (lc.size() == 1) stages.k = lhs.dim(lc[0]);
  stages.accumulator = Halide::Func(HalideName("dot_acc", inst));
  Define(stages.accumulator, vars, make_zero(acc_type));
  if (ranges.empty()) {
    // An outer product: one term per result element, no reduction.
    std::vector<Expr> li(static_cast<size_t>(lhs.rank())), ri(static_cast<size_t>(rhs.rank()));
    size_t v = 0;
    for (size_t i = 0; i < lb.size(); ++i, ++v) {
      li[static_cast<size_t>(lb[i])] = vars[v];
      ri[static_cast<size_t>(rb[i])] = vars[v];
    }
    for (int64_t d : lf) li[static_cast<size_t>(d)] = vars[v++];
    for (int64_t d : rf) ri[static_cast<size_t>(d)] = vars[v++];
    stages.accumulator = Halide::Func(HalideName("dot_acc", inst));
    Define(stages.accumulator, vars,
           ToAccumulator(Call(ops[0].func, li), lhs.type(), acc_type) *
               ToAccumulator(Call(ops[1].func, ri), rhs.type(), acc_type));
  } else if (!empty_contraction) {
    stages.r = Halide::RDom(ranges, HalideName("k", inst));
    auto k_of = [&](size_t i) -> Expr { return stages.r[static_cast<int>(lc.size() - 1 - i)]; };
    std::vector<Expr> li(static_cast<size_t>(lhs.rank())), ri(static_cast<size_t>(rhs.rank()));
    size_t v = 0;
    for (size_t i = 0; i < lb.size(); ++i, ++v) {
      li[static_cast<size_t>(lb[i])] = vars[v];
      ri[static_cast<size_t>(rb[i])] = vars[v];
    }
    for (int64_t d : lf) li[static_cast<size_t>(d)] = vars[v++];
    for (int64_t d : rf) ri[static_cast<size_t>(d)] = vars[v++];
    for (size_t i = 0; i < lc.size(); ++i) {
      li[static_cast<size_t>(lc[i])] = k_of(i);
      ri[static_cast<size_t>(rc[i])] = k_of(i);
    }
    Expr a = ToAccumulator(Call(ops[0].func, li), lhs.type(), acc_type);
    Expr b;
    if (lb.empty() && lc.size() == 1 && lf.size() == 1 && rf.size() == 1) {
      // Plain [m,k]x[k,n] (any operand layout): pack the rhs as (n, k).
      const int64_t m = lhs.dim(lf[0]), k = lhs.dim(lc[0]), n = rhs.dim(rf[0]);
      const int lanes = NativeLanes(Halide::Float(32));
      const RegisterTile tile = ChooseRegisterTile(m, n, lanes, NativeVectorRegisters());
      Halide::Var pn("pn"), pk("pk");
      std::vector<Expr> pi(2);
      pi[static_cast<size_t>(rc[0])] = pk;
      stages.packed_rhs = Halide::Func(HalideName("dot_packed_rhs", inst));
      if (t == hlo::PrimitiveType::kF32 && RowTileOrder(m, n, k, tile, lanes)) {
        const int cols = tile.vectors * lanes;
        Halide::Var panel("ppanel");
        pi[static_cast<size_t>(rf[0])] = panel * cols + pn;
        stages.row_tile_order = true;
        stages.packed_rhs(pn, pk, panel) = ToAccumulator(Call(ops[1].func, pi), rhs.type(), acc_type);
        b = stages.packed_rhs(vars[1] % cols, stages.r[0], vars[1] / cols);
      } else {
        pi[static_cast<size_t>(rf[0])] = pn;
        stages.packed_rhs(pn, pk) = ToAccumulator(Call(ops[1].func, pi), rhs.type(), acc_type);
        b = stages.packed_rhs(vars[1], stages.r[0]);
      }
      out.helpers.push_back(stages.packed_rhs);
      if (t == hlo::PrimitiveType::kF32 && tile.vectors > 0 && k >= lanes &&
          PacksLhs(SplitTasks(m, n, k, tile, lanes), m * k, /*transposed=*/lc[0] < lf[0])) {
        // packed_lhs(i, k, t) = lhs(t * rows + i, k) in the compute type; rows
        // past the last repeat it (ScheduleDot bounds i to the tile's rows),
        // and the clamp keeps every read inside the lhs whatever the schedule.
        Halide::Var qi("qi"), qk("qk"), qt("qt");
        std::vector<Expr> qa(2);
        qa[static_cast<size_t>(lf[0])] = Halide::clamp(qt * tile.rows + qi, 0, static_cast<int>(m - 1));
        qa[static_cast<size_t>(lc[0])] = qk;
        stages.packed_lhs = Halide::Func(HalideName("dot_packed_lhs", inst));
        stages.lhs_transposed = lc[0] < lf[0];
        stages.packed_lhs(qi, qk, qt) = ToAccumulator(Call(ops[0].func, qa), lhs.type(), acc_type);
        a = stages.packed_lhs(vars[0] % tile.rows, stages.r[0], vars[0] / tile.rows);
        out.helpers.push_back(stages.packed_lhs);
      }
    } else if (!lb.empty() && lc.size() == 1 && lf.size() == 1 && rf.size() == 1) {
      stages.batch_dims = static_cast<int64_t>(lb.size());
      b = ToAccumulator(Call(ops[1].func, ri), rhs.type(), acc_type);
      if (rf[0] < rc[0] && t == hlo::PrimitiveType::kF32) {
        // A transposed rhs ([.., n, k], as k in q k^T): a k step's vector of
        // n would gather values a row apart, so each batch's rhs is first
        // packed as (n, k) (ScheduleBatchedGemm).
        Halide::Var pn("pn"), pk("pk");
        std::vector<Halide::Var> pargs = {pn, pk};
        std::vector<Expr> pi(static_cast<size_t>(rhs.rank())), at = {vars[lb.size() + 1], stages.r[0]};
        pi[static_cast<size_t>(rf[0])] = pn;
        pi[static_cast<size_t>(rc[0])] = pk;
        for (size_t i = 0; i < rb.size(); ++i) {
          Halide::Var pb(absl::StrCat("pb", i));
          pargs.push_back(pb);
          pi[static_cast<size_t>(rb[i])] = pb;
          at.push_back(vars[i]);
        }
        stages.packed_rhs = Halide::Func(HalideName("dot_packed_rhs", inst));
        stages.packed_rhs(pargs) = ToAccumulator(Call(ops[1].func, pi), rhs.type(), acc_type);
        b = stages.packed_rhs(at);
        out.helpers.push_back(stages.packed_rhs);
      }
    } else {
      b = ToAccumulator(Call(ops[1].func, ri), rhs.type(), acc_type);
    }
    std::vector<Expr> lhs_args(vars.rbegin(), vars.rend());
    Expr acc = Call(stages.accumulator, AsExprs(vars));
    stages.accumulator(lhs_args) = acc + a * b;
  } else {
    stages.r = Halide::RDom();
  }
  Expr result = Call(stages.accumulator, AsExprs(vars));
  if (acc_type.is_uint() && !hlo::IsFloatingPoint(t)) {
    result = Halide::cast(StorageType(t), result);
  } else {
    result = ToStorage(result, t);
  }
  Define(out.func, vars, result);
  out.accumulator = stages.accumulator;
  if (!stages.r.defined()) {
    out.kind = LoweringKind::kInline;
    return out;
  }
  out.schedule = [stages](Halide::Func consumer) { ScheduleDot(stages, consumer); };
  return out;
}

}  // namespace

void RegisterDotLowering(LoweringTable& table) {
  table.Add(hlo::Opcode::kDot, LowerDot, [](const hlo::Instruction& inst) {
    if (inst.shape().is_array() && inst.shape().type() == hlo::PrimitiveType::kPred) {
      return LoweringError(inst, "dot of pred is not defined");
    }
    return absl::OkStatus();
  });
}

}  // namespace sharc::codegen
