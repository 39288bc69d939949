#include <gtest/gtest.h>

#include "ir/graph.h"

using namespace lathe::ir;

TEST(Graph, CsrUsersAndInputsFollowArguments) {
  Graph g;
  Node x;
  x.kind = NodeKind::Placeholder;
  x.name = g.intern("x");
  const NodeId xid = g.addNode(x);
  Node mul;
  mul.name = g.intern("mul");
  mul.target = g.intern("torch.ops.aten.mul.Tensor");
  mul.args = {Arg::ofNode(xid), Arg::ofNode(xid)};
  const NodeId mid = g.addNode(mul);
  Node cat;
  cat.name = g.intern("cat");
  cat.target = g.intern("torch.ops.aten.cat.default");
  Arg list;
  list.kind = Arg::Kind::List;
  list.items = {Arg::ofNode(mid), Arg::ofNode(xid)};
  cat.args = {list};
  const NodeId cid = g.addNode(cat);
  Node out;
  out.kind = NodeKind::Output;
  out.name = g.intern("output");
  out.target = g.intern("output");
  out.args = {Arg::ofNode(cid)};
  g.addNode(out);
  g.finalize();

  ASSERT_EQ(g.users(xid).size(), 2u);  // mul (once, although used twice) and cat
  EXPECT_EQ(g.users(xid)[0], mid);
  EXPECT_EQ(g.users(xid)[1], cid);
  ASSERT_EQ(g.inputs(cid).size(), 2u);
  EXPECT_EQ(g.inputs(cid)[0], mid);
  EXPECT_EQ(g.find("cat"), cid);
  EXPECT_EQ(g.find("nope"), kNoNode);
  const GraphCounts c = countGraph(g);
  EXPECT_EQ(c.placeholders, 1u);
  EXPECT_EQ(c.calls, 2u);
  EXPECT_EQ(c.torchOps, 2u);
}

TEST(TensorMeta, StorageBytesFollowStrides) {
  TensorMeta m;
  m.kind = ValueKind::Tensor;
  m.dtype = DType::BF16;
  m.sizes = {{1, 0, true}, {64, 0, true}};
  m.strides = {{65, 0, true}, {1, 0, true}};
  m.hasStrides = true;
  EXPECT_EQ(m.numel(), 64);
  EXPECT_EQ(m.storageBytes(), 128u);
  m.strides = {{0, 0, true}, {0, 0, true}};  // expanded scalar
  EXPECT_EQ(m.storageBytes(), 2u);
}
