#include "flag_tables.h"

#include "config/key_table.h"
#include "et_feeder/llm_workload.h"
#include "et_feeder/text_workload.h"
#include "runner/run_flags.h"
#include "sweep/sweep.h"

namespace orrery {

std::string CliFlagTables() {
  std::vector<KeyDoc> run = RunCommandFlagSchema().Docs();
  for (const KeyDoc& d : RunFlagSchema().Docs()) run.push_back(d);
  return FlagTableMarkdown("orrery (a run)", run) + "\n" +
         FlagTableMarkdown("orrery sweep", SweepFlagDocs()) + "\n" +
         FlagTableMarkdown("orrery generate-llm", et::GenerateLlmFlagDocs()) + "\n" +
         FlagTableMarkdown("orrery convert-text", et::ConvertTextFlagDocs());
}

}  // namespace orrery
