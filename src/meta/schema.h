// The metadata database's schema: identity checks on open and the versioned
// migrations. PRAGMA application_id marks an Eddy database; PRAGMA
// user_version is the schema version. Migration N -> N+1 runs in one
// transaction together with the user_version update, so a crash leaves the
// database at N or at N+1, never between.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "meta/sqlite_db.h"
#include "port/status.h"

namespace eddy::meta {

// The metadata schema version this binary writes and understands.
inline constexpr int64_t kSchemaVersion = 8;
// PRAGMA application_id of an Eddy metadata database: "Eddy" in ASCII.
inline constexpr int64_t kApplicationId = 0x45646479;
// ... and of the forward progress database: "EdFw".
inline constexpr int64_t kForwardApplicationId = 0x45644677;

struct Migration {
  int64_t to_version;
  Status (*apply)(Database* db);
};

// One kind of Eddy database file: how it is recognised and how its schema
// grows. Its version is the number of migrations.
struct SchemaSpec {
  int64_t application_id;
  const char* what;  // "metadata database"
  const char* loss;  // what moving the file away loses, for refusals
  const Migration* migrations;
  size_t migration_count;
  int64_t version() const { return static_cast<int64_t>(migration_count); }
};
const SchemaSpec& metadata_schema();         // <log.dirs>/eddy.db
const SchemaSpec& forward_progress_schema();  // <log.dirs>/forward.db

// Reads the database without writing anything and decides whether this
// binary may use it. *version is the schema version found (0: new, empty).
// Refuses with:
//   corruption     SQLite cannot read it, PRAGMA quick_check finds damage, or
//                  it is another application's SQLite database;
//   not_supported  its schema is newer than spec.version();
//   io_error       it cannot be opened or read (permissions, a directory).
// Every message names the file and says that nothing was changed.
Status inspect_database(Database* db, const SchemaSpec& spec, int64_t* version);

// Brings the schema from from_version up to spec.version(), one migration
// (and one transaction) per step. REQUIRES: inspect_database accepted db
// with *version == from_version.
Status migrate_database(Database* db, const SchemaSpec& spec, int64_t from_version);

// Opens (creating when missing) an Eddy database file: exclusive locking,
// inspect_database (nothing written to a refused file), WAL with
// synchronous=FULL, migrate_database. *found_version: the version found
// (0: created now). vfs: as for Database::open (nullptr: SQLite's default).
Status open_database(const std::string& path, const SchemaSpec& spec, std::unique_ptr<Database>* out,
                     int64_t* found_version, const char* vfs = nullptr);

}  // namespace eddy::meta
