// The torch.export .pt2 loader on the real samples (checked against the JSON read here with
// nlohmann directly) and on archives built here to be damaged on purpose.
#include "io/pt2/pt2.h"

#include <gtest/gtest.h>
#include <zip.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "io/pt2/detail/pt2_sympy.h"
#include "ir/sym_expr.h"
#include "resident_size.h"

using namespace lathe;
using namespace lathe::io;
using Json = nlohmann::json;

namespace {

const std::filesystem::path kSamples = LATHE_SAMPLES_DIR;
// Made for this project with torch 2.11 (torch.export.pt2_archive._package.package_pt2): model
// "model" is exported with dynamic dims s77/s17 and uses cat, floor division, topk, split, .item(),
// torch.cond, max() and %, a tensor constant and a non-persistent buffer; model "mlp" is a plain
// Linear + ReLU. The file doubles as a seed of fuzz_pt2.
const std::filesystem::path kDynamic =
    std::filesystem::path(LATHE_SOURCE_DIR) / "tests/fuzz/seeds/fuzz_pt2/dynamic_shapes.pt2";

std::string readBytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// One member of a zip read through libzip directly, independent of the loader.
std::string zipMember(const std::filesystem::path& path, const std::string& name) {
  int err = 0;
  zip_t* z = zip_open(path.string().c_str(), ZIP_RDONLY, &err);
  if (!z) return {};
  std::string out;
  zip_stat_t st;
  if (zip_stat(z, name.c_str(), 0, &st) == 0) {
    zip_file_t* f = zip_fopen(z, name.c_str(), 0);
    out.resize(st.size);
    const zip_int64_t n = zip_fread(f, out.data(), st.size);
    out.resize(n < 0 ? 0 : static_cast<size_t>(n));
    zip_fclose(f);
  }
  zip_discard(z);
  return out;
}

struct Member {
  std::string name;
  std::string data;
  bool deflate = false;
};

// A zip built in memory with libzip.
std::string buildZip(const std::vector<Member>& members) {
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* buffer = zip_source_buffer_create(nullptr, 0, 0, &error);
  zip_source_keep(buffer);
  zip_t* z = zip_open_from_source(buffer, ZIP_TRUNCATE, &error);
  for (const auto& m : members) {
    zip_source_t* data = zip_source_buffer(z, m.data.data(), m.data.size(), 0);
    const zip_int64_t index = zip_file_add(z, m.name.c_str(), data, ZIP_FL_ENC_UTF_8);
    zip_set_file_compression(z, static_cast<zip_uint64_t>(index), m.deflate ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0);
  }
  zip_close(z);
  zip_stat_t st;
  zip_source_open(buffer);
  zip_source_stat(buffer, &st);
  std::string out(st.size, '\0');
  zip_source_read(buffer, out.data(), st.size);
  zip_source_close(buffer);
  zip_source_free(buffer);
  zip_error_fini(&error);
  return out;
}

// Rewrites the uncompressed size that both the local and the central header declare for `name`.
void declareSize(std::string& zip, const std::string& name, uint32_t size) {
  auto put32 = [&](size_t at) {
    for (int i = 0; i < 4; ++i) zip[at + i] = static_cast<char>((size >> (8 * i)) & 0xff);
  };
  auto get16 = [&](size_t at) {
    return static_cast<size_t>(static_cast<unsigned char>(zip[at]) | (static_cast<unsigned char>(zip[at + 1]) << 8));
  };
  int patched = 0;
  for (size_t p = 0; p + 46 <= zip.size(); ++p) {
    if (zip.compare(p, 4, "PK\3\4") == 0 && zip.compare(p + 30, get16(p + 26), name) == 0) {
      put32(p + 22);
      ++patched;
    } else if (zip.compare(p, 4, "PK\1\2") == 0 && zip.compare(p + 46, get16(p + 28), name) == 0) {
      put32(p + 24);
      ++patched;
    }
  }
  ASSERT_EQ(patched, 2) << name;
}

std::string describe(const Diagnostics& d) {
  std::string out;
  for (const auto& item : d.items()) out += item.code + " " + item.where.str() + ": " + item.message + "\n";
  return out;
}

const Pt2Tensor* findTensor(const std::vector<Pt2Tensor>& tensors, const std::string& fqn) {
  for (const auto& t : tensors)
    if (t.fqn == fqn) return &t;
  return nullptr;
}

std::string specKey(const Json& spec) {
  return spec.begin().key();
}

std::string specArg(const Json& spec) {
  const Json& body = spec.begin().value();
  const Json& arg = body.at("arg");
  if (arg.contains("name")) return arg.at("name").get<std::string>();
  return arg.begin().value().at("name").get<std::string>();
}

ir::Role expectedRole(const std::string& kind) {
  if (kind == "parameter") return ir::Role::Parameter;
  if (kind == "buffer" || kind == "tensor_constant") return ir::Role::Buffer;
  if (kind == "user_input") return ir::Role::UserInput;
  return ir::Role::Unknown;
}

// --- the three PT2 archives made for the project ---

class Pt2Sample : public ::testing::TestWithParam<std::string> {};

TEST_P(Pt2Sample, GraphSignatureAndWeightsMatchTheJson) {
  const std::string stem = GetParam();
  const auto path = kSamples / "pt2" / (stem + ".pt2");
  const Pt2Archive a = loadPt2(path);
  EXPECT_EQ(a.diagnostics.count(Severity::Warning), 0u) << describe(a.diagnostics);
  EXPECT_EQ(a.layout, Pt2Layout::Archive);
  EXPECT_EQ(a.root, stem + "/");
  EXPECT_EQ(a.archiveFormat, "pt2");
  EXPECT_EQ(a.archiveVersion, 0);
  EXPECT_EQ(a.version, 6);
  EXPECT_EQ(a.byteorder, "little");
  ASSERT_EQ(a.models.size(), 1u);
  const Pt2Model& m = a.models[0];
  EXPECT_EQ(m.name, "model");
  EXPECT_EQ(m.schemaVersion, "8.17");
  EXPECT_EQ(m.torchVersion, "2.11.0+cu130");
  ASSERT_TRUE(m.graph);
  const ir::Graph& g = *m.graph;
  ASSERT_TRUE(g.finalized());

  const Json doc = Json::parse(zipMember(path, stem + "/models/model.json"));
  const Json& jg = doc.at("graph_module").at("graph");
  const Json& sig = doc.at("graph_module").at("signature");
  const ir::GraphCounts counts = ir::countGraph(g);
  EXPECT_EQ(counts.calls, jg.at("nodes").size());
  EXPECT_EQ(m.serializedNodes, jg.at("nodes").size());
  EXPECT_EQ(counts.placeholders, jg.at("inputs").size());
  EXPECT_EQ(m.moduleFqns.size(), doc.at("graph_module").at("module_call_graph").size());

  // Every node that defines one tensor is the FX node of that name, with the serialized target.
  size_t multiOutput = 0;
  for (const auto& n : jg.at("nodes")) {
    const Json& outs = n.at("outputs");
    const std::string target = n.at("target").get<std::string>();
    if (outs.size() == 1 && outs[0].contains("as_tensor")) {
      const ir::NodeId id = g.find(outs[0]["as_tensor"]["name"].get<std::string>());
      ASSERT_NE(id, ir::kNoNode) << n.dump();
      EXPECT_EQ(g.target(id), target);
      EXPECT_FALSE(g.node(id).synthetic);
      const Json& tm = jg.at("tensor_values").at(outs[0]["as_tensor"]["name"].get<std::string>());
      EXPECT_EQ(g.node(id).meta.sizes.size(), tm.at("sizes").size());
      continue;
    }
    // Multi-output node: a getitem per element, named after it, reading the node.
    ++multiOutput;
    const ir::NodeId call = g.find(n.at("name").get<std::string>());
    ASSERT_NE(call, ir::kNoNode);
    EXPECT_EQ(g.target(call), target);
    std::vector<std::string> names;
    if (outs.size() == 1 && outs[0].contains("as_tensors")) {
      for (const auto& t : outs[0]["as_tensors"]) names.push_back(t.at("name").get<std::string>());
    } else {
      for (const auto& o : outs) names.push_back(o.at("as_tensor").at("name").get<std::string>());
    }
    for (size_t i = 0; i < names.size(); ++i) {
      const ir::NodeId item = g.find(names[i]);
      ASSERT_NE(item, ir::kNoNode) << names[i];
      EXPECT_TRUE(g.node(item).synthetic);
      EXPECT_EQ(g.target(item), "operator.getitem");
      ASSERT_EQ(g.node(item).args.size(), 2u);
      EXPECT_EQ(g.node(item).args[0].node, call);
      EXPECT_EQ(g.node(item).args[1].i, static_cast<int64_t>(i));
      EXPECT_EQ(g.node(item).meta.kind, ir::ValueKind::Tensor);
    }
  }
  EXPECT_GT(multiOutput, 0u);

  // Provenance: the innermost stack frame and the innermost module of nn_module_stack.
  size_t withTrace = 0;
  for (const auto& n : jg.at("nodes")) {
    if (!n.at("outputs").empty() && n.at("outputs")[0].contains("as_tensor")) {
      const ir::Node& node = g.node(g.find(n["outputs"][0]["as_tensor"]["name"].get<std::string>()));
      const Json& md = n.at("metadata");
      if (md.contains("stack_trace")) {
        ++withTrace;
        const std::string trace = md["stack_trace"].get<std::string>();
        const std::string frame = "File \"" + std::string(g.str(node.provenance.file)) + "\", line " +
                                  std::to_string(node.provenance.line) + ", in " +
                                  std::string(g.str(node.provenance.function));
        const size_t at = trace.rfind(frame);
        ASSERT_NE(at, std::string::npos) << trace;
        EXPECT_EQ(trace.find("File \"", at + 1), std::string::npos) << "not the innermost frame";
        EXPECT_NE(trace.find(std::string(g.str(node.provenance.code)), at), std::string::npos);
      }
      if (md.contains("nn_module_stack")) {
        std::string stack = md["nn_module_stack"].get<std::string>();
        stack = stack.substr(stack.rfind(';') + 1);
        const size_t c1 = stack.find(','), c2 = stack.find(',', c1 + 1);
        EXPECT_EQ(g.str(node.provenance.modulePath), stack.substr(c1 + 1, c2 - c1 - 1));
      }
    }
  }
  EXPECT_GT(withTrace, 10u);

  // Signature: placeholders in graph.inputs order with the role of their spec.
  const Json& specs = sig.at("input_specs");
  ASSERT_EQ(m.inputs.size(), specs.size());
  size_t p = 0;
  for (ir::NodeId id = 0; id < g.size(); ++id) {
    if (g.node(id).kind != ir::NodeKind::Placeholder) continue;
    ASSERT_LT(p, specs.size());
    EXPECT_EQ(g.name(id), specArg(specs[p]));
    EXPECT_EQ(m.inputs[p].arg, specArg(specs[p]));
    EXPECT_EQ(pt2InputKindName(m.inputs[p].kind), specKey(specs[p]));
    EXPECT_EQ(g.node(id).role, expectedRole(specKey(specs[p]))) << g.name(id);
    ++p;
  }
  EXPECT_EQ(p, specs.size());
  ASSERT_EQ(m.outputs.size(), sig.at("output_specs").size());
  EXPECT_EQ(m.outputs[0].kind, Pt2OutputKind::UserOutput);

  // Weights: every parameter is stored, with the shape and dtype of its placeholder and tensor_values.
  size_t parameters = 0;
  for (const auto& spec : m.inputs) {
    if (spec.kind != Pt2InputKind::Parameter) continue;
    ++parameters;
    const Pt2Tensor* w = findTensor(m.weights, spec.target);
    ASSERT_NE(w, nullptr) << spec.target;
    EXPECT_EQ(w->kind, Pt2InputKind::Parameter);
    const ir::Node& ph = g.node(g.find(spec.arg));
    EXPECT_EQ(g.str(ph.provenance.modulePath), spec.target.substr(0, spec.target.rfind('.')));
    EXPECT_EQ(w->dtype, ph.meta.dtype);
    ASSERT_EQ(w->sizes.size(), ph.meta.sizes.size());
    for (size_t i = 0; i < w->sizes.size(); ++i) EXPECT_EQ(w->sizes[i], ph.meta.sizes[i].value);
    const Json& tm = jg.at("tensor_values").at(spec.arg);
    EXPECT_EQ(w->dtype, ir::dtypeFromScalarType(tm.at("dtype").get<int64_t>()));
    for (size_t i = 0; i < w->sizes.size(); ++i) EXPECT_EQ(w->sizes[i], tm.at("sizes")[i].at("as_int").get<int64_t>());
    EXPECT_TRUE(w->recordPresent);
    EXPECT_TRUE(w->record.starts_with(stem + "/data/weights/weight_")) << w->record;
    EXPECT_GE(w->recordBytes, w->bytesNeeded());
    EXPECT_GT(w->bytesNeeded(), 0u);
  }
  EXPECT_GT(parameters, 10u);
  EXPECT_EQ(m.weights.size(), parameters);  // no persistent buffers in these models
  for (const auto& c : m.constants) {
    EXPECT_EQ(c.kind, Pt2InputKind::Buffer) << c.fqn;  // non-persistent rotary inv_freq
    EXPECT_TRUE(c.recordPresent);
  }
}

INSTANTIATE_TEST_SUITE_P(Samples, Pt2Sample, ::testing::Values("gpt2_tiny", "llama3_8b_2l_tiny", "mixtral_2l_tiny"));

TEST(Pt2, HigherOrderOpBodyIsASubgraphReadThroughGetAttr) {
  const auto path = kSamples / "pt2/llama3_8b_2l_tiny.pt2";
  const Pt2Archive a = loadPt2(path);
  const ir::Graph& g = *a.models.at(0).graph;
  const Json doc = Json::parse(zipMember(path, "llama3_8b_2l_tiny/models/model.json"));
  const Json* wrap = nullptr;
  for (const auto& n : doc["graph_module"]["graph"]["nodes"])
    if (n["target"] == "torch.ops.higher_order.wrap_with_set_grad_enabled") wrap = &n;
  ASSERT_NE(wrap, nullptr);
  const Json& body = (*wrap)["inputs"][1]["arg"]["as_graph"];
  ASSERT_EQ(g.subgraphs().size(), 1u);
  EXPECT_EQ(g.subgraphs()[0].first, body["name"].get<std::string>());
  const ir::Graph& sub = *g.subgraphs()[0].second;
  EXPECT_EQ(ir::countGraph(sub).calls, body["graph"]["nodes"].size());
  EXPECT_EQ(ir::countGraph(sub).placeholders, body["graph"]["inputs"].size());
  const ir::NodeId call = g.find("wrap_with_set_grad_enabled");
  ASSERT_NE(call, ir::kNoNode);
  const ir::NodeId attr = g.node(call).args.at(1).node;
  ASSERT_NE(attr, ir::kNoNode);
  EXPECT_EQ(g.node(attr).kind, ir::NodeKind::GetAttr);
  EXPECT_TRUE(g.node(attr).synthetic);
  EXPECT_EQ(g.target(attr), "submod_1");
  EXPECT_EQ(g.node(call).args.at(0).kind, ir::Arg::Kind::Bool);
  // Its two results are read by getitems named after the serialized outputs.
  EXPECT_EQ(g.node(g.find("to_4")).args.at(0).node, call);
  EXPECT_EQ(g.node(g.find("to_5")).args.at(1).i, 1);
}

TEST(Pt2, ArgumentsKeepTheirKindsAndKeywords) {
  const Pt2Archive a = loadPt2(kSamples / "pt2/gpt2_tiny.pt2");
  const ir::Graph& g = *a.models.at(0).graph;
  const ir::Node& arange = g.node(g.find("arange"));
  ASSERT_EQ(arange.args.size(), 1u);
  EXPECT_EQ(arange.args[0].kind, ir::Arg::Kind::Int);
  EXPECT_EQ(arange.args[0].i, 32);
  std::map<std::string, const ir::Arg*> kw;
  for (const auto& [k, v] : arange.kwargs) kw[std::string(g.str(k))] = &v;
  ASSERT_TRUE(kw.count("device") && kw.count("pin_memory"));
  EXPECT_EQ(kw["device"]->kind, ir::Arg::Kind::Device);
  EXPECT_EQ(g.str(kw["device"]->s), "device(type='cpu')");
  EXPECT_EQ(kw["pin_memory"]->kind, ir::Arg::Kind::Bool);
  const ir::Node& view = g.node(g.find("view"));
  EXPECT_EQ(view.args.at(0).kind, ir::Arg::Kind::Node);
  EXPECT_EQ(g.name(view.args[0].node), "input_ids");
  ASSERT_EQ(view.args.at(1).kind, ir::Arg::Kind::List);
  EXPECT_EQ(view.args[1].items.at(0).i, -1);
  const ir::Node& out = g.node(g.outputNode());
  ASSERT_EQ(out.args.size(), 1u);
  EXPECT_EQ(out.args[0].kind, ir::Arg::Kind::Tuple);
  EXPECT_EQ(g.name(out.args[0].items.at(0).node), "linear");
}

// --- the legacy flat layout (third-party sample, torch ~2.2) ---

TEST(Pt2, LegacyFlatArchiveLoadsItsGraph) {
  const auto path = kSamples / "pt2/hades-pid/exported_program.pt2";
  const Pt2Archive a = loadPt2(path);
  EXPECT_EQ(a.diagnostics.count(Severity::Warning), 0u) << describe(a.diagnostics);
  EXPECT_EQ(a.layout, Pt2Layout::Legacy);
  EXPECT_EQ(a.root, "");
  EXPECT_EQ(a.version, 2);
  ASSERT_EQ(a.models.size(), 1u);
  const Pt2Model& m = a.models[0];
  EXPECT_EQ(m.schemaVersion, "2");
  EXPECT_EQ(m.verifiers, std::vector<std::string>{"ATEN"});
  ASSERT_TRUE(m.graph);
  const ir::Graph& g = *m.graph;
  const Json doc = Json::parse(zipMember(path, "serialized_exported_program.json"));
  EXPECT_EQ(ir::countGraph(g).calls, doc["graph_module"]["graph"]["nodes"].size());
  EXPECT_EQ(ir::countGraph(g).placeholders, doc["graph_module"]["graph"]["inputs"].size());

  // Nodes carry no names in this schema: multi-output ones are named like FX does.
  const ir::NodeId bn = g.find("_native_batch_norm_legit_functional");
  ASSERT_NE(bn, ir::kNoNode);
  EXPECT_EQ(g.target(bn), "torch.ops.aten._native_batch_norm_legit_functional.default");
  EXPECT_NE(g.find("_native_batch_norm_legit_functional_1"), ir::kNoNode);
  EXPECT_EQ(g.node(g.find("getitem_3")).args.at(0).node, bn);
  EXPECT_EQ(g.node(g.find("getitem_3")).args.at(1).i, 3);
  EXPECT_EQ(g.str(g.node(bn).provenance.modulePath), "class_classifier.1");
  EXPECT_EQ(g.node(bn).provenance.line, 99u);
  EXPECT_EQ(g.str(g.node(bn).provenance.code), "class_output = self.class_classifier(feature)");

  size_t params = 0, buffers = 0;
  for (const auto& s : m.inputs) {
    params += s.kind == Pt2InputKind::Parameter;
    buffers += s.kind == Pt2InputKind::Buffer;
  }
  EXPECT_GT(params, 0u);
  EXPECT_GT(buffers, 0u);
  EXPECT_EQ(m.inputs.back().kind, Pt2InputKind::UserInput);
  EXPECT_EQ(g.node(g.find(m.inputs.back().arg)).role, ir::Role::UserInput);
  EXPECT_EQ(m.outputs.front().kind, Pt2OutputKind::BufferMutation);
  EXPECT_EQ(m.outputs.front().target, "class_classifier.1.running_mean");
  // Weights: described from the signature and the placeholders; the records are listed only.
  EXPECT_EQ(m.weights.size(), params + buffers);
  for (const auto& w : m.weights) {
    const auto spec = std::find_if(m.inputs.begin(), m.inputs.end(), [&](const auto& s) { return s.target == w.fqn; });
    ASSERT_NE(spec, m.inputs.end());
    const ir::TensorMeta& meta = g.node(g.find(spec->arg)).meta;
    EXPECT_EQ(w.dtype, meta.dtype);
    EXPECT_EQ(w.sizes.size(), meta.sizes.size());
    EXPECT_FALSE(w.recordPresent);
  }
  bool pickle = false, storage = false;
  for (const auto& r : a.stateDictRecords) {
    pickle |= r.name == "archive/data.pkl";
    storage |= r.name == "archive/data/0";
  }
  EXPECT_TRUE(pickle && storage);
}

// --- dynamic shapes, two models, HOPs (made with torch 2.11 for this project) ---

TEST(Pt2, SymbolicSizesAreSympyStrWithHints) {
  const Pt2Archive a = loadPt2(kDynamic);
  EXPECT_EQ(a.diagnostics.count(Severity::Warning), 0u) << describe(a.diagnostics);
  ASSERT_EQ(a.models.size(), 2u);
  EXPECT_EQ(a.models[0].name, "model");
  EXPECT_EQ(a.models[1].name, "mlp");
  const Pt2Model& m = a.models[0];
  const ir::Graph& g = *m.graph;

  const ir::TensorMeta& cat = g.node(g.find("cat")).meta;
  ASSERT_EQ(cat.sizes.size(), 2u);
  EXPECT_EQ(g.str(cat.sizes[0].expr), "s17 + s77");
  EXPECT_TRUE(cat.sizes[0].hasHint);
  EXPECT_EQ(cat.sizes[0].value, 10);
  EXPECT_FALSE(cat.sizes[1].symbolic());
  EXPECT_EQ(g.str(g.node(g.find("slice_1")).meta.sizes[0].expr), "((s17 + s77)//2)");
  EXPECT_EQ(g.str(g.node(g.find("slice_3")).meta.sizes[0].expr), "(Mod(s17 + s77, 5)) + 1");
  EXPECT_EQ(g.str(g.node(g.find("slice_2")).meta.sizes[0].expr), "Max(1, s17 + s77 - 3)");
  const ir::Node& ones = g.node(g.find("ones"));
  EXPECT_EQ(g.str(ones.meta.sizes[0].expr), "u0");
  EXPECT_FALSE(ones.meta.sizes[0].hasHint);  // unbacked: no hint
  const ir::Node& floordiv = g.node(g.find("floordiv"));
  EXPECT_EQ(floordiv.meta.kind, ir::ValueKind::SymInt);
  EXPECT_EQ(g.str(floordiv.meta.symExpr), "((s17 + s77)//2)");
  EXPECT_EQ(g.target(g.find("floordiv")), "_operator.floordiv");
  EXPECT_EQ(g.str(g.node(g.find("ge_1")).meta.symExpr), "u0 >= 1");
  EXPECT_EQ(g.node(g.find("ge_1")).meta.kind, ir::ValueKind::SymBool);

  // Every hinted symbolic size evaluates to its hint with the example sizes (s77 = 6, s17 = 4).
  const ir::SymbolLookup lookup = [](std::string_view s) -> std::optional<int64_t> {
    if (s == "s77") return 6;
    if (s == "s17") return 4;
    return std::nullopt;
  };
  size_t checked = 0;
  for (const auto& n : g.nodes()) {
    for (const auto& d : n.meta.sizes) {
      if (!d.symbolic() || !d.hasHint) continue;
      EXPECT_EQ(ir::evalSymExpr(g.str(d.expr), lookup), d.value) << g.str(d.expr);
      ++checked;
    }
  }
  EXPECT_GT(checked, 15u);

  std::map<std::string, Pt2RangeConstraint> ranges;
  for (const auto& r : m.rangeConstraints) ranges[r.symbol] = r;
  EXPECT_EQ(ranges.at("s77").min, 2);
  EXPECT_EQ(ranges.at("s77").max, 64);
  EXPECT_EQ(ranges.at("u0").min, 1);
  EXPECT_FALSE(ranges.at("u0").max.has_value());

  // torch.cond: both branches are subgraphs; the node with no output is still a call.
  ASSERT_EQ(g.subgraphs().size(), 2u);
  EXPECT_EQ(g.subgraphs()[0].first, "true_graph_0");
  EXPECT_EQ(g.subgraphs()[1].first, "false_graph_0");
  EXPECT_EQ(g.target(g.find("getitem_5")), "operator.getitem");
  EXPECT_EQ(g.node(g.find("_assert_scalar_default")).meta.kind, ir::ValueKind::None);
  const ir::Node& out = g.node(g.outputNode());
  ASSERT_EQ(out.args.at(0).items.size(), m.outputs.size());
  EXPECT_EQ(g.node(out.args[0].items.back().node).meta.kind, ir::ValueKind::SymInt);  // x.shape[0] * y.shape[0]

  // Roles and where each stored tensor lives.
  EXPECT_EQ(g.node(g.find("c_k")).role, ir::Role::Buffer);  // tensor constant
  EXPECT_EQ(g.node(g.find("x")).role, ir::Role::UserInput);
  EXPECT_EQ(g.str(g.node(g.find("p_sub_l_weight")).provenance.modulePath), "sub.l");
  EXPECT_EQ(g.str(g.node(g.find("b_c")).provenance.modulePath), "");
  ASSERT_EQ(m.weights.size(), 3u);  // sub.l.weight, sub.l.bias, persistent buffer sub.b
  EXPECT_EQ(m.weights[0].fqn, "sub.l.weight");
  EXPECT_EQ(m.weights[2].fqn, "sub.b");
  EXPECT_EQ(m.weights[2].kind, Pt2InputKind::Buffer);
  ASSERT_EQ(m.constants.size(), 2u);
  EXPECT_EQ(m.constants[0].fqn, "c");  // non-persistent buffer, signature order
  EXPECT_EQ(m.constants[0].kind, Pt2InputKind::Buffer);
  EXPECT_EQ(m.constants[1].fqn, "k");
  EXPECT_EQ(m.constants[1].kind, Pt2InputKind::TensorConstant);
  EXPECT_EQ(m.constants[1].recordBytes, 32u);
  EXPECT_EQ(m.constants[1].bytesNeeded(), 32u);

  const Pt2Model& mlp = a.models[1];
  EXPECT_EQ(ir::countGraph(*mlp.graph).calls, 2u);
  EXPECT_EQ(mlp.weights.size(), 2u);
  EXPECT_TRUE(mlp.constants.empty());
}

TEST(Pt2, SreprBecomesTheTextTorchPrints) {
  // srepr -> str pairs produced by torch 2.11 (sympy str with torch's sympy functions).
  const std::pair<const char*, const char*> cases[] = {
      {"Symbol('s0', positive=True, integer=True)", "s0"},
      {"Add(Symbol('s0', positive=True, integer=True), Integer(-1))", "s0 - 1"},
      {"Mul(Integer(-1), Integer(2), Symbol('s0', positive=True, integer=True))", "-2*s0"},
      {"Add(Integer(1), Mul(Integer(-1), Symbol('s0', positive=True, integer=True)))", "1 - s0"},
      {"Add(Mul(Integer(2), Pow(Symbol('s0', positive=True, integer=True), Integer(2))), "
       "Symbol('s0', positive=True, integer=True))",
       "2*s0**2 + s0"},
      {"Add(FloorDiv(Add(Symbol('s0', positive=True, integer=True), Integer(1)), Integer(2)), Integer(1))",
       "(((s0 + 1)//2)) + 1"},
      {"Mul(Integer(2), FloorDiv(Symbol('s0', positive=True, integer=True), Integer(2)))", "2*((s0//2))"},
      {"Add(FloorDiv(Mul(Integer(-1), Symbol('u1', integer=True)), Integer(3)), Integer(5))", "(((-u1)//3)) + 5"},
      {"Mul(Integer(-1), FloorDiv(Symbol('s0', positive=True, integer=True), Integer(2)))", "-((s0//2))"},
      {"Mul(Integer(2), Mod(Symbol('s0', positive=True, integer=True), Integer(8)))", "2*(Mod(s0, 8))"},
      {"Add(PythonMod(Symbol('u0', integer=True), Integer(3)), Integer(1))", "(PythonMod(u0, 3)) + 1"},
      {"Add(Max(Integer(1), Add(Symbol('s0', positive=True, integer=True), Integer(-1))), Integer(2))",
       "Max(1, s0 - 1) + 2"},
      {"CleanDiv(Symbol('s0', positive=True, integer=True), Integer(2))", "(s0//2)"},
      {"Equality(Symbol('s0', positive=True, integer=True), Integer(4))", "Eq(s0, 4)"},
      {"And(GreaterThan(Symbol('u0', integer=True), Integer(0)), StrictLessThan(Symbol('u0', integer=True), "
       "Symbol('s0', positive=True, integer=True)))",
       "(u0 >= 0) & (u0 < s0)"},
      {"Or(Equality(Symbol('u0', integer=True), Integer(0)), Equality(Symbol('u0', integer=True), Integer(1)))",
       "Eq(u0, 0) | Eq(u0, 1)"},
      {"Mul(Symbol('s0', positive=True, integer=True), Pow(Symbol('s1', positive=True, integer=True), Integer(-1)))",
       "s0/s1"},
      {"Add(Mul(Rational(1, 2), Symbol('s0', positive=True, integer=True)), Integer(1))", "s0/2 + 1"},
      {"Mul(Float('1.5', precision=53), Symbol('zf0', real=True))", "1.5*zf0"},
      {"Mul(Add(Symbol('s0', positive=True, integer=True), Integer(1)), Add(Symbol('s1', positive=True, "
       "integer=True), Integer(2)))",
       "(s0 + 1)*(s1 + 2)"},
      {"Mul(FloorDiv(Symbol('s0', positive=True, integer=True), Integer(2)), FloorDiv(Symbol('s1', positive=True, "
       "integer=True), Integer(2)))",
       "((s0//2))*((s1//2))"},
      {"Identity(Symbol('s0', positive=True, integer=True))", "(s0)"},
      {"Where(Equality(Symbol('u0', integer=True), Integer(0)), Integer(1), Symbol('s0', positive=True, "
       "integer=True))",
       "Where(Eq(u0, 0), 1, s0)"},
      {"Integer(-3)", "-3"},
      {"true", "True"},
  };
  for (const auto& [srepr, str] : cases) {
    EXPECT_TRUE(looksLikeSrepr(srepr)) << srepr;
    EXPECT_EQ(sympyStrFromSrepr(srepr).value_or("<none>"), str) << srepr;
  }
  EXPECT_FALSE(looksLikeSrepr("s0 + 1"));
  EXPECT_FALSE(looksLikeSrepr("Max(1, s0)"));
  for (const char* bad : {"Add(Symbol('s0'), ", "Symbol(s0)", "Integer('x')", "Add(Symbol('s0')))", ""})
    EXPECT_FALSE(sympyStrFromSrepr(bad).has_value()) << bad;
  // Nesting beyond the parser's depth is refused rather than recursed into.
  std::string deep;
  for (int i = 0; i < 5000; ++i) deep += "Add(";
  EXPECT_FALSE(sympyStrFromSrepr(deep).has_value());
}

// --- JSON robustness: wrong types, unknown keys, the schema <= 2 union encoding ---

const char* kDamagedProgram = R"json({
  "graph_module": {
    "graph": {
      "inputs": [{"as_tensor": {"name": "w"}}, {"as_tensor": {"name": "x"}}],
      "outputs": [{"as_tensor": {"name": "mm"}}, {"as_none": true}],
      "nodes": [
        {"target": "torch.ops.aten.mm.default",
         "inputs": [{"name": "self", "arg": {"as_tensor": {"name": "x"}}, "kind": 1},
                    {"name": "mat2", "arg": {"as_tensor": {"name": "w"}}, "kind": 1}],
         "outputs": [{"as_tensor": {"name": "mm"}}],
         "metadata": {"stack_trace": "File \"m.py\", line 3, in forward\n    return x @ self.w",
                      "nn_module_stack": "L__self__,,M;L__self___lin,lin,torch.nn.Linear"},
         "a_field_from_a_newer_schema": {"x": 1}},
        {"target": 42, "inputs": "oops", "outputs": []},
        "not a node",
        {"target": "torch.ops.aten.add.Tensor",
         "inputs": [{"name": "self", "arg": {"as_tensor": {"name": "undefined_value"}}, "kind": 1},
                    {"name": "other", "arg": {"as_frobnicate": 3}, "kind": 1},
                    {"name": "alpha", "arg": {"as_float": "Infinity"}, "kind": 2}],
         "outputs": [{"as_tensor": {"name": "add"}}]}
      ],
      "tensor_values": {
        "w": {"dtype": 7, "sizes": [{"as_int": 3}, {"as_int": 3}], "strides": [{"as_int": 3}, {"as_int": 1}],
              "device": {"type": "cuda", "index": 0}, "storage_offset": {"as_int": 0}, "requires_grad": true},
        "x": {"dtype": 13, "sizes": [{"as_expr": {"expr_str": "s0", "hint": {"as_int": 5}}}, {"as_int": 3}],
              "strides": [{"as_int": 3}, {"as_int": 1}], "device": {"type": "cuda", "index": 0}},
        "mm": {"dtype": 13,
               "sizes": [{"as_expr": {"expr_str": "Add(Symbol('s0', integer=True, positive=True), Integer(1))",
                                      "hint": {"as_int": 6}}}, {"as_int": 3}],
               "strides": [{"as_int": 3}, {"as_int": 1}]},
        "add": {"dtype": "float32", "sizes": []}
      },
      "sym_int_values": {}
    },
    "signature": {
      "input_specs": [{"parameter": {"arg": {"name": "w"}, "parameter_name": "lin.w"}},
                      {"user_input": {"arg": {"as_tensor": {"name": "x"}}}}],
      "output_specs": [{"user_output": {"arg": {"as_tensor": {"name": "mm"}}}},
                       {"user_output": {"arg": {"as_none": true}}}]
    },
    "module_call_graph": [{"fqn": ""}, {"fqn": "lin"}]
  },
  "schema_version": {"major": 8, "minor": 99},
  "a_top_level_key_from_the_future": [1, 2, 3],
  "torch_version": "9.9",
  "range_constraints": {"s0": {"min_val": 2, "max_val": null}}
})json";

