#include "codegen/register_tile.h"

#include "absl/types/span.h"

namespace sharc::codegen {
namespace {

// A tile and how fast it runs relative to the others for its register file.
struct TileCandidate {
  RegisterTile tile;
  double speed;
};

// With 32 vector registers (AVX-512): 64x6 (4 vectors x 6 rows, 24 + 4 + 1
// registers), and for results narrower than 64 columns (attention's heads
// of 32 or 16 values) 32x12 (2 x 12) or 16x24 (1 x 24), the same 24
// accumulators. A 16x24 step loads 1 vector and broadcasts 24 lhs values
// for its 24 FMAs, so the narrow tiles are slower where 64x6 fits: forced
// on a [2048,256]x[256,1024] GEMM, 32x12 ran at 0.72x of 64x6 (Emerald
// Rapids, one thread, session 27). Where 64 columns do not fit they replace
// the untiled schedule: attention's p v over heads of 32
// ([16,8,128,128]x[16,8,128,32]) went from 2.58 to 1.12-1.16 ms, its
// transposed-lhs gradient from 3.59 to 1.17-1.22, heads of 16 from 1.99 to
// 0.89 (`sharc run --profile`), about half 64x6's rate on the wider
// products, hence its speed of 0.5. With 16 (AVX2): 24x4 (3 vectors x 4
// rows, 12 + 3 + 1: every register) or 16x6 (2 vectors x 6 rows, 12 + 2 +
// 1). On Zen 3, one thread, 24x4 ran 4-9% faster than 16x6 against
// OpenBLAS in the same run at every N from 256 to 2048: a k step loads 7
// values rather than 8 for its 12 FMAs, the lhs tile is 4 row streams
// rather than 6, and the lhs is streamed once per 24 columns rather than
// per 16. On two threads it lost at N=256 (1.12-1.31
// of OpenBLAS against 1.36-1.42: 11 column panels split 6 / 5 between the
// threads where 16 split evenly; a floor of 16 tasks did not measurably help)
// and was level above. A tile sized for 32 registers on a 16-register target
// spills every accumulator (0.3-0.4x OpenBLAS), as does 32x3 (4 vectors x 3
// rows, 17 registers: 2x slower).
constexpr double kAvx2WideTileSpeed = 1.06;
constexpr TileCandidate kTilesFor32Registers[] = {{{4, 6}, 1.0}, {{2, 12}, 0.72}, {{1, 24}, 0.5}};
constexpr TileCandidate kTilesFor16Registers[] = {{{3, 4}, kAvx2WideTileSpeed}, {{2, 6}, 1.0}};

}  // namespace

// The tile for an [m, n] result. Tiles are whole, so a result that is not a
// multiple of one computes some elements twice (the last tile shifts
// inwards); the tile with the least padded work over its speed wins (N=128:
// 16x6, whose 16 columns divide it, ran 0.052-0.057 ms against 24x4's
// 0.061-0.067).
RegisterTile ChooseRegisterTile(int64_t m, int64_t n, int lanes, int vector_registers) {
  absl::Span<const TileCandidate> candidates =
      vector_registers >= 32 ? absl::MakeConstSpan(kTilesFor32Registers)
                             : absl::MakeConstSpan(kTilesFor16Registers);
  RegisterTile best;
  double best_cost = 0;
  for (const TileCandidate& c : candidates) {
    const int64_t cols = int64_t{c.tile.vectors} * lanes, rows = c.tile.rows;
    if (n < cols || m < rows) continue;
    const double work = static_cast<double>((n + cols - 1) / cols * cols) *
                        static_cast<double>((m + rows - 1) / rows * rows);
    const double cost = work / c.speed;
    if (best.vectors == 0 || cost < best_cost) {
      best = c.tile;
      best_cost = cost;
    }
  }
  return best;
}

}  // namespace sharc::codegen
