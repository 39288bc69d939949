// The graph both studio benchmarks open: llama3_8b_4l_train's AOT joint graph, with its artifact
// (the studio joins it with the compile's Dynamo graph for parameter names).
#pragma once

#include <QString>
#include <memory>
#include <stdexcept>
#include <string>

#include "io/artifact.h"

namespace lathe::bench {

struct SampleJointGraph {
  std::shared_ptr<const io::Artifact> artifact;
  std::shared_ptr<const ir::Graph> graph;
  QString id;
};

inline SampleJointGraph loadSampleJointGraph() {
  const std::string path = std::string(LATHE_SAMPLES_DIR) + "/captures/llama3_8b_4l_train.log.gz";
  SampleJointGraph sample;
  sample.artifact = std::make_shared<const io::Artifact>(io::loadArtifact(path));
  for (const auto& listing : sample.artifact->graphs()) {
    if (listing.kind == "aot_joint_graph") {
      sample.graph = listing.graph;
      sample.id = QString::fromStdString(listing.id);
      return sample;
    }
  }
  throw std::runtime_error("no joint graph in " + path);
}

}  // namespace lathe::bench
