// paver_schedule.hpp: a header-only reader of paver's TB schedules (`paver-schedule/1` JSON,
// docs/SCHEDULE.md) for other simulators' TB (CTA) schedulers. C++17, standard library
// only: a small JSON parser (enough for any JSON document; numbers as double, which holds
// every TB id exactly), the schedule's fields, and `paver::Issuer`, which replays the
// schedule as the PAVER runtime does (PAVER section 5.3, without task stealing): the groups
// wait in a global queue, an SM with a free TB context takes the next TB of its current
// group, and an SM whose group is exhausted takes the next group from the queue.
//
//   paver::Schedule s = paver::read_schedule_file("schedule.json");   // throws paver::Error
//   paver::Issuer issuer(s);
//   long tb = issuer.next_tb(sm);   // -1: nothing left for this SM
//
// Licence: MIT OR Apache-2.0, as paver.
#ifndef PAVER_SCHEDULE_HPP
#define PAVER_SCHEDULE_HPP

#include <cmath>
#include <cstdint>
#include <deque>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace paver {

/// What goes wrong while reading a schedule: the message names the JSON position or field.
struct Error : std::runtime_error {
  explicit Error(const std::string &m) : std::runtime_error("paver schedule: " + m) {}
};

/// A JSON value.
struct Json {
  enum class Type { Null, Bool, Number, String, Array, Object };
  Type type = Type::Null;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<Json> array;
  std::vector<std::pair<std::string, Json>> object;

  /// The member `key` of an object, or nullptr.
  const Json *get(const std::string &key) const {
    for (const auto &kv : object)
      if (kv.first == key) return &kv.second;
    return nullptr;
  }
};

namespace detail {

class Parser {
 public:
  explicit Parser(const std::string &text) : s_(text) {}

  Json parse_document() {
    Json v = value();
    ws();
    if (i_ != s_.size()) fail("text after the JSON value");
    return v;
  }

 private:
  const std::string &s_;
  std::size_t i_ = 0;

  [[noreturn]] void fail(const std::string &what) const {
    throw Error("JSON at byte " + std::to_string(i_) + ": " + what);
  }
  void ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t')) ++i_;
  }
  bool eat(char c) {
    ws();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!eat(c)) fail(std::string("expected '") + c + "'");
  }
  bool word(const char *w) {
    std::size_t n = std::char_traits<char>::length(w);
    if (s_.compare(i_, n, w) == 0) {
      i_ += n;
      return true;
    }
    return false;
  }

  Json value() {
    ws();
    if (i_ >= s_.size()) fail("unexpected end of input");
    Json v;
    char c = s_[i_];
    if (c == '{') {
      ++i_;
      v.type = Json::Type::Object;
      if (eat('}')) return v;
      do {
        ws();
        std::string key = str();
        expect(':');
        v.object.emplace_back(std::move(key), value());
      } while (eat(','));
      expect('}');
    } else if (c == '[') {
      ++i_;
      v.type = Json::Type::Array;
      if (eat(']')) return v;
      do v.array.push_back(value());
      while (eat(','));
      expect(']');
    } else if (c == '"') {
      v.type = Json::Type::String;
      v.string = str();
    } else if (word("true")) {
      v.type = Json::Type::Bool;
      v.boolean = true;
    } else if (word("false")) {
      v.type = Json::Type::Bool;
    } else if (word("null")) {
    } else {
      v.type = Json::Type::Number;
      v.number = num();
    }
    return v;
  }

  double num() {
    std::size_t start = i_;
    if (i_ < s_.size() && s_[i_] == '-') ++i_;
    while (i_ < s_.size() && std::string("0123456789.eE+-").find(s_[i_]) != std::string::npos) ++i_;
    if (start == i_) fail("expected a value");
    try {
      return std::stod(s_.substr(start, i_ - start));
    } catch (const std::exception &) {
      i_ = start;
      fail("bad number");
    }
  }

  static void utf8(std::string &out, unsigned cp) {
    if (cp < 0x80) {
      out += char(cp);
    } else if (cp < 0x800) {
      out += char(0xC0 | (cp >> 6));
      out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += char(0xE0 | (cp >> 12));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    } else {
      out += char(0xF0 | (cp >> 18));
      out += char(0x80 | ((cp >> 12) & 0x3F));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    }
  }

  unsigned hex4() {
    if (i_ + 4 > s_.size()) fail("short \\u escape");
    unsigned cp = 0;
    for (int k = 0; k < 4; ++k) {
      char h = s_[i_++];
      cp <<= 4;
      if (h >= '0' && h <= '9') cp |= unsigned(h - '0');
      else if (h >= 'a' && h <= 'f') cp |= unsigned(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F') cp |= unsigned(h - 'A' + 10);
      else fail("bad \\u escape");
    }
    return cp;
  }

  std::string str() {
    if (i_ >= s_.size() || s_[i_] != '"') fail("expected a string");
    ++i_;
    std::string out;
    while (true) {
      if (i_ >= s_.size()) fail("unterminated string");
      char c = s_[i_++];
      if (c == '"') return out;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i_ >= s_.size()) fail("unterminated escape");
      char e = s_[i_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          unsigned cp = hex4();
          if (cp >= 0xD800 && cp < 0xDC00 && s_.compare(i_, 2, "\\u") == 0) {
            i_ += 2;
            unsigned lo = hex4();
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
          utf8(out, cp);
          break;
        }
        default: fail("bad escape");
      }
    }
  }
};

