// A small pytree: a value is a leaf, a list of trees, or a dict of trees
// keyed by strings (kept sorted by key, as JAX sorts dict keys). Functions
// traced by jit take and return trees of Tensors; jit takes and returns the
// same structures over host literals. Flatten gives the leaves in a fixed
// order plus a TreeStructure that Unflatten rebuilds from.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace sharc::frontend {

// The structure of a tree without its leaves.
class TreeStructure {
 public:
  enum class Kind { kLeaf, kList, kDict };

  TreeStructure() = default;  // a leaf
  static TreeStructure Leaf() { return TreeStructure(); }
  static TreeStructure List(std::vector<TreeStructure> children);
  // `keys` sorted and distinct, one per child.
  static TreeStructure Dict(std::vector<std::string> keys, std::vector<TreeStructure> children);

  Kind kind() const { return kind_; }
  const std::vector<TreeStructure>& children() const { return children_; }
  const std::vector<std::string>& keys() const { return keys_; }
  int64_t num_leaves() const { return num_leaves_; }

  // "*", "[*, *]", "{b: *, w: [*, *]}".
  std::string ToString() const;
  // Each leaf's path (".params.w[0]"; "" for a lone leaf), in flatten order.
  // Dict keys are joined with dots rather than JAX's ['key'] so that names
  // print without escaped quotes in HLO metadata.
  std::vector<std::string> LeafPaths() const;
  bool operator==(const TreeStructure& o) const {
    return kind_ == o.kind_ && keys_ == o.keys_ && children_ == o.children_;
  }

 private:
  Kind kind_ = Kind::kLeaf;
  std::vector<std::string> keys_;
  std::vector<TreeStructure> children_;
  int64_t num_leaves_ = 1;
};

template <typename L>
class PyTree {
 public:
  using Item = std::pair<std::string, PyTree>;

  PyTree() : node_(std::vector<PyTree>{}) {}  // an empty list
  PyTree(L leaf) : node_(std::move(leaf)) {}  // NOLINT: a leaf is a tree
  static PyTree list(std::vector<PyTree> elements) {
    PyTree t;
    t.node_ = std::move(elements);
    return t;
  }
  static PyTree dict(std::map<std::string, PyTree> items) {
    PyTree t;
    t.node_ = std::vector<Item>(std::make_move_iterator(items.begin()),
                                std::make_move_iterator(items.end()));
    return t;
  }

  bool is_leaf() const { return node_.index() == 0; }
  bool is_list() const { return node_.index() == 1; }
  bool is_dict() const { return node_.index() == 2; }

  // Accessors throw std::out_of_range on the wrong kind or a missing element;
  // inside a traced function that becomes the trace's error status.
  const L& leaf() const {
    if (!is_leaf()) throw std::out_of_range("pytree: not a leaf");
    return std::get<0>(node_);
  }
  const std::vector<PyTree>& elements() const {
    if (!is_list()) throw std::out_of_range("pytree: not a list");
    return std::get<1>(node_);
  }
  const std::vector<Item>& items() const {
    if (!is_dict()) throw std::out_of_range("pytree: not a dict");
    return std::get<2>(node_);
  }
  const PyTree& operator[](size_t i) const {
    const std::vector<PyTree>& e = elements();
    if (i >= e.size()) {
      throw std::out_of_range(absl::StrCat("pytree: index ", i, " out of range for a list of ",
                                           e.size()));
    }
    return e[i];
  }
  const PyTree& operator[](const std::string& key) const {
    for (const Item& item : items()) {
      if (item.first == key) return item.second;
    }
    throw std::out_of_range(absl::StrCat("pytree: no key \"", key, "\""));
  }
  size_t size() const {
    if (is_list()) return elements().size();
    if (is_dict()) return items().size();
    return 1;
  }

 private:
  std::variant<L, std::vector<PyTree>, std::vector<Item>> node_;
};

template <typename L>
TreeStructure StructureOf(const PyTree<L>& tree) {
  if (tree.is_leaf()) return TreeStructure::Leaf();
  std::vector<TreeStructure> children;
  if (tree.is_list()) {
    for (const PyTree<L>& e : tree.elements()) children.push_back(StructureOf(e));
    return TreeStructure::List(std::move(children));
  }
  std::vector<std::string> keys;
  for (const auto& [key, value] : tree.items()) {
    keys.push_back(key);
    children.push_back(StructureOf(value));
  }
  return TreeStructure::Dict(std::move(keys), std::move(children));
}

