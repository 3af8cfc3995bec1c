// What a consumer's poll() returns: records viewed in place in the mapped segments.
//
// consumer_records owns the log_slices its records point into, and a slice keeps its
// segment mapped: every record_view, key, value and header handed out stays valid as
// long as the consumer_records object, even if retention deletes the segment file or
// truncation replaces it meanwhile. owned_record is the one-call deep copy for keeping a
// record longer.
//
// Thread-safety: immutable after poll() returns; may be read from any number of threads.
#pragma once

#include <algorithm>
#include <compare>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <brook/core/byte_buffer.hpp>
#include <brook/core/types.hpp>
#include <brook/format/record.hpp>
#include <brook/storage/log_slice.hpp>

namespace brook {

/// A record copied out of the log: owns its bytes.
struct owned_record {
  std::string topic{};
  partition_id partition{0};
  brook::offset offset{0};
  timestamp_ms timestamp = -1;
  std::optional<std::string> key{};    ///< nullopt = null key
  std::optional<std::string> value{};  ///< nullopt = null value
  std::vector<std::pair<std::string, std::optional<std::string>>> headers{};
};

/// One record of a poll: where it came from and a zero-copy view of it.
class consumer_record {
 public:
  consumer_record(const std::string* topic, partition_id p, record_view v) : topic_(topic), partition_(p), view_(v) {}

  const std::string& topic() const noexcept { return *topic_; }
  partition_id partition() const noexcept { return partition_; }
  brook::offset offset() const noexcept { return view_.offset(); }
  timestamp_ms timestamp() const noexcept { return view_.timestamp(); }
  const nullable_bytes& key() const noexcept { return view_.key(); }
  const nullable_bytes& value() const noexcept { return view_.value(); }
  const record_headers& headers() const noexcept { return view_.headers(); }
  const record_view& view() const noexcept { return view_; }

  /// A deep copy that outlives the poll result.
  owned_record to_owned() const {
    owned_record o;
    o.topic = *topic_;
    o.partition = partition_;
    o.offset = offset();
    o.timestamp = timestamp();
    if (!key().is_null()) o.key = key().to_string();
    if (!value().is_null()) o.value = value().to_string();
    for (const auto& h : headers())
      o.headers.emplace_back(std::string(h.key),
                             h.value.is_null() ? std::nullopt : std::optional<std::string>(h.value.to_string()));
    return o;
  }

 private:
  const std::string* topic_;
  partition_id partition_;
  record_view view_;
};

/// The records of one poll, in the order they were fetched (per partition, in offset order).
class consumer_records {
 public:
  using const_iterator = std::vector<consumer_record>::const_iterator;

  const_iterator begin() const noexcept { return records_.begin(); }
  const_iterator end() const noexcept { return records_.end(); }
  std::size_t size() const noexcept { return records_.size(); }
  bool empty() const noexcept { return records_.empty(); }
  const consumer_record& operator[](std::size_t i) const { return records_[i]; }

  /// The records of one partition.
  std::vector<consumer_record> records(const topic_partition& tp) const {
    std::vector<consumer_record> out;
    for (const auto& r : records_)
      if (r.partition() == tp.partition && r.topic() == tp.topic) out.push_back(r);
    return out;
  }

  // Filled by the consumer.
  void keep(log_slice s) { slices_.push_back(std::move(s)); }
  void keep(byte_buffer decompressed) { buffers_.push_back(std::move(decompressed)); }
  const std::string* intern(const std::string& topic) {
    for (const auto& t : topics_)
      if (*t == topic) return t.get();
    topics_.push_back(std::make_unique<std::string>(topic));
    return topics_.back().get();
  }
  void add(consumer_record r) { records_.push_back(r); }
  /// Room for n more records, so that a partition's records are not copied as the vector
  /// grows (geometrically, so that many partitions' calls stay linear).
  void reserve_more(std::size_t n) {
    const std::size_t need = records_.size() + n;
    if (need > records_.capacity()) records_.reserve(std::max(need, 2 * records_.capacity()));
  }

 private:
  std::vector<std::unique_ptr<std::string>> topics_;  // stable addresses for consumer_record::topic
  std::vector<log_slice> slices_;                     // keep the mapped bytes alive
  std::vector<byte_buffer> buffers_;                  // and compressed batches' records
  std::vector<consumer_record> records_;
};

}  // namespace brook