TEST(Pt2, DamagedNodesBecomeWarningsAndStayInTheGraph) {
  Diagnostics d;
  const Pt2Model m = parseExportedProgram(kDamagedProgram, "model", "damaged.json", d);
  ASSERT_TRUE(m.graph);
  const ir::Graph& g = *m.graph;
  EXPECT_EQ(m.serializedNodes, 4u);
  EXPECT_EQ(ir::countGraph(g).calls, 4u);                 // the broken ones are kept as unknown nodes
  EXPECT_EQ(d.countCode("bad_node"), 3u) << describe(d);  // target, inputs, not an object
  EXPECT_EQ(d.countCode("unknown_value"), 1u);
  EXPECT_EQ(d.countCode("unknown_argument"), 1u);
  EXPECT_EQ(d.countCode("bad_meta"), 1u);
  EXPECT_EQ(d.count(Severity::Warning), 6u) << describe(d);  // unknown keys are not reported
  for (const auto& item : d.items()) EXPECT_EQ(item.where.file, "damaged.json");
  EXPECT_EQ(m.schemaVersion, "8.99");
  EXPECT_EQ(m.moduleFqns, (std::vector<std::string>{"", "lin"}));
  ASSERT_EQ(m.rangeConstraints.size(), 1u);
  EXPECT_FALSE(m.rangeConstraints[0].max.has_value());

  const ir::Node& mm = g.node(g.find("mm"));
  EXPECT_EQ(g.str(mm.provenance.file), "m.py");
  EXPECT_EQ(mm.provenance.line, 3u);
  EXPECT_EQ(g.str(mm.provenance.function), "forward");
  EXPECT_EQ(g.str(mm.provenance.code), "return x @ self.w");
  EXPECT_EQ(g.str(mm.provenance.modulePath), "lin");
  EXPECT_EQ(mm.meta.dtype, ir::DType::BF16);
  EXPECT_EQ(g.str(mm.meta.sizes[0].expr), "s0 + 1");
  EXPECT_EQ(mm.meta.sizes[0].value, 6);
  EXPECT_EQ(g.str(g.node(g.find("x")).meta.sizes[0].expr), "s0");  // plain str form kept
  EXPECT_EQ(g.str(g.node(g.find("w")).meta.device), "cuda:0");
  EXPECT_EQ(g.node(g.find("w")).role, ir::Role::Parameter);
  EXPECT_EQ(g.str(g.node(g.find("w")).provenance.modulePath), "lin");

  const ir::Node& add = g.node(g.find("add"));
  ASSERT_EQ(add.args.size(), 2u);
  EXPECT_EQ(add.args[0].kind, ir::Arg::Kind::Raw);  // undefined name kept as text
  EXPECT_EQ(add.args[1].kind, ir::Arg::Kind::Raw);
  ASSERT_EQ(add.kwargs.size(), 1u);
  EXPECT_TRUE(std::isinf(add.kwargs[0].second.f));
  EXPECT_EQ(add.meta.kind, ir::ValueKind::None);
  const ir::Node& out = g.node(g.outputNode());
  EXPECT_EQ(out.args.at(0).items.at(1).kind, ir::Arg::Kind::None);
}

