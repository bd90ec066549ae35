#include "cli/commands.hpp"
namespace ttlpred::cli {
void add_generate_command(CLI::App& app) { app.add_subcommand("generate", "Generate a synthetic ALICE-like job trace"); }
}  // namespace ttlpred::cli
