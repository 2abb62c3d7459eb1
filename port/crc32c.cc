// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78).
// Paths, chosen once by asking the CPU at run time (one binary serves every
// board of an architecture):
//  * fused: crc32 instructions and carry-less multiply at once (x86-64 with
//    SSE4.2 and PCLMULQDQ; aarch64 with CRC32 and PMULL);
//  * three streams of crc32 instructions (SSE4.2 or ARMv8 CRC32 alone);
//  * one stream of them (the benchmark's baseline, a cross-check);
//  * portable slicing-by-8 tables.
// Every path gives the same result for every input.
//
// Algebra, in the reflected domain (bit i of a 32-bit value is the
// coefficient of x^(31-i); the first byte of a message holds its highest
// terms). The register after message M, started from register r, is
//   reg(M, r) = (r * x^(8|M|) + M * x^32) mod P,
// so it is linear:  reg(A || B, r) = shift(reg(A, r), |B|) ^ reg(B, 0),
// with shift(c, n) = c * x^(8n) mod P (c advanced over n zero bytes).
//
// Three streams: one crc32 instruction takes 3 cycles but a core can start
// one every cycle; a single stream is a chain of dependent instructions and
// runs at a third of the possible rate. So a long buffer is cut into three
// equal blocks whose registers are computed in the same loop (stream 0 from
// the running register, streams 1 and 2 from zero) and joined by the rule
// above, shift applied by four lookups in tables built at compile time for
// the few block lengths (Mark Adler's crc32c.c, Linux's crc32c-intel).
//
// Fused: three streams saturate the crc32 unit; the carry-less multiplier is
// another unit, so it can reduce more of the buffer in the same cycles. From
// a 16-byte boundary the buffer is cut as  [V | A | B | C | tail],  A, B, C
// of s bytes each, tail < 16. Each step of the loop feeds 64 bytes to each of
// the streams A, B, C (crc32) and 64 bytes of V to four 128-bit lanes: a lane
// L becomes L * x^512 + the next 16 bytes, modulo P but kept 128 bits wide,
// by two 64x64-bit carry-less products (congruence mod P is all the CRC
// sees). At the end the lanes fold into one 128-bit value congruent to V
// (with the running register added into its first 4 bytes), which two crc32
// instructions turn into reg(V, r). Then
//   reg = shift(reg(V, r), 3s) ^ shift(reg(A, 0), 2s) ^ shift(reg(B, 0), s) ^ reg(C, 0),
// shift(c, n) done by one carry-less product with x^(8n-33) mod P and one
// crc32 (which multiplies by x^33); those multipliers depend on s, so they
// are computed at run time (log s products, off the loop's critical path).
// Buffers too short for one step take the three-stream path. The method of
// Peter Cawley's "crc32c fusion".
#include <bit>
#include <cstring>

#include "port/port.h"

#if defined(__x86_64__)
#include <nmmintrin.h>
#include <wmmintrin.h>
#define EDDY_CRC_X86 1
#elif defined(__aarch64__) && defined(__linux__)
#include <arm_acle.h>
#include <arm_neon.h>
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

#if defined(EDDY_CRC_X86) || defined(EDDY_CRC_ARM64)

// a * b mod P.
constexpr uint32_t multiply(uint32_t a, uint32_t b) {
  uint32_t product = 0;
  for (uint32_t bit = 1u << 31; bit != 0; bit >>= 1) {  // a's terms x^0, x^1, ...
    if (a & bit) product ^= b;
    b = (b >> 1) ^ ((b & 1) ? kPolynomial : 0);  // b *= x
  }
  return product;
}

// x^e mod P.
constexpr uint32_t x_power(uint64_t e) {
  uint32_t result = 1u << 31, square = 1u << 30;  // x^0, x^1
  for (; e != 0; e >>= 1) {
    if (e & 1) result = multiply(result, square);
    square = multiply(square, square);
  }
  return result;
}

// shift(c, bytes) as four byte-indexed tables:
// shift(c) = t[0][c & 0xFF] ^ t[1][(c >> 8) & 0xFF] ^ t[2][(c >> 16) & 0xFF] ^ t[3][c >> 24].
struct ShiftTables {
  uint32_t t[4][256];
};

