// `lathe`: the headless CLI over lathe_core. Every subcommand prints a human-readable report, or
// JSON with --json. Exit codes (DESIGN.md): 0 ok, 1 usage, 2 bad input, 3 internal error.
#include <CLI/CLI.hpp>
#include <spdlog/cfg/env.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <new>

#include "commands.h"
#include "util/diagnostics.h"

int main(int argc, char** argv) {
  using namespace lathe::cli;

  auto logger = spdlog::stderr_color_mt("lathe");
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::warn);
  spdlog::cfg::load_env_levels();  // SPDLOG_LEVEL
  if (const char* level = std::getenv("LATHE_LOG_LEVEL")) spdlog::set_level(spdlog::level::from_str(level));

  CLI::App app{"Lathe: a compiler workbench for PyTorch graphs"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("lathe ") + LATHE_VERSION);
  GlobalOptions global;
  app.add_flag_callback("-v,--verbose", [] { spdlog::set_level(spdlog::level::debug); }, "Log what the loaders do");
  global.progress = isatty(STDERR_FILENO) != 0;

  registerCommands(app, global);

  // CLI11 reads an unknown command as a stray positional and says only that a command is required.
  if (argc > 1 && argv[1][0] != '-') {
    const std::string_view word = argv[1];
    std::string known;
    bool found = false;
    for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
      found = found || sub->get_name() == word;
      known += (known.empty() ? "" : ", ") + sub->get_name();
    }
    if (!found) {
      std::cerr << "lathe: unknown command '" << word << "' (commands: " << known << "; lathe --help)\n";
      return static_cast<int>(lathe::ErrorCode::Usage);
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : static_cast<int>(lathe::ErrorCode::Usage);
  }

  try {
    return runSelectedCommand(app, global);
  } catch (const lathe::Error& e) {
    std::cerr << "lathe: " << e.what() << '\n';
    return e.code() == lathe::ErrorCode::Cancelled ? static_cast<int>(lathe::ErrorCode::Internal)
                                                   : static_cast<int>(e.code());
  } catch (const std::bad_alloc&) {
    // Every reader bounds what it holds by its input, so this is an input too large for this machine.
    std::cerr << "lathe: out of memory: the input needs more memory than this machine can give\n";
    return static_cast<int>(lathe::ErrorCode::BadInput);
  } catch (const std::exception& e) {
    std::cerr << "lathe: internal error: " << e.what() << '\n';
    return static_cast<int>(lathe::ErrorCode::Internal);
  }
}
