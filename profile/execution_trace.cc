#include "profile/execution_trace.h"

#include <algorithm>

#include "profile/input_file.h"
#include "profile/json_reader.h"
#include "profile/json_value.h"

namespace orrery {
namespace profile {

bool IsEtRoot(const std::string& name) {
  return name.rfind("[pytorch|profiler|execution_", 0) == 0;
}

namespace {

// A tensor as the trace writes it: [tensor id, storage id, offset, elements, element bytes,
// device].
bool AsTensor(const JsonValue& v, EtTensor* t) {
  if (!v.is_array() || v.items.size() != 6 || !v.items[5].is_string()) return false;
  for (size_t i = 0; i < 5; ++i) {
    if (!v.items[i].AsInt64()) return false;
  }
  t->id = *v.items[0].AsInt64();
  t->bytes = *v.items[3].AsInt64() * *v.items[4].AsInt64();
  return true;
}

// Every tensor of an argument ("Tensor(float)", "GenericList[Tensor(float)]", nested lists).
void Tensors(const JsonValue& value, std::vector<EtTensor>* out) {
  EtTensor t;
  if (AsTensor(value, &t)) {
    out->push_back(t);
    return;
  }
  if (value.is_array()) {
    for (const JsonValue& item : value.items) Tensors(item, out);
  }
}

int64_t IntOf(const JsonValue* v) {
  if (v == nullptr) return -1;
  if (v->AsInt64()) return *v->AsInt64();
  // ctrl_deps may be a list in some writers: its first id.
  if (v->is_array() && !v->items.empty() && v->items[0].AsInt64()) return *v->items[0].AsInt64();
  return -1;
}

// Reads the nodes one at a time, keeping the byte ranges of the members whose meaning depends
// on others (argument values on their types) and reading only those values that hold tensors.
class NodeReader {
 public:
  NodeReader(JsonReader& r, std::string_view text) : r_(r), text_(text) {}
  bool Read(EtNode* n);

 private:
  struct Span {
    size_t begin = 0, end = 0;
    bool empty() const { return begin == end; }
  };
  bool Capture(Span* s) {
    r_.Peek();  // skips white space
    s->begin = r_.offset();
    if (!r_.Skip()) return false;
    s->end = r_.offset();
    return true;
  }
  // The value in a span, as a tree (small: one argument list or attribute list).
  bool Tree(const Span& s, JsonValue* v) {
    if (s.empty()) return true;
    StatusOr<JsonValue> t = ParseJson(text_.substr(s.begin, s.end - s.begin), r_.file());
    if (!t.ok()) return r_.FailAt(s.begin, t.status().message());
    *v = std::move(*t);
    return true;
  }
  bool Arguments(const Span& values, const Span& types, std::vector<EtTensor>* out);
  bool ReadArgs(std::string_view key, Span* values, Span* types);
  // attrs: [{"name": ..., "type": ..., "value": ...}, ...]; only the values read are parsed.
  bool ReadAttrs(EtNode* n);

