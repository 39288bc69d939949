// The files of kernels/codegen/device/ (the CUDA headers an export bundle ships beside its kernels),
// compiled into lathe_kernels at build time by cmake/EmbedFiles.cmake: each file's bytes exactly.
#pragma once

#include <span>
#include <string_view>

namespace lathe::kernels::codegen {

struct EmbeddedDeviceFile {
  std::string_view stem;  // file name without its extension: "lathe_kernels"
  std::string_view text;
};
[[nodiscard]] std::span<const EmbeddedDeviceFile> embeddedDeviceFiles();

}  // namespace lathe::kernels::codegen
