// The subcommands of `lathe`. Each registers its options on the CLI11 app and runs when selected.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <map>
#include <string>

namespace lathe::cli {

struct GlobalOptions {
  bool progress = false;  // draw a progress line on stderr (only when it is a terminal)
};

void registerCommands(CLI::App& app, GlobalOptions& global);
// Runs the subcommand the user chose; returns the exit code.
int runSelectedCommand(CLI::App& app, const GlobalOptions& global);

}  // namespace lathe::cli
