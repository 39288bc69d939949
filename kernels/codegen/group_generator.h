// The generator of one fusion group's kernel source (kernels/cuda_codegen.h says what it emits).
// One class, its members defined by concern:
//   group_generator.cpp    the group's interface (inputs, outputs, shapes, symbols) and its .cu file
//   indexing.cpp           emission, index expressions, loads and stores (chunked loads among them)
//   values.cpp             a member's element as an expression: views, gathers, scatters, branches
//   elementwise.cpp        the arithmetic of elementwise ops
//   pointwise_kernels.cpp  the pointwise kernel shape (scalar, vector, chunked)
//   reductions.cpp         what a reduction reduces and which kernel shape it gets
//   row_kernels.cpp        row reductions and normalizations: a block, lanes or a thread per row
//   column_kernels.cpp     column reductions in strips, rows split over blocks with partial sums
// Private to kernels/codegen/.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "kernels/codegen/expressions.h"
#include "kernels/codegen/op_table.h"
#include "kernels/cuda_codegen.h"
#include "plan/plan_state.h"

namespace lathe::kernels::codegen {

// Kernels have C names: the NVRTC path's library finds them in the loaded fatbin by name.
inline constexpr const char* kKernelDeclaration = "extern \"C\" __global__ void __launch_bounds__(";

// Symbols in the capture: their hints, from dimensions whose expression is the bare symbol.
using SymbolHints = std::map<std::string, int64_t, std::less<>>;

class GroupGenerator {
 public:
  GroupGenerator(const ir::Graph& graph, const plan::FusionGroup& group, const SymbolHints& hints);

  // The group's kernel; throws Unsupported with the reason where it cannot vouch for one.
  GeneratedKernel generate();

 private:
  // ---------------------------------------------------------------- group_generator.cpp

  bool member(NodeId node) const { return members_.contains(node); }
  // The group's nodes in program order, each once, and its anchor one of them: a plan bundle may
  // hold any list (the fusion pass writes sorted ones), and the checks below read nodes in order.
  void orderNodes();
  // Bytes a launch moves: every tensor once, except a table read only through gathers
  // (embedding, index, gather), of which at most the gathered elements are read.
  uint64_t trafficBytes();
  int64_t dimValue(const ir::SymDim& dim);
  const ir::TensorMeta& tensorMeta(NodeId node);
  // Sizes whose products the generator may form with every dimension (rows, row sizes, element
  // counts) without overflow, and whose indices the kernels' 64-bit arithmetic holds.
  const Shape& shape(NodeId node);
  int64_t numel(NodeId node) { return product(shape(node)); }
  TensorSpec spec(NodeId node);
  // Checks and size queries (torch.export puts an _assert_tensor_metadata after every dtype
  // conversion): they read no element, so a member they read need not be stored.
  bool readsOnlyMetadata(NodeId user) const;
  // Inputs: values read from outside the group, in first-use order. Outputs: members read outside.
  void collectInterface();
  // A kernel's tensor parameters ("const __nv_bfloat16* __restrict__ in0, float* __restrict__ out0")
  // and a launch's arguments for them ("in0, out0"): the inputs, then the outputs.
  std::string params() const;
  std::string arguments() const;
  std::string sourceFile(const std::string& kernels) const;

  // ---------------------------------------------------------------- indexing.cpp

  void line(const std::string& text);
  // Emits `text` line by line at the current indentation plus `extra` spaces.
  void lines(const std::string& text, int extra);
  std::string temp() { return "v" + std::to_string(temps_++); }
  void resetBody(std::string* body, int indent);
  // Splits a row-major element number over a shape.
  Index split(const std::string& linear, const Shape& sizes);
  // The element position in a vector kernel whose chunks each lie in one innermost row: every
  // dimension but the innermost is the chunk's (computed once, before the element loop), the
  // innermost is the chunk's start plus `e`. Loads then see which operands the whole chunk shares
  // and which it reads as one consecutive run.
  Index splitChunk(const Shape& sizes);
  // Whether every name in `expr` is defined before a chunk's element loop.
  bool chunkInvariant(std::string_view expr) const;
  // An innermost index "(jb_1_S + e)", possibly shifted by slices ("((jb_1_S + e) + 64LL)"), as the
  // index of the chunk's first element; nullopt for anything else or a shift that breaks the
  // chunk's alignment.
  std::optional<std::string> chunkRunStart(const std::string& dim) const;
  // A load in a chunked vector kernel, outside any branch: a value the whole chunk shares is loaded
  // once; a run of `width` consecutive elements starting at an aligned offset, as one pack.
  std::optional<Val> chunkLoad(size_t slot, const TensorSpec& tensor, const Index& index, const std::string& off);
  std::string linearOf(const Index& index, const Shape& sizes);
  // `expr` as a constant of the scope, declared once per scope (memoized as values are: a value
  // asked for again, a Deferred one's requester among them, builds the same indices).
  std::string indexConstant(const std::string& expr);
  // The operand's index for an element of `to`, numpy broadcasting (sizes aligned at the right).
  Index broadcast(const Index& index, const Shape& to, const Shape& from);
  // Same elements in the same order, another shape.
  Index reshape(const Index& index, const Shape& to, const Shape& from);
  std::string offset(const Index& index, const TensorSpec& tensor);
  size_t inputSlot(NodeId node) const;
  Val load(NodeId node, const Index& index);
  // Element `linear` of an output: in row-major order, or where elements need not follow rows
  // (pointwise kernels) in the output's memory order when it is a permuted dense tensor, so that
  // its stores and the loads of tensors laid out as it is are consecutive.
  Index outputIndex(const std::string& linear, const TensorSpec& out);
  // Stores every output whose element count is `count`, at element `linear` of its own shape.
  void storeOutputs(const std::string& linear, int64_t count);
  // The packs of a vector loop's tensors that move whole chunks (directInputs_ / directOutputs_):
  // inputs loaded from `base` before the element loop, outputs declared, then stored after it.
  std::string packDeclarations(const std::string& width) const;
  std::string packStores() const;

