// Tests of the guard parsers and helpers (core/io/guards/guards.h) on payloads from our captures (inline
// excerpts, and whole payloads read from the samples) and on synthetic damage.
#include "io/guards/guards.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "io/trace/trace_log.h"

using namespace lathe;
using namespace lathe::io;

namespace {

// Excerpt of the `dynamo_cpp_guards_str` payload of captures/llama3_8b_2l_tiny_train.log.gz: the
// ambient guards, the args / func / kwargs subtrees, part of the globals with a DictGuardManager and
// its key/value pairs, two of the epilogue lambda guards printed after the root, and the latency line.
constexpr std::string_view kTinyTrainExcerpt = R"guards(
TREE_GUARD_MANAGER:
+- RootGuardManager
| +- LAMBDA_GUARD: torch._functorch.aot_autograd.utils.top_saved_tensors_hooks ids == None  # _dynamo/output_graph.py:964 in init_ambient_guards
| +- GLOBAL_STATE: ___check_global_state() against {"allow_bf16_reduce":0,"allow_fp16_reduce":0,"allow_tf32":false,"autocast_state":{"cached_enabled":true,"dtype":[15,5,5,15,5,5,15,15,5,5],"enabled":[false,false,false,false,false,false,false,false,false,false]},"default_dtype":6,"deterministic_algorithms":false,"deterministic_algorithms_warn_only":false,"grad_mode":true,"num_threads":16,"torch_function":true,"torch_function_all_disabled":false}
| +- TORCH_FUNCTION_MODE_STACK: ___check_torch_function_mode_stack()
| +- DEFAULT_DEVICE: utils_device.CURRENT_DEVICE == None                           # _dynamo/output_graph.py:951 in init_ambient_guards
| +- GuardManager: source=L['args'], accessed_by=FrameLocalsGuardAccessor(key='args', framelocals_idx=1), type=<class 'tuple'>, tag_safe=(True, False)
| | +- TYPE_MATCH: ___check_type_id(L['args'], 10759232), type=<class 'tuple'>   # output = func(self, *args, **kwargs)  # transformers/utils/generic.py:939 in wrapper (HINT: type tuple)
| | +- LENGTH_CHECK: not L['args']                                                 # output = func(self, *args, **kwargs)  # transformers/utils/generic.py:939 in wrapper
| +- GuardManager: source=L['func'], accessed_by=FrameLocalsGuardAccessor(key='func', framelocals_idx=6), type=<class 'function'>, tag_safe=(True, False)
| | +- GuardManager: source=L['func'].__code__, accessed_by=CodeGuardAccessor, type=<class 'code'>, tag_safe=(True, False)
| | | +- ID_MATCH: ___check_obj_id(L['func'].__code__, 744758176), type=<code object forward at 0x2c641ba0, file "/opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py", line 436>  # output = func(self, *args, **kwargs)  # transformers/utils/generic.py:939 in wrapper
| +- GuardManager: source=L['kwargs'], accessed_by=FrameLocalsGuardAccessor(key='kwargs', framelocals_idx=2), type=<class 'dict'>, tag_safe=(True, False)
| | +- TYPE_MATCH: ___check_type_id(L['kwargs'], 10737728), type=<class 'dict'>  # return_dict_passed = kwargs.pop("return_dict", return_dict)  # transformers/utils/generic.py:936 in wrapper (HINT: type dict)
| | +- DICT_CONTAINS: not ___dict_contains('return_dict', L['kwargs'])              # return_dict_passed = kwargs.pop("return_dict", return_dict)  # transformers/utils/generic.py:936 in wrapper
| | +- DICT_LENGTH: len(L['kwargs']) == 2                                         # output = func(self, *args, **kwargs)  # transformers/utils/generic.py:939 in wrapper
| | +- GuardManager: source=L['kwargs']['input_ids'], accessed_by=DictGetItemGuardAccessor('input_ids'), type=<class 'torch.Tensor'>, tag_safe=(True, False)
| | | +- TENSOR_MATCH: check_tensor(L['kwargs']['input_ids'], Tensor, DispatchKeySet(CUDA, BackendSelect, ADInplaceOrView, AutogradCUDA), torch.int64, device=0, requires_grad=False, size=[1, 64], stride=[64, 1])  # if (input_ids is None) ^ (inputs_embeds is not None):  # transformers/models/llama/modeling_llama.py:377 in forward
| | | +- NO_HASATTR: hasattr(L['kwargs']['input_ids'], '_dynamo_dynamic_indices') == False  # if (input_ids is None) ^ (inputs_embeds is not None):  # transformers/models/llama/modeling_llama.py:377 in forward
| | | +- NO_TENSOR_ALIASING: check_no_aliasing(L['kwargs']['input_ids'], L['self']._modules['model']._modules['rotary_emb']._buffers['inv_freq'])
| | +- GuardManager: source=L['kwargs']['labels'], accessed_by=DictGetItemGuardAccessor('labels'), type=<class 'torch.Tensor'>, tag_safe=(True, False)
| +- GuardManager: source=G, accessed_by=GlobalsGuardAccessor, type=<class 'dict'>, tag_safe=(False, False)
| | +- GuardManager: source=G['__import_transformers_dot_utils_dot_output_capturing'], accessed_by=DictGetItemGuardAccessor('__import_transformers_dot_utils_dot_output_capturing'), type=<class 'module'>, tag_safe=(False, False)
| | | +- ID_MATCH: ___check_obj_id(G['__import_transformers_dot_utils_dot_output_capturing'], 140214455298512), type=<module 'transformers.utils.output_capturing' from '/opt/torch/.venv/lib/python3.12/site-packages/transformers/utils/output_capturing.py'>  # capturable_flags = _CAN_RECORD_REGISTRY.get(str(self.__class__)) or {}  # transformers/utils/output_capturing.py:255 in wrapper
| | | +- GuardManager: source=G['__import_transformers_dot_utils_dot_output_capturing']._CAN_RECORD_REGISTRY, accessed_by=GetAttrGuardAccessor(_CAN_RECORD_REGISTRY), type=<class 'dict'>, tag_safe=(True, False)
| | | | +- TYPE_MATCH: ___check_type_id(G['__import_transformers_dot_utils_dot_output_capturing']._CAN_RECORD_REGISTRY, 10737728), type=<class 'dict'>  # capturable_flags = _CAN_RECORD_REGISTRY.get(str(self.__class__)) or {}  # transformers/utils/output_capturing.py:255 in wrapper (HINT: type dict)
| | | | +- DictGuardManager: source=G['__import_transformers_dot_utils_dot_output_capturing']._CAN_RECORD_REGISTRY["<class 'transformers.models.llama.modeling_llama.LlamaModel'>"], accessed_by=DictGetItemGuardAccessor("<class 'transformers.models.llama.modeling_llama.LlamaModel'>"), type=<class 'dict'>, tag_safe=(True, False)
| | | | | +- DICT_CONTAINS: not ___dict_contains('cross_attentions', G['__import_transformers_dot_utils_dot_output_capturing']._CAN_RECORD_REGISTRY["<class 'transformers.models.llama.modeling_llama.LlamaModel'>"])  # if "cross_attentions" in capturable_flags:  # transformers/utils/output_capturing.py:261 in wrapper
| | | | | +- DICT_CONTAINS: not ___dict_contains('mask_decoder_attentions', G['__import_transformers_dot_utils_dot_output_capturing']._CAN_RECORD_REGISTRY["<class 'transformers.models.llama.modeling_llama.LlamaModel'>"])  # if "mask_decoder_attentions" in capturable_flags:  # transformers/utils/output_capturing.py:266 in wrapper
| | | | | +- KeyValueManager pair at index=0
| | | | | | +- KeyManager: GuardManager: source=list(dict.keys(G['__import_transformers_dot_utils_dot_output_capturing']._CAN_RECORD_REGISTRY["<class 'transformers.models.llama.modeling_llama.LlamaModel'>"]))[0], type=<class 'str'>, tag_safe=(True, False)
| | | | | | | +- EQUALS_MATCH: list(dict.keys(G['__import_transformers_dot_utils_dot_output_capturing']._CAN_RECORD_REGISTRY["<class 'transformers.models.llama.modeling_llama.LlamaModel'>"]))[0] == 'hidden_states'  # recordable_keys = {  # transformers/utils/output_capturing.py:256 in wrapper
| | | | | | +- ValueManager: GuardManager: source=G['__import_transformers_dot_utils_dot_output_capturing']._CAN_RECORD_REGISTRY["<class 'transformers.models.llama.modeling_llama.LlamaModel'>"]['hidden_states'], type=<class 'type'>, tag_safe=(True, False)
| | | | | | | +- ID_MATCH: ___check_obj_id(G['__import_transformers_dot_utils_dot_output_capturing']._CAN_RECORD_REGISTRY["<class 'transformers.models.llama.modeling_llama.LlamaModel'>"]['hidden_states'], 749734432), type=<class 'transformers.models.llama.modeling_llama.LlamaDecoderLayer'>  # capturable_flags = _CAN_RECORD_REGISTRY.get(str(self.__class__)) or {}  # transformers/utils/output_capturing.py:255 in wrapper
| | | | | +- KeyValueManager pair at index=1
| | | | | | +- KeyManager: GuardManager: source=list(dict.keys(G['__import_transformers_dot_utils_dot_output_capturing']._CAN_RECORD_REGISTRY["<class 'transformers.models.llama.modeling_llama.LlamaModel'>"]))[1], type=<class 'str'>, tag_safe=(True, False)
| | | | | | | +- EQUALS_MATCH: list(dict.keys(G['__import_transformers_dot_utils_dot_output_capturing']._CAN_RECORD_REGISTRY["<class 'transformers.models.llama.modeling_llama.LlamaModel'>"]))[1] == 'attentions'  # recordable_keys = {  # transformers/utils/output_capturing.py:256 in wrapper
| | | | | | +- ValueManager: GuardManager: source=G['__import_transformers_dot_utils_dot_output_capturing']._CAN_RECORD_REGISTRY["<class 'transformers.models.llama.modeling_llama.LlamaModel'>"]['attentions'], type=<class 'type'>, tag_safe=(True, False)
| | | | | | | +- ID_MATCH: ___check_obj_id(G['__import_transformers_dot_utils_dot_output_capturing']._CAN_RECORD_REGISTRY["<class 'transformers.models.llama.modeling_llama.LlamaModel'>"]['attentions'], 749732656), type=<class 'transformers.models.llama.modeling_llama.LlamaAttention'>  # capturable_flags = _CAN_RECORD_REGISTRY.get(str(self.__class__)) or {}  # transformers/utils/output_capturing.py:255 in wrapper
| | | +- GuardManager: source=G['__import_transformers_dot_utils_dot_output_capturing'].is_torchdynamo_compiling, accessed_by=GetAttrGuardAccessor(is_torchdynamo_compiling), type=<class 'function'>, tag_safe=(True, False)
| | | | +- GuardManager: source=G['__import_transformers_dot_utils_dot_output_capturing'].is_torchdynamo_compiling.__code__, accessed_by=CodeGuardAccessor, type=<class 'code'>, tag_safe=(True, False)
| | | | | +- ID_MATCH: ___check_obj_id(G['__import_transformers_dot_utils_dot_output_capturing'].is_torchdynamo_compiling.__code__, 140214707876272), type=<code object is_torchdynamo_compiling at 0x7f8647daf1b0, file "/opt/torch/.venv/lib/python3.12/site-packages/transformers/utils/import_utils.py", line 1720>  # if is_torchdynamo_compiling():  # transformers/utils/output_capturing.py:81 in set
+- LAMBDA_GUARD: L['kwargs']['input_ids'] is L['kwargs']['labels']             # if labels is not None:  # transformers/models/llama/modeling_llama.py:483 in forward
+- LAMBDA_GUARD: G['__import_torch_dot_nn_dot_modules_dot_sparse'].F is G['__import_torch_dot_nn_dot_functional']  # if has_torch_function_unary(input):  # nn/functional.py:5415 in pad

Guard latency = 229.40 us)guards";

