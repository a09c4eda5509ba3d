#include "analyze/analyze_main.h"
int main(int argc, char** argv) { return orrery::analyze::AnalyzeMain(argc, argv); }
