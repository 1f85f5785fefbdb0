#include "tools/literal_summary.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "hlo/eval/complex_values.h"

namespace sharc::tools {
namespace {

void Collect(const hlo::Literal& literal, std::vector<const hlo::Literal*>& out) {
  if (!literal.is_tuple()) {
    out.push_back(&literal);
    return;
  }
  for (const hlo::Literal& element : literal.elements()) Collect(element, out);
}

// Puts each top-level row of "{{...}, {...}}" on its own line so that
// matrices read as matrices; "indent" aligns rows under the first one.
std::string BreakRows(const std::string& values, const std::string& indent) {
  std::string out;
  int depth = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    char c = values[i];
    if (c == '{') ++depth;
    if (c == '}') --depth;
    if (depth == 1 && c == ',' && i > 0 && values[i - 1] == '}') {
      out += ",\n" + indent;
      if (i + 1 < values.size() && values[i + 1] == ' ') ++i;
      continue;
    }
    out += c;
  }
  return out;
}

}  // namespace

std::vector<const hlo::Literal*> FlattenLeaves(const hlo::Literal& literal) {
  std::vector<const hlo::Literal*> leaves;
  Collect(literal, leaves);
  return leaves;
}

std::string SummarizeArray(const hlo::Literal& array) {
  if (array.shape().type() == hlo::PrimitiveType::kToken) return "token[]";  // no data
  const int64_t n = array.num_elements();
  if (n <= kFullPrintLimit) {
    if (array.shape().rank() < 2) return array.ToString();
    return absl::StrCat(array.shape().ToString(), "\n    ",
                        BreakRows(array.ValuesToString(), "     "));
  }
  std::string text = absl::StrCat(array.shape().ToString(), " first 8: {");
  for (int64_t i = 0; i < 8; ++i) {
    if (i > 0) text += ", ";
    text += hlo::FormatElement(array, i);
  }
  text += ", ...}";
  // Complex numbers have no order: their magnitudes summarize them.
  const bool complex = hlo::IsComplex(array.shape().type());
  double min = std::numeric_limits<double>::infinity();
  double max = -min;
  double sum = 0;
  int64_t count = 0;
  bool saw_nan = false;
  for (int64_t i = 0; i < n; ++i) {
    double v = complex ? std::abs(hlo::GetComplex(array, i)) : array.GetAsDouble(i);
    if (std::isnan(v)) {
      saw_nan = true;
      continue;
    }
    min = std::min(min, v);
    max = std::max(max, v);
    sum += v;
    ++count;
  }
  if (complex) text += " |z|:";
  absl::StrAppendFormat(&text, " min=%.6g max=%.6g mean=%.6g", min, max,
                        count > 0 ? sum / static_cast<double>(count) : std::nan(""));
  if (saw_nan) text += " (has NaN; excluded from min/max/mean)";
  return text;
}

}  // namespace sharc::tools
