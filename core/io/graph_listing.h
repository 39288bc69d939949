// The graphs of an artifact, listed the same way whichever loader read them (what `lathe graphs`
// and the studio's tree show), and lookups in such a list.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"

namespace lathe::io {

struct GraphListing {
  std::string id;         // "0/0:aot_joint_graph", "model:exported_program", ".../wrap_body_0"
  std::string compileId;  // "0/0"; for a .pt2 the model name
  std::string kind;       // TORCH_TRACE event or artifact name; "exported_program" for a .pt2
  std::string parent;     // id of the enclosing graph for nested subgraphs
  int32_t rank = -1;
  std::shared_ptr<const ir::Graph> graph;
};

// The dynamo_output_graph of the same compile and rank as `graph` (its placeholders name the
// parameters and buffers behind AOT primals), or null.
[[nodiscard]] const ir::Graph* dynamoGraphOf(const std::vector<GraphListing>& graphs, const GraphListing& graph);
// Whether the compile of `graph` went through Inductor (it logged post-grad graphs), so Inductor's
// joint-graph passes ran before torch partitioned its joint graph.
[[nodiscard]] bool compiledByInductor(const std::vector<GraphListing>& graphs, const GraphListing& graph);

// The listing with this id, else the id-th listing when `id` is a number (as `lathe graphs` numbers
// them); null when there is none.
[[nodiscard]] const GraphListing* findGraph(const std::vector<GraphListing>& graphs, std::string_view id);
// The result points into `graphs`: a temporary list (Artifact::graphs() returns by value) would leave
// it dangling.
const GraphListing* findGraph(std::vector<GraphListing>&& graphs, std::string_view id) = delete;

}  // namespace lathe::io
