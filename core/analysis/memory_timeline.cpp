#include "analysis/memory_timeline.h"

#include <algorithm>
#include <array>
#include <map>
#include <queue>
#include <span>
#include <tuple>
#include <utility>

#include "ir/op_info.h"

namespace lathe::analysis {

StepSchedule programSchedule(const ir::Graph& graph) {
  StepSchedule schedule;
  for (ir::NodeId id = 0; id < graph.size(); ++id) {
    const ir::NodeKind kind = graph.node(id).kind;
    if (kind == ir::NodeKind::Placeholder || kind == ir::NodeKind::Output) continue;
    schedule.nodes.push_back(id);
    schedule.phase.push_back(Phase::Forward);
  }
  schedule.backwardStart = schedule.nodes.size();
  return schedule;
}

namespace {

// Whether one execution depends on another through an op outside a kernel (a matmul: not
// fusible), which keeps Inductor from fusing the two: a path of readers from `from` to `to` among
// the executions between their steps (`stepOf`: by node, its step in the program at hand, UINT32_MAX
// when it does not run there; a recomputed value's forward readers are not on such a path).
// Bounded, and counted as dependent when the bound is hit. Keeps its buffers between questions.
class KernelPaths {
 public:
  KernelPaths(const ir::Graph& graph, std::span<const uint8_t> fusible)
      : graph_(graph), fusible_(fusible), visited_(2 * static_cast<size_t>(graph.size()), 0) {}

  bool dependsOutsideKernel(std::span<const uint32_t> stepOf, ir::NodeId from, ir::NodeId to) {
    constexpr size_t kVisitBound = 4096;
    const uint32_t after = stepOf[from], until = stepOf[to];
    bool dependent = false;
    frontier_.assign(1, {from, false});
    touched_.clear();
    while (!frontier_.empty() && !dependent) {
      const auto [id, left] = frontier_.back();
      frontier_.pop_back();
      for (ir::NodeId user : graph_.users(id)) {
        if (stepOf[user] == UINT32_MAX || stepOf[user] <= after || stepOf[user] > until) continue;
        const bool leaves = left || !fusible_[user];
        if (user == to) {
          dependent |= leaves;
          continue;
        }
        uint8_t& seen = visited_[2 * static_cast<size_t>(user) + (leaves ? 1 : 0)];
        if (seen) continue;
        seen = 1;
        touched_.push_back(user);
        dependent |= touched_.size() > kVisitBound;
        frontier_.emplace_back(user, leaves);
      }
    }
    for (ir::NodeId id : touched_) visited_[2 * static_cast<size_t>(id)] = visited_[2 * static_cast<size_t>(id) + 1] = 0;
    return dependent;
  }