// The recompile_reasons artifact of captures/llama3_8b_2l_dyntrain.log.gz (compile 0/1): torch logs a
// single reason as plain text.
constexpr std::string_view kDyntrainRecompileReasons =
    "0/0: tensor 'kwargs['input_ids']' size mismatch at index 1. expected 512, actual 768";

std::string samplesPath(std::string_view relative) {
  return std::string(LATHE_SAMPLES_DIR) + "/" + std::string(relative);
}

// A guard or artifact payload of a capture, read with the trace loader.
struct LoggedPayload {
  std::string text;
  uint64_t firstLine = 0;  // file line of the payload's first line
  uint32_t file = 0;       // index into TraceLog::files
};

std::optional<LoggedPayload> guardsOf(const TraceLog& log, std::string_view compileId) {
  const TraceCompile* compile = log.findCompile(compileId);
  if (!compile || compile->guardsEvent < 0) return std::nullopt;
  const auto& event = log.events[static_cast<size_t>(compile->guardsEvent)];
  return LoggedPayload{std::string(log.guards(*compile)), event.line + 1, event.file};
}

std::optional<LoggedPayload> artifactOf(const TraceLog& log, const TraceCompile& compile, std::string_view name) {
  for (size_t e : compile.events) {
    const auto& event = log.events[e];
    if (event.kind == "artifact" && event.name == name) return LoggedPayload{event.payload, event.line + 1, event.file};
  }
  return std::nullopt;
}

uint32_t nodeAtLine(const GuardTree& tree, uint64_t line) {
  for (uint32_t i = 0; i < tree.size(); ++i) {
    if (tree.node(i).line == line) return i;
  }
  ADD_FAILURE() << "no guard node at line " << line;
  return 0;
}

std::string codeOf(const GuardTree& tree, uint32_t i) {
  return std::string(tree.text(tree.node(i).code));
}
std::string typeOf(const GuardTree& tree, uint32_t i) {
  return std::string(tree.text(tree.node(i).type));
}

GuardTree parseTinyTrainExcerpt(Diagnostics& diagnostics) {
  GuardParseOptions options;
  options.file = "llama3_8b_2l_tiny_train.log";
  return parseCppGuards(kTinyTrainExcerpt, options, diagnostics);
}

// Structural invariants every parsed tree must satisfy.
void expectConsistentTree(const GuardTree& tree) {
  for (uint32_t i = 0; i < tree.size(); ++i) {
    const GuardNode& n = tree.node(i);
    ASSERT_GT(n.subtreeEnd, i);
    ASSERT_LE(n.subtreeEnd, tree.size());
    if (n.parent == kNoGuardNode) {
      EXPECT_EQ(n.depth, 0u);
    } else {
      ASSERT_LT(n.parent, i);
      EXPECT_EQ(tree.node(n.parent).kind, GuardNodeKind::Manager);
      EXPECT_EQ(tree.node(n.parent).depth + 1, n.depth);
      EXPECT_LE(n.subtreeEnd, tree.node(n.parent).subtreeEnd);
    }
    if (n.isLeaf()) {
      EXPECT_EQ(n.subtreeEnd, i + 1);
    }
    EXPECT_EQ(tree.children(i).size(), n.childCount);
  }
}

}  // namespace

