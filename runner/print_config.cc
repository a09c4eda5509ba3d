#include "runner/print_config.h"

#include <filesystem>
#include <vector>

#include "config/schema.h"
#include "config/system_config.h"
#include "memory/memory_config.h"
#include "nccl/nccl_model.h"
#include "network/network_config.h"

namespace orrery {

namespace {

// The top-level keys of a printed configuration.
const std::vector<std::string>& SectionNames() {
  static const std::vector<std::string> names = {"flags", "system", "network", "memory",
                                                 "nccl-model"};
  return names;
}

// The flags the sections stand in for.
constexpr const char* kSectionFlags[] = {"system-configuration", "network-configuration",
                                         "remote-memory-configuration", "nccl-model"};

// The map of configuration `path`, or the printed section standing in for it (a copy).
StatusOr<YAML::Node> Section(const std::string& path, const YAML::Node& printed) {
  if (printed.IsMap()) return YAML::Clone(printed);
  StatusOr<YAML::Node> doc = ReadYamlDocument(path);
  if (!doc.ok()) return doc.status();
  if (!doc->IsMap()) return Status::Error(path + ": expected a map of 'key: value' pairs");
  return *doc;
}

// `file` (a path written in the configuration at `config`) as its configuration reads it:
// relative to that configuration's directory, made absolute.
std::string Resolved(const std::string& file, const std::string& config) {
  namespace fs = std::filesystem;
  if (file.empty() || file[0] == '/') return file;
  const fs::path dir = fs::path(config).parent_path();
  return fs::absolute(dir / file).lexically_normal().string();
}

// The system configuration with every key's effective value (defaults filled in).
StatusOr<YAML::Node> EffectiveSystem(const RunOptions& o) {
  StatusOr<YAML::Node> given = Section(o.system_config, o.sections.system);
  if (!given.ok()) return given.status();
  StatusOr<ConfigFile> file = ConfigFile::FromNode(*given, o.system_config);
  if (!file.ok()) return file.status();
  StatusOr<SystemConfig> config = LoadSystemConfig(*file);
  if (!config.ok()) return config.status();
  return SystemConfigYaml(*config);
}

// The configuration at `path` (or the printed section standing in for it) with every key's
// effective value, by `with_defaults` (one of the loaders' *WithDefaults).
StatusOr<YAML::Node> Effective(const std::string& path, const YAML::Node& printed,
                               StatusOr<YAML::Node> (*with_defaults)(const ConfigFile&)) {
  StatusOr<YAML::Node> given = Section(path, printed);
  if (!given.ok()) return given.status();
  StatusOr<ConfigFile> file = ConfigFile::FromNode(*given, path);
  if (!file.ok()) return file.status();
  return with_defaults(*file);
}

// Makes key `key` of `map` (a path relative to the configuration at `config`) absolute.
void MakeAbsolute(YAML::Node map, const std::string& key, const std::string& config) {
  const YAML::Node& read = map;
  const YAML::Node v = read[key];
  if (v.IsDefined() && v.IsScalar()) map[key] = Resolved(v.Scalar(), config);
}

// The NCCL model the run uses, as a document; a null node when it uses none.
StatusOr<YAML::Node> NcclSection(const RunOptions& o, const YAML::Node& system) {
  if (o.sections.nccl_model.IsMap()) {
    return NcclModelWithDefaults(o.sections.nccl_model, o.sections.path);
  }
  std::string path = o.nccl_model;
  const YAML::Node key = static_cast<const YAML::Node&>(system)["nccl-model"];
  if (path.empty() && key.IsDefined() && key.IsScalar()) path = Resolved(key.Scalar(), "");
  if (path.empty()) return YAML::Node();
  StatusOr<YAML::Node> doc = ReadYamlDocument(path);
  if (!doc.ok()) return doc.status();
  return NcclModelWithDefaults(*doc, path);
}

// Maps in block style, lists of plain values in flow style ([ring, ring]), whatever the file's
// style was (a JSON system file would otherwise print as one long line).
void Restyle(YAML::Node n) {
  if (n.IsMap()) {
    n.SetStyle(YAML::EmitterStyle::Block);
    for (auto it = n.begin(); it != n.end(); ++it) Restyle(it->second);
  } else if (n.IsSequence()) {
    bool flat = true;
    for (size_t i = 0; i < n.size(); ++i) flat = flat && n[i].IsScalar();
    n.SetStyle(flat ? YAML::EmitterStyle::Flow : YAML::EmitterStyle::Block);
    for (size_t i = 0; i < n.size(); ++i) Restyle(n[i]);
  }
}

}  // namespace

StatusOr<std::string> PrintConfig(const RunFlags& f, const RunOptions& o) {
  YAML::Node doc(YAML::NodeType::Map);
  YAML::Node flags = RunFlagSchema().ToYaml(f);
  for (const char* k : kSectionFlags) flags.remove(k);
  doc["flags"] = flags;
  StatusOr<YAML::Node> system = EffectiveSystem(o);
  if (!system.ok()) return system.status();
  MakeAbsolute(*system, "gpu-model", o.system_config);
  MakeAbsolute(*system, "nccl-model", o.system_config);
  StatusOr<YAML::Node> nccl = NcclSection(o, *system);
  if (!nccl.ok()) return nccl.status();
  if (nccl->IsMap()) system->remove("nccl-model");
  doc["system"] = *system;
  StatusOr<YAML::Node> network =
      Effective(o.network_config, o.sections.network, NetworkConfigWithDefaults);
  if (!network.ok()) return network.status();
  MakeAbsolute(*network, "custom-file", o.network_config);
  doc["network"] = *network;
  if (!o.memory_config.empty()) {
    StatusOr<YAML::Node> memory =
        Effective(o.memory_config, o.sections.memory, MemoryConfigWithDefaults);
    if (!memory.ok()) return memory.status();
    doc["memory"] = *memory;
  }
  if (nccl->IsMap()) doc["nccl-model"] = *nccl;
  Restyle(doc);
  YAML::Emitter out;
  out << doc;
  return std::string(
             "# The effective configuration of an orrery run (orrery --print-config); run it "
             "with\n#   orrery --config FILE\n# from the same working directory (docs/cli.md).\n") +
         out.c_str() + "\n";
}

Status ReadPrintedConfig(const std::string& path, RunFlags* f, std::set<std::string>* given,
                         ConfigSections* sections) {
  StatusOr<ConfigFile> file = ConfigFile::Read(path);
  if (!file.ok()) return file.status().WithContext("--config");
  Status problems = DuplicateKeys(file->root(), path);
  sections->path = path;
  for (auto it = file->root().begin(); it != file->root().end(); ++it) {
    const std::string key = it->first.Scalar();
    bool known = false;
    for (const std::string& s : SectionNames()) known = known || s == key;
    if (!known) {
      const std::string guess = DidYouMean(key, SectionNames());
      problems.Add(file->Where(it->first) + ": unknown section '" + key + "'" +
                   (guess.empty() ? "" : " (did you mean '" + guess + "'?)") +
                   "; valid: " + JoinNames(SectionNames()));
    } else if (!it->second.IsMap()) {
      problems.Add(file->Where(it->second) + ": section '" + key +
                   "' is not a map; expected 'key: value' pairs");
    }
  }
  if (!problems.ok()) return problems;
  sections->system = file->Get("system");
  sections->network = file->Get("network");
  sections->memory = file->Get("memory");
  sections->nccl_model = file->Get("nccl-model");
  if (!file->Has("flags")) return Status::Ok();
  StatusOr<ConfigFile> flags = ConfigFile::FromNode(file->Get("flags"), path);
  if (!flags.ok()) return flags.status();
  return RunFlagSchema().Apply(*flags, f, given);
}

Status UsePrintedSections(const ConfigSections& sections, RunOptions* o) {
  const struct {
    const YAML::Node& section;
    const char* name;
    const char* flag;
    std::string* file;
  } uses[] = {{sections.system, "system", "system-configuration", &o->system_config},
              {sections.network, "network", "network-configuration", &o->network_config},
              {sections.memory, "memory", "remote-memory-configuration", &o->memory_config},
              {sections.nccl_model, "nccl-model", "nccl-model", &o->nccl_model}};
  Status problems;
  for (const auto& u : uses) {
    if (!u.section.IsMap()) continue;
    if (!u.file->empty()) {
      problems.Add("--" + std::string(u.flag) + " " + *u.file + " and the '" + u.name +
                   "' section of " + sections.path +
                   " both give it; expected one (leave out the flag, or the section)");
    }
    // The nccl-model section is read in its place (RunOptions::sections).
    if (std::string(u.name) != "nccl-model") *u.file = sections.path;
  }
  o->sections = sections;
  return problems;
}

}  // namespace orrery