 private:
  const ir::Graph& graph_;
  std::span<const uint8_t> fusible_;
  std::vector<uint8_t> visited_;
  std::vector<std::pair<ir::NodeId, bool>> frontier_;
  std::vector<ir::NodeId> touched_;
};

// The elements the kernel computing `id` iterates: a reduction's input's, a pointwise op's own. A
// norm's weight-gradient column sum runs in one kernel with the same norm's input gradient (both
// read the gradient and the normalized input), which is why that sum cannot join the next norm's
// (fed by the input gradient through a matmul) and why neither output takes over a buffer the
// other reads.
uint64_t iteratedElements(const ir::Graph& graph, const StorageFacts& facts, ir::NodeId id) {
  if (!facts.inlinable[id]) {
    for (ir::NodeId in : graph.inputs(id)) {
      if (graph.node(in).meta.isTensor()) return graph.node(in).meta.numel();
    }
  }
  return graph.node(id).meta.numel();
}

// A program's order as Inductor runs it: the values its lowering writes to buffers (kernel outputs,
// reductions, values inlined into too many reads) that read the same buffer at the same indices,
// or one the other's output, iterate as many elements and do not depend on one another through an
// op outside a kernel (a matmul) are one kernel, joined in the order of Inductor's fusion score.
// A kernel runs whole where its first output stands, after what it reads: what its outputs need
// and has not run yet runs just before it, as Inductor's scheduler orders its fused nodes (by
// their first member, each after its dependencies, torch/_inductor/scheduler.py
// topological_sort_schedule). Checked against the kernels Inductor generated for three plans on
// the H100 (bench/runtime/inductor_kernels.py): the same pairs of outputs in one kernel.
// In a Llama FFN backward the graph computes the recomputed activation and the up gradient before
// the matmul that makes the activation's gradient, and the weight-gradient matmuls read them there;
// Inductor computes them in one kernel with the gate gradient, after that matmul, and its six
// FFN-sized buffers are live at once (docs/benchmarks.md, "What Inductor's programs hold"). The
// buffers shared include the graph's inputs: on the H100 Inductor put two layers' recomputed
// query RoPE into one kernel through the cos/sin tables they read, computing the second layer's
// norm and query projection a layer early (docs/benchmarks.md, "memory=4.7GiB in a run of its
// own"). A stable topological order: every op keeps its place but for the kernels and what they
// need.
struct KernelOrder {
  std::vector<ir::NodeId> nodes;
  std::vector<std::vector<uint32_t>> kernels;  // the outputs of each, by index into nodes, ascending
};

KernelOrder inKernelOrder(const ir::Graph& graph, const StorageFacts& facts, std::span<const ir::NodeId> order) {
  const size_t count = order.size();
  std::vector<uint32_t> position(graph.size(), UINT32_MAX);
  for (uint32_t i = 0; i < count; ++i) position[order[i]] = i;
  const std::vector<uint8_t>& fusible = facts.fusible;
  // A view or a getitem: it names part of what its input holds.
  const auto view = [&](ir::NodeId id) {
    return (facts.aliasOf[id] != ir::kNoNode && !facts.updatesInPlace[id]) || facts.partOfTuple[id] != ir::kNoNode;
  };
  const auto inKernel = [&](ir::NodeId id) { return position[id] != UINT32_MAX && fusible[id]; };
  constexpr size_t kWalkBound = 64;
  std::vector<ir::NodeId> walk;
  // A kernel's output: a fusible value something outside a kernel reads (views looked through).
  // The order is the backward's: a reader outside it is the step's output or a forward op, which
  // read a recomputed value's first computation, not this one (a residual the backward recomputes
  // is inlined into both norms that read it, as Inductor does).
  const auto writtenOut = [&](ir::NodeId id) {
    walk.assign(1, id);
    for (size_t i = 0; i < walk.size() && i < kWalkBound; ++i) {
      for (ir::NodeId user : graph.users(walk[i])) {
        if (position[user] == UINT32_MAX && graph.node(user).kind != ir::NodeKind::Output) continue;
        if (!inKernel(user)) return true;
        if (view(user)) walk.push_back(user);
      }
    }
    return false;
  };
  // The kernels' outputs: what Inductor's lowering writes to a buffer. A value something outside a
  // kernel reads, every reduction, a value read by more than one op once its inlined expression
  // reads more than 4 buffers (realize_reads_threshold), any value reading more than 8
  // (realize_acc_reads_threshold). A chain of residual adds recomputed from the layer stack's input
  // is written out every few layers, and a norm reads the nearest one, not the stack's input.
  constexpr size_t kFanoutReads = 4, kAccumulatedReads = 8;
  std::vector<uint8_t> member(count, 0);
  // A buffer as a kernel reads it: `shifted` when an op between them moves elements (a slice, a
  // cat, a slice_scatter), so the kernel loads it at other indices than its own. Inductor scores a
  // fusion by the reads two kernels make at the same indices: a RoPE backward reads the sine table
  // shifted by half a head, the forward's RoPE reads it in place.
  struct BufferRead {
    ir::NodeId buffer;
    bool shifted;
    auto operator<=>(const BufferRead&) const = default;
  };
  // Per op: the buffers its value reads, found through the values it inlines (graph inputs
  // included); then (read, output) for each buffer an output's kernel reads.
  std::vector<std::vector<BufferRead>> buffersRead(count);
  std::vector<std::pair<BufferRead, uint32_t>> reads;
  const auto readsOf = [&](ir::NodeId id) {
    std::vector<BufferRead> found;
    const bool shifts = facts.movesElements[id] != 0;
    for (ir::NodeId in : graph.inputs(id)) {
      if (!graph.node(in).meta.isTensor()) continue;
      if (!inKernel(in) || member[position[in]]) {
        found.push_back({in, shifts});
      } else {
        for (const BufferRead& inner : buffersRead[position[in]]) found.push_back({inner.buffer, inner.shifted || shifts});
      }
    }
    std::sort(found.begin(), found.end());
    found.erase(std::unique(found.begin(), found.end()), found.end());
    return found;
  };
  const auto distinctBuffers = [](const std::vector<BufferRead>& found) {
    size_t distinct = 0;
    for (size_t k = 0; k < found.size(); ++k) distinct += k == 0 || found[k].buffer != found[k - 1].buffer;
    return distinct;
  };
  // Each step's place in Inductor's scheduler, which counts its nodes (kernel outputs, reductions,
  // extern kernels and the parts of their results), not the views and the values it inlines.
  std::vector<uint32_t> scheduled(count, 0);
  uint32_t scheduledSoFar = 0;
  for (uint32_t i = 0; i < count; ++i) {
    const ir::NodeId id = order[i];
    scheduled[i] = scheduledSoFar;
    const ir::Node& node = graph.node(id);
    if (node.kind != ir::NodeKind::CallFunction) continue;
    if (inKernel(id) && node.meta.isTensor()) {
      buffersRead[i] = readsOf(id);
      if (!view(id)) {
        const size_t users = std::count_if(graph.users(id).begin(), graph.users(id).end(),
                                           [&](ir::NodeId user) { return position[user] != UINT32_MAX; });
        const size_t buffers = distinctBuffers(buffersRead[i]);
        member[i] = !facts.inlinable[id] || (users > 1 && buffers > kFanoutReads) || buffers > kAccumulatedReads ||
                    writtenOut(id);
      }
    }
    if (member[i] || facts.partOfTuple[id] != ir::kNoNode || (!view(id) && !(fusible[id] && facts.inlinable[id]))) {
      ++scheduledSoFar;
    }
    if (!member[i]) continue;
    for (const BufferRead& read : buffersRead[i]) reads.emplace_back(read, i);
  }
  // Each buffer's readers together, in program order.
  std::sort(reads.begin(), reads.end());
  KernelPaths paths(graph, fusible);
  // Kernels: outputs joined through the buffers they share, two kernels only where no output of
  // one depends on an output of the other through an op outside them (a kernel stays small).
  std::vector<uint32_t> parent(count);
  std::vector<std::vector<uint32_t>> members(count);
  for (uint32_t i = 0; i < count; ++i) {
    parent[i] = i;
    if (member[i]) members[i].push_back(i);
  }
  const auto root = [&](uint32_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  };
  // Inductor tries each reader of a buffer with the next 64 (its
  // max_fusion_buffer_group_pairwise_attempts) and fuses no two nodes more than 64 scheduler
  // nodes apart (are_long_distant_nodes: recomputed values of different layers would otherwise
  // share a kernel and live long).
  constexpr size_t kPairAttempts = 64, kKernelBound = 8;
  constexpr uint32_t kFusionDistance = 64;
  const auto joinable = [&](uint32_t a, uint32_t b) {
    if (members[a].size() + members[b].size() > kKernelBound) return false;
    const auto [lowA, highA] = std::minmax_element(members[a].begin(), members[a].end());
    const auto [lowB, highB] = std::minmax_element(members[b].begin(), members[b].end());
    if (std::max(scheduled[*highA], scheduled[*highB]) - std::min(scheduled[*lowA], scheduled[*lowB]) > kFusionDistance) {
      return false;
    }
    for (uint32_t x : members[a]) {
      for (uint32_t y : members[b]) {
        if (iteratedElements(graph, facts, order[x]) != iteratedElements(graph, facts, order[y]) ||
            paths.dependsOutsideKernel(position, order[std::min(x, y)], order[std::max(x, y)])) {
          return false;
        }
      }
    }
    return true;
  };
  // Candidate pairs, each scored by the bytes of all the buffers both read, fused best first (as
  // Inductor's get_possible_fusions orders them): a norm's column sum shares the gradient, the
  // normalized input and the residual with its own input gradient, one residual with the next norm.
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> shared;
  for (size_t begin = 0; begin < reads.size();) {
    size_t end = begin;
    while (end < reads.size() && reads[end].first == reads[begin].first) ++end;
    const uint64_t bytes = facts.bytes[reads[begin].first.buffer];
    // A kernel reading another's output where it is written joins it (vertical fusion).
    const uint32_t producer = reads[begin].first.shifted ? UINT32_MAX : position[reads[begin].first.buffer];
    for (size_t a = begin; a < end; ++a) {
      if (producer != UINT32_MAX && member[producer] && scheduled[reads[a].second] - scheduled[producer] <= kFusionDistance) {
        shared[{producer, reads[a].second}] += bytes;
      }
      for (size_t b = a + 1; b < end && b <= a + kPairAttempts; ++b) {
        if (scheduled[reads[b].second] - scheduled[reads[a].second] > kFusionDistance) break;
        shared[{reads[a].second, reads[b].second}] += bytes;
      }
    }
    begin = end;
  }
  // Inductor's score (choices.py score_fusion): two reductions or two pointwise kernels before a
  // reduction with a pointwise one, then the bytes shared. Two reductions over different
  // dimensions of one tensor (a norm's column sum and row sum: a mix-order reduction) score the
  // elements they iterate, not bytes, so a column sum sharing one full-size buffer with another
  // norm's column sum joins that one instead: on the H100, layer 3's FFN-norm weight gradient
  // went with its attention norm's, read through the residual both recompute.
  const auto reduction = [&](uint32_t i) { return !facts.inlinable[order[i]]; };
  struct Candidate {
    uint32_t a, b;
    bool sameKind;
    uint64_t score;
  };
  std::vector<Candidate> candidates;
  candidates.reserve(shared.size());
  for (const auto& [pair, bytes] : shared) {
    const auto [a, b] = pair;
    const bool mixOrder = reduction(a) && reduction(b) &&
                          graph.node(order[a]).meta.numel() != graph.node(order[b]).meta.numel();
    candidates.push_back({a, b, reduction(a) == reduction(b), mixOrder ? iteratedElements(graph, facts, order[a]) : bytes});
  }
  // Equal scores: the nearer pair first (Inductor's proximity score). On the H100 layer 1's query
  // RoPE, recomputed for its attention backward, went with layer 2's RoPE backward, the nearest
  // kernel reading the cosine table as it does, not with layer 3's.
  const auto apart = [&](const Candidate& c) { return scheduled[c.b] - scheduled[c.a]; };
  std::stable_sort(candidates.begin(), candidates.end(), [&](const Candidate& x, const Candidate& y) {
    if (x.sameKind != y.sameKind) return x.sameKind > y.sameKind;
    if (x.score != y.score) return x.score > y.score;
    return apart(x) < apart(y);
  });
  for (const Candidate& candidate : candidates) {
    const uint32_t first = root(candidate.a), second = root(candidate.b);
    if (first == second || !joinable(first, second)) continue;
    parent[first] = second;
    members[second].insert(members[second].end(), members[first].begin(), members[first].end());
    members[first].clear();
  }
  // Each op's place: its own, a kernel output's its kernel's first, and no later than the first
  // place of what reads it (walking the order backwards, readers come first). An op is the
  // kernel's own at that place when it is one of its outputs not needed earlier, or a fusible value
  // computed inside it (read by an op of its own at the same place).
  std::vector<uint32_t> first(count, UINT32_MAX), key(count, 0);
  std::vector<uint8_t> own(count, 0);
  for (uint32_t i = 0; i < count; ++i) {
    if (member[i]) first[root(i)] = std::min(first[root(i)], i);
  }
  for (uint32_t i = count; i-- > 0;) {
    key[i] = member[i] ? first[root(i)] : i;
    for (ir::NodeId user : graph.users(order[i])) {
      if (position[user] != UINT32_MAX && position[user] > i) key[i] = std::min(key[i], key[position[user]]);
    }
    if (member[i]) {
      own[i] = key[i] == first[root(i)] && members[root(i)].size() > 1;
    } else if (fusible[order[i]] && key[i] < i) {
      for (ir::NodeId user : graph.users(order[i])) {
        const uint32_t u = position[user];
        if (u != UINT32_MAX && u > i && key[u] == key[i] && own[u]) own[i] = 1;
      }
    }
  }
  // Kahn's algorithm by (place, graph order), a kernel's own ops after everything else at its
  // place: the kernel runs whole, after all that any of its outputs needs, as Inductor orders a
  // fused node (its first member's place, each dependency before it). So a norm's weight-gradient
  // sum fused with a later norm's waits for the later one's inputs, and the gradients it reads
  // through its inlined values live until then.
  std::vector<uint32_t> waiting(count, 0), stamp(count, UINT32_MAX);
  for (uint32_t i = 0; i < count; ++i) {
    for (ir::NodeId in : graph.inputs(order[i])) {
      if (position[in] == UINT32_MAX || stamp[position[in]] == i) continue;
      stamp[position[in]] = i;
      ++waiting[i];
    }
  }
  using Entry = std::tuple<uint32_t, uint8_t, uint32_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> ready;
  const auto push = [&](uint32_t i) { ready.emplace(key[i], own[i], i); };
  for (uint32_t i = 0; i < count; ++i) {
    if (waiting[i] == 0) push(i);
  }
  std::vector<ir::NodeId> result;
  result.reserve(count);
  std::fill(stamp.begin(), stamp.end(), UINT32_MAX);
  while (!ready.empty()) {
    const uint32_t i = std::get<2>(ready.top());
    ready.pop();
    result.push_back(order[i]);
    for (ir::NodeId user : graph.users(order[i])) {
      const uint32_t u = position[user];
      if (u == UINT32_MAX || stamp[u] == i) continue;
      stamp[u] = i;
      if (--waiting[u] == 0) push(u);
    }
  }
  if (result.size() != count) return {{order.begin(), order.end()}, {}};  // not a DAG in this order
  std::vector<uint32_t> ranAt(graph.size(), UINT32_MAX);
  for (uint32_t k = 0; k < count; ++k) ranAt[result[k]] = k;
  KernelOrder kernelOrder{std::move(result), {}};
  for (uint32_t i = 0; i < count; ++i) {
    if (!member[i] || root(i) != i) continue;
    std::vector<uint32_t>& outputs = kernelOrder.kernels.emplace_back();
    for (uint32_t m : members[i]) outputs.push_back(ranAt[order[m]]);
    std::sort(outputs.begin(), outputs.end());
  }
  std::sort(kernelOrder.kernels.begin(), kernelOrder.kernels.end());
  return kernelOrder;
}

}  // namespace

StepSchedule trainingSchedule(const ir::Graph& graph, const StepPartition& partition, const StorageFacts* facts) {
  StorageFacts ownFacts;
  if (facts == nullptr) facts = &(ownFacts = storageFacts(graph));
  StepSchedule schedule;
  schedule.nodes = partition.forward;
  schedule.phase.assign(partition.forward.size(), Phase::Forward);
  schedule.backwardStart = schedule.nodes.size();
  KernelOrder backward = inKernelOrder(graph, *facts, partition.backward);
  schedule.nodes.insert(schedule.nodes.end(), backward.nodes.begin(), backward.nodes.end());
  schedule.phase.resize(schedule.nodes.size(), Phase::Backward);
  for (std::vector<uint32_t>& outputs : backward.kernels) {
    for (uint32_t& step : outputs) step += static_cast<uint32_t>(schedule.backwardStart);
  }
  schedule.backwardKernels = std::move(backward.kernels);
  return schedule;
}

namespace {

// Inductor's post-grad pass turns a scatter of a scalar into fresh constants (the loss gradient's
// one-hot) into one pointwise kernel: nothing is written in place there.
bool scatterOfScalarIntoConstant(const ir::Graph& graph, ir::NodeId id, const ir::OpInfo& info, ir::NodeId into) {
  if (info.name != "aten.scatter" || !ir::canonicalOpName(graph.str(graph.node(id).target)).ends_with(".value")) {
    return false;
  }
  const ir::Node& source = graph.node(into);
  return source.kind == ir::NodeKind::CallFunction && ir::lookupOp(graph.str(source.target)).category == ir::OpCategory::Creation;
}

// Bytes an op allocates for itself while it runs, beside the values the graph names. cuDNN's
// attention backward takes a float32 buffer of B·H·T·(2·D + 1) elements of the query [B, H, T, D]
// (its second argument): 269,484,288 bytes for B=2, H=32, T=4096, D=128, measured on an H100 with
// torch 2.11 where it was the step's peak (docs/benchmarks.md, "What is on the GPU at the peak").
// Other ops: none known. Saturates at UINT64_MAX on absurd sizes.
uint64_t workspaceBytes(const ir::Graph& graph, const ir::Node& node, const ir::OpInfo& info) {
  if (info.name != "aten._scaled_dot_product_cudnn_attention_backward" || node.args.size() < 2 ||
      node.args[1].kind != ir::Arg::Kind::Node) {
    return 0;
  }
  const ir::TensorMeta& query = graph.node(node.args[1].node).meta;
  if (!query.isTensor() || query.sizes.size() != 4 || !query.allHinted()) return 0;
  uint64_t bytes = 4 * (2 * static_cast<uint64_t>(std::max<int64_t>(query.sizes[3].value, 0)) + 1);
  for (size_t d = 0; d < 3; ++d) {
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(std::max<int64_t>(query.sizes[d].value, 0)), &bytes)) return UINT64_MAX;
  }
  return bytes;
}