TEST(Pt2, SchemaTwoUnionsWithNullMembersAndUnnamedNodes) {
  const char* program = R"json({"graph_module": {"graph": {
      "inputs": [{"as_none": null, "as_tensor": {"name": "arg0_1"}, "as_int": null}],
      "outputs": [{"as_none": null, "as_tensor": {"name": "getitem"}, "as_int": null}],
      "nodes": [{"target": "torch.ops.aten.topk.default",
                 "inputs": [{"name": "self", "arg": {"as_none": null, "as_tensor": {"name": "arg0_1"}, "as_int": null}},
                            {"name": "k", "arg": {"as_none": null, "as_tensor": null, "as_int": 2}}],
                 "outputs": [{"as_none": null, "as_tensor": {"name": "getitem"}},
                             {"as_none": null, "as_tensor": {"name": "topk_unused_1"}}],
                 "metadata": {"stack_trace": "  File \"m.py\", line 7, in forward\n    return x.topk(2)[0]\n"}}],
      "tensor_values": {
        "arg0_1": {"dtype": 7, "sizes": [{"as_expr": null, "as_int": 4}], "requires_grad": false,
                   "device": {"type": "cpu", "index": null}, "strides": [{"as_expr": null, "as_int": 1}],
                   "storage_offset": 0, "layout": 7},
        "getitem": {"dtype": 7, "sizes": [{"as_expr": {"expr_str": "s0", "hint": null}, "as_int": null}],
                    "strides": [{"as_expr": null, "as_int": 1}], "storage_offset": 0, "layout": 7},
        "topk_unused_1": {"dtype": 5, "sizes": [{"as_expr": null, "as_int": 2}], "storage_offset": 0}},
      "sym_int_values": {}, "sym_bool_values": {}},
    "signature": {"input_specs": [{"user_input": {"arg": {"as_none": null, "as_tensor": {"name": "arg0_1"}}},
                                   "parameter": null, "buffer": null}],
                  "output_specs": [{"user_output": {"arg": {"as_none": null, "as_tensor": {"name": "getitem"}}},
                                    "loss_output": null}]},
    "module_call_graph": []},
  "opset_version": {"aten": 10}, "range_constraints": {}, "schema_version": 2, "dialect": "ATEN"})json";
  Diagnostics d;
  const Pt2Model m = parseExportedProgram(program, "model", "legacy.json", d);
  EXPECT_TRUE(d.empty()) << describe(d);
  ASSERT_TRUE(m.graph);
  const ir::Graph& g = *m.graph;
  EXPECT_EQ(m.schemaVersion, "2");
  EXPECT_EQ(m.schemaMajor, 2);
  EXPECT_EQ(m.opset, (std::vector<std::pair<std::string, int64_t>>{{"aten", 10}}));
  const ir::NodeId topk = g.find("topk");  // named from its "<node>_unused_<i>" output
  ASSERT_NE(topk, ir::kNoNode);
  EXPECT_EQ(g.node(topk).args.at(1).i, 2);
  EXPECT_EQ(g.node(topk).provenance.line, 7u);
  const ir::Node& first = g.node(g.find("getitem"));
  EXPECT_TRUE(first.synthetic);
  EXPECT_EQ(first.args.at(0).node, topk);
  EXPECT_EQ(g.str(first.meta.sizes[0].expr), "s0");
  EXPECT_FALSE(first.meta.sizes[0].hasHint);
  EXPECT_EQ(g.node(g.find("topk_unused_1")).meta.dtype, ir::DType::I64);
  EXPECT_EQ(g.node(g.find("arg0_1")).role, ir::Role::UserInput);
  EXPECT_EQ(m.outputs.at(0).arg, "getitem");
}

