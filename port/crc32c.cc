// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78).
// Three paths: SSE4.2 (x86-64), ARMv8 CRC32 instructions (aarch64), and a
// portable slicing-by-8 table. The hardware path is chosen once, by asking
// the CPU at run time, so one binary serves every board of an architecture.
//
// The hardware paths run three independent CRC streams at once. One crc32
// instruction takes 3 cycles but a core can start one every cycle; a single
// stream is a chain of dependent instructions and runs at a third of the
// possible rate. So a long buffer is cut into three equal blocks whose CRCs
// are computed in the same loop (stream 0 from the running value, streams 1
// and 2 from zero) and then combined: by linearity of the CRC register,
//   reg(A || B, r) = shift(reg(A, r), |B|) ^ reg(B, 0)
// where shift(x, n) is x advanced over n zero bytes, a linear map on 32 bits
// applied here by four table lookups (tables built at compile time for the
// two block lengths). This is the method of Mark Adler's crc32c.c and of
// Linux's crc32c-intel.
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

// --- Advancing a CRC register over zero bytes (for combining streams). ---

// A linear map on 32-bit CRC registers, as its 32 columns: column i is the
// image of the register with only bit i set.
struct Gf2Matrix {
  uint32_t column[32];
};

constexpr uint32_t apply(const Gf2Matrix& m, uint32_t v) {
  uint32_t out = 0;
  for (int i = 0; v != 0; ++i, v >>= 1) {
    if (v & 1) out ^= m.column[i];
  }
  return out;
}

constexpr Gf2Matrix compose(const Gf2Matrix& a, const Gf2Matrix& b) {  // a after b
  Gf2Matrix out{};
  for (int i = 0; i < 32; ++i) out.column[i] = apply(a, b.column[i]);
  return out;
}

// The map "advance over `bytes` zero bytes", by repeated squaring of the
// map for one zero bit.
constexpr Gf2Matrix zeros_operator(size_t bytes) {
  Gf2Matrix bit{};
  bit.column[0] = kPolynomial;  // bit 0 shifted out: the polynomial folds in
  for (int i = 1; i < 32; ++i) bit.column[i] = 1u << (i - 1);
  Gf2Matrix power = bit;
  for (int i = 0; i < 3; ++i) power = compose(power, power);  // 8 bits: one byte
  Gf2Matrix result{};
  for (int i = 0; i < 32; ++i) result.column[i] = 1u << i;  // identity
  for (; bytes != 0; bytes >>= 1) {
    if (bytes & 1) result = compose(power, result);
    power = compose(power, power);
  }
  return result;
}

// The map as four byte-indexed tables: shift(x) = t[0][x & 0xFF] ^ ... ^ t[3][x >> 24].
struct ShiftTables {
  uint32_t t[4][256];
};

constexpr ShiftTables make_shift_tables(size_t bytes) {
  const Gf2Matrix m = zeros_operator(bytes);
  ShiftTables tables{};
  for (int k = 0; k < 4; ++k) {
    for (uint32_t v = 0; v < 256; ++v) tables.t[k][v] = apply(m, v << (8 * k));
  }
  return tables;
}

[[maybe_unused]] uint32_t shift(const ShiftTables& tables, uint32_t crc) {
  return tables.t[0][crc & 0xFF] ^ tables.t[1][(crc >> 8) & 0xFF] ^ tables.t[2][(crc >> 16) & 0xFF] ^
         tables.t[3][crc >> 24];
}

// Block lengths of the three streams: long blocks for large buffers, middle
// ones for batches of 6 to 24 KiB (the Java producer's default batch is
// 16 KiB: 2.7x the single stream with them, 1.95x with short blocks alone),
// short ones for what is left. Multiples of 8: each stream consumes 8 bytes
// per instruction.
constexpr size_t kLongBlock = 8192;
constexpr size_t kMidBlock = 2048;
constexpr size_t kShortBlock = 256;
[[maybe_unused]] constexpr ShiftTables kShiftLong = make_shift_tables(kLongBlock);
[[maybe_unused]] constexpr ShiftTables kShiftMid = make_shift_tables(kMidBlock);
[[maybe_unused]] constexpr ShiftTables kShiftShort = make_shift_tables(kShortBlock);

uint32_t load_le32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 | static_cast<uint32_t>(p[2]) << 16 |
         static_cast<uint32_t>(p[3]) << 24;
}

#if defined(EDDY_CRC_X86)
__attribute__((target("sse4.2"))) inline uint64_t load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

