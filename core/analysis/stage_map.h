// Which node of one graph stage stands for which node of another stage of the same compile:
// Dynamo graph (and its pre-grad copies) <-> AOT joint <-> forward / backward / inference <->
// post-grad graphs. What the studio uses to keep one selection across stages.
//
// Within the AOT family (joint, forward, backward, inference, joint passes, post-grad) and within
// the Dynamo family (Dynamo graph, pre-grad graphs) names carry over: a node maps to the node of the
// same name whose value has the same dtype and sizes (forward `mm` <-> backward placeholder `mm`,
// the saved value). Between families names mean nothing (Dynamo `view` is not AOT `view`), so a call
// maps through its `# File:` provenance (file, line, code) and its op: among the nodes of the same
// source line, those of the same canonical op, else of the same op category; the k-th such node of
// one graph maps to the k-th of the other (layers repeat source lines in program order), or to all
// of them when the other graph has fewer (a backward node of a line maps to every forward one).
// A node whose op the other graph's line lacks (a decomposition's slice or clone) maps to the whole
// k-th run of that line there: consecutive nodes of one source line are one execution of it.
// Dynamo placeholders map to AOT primals by position. Names that do not carry over within a
// family (nodes a pass created) fall back to provenance too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "io/graph_listing.h"
#include "ir/graph.h"
#include "ir/op_info.h"

namespace lathe::analysis {

enum class GraphStage : uint8_t {
  Dynamo,     // dynamo_output_graph
  PreGrad,    // before_pre_grad_graph, after_pre_grad_graph
  Joint,      // aot_joint_graph
  JointPass,  // before_joint_graph, after_joint_graph (Inductor's joint passes on inference graphs)
  Forward,    // aot_forward_graph
  Backward,   // aot_backward_graph
  Inference,  // aot_inference_graph
  PostGrad,   // before_post_grad_graph, inductor_post_grad_graph
  Exported,   // a .pt2 exported program
  Other,
};

// The stage of a graph kind as GraphListing::kind names it.
[[nodiscard]] GraphStage graphStageOf(std::string_view kind);

enum class StageMatchBy : uint8_t { Name, Provenance, InputPosition };

struct StageNodeRef {
  size_t graph = 0;  // index into StageMap::graphs()
  ir::NodeId node = ir::kNoNode;
  StageMatchBy by = StageMatchBy::Name;
};

class StageMap {
 public:
  // The top-level graphs (nested subgraphs left out) of one compile and rank, in listing order.
  StageMap(const std::vector<io::GraphListing>& listings, std::string_view compileId, int32_t rank);

  [[nodiscard]] const std::vector<io::GraphListing>& graphs() const { return graphs_; }
  [[nodiscard]] GraphStage stage(size_t graph) const { return info_[graph].stage; }
  [[nodiscard]] std::optional<size_t> indexOf(std::string_view graphId) const;

  // Nodes of graph `to` that stand for `node` of graph `from`, best first; empty when none does.
  [[nodiscard]] std::vector<StageNodeRef> counterparts(size_t from, ir::NodeId node, size_t to) const;
  // The same in every other graph of the compile, in graph order.
  [[nodiscard]] std::vector<StageNodeRef> counterparts(size_t from, ir::NodeId node) const;

 private:
  struct NodeKeys {
    uint32_t provenance = 0;  // 0: no provenance
    uint32_t op = 0;          // canonical op name id
    ir::OpCategory category = ir::OpCategory::Unknown;
    uint32_t opOrdinal = 0;               // position among the graph's nodes of the same provenance and op
    uint32_t categoryOrdinal = 0;         // ... of the same provenance and op category
    uint32_t run = 0;                     // which run of consecutive nodes of its source line it is in
    uint32_t inputPosition = UINT32_MAX;  // position among the non-tangent placeholders
  };
  struct GraphInfo {
    GraphStage stage = GraphStage::Other;
    int family = 0;
    std::vector<NodeKeys> keys;
    // (provenance << 32 | op) and (provenance << 32 | category) -> nodes in program order.
    std::unordered_map<uint64_t, std::vector<ir::NodeId>> byOp, byCategory;
    std::unordered_map<uint32_t, std::vector<std::vector<ir::NodeId>>> runs;  // provenance -> runs
    std::vector<ir::NodeId> inputs;                                           // non-tangent placeholders in order
  };

  void index(size_t graph);
  [[nodiscard]] std::vector<StageNodeRef> byName(size_t from, ir::NodeId node, size_t to) const;
  [[nodiscard]] std::vector<StageNodeRef> byProvenance(size_t from, ir::NodeId node, size_t to) const;
  [[nodiscard]] std::vector<StageNodeRef> byInputPosition(size_t from, ir::NodeId node, size_t to) const;

  std::vector<io::GraphListing> graphs_;
  std::vector<GraphInfo> info_;
  std::unordered_map<std::string, uint32_t> provenanceIds_, opIds_;
};

}  // namespace lathe::analysis