TEST(Pt2, ResultsAreReadBackTheWayTorchDeserializesThem) {
  const Json meta = Json::parse(R"({"dtype": 7, "sizes": [{"as_int": 2}], "strides": [{"as_int": 1}]})");
  auto tensor = [](const char* name) { return Json{{"as_tensor", {{"name", name}}}}; };
  const Json body = {{"name", "body"},
                     {"graph",
                      {{"inputs", Json::array({tensor("y")})},
                       {"outputs", Json::array({tensor("y")})},
                       {"nodes", Json::array()},
                       {"tensor_values", {{"y", meta}}}}}};
  auto hop = [&](const char* name, const Json& bareReturn, const char* result) {
    const Json inputs = Json::array({{{"name", ""}, {"arg", {{"as_graph", body}}}, {"kind", 1}},
                                     {{"name", ""}, {"arg", tensor("x")}, {"kind", 1}}});
    return Json{{"target", "torch.ops.higher_order.wrap"},
                {"name", name},
                {"is_hop_single_tensor_return", bareReturn},
                {"inputs", inputs},
                {"outputs", Json::array({tensor(result)})}};
  };
  const Json pairNode = Json::parse(R"({"target": "my_ns.pair", "name": "pair", "inputs": [],
      "outputs": [{"as_tensors": [{"name": "c0"}, {"name": "c1"}]}, {"as_none": true}, {"as_tensor": {"name": "d"}}]})");
  Json values = Json::object();
  for (const char* name : {"x", "a", "b", "c0", "c1", "d"}) values[name] = meta;
  const Json graph = {{"inputs", Json::array({tensor("x")})},
                      {"outputs", Json::array({tensor("a"), tensor("b"), tensor("c1")})},
                      {"nodes", Json::array({hop("wrap", true, "a"), hop("wrap_1", nullptr, "b"), pairNode})},
                      {"tensor_values", values}};
  const std::string program = Json{{"graph_module", {{"graph", graph}}}}.dump();
  Diagnostics d;
  const Pt2Model m = parseExportedProgram(program, "m", "hop.json", d);
  EXPECT_EQ(d.count(Severity::Warning), 1u) << describe(d);  // no signature
  ASSERT_TRUE(m.graph);
  const ir::Graph& g = *m.graph;
  EXPECT_EQ(ir::countGraph(g).calls, 3u);
  // A HOP that returns the bare tensor is that value ...
  EXPECT_EQ(g.target(g.find("a")), "torch.ops.higher_order.wrap");
  EXPECT_FALSE(g.node(g.find("a")).synthetic);
  // ... otherwise it returns a tuple, read by getitem even for one element.
  const ir::NodeId wrap1 = g.find("wrap_1");
  ASSERT_NE(wrap1, ir::kNoNode);
  EXPECT_EQ(g.target(g.find("b")), "operator.getitem");
  EXPECT_EQ(g.node(g.find("b")).args.at(0).node, wrap1);
  // Both calls read the same nested graph through one get_attr.
  ASSERT_EQ(g.subgraphs().size(), 1u);
  EXPECT_EQ(g.node(g.find("a")).args.at(0).node, g.node(wrap1).args.at(0).node);
  // A list inside several results: a getitem for the list, then one per element; None is skipped.
  const ir::NodeId pair = g.find("pair");
  const ir::Node& c1 = g.node(g.find("c1"));
  const ir::Node& list = g.node(c1.args.at(0).node);
  EXPECT_TRUE(list.synthetic);
  EXPECT_EQ(list.args.at(0).node, pair);
  EXPECT_EQ(list.args.at(1).i, 0);
  EXPECT_EQ(c1.args.at(1).i, 1);
  EXPECT_EQ(g.node(g.find("d")).args.at(0).node, pair);
  EXPECT_EQ(g.node(g.find("d")).args.at(1).i, 2);
}

