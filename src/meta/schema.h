// The metadata database's schema: identity checks on open and the versioned
// migrations. PRAGMA application_id marks an Eddy database; PRAGMA
// user_version is the schema version. Migration N -> N+1 runs in one
// transaction together with the user_version update, so a crash leaves the
// database at N or at N+1, never between.
#pragma once

#include <cstdint>

#include "meta/sqlite_db.h"
#include "meta/status.h"

namespace eddy::meta {

// The schema version this binary writes and understands.
inline constexpr int64_t kSchemaVersion = 2;
// PRAGMA application_id of an Eddy metadata database: "Eddy" in ASCII.
inline constexpr int64_t kApplicationId = 0x45646479;

// Reads the database without writing anything and decides whether this
// binary may use it. *version is the schema version found (0: new, empty).
// Refuses with:
//   corruption     SQLite cannot read it, PRAGMA quick_check finds damage, or
//                  it is another application's SQLite database;
//   not_supported  its schema is newer than kSchemaVersion;
//   io_error       it cannot be opened or read (permissions, a directory).
// Every message names the file and says that nothing was changed.
Status inspect_database(Database* db, int64_t* version);

// Brings the schema from from_version up to kSchemaVersion, one migration
// (and one transaction) per step. REQUIRES: inspect_database accepted db
// with *version == from_version.
Status migrate_database(Database* db, int64_t from_version);

}  // namespace eddy::meta
