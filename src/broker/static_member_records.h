// A static group member (meta::StaticMember, as eddy.db keeps it) and the
// controller log's StaticMemberRecord carry the same fields: these convert
// one into the other, losslessly.
#pragma once

#include "meta/static_member_store.h"
#include "protocol/generated/controller_records.h"

namespace eddy::broker {

protocol::StaticMemberRecord to_static_member_record(const meta::StaticMember& member);
meta::StaticMember to_static_member(const protocol::StaticMemberRecord& record);

}  // namespace eddy::broker