// Three streams over blocks of `block` bytes each, while 3 * block bytes
// remain; *c is the running register (inverted form).
__attribute__((target("sse4.2"))) void three_streams_sse42(uint64_t* c, const uint8_t** p, size_t* n, size_t block,
                                                           const ShiftTables& shift_block) {
  while (*n >= 3 * block) {
    uint64_t c0 = *c, c1 = 0, c2 = 0;
    const uint8_t* q = *p;
    const uint8_t* end = q + block;
    do {
      c0 = _mm_crc32_u64(c0, load64(q));
      c1 = _mm_crc32_u64(c1, load64(q + block));
      c2 = _mm_crc32_u64(c2, load64(q + 2 * block));
      q += 8;
    } while (q < end);
    uint32_t combined = shift(shift_block, static_cast<uint32_t>(c0)) ^ static_cast<uint32_t>(c1);
    *c = shift(shift_block, combined) ^ static_cast<uint32_t>(c2);
    *p += 3 * block;
    *n -= 3 * block;
  }
}

__attribute__((target("sse4.2"))) uint32_t one_stream_sse42(uint64_t c, const uint8_t* p, size_t n) {
  while (n >= 8) {
    c = _mm_crc32_u64(c, load64(p));
    p += 8;
    n -= 8;
  }
  while (n > 0) {
    c = _mm_crc32_u8(static_cast<uint32_t>(c), *p++);
    --n;
  }
  return static_cast<uint32_t>(c);
}

__attribute__((target("sse4.2"))) uint32_t crc32c_sse42_single(uint32_t crc, const uint8_t* p, size_t n) {
  return ~one_stream_sse42(~crc, p, n);
}

__attribute__((target("sse4.2"))) uint32_t crc32c_sse42(uint32_t crc, const uint8_t* p, size_t n) {
  uint64_t c = ~crc;
  while (n > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0) {
    c = _mm_crc32_u8(static_cast<uint32_t>(c), *p++);
    --n;
  }
  three_streams_sse42(&c, &p, &n, kLongBlock, kShiftLong);
  three_streams_sse42(&c, &p, &n, kMidBlock, kShiftMid);
  three_streams_sse42(&c, &p, &n, kShortBlock, kShiftShort);
  return ~one_stream_sse42(c, p, n);
}
bool hardware_available() { return __builtin_cpu_supports("sse4.2"); }
constexpr const char* kHardwareName = "sse4.2";
#elif defined(EDDY_CRC_ARM64)
inline uint64_t load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

// As three_streams_sse42.
__attribute__((target("+crc"))) void three_streams_armv8(uint32_t* c, const uint8_t** p, size_t* n, size_t block,
                                                         const ShiftTables& shift_block) {
  while (*n >= 3 * block) {
    uint32_t c0 = *c, c1 = 0, c2 = 0;
    const uint8_t* q = *p;
    const uint8_t* end = q + block;
    do {
      c0 = __crc32cd(c0, load64(q));
      c1 = __crc32cd(c1, load64(q + block));
      c2 = __crc32cd(c2, load64(q + 2 * block));
      q += 8;
    } while (q < end);
    *c = shift(shift_block, shift(shift_block, c0) ^ c1) ^ c2;
    *p += 3 * block;
    *n -= 3 * block;
  }
}

__attribute__((target("+crc"))) uint32_t one_stream_armv8(uint32_t c, const uint8_t* p, size_t n) {
  while (n >= 8) {
    c = __crc32cd(c, load64(p));
    p += 8;
    n -= 8;
  }
  while (n > 0) {
    c = __crc32cb(c, *p++);
    --n;
  }
  return c;
}

__attribute__((target("+crc"))) uint32_t crc32c_armv8_single(uint32_t crc, const uint8_t* p, size_t n) {
  return ~one_stream_armv8(~crc, p, n);
}

__attribute__((target("+crc"))) uint32_t crc32c_armv8(uint32_t crc, const uint8_t* p, size_t n) {
  uint32_t c = ~crc;
  three_streams_armv8(&c, &p, &n, kLongBlock, kShiftLong);
  three_streams_armv8(&c, &p, &n, kMidBlock, kShiftMid);
  three_streams_armv8(&c, &p, &n, kShortBlock, kShiftShort);
  return ~one_stream_armv8(c, p, n);
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

CrcFunction choose_single() {
#if defined(EDDY_CRC_X86)
  if (hardware_available()) return crc32c_sse42_single;
#elif defined(EDDY_CRC_ARM64)
  if (hardware_available()) return crc32c_armv8_single;
#endif
  return portable_bytes;
}

const CrcFunction g_crc_single = choose_single();

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

uint32_t crc32c_one_stream(uint32_t crc, const void* data, size_t length) {
  return g_crc_single(crc, static_cast<const uint8_t*>(data), length);
}

const char* crc32c_implementation() {
#if defined(EDDY_CRC_X86) || defined(EDDY_CRC_ARM64)
  if (g_crc != portable_bytes) return kHardwareName;
#endif
  return "portable";
}

}  // namespace eddy::port
