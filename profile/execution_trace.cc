#include "profile/execution_trace.h"

#include <algorithm>

#include "profile/input_file.h"
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

// Every tensor of an argument of type `type` ("Tensor(float)", "GenericList[Tensor(float)]",
// nested lists).
void Tensors(const JsonValue& value, const std::string& type, std::vector<EtTensor>* out) {
  if (type.find("Tensor") == std::string::npos) return;
  EtTensor t;
  if (AsTensor(value, &t)) {
    out->push_back(t);
    return;
  }
  if (value.is_array()) {
    for (const JsonValue& item : value.items) Tensors(item, type, out);
  }
}

void Arguments(const JsonValue* values, const JsonValue* types, std::vector<EtTensor>* out) {
  if (values == nullptr || types == nullptr || !values->is_array() || !types->is_array()) return;
  for (size_t i = 0; i < values->items.size() && i < types->items.size(); ++i) {
    Tensors(values->items[i], types->items[i].text, out);
  }
}

int64_t IntOf(const JsonValue* v) {
  if (v == nullptr) return -1;
  if (v->AsInt64()) return *v->AsInt64();
  // ctrl_deps may be a list in some writers: its first id.
  if (v->is_array() && !v->items.empty() && v->items[0].AsInt64()) return *v->items[0].AsInt64();
  return -1;
}

void ReadAttr(const std::string& name, const JsonValue& value, EtNode* n) {
  if (name == "rf_id") n->rf_id = IntOf(&value);
  if (name == "tid") n->tid = IntOf(&value);
  if (name == "collective_name") n->collective = value.text;
  if (name == "in_msg_nelems") n->in_msg_nelems = IntOf(&value);
  if (name == "dtype") n->dtype = value.text;
  if (name == "pg_name") n->pg_name = value.text;
}

Status ReadNode(const JsonValue& v, const std::string& path, size_t index, EtNode* n) {
  const JsonValue* id = v.Find("id");
  const JsonValue* name = v.Find("name");
  if (!v.is_object() || id == nullptr || !id->AsInt64() || name == nullptr || !name->is_string()) {
    return Status::Error(path + ": node " + std::to_string(index) +
                         " of 'nodes' has no whole-number 'id' and string 'name'");
  }
  n->id = *id->AsInt64();
  n->name = name->text;
  n->parent = IntOf(v.Find("ctrl_deps"));
  if (n->parent < 0) n->parent = IntOf(v.Find("parent"));
  const JsonValue* inputs = v.Find("inputs");
  const JsonValue* outputs = v.Find("outputs");
  if (inputs != nullptr && inputs->is_object()) {  // 1.0.2 onwards
    Arguments(inputs->Find("values"), inputs->Find("types"), &n->inputs);
    if (outputs != nullptr) Arguments(outputs->Find("values"), outputs->Find("types"), &n->outputs);
    if (const JsonValue* attrs = v.Find("attrs"); attrs != nullptr && attrs->is_array()) {
      for (const JsonValue& a : attrs->items) {
        const JsonValue* an = a.Find("name");
        const JsonValue* av = a.Find("value");
        if (an != nullptr && av != nullptr) ReadAttr(an->text, *av, n);
      }
    }
    const JsonValue* values = inputs->Find("values");
    if (n->name.find("process_group:init") != std::string::npos && values != nullptr &&
        values->is_array() && !values->items.empty()) {
      n->groups_json = values->items[0].text;
    }
    // record_param_comms without attributes (1.0.2): its collective is a string argument.
    if (n->collective.empty() && n->name == "record_param_comms" && values != nullptr &&
        values->is_array()) {
      for (const JsonValue& x : values->items) {
        if (x.is_string() && x.text.find("cuda") == std::string::npos) n->collective = x.text;
      }
    }
  } else {  // 1.0.1: arguments and attributes as keys
    Arguments(inputs, v.Find("input_types"), &n->inputs);
    Arguments(outputs, v.Find("output_types"), &n->outputs);
    for (const auto& [k, x] : v.members) ReadAttr(k, x, n);
  }
  return Status::Ok();
}

}  // namespace

StatusOr<ExecutionTrace> LoadExecutionTrace(const std::string& path) {
  StatusOr<std::string> text = ReadProfileFile(path);
  if (!text.ok()) return text.status();
  StatusOr<JsonValue> doc = ParseJson(*text, path);
  if (!doc.ok()) return doc.status();
  const JsonValue* nodes = doc->is_object() ? doc->Find("nodes") : nullptr;
  if (nodes == nullptr || !nodes->is_array()) {
    const bool kineto = doc->is_object() && doc->Find("traceEvents") != nullptr;
    return Status::Error(path +
                         ": JSON, but not a PyTorch execution trace: it has no 'nodes' "
                         "list" +
                         std::string(kineto ? "; it is a Kineto profile: give it with --kineto"
                                            : "; expected ExecutionTraceObserver's output"));
  }
  ExecutionTrace et;
  et.path = path;
  if (const JsonValue* s = doc->Find("schema"); s != nullptr) et.schema = s->text;
  et.pid = IntOf(doc->Find("pid"));
  et.nodes.resize(nodes->items.size());
  Status problems;
  for (size_t i = 0; i < nodes->items.size(); ++i) {
    problems.Merge(ReadNode(nodes->items[i], path, i, &et.nodes[i]));
  }
  if (!problems.ok()) return problems.Capped(kMaxProblemsPerFile, path);
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
