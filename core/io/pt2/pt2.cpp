// The .pt2 container: entries listed through libzip, small members (JSON, version files) read with
// their declared sizes checked first and inflated by zlib under a byte budget, weights never read.
#include "io/pt2/pt2.h"

#include <zip.h>
#include <zlib.h>

#include <algorithm>
#include <limits>
#include <unordered_map>

#include "io/pt2/detail/pt2_json.h"
#include "util/json_limits.h"

namespace lathe::io {

std::string_view pt2InputKindName(Pt2InputKind kind) {
  switch (kind) {
    case Pt2InputKind::UserInput: return "user_input";
    case Pt2InputKind::Parameter: return "parameter";
    case Pt2InputKind::Buffer: return "buffer";
    case Pt2InputKind::TensorConstant: return "tensor_constant";
    case Pt2InputKind::CustomObject: return "custom_obj";
    case Pt2InputKind::Token: return "token";
    case Pt2InputKind::ConstantInput: return "constant_input";
    case Pt2InputKind::Unknown: break;
  }
  return "unknown";
}

std::string_view pt2OutputKindName(Pt2OutputKind kind) {
  switch (kind) {
    case Pt2OutputKind::UserOutput: return "user_output";
    case Pt2OutputKind::LossOutput: return "loss_output";
    case Pt2OutputKind::BufferMutation: return "buffer_mutation";
    case Pt2OutputKind::GradientToParameter: return "gradient_to_parameter";
    case Pt2OutputKind::GradientToUserInput: return "gradient_to_user_input";
    case Pt2OutputKind::UserInputMutation: return "user_input_mutation";
    case Pt2OutputKind::Token: return "token";
    case Pt2OutputKind::ParameterMutation: return "parameter_mutation";
    case Pt2OutputKind::Unknown: break;
  }
  return "unknown";
}

uint64_t Pt2Tensor::bytesNeeded() const {
  constexpr uint64_t kSaturated = std::numeric_limits<uint64_t>::max();
  const bool strided = strides.size() == sizes.size();
  uint64_t elements = 1;  // strided: 1 + sum((size_i - 1) * |stride_i|); else numel
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] <= 0) return 0;
    if (strided) {
      const uint64_t stride =
          strides[i] < 0 ? uint64_t{0} - static_cast<uint64_t>(strides[i]) : static_cast<uint64_t>(strides[i]);
      uint64_t span = 0;
      if (__builtin_mul_overflow(static_cast<uint64_t>(sizes[i] - 1), stride, &span) ||
          __builtin_add_overflow(elements, span, &elements))
        return kSaturated;
    } else if (__builtin_mul_overflow(elements, static_cast<uint64_t>(sizes[i]), &elements)) {
      return kSaturated;
    }
  }
  uint64_t bytes = 0;
  if (__builtin_add_overflow(elements, static_cast<uint64_t>(std::max<int64_t>(storageOffset, 0)), &elements) ||
      __builtin_mul_overflow(elements, uint64_t{ir::dtypeSize(dtype)}, &bytes))
    return kSaturated;
  return bytes;
}