template <typename L>
void AppendLeaves(const PyTree<L>& tree, std::vector<L>& out) {
  if (tree.is_leaf()) {
    out.push_back(tree.leaf());
  } else if (tree.is_list()) {
    for (const PyTree<L>& e : tree.elements()) AppendLeaves(e, out);
  } else {
    for (const auto& item : tree.items()) AppendLeaves(item.second, out);
  }
}

// Leaves in order: list elements in order, dict values by sorted key.
template <typename L>
std::vector<L> Leaves(const PyTree<L>& tree) {
  std::vector<L> out;
  AppendLeaves(tree, out);
  return out;
}

template <typename L>
std::pair<std::vector<L>, TreeStructure> Flatten(const PyTree<L>& tree) {
  return {Leaves(tree), StructureOf(tree)};
}

namespace internal {
template <typename L>
PyTree<L> Build(const TreeStructure& s, std::vector<L>& leaves, size_t& next) {
  switch (s.kind()) {
    case TreeStructure::Kind::kLeaf:
      return PyTree<L>(std::move(leaves[next++]));
    case TreeStructure::Kind::kList: {
      std::vector<PyTree<L>> elements;
      for (const TreeStructure& c : s.children()) elements.push_back(Build(c, leaves, next));
      return PyTree<L>::list(std::move(elements));
    }
    case TreeStructure::Kind::kDict: {
      std::map<std::string, PyTree<L>> items;
      for (size_t i = 0; i < s.children().size(); ++i) {
        items.emplace(s.keys()[i], Build(s.children()[i], leaves, next));
      }
      return PyTree<L>::dict(std::move(items));
    }
  }
  return PyTree<L>();
}
}  // namespace internal

// Rebuilds a tree of `structure` from its leaves (in Leaves order).
template <typename L>
absl::StatusOr<PyTree<L>> Unflatten(const TreeStructure& structure, std::vector<L> leaves) {
  if (static_cast<int64_t>(leaves.size()) != structure.num_leaves()) {
    return absl::InvalidArgumentError(absl::StrCat("cannot unflatten ", leaves.size(),
                                                   " leaves into the structure ",
                                                   structure.ToString(), " (",
                                                   structure.num_leaves(), " leaves)"));
  }
  size_t next = 0;
  return internal::Build(structure, leaves, next);
}

// The tree of f(leaf) for every leaf, same structure.
template <typename L, typename F>
auto MapTree(const PyTree<L>& tree, F&& f) -> PyTree<std::decay_t<std::invoke_result_t<F&, const L&>>> {
  using R = std::decay_t<std::invoke_result_t<F&, const L&>>;
  std::vector<R> mapped;
  for (const L& leaf : Leaves(tree)) mapped.push_back(f(leaf));
  return *Unflatten(StructureOf(tree), std::move(mapped));
}

// Expands a tree that is a prefix of `full` (each leaf of `prefix` stands for
// the whole subtree of `full` at its position, as JAX's in_shardings do) into
// one value per leaf of `full`.
template <typename L>
absl::StatusOr<std::vector<L>> ExpandPrefix(const PyTree<L>& prefix, const TreeStructure& full) {
  std::vector<L> out;
  if (prefix.is_leaf()) {
    out.assign(static_cast<size_t>(full.num_leaves()), prefix.leaf());
    return out;
  }
  const bool list = prefix.is_list();
  if ((list && full.kind() != TreeStructure::Kind::kList) ||
      (!list && full.kind() != TreeStructure::Kind::kDict) ||
      prefix.size() != full.children().size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the tree ", StructureOf(prefix).ToString(),
                     " is not a prefix of the structure ", full.ToString()));
  }
  for (size_t i = 0; i < full.children().size(); ++i) {
    if (!list && prefix.items()[i].first != full.keys()[i]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "key \"", prefix.items()[i].first, "\" does not match \"", full.keys()[i],
          "\" of the structure ", full.ToString()));
    }
    const PyTree<L>& child = list ? prefix.elements()[i] : prefix.items()[i].second;
    absl::StatusOr<std::vector<L>> sub = ExpandPrefix(child, full.children()[i]);
    if (!sub.ok()) return sub.status();
    out.insert(out.end(), sub->begin(), sub->end());
  }
  return out;
}

}  // namespace sharc::frontend