constexpr ShiftTables make_shift_tables(size_t bytes) {
  const uint32_t factor = x_power(8 * static_cast<uint64_t>(bytes));
  ShiftTables tables{};
  for (int k = 0; k < 4; ++k) {
    for (uint32_t v = 0; v < 256; ++v) tables.t[k][v] = multiply(v << (8 * k), factor);
  }
  return tables;
}

uint32_t shift(const ShiftTables& tables, uint32_t crc) {
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
constexpr ShiftTables kShiftLong = make_shift_tables(kLongBlock);
constexpr ShiftTables kShiftMid = make_shift_tables(kMidBlock);
constexpr ShiftTables kShiftShort = make_shift_tables(kShortBlock);

// Fused loop: per step, 64 bytes to the four lanes and 64 to each stream.
// Measured on an AMD EPYC (Zen 4: PCLMULQDQ one per 2 cycles, crc32 one per
// cycle), 16 KiB buffers, bytes per stream and step: 32 gave 3.0x the one
// stream, 48 3.3x, 64 3.7x, 96 3.3x. Where PCLMULQDQ runs one per cycle (Intel
// cores) the 24 crc32 bound the step: 256 bytes in 24 cycles, 4x (estimated).
constexpr size_t kStreamStep = 64;
constexpr size_t kStep = 64 + 3 * kStreamStep;

// Multipliers that fold a 128-bit lane forward by `bits`: a carry-less
// product of 64-bit halves h and m gives x * h * m, so the first 8 bytes
// (terms x^127..x^64) take x^(bits+31) and the last 8 take x^(bits-33), each
// stored in the low 32 bits of its half (which multiplies it by x^32).
struct FoldPair {
  uint64_t first, last;
};

constexpr FoldPair fold_pair(uint64_t bits) { return {x_power(bits + 31), x_power(bits - 33)}; }

constexpr FoldPair kFold128 = fold_pair(128), kFold256 = fold_pair(256), kFold384 = fold_pair(384),
                   kFold512 = fold_pair(512);

// kShiftPowers.t[i] = x^(64 * 2^i - 33) mod P: the multiplier (see shift_by)
// that shifts by 8 * 2^i bytes. Each from the last: x^(2e-33) = (x^(e-33))^2 * x^33.
struct ShiftPowers {
  uint32_t t[64];
};

constexpr ShiftPowers make_shift_powers() {
  ShiftPowers powers{};
  powers.t[0] = x_power(64 - 33);
  for (int i = 1; i < 64; ++i) powers.t[i] = multiply(multiply(powers.t[i - 1], powers.t[i - 1]), x_power(33));
  return powers;
}

constexpr ShiftPowers kShiftPowers = make_shift_powers();

inline uint64_t load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

#endif

// Per-architecture primitives. Reg is the register as the crc32 instruction
// takes it. EDDY_CRC_HW functions need the crc32 instructions, EDDY_CRC_FUSED
// ones carry-less multiply as well.
#if defined(EDDY_CRC_X86)
#define EDDY_CRC_HW __attribute__((target("sse4.2")))
#define EDDY_CRC_FUSED __attribute__((target("sse4.2,pclmul")))
using Reg = uint64_t;
using Vec = __m128i;

EDDY_CRC_HW inline Reg crc_word(Reg c, uint64_t word) { return _mm_crc32_u64(c, word); }
EDDY_CRC_HW inline Reg crc_byte(Reg c, uint8_t byte) { return _mm_crc32_u8(static_cast<uint32_t>(c), byte); }
EDDY_CRC_HW inline Reg crc_half(Reg c, uint16_t half) { return _mm_crc32_u16(static_cast<uint32_t>(c), half); }
EDDY_CRC_HW inline Reg crc_quarter(Reg c, uint32_t quarter) { return _mm_crc32_u32(static_cast<uint32_t>(c), quarter); }
EDDY_CRC_FUSED inline Vec load128(const uint8_t* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); }
EDDY_CRC_FUSED inline Vec xor128(Vec a, Vec b) { return _mm_xor_si128(a, b); }
EDDY_CRC_FUSED inline Vec first_bytes(Reg c) { return _mm_cvtsi32_si128(static_cast<int>(c)); }
EDDY_CRC_FUSED inline Vec pair(const FoldPair& k) {
  return _mm_set_epi64x(static_cast<int64_t>(k.last), static_cast<int64_t>(k.first));
}
// lane * x^bits, congruent mod P, 128 bits wide (k = pair(fold_pair(bits))).
EDDY_CRC_FUSED inline Vec fold(Vec lane, Vec k) {
  return _mm_xor_si128(_mm_clmulepi64_si128(lane, k, 0x00), _mm_clmulepi64_si128(lane, k, 0x11));
}
// reg(the 16 bytes of v, c).
EDDY_CRC_FUSED inline Reg crc_vec(Reg c, Vec v) {
  c = _mm_crc32_u64(c, static_cast<uint64_t>(_mm_cvtsi128_si64(v)));
  return _mm_crc32_u64(c, static_cast<uint64_t>(_mm_extract_epi64(v, 1)));
}
// Carry-less product of two 32-bit values (63 bits).
EDDY_CRC_FUSED inline uint64_t clmul32(uint32_t a, uint32_t b) {
  Vec product = _mm_clmulepi64_si128(_mm_cvtsi32_si128(static_cast<int>(a)), _mm_cvtsi32_si128(static_cast<int>(b)), 0);
  return static_cast<uint64_t>(_mm_cvtsi128_si64(product));
}
bool has_crc() { return __builtin_cpu_supports("sse4.2"); }
bool has_clmul() { return __builtin_cpu_supports("pclmul"); }
constexpr const char* kFusedName = "sse4.2+pclmul";
constexpr const char* kCrcName = "sse4.2";
#elif defined(EDDY_CRC_ARM64)
#define EDDY_CRC_HW __attribute__((target("+crc")))
#define EDDY_CRC_FUSED __attribute__((target("+crc+crypto")))
using Reg = uint32_t;
using Vec = uint64x2_t;

