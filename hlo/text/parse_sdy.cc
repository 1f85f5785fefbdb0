#include "hlo/text/parse_sdy.h"

#include <cctype>
#include <limits>

#include "absl/strings/str_cat.h"

namespace sharc::hlo {
namespace {

// Far above any real mesh; keeps device counts and tile products in range.
constexpr int64_t kMaxMeshDevices = int64_t{1} << 40;

absl::string_view AsAbsl(std::string_view s) { return absl::string_view(s.data(), s.size()); }

// A cursor over one attribute's text; each Parse* consumes what it reads.
class SdyReader {
 public:
  explicit SdyReader(std::string_view text) : text_(text) {}

  absl::Status Error(std::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat("in Shardy attribute '", Excerpt(), "': ", AsAbsl(what),
                                                   " at character ", pos_ + 1));
  }

  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool TryConsume(std::string_view token) {
    SkipSpace();
    if (text_.substr(pos_, token.size()) != token) return false;
    pos_ += token.size();
    return true;
  }
  absl::Status Expect(std::string_view token) {
    if (TryConsume(token)) return absl::OkStatus();
    return Error(absl::StrCat("expected '", AsAbsl(token), "'"));
  }
  bool AtEnd() {
    SkipSpace();
    return pos_ >= text_.size();
  }
  bool PeekIs(char c) {
    SkipSpace();
    return pos_ < text_.size() && text_[pos_] == c;
  }

  absl::StatusOr<int64_t> ParseInt() {
    SkipSpace();
    const size_t start = pos_;
    int64_t value = 0;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      const int digit = text_[pos_++] - '0';
      if (value > (std::numeric_limits<int64_t>::max() - digit) / 10) {
        return Error("integer out of range");
      }
      value = value * 10 + digit;
    }
    if (pos_ == start) return Error("expected an integer");
    return value;
  }

  // "name" (Shardy quotes axis names; a backslash escapes the next char).
  absl::StatusOr<std::string> ParseQuoted() {
    SkipSpace();
    if (pos_ >= text_.size() || text_[pos_] != '"') return Error("expected a quoted name");
    std::string out;
    for (++pos_; pos_ < text_.size() && text_[pos_] != '"'; ++pos_) {
      if (text_[pos_] == '\\' && pos_ + 1 < text_.size()) ++pos_;
      out.push_back(text_[pos_]);
    }
    if (pos_ >= text_.size()) return Error("unterminated name");
    ++pos_;
    return out;
  }