TEST(Pt2, TextThatIsNotJsonGivesALocatedWarning) {
  Diagnostics d;
  const Pt2Model m = parseExportedProgram("{\"graph_module\":\n {\"graph\": [1, 2,\n ", "m", "broken.json", d);
  EXPECT_FALSE(m.graph);
  ASSERT_EQ(d.countCode("bad_json"), 1u);
  EXPECT_EQ(d.items()[0].where.file, "broken.json");
  EXPECT_EQ(d.items()[0].where.line, 3u);

  // nlohmann reports a number beyond double range as out_of_range, not parse_error.
  Diagnostics overflow;
  EXPECT_FALSE(parseExportedProgram(R"({"schema_version": 1e999})", "m", "big.json", overflow).graph);
  EXPECT_EQ(overflow.countCode("bad_json"), 1u);

  // A weights config with the same damage is reported, not thrown.
  std::vector<Member> members;
  for (const char* name : {"archive_format", "models/mlp.json"})
    members.push_back({"t/" + std::string(name), zipMember(kDynamic, std::string("dynamic_shapes/") + name)});
  members.push_back({"t/data/weights/mlp_weights_config.json", R"({"config": {"fc.weight": 1e999}})"});
  const Pt2Archive a = loadPt2FromBuffer(buildZip(members), "overflow.pt2");
  EXPECT_EQ(a.diagnostics.countCode("bad_json"), 1u) << describe(a.diagnostics);
  EXPECT_EQ(a.models.at(0).weights.size(), 2u);  // then described from the signature
}

