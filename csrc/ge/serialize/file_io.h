// Small file helpers for dumps: atomic writes and names that never clobber another dump.
#pragma once

#include <string>
#include <string_view>

#include "ge/base/status.h"

namespace ge {

// Writes `contents` to `path` through a temporary file and a rename, so a reader never sees
// half a file. Creates the parent directory.
Status WriteFileAtomic(const std::string& path, std::string_view contents);

// `dir/<stem>.<ext>`, or `dir/<stem>_<k>.<ext>` with the smallest k >= 1 when that file
// exists already (two sessions of one process may use the same graph id).
std::string UniqueFilePath(const std::string& dir, const std::string& stem, const std::string& ext);

// Replaces characters that are unsafe in file names ('/', ':', spaces, ...) with '_'.
std::string SafeFileName(std::string_view name);

}  // namespace ge
