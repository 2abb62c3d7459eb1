# Compiler cache: when ccache is installed, every compile (host gcc, the ARM
# cross compilers, clang for the fuzz build) goes through it, so that a
# rebuild of unchanged sources, in any build directory and in any clone of
# the repository on this machine, is a cache lookup. Absent ccache, or with
# -DEDDY_CCACHE=OFF, or when the user already chose a launcher, nothing
# changes.
#
# The cache is ccache's default, ~/.cache/ccache (CCACHE_DIR or ccache's own
# configuration override it). Two settings make hits independent of where
# the repository lies:
#  * CCACHE_BASEDIR=<source dir>: absolute paths under it are hashed (and
#    passed to the compiler) relative to the build directory;
#  * CCACHE_NOHASHDIR: the working directory is not hashed for builds with
#    debug info (asan, fuzz). A hit may then carry the compilation directory
#    of the build that first stored it in its debug info; file names and
#    line numbers are unaffected.
option(EDDY_CCACHE "Compile through ccache when it is installed" ON)

if(EDDY_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER AND NOT CMAKE_C_COMPILER_LAUNCHER)
  find_program(EDDY_CCACHE_PROGRAM ccache)
  if(EDDY_CCACHE_PROGRAM AND NOT (DEFINED ENV{HOME} OR DEFINED ENV{CCACHE_DIR} OR DEFINED ENV{XDG_CACHE_HOME}))
    # ccache would fail every compile without a place for its cache.
    message(STATUS "ccache: not used (neither HOME nor CCACHE_DIR is set)")
  elseif(EDDY_CCACHE_PROGRAM)
    set(_eddy_launcher ${CMAKE_COMMAND} -E env CCACHE_BASEDIR=${PROJECT_SOURCE_DIR} CCACHE_NOHASHDIR=true
        ${EDDY_CCACHE_PROGRAM})
    set(CMAKE_C_COMPILER_LAUNCHER ${_eddy_launcher})
    set(CMAKE_CXX_COMPILER_LAUNCHER ${_eddy_launcher})
    message(STATUS "ccache: ${EDDY_CCACHE_PROGRAM}")
  endif()
endif()
