#include "benchmarks/transformer_module.h"

#include "absl/strings/str_cat.h"

namespace sharc::benchmarks {

std::string TransformerLikeModule(int64_t target_instructions) {
  // One layer is about 40 instructions.
  const int64_t layers = std::max<int64_t>(1, target_instructions / 40);
  std::string out = R"(HloModule transformer, num_partitions=4, allow_spmd_sharding_propagation_to_output={true}

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %main {
  %x0 = f32[16,32,64] parameter(0), sharding={devices=[2,1,1,2]0,1,2,3 last_tile_dim_replicate}
  %w = f32[64,64] parameter(1), sharding={devices=[1,2,2]0,1,2,3 last_tile_dim_replicate}
  %w2 = f32[64,64] parameter(2), sharding={devices=[2,1,2]0,2,1,3 last_tile_dim_replicate}
  %zero = f32[] constant(0)
  %inv = f32[] constant(0.015625)
)";
  std::string x = "x0";
  for (int64_t l = 0; l < layers; ++l) {
    std::string p = absl::StrCat("l", l, ".");
    absl::StrAppend(&out,
        // layernorm over the last dim
        "  %", p, "sum = f32[16,32] reduce(%", x, ", %zero), dimensions={2}, to_apply=%add\n",
        "  %", p, "invb = f32[16,32] broadcast(%inv), dimensions={}\n",
        "  %", p, "mean = f32[16,32] multiply(%", p, "sum, %", p, "invb)\n",
        "  %", p, "meanb = f32[16,32,64] broadcast(%", p, "mean), dimensions={0,1}\n",
        "  %", p, "cen = f32[16,32,64] subtract(%", x, ", %", p, "meanb)\n",
        "  %", p, "sq = f32[16,32,64] multiply(%", p, "cen, %", p, "cen)\n",
        "  %", p, "var = f32[16,32] reduce(%", p, "sq, %zero), dimensions={2}, to_apply=%add\n",
        "  %", p, "varm = f32[16,32] multiply(%", p, "var, %", p, "invb)\n",
        "  %", p, "rs = f32[16,32] rsqrt(%", p, "varm)\n",
        "  %", p, "rsb = f32[16,32,64] broadcast(%", p, "rs), dimensions={0,1}\n",
        "  %", p, "ln = f32[16,32,64] multiply(%", p, "cen, %", p, "rsb)\n",
        // attention-like: q k^T over heads, softmax-ish, times v
        "  %", p, "q = f32[16,32,64] dot(%", p, "ln, %w), lhs_contracting_dims={2}, rhs_contracting_dims={0}\n",
        "  %", p, "q4 = f32[16,32,4,16] reshape(%", p, "q)\n",
        "  %", p, "qt = f32[16,4,32,16] transpose(%", p, "q4), dimensions={0,2,1,3}\n",
        "  %", p, "s = f32[16,4,32,32] dot(%", p, "qt, %", p, "qt), lhs_batch_dims={0,1}, lhs_contracting_dims={3}, rhs_batch_dims={0,1}, rhs_contracting_dims={3}\n",
        "  %", p, "e = f32[16,4,32,32] exponential(%", p, "s)\n",
        "  %", p, "den = f32[16,4,32] reduce(%", p, "e, %zero), dimensions={3}, to_apply=%add\n",
        "  %", p, "denb = f32[16,4,32,32] broadcast(%", p, "den), dimensions={0,1,2}\n",
        "  %", p, "pr = f32[16,4,32,32] divide(%", p, "e, %", p, "denb)\n",
        "  %", p, "o = f32[16,4,32,16] dot(%", p, "pr, %", p, "qt), lhs_batch_dims={0,1}, lhs_contracting_dims={3}, rhs_batch_dims={0,1}, rhs_contracting_dims={2}\n",
        "  %", p, "ot = f32[16,32,4,16] transpose(%", p, "o), dimensions={0,2,1,3}\n",
        "  %", p, "o3 = f32[16,32,64] reshape(%", p, "ot)\n",
        "  %", p, "res1 = f32[16,32,64] add(%", x, ", %", p, "o3)\n",
        // MLP with bias and tanh
        "  %", p, "h = f32[16,32,64] dot(%", p, "res1, %w), lhs_contracting_dims={2}, rhs_contracting_dims={0}\n",
        "  %", p, "bias = f32[64] broadcast(%inv), dimensions={}\n",
        "  %", p, "biasb = f32[16,32,64] broadcast(%", p, "bias), dimensions={2}\n",
        "  %", p, "hb = f32[16,32,64] add(%", p, "h, %", p, "biasb)\n",
        "  %", p, "act = f32[16,32,64] tanh(%", p, "hb)\n",
        "  %", p, "h2 = f32[16,32,64] dot(%", p, "act, %w2), lhs_contracting_dims={2}, rhs_contracting_dims={0}\n",
        "  %", p, "scale = f32[] constant(0.5)\n",
        "  %", p, "scaleb = f32[16,32,64] broadcast(%", p, "scale), dimensions={}\n",
        "  %", p, "h3 = f32[16,32,64] multiply(%", p, "h2, %", p, "scaleb)\n",
        "  %", p, "out = f32[16,32,64] add(%", p, "res1, %", p, "h3)\n");
    x = p + "out";
  }
  absl::StrAppend(&out, "  ROOT %result = f32[16,32,64] copy(%", x, ")\n}\n");
  return out;
}

}  // namespace sharc::benchmarks