EDDY_CRC_HW inline Reg crc_word(Reg c, uint64_t word) { return __crc32cd(c, word); }
EDDY_CRC_HW inline Reg crc_byte(Reg c, uint8_t byte) { return __crc32cb(c, byte); }
EDDY_CRC_HW inline Reg crc_half(Reg c, uint16_t half) { return __crc32ch(c, half); }
EDDY_CRC_HW inline Reg crc_quarter(Reg c, uint32_t quarter) { return __crc32cw(c, quarter); }
EDDY_CRC_FUSED inline Vec load128(const uint8_t* p) { return vreinterpretq_u64_u8(vld1q_u8(p)); }
EDDY_CRC_FUSED inline Vec xor128(Vec a, Vec b) { return veorq_u64(a, b); }
EDDY_CRC_FUSED inline Vec first_bytes(Reg c) { return vcombine_u64(vcreate_u64(c), vcreate_u64(0)); }
EDDY_CRC_FUSED inline Vec pair(const FoldPair& k) { return vcombine_u64(vcreate_u64(k.first), vcreate_u64(k.last)); }
EDDY_CRC_FUSED inline Vec fold(Vec lane, Vec k) {
  poly128_t first = vmull_p64(vgetq_lane_u64(lane, 0), vgetq_lane_u64(k, 0));
  poly128_t last = vmull_high_p64(vreinterpretq_p64_u64(lane), vreinterpretq_p64_u64(k));
  return veorq_u64(vreinterpretq_u64_p128(first), vreinterpretq_u64_p128(last));
}
EDDY_CRC_FUSED inline Reg crc_vec(Reg c, Vec v) {
  return __crc32cd(__crc32cd(c, vgetq_lane_u64(v, 0)), vgetq_lane_u64(v, 1));
}
EDDY_CRC_FUSED inline uint64_t clmul32(uint32_t a, uint32_t b) {
  return vgetq_lane_u64(vreinterpretq_u64_p128(vmull_p64(a, b)), 0);
}
bool has_crc() { return (getauxval(AT_HWCAP) & HWCAP_CRC32) != 0; }
bool has_clmul() { return (getauxval(AT_HWCAP) & HWCAP_PMULL) != 0; }
constexpr const char* kFusedName = "armv8-crc+pmull";
constexpr const char* kCrcName = "armv8-crc";
#endif