  // ---------------------------------------------------------------- values.cpp

  Val operand(NodeId node, size_t position, std::string_view keyword, const Index& index);
  // Emission recurses through the operands of each member (value -> compute -> value): a level per
  // node along a chain of the group. To bound the native stack, a member kDeferDepth levels below
  // the innermost `evaluate` (or kMaxStackDepth levels deep in all) is thrown back to that evaluate
  // as Deferred, which emits it first, from its own level, then asks again for what it was asked.
  // What the first attempt emitted is memoized (indices too), so the second meets it and goes on
  // where the first stopped: the kernel is the one unbounded recursion would emit, but that a
  // scatter asked again numbers its temporaries anew. Each branch and loop body is an evaluate of
  // its own, so a deferral never leaves its scope; a body that starts kMaxStackDepth levels deep
  // refuses the group.
  struct Deferred {
    NodeId node;
    Index index;
  };
  Val evaluate(NodeId node, const Index& index);
  Val value(NodeId node, const Index& index);
  NodeId tensorOperand(NodeId node) const;
  Val compute(NodeId node, const Index& index);
  // A value chosen by conditions: one branch per condition (an empty one: otherwise), each in its
  // own scope, so that no branch reads what it does not need (an operand out of its range).
  // In a chunked vector kernel, `chunkCondition` (on the chunk's first element) may stand for the
  // condition when the whole chunk always takes the same branch: loads in it can then be hoisted.
  struct Branch {
    std::string condition;
    std::function<Val()> value;
    std::optional<std::string> chunkCondition = std::nullopt;
  };
  Val choose(CType out, const std::vector<Branch>& branches);
  // self[i0, i1, ...] with index tensors for some dimensions (None for the others), the indexed
  // dimensions next to each other: the result has self's dimensions before them, the broadcast
  // shape of the index tensors, then self's dimensions after them. Negative indices count from
  // the end, as in PyTorch; indices out of range are the caller's error, as there.
  Val gather(NodeId node, const Index& index);
  std::string wrapped(const Val& at, int64_t size);
  // gather(self, dim, index): out[..., i_dim, ...] = self[..., index[..., i_dim, ...], ...].
  Val gatherDim(NodeId node, const Index& index);
  // scatter(self, dim, index, value | src): self, except where an index along `dim` names the
  // element (the last one wins where several do; PyTorch leaves that order unspecified).
  Val scatter(NodeId node, const Index& index, CType out);
  Val concat(NodeId node, const Index& index, CType out);
  Val sliceScatter(NodeId node, const Index& index, CType out);
  Val creation(NodeId node, std::string_view name, const Index& index, CType out);

  // ---------------------------------------------------------------- elementwise.cpp

  Val elementwise(NodeId node, std::string_view name, const Index& index, CType out);

  // ---------------------------------------------------------------- pointwise_kernels.cpp

  std::string pointwiseKernels();

  // ---------------------------------------------------------------- reductions.cpp

  struct ReductionOp {
    std::string combine;   // lathe functor
    std::string identity;  // C++ expression
    CType accumulator = CType::Float;
    bool mean = false;
    bool variance = false;
    int64_t correction = 1;
    bool online = false;     // softmax, log_softmax
    bool layerNorm = false;  // mean and centred variance, then rsqrt(var + epsilon)
    double epsilon = 1e-5;
  };
  ReductionOp reductionOp(NodeId node, std::string_view name);
  // Members that read the reduced value, and a check that each reads it through the elements of
  // its own row (see kernels/cuda_codegen.h): the value they reach is the one this block reduced.
  std::optional<std::string> acrossRows(int64_t rows, int64_t total);
  // The reduction's operand split into rows (the kept dimensions) of reduced elements.
  struct RowPlan {
    OpSpec op{Shaping::Reduction, ""};
    ReductionOp reduce;
    NodeId source = ir::kNoNode;
    std::vector<bool> reducedDim;
    Shape kept, reducedSizes;
    int64_t rows = 0, rowSize = 0, total = 0;
  };
  RowPlan planRows();
  // Declares `red`, the reduced value of a row from its accumulator (a mean divides by the row
  // size), rounded as its store would round it, as the value the members after the reduction read.
  void declareReduced(const std::string& accumulator);
  // The reduction at `index` of its result, as a loop inside the element that reads it.
  Val inlineReduction(const Index& index);
  std::string reductionKernels();
  // Reduced dimensions before every kept one (size-1 dimensions aside): element k of row r is
  // element k * rows + r of the operand, so consecutive rows are consecutive in memory (columns).
  bool leadingReduced();
  // Outputs a column kernel can store: the row-sized ones, and element-sized ones that do not read
  // the reduced value (each element is visited once, by some thread of the strip's block).
  bool columnOutputs();
  // Reduced dimensions after every kept one (size-1 dimensions aside): row r is the elements
  // r * rowSize ... (r + 1) * rowSize - 1 of the reduction's operand, so rows can be read in chunks.
  bool trailingRows();