  JsonReader& r_;
  std::string_view text_;
};

bool NodeReader::Arguments(const Span& values, const Span& types, std::vector<EtTensor>* out) {
  JsonValue t;
  if (!Tree(types, &t)) return false;
  if (!t.is_array()) return true;
  bool any = false;
  for (const JsonValue& x : t.items) any |= x.text.find("Tensor") != std::string::npos;
  if (!any) return true;  // no tensor argument: the values are not read
  JsonValue v;
  if (!Tree(values, &v)) return false;
  for (size_t i = 0; i < v.items.size() && i < t.items.size(); ++i) {
    if (t.items[i].text.find("Tensor") != std::string::npos) Tensors(v.items[i], out);
  }
  return true;
}

// `inputs` / `outputs` of the 1.0.2 layout: {"values": [...], "shapes": [...], "types": [...]}.
bool NodeReader::ReadArgs(std::string_view key, Span* values, Span* types) {
  if (r_.Peek() != JsonReader::Type::kObject) return Capture(values);  // 1.0.1: the values
  if (!r_.EnterObject()) return false;
  std::string_view k;
  while (r_.NextKey(&k)) {
    const bool ok = k == "values" ? Capture(values) : k == "types" ? Capture(types) : r_.Skip();
    if (!ok) return false;
  }
  (void)key;
  return r_.ok();
}

bool NodeReader::ReadAttrs(EtNode* n) {
  if (r_.Peek() != JsonReader::Type::kArray) return r_.Skip();
  if (!r_.EnterArray()) return false;
  while (r_.NextElement()) {
    if (r_.Peek() != JsonReader::Type::kObject) {
      if (!r_.Skip()) return false;
      continue;
    }
    if (!r_.EnterObject()) return false;
    std::string_view key, name;
    Span value;
    while (r_.NextKey(&key)) {
      bool ok = true;
      if (key == "name" && r_.Peek() == JsonReader::Type::kString) {
        bool escaped = false;
        ok = r_.ReadRawString(&name, &escaped);
      } else if (key == "value") {
        ok = Capture(&value);
      } else {
        ok = r_.Skip();
      }
      if (!ok) return false;
    }
    const bool wanted = name == "rf_id" || name == "tid" || name == "collective_name" ||
                        name == "in_msg_nelems" || name == "dtype" || name == "pg_name";
    if (!wanted || value.empty()) continue;
    JsonValue v;
    if (!Tree(value, &v)) return false;
    if (name == "rf_id") n->rf_id = IntOf(&v);
    if (name == "tid") n->tid = IntOf(&v);
    if (name == "collective_name") n->collective = v.text;
    if (name == "in_msg_nelems") n->in_msg_nelems = IntOf(&v);
    if (name == "dtype") n->dtype = v.text;
    if (name == "pg_name") n->pg_name = v.text;
  }
  return r_.ok();
}

bool NodeReader::Read(EtNode* n) {
  if (r_.Peek() != JsonReader::Type::kObject) return r_.Fail("a node of 'nodes' is not an object");
  const size_t at = r_.offset();
  if (!r_.EnterObject()) return false;
  Span in_values, in_types, out_values, out_types, id, parent, ctrl, rf, tid, name;
  std::string_view key;
  while (r_.NextKey(&key)) {
    bool ok = true;
    if (key == "inputs") {
      ok = ReadArgs(key, &in_values, &in_types);
    } else if (key == "outputs") {
      ok = ReadArgs(key, &out_values, &out_types);
    } else if (key == "input_types") {
      ok = Capture(&in_types);
    } else if (key == "output_types") {
      ok = Capture(&out_types);
    } else if (key == "attrs") {
      ok = ReadAttrs(n);
    } else if (key == "id") {
      ok = Capture(&id);
    } else if (key == "name") {
      ok = Capture(&name);
    } else if (key == "ctrl_deps") {
      ok = Capture(&ctrl);
    } else if (key == "parent") {
      ok = Capture(&parent);
    } else if (key == "rf_id") {
      ok = Capture(&rf);
    } else if (key == "tid") {
      ok = Capture(&tid);
    } else if (key == "collective_name" || key == "in_msg_nelems" || key == "dtype" ||
               key == "pg_name") {
      // 1.0.1 writes attributes as keys: kept as a one-member attribute list.
      Span v;
      ok = Capture(&v);
      JsonValue x;
      if (ok && (ok = Tree(v, &x))) {
        if (key == "collective_name") n->collective = x.text;
        if (key == "in_msg_nelems") n->in_msg_nelems = IntOf(&x);
        if (key == "dtype") n->dtype = x.text;
        if (key == "pg_name") n->pg_name = x.text;
      }
    } else {
      ok = r_.Skip();
    }
    if (!ok) return false;
  }
  if (!r_.ok()) return false;
  JsonValue v;
  if (!Tree(id, &v) || !v.AsInt64()) return r_.FailAt(at, "a node has no whole-number 'id'");
  n->id = *v.AsInt64();
  JsonValue nm;
  if (!Tree(name, &nm) || !nm.is_string()) {
    return r_.FailAt(at, "node " + std::to_string(n->id) + " has no string 'name'");
  }
  n->name = std::move(nm.text);
  for (const Span* s : {&ctrl, &parent}) {
    JsonValue p;
    if (n->parent < 0 && !s->empty() && Tree(*s, &p)) n->parent = IntOf(&p);
  }
  JsonValue x;
  if (!rf.empty() && Tree(rf, &x)) n->rf_id = IntOf(&x);
  if (!tid.empty() && Tree(tid, &x)) n->tid = IntOf(&x);
  if (!Arguments(in_values, in_types, &n->inputs)) return false;
  if (!Arguments(out_values, out_types, &n->outputs)) return false;
  // process_group:init's groups, and a record_param_comms of the 1.0.2 layout (no attributes):
  // its collective is a string argument.
  const bool groups = n->name.find("process_group:init") != std::string::npos;
  const bool rpc = n->collective.empty() && n->name == "record_param_comms";
  if (groups || rpc) {
    JsonValue values;
    if (!Tree(in_values, &values)) return false;
    if (groups && values.is_array() && !values.items.empty()) n->groups_json = values.items[0].text;
    for (const JsonValue& s : rpc ? values.items : std::vector<JsonValue>()) {
      if (s.is_string() && s.text.find("cuda") == std::string::npos) n->collective = s.text;
    }
  }
  return true;
}

}  // namespace

StatusOr<ExecutionTrace> LoadExecutionTrace(const std::string& path) {
  StatusOr<std::string> text = ReadProfileFile(path);
  if (!text.ok()) return text.status();
  ExecutionTrace et;
  et.path = path;
  JsonReader r(*text, path);
  if (r.Peek() != JsonReader::Type::kObject) {
    return Status::Error(path + ": not a PyTorch execution trace (a JSON object with 'nodes')");
  }
  r.EnterObject();
  std::string_view key;
  bool saw_nodes = false, saw_events = false;
  while (r.NextKey(&key)) {
    if (key == "nodes" && r.Peek() == JsonReader::Type::kArray) {
      saw_nodes = true;
      r.EnterArray();
      NodeReader reader(r, *text);
      while (r.NextElement()) {
        et.nodes.emplace_back();
        if (!reader.Read(&et.nodes.back())) break;
      }
    } else if (key == "schema" && r.Peek() == JsonReader::Type::kString) {
      r.ReadString(&et.schema);
    } else if (key == "pid" && r.Peek() == JsonReader::Type::kNumber) {
      r.ReadInt64(&et.pid);
    } else {
      saw_events |= key == "traceEvents";
      r.Skip();
    }
    if (!r.ok()) break;
  }
  if (!r.ok()) return r.status();
  if (!r.AtEnd()) {
    r.Fail("text follows the end of the JSON document");
    return r.status();
  }
  if (!saw_nodes) {
    return Status::Error(path +
                         ": JSON, but not a PyTorch execution trace: it has no 'nodes' "
                         "list" +
                         std::string(saw_events ? "; it is a Kineto profile: give it with --kineto"
                                                : "; expected ExecutionTraceObserver's output"));
  }
  std::sort(et.nodes.begin(), et.nodes.end(),
            [](const EtNode& a, const EtNode& b) { return a.id < b.id; });
  for (const EtNode& n : et.nodes) {
    if (n.groups_json.empty()) continue;
    StatusOr<JsonValue> groups = ParseJson(n.groups_json, path);
    if (!groups.ok() || !groups->is_array()) continue;
    for (const JsonValue& g : groups->items) {
      const JsonValue* ranks = g.Find("ranks");
      const JsonValue* size = g.Find("group_size");
      if (ranks != nullptr && ranks->is_array() && ranks->items.empty() && size != nullptr &&
          size->AsInt64()) {
        et.world_size = *size->AsInt64();  // the default group: every rank
      }
    }
  }
  for (size_t i = 1; i < et.nodes.size(); ++i) {
    if (et.nodes[i].id == et.nodes[i - 1].id) {
      return Status::Error(path + ": node id " + std::to_string(et.nodes[i].id) +
                           " is given twice; expected each node once");
    }
  }
  return et;
}

}  // namespace profile
}  // namespace orrery
