// A thin wrapper around one SQLite connection: a cache of prepared
// statements, statement handles that reset themselves, and a scoped
// transaction. sqlite3.h stays out of this header.
//
// Thread safety: none. The connection is opened in SQLite's multi-thread mode
// (SQLITE_OPEN_NOMUTEX, no per-call mutex). REQUIRES: one thread at a time
// uses a Database and everything obtained from it; in Eddy that is the
// reactor thread, the only user of the meta room.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "port/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace eddy::meta {

class Database;

// A prepared statement borrowed from the Database's cache (or, when the cached
// one is already in use further up the stack, a private one). Move-only. On
// destruction the statement is reset and its bindings cleared, so the next
// user starts clean. REQUIRES: the Database outlives the handle.
class Statement {
 public:
  Statement() = default;
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  // Parameter indexes start at 1 (SQLite's convention). Values are copied
  // (SQLITE_TRANSIENT), so temporaries are fine. A failed bind is reported by
  // the next step().
  void bind_int64(int index, int64_t value);
  void bind_text(int index, std::string_view value);
  void bind_blob(int index, const void* data, size_t length);
  void bind_null(int index);

  // Advances. *row is true when a row is available, false when the statement
  // is done.
  Status step(bool* row);
  // Steps a statement that returns no rows (INSERT/UPDATE/DELETE/DDL) to the end.
  Status run();

  // Column indexes start at 0. REQUIRES: the last step() produced a row.
  int64_t column_int64(int index) const;
  std::string column_text(int index) const;
  std::vector<uint8_t> column_blob(int index) const;
  bool column_is_null(int index) const;

 private:
  friend class Database;
  Statement(Database* db, sqlite3_stmt* stmt, bool* in_use) : db_(db), stmt_(stmt), in_use_(in_use) {}
  void release();
  void note_bind(int rc);

  Database* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  bool* in_use_ = nullptr;  // the cache slot's flag; nullptr: privately owned, finalized on release
  int bind_rc_ = 0;         // first failed bind (SQLITE_OK when none)
};

class Database {
 public:
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  // Opens path read-write, creating an empty file when it is missing (the
  // parent directory must exist). SQLite reads nothing yet: a corrupt file is
  // detected by the first query. vfs names the SQLite VFS to use (a test's
  // fault-injecting one, tests/unit/meta/power_cut_vfs.h); nullptr: SQLite's
  // default, what production uses.
  static Status open(const std::string& path, std::unique_ptr<Database>* out, const char* vfs = nullptr);

  const std::string& path() const { return path_; }

  // Runs SQL text (one or more statements) that returns no rows.
  Status exec(const char* sql);
  // Runs a statement returning one row of one column (PRAGMA x, SELECT count(*)).
  Status query_int64(const char* sql, int64_t* out);
  Status query_text(const char* sql, std::string* out);

  // Returns the cached prepared statement for sql (prepared on first use).
  Status prepare(std::string_view sql, Statement* out);

  // Rows changed by the last INSERT/UPDATE/DELETE.
  int64_t changes() const;
  bool in_transaction() const;

  // Finalizes every cached statement and closes the connection; the last
  // connection to close checkpoints the WAL into the database file.
  // REQUIRES: no Statement handles alive. Idempotent.
  Status close();

  // A Status for SQLite result code rc from this connection, naming the file
  // and the operation: "<path>: <what>: <sqlite message> (<code name>)".
  // SQLITE_CORRUPT/NOTADB map to corruption, SQLITE_CONSTRAINT to
  // invalid_argument, everything else (SQLITE_BUSY: the file is locked by
  // another process) to io_error.
  Status error(int rc, std::string_view what) const;

 private:
  friend class Statement;
  struct CachedStatement {
    sqlite3_stmt* stmt = nullptr;
    bool in_use = false;
  };

  Database(std::string path, sqlite3* handle) : path_(std::move(path)), db_(handle) {}

  std::string path_;
  sqlite3* db_ = nullptr;
  // Lookup by string_view without building a std::string.
  struct SqlHash {
    using is_transparent = void;
    size_t operator()(std::string_view sql) const { return std::hash<std::string_view>()(sql); }
  };

  // Keyed by SQL text. unordered_map nodes are stable, so Statement handles
  // may point at a slot's in_use flag.
  std::unordered_map<std::string, CachedStatement, SqlHash, std::equal_to<>> cache_;
};

// BEGIN IMMEDIATE ... COMMIT. Rolls back on destruction unless committed.
class Transaction {
 public:
  explicit Transaction(Database* db) : db_(db) {}
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  Status begin();
  Status commit();

 private:
  Database* db_;
  bool open_ = false;
};

}  // namespace eddy::meta
