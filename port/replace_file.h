// port/replace_file.h — a file replaced whole (checkpoints, the quorum
// state, snapshots). Implemented in port_posix.cc over the intercepted
// primitives of port.h, so that the power-cut tests see every step.
#pragma once

#include <cstddef>
#include <string>
#include <system_error>

namespace eddy::port {

// Replaces the file at path by data: written to path + ".tmp", renamed over
// path. durable: the temp file is synced before the rename and the
// directory after it, so that a crash at any point leaves the old file or
// the new one, whole. On failure the temp file is removed (best effort).
std::error_code replace_file(const std::string& path, const void* data, size_t size, bool durable);

}  // namespace eddy::port
