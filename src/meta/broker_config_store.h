// Broker-level dynamic configs: what IncrementalAlterConfigs sets on the
// BROKER resource, kept across restarts. Values are text; the caller
// validates keys and values against the broker's config schema.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "meta/config_change.h"
#include "meta/sqlite_db.h"
#include "port/status.h"

namespace eddy::meta {

class BrokerConfigStore {
 public:
  explicit BrokerConfigStore(Database* db) : db_(db) {}

  // Applies SET/DELETE changes in order, all or nothing. Deleting a key that
  // is not set is not an error. invalid_argument for an empty key.
  Status alter(const std::vector<ConfigChange>& changes);
  Status set(const std::string& key, const std::string& value) { return alter({ConfigChange::set(key, value)}); }
  Status remove(const std::string& key) { return alter({ConfigChange::remove(key)}); }

  // Every dynamic broker config.
  Status list(std::map<std::string, std::string>* out);

 private:
  Database* db_;
};

}  // namespace eddy::meta
