// torch.export `.pt2` archives (formats.md section 3): the zip container, its ExportedProgram JSON
// per model as an ir::Graph, the graph signature and the stored weights and constants (listed and
// described, never loaded).
//
// Two layouts are read: the PT2 archive (`<root>/archive_format` == "pt2", models/<name>.json,
// data/weights/<name>_weights_config.json) and the flat zip that earlier torch.export.save wrote
// (`serialized_exported_program.json`, `serialized_state_dict.*`). Damage is reported in
// Pt2Archive::diagnostics and loading goes on; only a zip that cannot be opened at all, or one
// that holds no ExportedProgram of either layout, throws Error(BadInput).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/dtype.h"
#include "ir/graph.h"
#include "util/diagnostics.h"
#include "util/progress.h"

namespace lathe::io {

enum class Pt2Layout : uint8_t {
  Archive,  // PT2 archive (torch.export.save, package_pt2)
  Legacy,   // flat zip with serialized_exported_program.json
};

// One member of the zip, as its central directory declares it.
struct Pt2Entry {
  std::string name;  // full name inside the zip, root folder included
  uint64_t size = 0;
  uint64_t compressedSize = 0;
  bool compressed = false;  // anything but "stored"
};

// InputSpec / OutputSpec kinds of torch/_export/serde/schema.py.
enum class Pt2InputKind : uint8_t {
  UserInput,
  Parameter,
  Buffer,
  TensorConstant,
  CustomObject,
  Token,
  ConstantInput,
  Unknown,
};
enum class Pt2OutputKind : uint8_t {
  UserOutput,
  LossOutput,
  BufferMutation,
  GradientToParameter,
  GradientToUserInput,
  UserInputMutation,
  Token,
  ParameterMutation,
  Unknown,
};
// Names as serialized ("parameter", "buffer_mutation", ...).
[[nodiscard]] std::string_view pt2InputKindName(Pt2InputKind kind);
[[nodiscard]] std::string_view pt2OutputKindName(Pt2OutputKind kind);

struct Pt2InputSpec {
  Pt2InputKind kind = Pt2InputKind::Unknown;
  std::string arg;         // the graph value: placeholder name ("p_fc_weight")
  std::string target;      // fqn of the parameter, buffer, constant or object ("fc.weight"); empty for user inputs
  bool persistent = true;  // buffers: false for register_buffer(..., persistent=False)
};

struct Pt2OutputSpec {
  Pt2OutputKind kind = Pt2OutputKind::Unknown;
  std::string arg;     // the graph value returned
  std::string target;  // mutated buffer / parameter, or input whose gradient this is
};

// Value range of a symbol (`range_constraints`); nullopt = unbounded on that side.
struct Pt2RangeConstraint {
  std::string symbol;
  std::optional<int64_t> min, max;
};

// A stored tensor (or object) named by fqn, described from the weights/constants config.
struct Pt2Tensor {
  std::string fqn;
  Pt2InputKind kind = Pt2InputKind::Unknown;  // Parameter, Buffer, TensorConstant, CustomObject
  ir::DType dtype = ir::DType::Unknown;
  std::vector<int64_t> sizes, strides;  // hints where the config holds symbolic sizes
  int64_t storageOffset = 0;            // in elements
  std::string device;                   // "cpu", "cuda:0"; empty when not given
  bool requiresGrad = false;
  bool usePickle = false;  // the record is a torch.save zip (tensor subclass), not raw bytes
  std::string record;      // zip entry holding the storage; empty when unknown (legacy)
  bool recordPresent = false;
  uint64_t recordBytes = 0;  // declared size of that entry

  // Bytes of storage the view reaches: (storageOffset + 1 + sum((size_i - 1) * stride_i)) * itemsize,
  // 0 for an empty tensor.
  [[nodiscard]] uint64_t bytesNeeded() const;
};

struct Pt2Model {
  std::string name;                        // "model" for torch.export.save
  std::string jsonEntry;                   // zip entry of its ExportedProgram JSON
  std::shared_ptr<const ir::Graph> graph;  // finalized; null when the JSON could not be read
  std::vector<Pt2InputSpec> inputs;        // 1:1 with the graph's placeholders
  std::vector<Pt2OutputSpec> outputs;      // 1:1 with the output node's values
  std::vector<Pt2RangeConstraint> rangeConstraints;
  std::string schemaVersion;  // "8.17"; the bare integer of 2023-early 2024 files ("2")
  int64_t schemaMajor = -1, schemaMinor = -1;
  std::string torchVersion;                            // empty in files that predate the field
  std::vector<std::pair<std::string, int64_t>> opset;  // {"aten", 10}
  std::vector<std::string> verifiers;                  // "ATEN", "TRAINING"; legacy `dialect`
  std::vector<std::string> moduleFqns;                 // module_call_graph, in order ("" = root)
  size_t serializedNodes = 0;                          // entries of graph_module.graph.nodes
  std::vector<Pt2Tensor> weights;
  std::vector<Pt2Tensor> constants;
};

struct Pt2Archive {
  std::string file;  // as given, for messages
  Pt2Layout layout = Pt2Layout::Archive;
  std::string root;  // folder every entry sits in, with its trailing '/'; "" for flat zips
  std::vector<Pt2Entry> entries;
  std::string archiveFormat;   // content of <root>archive_format ("pt2")
  int64_t archiveVersion = 0;  // <root>archive_version; missing = 0
  int64_t version = -1;        // <root>.data/version (legacy: `version`); -1 = missing
  std::string byteorder;       // "little"; empty when missing
  std::vector<Pt2Model> models;
  // Legacy layout: records of serialized_state_dict.* (a torch.save zip), listed, never unpickled.
  std::vector<Pt2Entry> stateDictRecords;
  Diagnostics diagnostics;
};

// Bounds on what loading may decompress, against zip bombs and lying headers.
struct Pt2Limits {
  // One JSON member: parsed into a DOM several times its size, and the largest real programs are
  // tens of MB.
  uint64_t maxJsonBytes = uint64_t{256} << 20;
  uint64_t maxTotalBytes = uint64_t{4} << 30;  // everything read while loading one archive
  uint64_t maxRatio = 1100;                    // deflate cannot beat ~1032:1; more means a crafted entry
};

[[nodiscard]] Pt2Archive loadPt2(const std::filesystem::path& path, const Progress& progress = {});
[[nodiscard]] Pt2Archive loadPt2(const std::filesystem::path& path, const Pt2Limits& limits,
                                 const Progress& progress = {});
// The same from bytes in memory (they must outlive the call only). displayName is used in messages.
[[nodiscard]] Pt2Archive loadPt2FromBuffer(std::string_view bytes, std::string_view displayName,
                                           const Pt2Limits& limits = {}, const Progress& progress = {});

// One ExportedProgram JSON document (models/<name>.json, or the legacy serialized_exported_program.json)
// to a model without weights. Damage becomes diagnostics located at `file`; the model's graph is null
// when the text is not JSON or has no graph_module.graph.
[[nodiscard]] Pt2Model parseExportedProgram(std::string_view json, std::string_view modelName, std::string_view file,
                                            Diagnostics& diagnostics, const Progress& progress = {});

}  // namespace lathe::io
