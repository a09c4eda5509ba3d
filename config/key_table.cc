#include "config/key_table.h"

namespace orrery {
namespace {

// Markdown-safe cell text.
std::string Cell(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '<') {
      out += "&lt;";
    } else if (c == '>') {
      out += "&gt;";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string KeyTableMarkdown(const std::string& title, const std::vector<KeyDoc>& keys) {
  std::string out = "### " + title + "\n\n" +
                    "| key | type | unit | default | allowed | meaning | vs ASTRA-sim 2.0 |\n" +
                    "|---|---|---|---|---|---|---|\n";
  for (const KeyDoc& k : keys) {
    out += "| `" + k.name + "` | " + Cell(k.type) + " | " + Cell(k.unit) + " | " +
           Cell(k.default_value) + " | " + Cell(k.allowed) + " | " + Cell(k.meaning) + " | " +
           Cell(k.astra_sim.empty() ? "same" : k.astra_sim) + " |\n";
  }
  return out;
}

std::string FlagTableMarkdown(const std::string& title, const std::vector<KeyDoc>& flags) {
  std::string out = "### " + title + "\n\n" +
                    "| flag | value | unit | default | allowed | meaning |\n" +
                    "|---|---|---|---|---|---|\n";
  for (const KeyDoc& k : flags) {
    out += "| `--" + k.name + "` | " + Cell(k.type) + " | " + Cell(k.unit) + " | " +
           Cell(k.default_value) + " | " + Cell(k.allowed) + " | " + Cell(k.meaning) + " |\n";
  }
  return out;
}

}  // namespace orrery