  // A symbol name: bare (letters, digits, _ . $ -) or quoted.
  absl::StatusOr<std::string> ParseSymbol() {
    if (PeekIs('"')) return ParseQuoted();
    const size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_' ||
            text_[pos_] == '.' || text_[pos_] == '$' || text_[pos_] == '-')) {
      ++pos_;
    }
    if (pos_ == start) return Error("expected a name");
    return std::string(text_.substr(start, pos_ - start));
  }

  // <["x"=2, "y"=4], device_ids=[...]>, after "mesh" or "#sdy.mesh".
  absl::StatusOr<SdyMesh> ParseMeshBody() {
    SdyMesh mesh;
    if (absl::Status s = Expect("<"); !s.ok()) return s;
    if (absl::Status s = Expect("["); !s.ok()) return s;
    if (!TryConsume("]")) {
      do {
        SdyMeshAxis axis;
        absl::StatusOr<std::string> name = ParseQuoted();
        if (!name.ok()) return name.status();
        axis.name = *name;
        if (absl::Status s = Expect("="); !s.ok()) return s;
        absl::StatusOr<int64_t> size = ParseInt();
        if (!size.ok()) return size.status();
        if (*size < 1) return Error(absl::StrCat("axis \"", axis.name, "\" has size 0"));
        if (mesh.AxisSize(axis.name)) return Error(absl::StrCat("axis \"", axis.name, "\" twice"));
        axis.size = *size;
        mesh.axes.push_back(std::move(axis));
        if (mesh.num_devices() > kMaxMeshDevices) return Error("the mesh is too large");
      } while (TryConsume(","));
      if (absl::Status s = Expect("]"); !s.ok()) return s;
    }
    if (TryConsume(",")) {
      if (absl::Status s = Expect("device_ids"); !s.ok()) return s;
      if (absl::Status s = Expect("="); !s.ok()) return s;
      if (absl::Status s = Expect("["); !s.ok()) return s;
      if (!TryConsume("]")) {
        do {
          absl::StatusOr<int64_t> id = ParseInt();
          if (!id.ok()) return id.status();
          mesh.device_ids.push_back(*id);
        } while (TryConsume(","));
        if (absl::Status s = Expect("]"); !s.ok()) return s;
      }
    }
    if (absl::Status s = Expect(">"); !s.ok()) return s;
    return mesh;
  }

  // "x" or "x":(2)4
  absl::StatusOr<SdyAxisRef> ParseAxisRef() {
    SdyAxisRef ref;
    absl::StatusOr<std::string> name = ParseQuoted();
    if (!name.ok()) return name.status();
    ref.name = *name;
    if (TryConsume(":")) {
      ref.sub_axis = true;
      if (absl::Status s = Expect("("); !s.ok()) return s;
      absl::StatusOr<int64_t> pre = ParseInt();
      if (!pre.ok()) return pre.status();
      if (absl::Status s = Expect(")"); !s.ok()) return s;
      absl::StatusOr<int64_t> size = ParseInt();
      if (!size.ok()) return size.status();
      ref.pre_size = *pre;
      ref.size = *size;
    }
    return ref;
  }

  // {"x", "y"} (a list of axis refs, as in replicated= / manual_axes).
  absl::StatusOr<std::vector<SdyAxisRef>> ParseAxisList() {
    std::vector<SdyAxisRef> refs;
    if (absl::Status s = Expect("{"); !s.ok()) return s;
    if (TryConsume("}")) return refs;
    do {
      absl::StatusOr<SdyAxisRef> ref = ParseAxisRef();
      if (!ref.ok()) return ref.status();
      refs.push_back(*ref);
    } while (TryConsume(","));
    if (absl::Status s = Expect("}"); !s.ok()) return s;
    return refs;
  }

  // {"x", ?}p1
  absl::StatusOr<SdyDimSharding> ParseDim() {
    SdyDimSharding dim;
    if (absl::Status s = Expect("{"); !s.ok()) return s;
    if (!TryConsume("}")) {
      do {
        if (TryConsume("?")) {
          dim.open = true;
          break;
        }
        absl::StatusOr<SdyAxisRef> ref = ParseAxisRef();
        if (!ref.ok()) return ref.status();
        dim.axes.push_back(*ref);
      } while (TryConsume(","));
      if (absl::Status s = Expect("}"); !s.ok()) return s;
    }
    // A priority says which sharding wins in Shardy's propagation; GSPMD has
    // no such notion, so it is read and dropped.
    if (PeekIs('p')) {
      ++pos_;
      if (absl::StatusOr<int64_t> p = ParseInt(); !p.ok()) return p.status();
    }
    return dim;
  }

  // @mesh, [dims], replicated={...}, unreduced={...}   (inside <...>)
  absl::StatusOr<SdyTensorSharding> ParseShardingBody() {
    SdyTensorSharding sharding;
    if (TryConsume("@")) {
      absl::StatusOr<std::string> name = ParseSymbol();
      if (!name.ok()) return name.status();
      sharding.mesh_name = *name;
    } else if (TryConsume("#sdy.mesh") || TryConsume("mesh")) {
      absl::StatusOr<SdyMesh> mesh = ParseMeshBody();
      if (!mesh.ok()) return mesh.status();
      sharding.inline_mesh = *mesh;
    } else {
      return Error("expected '@mesh' or an inline mesh");
    }
    if (absl::Status s = Expect(","); !s.ok()) return s;
    if (absl::Status s = Expect("["); !s.ok()) return s;
    if (!TryConsume("]")) {
      do {
        absl::StatusOr<SdyDimSharding> dim = ParseDim();
        if (!dim.ok()) return dim.status();
        sharding.dims.push_back(*dim);
      } while (TryConsume(","));
      if (absl::Status s = Expect("]"); !s.ok()) return s;
    }
    while (TryConsume(",")) {
      std::vector<SdyAxisRef>* list = nullptr;
      if (TryConsume("replicated")) {
        list = &sharding.replicated;
      } else if (TryConsume("unreduced")) {
        list = &sharding.unreduced;
      } else {
        return Error("expected 'replicated' or 'unreduced'");
      }
      if (absl::Status s = Expect("="); !s.ok()) return s;
      absl::StatusOr<std::vector<SdyAxisRef>> refs = ParseAxisList();
      if (!refs.ok()) return refs.status();
      *list = *refs;
    }
    return sharding;
  }

  absl::Status ExpectEnd() {
    if (AtEnd()) return absl::OkStatus();
    return Error("unexpected text after the attribute");
  }

 private:
  std::string Excerpt() const {
    return text_.size() <= 80 ? std::string(text_) : absl::StrCat(AsAbsl(text_.substr(0, 77)), "...");
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

absl::StatusOr<std::map<std::string, SdyMesh>> ParseSdyMeshes(std::string_view text) {
  SdyReader reader(text);
  std::map<std::string, SdyMesh> meshes;
  if (absl::Status s = reader.Expect("{"); !s.ok()) return s;
  if (!reader.TryConsume("}")) {
    do {
      absl::StatusOr<std::string> name = reader.ParseSymbol();
      if (!name.ok()) return name.status();
      if (absl::Status s = reader.Expect("="); !s.ok()) return s;
      if (absl::Status s = reader.Expect("#sdy.mesh"); !s.ok()) return s;
      absl::StatusOr<SdyMesh> mesh = reader.ParseMeshBody();
      if (!mesh.ok()) return mesh.status();
      if (!meshes.emplace(*name, *mesh).second) {
        return reader.Error(absl::StrCat("mesh '", *name, "' is defined twice"));
      }
    } while (reader.TryConsume(","));
    if (absl::Status s = reader.Expect("}"); !s.ok()) return s;
  }
  if (absl::Status s = reader.ExpectEnd(); !s.ok()) return s;
  return meshes;
}

absl::StatusOr<std::vector<SdyTensorSharding>> ParseSdyShardings(std::string_view text) {
  SdyReader reader(text);
  std::vector<SdyTensorSharding> shardings;
  if (reader.TryConsume("#sdy.sharding_per_value")) {
    if (absl::Status s = reader.Expect("<"); !s.ok()) return s;
    if (absl::Status s = reader.Expect("["); !s.ok()) return s;
    if (!reader.TryConsume("]")) {
      do {
        if (absl::Status s = reader.Expect("<"); !s.ok()) return s;
        absl::StatusOr<SdyTensorSharding> sharding = reader.ParseShardingBody();
        if (!sharding.ok()) return sharding.status();
        shardings.push_back(*sharding);
        if (absl::Status s = reader.Expect(">"); !s.ok()) return s;
      } while (reader.TryConsume(","));
      if (absl::Status s = reader.Expect("]"); !s.ok()) return s;
    }
  } else {
    if (absl::Status s = reader.Expect("#sdy.sharding"); !s.ok()) return s;
    if (absl::Status s = reader.Expect("<"); !s.ok()) return s;
    absl::StatusOr<SdyTensorSharding> sharding = reader.ParseShardingBody();
    if (!sharding.ok()) return sharding.status();
    shardings.push_back(*sharding);
  }
  if (absl::Status s = reader.Expect(">"); !s.ok()) return s;
  if (absl::Status s = reader.ExpectEnd(); !s.ok()) return s;
  return shardings;
}

absl::StatusOr<std::vector<std::string>> ParseSdyManualAxes(std::string_view text) {
  SdyReader reader(text);
  if (absl::Status s = reader.Expect("#sdy"); !s.ok()) return s;
  if (absl::Status s = reader.Expect("<"); !s.ok()) return s;
  if (absl::Status s = reader.Expect("manual_axes"); !s.ok()) return s;
  absl::StatusOr<std::vector<SdyAxisRef>> refs = reader.ParseAxisList();
  if (!refs.ok()) return refs.status();
  if (absl::Status s = reader.Expect(">"); !s.ok()) return s;
  if (absl::Status s = reader.ExpectEnd(); !s.ok()) return s;
  std::vector<std::string> axes;
  for (const SdyAxisRef& ref : *refs) {
    if (ref.sub_axis) return reader.Error("a manual axis must be a whole axis");
    axes.push_back(ref.name);
  }
  return axes;
}

}  // namespace sharc::hlo