namespace {

using pt2::Json;

constexpr uint64_t kSmallFileBytes = 4096;  // archive_format, version, byteorder
constexpr uint64_t kReadChunk = uint64_t{1} << 20;
constexpr uint64_t kMaxNestedZipBytes = uint64_t{256} << 20;  // legacy state dict read only to list it
// JSON members are parsed into a DOM several times their size, and the largest real programs are
// tens of MB: larger members are refused whatever Pt2Limits::maxJsonBytes allows.
constexpr uint64_t kMaxJsonMemberBytes = uint64_t{256} << 20;

struct ZipDiscard {
  void operator()(zip_t* z) const { zip_discard(z); }
};
using ZipPtr = std::unique_ptr<zip_t, ZipDiscard>;

std::string zipErrorText(int code) {
  zip_error_t e;
  zip_error_init_with_code(&e, code);
  std::string text = zip_error_strerror(&e);
  zip_error_fini(&e);
  return text;
}

// zip_open_from_source takes the source only on success.
ZipPtr openFromBuffer(std::string_view bytes, std::string* why) {
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_buffer_create(bytes.data(), bytes.size(), 0, &error);
  if (!source) {
    *why = zip_error_strerror(&error);
    zip_error_fini(&error);
    return nullptr;
  }
  zip_t* z = zip_open_from_source(source, ZIP_RDONLY, &error);
  if (!z) {
    *why = zip_error_strerror(&error);
    zip_source_free(source);
  }
  zip_error_fini(&error);
  return ZipPtr(z);
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  size_t start = 0;
  while (start < s.size() && s[start] == ' ') ++start;
  return s.substr(start);
}

std::optional<int64_t> parseDecimal(std::string_view s) {
  if (s.empty() || s.size() > 18) return std::nullopt;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

class ArchiveReader {
 public:
  ArchiveReader(zip_t* zip, Pt2Archive& archive, const Pt2Limits& limits, const Progress& progress)
      : zip_(zip), archive_(archive), limits_(limits), progress_(progress) {}

  void load() {
    listEntries();
    if (archive_.entries.empty()) throw Error(ErrorCode::BadInput, "empty zip: no torch.export program", where());
    detectLayout();
    if (archive_.layout == Pt2Layout::Legacy) {
      loadLegacy();
    } else {
      loadArchive();
    }
  }

 private:
  SourceLocation where(std::string_view entry = {}) const {
    return {entry.empty() ? archive_.file : archive_.file + "!" + std::string(entry), 0};
  }
  void warn(std::string code, std::string message, std::string_view entry = {}) {
    archive_.diagnostics.warn(std::move(code), std::move(message), where(entry));
  }
  void note(std::string code, std::string message, std::string_view entry = {}) {
    archive_.diagnostics.note(std::move(code), std::move(message), where(entry));
  }
  bool has(const std::string& name) const { return index_.contains(name); }
  const Pt2Entry* entry(const std::string& name) const {
    auto it = index_.find(name);
    return it == index_.end() ? nullptr : &archive_.entries[it->second.listed];
  }

  void listEntries() {
    const zip_int64_t count = zip_get_num_entries(zip_, 0);
    for (zip_int64_t i = 0; i < count; ++i) {
      if ((i & 4095) == 4095) progress_.checkCancelled();
      zip_stat_t st;
      zip_stat_init(&st);
      if (zip_stat_index(zip_, static_cast<zip_uint64_t>(i), ZIP_FL_ENC_RAW, &st) != 0 || !(st.valid & ZIP_STAT_NAME)) {
        warn("bad_entry", "zip entry " + std::to_string(i) + " cannot be read: " + zip_strerror(zip_));
        continue;
      }
      Pt2Entry e;
      e.name = st.name;
      e.size = (st.valid & ZIP_STAT_SIZE) ? st.size : 0;
      e.compressedSize = (st.valid & ZIP_STAT_COMP_SIZE) ? st.comp_size : 0;
      e.compressed = (st.valid & ZIP_STAT_COMP_METHOD) && st.comp_method != ZIP_CM_STORE;
      if (index_.contains(e.name)) {
        warn("duplicate_entry", "zip holds '" + e.name + "' more than once; the first is used");
      } else {
        index_.emplace(e.name, Located{static_cast<zip_uint64_t>(i), archive_.entries.size()});
      }
      archive_.entries.push_back(std::move(e));
    }
  }

  // Bytes of one member, or nullopt (with a diagnostic) when it is missing, refused or unreadable.
  // Declared sizes are checked before anything is read; inflation stops at the declared size. An
  // entry that claims a ratio no deflate stream reaches is a crafted archive: Error(BadInput). So
  // is a `required` entry (the program, without which nothing is readable) over its cap.
  std::optional<std::string> read(const std::string& name, uint64_t cap, bool required = false) {
    auto it = index_.find(name);
    if (it == index_.end()) return std::nullopt;
    const zip_uint64_t index = it->second.zipIndex;
    zip_stat_t st;
    zip_stat_init(&st);
    const zip_uint64_t needed = ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE | ZIP_STAT_COMP_METHOD;
    if (zip_stat_index(zip_, index, 0, &st) != 0 || (st.valid & needed) != needed) {
      warn("bad_entry", "cannot stat the entry: " + std::string(zip_strerror(zip_)), name);
      return std::nullopt;
    }
    if ((st.valid & ZIP_STAT_ENCRYPTION_METHOD) && st.encryption_method != ZIP_EM_NONE) {
      warn("bad_entry", "entry is encrypted", name);
      return std::nullopt;
    }
    if (st.comp_method == ZIP_CM_DEFLATE) {
      const uint64_t ratioLimit = std::max<uint64_t>(st.comp_size, 1) * limits_.maxRatio;
      if (st.size > ratioLimit && st.size > (uint64_t{1} << 16))
        throw Error(ErrorCode::BadInput,
                    "entry claims to inflate " + std::to_string(st.comp_size) + " bytes to " + std::to_string(st.size) +
                        ", more than deflate can (a zip bomb?); refused",
                    where(name));
    }
    if (st.size > cap) {
      const std::string message =
          "entry declares " + std::to_string(st.size) + " bytes, over the limit of " + std::to_string(cap);
      if (required) throw Error(ErrorCode::BadInput, message + "; refused", where(name));
      warn("entry_too_large", message, name);
      return std::nullopt;
    }
    if (st.size > limits_.maxTotalBytes - std::min(limits_.maxTotalBytes, bytesRead_)) {
      warn("entry_too_large",
           "reading this entry would pass the archive's limit of " + std::to_string(limits_.maxTotalBytes) +
               " decompressed bytes",
           name);
      return std::nullopt;
    }
    if (st.comp_method == ZIP_CM_STORE) {
      if (st.comp_size != st.size) {
        warn("bad_entry",
             "stored entry declares " + std::to_string(st.size) + " bytes but holds " + std::to_string(st.comp_size),
             name);
        return std::nullopt;
      }
    } else if (st.comp_method == ZIP_CM_DEFLATE) {
      // Deflate never grows data by more than a few bytes per 16 KiB block.
      if (st.comp_size > st.size + st.size / 256 + 1024) {
        warn(
            "bad_entry",
            "entry's compressed size " + std::to_string(st.comp_size) + " cannot inflate to " + std::to_string(st.size),
            name);
        return std::nullopt;
      }
    } else {
      warn("bad_entry", "unsupported compression method " + std::to_string(st.comp_method), name);
      return std::nullopt;
    }

    // Raw member data; CRC is checked here, so that a damaged checksum is a warning, not a loss.
    zip_file_t* file = zip_fopen_index(zip_, index, ZIP_FL_COMPRESSED);
    if (!file) {
      warn("bad_entry", "cannot open the entry: " + std::string(zip_strerror(zip_)), name);
      return std::nullopt;
    }
    MemberReader member{file, st.comp_size};
    std::string data;
    bool usable = true;
    if (st.comp_method == ZIP_CM_STORE)
      readStored(member, data);
    else
      usable = inflateMember(member, st.size, data, name);
    zip_fclose(file);
    if (member.read < st.comp_size) {
      warn("truncated_entry",
           "entry ends after " + std::to_string(member.read) + " of " + std::to_string(st.comp_size) + " bytes", name);
    }
    if (!usable) return std::nullopt;
    bytesRead_ += data.size();
    if ((st.valid & ZIP_STAT_CRC) && data.size() == st.size) {
      const uLong crc = crc32_z(0, reinterpret_cast<const Bytef*>(data.data()), data.size());
      if (crc != st.crc) warn("crc_mismatch", "entry's CRC-32 does not match its data", name);
    }
    return data;
  }

  // The raw (compressed) bytes of an open member, read in chunks up to the size its header gives.
  struct MemberReader {
    zip_file_t* file;
    uint64_t size;
    uint64_t read = 0;

    // Up to n bytes into out; 0 at the end of the data (or where it is cut short).
    size_t next(char* out, uint64_t n) {
      if (read >= size) return 0;
      const zip_int64_t got = zip_fread(file, out, std::min(n, size - read));
      if (got <= 0) {
        size = read;  // damaged or cut short: the caller reports the shortfall
        return 0;
      }
      read += static_cast<uint64_t>(got);
      return static_cast<size_t>(got);
    }
  };

  // The sizes in the header passed the caps, so reserving them is bounded; memory is touched only
  // as data arrives, and the buffer never moves (no second copy while it grows).
  static void readStored(MemberReader& member, std::string& out) {
    out.reserve(member.size);
    for (;;) {
      const size_t at = out.size();
      out.resize(at + std::min(member.size - std::min(member.size, at), kReadChunk));
      const size_t got = member.next(out.data() + at, out.size() - at);
      out.resize(at + got);
      if (got == 0) break;
    }
  }

  // Raw deflate (zip members carry no zlib header), inflated as it is read, into at most
  // `declared` bytes.
  bool inflateMember(MemberReader& member, uint64_t declared, std::string& out, const std::string& name) {
    z_stream z{};
    if (inflateInit2(&z, -MAX_WBITS) != Z_OK) {
      warn("bad_entry", "zlib cannot start inflating", name);
      return false;
    }
    out.reserve(declared);
    std::string input(kReadChunk, '\0');
    bool inputEnded = false;
    unsigned char probe = 0;
    bool overflow = false;
    int rc = Z_OK;
    while (rc == Z_OK) {
      if (z.avail_in == 0 && !inputEnded) {
        const size_t got = member.next(input.data(), input.size());
        inputEnded = got == 0;
        z.next_in = reinterpret_cast<Bytef*>(input.data());
        z.avail_in = static_cast<uInt>(got);
      }
      // Once the declared size is reached, one more byte of output means the header lied.
      const size_t outPos = out.size();
      const bool probing = outPos >= declared;
      if (!probing) out.resize(outPos + std::min(declared - outPos, kReadChunk));
      z.next_out = probing ? &probe : reinterpret_cast<Bytef*>(out.data() + outPos);
      z.avail_out = probing ? 1u : static_cast<uInt>(out.size() - outPos);
      const uInt room = z.avail_out;
      rc = inflate(&z, Z_NO_FLUSH);
      const uInt produced = room - z.avail_out;
      if (probing && produced > 0) {
        overflow = true;
        break;
      }
      if (!probing) out.resize(outPos + produced);
      if (rc == Z_BUF_ERROR && (z.avail_in > 0 || !inputEnded)) rc = Z_OK;  // room was the limit
    }
    inflateEnd(&z);
    if (overflow) {
      warn("bad_entry", "entry inflates to more than the " + std::to_string(declared) + " bytes it declares", name);
      return false;
    }
    if (rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
      warn("bad_entry", "deflate data is damaged after " + std::to_string(out.size()) + " bytes", name);
      return false;
    }
    if (out.size() != declared || rc == Z_BUF_ERROR)
      warn("truncated_entry",
           "entry inflates to " + std::to_string(out.size()) + " of the " + std::to_string(declared) +
               " bytes it declares",
           name);
    return true;
  }

  uint64_t jsonCap() const { return std::min(limits_.maxJsonBytes, kMaxJsonMemberBytes); }

  std::optional<std::string> readSmall(const std::string& name) {
    auto data = read(name, kSmallFileBytes);
    if (data) return trimmed(std::move(*data));
    return std::nullopt;
  }

  void detectLayout() {
    const std::string& first = archive_.entries.front().name;
    const size_t slash = first.find('/');
    archive_.root = slash == std::string::npos ? std::string{} : first.substr(0, slash + 1);
    auto isArchive = [&](const std::string& root) { return has(root + "archive_format"); };
    if (isArchive(archive_.root)) {
      archive_.layout = Pt2Layout::Archive;
      return;
    }
    for (const std::string& root : {archive_.root, std::string{}}) {
      if (has(root + "serialized_exported_program.json")) {
        archive_.root = root;
        archive_.layout = Pt2Layout::Legacy;
        return;
      }
    }
    // The first entry may sit outside the archive folder (a zip edited by hand): look for one.
    for (const auto& e : archive_.entries) {
      const size_t s = e.name.find('/');
      if (s != std::string::npos && e.name.compare(s + 1, std::string::npos, "archive_format") == 0) {
        note("root_folder", "the first entry is outside the archive folder '" + e.name.substr(0, s + 1) + "'");
        archive_.root = e.name.substr(0, s + 1);
        archive_.layout = Pt2Layout::Archive;
        return;
      }
    }
    if (!modelNames().empty()) {
      warn("missing_entry", "no archive_format entry; reading the models/ folder anyway");
      archive_.layout = Pt2Layout::Archive;
      return;
    }
    throw Error(ErrorCode::BadInput,
                "not a torch.export archive: no archive_format, models/*.json or serialized_exported_program.json",
                where());
  }

  std::vector<std::string> modelNames() const {
    std::vector<std::string> names;
    const std::string prefix = archive_.root + "models/";
    for (const auto& e : archive_.entries) {
      if (!e.name.starts_with(prefix) || !e.name.ends_with(".json")) continue;
      const std::string stem = e.name.substr(prefix.size(), e.name.size() - prefix.size() - 5);
      if (!stem.empty() && stem.find('/') == std::string::npos) names.push_back(stem);
    }
    return names;
  }

  void reportProgress() { progress_.update(bytesRead_, progressTotal_); }

  void loadArchive() {
    const std::string& root = archive_.root;
    size_t outside = 0;
    for (const auto& e : archive_.entries) outside += !e.name.starts_with(root);
    if (outside)
      warn("extra_entry",
           std::to_string(outside) + " entries lie outside the archive folder '" + root + "' and are ignored");
    if (auto format = readSmall(root + "archive_format")) {
      archive_.archiveFormat = *format;
      if (*format != "pt2")
        warn("bad_entry", "archive_format is '" + *format + "', expected 'pt2'", root + "archive_format");
    }
    if (auto v = readSmall(root + "archive_version")) {
      if (auto n = parseDecimal(*v)) {
        archive_.archiveVersion = *n;
      } else {
        warn("bad_entry", "archive_version is not a number: '" + v->substr(0, 40) + "'", root + "archive_version");
      }
    }
    readVersionAndByteorder(root + ".data/version", root + "byteorder");

    const std::vector<std::string> names = modelNames();
    if (names.empty()) warn("missing_entry", "the archive holds no models/<name>.json");
    for (const auto& name : names) progressTotal_ += entry(root + "models/" + name + ".json")->size;
    for (const auto& name : names) {
      progress_.checkCancelled();
      const std::string jsonEntry = root + "models/" + name + ".json";
      Pt2Model model;
      if (auto text = read(jsonEntry, jsonCap(), /*required=*/true)) {
        model = parseExportedProgram(*text, name, where(jsonEntry).file, archive_.diagnostics, progress_);
      } else {
        warn("bad_entry", "model '" + name + "' cannot be read", jsonEntry);
        model.name = name;
      }
      model.jsonEntry = jsonEntry;
      const std::string weightsDir = root + "data/weights/";
      const std::string constantsDir = root + "data/constants/";
      readStorage(model, weightsDir, weightsDir + name + "_weights_config.json", weightsDir + name + ".pt",
                  model.weights, /*constants=*/false);
      readStorage(model, constantsDir, constantsDir + name + "_constants_config.json", constantsDir + name + ".pt",
                  model.constants, /*constants=*/true);
      archive_.models.push_back(std::move(model));
      reportProgress();
    }
  }

  void readVersionAndByteorder(const std::string& versionEntry, const std::string& byteorderEntry) {
    if (auto v = readSmall(versionEntry)) {
      if (auto n = parseDecimal(*v)) {
        archive_.version = *n;
      } else {
        warn("bad_entry", "version is not a number: '" + v->substr(0, 40) + "'", versionEntry);
      }
    } else if (!has(versionEntry)) {
      note("no_version", "no " + versionEntry + " entry");
    }
    if (auto order = readSmall(byteorderEntry)) {
      archive_.byteorder = *order;
      if (*order != "little" && *order != "big")
        warn("bad_entry", "byteorder is '" + order->substr(0, 40) + "'", byteorderEntry);
    }
  }

  // Weights or constants of one model: the PayloadConfig JSON when readable, else what the
  // signature and the graph say (older `<name>.pt` pickles are not opened).
  void readStorage(const Pt2Model& model, const std::string& dir, const std::string& configEntry,
                   const std::string& pickleEntry, std::vector<Pt2Tensor>& out, bool constants) {
    if (has(configEntry)) {
      auto text = read(configEntry, jsonCap());
      if (text && parsePayloadConfig(model, dir, *text, configEntry, out, constants)) return;
    } else if (has(pickleEntry)) {
      note("pickled_weights", "stored as one torch.save pickle; described from the signature", pickleEntry);
    } else if (!constants && hasStoredInputs(model, false)) {
      warn("missing_entry", "model '" + model.name + "' has parameters but no " + configEntry);
    }
    describeFromSignature(model, constants, out);
  }

  static bool storedInConstants(const Pt2InputSpec& spec) {
    return spec.kind == Pt2InputKind::TensorConstant || spec.kind == Pt2InputKind::CustomObject ||
           (spec.kind == Pt2InputKind::Buffer && !spec.persistent);
  }
  static bool storedInWeights(const Pt2InputSpec& spec) {
    return spec.kind == Pt2InputKind::Parameter || (spec.kind == Pt2InputKind::Buffer && spec.persistent);
  }
  static bool hasStoredInputs(const Pt2Model& model, bool constants) {
    return std::any_of(model.inputs.begin(), model.inputs.end(),
                       [&](const Pt2InputSpec& s) { return constants ? storedInConstants(s) : storedInWeights(s); });
  }

  void describeFromSignature(const Pt2Model& model, bool constants, std::vector<Pt2Tensor>& out) {
    for (const auto& spec : model.inputs) {
      if (constants ? !storedInConstants(spec) : !storedInWeights(spec)) continue;
      Pt2Tensor t;
      t.fqn = spec.target;
      t.kind = spec.kind;
      const ir::NodeId id = model.graph ? model.graph->find(spec.arg) : ir::kNoNode;
      if (id != ir::kNoNode) {
        const ir::TensorMeta& m = model.graph->node(id).meta;
        t.dtype = m.dtype;
        for (const auto& d : m.sizes) t.sizes.push_back(d.value);
        for (const auto& d : m.strides) t.strides.push_back(d.value);
        t.device = model.graph->str(m.device);
      }
      out.push_back(std::move(t));
    }
  }

  // False when the config is unreadable as a whole (out is then left empty).
  bool parsePayloadConfig(const Pt2Model& model, const std::string& dir, const std::string& text,
                          const std::string& configEntry, std::vector<Pt2Tensor>& out, bool constants) {
    Json doc;
    try {
      doc = parseJsonBounded<Json>(text, configEntry);
    } catch (const Error& e) {  // nested or sized beyond the bounds
      warn("bad_json", e.what(), configEntry);
      return false;
    } catch (const Json::exception& e) {
      warn("bad_json", std::string("not valid JSON: ") + e.what(), configEntry);
      return false;
    }
    const Json* config = pt2::field(doc, "config");
    if (!config || !config->is_object()) {
      warn("bad_json", "no \"config\" object", configEntry);
      return false;
    }
    std::unordered_map<std::string_view, size_t> specIndex;
    for (size_t i = 0; i < model.inputs.size(); ++i)
      if (!model.inputs[i].target.empty()) specIndex.emplace(model.inputs[i].target, i);
    std::vector<size_t> order;  // signature position of each tensor, to list them in graph order
    for (auto it = config->begin(); it != config->end(); ++it) {
      const std::string& fqn = it.key();
      const Json& payload = *it;
      Pt2Tensor t;
      t.fqn = fqn;
      if (!payload.is_object()) {
        warn("bad_json", "entry for '" + fqn + "' is not an object", configEntry);
        continue;
      }
      auto path = pt2::stringField(payload, "path_name");
      if (const Json* p = pt2::field(payload, "use_pickle"); p && p->is_boolean()) t.usePickle = p->get<bool>();
      bool isParam = false;
      if (const Json* p = pt2::field(payload, "is_param"); p && p->is_boolean()) isParam = p->get<bool>();
      if (const Json* meta = pt2::field(payload, "tensor_meta")) {
        std::string why;
        if (auto m = pt2::parseTensorMeta(*meta, &why)) {
          t.dtype = m->dtype;
          for (const auto& d : m->sizes) t.sizes.push_back(d.value);
          for (const auto& d : m->strides) t.strides.push_back(d.value);
          t.storageOffset = m->storageOffset.value;
          t.device = m->device;
          t.requiresGrad = m->requiresGrad;
        } else {
          warn("bad_meta", "'" + fqn + "': " + why, configEntry);
        }
      } else {
        t.kind = Pt2InputKind::CustomObject;  // objects carry no tensor meta
      }
      auto spec = specIndex.find(fqn);
      if (spec != specIndex.end()) {
        t.kind = model.inputs[spec->second].kind;
      } else if (t.kind != Pt2InputKind::CustomObject) {
        t.kind = isParam ? Pt2InputKind::Parameter : constants ? Pt2InputKind::TensorConstant : Pt2InputKind::Buffer;
        note("not_in_signature", "'" + fqn + "' is stored but no input spec names it", configEntry);
      }
      if (!path || path->empty()) {
        warn("bad_json", "'" + fqn + "' has no path_name", configEntry);
      } else {
        t.record = dir + std::string(*path);
        if (const Pt2Entry* record = entry(t.record)) {
          t.recordPresent = true;
          t.recordBytes = record->size;
          const uint64_t needed = t.bytesNeeded();
          // An empty record stands for zeros(sizes); a pickled one has its own framing.
          if (!t.usePickle && t.recordBytes != 0 && t.kind != Pt2InputKind::CustomObject && t.recordBytes < needed)
            warn("record_too_small",
                 "'" + fqn + "' needs " + std::to_string(needed) + " bytes but " + t.record + " holds " +
                     std::to_string(t.recordBytes),
                 configEntry);
        } else {
          warn("missing_entry", "record " + t.record + " of '" + fqn + "' is missing", configEntry);
        }
      }
      order.push_back(spec != specIndex.end() ? spec->second : model.inputs.size());
      out.push_back(std::move(t));
    }
    // The config is keyed by fqn (read back sorted); list tensors in signature order instead.
    std::vector<size_t> perm(out.size());
    for (size_t i = 0; i < perm.size(); ++i) perm[i] = i;
    std::stable_sort(perm.begin(), perm.end(), [&](size_t a, size_t b) { return order[a] < order[b]; });
    std::vector<Pt2Tensor> sorted;
    sorted.reserve(out.size());
    for (size_t i : perm) sorted.push_back(std::move(out[i]));
    out = std::move(sorted);
    return true;
  }

  void loadLegacy() {
    const std::string& root = archive_.root;
    readVersionAndByteorder(root + "version", root + "byteorder");
    const std::string jsonEntry = root + "serialized_exported_program.json";
    progressTotal_ = entry(jsonEntry)->size;
    Pt2Model model;
    if (auto text = read(jsonEntry, jsonCap(), /*required=*/true)) {
      model = parseExportedProgram(*text, "model", where(jsonEntry).file, archive_.diagnostics, progress_);
    } else {
      warn("bad_entry", "the exported program cannot be read", jsonEntry);
      model.name = "model";
    }
    model.jsonEntry = jsonEntry;
    describeFromSignature(model, false, model.weights);
    describeFromSignature(model, true, model.constants);
    for (const char* name : {"serialized_state_dict.json", "serialized_state_dict.pt"}) {
      if (has(root + name)) {
        listStateDict(root + name);
        break;
      }
    }
    archive_.models.push_back(std::move(model));
    reportProgress();
  }

  // serialized_state_dict.* is itself a torch.save zip: its records are listed, data.pkl is not run.
  void listStateDict(const std::string& name) {
    auto bytes = read(name, std::min(kMaxNestedZipBytes, limits_.maxJsonBytes));
    if (!bytes) return;
    std::string why;
    ZipPtr nested = openFromBuffer(*bytes, &why);
    if (!nested) {
      warn("bad_entry", "state dict is not a zip: " + why, name);
      return;
    }
    const zip_int64_t count = zip_get_num_entries(nested.get(), 0);
    for (zip_int64_t i = 0; i < count; ++i) {
      zip_stat_t st;
      zip_stat_init(&st);
      if (zip_stat_index(nested.get(), static_cast<zip_uint64_t>(i), ZIP_FL_ENC_RAW, &st) != 0 ||
          !(st.valid & ZIP_STAT_NAME))
        continue;
      archive_.stateDictRecords.push_back({st.name, (st.valid & ZIP_STAT_SIZE) ? st.size : 0,
                                           (st.valid & ZIP_STAT_COMP_SIZE) ? st.comp_size : 0,
                                           (st.valid & ZIP_STAT_COMP_METHOD) && st.comp_method != ZIP_CM_STORE});
    }
  }

  struct Located {
    zip_uint64_t zipIndex;
    size_t listed;  // position in archive_.entries
  };

  zip_t* zip_;
  Pt2Archive& archive_;
  const Pt2Limits& limits_;
  const Progress& progress_;
  std::unordered_map<std::string, Located> index_;
  uint64_t bytesRead_ = 0;
  uint64_t progressTotal_ = 0;
};

Pt2Archive loadFromZip(ZipPtr zip, std::string display, const Pt2Limits& limits, const Progress& progress) {
  Pt2Archive archive;
  archive.file = std::move(display);
  ArchiveReader(zip.get(), archive, limits, progress).load();
  return archive;
}

}  // namespace

Pt2Archive loadPt2(const std::filesystem::path& path, const Progress& progress) {
  return loadPt2(path, Pt2Limits{}, progress);
}

Pt2Archive loadPt2(const std::filesystem::path& path, const Pt2Limits& limits, const Progress& progress) {
  const std::string display = path.string();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw Error(ErrorCode::BadInput, "not a readable file", SourceLocation{display, 0});
  int code = 0;
  zip_t* z = zip_open(display.c_str(), ZIP_RDONLY, &code);
  if (!z) throw Error(ErrorCode::BadInput, "not a readable zip: " + zipErrorText(code), SourceLocation{display, 0});
  return loadFromZip(ZipPtr(z), display, limits, progress);
}

Pt2Archive loadPt2FromBuffer(std::string_view bytes, std::string_view displayName, const Pt2Limits& limits,
                             const Progress& progress) {
  std::string why;
  ZipPtr zip = openFromBuffer(bytes, &why);
  if (!zip) throw Error(ErrorCode::BadInput, "not a readable zip: " + why, SourceLocation{std::string(displayName), 0});
  return loadFromZip(std::move(zip), std::string(displayName), limits, progress);
}

}  // namespace lathe::io