  // ---------------------------------------------------------------- row_kernels.cpp

  // A loop of the block's threads over the elements of its row; `element` emits the body for the
  // element whose number in the operand is `j` (`k` in the row). In vector mode each thread takes
  // chunks of kVectorToken elements: tensors read or written in that order are moved 16 bytes at
  // a time (preloaded before, stored after the chunk's elements).
  // `backwards`: the block walks the row from its end, so that a pass after the first meets the
  // elements the first read last, the ones most likely still in L2, before they are evicted.
  void rowLoop(const std::function<void()>& element, bool backwards = false);
  // The body of a row kernel (one block per row), scalar or in chunks (see rowLoop).
  std::string reductionBody();
  std::string reductionKernel();

  // ---------------------------------------------------------------- column_kernels.cpp

  // Column reductions (a weight or bias gradient: the sum over every token of each feature): a
  // block owns a strip of consecutive columns, its thread groups (one per strip-wide slice of
  // the block) take every groups-th row, so that a warp reads consecutive elements, and the
  // groups' partial results are combined in shared memory in a fixed order (deterministic, no
  // atomics, no second pass). The groups are counted from blockDim, so a block of one group (as
  // the CPU check runs it) reduces its strip in one thread per column.
  std::string columnKernel();
  // The thread groups' partial results of a column kernel (partial[group][column]), combined in
  // halving steps (group g takes g + half), so that the block's last group does not add every other
  // group's values one after another: log2(groups) steps, in a fixed order.
  void combineGroups(const std::string& firstColumn, int columns);
  struct VectorColumns {
    std::string text, launch, aligned;
    LaunchConfig config;
    int width = 1;
  };
  // The column reduction with each thread on `width` consecutive columns (16 bytes of the widest
  // tensor): the loads of a 2-byte operand are 16 bytes wide instead of 2, so that enough bytes are
  // in flight. Partial results combine in the same fixed order; nullopt where columns, shapes or
  // the operand's layout do not allow whole chunks.
  std::optional<VectorColumns> columnVectorKernel();

  // ---------------------------------------------------------------- state

  const ir::Graph& graph_;
  const plan::FusionGroup& group_;
  const SymbolHints& hints_;
  std::set<NodeId> members_;
  std::vector<NodeId> nodes_;  // the group's, in program order
  std::map<NodeId, size_t> inputSlot_;
  std::vector<NodeId> outputNodes_;
  std::map<NodeId, Shape> shapes_;
  std::set<std::string> usedSymbols_;
  GeneratedKernel kernel_;
  NodeId reduction_ = ir::kNoNode;
  std::vector<Val> reduced_;  // the reduced values once the row is reduced (var_mean: var, mean)
  RowPlan rows_;
  bool inlineReduction_ = false;
  bool threadRows_ = false;  // a thread per row of the reduction (short rows), no block-wide combine
  int64_t laneRows_ = 0;     // lanes per row (short consecutive rows), combined by shuffles; 0: off
  std::set<size_t> rowDirectInputs_, rowDirectOutputs_;  // moved in chunks by a row kernel's loops

  std::string* body_ = nullptr;
  int indent_ = 0;
  int temps_ = 0;
  // Members being computed (value -> compute nesting), and their number at the innermost
  // evaluate: see evaluate().
  int depth_ = 0, depthBase_ = 0;
  std::map<std::string, Val> memo_;
  bool vectorMode_ = false;
  std::set<size_t> directInputs_, directOutputs_;
  // A pointwise vector kernel whose chunks each lie in one innermost row (splitChunk).
  struct ChunkWalk {
    int width = 0;
    bool usable = true;           // every shape split over "j" has an innermost size that is a multiple of width
    std::string prologue;         // before the element loop: the chunk's position and the loads it shares
    std::set<std::string> names;  // defined in the prologue
    std::map<std::string, std::string> loads;  // load -> its name in the prologue
    std::set<size_t> packedInputs;             // read as packs: the launch checks their alignment
  };
  std::optional<ChunkWalk> chunk_;
  // Per enclosing branch of choose(): the condition under which a whole chunk takes it, or nullopt
  // when elements of one chunk may go different ways (loads there stay per element).
  std::vector<std::optional<std::string>> chunkGuards_;
  std::string launchBody_;
};

}  // namespace lathe::kernels::codegen