// Bytes per step with range additions and range maxima in O(log steps): the reuse below asks both
// for every allocation that finds a buffer in the pool, over ranges that can span a layer.
class RangeAddMax {
 public:
  explicit RangeAddMax(std::span<const int64_t> values) : size_(values.size()), max_(4 * size_ + 4), add_(4 * size_ + 4) {
    if (size_ > 0) build(1, 0, size_, values);
  }
  // Over steps [first, end).
  int64_t max(size_t first, size_t end) const { return query(1, 0, size_, first, end); }
  void add(size_t first, size_t end, int64_t bytes) { update(1, 0, size_, first, end, bytes); }

 private:
  void build(size_t at, size_t lo, size_t hi, std::span<const int64_t> values) {
    if (hi - lo == 1) {
      max_[at] = values[lo];
      return;
    }
    const size_t mid = lo + (hi - lo) / 2;
    build(2 * at, lo, mid, values);
    build(2 * at + 1, mid, hi, values);
    max_[at] = std::max(max_[2 * at], max_[2 * at + 1]);
  }
  int64_t query(size_t at, size_t lo, size_t hi, size_t first, size_t end) const {
    if (end <= lo || hi <= first) return INT64_MIN;
    if (first <= lo && hi <= end) return max_[at];
    const size_t mid = lo + (hi - lo) / 2;
    return add_[at] + std::max(query(2 * at, lo, mid, first, end), query(2 * at + 1, mid, hi, first, end));
  }
  void update(size_t at, size_t lo, size_t hi, size_t first, size_t end, int64_t bytes) {
    if (end <= lo || hi <= first) return;
    if (first <= lo && hi <= end) {
      max_[at] += bytes;
      add_[at] += bytes;
      return;
    }
    const size_t mid = lo + (hi - lo) / 2;
    update(2 * at, lo, mid, first, end, bytes);
    update(2 * at + 1, mid, hi, first, end, bytes);
    max_[at] = add_[at] + std::max(max_[2 * at], max_[2 * at + 1]);
  }

