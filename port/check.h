// Invariant checks that cost nothing in release builds. In checked builds
// (Debug, the sanitizer build and the fuzz build: EDDY_CHECKED, set by the
// top-level CMakeLists.txt) EDDY_DCHECK(cond, what) logs the file, line,
// condition and what, then aborts, when cond is false; elsewhere cond is
// not evaluated. For programming errors only: bad input is answered, never
// checked with this.
#pragma once

#include <cstdlib>

#include "port/log.h"

#if EDDY_CHECKED
#define EDDY_DCHECK(cond, what)                                                                        \
  do {                                                                                                 \
    if (!(cond)) {                                                                                     \
      EDDY_LOG_ERROR("check failed at {}:{}: {} ({})", __FILE__, __LINE__, #cond, what);             \
      std::abort();                                                                                    \
    }                                                                                                  \
  } while (0)
#else
#define EDDY_DCHECK(cond, what) \
  do {                          \
  } while (false && (cond))
#endif
