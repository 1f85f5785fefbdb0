#include "frontend/pytree.h"

#include "absl/strings/str_join.h"

namespace sharc::frontend {

TreeStructure TreeStructure::List(std::vector<TreeStructure> children) {
  TreeStructure s;
  s.kind_ = Kind::kList;
  s.num_leaves_ = 0;
  for (const TreeStructure& c : children) s.num_leaves_ += c.num_leaves_;
  s.children_ = std::move(children);
  return s;
}

TreeStructure TreeStructure::Dict(std::vector<std::string> keys,
                                  std::vector<TreeStructure> children) {
  TreeStructure s = List(std::move(children));
  s.kind_ = Kind::kDict;
  s.keys_ = std::move(keys);
  return s;
}

namespace {
void AppendPaths(const TreeStructure& s, const std::string& prefix, std::vector<std::string>& out) {
  if (s.kind() == TreeStructure::Kind::kLeaf) {
    out.push_back(prefix);
    return;
  }
  for (size_t i = 0; i < s.children().size(); ++i) {
    std::string key = s.kind() == TreeStructure::Kind::kList ? absl::StrCat("[", i, "]")
                                                              : absl::StrCat(".", s.keys()[i]);
    AppendPaths(s.children()[i], prefix + key, out);
  }
}
}  // namespace

std::vector<std::string> TreeStructure::LeafPaths() const {
  std::vector<std::string> out;
  AppendPaths(*this, "", out);
  return out;
}

std::string TreeStructure::ToString() const {
  switch (kind_) {
    case Kind::kLeaf:
      return "*";
    case Kind::kList:
      return absl::StrCat("[",
                          absl::StrJoin(children_, ", ",
                                        [](std::string* out, const TreeStructure& c) {
                                          out->append(c.ToString());
                                        }),
                          "]");
    case Kind::kDict: {
      std::vector<std::string> parts;
      for (size_t i = 0; i < children_.size(); ++i) {
        parts.push_back(absl::StrCat(keys_[i], ": ", children_[i].ToString()));
      }
      return absl::StrCat("{", absl::StrJoin(parts, ", "), "}");
    }
  }
  return "";
}

}  // namespace sharc::frontend
