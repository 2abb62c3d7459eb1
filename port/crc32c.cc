// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78).
// Three paths: SSE4.2 (x86-64), ARMv8 CRC32 instructions (aarch64, 32-bit
// ARMv8 cores running armhf), and a portable slicing-by-8 table. The
// hardware path is chosen once, by asking the CPU at run time, so one binary
// serves every board of an architecture.
#include <cstring>

#include "port/port.h"

#if defined(__x86_64__)
#include <nmmintrin.h>
#define EDDY_CRC_X86 1
#elif defined(__aarch64__) && defined(__linux__)
#include <arm_acle.h>
#include <asm/hwcap.h>
#include <sys/auxv.h>
#define EDDY_CRC_ARM64 1
#endif

namespace eddy::port {
namespace {

constexpr uint32_t kPolynomial = 0x82F63B78u;

struct Tables {
  uint32_t t[8][256];
};

constexpr Tables make_tables() {
  Tables tables{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t crc = i;
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ ((crc & 1) ? kPolynomial : 0);
    tables.t[0][i] = crc;
  }
  for (uint32_t i = 0; i < 256; ++i) {
    for (int s = 1; s < 8; ++s) tables.t[s][i] = (tables.t[s - 1][i] >> 8) ^ tables.t[0][tables.t[s - 1][i] & 0xFF];
  }
  return tables;
}

constexpr Tables kTables = make_tables();

uint32_t load_le32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 | static_cast<uint32_t>(p[2]) << 16 |
         static_cast<uint32_t>(p[3]) << 24;
}

#if defined(EDDY_CRC_X86)
__attribute__((target("sse4.2"))) uint32_t crc32c_sse42(uint32_t crc, const uint8_t* p, size_t n) {
  uint64_t c = ~crc;
  while (n > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0) {
    c = _mm_crc32_u8(static_cast<uint32_t>(c), *p++);
    --n;
  }
  while (n >= 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    c = _mm_crc32_u64(c, v);
    p += 8;
    n -= 8;
  }
  while (n > 0) {
    c = _mm_crc32_u8(static_cast<uint32_t>(c), *p++);
    --n;
  }
  return ~static_cast<uint32_t>(c);
}
bool hardware_available() { return __builtin_cpu_supports("sse4.2"); }
constexpr const char* kHardwareName = "sse4.2";
#elif defined(EDDY_CRC_ARM64)
__attribute__((target("+crc"))) uint32_t crc32c_armv8(uint32_t crc, const uint8_t* p, size_t n) {
  uint32_t c = ~crc;
  while (n >= 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    c = __crc32cd(c, v);
    p += 8;
    n -= 8;
  }
  while (n > 0) {
    c = __crc32cb(c, *p++);
    --n;
  }
  return ~c;
}
bool hardware_available() { return (getauxval(AT_HWCAP) & HWCAP_CRC32) != 0; }
constexpr const char* kHardwareName = "armv8-crc";
#endif

using CrcFunction = uint32_t (*)(uint32_t, const uint8_t*, size_t);

uint32_t portable_bytes(uint32_t crc, const uint8_t* p, size_t n) { return crc32c_portable(crc, p, n); }

CrcFunction choose() {
#if defined(EDDY_CRC_X86)
  if (hardware_available()) return crc32c_sse42;
#elif defined(EDDY_CRC_ARM64)
  if (hardware_available()) return crc32c_armv8;
#endif
  return portable_bytes;
}

const CrcFunction g_crc = choose();

}  // namespace

uint32_t crc32c_portable(uint32_t crc, const void* data, size_t length) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  uint32_t c = ~crc;
  while (length >= 8) {
    uint32_t lo = load_le32(p) ^ c;
    uint32_t hi = load_le32(p + 4);
    c = kTables.t[7][lo & 0xFF] ^ kTables.t[6][(lo >> 8) & 0xFF] ^ kTables.t[5][(lo >> 16) & 0xFF] ^
        kTables.t[4][lo >> 24] ^ kTables.t[3][hi & 0xFF] ^ kTables.t[2][(hi >> 8) & 0xFF] ^
        kTables.t[1][(hi >> 16) & 0xFF] ^ kTables.t[0][hi >> 24];
    p += 8;
    length -= 8;
  }
  while (length > 0) {
    c = (c >> 8) ^ kTables.t[0][(c ^ *p++) & 0xFF];
    --length;
  }
  return ~c;
}

uint32_t crc32c(uint32_t crc, const void* data, size_t length) {
  return g_crc(crc, static_cast<const uint8_t*>(data), length);
}

const char* crc32c_implementation() {
#if defined(EDDY_CRC_X86) || defined(EDDY_CRC_ARM64)
  if (g_crc != portable_bytes) return kHardwareName;
#endif
  return "portable";
}

}  // namespace eddy::port