TEST(CppGuards, CaptureExcerptStructure) {
  Diagnostics diagnostics;
  const GuardTree tree = parseTinyTrainExcerpt(diagnostics);
  EXPECT_TRUE(diagnostics.empty()) << diagnostics.items().front().message;
  expectConsistentTree(tree);
  ASSERT_EQ(tree.size(), 43u);
  EXPECT_EQ(tree.leafCount(), 24u);
  ASSERT_TRUE(tree.latencyMicros().has_value());
  EXPECT_DOUBLE_EQ(*tree.latencyMicros(), 229.40);

  // Top level: the root, then the two epilogue lambda guards torch prints after it.
  const std::vector<uint32_t> top = tree.children(kNoGuardNode);
  ASSERT_EQ(top.size(), 3u);
  EXPECT_EQ(typeOf(tree, top[0]), "RootGuardManager");
  EXPECT_EQ(tree.node(top[0]).subtreeEnd, 41u);
  EXPECT_EQ(typeOf(tree, top[1]), "LAMBDA_GUARD");
  EXPECT_EQ(codeOf(tree, top[1]), "L['kwargs']['input_ids'] is L['kwargs']['labels']");

  std::vector<std::string> rootChildren;
  for (uint32_t c : tree.children(top[0])) {
    const GuardNode& n = tree.node(c);
    rootChildren.push_back(n.isLeaf() ? typeOf(tree, c) : std::string(tree.text(n.source)));
  }
  const std::vector<std::string> expectedRootChildren = {"LAMBDA_GUARD",
                                                         "GLOBAL_STATE",
                                                         "TORCH_FUNCTION_MODE_STACK",
                                                         "DEFAULT_DEVICE",
                                                         "L['args']",
                                                         "L['func']",
                                                         "L['kwargs']",
                                                         "G"};
  EXPECT_EQ(rootChildren, expectedRootChildren);

  // Depth = number of "| ": the deepest leaves sit under a KeyValueManager pair.
  const uint32_t keyEquals = nodeAtLine(tree, 33);
  EXPECT_EQ(tree.node(keyEquals).depth, 7u);
  EXPECT_EQ(typeOf(tree, keyEquals), "EQUALS_MATCH");
  const uint32_t keyManager = tree.node(keyEquals).parent;
  const uint32_t pair = tree.node(keyManager).parent;
  EXPECT_EQ(tree.node(keyManager).line, 32u);
  EXPECT_EQ(typeOf(tree, pair), "KeyValueManager");
  EXPECT_EQ(tree.node(pair).pairIndex, 0);
  EXPECT_EQ(tree.children(pair).size(), 2u);
  EXPECT_EQ(typeOf(tree, tree.node(pair).parent), "DictGuardManager");
  EXPECT_EQ(tree.node(nodeAtLine(tree, 36)).pairIndex, 1);
}

TEST(CppGuards, CountsByType) {
  Diagnostics diagnostics;
  const GuardTree tree = parseTinyTrainExcerpt(diagnostics);
  const std::vector<GuardTypeCount> counts = countGuardsByType(tree);
  std::vector<std::pair<std::string, size_t>> got;
  for (const auto& c : counts) got.emplace_back(c.type, c.count);
  const std::vector<std::pair<std::string, size_t>> expected = {{"ID_MATCH", 5},
                                                                {"DICT_CONTAINS", 3},
                                                                {"LAMBDA_GUARD", 3},
                                                                {"TYPE_MATCH", 3},
                                                                {"EQUALS_MATCH", 2},
                                                                {"DEFAULT_DEVICE", 1},
                                                                {"DICT_LENGTH", 1},
                                                                {"GLOBAL_STATE", 1},
                                                                {"LENGTH_CHECK", 1},
                                                                {"NO_HASATTR", 1},
                                                                {"NO_TENSOR_ALIASING", 1},
                                                                {"TENSOR_MATCH", 1},
                                                                {"TORCH_FUNCTION_MODE_STACK", 1}};
  EXPECT_EQ(got, expected);
}

TEST(CppGuards, ManagerFields) {
  Diagnostics diagnostics;
  const GuardTree tree = parseTinyTrainExcerpt(diagnostics);
  const GuardNode& args = tree.node(nodeAtLine(tree, 8));
  EXPECT_EQ(args.kind, GuardNodeKind::Manager);
  EXPECT_EQ(tree.text(args.type), "GuardManager");
  EXPECT_EQ(tree.text(args.source), "L['args']");
  EXPECT_EQ(tree.text(args.accessor), "FrameLocalsGuardAccessor(key='args', framelocals_idx=1)");
  EXPECT_EQ(tree.text(args.pythonType), "<class 'tuple'>");
  EXPECT_EQ(tree.text(args.tagSafe), "(True, False)");

  const GuardNode& globals = tree.node(nodeAtLine(tree, 23));
  EXPECT_EQ(tree.text(globals.source), "G");
  EXPECT_EQ(tree.text(globals.accessor), "GlobalsGuardAccessor");

  // Sources and accessors holding quotes of both kinds.
  const GuardNode& dict = tree.node(nodeAtLine(tree, 28));
  EXPECT_EQ(tree.text(dict.source),
            "G['__import_transformers_dot_utils_dot_output_capturing']._CAN_RECORD_REGISTRY[\"<class "
            "'transformers.models.llama.modeling_llama.LlamaModel'>\"]");
  EXPECT_EQ(tree.text(dict.accessor),
            "DictGetItemGuardAccessor(\"<class 'transformers.models.llama.modeling_llama.LlamaModel'>\")");
  EXPECT_EQ(tree.text(dict.pythonType), "<class 'dict'>");

  const GuardNode& key = tree.node(nodeAtLine(tree, 32));
  EXPECT_EQ(key.dictRole, DictEntryRole::Key);
  EXPECT_EQ(tree.text(key.type), "GuardManager");
  EXPECT_EQ(tree.text(key.source),
            "list(dict.keys(G['__import_transformers_dot_utils_dot_output_capturing']._CAN_RECORD_REGISTRY[\"<class "
            "'transformers.models.llama.modeling_llama.LlamaModel'>\"]))[0]");
  EXPECT_TRUE(key.accessor.empty());
  EXPECT_EQ(tree.text(key.pythonType), "<class 'str'>");
  EXPECT_EQ(tree.node(nodeAtLine(tree, 34)).dictRole, DictEntryRole::Value);
}

TEST(CppGuards, LeafCodeAndComment) {
  Diagnostics diagnostics;
  const GuardTree tree = parseTinyTrainExcerpt(diagnostics);

  // Padding, then only a location.
  const GuardNode& device = tree.node(nodeAtLine(tree, 7));
  EXPECT_EQ(tree.text(device.code), "utils_device.CURRENT_DEVICE == None");
  EXPECT_TRUE(device.userSource.empty());
  EXPECT_EQ(tree.text(device.userFile), "_dynamo/output_graph.py");
  EXPECT_EQ(device.userLine, 951u);
  EXPECT_EQ(tree.text(device.userFunction), "init_ambient_guards");
  EXPECT_TRUE(device.note.empty());
  EXPECT_EQ(tree.text(device.note), "");

  // User source, location and a hint.
  const GuardNode& typeMatch = tree.node(nodeAtLine(tree, 9));
  EXPECT_EQ(tree.text(typeMatch.code), "___check_type_id(L['args'], 10759232), type=<class 'tuple'>");
  EXPECT_EQ(tree.text(typeMatch.userSource), "output = func(self, *args, **kwargs)");
  EXPECT_EQ(tree.text(typeMatch.userFile), "transformers/utils/generic.py");
  EXPECT_EQ(typeMatch.userLine, 939u);
  EXPECT_EQ(tree.text(typeMatch.userFunction), "wrapper");
  EXPECT_EQ(tree.text(typeMatch.note), "HINT: type tuple");

  // A repr with commas and quotes inside the code.
  const GuardNode& code = tree.node(nodeAtLine(tree, 13));
  EXPECT_EQ(tree.text(code.code),
            "___check_obj_id(L['func'].__code__, 744758176), type=<code object forward at 0x2c641ba0, file "
            "\"/opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py\", line 436>");
  EXPECT_EQ(tree.text(code.userSource), "output = func(self, *args, **kwargs)");

  // JSON in the code, no comment.
  const GuardNode& globalState = tree.node(nodeAtLine(tree, 5));
  EXPECT_TRUE(tree.text(globalState.code).starts_with("___check_global_state() against {\"allow_bf16_reduce\":0,"));
  EXPECT_TRUE(tree.text(globalState.code).ends_with("\"torch_function_all_disabled\":false}"));
  EXPECT_TRUE(globalState.userFile.empty());
  EXPECT_TRUE(globalState.note.empty());

  const GuardNode& hasattr = tree.node(nodeAtLine(tree, 20));
  EXPECT_EQ(tree.text(hasattr.userSource), "if (input_ids is None) ^ (inputs_embeds is not None):");
  EXPECT_EQ(hasattr.userLine, 377u);
}

