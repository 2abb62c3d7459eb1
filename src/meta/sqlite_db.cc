#include "meta/sqlite_db.h"

#include <sqlite3.h>

#include <system_error>
#include <utility>

namespace eddy::meta {

namespace {

// The start of a statement's SQL, to say which statement failed.
std::string sql_head(sqlite3_stmt* stmt) {
  const char* sql = sqlite3_sql(stmt);
  if (sql == nullptr) return "statement";
  std::string head(sql);
  constexpr size_t kMax = 80;
  if (head.size() > kMax) head = head.substr(0, kMax) + "...";
  return head;
}

// ": <OS reason>" for a failed open or I/O, from the errno SQLite saw.
std::string os_reason(sqlite3* db, int rc) {
  int primary = rc & 0xff;
  if (db == nullptr || (primary != SQLITE_CANTOPEN && primary != SQLITE_IOERR && primary != SQLITE_FULL)) return "";
  int err = sqlite3_system_errno(db);
  if (err == 0) return "";
  return " (" + std::generic_category().message(err) + ")";
}

}  // namespace

// ---------------------------------------------------------------------------
// Statement
// ---------------------------------------------------------------------------

Statement::Statement(Statement&& other) noexcept
    : db_(other.db_), stmt_(other.stmt_), in_use_(other.in_use_), bind_rc_(other.bind_rc_) {
  other.db_ = nullptr;
  other.stmt_ = nullptr;
  other.in_use_ = nullptr;
  other.bind_rc_ = SQLITE_OK;
}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    release();
    db_ = std::exchange(other.db_, nullptr);
    stmt_ = std::exchange(other.stmt_, nullptr);
    in_use_ = std::exchange(other.in_use_, nullptr);
    bind_rc_ = std::exchange(other.bind_rc_, SQLITE_OK);
  }
  return *this;
}

Statement::~Statement() { release(); }

void Statement::release() {
  if (stmt_ == nullptr) return;
  if (in_use_ != nullptr) {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
    *in_use_ = false;
  } else {
    sqlite3_finalize(stmt_);
  }
  db_ = nullptr;
  stmt_ = nullptr;
  in_use_ = nullptr;
  bind_rc_ = SQLITE_OK;
}

void Statement::note_bind(int rc) {
  if (rc != SQLITE_OK && bind_rc_ == SQLITE_OK) bind_rc_ = rc;
}

void Statement::bind_int64(int index, int64_t value) { note_bind(sqlite3_bind_int64(stmt_, index, value)); }