#if defined(EDDY_CRC_X86) || defined(EDDY_CRC_ARM64)

EDDY_CRC_HW Reg one_stream(Reg c, const uint8_t* p, size_t n) {
  for (; n >= 8; p += 8, n -= 8) c = crc_word(c, load64(p));
  for (; n > 0; --n) c = crc_byte(c, *p++);
  return c;
}

// REQUIRES: n < 16. At most four instructions (one stream's byte loop takes
// up to seven for less than 8 bytes).
EDDY_CRC_HW Reg few_bytes(Reg c, const uint8_t* p, size_t n) {
  if (n & 8) c = crc_word(c, load64(p)), p += 8;
  if (n & 4) c = crc_quarter(c, load_le32(p)), p += 4;
  if (n & 2) c = crc_half(c, static_cast<uint16_t>(p[0] | p[1] << 8)), p += 2;
  if (n & 1) c = crc_byte(c, *p);
  return c;
}

// Three streams over blocks of `block` bytes each, while 3 * block bytes
// remain; *c is the running register.
EDDY_CRC_HW void three_streams(Reg* c, const uint8_t** p, size_t* n, size_t block, const ShiftTables& shift_block) {
  while (*n >= 3 * block) {
    Reg c0 = *c, c1 = 0, c2 = 0;
    const uint8_t* q = *p;
    const uint8_t* end = q + block;
    do {
      c0 = crc_word(c0, load64(q));
      c1 = crc_word(c1, load64(q + block));
      c2 = crc_word(c2, load64(q + 2 * block));
      q += 8;
    } while (q < end);
    uint32_t joined = shift(shift_block, static_cast<uint32_t>(c0)) ^ static_cast<uint32_t>(c1);
    *c = shift(shift_block, joined) ^ static_cast<uint32_t>(c2);
    *p += 3 * block;
    *n -= 3 * block;
  }
}

EDDY_CRC_HW uint32_t crc32c_single(uint32_t crc, const uint8_t* p, size_t n) {
  return ~static_cast<uint32_t>(one_stream(~crc, p, n));
}

EDDY_CRC_HW Reg three_stream_register(Reg c, const uint8_t* p, size_t n) {
  while (n > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0) {
    c = crc_byte(c, *p++);
    --n;
  }
  three_streams(&c, &p, &n, kLongBlock, kShiftLong);
  three_streams(&c, &p, &n, kMidBlock, kShiftMid);
  three_streams(&c, &p, &n, kShortBlock, kShiftShort);
  return one_stream(c, p, n);
}

EDDY_CRC_HW uint32_t crc32c_three(uint32_t crc, const uint8_t* p, size_t n) {
  return ~static_cast<uint32_t>(three_stream_register(~crc, p, n));
}

// shift(c, bytes) given m = x^(8 * bytes - 33) mod P.
EDDY_CRC_FUSED inline uint32_t shift_by(uint32_t c, uint32_t m) {
  return static_cast<uint32_t>(crc_word(0, clmul32(c, m)));
}

// x^(8 * bytes - 33) mod P. REQUIRES: bytes is a nonzero multiple of 8.
EDDY_CRC_FUSED uint32_t shift_multiplier(size_t bytes) {
  uint64_t units = bytes / 8;
  int i = std::countr_zero(units);
  uint32_t m = kShiftPowers.t[i];
  while ((units >> ++i) != 0) {
    if ((units >> i) & 1) m = shift_by(m, kShiftPowers.t[i]);  // x^(e-33) * x^(f-33) * x^33
  }
  return m;
}

// The streams A, B, C at a, a + s, a + 2s over their next `bytes` bytes.
EDDY_CRC_HW inline void run_streams(Reg* c, const uint8_t* a, size_t s, size_t bytes) {
  for (size_t w = 0; w < bytes; w += 8) {
    c[0] = crc_word(c[0], load64(a + w));
    c[1] = crc_word(c[1], load64(a + s + w));
    c[2] = crc_word(c[2], load64(a + 2 * s + w));
  }
}

// Lane i becomes lane i * x^512 + the 16 bytes at q + 16i (mod P).
EDDY_CRC_FUSED inline void fold_lanes(Vec* x, const uint8_t* q, Vec k512) {
  for (int i = 0; i < 4; ++i) x[i] = xor128(fold(x[i], k512), load128(q + 16 * i));
}

