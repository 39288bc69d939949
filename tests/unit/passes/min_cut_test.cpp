// FlowNetwork against brute force on random small networks: every source/sink partition is
// enumerated, so the cut value is checked exactly, and the returned sink side must be the smallest
// one among all minimum cuts (the vertices that reach the sink in the residual network, as
// networkx.minimum_cut returns them). More cases: RC_PARAMS="max_success=5000".
#include "passes/min_cut.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace lathe::passes {
namespace {

struct RandomEdge {
  uint32_t from = 0, to = 0;
  int64_t capacity = 0;
};

struct RandomNetwork {
  uint32_t vertices = 0;
  uint32_t source = 0, sink = 0;
  std::vector<RandomEdge> edges;
};

// Small capacities make ties (several minimum cuts) common; large ones test the arithmetic;
// INT64_MAX tests that everything from kInfinite up counts as infinite.
rc::Gen<int64_t> capacityGen() {
  return rc::gen::weightedOneOf<int64_t>({
      {12, rc::gen::inRange<int64_t>(0, 6)},
      {3, rc::gen::inRange<int64_t>(0, 1'000'000'000'000'000)},
      {1, rc::gen::just(FlowNetwork::kInfinite)},
      {1, rc::gen::just(std::numeric_limits<int64_t>::max())},
  });
}

std::string describe(const RandomNetwork& net) {
  std::ostringstream out;
  out << net.vertices << " vertices, source " << net.source << ", sink " << net.sink << "\n";
  for (const RandomEdge& e : net.edges) {
    out << "  " << e.from << " -> " << e.to << "  ";
    if (e.capacity >= FlowNetwork::kInfinite) {
      out << "inf (" << e.capacity << ")\n";
    } else {
      out << e.capacity << "\n";
    }
  }
  return out.str();
}

// Uniform in [low, high) whatever the test's size (inRange alone favours the low end on early tests).
template <typename T>
T uniform(T low, T high) {
  return *rc::gen::resize(rc::kNominalSize, rc::gen::inRange<T>(low, high));
}

RandomNetwork randomNetwork() {
  RandomNetwork net;
  net.vertices = uniform<uint32_t>(2, 11);
  net.source = uniform<uint32_t>(0, net.vertices);
  net.sink = (net.source + uniform<uint32_t>(1, net.vertices)) % net.vertices;
  // Parallel and antiparallel edges included; no self loops (a flow network never needs one).
  const size_t edgeCount = uniform<size_t>(0, 3 * net.vertices);
  for (size_t i = 0; i < edgeCount; ++i) {
    RandomEdge e;
    e.from = uniform<uint32_t>(0, net.vertices);
    e.to = (e.from + uniform<uint32_t>(1, net.vertices)) % net.vertices;
    e.capacity = *rc::gen::resize(rc::kNominalSize, capacityGen());
    net.edges.push_back(e);
  }
  RC_LOG() << describe(net);
  return net;
}

// Capacity of the cut whose sink side is `sinkSide`, infinite edges counting kInfinite each,
// saturating at kInfinite.
int64_t cutCapacity(const RandomNetwork& net, const std::vector<uint8_t>& sinkSide) {
  int64_t total = 0;
  for (const RandomEdge& e : net.edges) {
    if (sinkSide[e.from] || !sinkSide[e.to]) continue;
    total = std::min(FlowNetwork::kInfinite, total + std::min(e.capacity, FlowNetwork::kInfinite));
  }
  return total;
}

struct BruteForce {
  int64_t value = FlowNetwork::kInfinite;
  std::vector<uint8_t> smallestSinkSide;  // intersection of the sink sides of all minimum cuts
};

BruteForce bruteForce(const RandomNetwork& net) {
  BruteForce best;
  std::vector<std::vector<uint8_t>> minimumSinkSides;
  for (uint32_t mask = 0; mask < (1u << net.vertices); ++mask) {
    std::vector<uint8_t> sinkSide(net.vertices);
    for (uint32_t v = 0; v < net.vertices; ++v) sinkSide[v] = (mask >> v) & 1u;
    if (sinkSide[net.source] || !sinkSide[net.sink]) continue;
    const int64_t capacity = cutCapacity(net, sinkSide);
    if (capacity < best.value) {
      best.value = capacity;
      minimumSinkSides.clear();
    }
    if (capacity == best.value) minimumSinkSides.push_back(std::move(sinkSide));
  }
  best.smallestSinkSide.assign(net.vertices, 1);
  for (const auto& side : minimumSinkSides) {
    for (uint32_t v = 0; v < net.vertices; ++v) best.smallestSinkSide[v] &= side[v];
  }
  return best;
}

FlowNetwork build(const RandomNetwork& net) {
  FlowNetwork network(net.vertices);
  for (const RandomEdge& e : net.edges) network.addEdge(e.from, e.to, e.capacity);
  return network;
}

RC_GTEST_PROP(MinCut, ValueAndSinkSideMatchBruteForce, ()) {
  const RandomNetwork net = randomNetwork();
  const FlowNetwork::Cut cut = build(net).minimumCut(net.source, net.sink);
  const BruteForce expected = bruteForce(net);

  RC_ASSERT(cut.sinkSide.size() == net.vertices);
  RC_ASSERT(cut.sinkSide[net.sink] == 1);
  RC_ASSERT(cut.sinkSide[net.source] == 0);
  if (expected.value >= FlowNetwork::kInfinite) {
    RC_ASSERT(cut.value >= FlowNetwork::kInfinite);
    return;  // no finite cut: which side an uncut vertex lands on is not specified
  }
  RC_ASSERT(cut.value == expected.value);
  // The returned sink side is a minimum cut ...
  RC_ASSERT(cutCapacity(net, cut.sinkSide) == cut.value);
  // ... from which no vertex can move to the source side at the same value ...
  for (uint32_t v = 0; v < net.vertices; ++v) {
    if (v == net.sink || !cut.sinkSide[v]) continue;
    std::vector<uint8_t> moved = cut.sinkSide;
    moved[v] = 0;
    RC_ASSERT(cutCapacity(net, moved) > cut.value);
  }
  // ... and it is the smallest sink side of all minimum cuts.
  RC_ASSERT(cut.sinkSide == expected.smallestSinkSide);
}

RC_GTEST_PROP(MinCut, AddedVerticesJoinNoSide, ()) {
  // Vertices added after construction are isolated: never on the sink side, and the value is unchanged.
  const RandomNetwork net = randomNetwork();
  FlowNetwork network = build(net);
  const FlowNetwork::Cut before = network.minimumCut(net.source, net.sink);
  const uint32_t extra = uniform<uint32_t>(1, 4);
  for (uint32_t i = 0; i < extra; ++i) RC_ASSERT(network.addVertex() == net.vertices + i);
  RC_ASSERT(network.vertexCount() == net.vertices + extra);
  const FlowNetwork::Cut after = network.minimumCut(net.source, net.sink);
  RC_ASSERT(after.value == before.value);
  RC_ASSERT(std::equal(before.sinkSide.begin(), before.sinkSide.end(), after.sinkSide.begin()));
  for (uint32_t v = net.vertices; v < net.vertices + extra; ++v) RC_ASSERT(after.sinkSide[v] == 0);
}

TEST(MinCut, TieTakesTheSmallestSinkSide) {
  // source -1-> a -1-> sink: both edges are minimum cuts; the sink side is {sink} alone.
  FlowNetwork network(3);
  network.addEdge(0, 1, 1);
  network.addEdge(1, 2, 1);
  const FlowNetwork::Cut cut = network.minimumCut(0, 2);
  EXPECT_EQ(cut.value, 1);
  EXPECT_EQ(cut.sinkSide, (std::vector<uint8_t>{0, 0, 1}));
}

TEST(MinCut, OnlyInfiniteCutsReportInfinity) {
  FlowNetwork network(3);
  network.addEdge(0, 1, FlowNetwork::kInfinite);
  network.addEdge(1, 2, std::numeric_limits<int64_t>::max());
  EXPECT_GE(network.minimumCut(0, 2).value, FlowNetwork::kInfinite);
}

}  // namespace
}  // namespace lathe::passes