inline std::uint32_t as_u32(const Json *v, const std::string &field) {
  if (!v || v->type != Json::Type::Number || v->number < 0 || v->number > 4294967295.0 ||
      std::floor(v->number) != v->number)
    throw Error("`" + field + "` must be a non-negative integer");
  return std::uint32_t(v->number);
}

inline std::string as_string(const Json *v, const std::string &field) {
  if (!v || v->type != Json::Type::String) throw Error("`" + field + "` must be a string");
  return v->string;
}

}  // namespace detail

/// Parses a JSON document.
inline Json parse_json(const std::string &text) { return detail::Parser(text).parse_document(); }

/// A `paver-schedule/1` document: TB groups in global-queue order for one launch.
struct Schedule {
  std::string kernel;               // mangled name, as in the PTX
  std::uint32_t grid[3] = {1, 1, 1};   // TB id = x + y*gx + z*gx*gy
  std::uint32_t block[3] = {1, 1, 1};
  std::string policy;               // rb-ts, kway-ts, mst-ts, lrr, bcs, ...
  std::uint32_t num_sms = 0;        // N the groups were made for
  std::uint32_t tbs_per_sm = 0;     // x the groups were made for
  std::uint32_t issue_unit = 1;     // TBs leaving a group at once (2: pair policies)
  std::uint32_t sms_per_cluster = 1;
  std::vector<std::vector<std::uint32_t>> groups;

  std::uint64_t num_tbs() const { return std::uint64_t(grid[0]) * grid[1] * grid[2]; }
};

