// The subcommands of `lathe`. Each registers its options on the CLI11 app and runs when selected.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "io/artifact.h"
#include "util/progress.h"

namespace lathe::cli {

// Exit codes beyond lathe::ErrorCode's (1 usage, 2 bad input, 3 internal): `lathe plan` wrote its
// plan, but the plan does not fit the memory budget it was asked for (or, with --strict, the
// target's memory).
inline constexpr int kExitBudgetMissed = 4;

struct GlobalOptions {
  bool progress = false;  // draw a progress line on stderr (only when it is a terminal)
};

void registerCommands(CLI::App& app, GlobalOptions& global);
// Runs the subcommand the user chose; returns the exit code.
int runSelectedCommand(CLI::App& app, const GlobalOptions& global);

// Planning commands (plan_commands.cpp): plan, timeline, pareto, profile, passes.
void registerPlanCommands(CLI::App& app);
// The exit code when one of them was chosen, nullopt otherwise.
std::optional<int> runPlanCommand(CLI::App& app, const GlobalOptions& global);

// `lathe export` (export_command.cpp): CUDA kernels for a plan's fusion groups.
void registerExportCommand(CLI::App& app);
std::optional<int> runExportCommand(CLI::App& app, const GlobalOptions& global);

// `lathe measure` (measure_command.cpp): a graph or a plan's step run through libtorch.
void registerMeasureCommand(CLI::App& app);
std::optional<int> runMeasureCommand(CLI::App& app, const GlobalOptions& global);

// `lathe diff` (diff_command.cpp): two plans, or two graphs node by node.
void registerDiffCommand(CLI::App& app);
std::optional<int> runDiffCommand(CLI::App& app, const GlobalOptions& global);

// `lathe report` (report_command.cpp): one self-contained HTML file.
void registerReportCommand(CLI::App& app);
std::optional<int> runReportCommand(CLI::App& app, const GlobalOptions& global);

// Shared by the commands.
Progress progressFor(const GlobalOptions& global);
io::Artifact load(const std::string& path, const GlobalOptions& global);
// A graph by id or by index in the listing; Error(Usage) naming how many there are otherwise.
const io::GraphListing& selectGraph(const std::vector<io::GraphListing>& graphs, const std::string& id);

}  // namespace lathe::cli
