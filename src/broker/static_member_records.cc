#include "broker/static_member_records.h"

namespace eddy::broker {

protocol::StaticMemberRecord to_static_member_record(const meta::StaticMember& member) {
  protocol::StaticMemberRecord r;
  r.group_id = member.group_id;
  r.group_instance_id = member.group_instance_id;
  r.member_id = member.member_id;
  r.client_id = member.client_id;
  r.client_host = member.client_host;
  r.protocol_type = member.protocol_type;
  r.protocol_name = member.protocol_name;
  r.generation_id = member.generation_id;
  r.session_timeout_ms = member.session_timeout_ms;
  r.rebalance_timeout_ms = member.rebalance_timeout_ms;
  r.subscription = member.subscription;
  r.assignment = member.assignment;
  return r;
}

meta::StaticMember to_static_member(const protocol::StaticMemberRecord& record) {
  meta::StaticMember m;
  m.group_id = record.group_id;
  m.group_instance_id = record.group_instance_id;
  m.member_id = record.member_id;
  m.client_id = record.client_id;
  m.client_host = record.client_host;
  m.protocol_type = record.protocol_type;
  m.protocol_name = record.protocol_name;
  m.generation_id = record.generation_id;
  m.session_timeout_ms = record.session_timeout_ms;
  m.rebalance_timeout_ms = record.rebalance_timeout_ms;
  m.subscription = record.subscription;
  m.assignment = record.assignment;
  return m;
}

}  // namespace eddy::broker
