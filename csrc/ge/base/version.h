// The engine's version: recorded in model files (a file from another engine version is re-planned
// rather than checked against its recorded plan) and in cache keys. Kept equal to the Python
// package's version (tests/python/test_export.py checks it).
#pragma once

namespace ge {

inline constexpr const char* kEngineVersion = "0.1.0";

}  // namespace ge