  size_t size_;
  std::vector<int64_t> max_, add_;  // per node: the maximum below it, with what was added to all of it
};

// Inductor's buffer reuse (its wrapper's memory_plan_reuse): a buffer a generated program frees
// goes into a pool by dtype and size, and the program's next allocation of that dtype and size
// takes the buffer freed last, unless holding it until then would raise the program's peak as
// Inductor estimates it (which does not see the ops' own workspaces). Until it is taken, the dead
// buffer stays allocated: on the H100 a layer's dead FFN-backward buffers were held through the
// next layer's attention backward, where the step peaked (docs/benchmarks.md). Graph inputs, the
// forward's values the backward reads, gradients and outputs are not freed by the program, so they
// are never pooled; parts of a tuple are allocated by their op, not from the pool.
void holdForReuse(const ir::Graph& graph, const StepSchedule& schedule, const StorageFacts& facts,
                  std::vector<StorageLife>& storages, size_t computedEnd, std::span<const uint8_t> handedOver,
                  uint64_t share, std::vector<ReuseCheck>& checks) {
  const size_t steps = schedule.nodes.size();
  const uint32_t backwardStart = static_cast<uint32_t>(std::min(schedule.backwardStart, steps));
  // A buffer freed at its program's last step is never taken: only earlier ones are pooled.
  const auto programLast = [&](Phase phase) {
    return static_cast<uint32_t>(phase == Phase::Forward ? std::max<uint32_t>(backwardStart, 1) - 1 : steps - 1);
  };
  std::vector<std::vector<uint32_t>> freedAfter(steps), allocatedAt(steps);
  // The bytes each program holds at each of its steps as Inductor estimates them: what it computes,
  // and the forward's values the backward reads until it last reads them. The graph's own inputs
  // (weights, the step's inputs, the tangents: primals_*, tangents_*) are not in that estimate
  // (torch/_inductor/utils.py, is_nonfreeable_buffers). Counting the weights a layer's backward
  // reads let the planner hold one more FFN-sized buffer per layer than Inductor did on the H100.
  // A difference array first.
  std::vector<int64_t> held(steps + 1, 0);
  const auto hold = [&](uint32_t first, uint32_t last, int64_t bytes) {
    if (first > last) return;
    held[first] += bytes;
    held[last + 1] -= bytes;
  };
  for (size_t s = 0; s < computedEnd; ++s) {
    const StorageLife& life = storages[s];
    const int64_t bytes = static_cast<int64_t>(std::min(life.bytes, share));
    if (graph.node(life.node).kind == ir::NodeKind::Placeholder) continue;
    if (life.phase == Phase::Backward) {
      hold(life.first, life.last, bytes);
    } else {
      hold(life.first, std::min(life.last, backwardStart - 1), bytes);
      if (life.category == MemoryCategory::Saved) hold(backwardStart, life.last, bytes);
    }
    if (life.bytes == 0) continue;
    if (!handedOver[s] && life.last < programLast(life.phase) &&
        (life.category == MemoryCategory::Temporaries || life.category == MemoryCategory::Recomputed)) {
      freedAfter[life.last].push_back(static_cast<uint32_t>(s));
    }
    if (facts.partOfTuple[life.node] == ir::kNoNode) allocatedAt[life.first].push_back(static_cast<uint32_t>(s));
  }
  for (size_t step = 1; step < steps; ++step) held[step] += held[step - 1];
  held.pop_back();
  std::array<int64_t, 2> programPeak{};
  for (size_t step = 0; step < steps; ++step) {
    int64_t& peak = programPeak[static_cast<size_t>(schedule.phase[step])];
    peak = std::max(peak, held[step]);
  }
  RangeAddMax heldTree(held);
  struct Key {
    Phase phase;
    ir::DType dtype;
    uint64_t bytes;
    auto operator<=>(const Key&) const = default;
  };
  const auto keyOf = [&](const StorageLife& life) { return Key{life.phase, graph.node(life.node).meta.dtype, life.bytes}; };
  std::map<Key, std::vector<uint32_t>> pool;
  for (uint32_t step = 0; step < steps; ++step) {
    if (step > 0) {
      for (uint32_t s : freedAfter[step - 1]) pool[keyOf(storages[s])].push_back(s);
    }
    for (uint32_t s : allocatedAt[step]) {
      const auto found = pool.find(keyOf(storages[s]));
      if (found == pool.end() || found->second.empty()) continue;
      StorageLife& dead = storages[found->second.back()];
      const int64_t bytes = static_cast<int64_t>(std::min(dead.bytes, share));
      const uint32_t from = dead.last + 1;
      if (from < step) {
        ReuseCheck check{found->second.back(), storages[s].node, step, dead.bytes, heldTree.max(from, step),
                         programPeak[static_cast<size_t>(storages[s].phase)], false};
        check.held = bytes + check.heldOverSpan <= check.programPeak;
        checks.push_back(check);
        if (!check.held) continue;
        heldTree.add(from, step, bytes);
        dead.heldFrom = from;
      }
      dead.last = step - 1;
      dead.heldFor = storages[s].node;
      found->second.pop_back();
    }
  }
}

}  // namespace

