// Whole-file writes that never leave a half-written file: the content goes to a temporary file in
// the same directory, which is then renamed over the target.
#pragma once

#include <filesystem>
#include <string_view>

namespace lathe {

// Throws Error(BadInput) naming the path when the directory is not writable or the disk is full;
// the target is then untouched and no temporary file remains.
void writeFileAtomic(const std::filesystem::path& path, std::string_view content);

}  // namespace lathe