EDDY_CRC_FUSED uint32_t crc32c_fused(uint32_t crc, const uint8_t* p, size_t n) {
  Reg c = ~crc;
  const size_t lead = (0 - reinterpret_cast<uintptr_t>(p)) & 15;  // to 16-byte alignment: no load splits a line
  if (n < lead + kStep) return ~static_cast<uint32_t>(three_stream_register(c, p, n));
  c = few_bytes(c, p, lead);
  p += lead;
  n -= lead;
  // [V | A | B | C | tail], |A| = |B| = |C| = s = steps * 64 + extra, |tail| < 16.
  // Of the n % kStep bytes the steps leave, the streams take about 3/4 and V
  // the rest, side by side (V alone folds 16 bytes in 4 cycles on the CPU
  // measured, the streams take 24 in 3).
  const size_t steps = n / kStep;
  const size_t extra = n % kStep / 32 * 8;
  const size_t s = steps * kStreamStep + extra;
  const size_t v = (n - 3 * s) & ~size_t{15};
  // Multipliers for s, 2s, 3s bytes; they do not wait for the loop.
  const uint32_t m1 = shift_multiplier(s), m2 = shift_by(m1, m1), m3 = shift_by(m2, m1);
  const Vec k128 = pair(kFold128), k512 = pair(kFold512);
  Vec x[4] = {xor128(load128(p), first_bytes(c)), load128(p + 16), load128(p + 32), load128(p + 48)};
  Reg streams[3] = {0, 0, 0};
  const uint8_t* q = p + 64;
  const uint8_t* a = p + v;
  for (size_t i = 1; i < steps; ++i, q += 64, a += kStreamStep) {
    run_streams(streams, a, s, kStreamStep);
    fold_lanes(x, q, k512);
  }
  run_streams(streams, a, s, kStreamStep + extra);
  for (; p + v - q >= 64; q += 64) fold_lanes(x, q, k512);
  Vec lane = xor128(xor128(fold(x[0], pair(kFold384)), fold(x[1], pair(kFold256))), xor128(fold(x[2], k128), x[3]));
  for (; q < p + v; q += 16) lane = xor128(fold(lane, k128), load128(q));
  const uint32_t joined = shift_by(static_cast<uint32_t>(crc_vec(0, lane)), m3) ^
                          shift_by(static_cast<uint32_t>(streams[0]), m2) ^
                          shift_by(static_cast<uint32_t>(streams[1]), m1) ^ static_cast<uint32_t>(streams[2]);
  return ~static_cast<uint32_t>(few_bytes(joined, p + v + 3 * s, n - v - 3 * s));
}

#endif

using CrcFunction = uint32_t (*)(uint32_t, const uint8_t*, size_t);

uint32_t portable_bytes(uint32_t crc, const uint8_t* p, size_t n) { return crc32c_portable(crc, p, n); }

// The paths this CPU runs: best is crc32c's.
struct Choice {
  CrcFunction best, three, single;
  const char* name;
};

Choice choose() {
#if defined(EDDY_CRC_X86) || defined(EDDY_CRC_ARM64)
#if defined(EDDY_CRC_X86)
  __builtin_cpu_init();  // may run before libgcc's own constructor
#endif
  if (has_crc()) {
    if (has_clmul()) return {crc32c_fused, crc32c_three, crc32c_single, kFusedName};
    return {crc32c_three, crc32c_three, crc32c_single, kCrcName};
  }
#endif
  return {portable_bytes, portable_bytes, portable_bytes, "portable"};
}

const Choice g_choice = choose();

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
  return g_choice.best(crc, static_cast<const uint8_t*>(data), length);
}

uint32_t crc32c_three_streams(uint32_t crc, const void* data, size_t length) {
  return g_choice.three(crc, static_cast<const uint8_t*>(data), length);
}

uint32_t crc32c_one_stream(uint32_t crc, const void* data, size_t length) {
  return g_choice.single(crc, static_cast<const uint8_t*>(data), length);
}

const char* crc32c_implementation() { return g_choice.name; }

}  // namespace eddy::port
