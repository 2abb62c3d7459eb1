// Uuid: Kafka's 128-bit identifier (topic ids, cluster id). Printed as Kafka
// prints it: URL-safe base64 without padding, 22 characters.
#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

namespace eddy::meta {

struct Uuid {
  std::array<uint8_t, 16> bytes{};

  // A random version-4 UUID (randomness from SQLite's generator, seeded from
  // the OS). As Kafka's Uuid.randomUuid, it is never the zero UUID, never the
  // reserved metadata topic id (0...01), and its text never starts with '-'
  // (so it cannot be mistaken for a command-line flag).
  static Uuid random();

  // Parses the 22-character form. Only canonical text is accepted (the unused
  // low bits of the last character must be zero), so parse/print round-trips.
  static bool parse(std::string_view text, Uuid* out);

  std::string to_string() const;
  bool is_zero() const;

  friend bool operator==(const Uuid&, const Uuid&) = default;
  friend auto operator<=>(const Uuid&, const Uuid&) = default;
};

}  // namespace eddy::meta