TEST(CppGuards, CommentForms) {
  // Comment shapes seen in our captures (gpt2, llama dyntrain), on synthetic guards.
  const std::string payload =
      "TREE_GUARD_MANAGER:\n"
      "+- RootGuardManager\n"
      "| +- DICT_CONTAINS: not ___dict_contains('__getitem__', G['F'].__dict__)  #   # <frozen "
      "_collections_abc>:813 in __contains__\n"
      "| +- LAMBDA_GUARD: (L['x'].size()[1] % 8) == 0  # (_inductor/ir.py:448 in is_aligned_realized_tensor)\n"
      "| +- LAMBDA_GUARD: L['x'].stride()[0] == L['x'].size()[1]  # (unknown source L['x'].stride()[0], please "
      "file a bug)\n"
      "| +- LAMBDA_GUARD: 2 <= L['x'].size()[1] <= 1279  # if x is None:  # m/model.py:377 in forward (user code "
      "shown is first use of this value; try mark_unbacked(tensor, dim)) \n"
      "| +- EQUALS_MATCH: L['tag'] == '  # not a comment'  # y = f(x)  # keep  # m/model.py:12 in f\n"
      "| +- EQUALS_MATCH: L['sep'] == 'a\\nb\\'  # c'  # s = sep  # m/model.py:13 in f\n"
      "| +- FANCY_NEW_GUARD: something_new(L['x'])\n"
      "| +- NO_TENSOR_ALIASING\n";
  Diagnostics diagnostics;
  const GuardTree tree = parseCppGuards(payload, {}, diagnostics);
  EXPECT_TRUE(diagnostics.empty());
  ASSERT_EQ(tree.size(), 9u);

  const GuardNode& frozen = tree.node(1);
  EXPECT_EQ(tree.text(frozen.code), "not ___dict_contains('__getitem__', G['F'].__dict__)");
  EXPECT_TRUE(frozen.userSource.empty());
  EXPECT_EQ(tree.text(frozen.userFile), "<frozen _collections_abc>");
  EXPECT_EQ(frozen.userLine, 813u);

  const GuardNode& inParens = tree.node(2);
  EXPECT_EQ(tree.text(inParens.userFile), "_inductor/ir.py");
  EXPECT_EQ(inParens.userLine, 448u);
  EXPECT_EQ(tree.text(inParens.userFunction), "is_aligned_realized_tensor");

  const GuardNode& unknown = tree.node(3);
  EXPECT_EQ(tree.text(unknown.code), "L['x'].stride()[0] == L['x'].size()[1]");
  EXPECT_EQ(tree.text(unknown.note), "(unknown source L['x'].stride()[0], please file a bug)");
  EXPECT_TRUE(unknown.userFile.empty());

  const GuardNode& noted = tree.node(4);
  EXPECT_EQ(tree.text(noted.userSource), "if x is None:");
  EXPECT_EQ(noted.userLine, 377u);
  EXPECT_EQ(tree.text(noted.note), "user code shown is first use of this value; try mark_unbacked(tensor, dim)");

  const GuardNode& quoted = tree.node(5);
  EXPECT_EQ(tree.text(quoted.code), "L['tag'] == '  # not a comment'");
  EXPECT_EQ(tree.text(quoted.userSource), "y = f(x)  # keep");
  EXPECT_EQ(tree.text(quoted.userFile), "m/model.py");

  // Escapes inside a string: `\n` and `\'` do not end it.
  EXPECT_EQ(codeOf(tree, 6), "L['sep'] == 'a\\nb\\'  # c'");
  EXPECT_EQ(tree.text(tree.node(6).userSource), "s = sep");

  EXPECT_EQ(typeOf(tree, 7), "FANCY_NEW_GUARD");
  EXPECT_EQ(codeOf(tree, 7), "something_new(L['x'])");
  // A relational guard shared by several managers is printed as its type alone under all but one.
  EXPECT_EQ(typeOf(tree, 8), "NO_TENSOR_ALIASING");
  EXPECT_TRUE(tree.node(8).code.empty());
}

TEST(CppGuards, MultiLineLeafText) {
  const std::string payload =
      "+- RootGuardManager\n"
      "| +- GuardManager: source=L['cfg'], accessed_by=DictGetItemGuardAccessor('cfg')\n"
      "| | +- ID_MATCH: ___check_obj_id(L['cfg'], 42), type=Config(\n"
      "    hidden=256,\n"
      "    heads=8)  # c = cfg.hidden  # m/model.py:3 in build\n"
      "| | +- TYPE_MATCH: ___check_type_id(L['cfg'], 7)\n";
  Diagnostics diagnostics;
  const GuardTree tree = parseCppGuards(payload, {}, diagnostics);
  EXPECT_TRUE(diagnostics.empty());
  ASSERT_EQ(tree.size(), 4u);
  EXPECT_EQ(codeOf(tree, 2), "___check_obj_id(L['cfg'], 42), type=Config(\n    hidden=256,\n    heads=8)");
  EXPECT_EQ(tree.text(tree.node(2).userSource), "c = cfg.hidden");
  EXPECT_EQ(tree.node(2).userLine, 3u);
  EXPECT_EQ(tree.node(2).line, 3u);
  EXPECT_EQ(tree.node(3).line, 6u);
  EXPECT_EQ(tree.node(3).parent, 1u);
}

TEST(CppGuards, DamageBecomesWarningsWithLines) {
  const std::string payload =
      "\n"
      "TREE_GUARD_MANAGER:\n"
      "+- RootGuardManager\n"
      "| +- GuardManager: source=L['x'], accessed_by=DictGetItemGuardAccessor('x')\n"
      "this line is noise\n"
      "| | | | +- TYPE_MATCH: ___check_type_id(L['x'], 1)\n"  // no manager at depth 3
      "| | +- TENSOR_MATCH check_tensor(L['x'])\n"            // no ':' after the type
      "| | +- NO_HASATTR: hasattr(L['x'], 'y') == False\n"
      "| | | +- TYPE_MATCH: ___check_type_id(L['x'], 2)\n"  // under a leaf
      "| +- GuardManager: source=L['y'], accessed_by=DictGetItemGuardAccessor('y')\n"
      "| | +- EQUALS_MATCH: L['y'] == 3\n"
      "Guard latency = fast\n";
  GuardParseOptions options;
  options.file = "trace.log";
  options.firstLine = 100;
  Diagnostics diagnostics;
  const GuardTree tree = parseCppGuards(payload, options, diagnostics);
  expectConsistentTree(tree);
  ASSERT_EQ(tree.size(), 5u);
  EXPECT_EQ(typeOf(tree, 2), "NO_HASATTR");
  EXPECT_EQ(tree.node(2).line, 107u);
  EXPECT_EQ(tree.node(4).parent, 3u);
  EXPECT_FALSE(tree.latencyMicros().has_value());

  std::vector<uint64_t> lines;
  for (const Diagnostic& d : diagnostics.items()) {
    EXPECT_EQ(d.severity, Severity::Warning);
    EXPECT_EQ(d.where.file, "trace.log");
    lines.push_back(d.where.line);
  }
  EXPECT_EQ(lines, (std::vector<uint64_t>{104, 105, 106, 108, 111}));
  EXPECT_EQ(diagnostics.countCode("guard_line_depth"), 2u);
}

