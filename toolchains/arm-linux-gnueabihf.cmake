# 32-bit ARM, hard float (Raspberry Pi OS 32-bit, ARMv7 boards).
#   cmake -S . -B build-armhf -DCMAKE_TOOLCHAIN_FILE=toolchains/arm-linux-gnueabihf.cmake
# See cross-common.cmake for Debian multiarch vs. a board SDK's sysroot.
set(CMAKE_SYSTEM_PROCESSOR arm)
set(EDDY_TARGET_TRIPLE arm-linux-gnueabihf)
set(EDDY_QEMU qemu-arm)
include(${CMAKE_CURRENT_LIST_DIR}/cross-common.cmake)
