// What Eddy answers: one row per API, read by both ApiVersions and
// dispatch (Broker::handle), so that every advertised API has a handler
// and no handler is reachable at a version that is not advertised.
//
// A version is listed only when every field it carries is handled (e.g.
// Fetch stops at 12: 13+ names topics by id only).
#include "broker/broker.h"

namespace eddy::broker {

using protocol::ApiKey;

std::span<const ApiSupport> Broker::supported_apis() {
  static const ApiSupport kApis[] = {
      {ApiKey::kProduce, 0, 9, &Broker::handle_produce},
      {ApiKey::kFetch, 0, 12, &Broker::handle_fetch},
      {ApiKey::kListOffsets, 0, 8, &Broker::handle_list_offsets},
      {ApiKey::kMetadata, 0, 12, &Broker::handle_metadata},
      {ApiKey::kOffsetCommit, 0, 8, &Broker::handle_offset_commit},
      {ApiKey::kOffsetFetch, 0, 8, &Broker::handle_offset_fetch},
      {ApiKey::kFindCoordinator, 0, 4, &Broker::handle_find_coordinator},
      {ApiKey::kJoinGroup, 0, 9, &Broker::handle_join_group},
      {ApiKey::kHeartbeat, 0, 4, &Broker::handle_heartbeat},
      {ApiKey::kLeaveGroup, 0, 5, &Broker::handle_leave_group},
      {ApiKey::kSyncGroup, 0, 5, &Broker::handle_sync_group},
      {ApiKey::kDescribeGroups, 0, 5, &Broker::handle_describe_groups},
      {ApiKey::kListGroups, 0, 5, &Broker::handle_list_groups},
      {ApiKey::kSaslHandshake, 0, 1, &Broker::handle_sasl_handshake},
      {ApiKey::kApiVersions, 0, 3, &Broker::handle_api_versions},
      {ApiKey::kCreateTopics, 0, 7, &Broker::handle_create_topics},
      {ApiKey::kDeleteTopics, 0, 6, &Broker::handle_delete_topics},
      {ApiKey::kDeleteRecords, 0, 2, &Broker::handle_delete_records},
      // Transactions: the pre-KIP-890 versions (KIP-98); the KIP-890 ones
      // (InitProducerId 5, AddPartitionsToTxn 4+, EndTxn / AddOffsetsToTxn /
      // TxnOffsetCommit 4+) are not offered.
      {ApiKey::kInitProducerId, 0, 4, &Broker::handle_init_producer_id},
      {ApiKey::kOffsetForLeaderEpoch, 0, 4, &Broker::handle_offset_for_leader_epoch},
      {ApiKey::kAddPartitionsToTxn, 0, 3, &Broker::handle_add_partitions_to_txn},
      {ApiKey::kAddOffsetsToTxn, 0, 3, &Broker::handle_add_offsets_to_txn},
      {ApiKey::kEndTxn, 0, 3, &Broker::handle_end_txn},
      {ApiKey::kTxnOffsetCommit, 0, 3, &Broker::handle_txn_offset_commit},
      // Markers asked by a coordinator: kafka-transactions abort, another node's.
      {ApiKey::kWriteTxnMarkers, 0, 1, &Broker::handle_write_txn_markers},
      // Always advertised, as Kafka does; SECURITY_DISABLED without an authorizer.
      {ApiKey::kDescribeAcls, 0, 3, &Broker::handle_describe_acls},
      {ApiKey::kCreateAcls, 0, 3, &Broker::handle_create_acls},
      {ApiKey::kDeleteAcls, 0, 3, &Broker::handle_delete_acls},
      {ApiKey::kDescribeConfigs, 0, 4, &Broker::handle_describe_configs},
      {ApiKey::kAlterConfigs, 0, 2, &Broker::handle_alter_configs},
      {ApiKey::kDescribeLogDirs, 0, 4, &Broker::handle_describe_log_dirs},  // the disk budget as the volume
      {ApiKey::kSaslAuthenticate, 0, 2, &Broker::handle_sasl_authenticate},
      {ApiKey::kCreatePartitions, 0, 3, &Broker::handle_create_partitions},
      {ApiKey::kDeleteGroups, 0, 2, &Broker::handle_delete_groups},
      {ApiKey::kIncrementalAlterConfigs, 0, 1, &Broker::handle_incremental_alter_configs},
      {ApiKey::kOffsetDelete, 0, 0, &Broker::handle_offset_delete},
      {ApiKey::kDescribeClientQuotas, 0, 1, &Broker::handle_describe_client_quotas},  // no quotas: none set
      {ApiKey::kDescribeUserScramCredentials, 0, 0, &Broker::handle_describe_user_scram_credentials},
      {ApiKey::kAlterUserScramCredentials, 0, 0, &Broker::handle_alter_user_scram_credentials},
      {ApiKey::kDescribeCluster, 0, 1, &Broker::handle_describe_cluster},
      {ApiKey::kDescribeTransactions, 0, 0, &Broker::handle_describe_transactions},
      {ApiKey::kListTransactions, 0, 1, &Broker::handle_list_transactions},
      {ApiKey::kDescribeProducers, 0, 0, &Broker::handle_describe_producers},
  };
  return kApis;
}

const ApiSupport* Broker::find_api(int16_t api_key) {
  for (const auto& api : supported_apis()) {
    if (static_cast<int16_t>(api.key) == api_key) return &api;
  }
  return nullptr;
}

}  // namespace eddy::broker
