#pragma once
// Keyword arguments as a command's options: {"window_days": 7, "splits": [0.5, 0.8]} is
// parsed by the command's own CLI11 declaration as `--window-days=7 --splits=0.5,0.8`, so a
// binding takes exactly the options, defaults and checks of the `ttlpred` command.
#include <pybind11/pybind11.h>

#include <CLI/CLI.hpp>

namespace ttlpred::python {

// Parses `options` with `cmd` (named `command` in messages). Keys take "_" or "-"; values
// are str, int, float, bool or a list of them (a comma list); None leaves the default. A bool
// is true/false to a flag and on/off to an on|off option (`residual=True` is `--residual on`).
// An unknown key or a value the option refuses raises Error naming the option.
void parse_cli_options(CLI::App& cmd, const char* command, const pybind11::dict& options);

// A command's options as `add` declares them (cli::add_backtest_options ...), with its
// defaults and `options` parsed over them.
template <class Options>
Options command_options(const char* command, void (*add)(CLI::App&, Options&), const pybind11::dict& options) {
  CLI::App cmd(command);
  cmd.set_help_flag();
  Options o;
  add(cmd, o);
  parse_cli_options(cmd, command, options);
  return o;
}

}  // namespace ttlpred::python
