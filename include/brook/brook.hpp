// Everything brook offers, in one include: every public header of every layer (a test checks
// that none is missing), except the opt-in layers: the test rigging of brook/testing/ and the
// codecs of brook/codecs/ (each links a compression library). Narrower umbrellas:
// <brook/embedded.hpp> (brook::node and what it hands out), <brook/storage.hpp> (the log alone), <brook/clients.hpp>
// (producers, consumers and groups wired by the host), <brook/replication.hpp> (the in-process cluster).
#pragma once

// The includes go layer by layer, lowest first, each in its layer's order (docs/design.md).
// clang-format off
#include <brook/version.hpp>
#include <brook/core/adaptive_mutex.hpp>
#include <brook/core/assert.hpp>
#include <brook/core/byte_buffer.hpp>
#include <brook/core/clock.hpp>
#include <brook/core/linkage.hpp>
#include <brook/core/error.hpp>
#include <brook/core/notifier.hpp>
#include <brook/core/printable.hpp>
#include <brook/core/result.hpp>
#include <brook/core/types.hpp>

#include <brook/compression/compression_type.hpp>
#include <brook/compression/compression_codec.hpp>

#include <brook/codec/message_codec.hpp>
#include <brook/codec/schema.hpp>

#include <brook/format/bytes.hpp>
#include <brook/format/crc32c.hpp>
#include <brook/format/varint.hpp>
#include <brook/format/record.hpp>
#include <brook/format/batch_decompressor.hpp>
#include <brook/format/built_batch.hpp>
#include <brook/format/record_batch.hpp>
#include <brook/format/record_batch_builder.hpp>

#include <brook/storage/file_system.hpp>
#include <brook/storage/file.hpp>
#include <brook/storage/partition_files.hpp>
#include <brook/storage/checkpoint_file.hpp>
#include <brook/storage/partition_metadata.hpp>
#include <brook/storage/log_config.hpp>
#include <brook/storage/offset_index.hpp>
#include <brook/storage/time_index.hpp>
#include <brook/storage/record_marks.hpp>
#include <brook/storage/segment.hpp>
#include <brook/storage/segment_list.hpp>
#include <brook/storage/log_slice.hpp>
#include <brook/storage/log_read.hpp>
#include <brook/storage/log_checkpoints.hpp>
#include <brook/storage/log_validator.hpp>
#include <brook/storage/log_loader.hpp>
#include <brook/storage/log_retention.hpp>
#include <brook/storage/log_truncation.hpp>
#include <brook/storage/log_cleaner.hpp>
#include <brook/storage/partition_log.hpp>
#include <brook/storage/topic_config.hpp>
#include <brook/storage/partition.hpp>
#include <brook/storage/data_dir.hpp>

#include <brook/client/partitioner.hpp>
#include <brook/client/produce_target.hpp>
#include <brook/client/producer.hpp>
#include <brook/client/consumer_record.hpp>
#include <brook/client/fetch_source.hpp>
#include <brook/client/consumer.hpp>

// group
#include <brook/group/assignor.hpp>
#include <brook/group/range_assignor.hpp>
#include <brook/group/round_robin_assignor.hpp>
#include <brook/group/sticky_assignor.hpp>
#include <brook/group/cooperative_sticky_assignor.hpp>
#include <brook/group/group_state.hpp>
#include <brook/group/consumer_protocol.hpp>
#include <brook/group/offsets_topic_records.hpp>
#include <brook/group/offset_and_metadata.hpp>
#include <brook/group/coordinator_backend.hpp>
#include <brook/group/offset_store.hpp>
#include <brook/group/rebalance_listener.hpp>
#include <brook/group/coordinator_config.hpp>
#include <brook/group/group_requests.hpp>
#include <brook/group/classic_group.hpp>
#include <brook/group/group_coordinator.hpp>
#include <brook/group/group_consumer.hpp>

// replication
#include <brook/replication/replica_placement.hpp>
#include <brook/replication/leader_epoch_cache.hpp>
#include <brook/replication/partition_replica.hpp>
#include <brook/replication/metadata_records.hpp>
#include <brook/replication/cluster_image.hpp>
#include <brook/replication/metadata_log.hpp>
#include <brook/replication/controller.hpp>
#include <brook/replication/broker.hpp>
#include <brook/replication/replica_fetcher.hpp>
#include <brook/replication/cluster.hpp>

// protocol
#include <brook/protocol/api_keys.hpp>
#include <brook/protocol/api_versions.hpp>
#include <brook/protocol/create_topics.hpp>
#include <brook/protocol/delete_groups.hpp>
#include <brook/protocol/delete_topics.hpp>
#include <brook/protocol/describe_configs.hpp>
#include <brook/protocol/describe_groups.hpp>
#include <brook/protocol/fetch.hpp>
#include <brook/protocol/find_coordinator.hpp>
#include <brook/protocol/frame.hpp>
#include <brook/protocol/heartbeat.hpp>
#include <brook/protocol/init_producer_id.hpp>
#include <brook/protocol/isolation_level.hpp>
#include <brook/protocol/join_group.hpp>
#include <brook/protocol/leader_hints.hpp>
#include <brook/protocol/leave_group.hpp>
#include <brook/protocol/list_groups.hpp>
#include <brook/protocol/list_offsets.hpp>
#include <brook/protocol/messages.hpp>
#include <brook/protocol/metadata.hpp>
#include <brook/protocol/offset_commit.hpp>
#include <brook/protocol/offset_fetch.hpp>
#include <brook/protocol/produce.hpp>
#include <brook/protocol/records.hpp>
#include <brook/protocol/request.hpp>
#include <brook/protocol/request_header.hpp>
#include <brook/protocol/response.hpp>
#include <brook/protocol/response_header.hpp>
#include <brook/protocol/sync_group.hpp>

// embedded
#include <brook/embedded/node.hpp>

// server
#include <brook/server/served_apis.hpp>
#include <brook/server/connection_state.hpp>
#include <brook/server/request_handler.hpp>
#include <brook/server/tcp_server.hpp>
#include <brook/server/request_purgatory.hpp>
#include <brook/server/wire_error.hpp>
#include <brook/server/group_apis.hpp>
#include <brook/server/kafka_broker.hpp>
// clang-format on
