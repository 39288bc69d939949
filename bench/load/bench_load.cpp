// Times loading artifacts with every graph parsed: for each path, the median wall time of
// --repeat loads on one thread. Prints one JSON object per path (read by bench/load/run.py).
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "io/artifact.h"

int main(int argc, char** argv) {
  int repeat = 3;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--repeat" && i + 1 < argc) repeat = std::max(1, std::atoi(argv[++i]));
    else paths.push_back(arg);
  }
  for (const auto& path : paths) {
    std::vector<double> seconds;
    size_t graphs = 0, nodes = 0, warnings = 0;
    for (int r = 0; r < repeat; ++r) {
      const auto start = std::chrono::steady_clock::now();
      const lathe::io::Artifact artifact = lathe::io::loadArtifact(path);
      seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      const auto listing = artifact.graphs();
      graphs = listing.size();
      nodes = 0;
      for (const auto& g : listing) nodes += g.graph->size();
      warnings = artifact.diagnostics().count(lathe::Severity::Warning);
    }
    std::sort(seconds.begin(), seconds.end());
    std::cout << nlohmann::json{{"path", path},
                                {"median_s", seconds[seconds.size() / 2]},
                                {"runs", repeat},
                                {"graphs", graphs},
                                {"nodes", nodes},
                                {"warnings", warnings}}
                     .dump()
              << std::endl;
  }
}