TEST(CppGuards, TruncatedAndEmptyInput) {
  Diagnostics diagnostics;
  EXPECT_EQ(parseCppGuards("", {}, diagnostics).size(), 0u);
  EXPECT_TRUE(diagnostics.empty());

  // Every prefix of a real payload parses without a crash and keeps a consistent tree.
  for (size_t cut = 0; cut < kTinyTrainExcerpt.size(); cut += 97) {
    Diagnostics d;
    const GuardTree tree = parseCppGuards(kTinyTrainExcerpt.substr(0, cut), {}, d);
    expectConsistentTree(tree);
    EXPECT_LE(tree.size(), 43u);
  }
  // Cut inside a quoted repr: the open quote must not swallow the rest of the payload.
  const std::string cutQuote = std::string(kTinyTrainExcerpt.substr(0, kTinyTrainExcerpt.find("'tuple'>   #") + 2)) +
                               "\n| +- GuardManager: source=L['z'], accessed_by=DictGetItemGuardAccessor('z')\n";
  Diagnostics d;
  const GuardTree tree = parseCppGuards(cutQuote, {}, d);
  ASSERT_GE(tree.size(), 2u);
  EXPECT_EQ(tree.text(tree.node(static_cast<uint32_t>(tree.size() - 1)).source), "L['z']");
}

TEST(CppGuards, ProgressAndCancellation) {
  std::vector<std::pair<uint64_t, uint64_t>> reports;
  std::atomic<bool> cancel{false};
  Progress progress;
  progress.report = [&](uint64_t done, uint64_t total) { reports.emplace_back(done, total); };
  progress.cancel = &cancel;
  GuardParseOptions options;
  options.progress = &progress;
  Diagnostics diagnostics;
  EXPECT_EQ(parseCppGuards(kTinyTrainExcerpt, options, diagnostics).size(), 43u);
  ASSERT_FALSE(reports.empty());
  EXPECT_EQ(reports.back(), std::make_pair(uint64_t{kTinyTrainExcerpt.size()}, uint64_t{kTinyTrainExcerpt.size()}));

  cancel = true;
  try {
    (void)parseCppGuards(kTinyTrainExcerpt, options, diagnostics);
    ADD_FAILURE() << "cancellation ignored";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Cancelled);
  }
  EXPECT_THROW((void)parseJsonGuards("[\n]", options, diagnostics), Error);
}

TEST(CppGuards, DeeplyNestedInput) {
  constexpr uint32_t kDepth = 2000;
  std::string payload;
  for (uint32_t d = 0; d < kDepth; ++d) {
    for (uint32_t i = 0; i < d; ++i) payload += "| ";
    payload += "+- GuardManager: source=L['x'], accessed_by=GetAttrGuardAccessor(a)\n";
  }
  for (uint32_t i = 0; i < kDepth; ++i) payload += "| ";
  payload += "+- EQUALS_MATCH: L['x'] == 1\n";
  payload += std::string(100000, '(') + "\n" + std::string(200000, '|') + "\n";
  Diagnostics diagnostics;
  const GuardTree tree = parseCppGuards(payload, {}, diagnostics);
  ASSERT_EQ(tree.size(), kDepth + 1);
  EXPECT_EQ(tree.node(kDepth).depth, kDepth);
  EXPECT_EQ(tree.node(0).subtreeEnd, kDepth + 1);
  EXPECT_EQ(guardPath(tree, kDepth), "L['x']");
  EXPECT_EQ(diagnostics.countCode("guard_line_unparsed"), 2u);
}

TEST(JsonGuards, InferredTypesAndStacks) {
  // The dynamo_guards shape (formats.md §4), with a user stack whose file is an interned id.
  const std::string payload =
      "[\n"
      R"j({"code": "hasattr(L['x'], '_dynamo_dynamic_indices') == False", "stack": null, "user_stack": null},)j"
      "\n"
      R"j({"code": "utils_device.CURRENT_DEVICE == None", "stack": [{"line": 10079, "name": "<module>", "filename": 0}, {"line": 425, "name": "init_ambient_guards", "filename": 13}], "user_stack": null},)j"
      "\n"
      R"j({"code": "check_tensor(L['x'], Tensor, DispatchKeySet(CPU, BackendSelect, ADInplaceOrView, AutogradCPU), torch.float32, device=None, requires_grad=False, size=[4, 4], stride=[4, 1])", "stack": null, "user_stack": [{"line": 7, "name": "fn", "filename": 2, "loc": "return x + 1"}]},)j"
      "\n"
      R"j({"code": "L['n'] == 3", "stack": null, "user_stack": null})j"
      "\n]";
  GuardParseOptions options;
  options.file = "comp.log";
  options.firstLine = 25;
  options.internedString = [](int64_t id) -> std::optional<std::string> {
    if (id == 2) return "test/model.py";
    return std::nullopt;
  };
  Diagnostics diagnostics;
  const GuardTree tree = parseJsonGuards(payload, options, diagnostics);
  EXPECT_TRUE(diagnostics.empty());
  expectConsistentTree(tree);
  ASSERT_EQ(tree.size(), 5u);
  EXPECT_EQ(typeOf(tree, 0), "RootGuardManager");
  EXPECT_EQ(tree.children(0).size(), 4u);
  EXPECT_EQ(typeOf(tree, 1), "NO_HASATTR");
  EXPECT_EQ(typeOf(tree, 2), "DEFAULT_DEVICE");
  EXPECT_EQ(typeOf(tree, 3), "TENSOR_MATCH");
  EXPECT_EQ(typeOf(tree, 4), "LAMBDA_GUARD");
  EXPECT_EQ(tree.node(1).line, 26u);
  EXPECT_EQ(tree.node(4).line, 29u);

  EXPECT_EQ(tree.node(2).userLine, 425u);
  EXPECT_EQ(tree.text(tree.node(2).userFunction), "init_ambient_guards");
  EXPECT_TRUE(tree.node(2).userFile.empty());  // id 13 is not in the table
  EXPECT_EQ(tree.text(tree.node(3).userFile), "test/model.py");
  EXPECT_EQ(tree.text(tree.node(3).userSource), "return x + 1");
  EXPECT_EQ(guardPath(tree, 3), "L['x']");
  EXPECT_EQ(guardPath(tree, 1), "L['x']");

  const auto tensor = parseTensorMatch(codeOf(tree, 3));
  ASSERT_TRUE(tensor.has_value());
  EXPECT_FALSE(tensor->deviceIndex.has_value());
  EXPECT_EQ(tensor->dtype, ir::DType::F32);
  EXPECT_EQ(tensor->dispatchKeys.front(), "CPU");
}

