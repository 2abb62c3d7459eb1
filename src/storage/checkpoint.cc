#include "storage/checkpoint.h"

#include <algorithm>
#include <vector>

#include "port/log.h"
#include "port/port.h"
#include "port/replace_file.h"
#include "protocol/record_batch.h"
#include "storage/segment.h"

namespace eddy::storage {

namespace {

constexpr uint32_t kCleanShutdownMagic = 0x45444353;  // "EDCS"
constexpr uint32_t kLogStartMagic = 0x45444c53;       // "EDLS"
constexpr uint32_t kTransactionsMagic = 0x45445458;   // "EDTX"
constexpr uint32_t kSnapshotMagic = 0x45445453;       // "EDTS"
constexpr uint32_t kLeaderEpochMagic = 0x4544454c;    // "EDEL"
// A leader-epoch file with more fields than this is not read (a damaged
// count): 4 Mi epochs.
constexpr uint64_t kMaxLeaderEpochFields = 8u << 20;
// A snapshot larger than this is not read (a damaged size field).
constexpr uint64_t kMaxSnapshotBytes = 256u << 20;

// magic u32, count u32, fields i64..., crc u32
std::vector<uint8_t> encode(uint32_t magic, const std::vector<int64_t>& fields) {
  std::vector<uint8_t> out(8 + fields.size() * 8 + 4);
  protocol::store_be32(out.data(), magic);
  protocol::store_be32(out.data() + 4, static_cast<uint32_t>(fields.size()));
  for (size_t i = 0; i < fields.size(); ++i) protocol::store_be64(out.data() + 8 + i * 8, static_cast<uint64_t>(fields[i]));
  protocol::store_be32(out.data() + out.size() - 4, port::crc32c(0, out.data(), out.size() - 4));
  return out;
}

// count: the number of fields expected; -1: whatever the header says
// (bounded by max_count, and by the file's size before anything is
// allocated).
bool decode(const std::string& path, uint32_t magic, int64_t count, std::vector<int64_t>* fields,
            uint64_t max_count = 0) {
  port::File file;
  if (port::File::open(path, port::OpenMode::kReadOnly, &file)) return false;
  if (count < 0) {
    uint8_t head[8];
    size_t got = 0;
    if (file.read_at(0, head, sizeof(head), &got) || got != sizeof(head)) return false;
    count = protocol::load_be32(head + 4);
    if (static_cast<uint64_t>(count) > max_count) return false;
  }
  const size_t expected_size = 8 + static_cast<size_t>(count) * 8 + 4;
  uint64_t size = 0;
  size_t got = 0;
  if (file.size(&size) || size != expected_size) return false;
  std::vector<uint8_t> bytes(expected_size);
  if (file.read_at(0, bytes.data(), bytes.size(), &got) || got != bytes.size()) return false;
  if (protocol::load_be32(bytes.data()) != magic ||
      protocol::load_be32(bytes.data() + 4) != static_cast<uint64_t>(count)) {
    return false;
  }
  if (port::crc32c(0, bytes.data(), bytes.size() - 4) != protocol::load_be32(bytes.data() + bytes.size() - 4)) {
    return false;
  }
  fields->resize(static_cast<size_t>(count));
  for (size_t i = 0; i < fields->size(); ++i) (*fields)[i] = static_cast<int64_t>(protocol::load_be64(bytes.data() + 8 + i * 8));
  return true;
}

Status replace_file(const std::string& directory, const char* name, const std::vector<uint8_t>& bytes, bool durable) {
  const std::string path = directory + "/" + name;
  if (std::error_code ec = port::replace_file(path, bytes.data(), bytes.size(), durable)) {
    EDDY_LOG_ERROR("cannot write {}: {}", path, port::error_message(ec));
    return Status::from_error_code(ec);
  }
  return Status();
}

}  // namespace

Status write_clean_shutdown(const std::string& directory, const CleanShutdown& c) {
  return replace_file(directory, kCleanShutdownFile,
                      encode(kCleanShutdownMagic, {c.active_base_offset, c.next_offset, c.end_position, c.log_start_offset}),
                      /*durable=*/true);
}

bool read_clean_shutdown(const std::string& directory, CleanShutdown* c) {
  std::vector<int64_t> f;
  if (!decode(directory + "/" + kCleanShutdownFile, kCleanShutdownMagic, 4, &f)) return false;
  *c = CleanShutdown{f[0], f[1], f[2], f[3]};
  return true;
}

Status write_log_start_offset(const std::string& directory, int64_t log_start_offset) {
  return replace_file(directory, kLogStartOffsetFile, encode(kLogStartMagic, {log_start_offset}), /*durable=*/false);
}

bool read_log_start_offset(const std::string& directory, int64_t* log_start_offset) {
  std::vector<int64_t> f;
  if (!decode(directory + "/" + kLogStartOffsetFile, kLogStartMagic, 1, &f)) return false;
  *log_start_offset = f[0];
  return true;
}

Status write_first_transactional_offset(const std::string& directory, int64_t offset) {
  return replace_file(directory, kTransactionsFile, encode(kTransactionsMagic, {offset}), /*durable=*/true);
}

bool read_first_transactional_offset(const std::string& directory, int64_t* offset) {
  std::vector<int64_t> f;
  if (!decode(directory + "/" + kTransactionsFile, kTransactionsMagic, 1, &f)) return false;
  *offset = f[0];
  return true;
}

// magic u32, log end i64, payload, crc u32 (over everything before it)
Status write_transactions_snapshot(const std::string& directory, int64_t log_end_offset,
                                   const std::vector<uint8_t>& payload) {
  std::vector<uint8_t> bytes(12 + payload.size() + 4);
  protocol::store_be32(bytes.data(), kSnapshotMagic);
  protocol::store_be64(bytes.data() + 4, static_cast<uint64_t>(log_end_offset));
  std::copy(payload.begin(), payload.end(), bytes.begin() + 12);
  protocol::store_be32(bytes.data() + bytes.size() - 4, port::crc32c(0, bytes.data(), bytes.size() - 4));
  return replace_file(directory, kTransactionsSnapshotFile, bytes, /*durable=*/true);
}

bool read_transactions_snapshot(const std::string& directory, int64_t* log_end_offset,
                                std::vector<uint8_t>* payload) {
  port::File file;
  if (port::File::open(directory + "/" + kTransactionsSnapshotFile, port::OpenMode::kReadOnly, &file)) return false;
  uint64_t size = 0;
  size_t got = 0;
  if (file.size(&size) || size < 16 || size > kMaxSnapshotBytes) return false;
  std::vector<uint8_t> bytes(static_cast<size_t>(size));
  if (file.read_at(0, bytes.data(), bytes.size(), &got) || got != bytes.size()) return false;
  if (protocol::load_be32(bytes.data()) != kSnapshotMagic ||
      port::crc32c(0, bytes.data(), bytes.size() - 4) != protocol::load_be32(bytes.data() + bytes.size() - 4)) {
    return false;
  }
  *log_end_offset = static_cast<int64_t>(protocol::load_be64(bytes.data() + 4));
  payload->assign(bytes.begin() + 12, bytes.end() - 4);
  return true;
}

Status write_leader_epochs(const std::string& directory, const std::vector<int64_t>& fields) {
  return replace_file(directory, kLeaderEpochFile, encode(kLeaderEpochMagic, fields), /*durable=*/true);
}

bool read_leader_epochs(const std::string& directory, std::vector<int64_t>* fields) {
  return decode(directory + "/" + kLeaderEpochFile, kLeaderEpochMagic, -1, fields, kMaxLeaderEpochFields);
}

}  // namespace eddy::storage