// --- container robustness: bombs, lying headers, truncation, garbage ---

std::string tinyArchive(const std::string& modelJson, bool deflate) {
  return buildZip({{"t/archive_format", "pt2"},
                   {"t/models/model.json", modelJson, deflate},
                   {"t/byteorder", "little"},
                   {"t/.data/version", "6\n"}});
}

// The BadInput error loading `zip` throws; fails the test when it loads.
std::string refusal(const std::string& zip, const Pt2Limits& limits = {}) {
  try {
    (void)loadPt2FromBuffer(zip, "bomb.pt2", limits);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::BadInput) << e.what();
    EXPECT_EQ(e.where().file, "bomb.pt2!t/models/model.json");
    return e.what();
  }
  ADD_FAILURE() << "loaded";
  return {};
}

using lathe::testing::kResidentSizeMeaningful;
using lathe::testing::peakResidentKb;


TEST(Pt2, DeflateBombIsRefusedBeforeInflating) {
  std::string zip = tinyArchive(std::string(std::size_t{64} << 20, '0'), true);
  ASSERT_LT(zip.size(), std::size_t{1} << 20);  // ~1000:1, as deflate allows

  // The program over its cap: nothing in the archive is readable without it.
  Pt2Limits small;
  small.maxJsonBytes = std::size_t{8} << 20;
  EXPECT_NE(refusal(zip, small).find("entry declares 67108864 bytes, over the limit of 8388608"), std::string::npos);

  // A header that declares 4 GiB from ~64 KiB of deflate data: more than deflate can reach.
  declareSize(zip, "t/models/model.json", 0xFFFFFFF0u);
  EXPECT_NE(refusal(zip).find("(a zip bomb?); refused"), std::string::npos);
  // With the ratio and the limits lifted, a JSON member is still capped.
  Pt2Limits huge;
  huge.maxJsonBytes = huge.maxTotalBytes = huge.maxRatio = uint64_t{1} << 40;
  EXPECT_NE(refusal(zip, huge).find("over the limit of 268435456"), std::string::npos);

  // A header that declares more than the data inflates to (250 MiB, under every limit): memory
  // follows the data (64 MiB), not what the header declares.
  declareSize(zip, "t/models/model.json", 250u << 20);
  const long peakBefore = peakResidentKb();
  Pt2Archive a = loadPt2FromBuffer(zip, "bomb.pt2", huge);
  EXPECT_EQ(a.diagnostics.countCode("truncated_entry"), 1u) << describe(a.diagnostics);
  EXPECT_EQ(a.diagnostics.countCode("bad_json"), 1u);
  const long grownKb = peakResidentKb() - peakBefore;
  EXPECT_TRUE(grownKb < (128L << 10) || !kResidentSizeMeaningful) << grownKb << " KiB of peak memory grew";

  // A header that declares less than the data inflates to: inflation stops at the declared size.
  declareSize(zip, "t/models/model.json", 1u << 20);
  a = loadPt2FromBuffer(zip, "bomb.pt2");
  EXPECT_EQ(a.diagnostics.countCode("bad_entry"), 2u) << describe(a.diagnostics);  // the entry, then the model
  EXPECT_FALSE(a.models.at(0).graph);
}

