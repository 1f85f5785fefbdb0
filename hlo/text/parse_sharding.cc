// HloParser: the sharding attribute (xla_gspmd.md A.8). Parts of a sharding
// body may come in any order; the result is built with Sharding's factory
// functions so it is normalized exactly like a sharding built in C++.
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hlo/base/status_macros.h"
#include "hlo/text/parser_impl.h"

namespace sharc::hlo::text_internal {
namespace {

// Product of `dims`, or -1 if a dim is < 1 or the product exceeds kMaxDevices.
int64_t BoundedProduct(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 1 || d > kMaxDevices || n > kMaxDevices / d) return -1;
    n *= d;
  }
  return n;
}

bool IsPermutation(const std::vector<int64_t>& perm) {
  std::vector<bool> seen(perm.size(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(perm.size()) || seen[p]) return false;
    seen[p] = true;
  }
  return true;
}

}  // namespace

absl::Status HloParser::ParseIotaForm(const std::vector<int64_t>& dims,
                                      std::vector<int64_t>* reshape, std::vector<int64_t>* perm) {
  RETURN_IF_ERROR(Expect(TokenKind::kLeq, "'<='"));
  Token reshape_token = lexer_.Peek();
  ASSIGN_OR_RETURN(*reshape, ParseIntList(TokenKind::kLsquare, "the iota reshape dimensions"));
  perm->clear();
  if (PeekKeyword("T")) {
    lexer_.Next();
    RETURN_IF_ERROR(Expect(TokenKind::kLparen, "'(' after 'T'"));
    if (!TryConsume(TokenKind::kRparen)) {
      do {
        ASSIGN_OR_RETURN(int64_t p, ParseInt64("an integer in the iota transpose"));
        perm->push_back(p);
      } while (TryConsume(TokenKind::kComma));
      RETURN_IF_ERROR(Expect(TokenKind::kRparen, "')' or ',' in the iota transpose"));
    }
    if (perm->size() != reshape->size() || !IsPermutation(*perm)) {
      return ErrorAt(reshape_token,
                     Cat("iota transpose T(", absl::StrJoin(*perm, ","),
                         ") is not a permutation of the ", reshape->size(), " reshape dimensions"));
    }
  } else {
    perm->resize(reshape->size());
    std::iota(perm->begin(), perm->end(), 0);
  }
  int64_t total = BoundedProduct(dims);
  if (total < 0) {
    return ErrorAt(reshape_token,
                   Cat("iota dimensions [", absl::StrJoin(dims, ","),
                       "] must be positive and name at most ", kMaxDevices, " devices"));
  }
  if (reshape->empty() || BoundedProduct(*reshape) != total) {
    return ErrorAt(reshape_token,
                   Cat("iota reshape [", absl::StrJoin(*reshape, ","), "] does not have the ",
                       total, " elements of [", absl::StrJoin(dims, ","), "]"));
  }
  return absl::OkStatus();
}

absl::StatusOr<TileAssignment> HloParser::ParseTileAssignment() {
  Token dims_token = lexer_.Peek();
  ASSIGN_OR_RETURN(std::vector<int64_t> dims,
                   ParseIntList(TokenKind::kLsquare, "the tile assignment dimensions"));
  if (dims.empty()) return ErrorAt(dims_token, "a tile assignment needs at least one dimension");
  int64_t total = BoundedProduct(dims);
  if (total < 0) {
    return ErrorAt(dims_token, Cat("tile assignment dimensions must be positive and "
                                   "name at most ",
                                   kMaxDevices, " devices"));
  }
  if (lexer_.Peek().kind == TokenKind::kLeq) {
    std::vector<int64_t> reshape, perm;
    RETURN_IF_ERROR(ParseIotaForm(dims, &reshape, &perm));
    return TileAssignment::Iota(std::move(dims), std::move(reshape), std::move(perm));
  }
  std::vector<int64_t> devices;
  Token list_token = lexer_.Peek();
  do {
    ASSIGN_OR_RETURN(int64_t device, ParseInt64("a device id"));
    devices.push_back(device);
    if (static_cast<int64_t>(devices.size()) > total) break;
  } while (TryConsume(TokenKind::kComma));
  if (static_cast<int64_t>(devices.size()) != total) {
    return ErrorAt(
        list_token,
        Cat("tile assignment [", absl::StrJoin(dims, ","), "] needs ", total, " devices, but ",
            static_cast<int64_t>(devices.size()) > total ? "more are" : Cat(devices.size(), " are"),
            " listed"));
  }
  return TileAssignment(std::move(dims), std::move(devices));
}