/// Reads a schedule from JSON text; checks the format tag and that every TB of the grid
/// appears in exactly one group.
inline Schedule read_schedule(const std::string &text) {
  using detail::as_string;
  using detail::as_u32;
  Json doc = parse_json(text);
  if (doc.type != Json::Type::Object) throw Error("the document is not a JSON object");
  std::string format = as_string(doc.get("format"), "format");
  if (format != "paver-schedule/1")
    throw Error("format is `" + format + "`, this reader knows paver-schedule/1");
  Schedule s;
  s.kernel = as_string(doc.get("kernel"), "kernel");
  s.policy = as_string(doc.get("policy"), "policy");
  s.num_sms = as_u32(doc.get("num_sms"), "num_sms");
  s.tbs_per_sm = as_u32(doc.get("tbs_per_sm"), "tbs_per_sm");
  if (const Json *u = doc.get("issue_unit")) s.issue_unit = as_u32(u, "issue_unit");
  if (const Json *c = doc.get("sms_per_cluster")) s.sms_per_cluster = as_u32(c, "sms_per_cluster");
  const char *dims[2] = {"grid", "block"};
  std::uint32_t *dst[2] = {s.grid, s.block};
  for (int d = 0; d < 2; ++d) {
    const Json *a = doc.get(dims[d]);
    if (!a || a->type != Json::Type::Array || a->array.size() != 3)
      throw Error(std::string("`") + dims[d] + "` must be [x, y, z]");
    for (int k = 0; k < 3; ++k)
      dst[d][k] = as_u32(&a->array[k], std::string(dims[d]) + "[" + std::to_string(k) + "]");
  }
  const Json *groups = doc.get("groups");
  if (!groups || groups->type != Json::Type::Array) throw Error("`groups` must be an array");
  std::vector<bool> seen(s.num_tbs(), false);
  for (std::size_t g = 0; g < groups->array.size(); ++g) {
    const Json &grp = groups->array[g];
    std::string where = "groups[" + std::to_string(g) + "]";
    if (grp.type != Json::Type::Array || grp.array.empty())
      throw Error("`" + where + "` must be a non-empty array");
    std::vector<std::uint32_t> tbs;
    for (std::size_t k = 0; k < grp.array.size(); ++k) {
      std::uint32_t tb = as_u32(&grp.array[k], where + "[" + std::to_string(k) + "]");
      if (tb >= seen.size() || seen[tb])
        throw Error("`" + where + "` holds TB " + std::to_string(tb) +
                    (tb >= seen.size() ? ", outside the grid" : " twice"));
      seen[tb] = true;
      tbs.push_back(tb);
    }
    s.groups.push_back(std::move(tbs));
  }
  for (std::size_t tb = 0; tb < seen.size(); ++tb)
    if (!seen[tb]) throw Error("TB " + std::to_string(tb) + " is in no group");
  return s;
}

/// Reads a schedule file.
inline Schedule read_schedule_file(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open");
  std::stringstream buf;
  buf << in.rdbuf();
  return read_schedule(buf.str());
}

/// The PAVER runtime's TB issue without task stealing (see the top of this file).
class Issuer {
 public:
  /// An issuer for `num_sms` SMs (default: the schedule's).
  explicit Issuer(const Schedule &s, std::uint32_t num_sms = 0)
      : queue_(s.groups.begin(), s.groups.end()), local_(num_sms ? num_sms : s.num_sms) {}

  /// The TB SM `sm` runs next in a context that just became free, or -1 when neither its
  /// group nor the global queue has one (the SM then idles, as under the PAVER runtime
  /// without stealing).
  long next_tb(std::uint32_t sm) {
    if (sm >= local_.size()) return -1;
    std::deque<std::uint32_t> &mine = local_[sm];
    if (mine.empty()) {
      if (queue_.empty()) return -1;
      mine.assign(queue_.front().begin(), queue_.front().end());
      queue_.pop_front();
    }
    std::uint32_t tb = mine.front();
    mine.pop_front();
    return long(tb);
  }

  /// Whether SM `sm` could get a TB now (for a `can_issue_1block`-style check).
  bool has_work(std::uint32_t sm) const {
    return sm < local_.size() && (!local_[sm].empty() || !queue_.empty());
  }

 private:
  std::deque<std::vector<std::uint32_t>> queue_;
  std::vector<std::deque<std::uint32_t>> local_;
};

/// `tb`'s (x, y, z) position in the grid (CUDA's blockIdx).
inline void tb_coords(const Schedule &s, std::uint32_t tb, std::uint32_t out[3]) {
  out[0] = tb % s.grid[0];
  out[1] = (tb / s.grid[0]) % s.grid[1];
  out[2] = tb / (s.grid[0] * s.grid[1]);
}

}  // namespace paver

#endif  // PAVER_SCHEDULE_HPP