TEST(Pt2, WhitespaceProgramOverTheCapIsRefusedByItsDeclaredSize) {
  // 300 MiB of JSON whitespace deflates to ~300 KB, at a ratio deflate really reaches.
  const std::string zip = tinyArchive("{" + std::string((std::size_t{300} << 20) - 2, ' ') + "}", true);
  EXPECT_NE(refusal(zip).find("entry declares 314572800 bytes, over the limit of 268435456"), std::string::npos);
}

TEST(Pt2, DeflatedProgramLoadsLikeTheStoredOne) {
  const std::string program = zipMember(kDynamic, "dynamic_shapes/models/mlp.json");
  ASSERT_FALSE(program.empty());
  const Pt2Archive stored = loadPt2FromBuffer(tinyArchive(program, false), "stored.pt2");
  const Pt2Archive deflated = loadPt2FromBuffer(tinyArchive(program, true), "deflated.pt2");
  EXPECT_EQ(deflated.diagnostics.size(), stored.diagnostics.size()) << describe(deflated.diagnostics);
  EXPECT_EQ(deflated.diagnostics.countCode("truncated_entry") + deflated.diagnostics.countCode("bad_entry"), 0u);
  ASSERT_TRUE(stored.models.at(0).graph);
  ASSERT_TRUE(deflated.models.at(0).graph);
  EXPECT_EQ(deflated.models[0].graph->size(), stored.models[0].graph->size());
  EXPECT_EQ(deflated.models[0].serializedNodes, stored.models[0].serializedNodes);
  EXPECT_EQ(deflated.models[0].inputs.size(), stored.models[0].inputs.size());
}

