// Internal to src/client/: the codec libraries this build links
// (EDDY_COMPRESSION; CMake defines EDDY_HAVE_<CODEC>=1 for each one it
// links), with their headers. Each EDDY_HAVE_* is 0 or 1 after this.
#pragma once

#ifndef EDDY_HAVE_ZLIB
#define EDDY_HAVE_ZLIB 0
#endif
#ifndef EDDY_HAVE_SNAPPY
#define EDDY_HAVE_SNAPPY 0
#endif
#ifndef EDDY_HAVE_LZ4
#define EDDY_HAVE_LZ4 0
#endif
#ifndef EDDY_HAVE_ZSTD
#define EDDY_HAVE_ZSTD 0
#endif

#if EDDY_HAVE_ZLIB
#include <zlib.h>
#endif
#if EDDY_HAVE_SNAPPY
#include <snappy-c.h>
#endif
#if EDDY_HAVE_LZ4
#include <lz4frame.h>
#endif
#if EDDY_HAVE_ZSTD
#include <zstd.h>
#endif
