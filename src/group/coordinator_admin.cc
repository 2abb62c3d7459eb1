// ListGroups, DescribeGroups and DeleteGroups.
#include <algorithm>
#include <cctype>

#include "group/coordinator.h"
#include "protocol/errors.h"

namespace eddy::group {

using protocol::ErrorCode;
using protocol::to_int;

namespace {

std::string lowercase(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), ::tolower);
  return s;
}

// ListGroups' filters: none, or one equal to value ignoring case.
bool passes_filter(const std::vector<std::string>& filter, const std::string& value) {
  if (filter.empty()) return true;
  for (const auto& f : filter) {
    if (lowercase(f) == lowercase(value)) return true;
  }
  return false;
}

}  // namespace

protocol::ListGroupsResponse Coordinator::list_groups(const protocol::ListGroupsRequest& req) {
  EDDY_DCHECK_ON_LOOP(executor_);
  protocol::ListGroupsResponse r;
  // A node that does not coordinate lists no groups (Kafka's brokers list
  // those they coordinate).
  if (serving_ && !serving_()) return r;
  std::map<std::string, std::pair<std::string, std::string>> all;  // id -> (protocol type, state)
  std::vector<std::string> with_offsets;
  Status s = offsets_.groups_with_offsets(&with_offsets);
  if (!s.ok()) {
    r.error_code = to_int(ErrorCode::kCoordinatorNotAvailable);
    return r;
  }
  // A group known only by its committed offsets is a simple group (no
  // protocol type), as Kafka lists one created by commits or the Admin.
  for (const auto& id : with_offsets) all[id] = {"", group_state_name(State::kEmpty)};
  for (const auto& [id, g] : groups_) all[id] = {g->protocol_type, group_state_name(g->state())};
  for (const auto& [id, info] : all) {
    // Every group is "classic".
    if (!passes_filter(req.states_filter, info.second) || !passes_filter(req.types_filter, "classic")) continue;
    protocol::ListGroupsResponse::ListedGroup lg;
    lg.group_id = id;
    lg.protocol_type = info.first;
    lg.group_state = info.second;
    lg.group_type = "classic";
    r.groups.push_back(std::move(lg));
  }
  return r;
}

protocol::DescribeGroupsResponse Coordinator::describe_groups(const protocol::DescribeGroupsRequest& req) {
  EDDY_DCHECK_ON_LOOP(executor_);
  protocol::DescribeGroupsResponse r;
  for (const auto& id : req.groups) {
    protocol::DescribeGroupsResponse::DescribedGroup dg;
    dg.group_id = id;
    const Group* g = find_group(id);
    if (ErrorCode e = availability(); e != ErrorCode::kNone) {
      dg.error_code = to_int(e);
      dg.group_state = group_state_name(State::kDead);
    } else if (id.empty()) {
      dg.error_code = to_int(ErrorCode::kInvalidGroupId);
      dg.group_state = group_state_name(State::kDead);
    } else if (g == nullptr) {
      bool has_offsets = false;
      if (!offsets_.has_offsets(id, &has_offsets).ok()) dg.error_code = to_int(ErrorCode::kCoordinatorNotAvailable);
      // Kafka: a group that does not exist is described as Dead.
      dg.group_state = group_state_name(has_offsets ? State::kEmpty : State::kDead);
    } else {
      dg.group_state = group_state_name(g->state());
      dg.protocol_type = g->protocol_type;
      dg.protocol_data = g->protocol_name;
      for (const auto& [mid, m] : g->members) {
        protocol::DescribeGroupsResponse::DescribedGroupMember dm;
        dm.member_id = mid;
        dm.group_instance_id = m.instance_id;
        dm.client_id = m.client_id;
        dm.client_host = m.client_host;
        if (g->state() == State::kStable) {
          if (const auto* md = m.metadata_for(g->protocol_name)) dm.member_metadata = *md;
          dm.member_assignment = m.assignment;
        }
        dg.members.push_back(std::move(dm));
      }
    }
    r.groups.push_back(std::move(dg));
  }
  return r;
}

protocol::DeleteGroupsResponse Coordinator::delete_groups(const protocol::DeleteGroupsRequest& req) {
  EDDY_DCHECK_ON_LOOP(executor_);
  protocol::DeleteGroupsResponse r;
  for (const auto& id : req.groups_names) {
    protocol::DeleteGroupsResponse::DeletableGroupResult dr;
    dr.group_id = id;
    const Group* g = find_group(id);
    bool has_offsets = false;
    Status s = offsets_.has_offsets(id, &has_offsets);
    if (ErrorCode e = availability(); e != ErrorCode::kNone) {
      dr.error_code = to_int(e);
    } else if (id.empty()) {
      dr.error_code = to_int(ErrorCode::kInvalidGroupId);
    } else if (!s.ok()) {
      dr.error_code = to_int(ErrorCode::kCoordinatorNotAvailable);
    } else if (g != nullptr && (!g->members.empty() || !g->pending.empty())) {
      dr.error_code = to_int(ErrorCode::kNonEmptyGroup);
    } else if (g == nullptr && !has_offsets) {
      dr.error_code = to_int(ErrorCode::kGroupIdNotFound);
    } else {
      s = offsets_.remove_group(id);
      if (s.ok()) s = meta_->static_members().remove_group(id);
      if (!s.ok()) {
        dr.error_code = to_int(ErrorCode::kCoordinatorNotAvailable);
      } else if (g != nullptr) {
        erase_group(id);
      }
    }
    r.results.push_back(std::move(dr));
  }
  return r;
}

}  // namespace eddy::group