void Statement::bind_text(int index, std::string_view value) {
  // A non-null pointer even for empty text, so the value is '' and not NULL.
  static const char kEmpty[] = "";
  const char* data = value.empty() ? kEmpty : value.data();
  note_bind(sqlite3_bind_text64(stmt_, index, data, value.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
}

void Statement::bind_blob(int index, const void* data, size_t length) {
  if (length == 0) {
    note_bind(sqlite3_bind_zeroblob(stmt_, index, 0));  // empty blob, not NULL
  } else {
    note_bind(sqlite3_bind_blob64(stmt_, index, data, length, SQLITE_TRANSIENT));
  }
}

void Statement::bind_null(int index) { note_bind(sqlite3_bind_null(stmt_, index)); }

Status Statement::step(bool* row) {
  *row = false;
  if (bind_rc_ != SQLITE_OK) return db_->error(bind_rc_, "bind parameters of " + sql_head(stmt_));
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) {
    *row = true;
    return Status();
  }
  if (rc == SQLITE_DONE) return Status();
  // sqlite3_reset returns the same error and makes sqlite3_errmsg precise.
  sqlite3_reset(stmt_);
  return db_->error(rc, sql_head(stmt_));
}

Status Statement::run() {
  bool row = false;
  do {
    Status s = step(&row);
    if (!s.ok()) return s;
  } while (row);
  return Status();
}

int64_t Statement::column_int64(int index) const { return sqlite3_column_int64(stmt_, index); }

std::string Statement::column_text(int index) const {
  const unsigned char* text = sqlite3_column_text(stmt_, index);
  int length = sqlite3_column_bytes(stmt_, index);
  if (text == nullptr || length <= 0) return std::string();
  return std::string(reinterpret_cast<const char*>(text), static_cast<size_t>(length));
}

std::vector<uint8_t> Statement::column_blob(int index) const {
  const void* data = sqlite3_column_blob(stmt_, index);
  int length = sqlite3_column_bytes(stmt_, index);
  if (data == nullptr || length <= 0) return {};
  const auto* bytes = static_cast<const uint8_t*>(data);
  return std::vector<uint8_t>(bytes, bytes + length);
}

bool Statement::column_is_null(int index) const { return sqlite3_column_type(stmt_, index) == SQLITE_NULL; }

// ---------------------------------------------------------------------------
// Database
// ---------------------------------------------------------------------------

Database::~Database() {
  Status ignored = close();
  (void)ignored;
}

Status Database::open(const std::string& path, std::unique_ptr<Database>* out, const char* vfs) {
  sqlite3* handle = nullptr;
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
  int rc = sqlite3_open_v2(path.c_str(), &handle, flags, vfs);
  if (rc != SQLITE_OK) {
    std::string message = path + ": cannot open the metadata database: " +
                          (handle != nullptr ? sqlite3_errmsg(handle) : sqlite3_errstr(rc)) + os_reason(handle, rc);
    sqlite3_close(handle);
    return Status::io_error(std::move(message));
  }
  sqlite3_extended_result_codes(handle, 1);
  out->reset(new Database(path, handle));
  return Status();
}

Status Database::error(int rc, std::string_view what) const {
  std::string message = path_;
  message += ": ";
  message += what;
  message += ": ";
  // The connection's message belongs to rc only when it is the last error.
  if (db_ != nullptr && sqlite3_extended_errcode(db_) == rc) {
    message += sqlite3_errmsg(db_);
  } else {
    message += sqlite3_errstr(rc);
  }
  message += os_reason(db_, rc);
  if ((rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED) {
    message += "; the file is in use by another process (another Eddy on the same data directory?)";
  }
  message += " (sqlite error " + std::to_string(rc) + ")";
  switch (rc & 0xff) {
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return Status::corruption(std::move(message));
    case SQLITE_CONSTRAINT:
      return Status::invalid_argument(std::move(message));
    default:
      return Status::io_error(std::move(message));
  }
}

Status Database::exec(const char* sql) {
  if (db_ == nullptr) return Status::io_error(path_ + ": database is closed");
  char* errmsg = nullptr;
  int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &errmsg);
  sqlite3_free(errmsg);  // error() reads the same text from the connection
  if (rc != SQLITE_OK) return error(rc, sql);
  return Status();
}

Status Database::prepare(std::string_view sql, Statement* out) {
  if (db_ == nullptr) return Status::io_error(path_ + ": database is closed");
  auto it = cache_.find(sql);
  if (it == cache_.end()) {
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT, &stmt,
                                nullptr);
    if (rc != SQLITE_OK) return error(rc, "prepare " + std::string(sql.substr(0, 80)));
    it = cache_.emplace(std::string(sql), CachedStatement{stmt, false}).first;
  }
  CachedStatement& slot = it->second;
  if (slot.in_use) {
    // The cached statement is being stepped further up the stack: use a
    // private copy, finalized when the handle goes away.
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
    if (rc != SQLITE_OK) return error(rc, "prepare " + std::string(sql.substr(0, 80)));
    *out = Statement(this, stmt, nullptr);
    return Status();
  }
  slot.in_use = true;
  *out = Statement(this, slot.stmt, &slot.in_use);
  return Status();
}

Status Database::query_int64(const char* sql, int64_t* out) {
  Statement st;
  Status s = prepare(sql, &st);
  if (!s.ok()) return s;
  bool row = false;
  s = st.step(&row);
  if (!s.ok()) return s;
  if (!row) return Status::not_found(path_ + ": no result from " + sql);
  *out = st.column_int64(0);
  return Status();
}

Status Database::query_text(const char* sql, std::string* out) {
  Statement st;
  Status s = prepare(sql, &st);
  if (!s.ok()) return s;
  bool row = false;
  s = st.step(&row);
  if (!s.ok()) return s;
  if (!row) return Status::not_found(path_ + ": no result from " + sql);
  *out = st.column_text(0);
  return Status();
}

int64_t Database::changes() const { return db_ == nullptr ? 0 : sqlite3_changes(db_); }

bool Database::in_transaction() const { return db_ != nullptr && sqlite3_get_autocommit(db_) == 0; }

Status Database::close() {
  if (db_ == nullptr) return Status();
  for (auto& [sql, slot] : cache_) sqlite3_finalize(slot.stmt);
  cache_.clear();
  int rc = sqlite3_close(db_);
  if (rc != SQLITE_OK) {
    Status s = error(rc, "close");
    // Statements still held by someone: let SQLite close when they finish.
    sqlite3_close_v2(db_);
    db_ = nullptr;
    return s;
  }
  db_ = nullptr;
  return Status();
}

// ---------------------------------------------------------------------------
// Transaction
// ---------------------------------------------------------------------------

Transaction::~Transaction() {
  if (open_ && db_->in_transaction()) {
    Status ignored = db_->exec("ROLLBACK");
    (void)ignored;
  }
}

Status Transaction::begin() {
  Statement st;
  Status s = db_->prepare("BEGIN IMMEDIATE", &st);
  if (s.ok()) s = st.run();
  if (s.ok()) open_ = true;
  return s;
}

Status Transaction::commit() {
  Statement st;
  Status s = db_->prepare("COMMIT", &st);
  if (s.ok()) s = st.run();
  if (s.ok()) open_ = false;
  return s;
}

}  // namespace eddy::meta