absl::StatusOr<Sharding> HloParser::ParseSingleSharding() {
  Token open = lexer_.Peek();
  RETURN_IF_ERROR(Expect(TokenKind::kLbrace, "'{' to start a sharding"));
  enum class Base { kNone, kReplicated, kManual, kUnknown, kUnreduced, kMaximal, kDevices };
  Base base = Base::kNone;
  Token base_token;
  std::optional<int64_t> device;
  std::optional<TileAssignment> tiles;
  bool replicate_last = false;
  std::optional<std::vector<SubgroupType>> last_tile_dims;
  std::optional<ShardGroup> group;
  bool saw_metadata = false;

  auto set_base = [&](Base b, const Token& t) -> absl::Status {
    if (base != Base::kNone) {
      return ErrorAt(
          t, Cat("sharding already has a kind ('", base_token.text, "'); found '", t.text, "'"));
    }
    base = b;
    base_token = t;
    return absl::OkStatus();
  };
  auto duplicate = [&](const Token& t) {
    return ErrorAt(t, Cat("'", t.text, "' appears twice in the sharding"));
  };

  while (lexer_.Peek().kind != TokenKind::kRbrace) {
    if (lexer_.Peek().kind != TokenKind::kName || lexer_.Peek().has_percent) {
      return Expected(
          "a sharding part (replicated, maximal, manual, unknown, devices=, "
          "last_tile_dim_replicate, last_tile_dims=, shard_as, shard_like, "
          "metadata=) or '}'");
    }
    Token part = lexer_.Next();
    std::string_view word = part.text;
    if (word == "replicated") {
      RETURN_IF_ERROR(set_base(Base::kReplicated, part));
    } else if (word == "manual") {
      RETURN_IF_ERROR(set_base(Base::kManual, part));
    } else if (word == "unknown") {
      RETURN_IF_ERROR(set_base(Base::kUnknown, part));
    } else if (word == "unreduced") {
      RETURN_IF_ERROR(set_base(Base::kUnreduced, part));
    } else if (word == "maximal") {
      RETURN_IF_ERROR(set_base(Base::kMaximal, part));
    } else if (word == "device") {
      if (device) return duplicate(part);
      RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'=' after 'device'"));
      ASSIGN_OR_RETURN(int64_t d, ParseInt64("a device id"));
      if (d < 0) return ErrorAt(part, Cat("device id ", d, " is negative"));
      device = d;
    } else if (word == "devices") {
      RETURN_IF_ERROR(set_base(Base::kDevices, part));
      RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'=' after 'devices'"));
      ASSIGN_OR_RETURN(tiles, ParseTileAssignment());
    } else if (word == "last_tile_dim_replicate") {
      if (replicate_last) return duplicate(part);
      replicate_last = true;
    } else if (word == "last_tile_dims") {
      if (last_tile_dims) return duplicate(part);
      RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'=' after 'last_tile_dims'"));
      RETURN_IF_ERROR(Expect(TokenKind::kLbrace, "'{' after 'last_tile_dims='"));
      last_tile_dims.emplace();
      if (!TryConsume(TokenKind::kRbrace)) {
        do {
          if (PeekKeyword("manual")) {
            last_tile_dims->push_back(SubgroupType::kManual);
          } else if (PeekKeyword("replicated")) {
            last_tile_dims->push_back(SubgroupType::kReplicated);
          } else if (PeekKeyword("unreduced")) {
            last_tile_dims->push_back(SubgroupType::kUnreduced);
          } else {
            return Expected("'manual', 'unreduced' or 'replicated' in last_tile_dims");
          }
          lexer_.Next();
        } while (TryConsume(TokenKind::kComma));
        RETURN_IF_ERROR(Expect(TokenKind::kRbrace, "'}' or ',' in last_tile_dims"));
      }
    } else if (word == "shard_as" || word == "shard_like") {
      if (group) return duplicate(part);
      ASSIGN_OR_RETURN(int64_t id, ParseInt64(Cat("a shard group id after '", word, "'")));
      group = ShardGroup{word == "shard_as", id};
    } else if (word == "metadata") {
      // Sharding metadata (where the annotation came from) is not kept.
      if (saw_metadata) return duplicate(part);
      saw_metadata = true;
      RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'=' after 'metadata'"));
      RETURN_IF_ERROR(SkipBalanced().status());
    } else {
      return ErrorAt(part, Cat("unknown sharding part '", word, "'"));
    }
  }
  lexer_.Next();  // '}'

  if (base == Base::kNone) {
    return ErrorAt(open, "sharding needs one of replicated, maximal, manual, unknown, devices=");
  }
  if (device && base != Base::kMaximal) {
    return ErrorAt(base_token, "'device=' is only valid with 'maximal'");
  }
  if ((replicate_last || last_tile_dims) && base != Base::kDevices) {
    return ErrorAt(base_token, "last_tile_dim_replicate and last_tile_dims need 'devices='");
  }
  Sharding sharding;
  switch (base) {
    case Base::kNone:
    case Base::kReplicated:
      sharding = Sharding::Replicated();
      break;
    case Base::kManual:
      sharding = Sharding::Manual();
      break;
    case Base::kUnknown:
      sharding = Sharding::Unknown();
      break;
    case Base::kUnreduced:
      sharding = Sharding::Unreduced();
      break;
    case Base::kMaximal:
      if (!device) return ErrorAt(base_token, "'maximal' needs 'device=N'");
      sharding = Sharding::Maximal(*device);
      break;
    case Base::kDevices: {
      if (replicate_last && last_tile_dims) {
        return ErrorAt(base_token,
                       "use either last_tile_dim_replicate or last_tile_dims, not both");
      }
      std::vector<SubgroupType> subgroups;
      if (replicate_last) subgroups.push_back(SubgroupType::kReplicated);
      if (last_tile_dims) subgroups = *last_tile_dims;
      if (static_cast<int64_t>(subgroups.size()) > tiles->num_dims()) {
        return ErrorAt(base_token, Cat("the sharding names ", subgroups.size(),
                                       " subgroup dimensions but its tile assignment has only ",
                                       tiles->num_dims(),
                                       tiles->num_dims() == 1 ? " dimension" : " dimensions"));
      }
      sharding = Sharding::Tiled(std::move(*tiles), std::move(subgroups));
      break;
    }
  }
  if (group) sharding.set_shard_group(group);
  return sharding;
}