TEST(JsonGuards, DamagedListIsReadEntryByEntry) {
  const std::string payload =
      "[\n"
      R"j({"code": "___check_type_id(L['a'], 1)", "stack": null, "user_stack": null},)j"
      "\n"
      R"j({"code": "___check_obj_id(L['b'], 2)", "stack": nu)j"
      "\n"
      R"j({"stack": null},)j"
      "\n,\n"
      R"j({"code": "not ___dict_contains('k', L['d'])", "stack": null, "user_stack": null})j"
      "\n]";
  GuardParseOptions options;
  options.file = "damaged.log";
  options.firstLine = 10;
  Diagnostics diagnostics;
  const GuardTree tree = parseJsonGuards(payload, options, diagnostics);
  ASSERT_EQ(tree.size(), 3u);
  EXPECT_EQ(typeOf(tree, 1), "TYPE_MATCH");
  EXPECT_EQ(typeOf(tree, 2), "DICT_CONTAINS");
  EXPECT_EQ(tree.node(2).line, 15u);
  EXPECT_EQ(diagnostics.countCode("guard_json_damaged"), 1u);
  ASSERT_EQ(diagnostics.countCode("guard_json_entry_unreadable"), 3u);
  EXPECT_EQ(diagnostics.items()[1].where.line, 12u);
  EXPECT_EQ(diagnostics.items()[2].where.line, 13u);
  EXPECT_EQ(diagnostics.items()[3].where.line, 14u);  // a stray ","

  Diagnostics notList;
  EXPECT_EQ(parseJsonGuards(R"j({"code": "x"})j", {}, notList).leafCount(), 0u);
  EXPECT_EQ(notList.countCode("guard_json_not_list"), 1u);
  Diagnostics garbage;
  EXPECT_EQ(parseJsonGuards(std::string(100000, '['), {}, garbage).leafCount(), 0u);
  EXPECT_FALSE(garbage.empty());
}

TEST(JsonGuards, ThirdPartySampleWithJsonGuards) {
  // tlparse's comp_metrics.log (torch of 2024) has three `dynamo_guards` payloads.
  const TraceLog log = loadTraceLog(samplesPath("tlparse/comp_metrics.log"));
  size_t payloads = 0;
  for (const TraceCompile& compile : log.compiles) {
    if (compile.guardFormat != GuardFormat::Json) continue;
    ++payloads;
    const auto payload = guardsOf(log, compile.id);
    ASSERT_TRUE(payload.has_value());
    GuardParseOptions options;
    options.file = "comp_metrics.log";
    options.firstLine = payload->firstLine;
    options.internedString = [&](int64_t id) -> std::optional<std::string> {
      const auto& strings = log.files[payload->file].strings;
      const auto it = strings.find(id);
      return it == strings.end() ? std::nullopt : std::optional<std::string>(it->second);
    };
    Diagnostics diagnostics;
    const GuardTree tree = parseJsonGuards(payload->text, options, diagnostics);
    EXPECT_TRUE(diagnostics.empty());
    std::vector<std::string> types;
    for (uint32_t leaf = 1; leaf < tree.size(); ++leaf) types.push_back(typeOf(tree, leaf));
    EXPECT_EQ(types, (std::vector<std::string>{"NO_HASATTR", "DEFAULT_DEVICE", "TENSOR_MATCH"}));
    EXPECT_EQ(tree.node(1).line, payload->firstLine + 1);
    // The innermost frame of the stack, its file name resolved through the log's string table.
    EXPECT_EQ(tree.node(2).userLine, 425u);
    EXPECT_EQ(tree.text(tree.node(2).userFunction), "init_ambient_guards");
    EXPECT_TRUE(tree.text(tree.node(2).userFile).ends_with("torch/_dynamo/output_graph.py"));
    const auto tensor = parseTensorMatch(codeOf(tree, 3));
    ASSERT_TRUE(tensor.has_value());
    EXPECT_EQ(tensor->sizes, (std::vector<std::optional<int64_t>>{4, 4}));
  }
  EXPECT_EQ(payloads, 3u);
}

TEST(TensorMatch, FieldsOfCaptureGuards) {
  Diagnostics diagnostics;
  const GuardTree tree = parseTinyTrainExcerpt(diagnostics);
  const uint32_t leaf = nodeAtLine(tree, 19);
  ASSERT_EQ(typeOf(tree, leaf), "TENSOR_MATCH");
  const auto m = parseTensorMatch(codeOf(tree, leaf));
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->source, "L['kwargs']['input_ids']");
  EXPECT_EQ(m->tensorType, "Tensor");
  EXPECT_EQ(m->dispatchKeys, (std::vector<std::string>{"CUDA", "BackendSelect", "ADInplaceOrView", "AutogradCUDA"}));
  EXPECT_EQ(m->dtypeName, "torch.int64");
  EXPECT_EQ(m->dtype, ir::DType::I64);
  EXPECT_EQ(m->deviceIndex, 0);
  EXPECT_FALSE(m->requiresGrad);
  EXPECT_EQ(m->sizes, (std::vector<std::optional<int64_t>>{1, 64}));
  EXPECT_EQ(m->strides, (std::vector<std::optional<int64_t>>{64, 1}));

  // The recompiled guard of llama3_8b_2l_dyntrain (compile 0/1): the sequence dimension is dynamic.
  const auto dynamic = parseTensorMatch(
      "check_tensor(L['kwargs']['input_ids'], Tensor, DispatchKeySet(CUDA, BackendSelect, ADInplaceOrView, "
      "AutogradCUDA), torch.int64, device=0, requires_grad=False, size=[1, None], stride=[None, 1])");
  ASSERT_TRUE(dynamic.has_value());
  EXPECT_EQ(dynamic->sizes, (std::vector<std::optional<int64_t>>{1, std::nullopt}));
  EXPECT_EQ(dynamic->strides, (std::vector<std::optional<int64_t>>{std::nullopt, 1}));

  const auto param = parseTensorMatch(
      "check_tensor(L['w'], Parameter, DispatchKeySet(CUDA, BackendSelect, ADInplaceOrView, AutogradCUDA), "
      "torch.bfloat16, device=1, requires_grad=True, size=[], stride=[])");
  ASSERT_TRUE(param.has_value());
  EXPECT_TRUE(param->requiresGrad);
  EXPECT_EQ(param->dtype, ir::DType::BF16);
  EXPECT_EQ(param->deviceIndex, 1);
  EXPECT_TRUE(param->sizes.empty());

  EXPECT_FALSE(parseTensorMatch("___check_type_id(L['x'], 1)").has_value());
  EXPECT_FALSE(parseTensorMatch("check_tensor(L['x'], Tensor, DispatchKeySet(CPU), torch.float32, size=[2, x])"));
  EXPECT_FALSE(parseTensorMatch("check_tensor(L['x'], Tensor, DispatchKeySet(CPU), torch.float32, size=[2]"));
  EXPECT_FALSE(parseTensorMatch("check_tensor(L['x'], Tensor)"));
}

TEST(RecompileReasons, CaptureArtifact) {
  GuardParseOptions options;
  options.file = "llama3_8b_2l_dyntrain.log";
  Diagnostics diagnostics;
  const auto reasons = parseRecompileReasons(kDyntrainRecompileReasons, options, diagnostics);
  EXPECT_TRUE(diagnostics.empty());
  ASSERT_EQ(reasons.size(), 1u);
  EXPECT_EQ(reasons[0].compileId, "0/0");
  EXPECT_EQ(reasons[0].reason, "tensor 'kwargs['input_ids']' size mismatch at index 1. expected 512, actual 768");
  EXPECT_TRUE(reasons[0].userStack.empty());

  // A single reason with the user stack torch appends spans several lines.
  Diagnostics multiLine;
  const auto withStack = parseRecompileReasons(
      "0/2: L['n'] == 3\nUser stack trace:\n  File \"m.py\", line 4, in f\n    if n == 3:", options, multiLine);
  EXPECT_TRUE(multiLine.empty());
  ASSERT_EQ(withStack.size(), 1u);
  EXPECT_EQ(withStack[0].compileId, "0/2");
  EXPECT_EQ(withStack[0].reason, "L['n'] == 3");
  EXPECT_EQ(withStack[0].userStack, "File \"m.py\", line 4, in f\n    if n == 3:");
}