StorageFacts storageFacts(const ir::Graph& graph) {
  StorageFacts facts;
  facts.aliasOf.assign(graph.size(), ir::kNoNode);
  facts.bytes.resize(graph.size());
  facts.updatesInPlace.assign(graph.size(), 0);
  facts.fusible.assign(graph.size(), 0);
  facts.inlinable.assign(graph.size(), 0);
  facts.movesElements.assign(graph.size(), 0);
  facts.workspace.assign(graph.size(), 0);
  facts.partOfTuple.assign(graph.size(), ir::kNoNode);
  for (ir::NodeId id = 0; id < graph.size(); ++id) {
    const ir::Node& node = graph.node(id);
    facts.bytes[id] = node.meta.storageBytes();
    if (node.kind != ir::NodeKind::CallFunction && node.kind != ir::NodeKind::CallMethod) continue;
    const ir::OpInfo& info = ir::lookupOp(graph.str(node.target));
    const auto ins = graph.inputs(id);
    facts.fusible[id] = info.fusible ? 1 : 0;
    facts.movesElements[id] = info.category == ir::OpCategory::DataMovement || info.name == "aten.slice";
    facts.workspace[id] = workspaceBytes(graph, node, info);
    if (info.category == ir::OpCategory::View || info.category == ir::OpCategory::Getitem) {
      if (!ins.empty()) (graph.node(ins[0]).meta.isTensor() ? facts.aliasOf : facts.partOfTuple)[id] = ins[0];
      continue;
    }
    // Written into its first argument when that is a fresh tensor of the same size read by nothing
    // else: reinplacing needs no later reader, whatever the schedule.
    if (info.updatesFirstArgument && !ins.empty()) {
      const ir::NodeId into = ins[0];
      const ir::Node& target = graph.node(into);
      if ((target.kind == ir::NodeKind::CallFunction || target.kind == ir::NodeKind::CallMethod) &&
          facts.aliasOf[into] == ir::kNoNode && target.meta.isTensor() && graph.users(into).size() == 1 &&
          facts.bytes[into] == facts.bytes[id] && !scatterOfScalarIntoConstant(graph, id, info, into)) {
        facts.aliasOf[id] = into;
        facts.updatesInPlace[id] = 1;
        continue;
      }
    }
    // Inductor realizes every reduction; a tuple's parts come from a kernel of their own.
    facts.inlinable[id] = info.fusible && node.meta.isTensor() && info.category != ir::OpCategory::Reduction &&
                                  info.category != ir::OpCategory::Normalization
                              ? 1
                              : 0;
  }
  return facts;
}