absl::StatusOr<Sharding> HloParser::ParseSharding() {
  // `{}` is the empty tuple; `{{...}, {...}}` a tuple with one entry per leaf.
  Lexer::State saved = lexer_.Save();
  if (lexer_.Peek().kind != TokenKind::kLbrace) return Expected("'{' to start a sharding");
  lexer_.Next();
  if (TryConsume(TokenKind::kRbrace)) return Sharding::Tuple({});
  if (lexer_.Peek().kind != TokenKind::kLbrace) {
    lexer_.Restore(saved);
    return ParseSingleSharding();
  }
  std::vector<Sharding> leaves;
  do {
    Lexer::State element = lexer_.Save();
    if (lexer_.Peek().kind == TokenKind::kLbrace) {
      lexer_.Next();
      if (lexer_.Peek().kind == TokenKind::kLbrace) {
        return ErrorAt(lexer_.Peek(),
                       "nested tuple shardings are written as one flat list of leaves");
      }
      lexer_.Restore(element);
    }
    ASSIGN_OR_RETURN(Sharding leaf, ParseSingleSharding());
    leaves.push_back(std::move(leaf));
  } while (TryConsume(TokenKind::kComma));
  RETURN_IF_ERROR(Expect(TokenKind::kRbrace, "'}' or ',' in a tuple sharding"));
  return Sharding::Tuple(std::move(leaves));
}

absl::StatusOr<Sharding> HloParser::ParseShardingOnly() {
  ASSIGN_OR_RETURN(Sharding sharding, ParseSharding());
  RETURN_IF_ERROR(ExpectEnd());
  return sharding;
}

}  // namespace sharc::hlo::text_internal