TEST(RecompileReasons, FormsAndDamage) {
  const std::string payload = R"j([
"0/0: ___check_obj_id(fn, 140439264606080)                   ",
"!3/0/1: L['x'] == 3  # if x == 3:  # m.py:4 in f\nUser stack trace:\n  File \"m.py\", line 4, in f\n    if x == 3:",
"1/2_1: tensor 'L['y']' dtype mismatch. expected Float, actual Half",
42,
"no id here"
])j";
  GuardParseOptions options;
  options.file = "reasons.log";
  options.firstLine = 50;
  Diagnostics diagnostics;
  const auto reasons = parseRecompileReasons(payload, options, diagnostics);
  ASSERT_EQ(reasons.size(), 4u);
  EXPECT_EQ(reasons[0].reason, "___check_obj_id(fn, 140439264606080)");
  EXPECT_EQ(reasons[1].compileId, "!3/0/1");
  EXPECT_EQ(reasons[1].reason, "L['x'] == 3  # if x == 3:  # m.py:4 in f");
  EXPECT_EQ(reasons[1].userStack, "File \"m.py\", line 4, in f\n    if x == 3:");
  EXPECT_EQ(reasons[2].compileId, "1/2_1");
  EXPECT_TRUE(reasons[3].compileId.empty());
  EXPECT_EQ(reasons[3].reason, "no id here");
  ASSERT_EQ(diagnostics.size(), 2u);
  EXPECT_EQ(diagnostics.items()[0].code, "recompile_reason_unreadable");
  EXPECT_EQ(diagnostics.items()[0].where.line, 54u);
  EXPECT_EQ(diagnostics.items()[1].where.line, 55u);

  Diagnostics broken;
  EXPECT_TRUE(parseRecompileReasons("[\n\"0/0: x\",\n\"0/1: y", options, broken).empty());
  ASSERT_EQ(broken.size(), 1u);
  EXPECT_EQ(broken.items()[0].where.line, 52u);
}

TEST(RecompileReasons, StripLocalScopeAsTorch) {
  EXPECT_EQ(stripLocalScope("tensor 'L['x']' size mismatch"), "tensor 'x' size mismatch");
  EXPECT_EQ(stripLocalScope("L['kwargs']['input_ids']"), "kwargs['input_ids']");
  EXPECT_EQ(stripLocalScope("L[ \"a b\" ].size()[0] == G['c']"), "a b.size()[0] == G['c']");
  EXPECT_EQ(stripLocalScope("L['x\n'] L['"), "L['x\n'] L['");
  EXPECT_EQ(stripLocalScope("no locals"), "no locals");
}

TEST(RecompileReasons, MatchesGuardsOfTheFailedCompile) {
  Diagnostics diagnostics;
  const GuardTree tree = parseTinyTrainExcerpt(diagnostics);
  const uint32_t tensorLeaf = nodeAtLine(tree, 19);

  RecompileReason tensorReason{"0/0", "tensor 'kwargs['input_ids']' size mismatch at index 1. expected 64, actual 96",
                               ""};
  EXPECT_EQ(matchRecompileReason(tensorReason, tree), std::vector<uint32_t>{tensorLeaf});
  tensorReason.reason = "tensor 'L['kwargs']['input_ids']' stride mismatch at index 0. expected 64, actual 96";
  EXPECT_EQ(matchRecompileReason(tensorReason, tree), std::vector<uint32_t>{tensorLeaf});

  // A failed non-tensor guard is reported as its (local-scope stripped) code with torch's comment.
  const uint32_t dictLength = nodeAtLine(tree, 17);
  const RecompileReason codeReason{
      "0/0",
      "len(kwargs) == 2                                         # output = func(self, *args, **kwargs)  # "
      "transformers/utils/generic.py:939 in wrapper",
      ""};
  EXPECT_EQ(matchRecompileReason(codeReason, tree), std::vector<uint32_t>{dictLength});

  const RecompileReason twoReasons{"0/0", "len(kwargs) == 2; tensor 'kwargs['input_ids']' rank mismatch", ""};
  EXPECT_EQ(matchRecompileReason(twoReasons, tree), (std::vector<uint32_t>{dictLength, tensorLeaf}));

  EXPECT_TRUE(matchRecompileReason({"0/0", "tensor 'nothing' size mismatch at index 0", ""}, tree).empty());
  EXPECT_TRUE(matchRecompileReason({"0/0", "", ""}, tree).empty());
}

TEST(GuardDiff, SyntheticTrees) {
  const std::string before =
      "+- RootGuardManager\n"
      "| +- GuardManager: source=L['x'], accessed_by=DictGetItemGuardAccessor('x')\n"
      "| | +- TENSOR_MATCH: check_tensor(L['x'], Tensor, DispatchKeySet(CPU), torch.float32, device=None, "
      "requires_grad=False, size=[2], stride=[1])\n"
      "| | +- NO_HASATTR: hasattr(L['x'], '_dynamo_dynamic_indices') == False\n"
      "| +- GuardManager: source=L['n'], accessed_by=DictGetItemGuardAccessor('n')\n"
      "| | +- EQUALS_MATCH: L['n'] == 3\n";
  const std::string after =
      "+- RootGuardManager\n"
      "| +- GuardManager: source=L['x'], accessed_by=DictGetItemGuardAccessor('x')\n"
      "| | +- TENSOR_MATCH: check_tensor(L['x'], Tensor, DispatchKeySet(CPU), torch.float32, device=None, "
      "requires_grad=False, size=[None], stride=[1])\n"
      "| | +- NO_HASATTR: hasattr(L['x'], '_dynamo_dynamic_indices') == False  # x.sum()  # m.py:2 in f\n"
      "+- LAMBDA_GUARD: 2 <= L['x'].size()[0]\n";
  Diagnostics diagnostics;
  const GuardTree a = parseCppGuards(before, {}, diagnostics);
  const GuardTree b = parseCppGuards(after, {}, diagnostics);
  ASSERT_TRUE(diagnostics.empty());
  const GuardDiff diff = diffGuards(a, b);
  EXPECT_EQ(diff.unchanged, 1u);  // NO_HASATTR: same code, only the comment differs
  ASSERT_EQ(diff.entries.size(), 3u);
  EXPECT_EQ(diff.entries[0].change, GuardChange::Changed);
  EXPECT_EQ(diff.entries[0].path, "L['x']");
  EXPECT_EQ(diff.entries[0].type, "TENSOR_MATCH");
  EXPECT_EQ(diff.entries[0].before, 2u);
  EXPECT_EQ(diff.entries[0].after, 2u);
  EXPECT_EQ(diff.entries[1].change, GuardChange::Added);
  EXPECT_EQ(diff.entries[1].type, "LAMBDA_GUARD");
  EXPECT_EQ(diff.entries[1].before, kNoGuardNode);
  EXPECT_EQ(diff.entries[2].change, GuardChange::Removed);
  EXPECT_EQ(diff.entries[2].path, "L['n']");
  EXPECT_EQ(guardChangeName(diff.entries[2].change), "removed");

  const GuardDiff same = diffGuards(a, a);
  EXPECT_TRUE(same.entries.empty());
  EXPECT_EQ(same.unchanged, a.leafCount());
}

// Whole payloads of our captures, read from the samples.

