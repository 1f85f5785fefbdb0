// How a row-major reshape maps dims (see reshape_runs.h).
#include "codegen/reshape_runs.h"

namespace sharc::codegen {

std::vector<ReshapeRun> ReshapeRuns(const std::vector<int64_t>& in_dims,
                                    const std::vector<int64_t>& out_dims) {
  std::vector<size_t> in, out;
  for (size_t k = 0; k < in_dims.size(); ++k) {
    if (in_dims[k] != 1) in.push_back(k);
  }
  for (size_t d = 0; d < out_dims.size(); ++d) {
    if (out_dims[d] != 1) out.push_back(d);
  }
  std::vector<ReshapeRun> runs;
  size_t i = 0, o = 0;
  while (i < in.size() && o < out.size()) {
    ReshapeRun run;
    int64_t in_product = in_dims[in[i]], out_product = out_dims[out[o]];
    run.in.push_back(in[i++]);
    run.out.push_back(out[o++]);
    while (in_product != out_product) {
      if (in_product < out_product) {
        in_product *= in_dims[in[i]];
        run.in.push_back(in[i++]);
      } else {
        out_product *= out_dims[out[o]];
        run.out.push_back(out[o++]);
      }
    }
    runs.push_back(std::move(run));
  }
  return runs;
}

}  // namespace sharc::codegen