TEST(Pt2, TotalDecompressedBytesAreCapped) {
  const std::string program = zipMember(kDynamic, "dynamic_shapes/models/mlp.json");
  ASSERT_FALSE(program.empty());
  const std::string zip =
      buildZip({{"t/archive_format", "pt2"}, {"t/models/a.json", program, true}, {"t/models/b.json", program, true}});
  Pt2Limits limits;
  limits.maxTotalBytes = program.size() + 100;  // room for one model, not two
  const Pt2Archive a = loadPt2FromBuffer(zip, "two.pt2", limits);
  ASSERT_EQ(a.models.size(), 2u);
  EXPECT_TRUE(a.models[0].graph);
  EXPECT_FALSE(a.models[1].graph);
  EXPECT_EQ(a.diagnostics.countCode("entry_too_large"), 1u) << describe(a.diagnostics);
}

TEST(Pt2, ChecksumDamageIsAWarningAndTheDataIsUsed) {
  std::string bytes = readBytes(kSamples / "pt2/gpt2_tiny.pt2");
  const size_t at = bytes.find("\"torch_version\": \"2.11.0+cu130\"");
  ASSERT_NE(at, std::string::npos);
  bytes[at + 18] = '3';  // stored entry: the JSON text is in the file as is
  const Pt2Archive a = loadPt2FromBuffer(bytes, "gpt2_tiny.pt2");
  EXPECT_EQ(a.diagnostics.countCode("crc_mismatch"), 1u) << describe(a.diagnostics);
  EXPECT_EQ(a.diagnostics.items().at(0).where.file, "gpt2_tiny.pt2!gpt2_tiny/models/model.json");
  EXPECT_EQ(a.models.at(0).torchVersion, "3.11.0+cu130");
  EXPECT_TRUE(a.models[0].graph);
}

TEST(Pt2, UnreadableContainersAreBadInput) {
  auto code = [](const std::string& bytes) {
    try {
      (void)loadPt2FromBuffer(bytes, "x.pt2");
    } catch (const Error& e) {
      return static_cast<int>(e.code());
    }
    return 0;
  };
  const int badInput = static_cast<int>(ErrorCode::BadInput);
  const std::string sample = readBytes(kSamples / "pt2/gpt2_tiny.pt2");
  EXPECT_EQ(code(sample.substr(0, sample.size() / 2)), badInput);   // no central directory
  EXPECT_EQ(code(sample.substr(0, sample.size() - 30)), badInput);  // end record cut
  EXPECT_EQ(code(""), badInput);
  std::string garbage(4096, '\0');
  for (size_t i = 0; i < garbage.size(); ++i) garbage[i] = static_cast<char>((i * 2654435761u) >> 13);
  EXPECT_EQ(code(garbage), badInput);
  EXPECT_EQ(code("PK\3\4" + garbage), badInput);
  EXPECT_EQ(code(buildZip({{"notes.txt", "not an exported program"}})), badInput);
  EXPECT_THROW((void)loadPt2(kSamples / "pt2/no_such_file.pt2"), Error);
  EXPECT_THROW((void)loadPt2(kSamples / "pt2"), Error);  // a directory
}

TEST(Pt2, MissingAndExtraEntriesAreReported) {
  // archive_format only: readable, but holds nothing.
  Pt2Archive a = loadPt2FromBuffer(buildZip({{"t/archive_format", "pt2"}}), "empty.pt2");
  EXPECT_TRUE(a.models.empty());
  EXPECT_EQ(a.diagnostics.countCode("missing_entry"), 1u) << describe(a.diagnostics);

  // A model whose weights config is gone and one record missing from the constants config; an
  // entry outside the root folder; no archive_format.
  const std::string model = zipMember(kDynamic, "dynamic_shapes/models/model.json");
  const std::string constants = zipMember(kDynamic, "dynamic_shapes/data/constants/model_constants_config.json");
  a = loadPt2FromBuffer(buildZip({{"t/models/model.json", model},
                                  {"t/data/constants/model_constants_config.json", constants},
                                  {"t/data/constants/tensor_0", std::string(32, '\0')},
                                  {"stray.txt", "x"}}),
                        "partial.pt2");
  EXPECT_EQ(a.layout, Pt2Layout::Archive);
  ASSERT_EQ(a.models.size(), 1u);
  const Pt2Model& m = a.models[0];
  ASSERT_TRUE(m.graph);
  EXPECT_EQ(a.diagnostics.countCode("extra_entry"), 1u) << describe(a.diagnostics);
  EXPECT_EQ(a.diagnostics.countCode("missing_entry"), 3u)  // archive_format, weights config, tensor_1
      << describe(a.diagnostics);
  ASSERT_EQ(m.weights.size(), 3u);  // described from the signature and placeholder metas
  EXPECT_EQ(m.weights[0].fqn, "sub.l.weight");
  EXPECT_EQ(m.weights[0].sizes, (std::vector<int64_t>{8, 8}));
  EXPECT_FALSE(m.weights[0].recordPresent);
  ASSERT_EQ(m.constants.size(), 2u);
  EXPECT_FALSE(findTensor(m.constants, "c")->recordPresent);
  EXPECT_TRUE(findTensor(m.constants, "k")->recordPresent);
}

TEST(Pt2, RecordSmallerThanItsTensorIsReported) {
  const std::string root = "dynamic_shapes/";
  std::vector<Member> members;
  for (const char* name : {"archive_format", "models/mlp.json", "data/weights/mlp_weights_config.json"})
    members.push_back({"t/" + std::string(name), zipMember(kDynamic, root + name)});
  members.push_back({"t/data/weights/weight_3", std::string(16, '\0')});  // fc.weight needs 2*4 floats
  members.push_back({"t/data/weights/weight_4", std::string(8, '\0')});
  const Pt2Archive a = loadPt2FromBuffer(buildZip(members), "short.pt2");
  EXPECT_EQ(a.diagnostics.countCode("record_too_small"), 1u) << describe(a.diagnostics);
  const Pt2Tensor* w = findTensor(a.models.at(0).weights, "fc.weight");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->bytesNeeded(), 32u);
  EXPECT_EQ(w->recordBytes, 16u);
}

TEST(Pt2, ProgressIsReportedAndCancellationStopsLoading) {
  uint64_t lastDone = 0, lastTotal = 0;
  Progress progress;
  progress.report = [&](uint64_t done, uint64_t total) {
    lastDone = done;
    lastTotal = total;
  };
  (void)loadPt2(kDynamic, progress);
  EXPECT_GT(lastTotal, 0u);
  EXPECT_GE(lastDone, lastTotal);

  std::atomic<bool> cancel{true};
  progress.cancel = &cancel;
  try {
    (void)loadPt2(kDynamic, progress);
    FAIL() << "not cancelled";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Cancelled);
  }
}

}  // namespace