MemoryTimeline memoryTimeline(const ir::Graph& graph, const GraphInputs& inputs, const StepSchedule& schedule,
                              const JointInfo* joint, const StepPartition* partition, const TimelineOptions& options) {
  MemoryTimeline timeline;
  const size_t n = graph.size();
  const size_t steps = schedule.nodes.size();
  if (steps == 0) return timeline;
  StorageFacts ownFacts;
  if (options.facts == nullptr) ownFacts = storageFacts(graph);
  const StorageFacts& facts = options.facts != nullptr ? *options.facts : ownFacts;
  const uint32_t lastStep = static_cast<uint32_t>(steps - 1);
  std::vector<int32_t> current(n, -1);
  auto& storages = timeline.storages;
  storages.reserve(n);

  std::vector<uint8_t> forwardOutput(n, 0), gradient(n, 0);
  if (joint != nullptr && joint->joint) {
    for (ir::NodeId id : joint->forwardOutputs) forwardOutput[id] = 1;
    for (ir::NodeId id : joint->backwardOutputs) gradient[id] = 1;
  } else {
    for (ir::NodeId id : outputItems(graph)) {
      if (id != ir::kNoNode) forwardOutput[id] = 1;
    }
  }

  for (ir::NodeId id : inputs.placeholders) {
    const ir::Node& node = graph.node(id);
    if (!node.meta.isTensor()) continue;
    StorageLife life;
    life.node = id;
    life.bytes = facts.bytes[id];
    if (inputs.isWeight(id)) {
      life.category = MemoryCategory::Weights;
      life.last = lastStep;
    } else {
      life.category = MemoryCategory::Inputs;
      if (node.role == ir::Role::Tangent) {
        life.phase = Phase::Backward;
        life.first = life.last = static_cast<uint32_t>(std::min(schedule.backwardStart, steps - 1));
      }
    }
    current[id] = static_cast<int32_t>(storages.size());
    storages.push_back(life);
  }

  // A storage is written out when something other than a fusible reader of its own phase reads it;
  // `reads` lists, per storage, the storages its execution read (CSR), for those that are not.
  std::vector<uint8_t> writtenOut(storages.size(), 1);
  std::vector<uint32_t> readsBegin(storages.size(), 0);
  std::vector<int32_t> reads;
  std::vector<uint32_t> executedAt(n, 0);  // by node: the step of its latest execution so far
  for (uint32_t step = 0; step < steps; ++step) {
    const ir::NodeId id = schedule.nodes[step];
    const Phase phase = schedule.phase[step];
    executedAt[id] = step;
    const ir::NodeId base = facts.aliasOf[id];
    const bool view = base != ir::kNoNode && !facts.updatesInPlace[id];
    const size_t readsBefore = reads.size();
    for (ir::NodeId in : graph.inputs(id)) {
      if (current[in] < 0) continue;
      StorageLife& read = storages[current[in]];
      read.last = std::max(read.last, step);
      if (view) continue;  // a view reads nothing: its readers read the storage
      reads.push_back(current[in]);
      if (!facts.fusible[id] || facts.updatesInPlace[id] || read.phase != phase) writtenOut[current[in]] = 1;
    }
    if (base != ir::kNoNode) {
      current[id] = current[base];
      if (facts.updatesInPlace[id] && current[base] >= 0) writtenOut[current[base]] = 1;
      reads.resize(readsBefore);
      continue;
    }
    const ir::Node& node = graph.node(id);
    if (!node.meta.isTensor()) {
      current[id] = -1;
      reads.resize(readsBefore);
      continue;
    }
    StorageLife life;
    life.node = id;
    life.phase = phase;
    life.bytes = facts.bytes[id];
    life.first = life.last = step;
    // A part of a tuple is allocated by the op that returns the tuple, while it runs (beside its
    // workspace), not by the getitem that names it.
    if (const ir::NodeId tuple = facts.partOfTuple[id]; tuple != ir::kNoNode && schedule.nodes[executedAt[tuple]] == tuple) {
      life.first = executedAt[tuple];
    }
    current[id] = static_cast<int32_t>(storages.size());
    storages.push_back(life);
    writtenOut.push_back(facts.inlinable[id] ? 0 : 1);
    readsBegin.push_back(static_cast<uint32_t>(readsBefore));
  }
  readsBegin.push_back(static_cast<uint32_t>(reads.size()));
  // Outputs of the step stay live to its end; a storage is a gradient or an output when any view
  // of it is returned as one.
  std::vector<uint8_t> returnsGradient(storages.size(), 0), returnsOutput(storages.size(), 0);
  for (ir::NodeId id = 0; id < n; ++id) {
    if (current[id] < 0 || !(forwardOutput[id] || gradient[id])) continue;
    storages[current[id]].last = lastStep;
    (gradient[id] ? returnsGradient : returnsOutput)[current[id]] = 1;
    writtenOut[current[id]] = 1;
  }
  // A value inside its readers' kernels allocates nothing; what it reads is read by them instead.
  // Latest first, so that a chain of such values hands its last read down to what it started from.
  for (size_t s = storages.size(); s-- > 0;) {
    if (writtenOut[s]) continue;
    for (uint32_t r = readsBegin[s]; r < readsBegin[s + 1]; ++r) {
      storages[reads[r]].last = std::max(storages[reads[r]].last, storages[s].last);
    }
  }
  std::vector<int32_t> kept(storages.size(), -1);  // by storage: its index once inlined values are gone
  {
    size_t next = 0;
    for (size_t s = 0; s < storages.size(); ++s) {
      if (!writtenOut[s]) continue;
      kept[s] = static_cast<int32_t>(next);
      returnsGradient[next] = returnsGradient[s];
      returnsOutput[next] = returnsOutput[s];
      storages[next++] = storages[s];
    }
    storages.resize(next);
    returnsGradient.resize(next);
    returnsOutput.resize(next);
    for (int32_t& c : current) {
      if (c >= 0) c = kept[c];
    }
  }

  for (size_t s = 0; s < storages.size(); ++s) {
    StorageLife& life = storages[s];
    if (life.category == MemoryCategory::Weights || graph.node(life.node).kind == ir::NodeKind::Placeholder) continue;
    if (returnsGradient[s]) {
      life.category = MemoryCategory::Gradients;
    } else if (returnsOutput[s]) {
      life.category = MemoryCategory::Outputs;
    } else if (life.phase == Phase::Backward) {
      life.category = partition != nullptr && partition->inForward[life.node] ? MemoryCategory::Recomputed
                                                                              : MemoryCategory::Temporaries;
    } else if (life.last >= schedule.backwardStart) {
      life.category = MemoryCategory::Saved;
    } else {
      life.category = MemoryCategory::Temporaries;
    }
  }

  // What ops take for themselves while they run: live for their execution only.
  const size_t workspacesBegin = storages.size();
  for (uint32_t step = 0; step < steps; ++step) {
    const uint64_t bytes = facts.workspace[schedule.nodes[step]];
    if (bytes == 0) continue;
    StorageLife life;
    life.node = schedule.nodes[step];
    life.phase = schedule.phase[step];
    life.category = MemoryCategory::Temporaries;
    life.bytes = bytes;
    life.first = life.last = step;
    storages.push_back(life);
  }

  // Inductor writes a generated kernel's output into an input buffer of its size that dies in that
  // kernel (in-place buffer reuse): from then on the two are one allocation. What an inlined value
  // read, its kernel reads. Graph inputs and the forward's values the backward reads are not the
  // compiled program's to reuse.
  // By written-out storage (original index): the written-out storages its kernel reads, inlined
  // values looked through, each once, latest read first (CSR over `kept` indices).
  std::vector<uint32_t> kernelReadsBegin(kept.size() + 1, 0);
  std::vector<int32_t> kernelReads;
  {
    std::vector<int32_t> pending;
    std::vector<size_t> seenBy(storages.size(), SIZE_MAX);
    for (size_t s = 0; s < kept.size(); ++s) {
      kernelReadsBegin[s] = static_cast<uint32_t>(kernelReads.size());
      if (kept[s] < 0) continue;
      pending.assign(reads.begin() + readsBegin[s], reads.begin() + readsBegin[s + 1]);
      while (!pending.empty()) {
        const int32_t r = pending.back();
        pending.pop_back();
        if (kept[r] < 0) {
          pending.insert(pending.end(), reads.begin() + readsBegin[r], reads.begin() + readsBegin[r + 1]);
        } else if (seenBy[static_cast<size_t>(kept[r])] != s) {
          seenBy[static_cast<size_t>(kept[r])] = s;
          kernelReads.push_back(kept[r]);
        }
      }
    }
    kernelReadsBegin[kept.size()] = static_cast<uint32_t>(kernelReads.size());
  }
  // By kept storage: the fusible storages whose kernels read it (CSR over kept indices).
  std::vector<uint32_t> readersBegin(storages.size() + 1, 0);
  std::vector<uint32_t> readers;
  {
    const auto fusibleOutput = [&](size_t s) {
      return kept[s] >= 0 && facts.fusible[storages[kept[s]].node] &&
             graph.node(storages[kept[s]].node).kind != ir::NodeKind::Placeholder;
    };
    for (size_t s = 0; s < kept.size(); ++s) {
      if (!fusibleOutput(s)) continue;
      for (uint32_t k = kernelReadsBegin[s]; k < kernelReadsBegin[s + 1]; ++k) ++readersBegin[kernelReads[k] + 1];
    }
    for (size_t r = 0; r < storages.size(); ++r) readersBegin[r + 1] += readersBegin[r];
    readers.resize(readersBegin.back());
    std::vector<uint32_t> fill(readersBegin.begin(), readersBegin.end() - 1);
    for (size_t s = 0; s < kept.size(); ++s) {
      if (!fusibleOutput(s)) continue;
      for (uint32_t k = kernelReadsBegin[s]; k < kernelReadsBegin[s + 1]; ++k) {
        readers[fill[kernelReads[k]]++] = static_cast<uint32_t>(kept[s]);
      }
    }
  }
  // Inductor lets an output take an input over only when the output's op is the input's one reader
  // not yet run (its scheduler's decide_inplace_update), and ops fused into one kernel all run
  // together: an input that two outputs of one kernel read is taken over by neither. A Llama FFN
  // backward's kernel reads the gate, up and activation-gradient buffers, each through two of its
  // three outputs, and writes all three into fresh buffers: six FFN-sized buffers at once
  // (docs/benchmarks.md). Inductor fuses pointwise ops of one program that read the same buffer and
  // iterate the same elements, unless one depends on the other through an op outside the kernel
  // (a matmul): then they run as two kernels.
  // By phase and node: the step of its execution in that phase (a recomputed node runs in both).
  std::array<std::vector<uint32_t>, 2> stepIn{std::vector<uint32_t>(n, UINT32_MAX), std::vector<uint32_t>(n, UINT32_MAX)};
  for (uint32_t step = 0; step < steps; ++step) stepIn[static_cast<size_t>(schedule.phase[step])][schedule.nodes[step]] = step;
  KernelPaths paths(graph, facts.fusible);
  // Whether `other`, an earlier reader of the written-out storage `in`, runs in `out`'s kernel. An
  // input with many readers (a broadcast scalar) groups nothing: Inductor fuses by shared buffers
  // of the same iteration space, and the check stays linear.
  constexpr uint32_t kReadersBound = 64;
  const auto sameKernel = [&](size_t in, const StorageLife& other, const StorageLife& out) {
    return other.node != out.node && other.phase == out.phase && other.first < out.first &&
           readersBegin[in + 1] - readersBegin[in] <= kReadersBound &&
           iteratedElements(graph, facts, other.node) == iteratedElements(graph, facts, out.node) &&
           !paths.dependsOutsideKernel(stepIn[static_cast<size_t>(out.phase)], other.node, out.node);
  };
  const auto readInSameKernel = [&](size_t in, const StorageLife& out) {
    for (uint32_t k = readersBegin[in]; k < readersBegin[in + 1]; ++k) {
      if (sameKernel(in, storages[readers[k]], out)) return true;
    }
    return false;
  };
  std::vector<uint8_t> handedOver(storages.size(), 0);  // its buffer became a later kernel's output
  for (size_t s = 0; s < kept.size(); ++s) {
    if (kept[s] < 0) continue;
    const StorageLife& out = storages[kept[s]];
    if (!facts.fusible[out.node] || graph.node(out.node).kind == ir::NodeKind::Placeholder) continue;
    for (uint32_t k = kernelReadsBegin[s]; k < kernelReadsBegin[s + 1]; ++k) {
      const auto r = static_cast<size_t>(kernelReads[k]);
      StorageLife& in = storages[r];
      if (in.last == out.first && in.first < out.first && in.bytes == out.bytes && in.phase == out.phase &&
          graph.node(in.node).kind != ir::NodeKind::Placeholder && in.category != MemoryCategory::Gradients &&
          in.category != MemoryCategory::Outputs && !readInSameKernel(r, out)) {
        in.last = out.first - 1;
        handedOver[r] = 1;
        break;
      }
    }
  }

  // Live bytes per step by difference arrays. A storage counts at most its share of INT64_MAX, so
  // that no sum of them leaves int64 whatever sizes a graph claims (graphs the planner accepts stay
  // far below the share).
  const uint64_t share = static_cast<uint64_t>(INT64_MAX) / (storages.size() + 1);
  auto counted = [&](const StorageLife& life) { return static_cast<int64_t>(std::min(life.bytes, share)); };
  holdForReuse(graph, schedule, facts, storages, workspacesBegin, handedOver, share, timeline.reuseChecks);
  // The part of each off-GPU interval inside its storage's life, by storage.
  std::vector<StorageAway>& away = timeline.away;
  for (const OffGpuInterval& interval : options.offGpu) {
    if (interval.node >= n || current[interval.node] < 0) continue;
    const size_t s = static_cast<size_t>(current[interval.node]);
    const uint32_t first = std::max(interval.offStep, storages[s].first);
    const uint32_t last = std::min<uint32_t>(interval.onStep == 0 ? 0 : interval.onStep - 1, storages[s].last);
    if (interval.onStep > interval.offStep && first <= last) away.push_back({static_cast<uint32_t>(s), first, last});
  }
  if (!options.perStep) {
    std::vector<int64_t> delta(steps + 1, 0);
    for (const StorageLife& life : storages) {
      delta[life.first] += counted(life);
      delta[life.last + 1] -= counted(life);
    }
    for (const StorageAway& a : away) {
      delta[a.first] -= counted(storages[a.storage]);
      delta[a.last + 1] += counted(storages[a.storage]);
    }
    int64_t running = 0;
    for (size_t step = 0; step < steps; ++step) {
      running += delta[step];
      if (static_cast<uint64_t>(running) > timeline.peakBytes) {
        timeline.peakBytes = static_cast<uint64_t>(running);
        timeline.peakStep = static_cast<uint32_t>(step);
      }
    }
    for (size_t s = 0; s < storages.size(); ++s) {
      if (timeline.countedAt(s, timeline.peakStep)) {
        timeline.atPeak[static_cast<size_t>(storages[s].category)] += static_cast<uint64_t>(counted(storages[s]));
      }
    }
    return timeline;
  }
  std::vector<std::array<int64_t, kMemoryCategoryCount>> delta(steps + 1);
  for (auto& d : delta) d.fill(0);
  for (const StorageLife& life : storages) {
    const size_t c = static_cast<size_t>(life.category);
    delta[life.first][c] += counted(life);
    delta[life.last + 1][c] -= counted(life);
  }
  for (const StorageAway& a : away) {
    const size_t c = static_cast<size_t>(storages[a.storage].category);
    delta[a.first][c] -= counted(storages[a.storage]);
    delta[a.last + 1][c] += counted(storages[a.storage]);
  }
  timeline.live.resize(steps);
  timeline.total.resize(steps);
  std::array<int64_t, kMemoryCategoryCount> running{};
  for (size_t step = 0; step < steps; ++step) {
    uint64_t total = 0;
    for (size_t c = 0; c < kMemoryCategoryCount; ++c) {
      running[c] += delta[step][c];
      timeline.live[step][c] = static_cast<uint64_t>(running[c]);
      total += timeline.live[step][c];
    }
    timeline.total[step] = total;
    if (total > timeline.peakBytes) {
      timeline.peakBytes = total;
      timeline.peakStep = static_cast<uint32_t>(step);
    }
  }
  timeline.atPeak = timeline.live[timeline.peakStep];
  return timeline;
}

std::vector<size_t> MemoryTimeline::valuesAt(uint32_t step) const {
  std::vector<size_t> values;
  for (size_t s = 0; s < storages.size(); ++s) {
    if (storages[s].category != MemoryCategory::Weights && storages[s].bytes > 0 && countedAt(s, step)) values.push_back(s);
  }
  return values;
}

bool MemoryTimeline::countedAt(size_t storage, uint32_t step) const {
  if (storage >= storages.size()) return false;
  const StorageLife& life = storages[storage];
  return life.first <= step && step <= life.last &&
         std::none_of(away.begin(), away.end(), [&](const StorageAway& a) {
           return a.storage == storage && a.first <= step && step <= a.last;
         });
}

}  // namespace lathe::analysis
