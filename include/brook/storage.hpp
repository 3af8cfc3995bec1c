// Kafka's log alone, without clients, groups or replication: RecordBatch v2 (build and view),
// partition logs (append, read, recovery, retention, truncation, compaction), topics and data
// directories (their lock and housekeeping), and the I/O seam. For a host that stores and
// serves Kafka logs itself, such as a custom broker. Everything: <brook/brook.hpp>.
#pragma once

#include <brook/core/clock.hpp>
#include <brook/core/error.hpp>
#include <brook/core/result.hpp>
#include <brook/core/types.hpp>
#include <brook/format/record_batch.hpp>
#include <brook/format/record_batch_builder.hpp>
#include <brook/storage/data_dir.hpp>
#include <brook/storage/file_system.hpp>
#include <brook/storage/partition_log.hpp>
#include <brook/version.hpp>
