#include "flag_tables.h"

#include "analyze/analyze_main.h"
#include "analyze/compare.h"
#include "config/key_table.h"
#include "et_feeder/gen_workload_flags.h"
#include "et_feeder/llm_workload.h"
#include "et_feeder/text_workload.h"
#include "et_feeder/trace_info.h"
#include "profile/import_main.h"
#include "runner/run_flags.h"
#include "sweep/sweep.h"
#include "validate/measurement_cli.h"

namespace orrery {

std::string CliFlagTables() {
  std::vector<KeyDoc> run = RunCommandFlagSchema().Docs();
  for (const KeyDoc& d : RunFlagSchema().Docs()) run.push_back(d);
  return FlagTableMarkdown("orrery (a run)", run) + "\n" +
         FlagTableMarkdown("orrery sweep", SweepFlagDocs()) + "\n" +
         FlagTableMarkdown("orrery sweep merge", SweepMergeFlagDocs()) + "\n" +
         FlagTableMarkdown("orrery generate-llm", et::GenerateLlmFlagDocs()) + "\n" +
         FlagTableMarkdown("orrery convert-text", et::ConvertTextFlagDocs()) + "\n" +
         FlagTableMarkdown("orrery trace-info", et::TraceInfoFlagDocs()) + "\n" +
         FlagTableMarkdown("orrery import", profile::ImportFlagDocs()) + "\n" +
         FlagTableMarkdown("orrery analyze", analyze::AnalyzeFlagDocs()) + "\n" +
         FlagTableMarkdown("orrery compare", analyze::CompareFlagDocs()) + "\n" +
         FlagTableMarkdown("orrery validate", ValidateFlagDocs()) + "\n" +
         FlagTableMarkdown("orrery calibrate", CalibrateFlagDocs()) + "\n" +
         FlagTableMarkdown("orrery validate --training", TrainingFlagDocs()) + "\n" +
         FlagTableMarkdown("gen_workload collective", et::CollectiveFlagDocs()) + "\n" +
         FlagTableMarkdown("gen_workload dp-step", et::DpStepFlagDocs());
}

}  // namespace orrery
