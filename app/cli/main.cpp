// `lathe`: headless CLI over lathe_core.
#include <CLI/CLI.hpp>

int main(int argc, char** argv) {
  CLI::App app{"Lathe: a compiler workbench for PyTorch graphs"};
  app.require_subcommand(1);
  CLI11_PARSE(app, argc, argv);
  return 0;
}
