#include "app/committed_offsets_cache.h"

#include "meta/meta_store.h"

namespace eddy::app {

namespace {

Status change_stamp(meta::MetaStore& meta, int64_t* out) {
  return meta.database()->query_int64("SELECT total_changes()", out);
}

}  // namespace

Status CommittedOffsetsCache::read(meta::MetaStore& meta, const std::vector<GroupCommittedOffset>** out) {
  *out = &rows_;
  int64_t stamp = 0;
  Status s = change_stamp(meta, &stamp);
  if (!s.ok()) {
    valid_ = false;
    rows_.clear();
    return s;
  }
  if (valid_ && stamp == stamp_) return Status();
  s = read_store(meta);
  valid_ = s.ok();
  stamp_ = stamp;
  return s;
}

Status CommittedOffsetsCache::read_store(meta::MetaStore& meta) {
  ++store_reads_;
  rows_.clear();
  meta::OffsetStore& offsets = meta.offsets();
  std::vector<std::string> groups;
  Status s = offsets.list_groups(&groups);
  if (!s.ok()) return s;
  std::vector<meta::CommittedOffset> committed;
  for (const std::string& group : groups) {
    committed.clear();
    s = offsets.fetch_all(group, &committed);
    if (!s.ok()) return s;
    for (meta::CommittedOffset& c : committed) {
      rows_.push_back(GroupCommittedOffset{group, std::move(c.topic), c.partition, c.offset});
    }
  }
  return Status();
}

}  // namespace eddy::app
