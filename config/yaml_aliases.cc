#include "config/yaml_aliases.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <sstream>
#include <vector>

namespace orrery {
namespace {

uint64_t SaturatingAdd(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

// Counts, from the parser's events, the nodes each anchor's node holds with its aliases
// expanded, and the nodes all aliases add; records the alias that first passes the limit.
class AliasCounter : public YAML::EventHandler {
 public:
  explicit AliasCounter(uint64_t limit) : limit_(limit) {}

  // yaml-cpp 0.7 makes no progress on a stray ',', ']' or '}' where a document should start: it
  // returns an empty document at the same place again and again (YAML::LoadAll never ends). The
  // second start there is noted (stalled), and the reader stops after that document.
  void OnDocumentStart(const YAML::Mark& mark) override {
    if (documents_++ > 0 && mark.pos == last_start_ && !stalled_) {
      stalled_ = true;
      stall_mark_ = mark;
    }
    last_start_ = mark.pos;
    sizes_.clear();
    names_.clear();
    open_.clear();
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t anchor) override { Close(anchor, 1); }
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t anchor,
                const std::string&) override {
    Close(anchor, 1);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    // An alias inside its own anchor's node (not yet closed) counts as one node.
    const uint64_t size = anchor < sizes_.size() && sizes_[anchor] > 0 ? sizes_[anchor] : 1;
    added_ = SaturatingAdd(added_, size);
    if (!over_ && added_ > limit_) {
      over_ = true;
      mark_ = mark;
      alias_size_ = size;
      alias_name_ = anchor >= 1 && anchor <= names_.size() ? names_[anchor - 1] : "";
    }
    Add(size);
  }
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open_.push_back({anchor, 1});
  }
  void OnSequenceEnd() override { CloseCollection(); }
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open_.push_back({anchor, 1});
  }
  void OnMapEnd() override { CloseCollection(); }
  // yaml-cpp numbers a document's anchors 1, 2, ... in the order they appear.
  void OnAnchor(const YAML::Mark&, const std::string& name) override { names_.push_back(name); }

  bool over() const { return over_; }
  bool stalled() const { return stalled_; }
  const YAML::Mark& stall_mark() const { return stall_mark_; }
  const YAML::Mark& mark() const { return mark_; }
  uint64_t alias_size() const { return alias_size_; }
  const std::string& alias_name() const { return alias_name_; }

 private:
  struct Open {
    YAML::anchor_t anchor;
    uint64_t nodes;
  };

  void Add(uint64_t nodes) {
    if (!open_.empty()) open_.back().nodes = SaturatingAdd(open_.back().nodes, nodes);
  }
  void Close(YAML::anchor_t anchor, uint64_t nodes) {
    if (anchor != 0) {
      if (sizes_.size() <= anchor) sizes_.resize(anchor + 1, 0);
      sizes_[anchor] = nodes;
    }
    Add(nodes);
  }
  void CloseCollection() {
    if (open_.empty()) return;
    const Open o = open_.back();
    open_.pop_back();
    Close(o.anchor, o.nodes);
  }

  const uint64_t limit_;
  uint64_t documents_ = 0;
  int last_start_ = -1;
  std::vector<uint64_t> sizes_;  // by anchor id: its node's size, aliases expanded
  std::vector<std::string> names_;
  std::vector<Open> open_;
  uint64_t added_ = 0;
  bool over_ = false;
  bool stalled_ = false;
  YAML::Mark stall_mark_ = YAML::Mark::null_mark();
  YAML::Mark mark_ = YAML::Mark::null_mark();
  uint64_t alias_size_ = 0;
  std::string alias_name_;
};

}  // namespace

Status CheckYamlAliases(const std::string& text, const std::string& path, uint64_t limit) {
  std::istringstream in(text);
  AliasCounter counter(limit);
  bool syntax_error = false;
  try {
    YAML::Parser parser(in);
    while (parser.HandleNextDocument(counter) && !counter.over() && !counter.stalled()) {
    }
  } catch (const YAML::Exception&) {
    syntax_error = true;  // the loader reports it with its line and column
  }
  if (counter.stalled()) {
    const YAML::Mark& s = counter.stall_mark();
    const size_t at = static_cast<size_t>(std::max(s.pos, 0));
    return Status::Error(path + ":" + std::to_string(s.line + 1) + ":" +
                         std::to_string(s.column + 1) + ": not valid YAML/JSON: '" +
                         (at < text.size() ? text.substr(at, 1) : std::string("?")) +
                         "' where a value should start (a stray separator or closing bracket)");
  }
  if (syntax_error) return Status::Ok();
  if (!counter.over()) return Status::Ok();
  const YAML::Mark& m = counter.mark();
  const std::string at = m.is_null() || m.line < 0 ? "" : ":" + std::to_string(m.line + 1);
  const std::string alias =
      counter.alias_name().empty() ? "an alias" : "alias '*" + counter.alias_name() + "'";
  return Status::Error(path + at + ": " + alias + " repeats a node of " +
                       std::to_string(counter.alias_size()) +
                       " nodes (its aliases expanded); the file's aliases would add more than " +
                       std::to_string(limit) +
                       " nodes, which no configuration needs (a YAML alias bomb?); expected the "
                       "file written out, or aliases that repeat less");
}

}  // namespace orrery
