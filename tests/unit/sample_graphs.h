// Loads one graph of a sample capture with what planning needs beside it: the Dynamo graph of the
// same compile (for parameter roles) and the placeholder roles.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "analysis/graph_inputs.h"
#include "io/artifact.h"

namespace lathe::testing {

struct SampleGraph {
  std::shared_ptr<const ir::Graph> graph;
  std::shared_ptr<const ir::Graph> dynamo;
  std::shared_ptr<const ir::Graph> forward;  // the compile's aot_forward_graph, when it has one
  analysis::GraphInputs inputs;
};

// `sample` relative to the samples directory ("captures/llama3_8b_2l_train.log.gz"); `graphId`
// as `lathe graphs` lists it ("0/0:aot_joint_graph"). Fails the calling test (throws) when absent.
inline SampleGraph loadSampleGraph(const std::string& sample, const std::string& graphId) {
  const io::Artifact artifact = io::loadArtifact(std::string(LATHE_SAMPLES_DIR) + "/" + sample);
  SampleGraph out;
  const std::vector<io::GraphListing> graphs = artifact.graphs();
  const io::GraphListing* listing = io::findGraph(graphs, graphId);
  if (listing == nullptr) throw std::runtime_error(sample + " has no graph " + graphId);
  out.graph = listing->graph;
  for (const io::GraphListing& g : graphs) {
    if (g.kind == "dynamo_output_graph" && g.graph.get() == io::dynamoGraphOf(graphs, *listing)) out.dynamo = g.graph;
    if (g.kind == "aot_forward_graph" && g.compileId == listing->compileId && g.rank == listing->rank)
      out.forward = g.graph;
  }
  out.inputs = analysis::inferGraphInputs(*out.graph, out.dynamo.get());
  return out;
}

// The graphs the kernel tests generate, compile and export: each training capture's joint graph
// and each inference capture's graph.
inline const std::vector<std::pair<std::string, std::string>> kKernelSampleGraphs = {
    {"captures/llama3_8b_2l_train.log.gz", "0/0:aot_joint_graph"},
    {"captures/mixtral_2l_train.log.gz", "0/0:aot_joint_graph"},
    {"captures/gpt2_train.log.gz", "1/0_1:aot_joint_graph"},
    {"captures/llama3_8b_2l_infer.log.gz", "0/0:aot_inference_graph"},
    {"captures/mixtral_2l_infer.log.gz", "0/0:aot_inference_graph"},
    {"captures/gpt2_infer.log.gz", "0/0:aot_inference_graph"},
};

}  // namespace lathe::testing
