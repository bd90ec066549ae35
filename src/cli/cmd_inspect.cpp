#include "cli/commands.hpp"
namespace ttlpred::cli {
void add_inspect_command(CLI::App& app) { app.add_subcommand("inspect", "Summarize a job trace"); }
}  // namespace ttlpred::cli