TEST(CaptureGuards, TinyTrainWholeTree) {
  const TraceLog log = loadTraceLog(samplesPath("captures/llama3_8b_2l_tiny_train.log.gz"));
  const auto payload = guardsOf(log, "0/0");
  ASSERT_TRUE(payload.has_value());
  GuardParseOptions options;
  options.file = "llama3_8b_2l_tiny_train.log.gz";
  options.firstLine = payload->firstLine;
  Diagnostics diagnostics;
  const GuardTree tree = parseCppGuards(payload->text, options, diagnostics);
  EXPECT_TRUE(diagnostics.empty());
  expectConsistentTree(tree);
  EXPECT_EQ(tree.size(), 867u);
  EXPECT_EQ(tree.leafCount(), 407u);
  EXPECT_EQ(tree.node(0).line, payload->firstLine + 2);  // after the empty line and the header
  uint32_t maxDepth = 0;
  for (const GuardNode& n : tree.nodes()) maxDepth = std::max(maxDepth, n.depth);
  EXPECT_EQ(maxDepth, 21u);
  // Counted independently from the payload text (one "+- TYPE:" per leaf line).
  const std::vector<GuardTypeCount> counts = countGuardsByType(tree);
  ASSERT_GE(counts.size(), 5u);
  EXPECT_EQ(counts[0].type, "ID_MATCH");
  EXPECT_EQ(counts[0].count, 119u);
  EXPECT_EQ(counts[1].type, "TYPE_MATCH");
  EXPECT_EQ(counts[1].count, 94u);
  EXPECT_EQ(counts[2].type, "DICT_CONTAINS");
  EXPECT_EQ(counts[2].count, 71u);
  EXPECT_EQ(counts[3].type, "EQUALS_MATCH");
  EXPECT_EQ(counts[3].count, 28u);
  EXPECT_EQ(counts[4].type, "TENSOR_MATCH");
  EXPECT_EQ(counts[4].count, 23u);
  // Every TENSOR_MATCH reads, and its source is the manager it sits under.
  for (uint32_t i = 0; i < tree.size(); ++i) {
    if (typeOf(tree, i) != "TENSOR_MATCH") continue;
    const auto m = parseTensorMatch(codeOf(tree, i));
    ASSERT_TRUE(m.has_value()) << codeOf(tree, i);
    EXPECT_EQ(m->source, guardPath(tree, i));
    EXPECT_EQ(m->sizes.size(), m->strides.size());
  }
}

TEST(CaptureGuards, DyntrainRecompileAndDiff) {
  const TraceLog log = loadTraceLog(samplesPath("captures/llama3_8b_2l_dyntrain.log.gz"));
  const auto first = guardsOf(log, "0/0");
  const auto second = guardsOf(log, "0/1");
  ASSERT_TRUE(first && second);
  Diagnostics diagnostics;
  const GuardTree before = parseCppGuards(first->text, {}, diagnostics);
  const GuardTree after = parseCppGuards(second->text, {}, diagnostics);
  EXPECT_TRUE(diagnostics.empty());

  // The reason of compile 0/1 points at the input_ids TENSOR_MATCH of 0/0, whose size at index 1 is
  // the "expected" value.
  const auto artifact = artifactOf(log, *log.findCompile("0/1"), "recompile_reasons");
  ASSERT_TRUE(artifact.has_value());
  EXPECT_EQ(artifact->text, kDyntrainRecompileReasons);
  const auto reasons = parseRecompileReasons(artifact->text, {}, diagnostics);
  ASSERT_EQ(reasons.size(), 1u);
  const std::vector<uint32_t> matched = matchRecompileReason(reasons[0], before);
  ASSERT_EQ(matched.size(), 1u);
  const auto failed = parseTensorMatch(codeOf(before, matched[0]));
  ASSERT_TRUE(failed.has_value());
  EXPECT_EQ(failed->source, "L['kwargs']['input_ids']");
  EXPECT_EQ(failed->sizes, (std::vector<std::optional<int64_t>>{1, 512}));

  // The diff shows the size becoming dynamic, the shape guards that came with it, and globals that
  // were only renamed (G['__builtins_dict___0'] -> ___2).
  const GuardDiff diff = diffGuards(before, after);
  std::vector<const GuardDiffEntry*> changed;
  size_t addedShapeGuards = 0;
  for (const GuardDiffEntry& e : diff.entries) {
    if (e.change == GuardChange::Changed) changed.push_back(&e);
    if (e.change == GuardChange::Added && e.type == "LAMBDA_GUARD" && e.path.empty()) ++addedShapeGuards;
    if (e.change == GuardChange::Removed) {
      EXPECT_TRUE(e.path.find("__builtins_dict___0") != std::string::npos || e.path.find("_c0") != std::string::npos)
          << e.path;
    }
  }
  ASSERT_EQ(changed.size(), 1u);
  EXPECT_EQ(changed[0]->path, "L['kwargs']['input_ids']");
  EXPECT_EQ(changed[0]->type, "TENSOR_MATCH");
  const auto sizeBefore = parseTensorMatch(codeOf(before, changed[0]->before));
  const auto sizeAfter = parseTensorMatch(codeOf(after, changed[0]->after));
  ASSERT_TRUE(sizeBefore && sizeAfter);
  EXPECT_EQ(sizeBefore->sizes, (std::vector<std::optional<int64_t>>{1, 512}));
  EXPECT_EQ(sizeAfter->sizes, (std::vector<std::optional<int64_t>>{1, std::nullopt}));
  EXPECT_EQ(addedShapeGuards, 3u);
  const size_t removed = static_cast<size_t>(std::count_if(
      diff.entries.begin(), diff.entries.end(), [](const auto& e) { return e.change == GuardChange::Removed; }));
  EXPECT_GT(removed, 0u);
  EXPECT_EQ(diff.entries.size(), changed.size() + addedShapeGuards + 2 * removed);  // each renamed guard re-added
  EXPECT_EQ(diff.unchanged + changed.size() + removed, before.leafCount());
}

TEST(CaptureGuards, ThirdPartyRecompilesMatchTheirGuards) {
  // tlparse's multi_rank_logs rank 1: frame 0 recompiled 14 times as x grew; every reason names the
  // TENSOR_MATCH of an earlier compile, with the size that compile expected.
  const TraceLog log = loadTraceLog(samplesPath("tlparse/multi_rank_logs/dedicated_log_torch_trace_rank_1.log"));
  size_t artifacts = 0, checked = 0;
  for (const TraceCompile& compile : log.compiles) {
    const auto artifact = artifactOf(log, compile, "recompile_reasons");
    if (!artifact) continue;
    ++artifacts;
    Diagnostics diagnostics;
    for (const RecompileReason& reason : parseRecompileReasons(artifact->text, {}, diagnostics)) {
      const auto failed = guardsOf(log, reason.compileId);
      ASSERT_TRUE(failed.has_value()) << reason.compileId;
      const GuardTree tree = parseCppGuards(failed->text, {}, diagnostics);
      const std::vector<uint32_t> matched = matchRecompileReason(reason, tree);
      ASSERT_EQ(matched.size(), 1u) << reason.reason;
      const auto m = parseTensorMatch(codeOf(tree, matched[0]));
      ASSERT_TRUE(m && !m->sizes.empty() && m->sizes[0]);
      const size_t expected = reason.reason.find("expected ");
      ASSERT_NE(expected, std::string::npos);
      EXPECT_EQ(std::to_string(*m->sizes[0]),
                reason.reason.substr(expected + 9, reason.reason.find(',', expected) - expected - 9));
      ++checked;
    }
    EXPECT_TRUE(diagnostics.empty());
  }
  EXPECT_EQ(artifacts, 14u);
  EXPECT_EQ(checked, 14u * 15u / 2u);  // compile 0/k lists the k compiles before it
}
