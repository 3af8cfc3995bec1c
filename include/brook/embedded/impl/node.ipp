// The definitions of node's members; <brook/embedded/node.hpp> says what each does.
// BROOK_DECL (core/linkage.hpp) makes them inline, the header-only default, or external,
// compiled once in <brook/src.hpp> under BROOK_SEPARATE_COMPILATION.
#pragma once

#include <brook/embedded/node.hpp>

namespace brook {

BROOK_DECL node::~node() = default;

BROOK_DECL result<std::unique_ptr<node>> node::open(const std::filesystem::path& dir, node_options opts) {
  auto p = std::make_shared<parts>();
  BROOK_TRY_ASSIGN(p->dd, data_dir::open(dir, opts.dir));
  BROOK_TRY_ASSIGN(p->coordinator, group_coordinator::open(*p->dd, opts.groups));
  p->coordinator->start();
  if (opts.housekeeping_interval.count() > 0) p->dd->start_housekeeping(opts.housekeeping_interval);
  return std::unique_ptr<node>(new node(std::move(p)));
}

BROOK_DECL result<void> node::create_topic(const std::string& name, topic_config tc) {
  std::shared_ptr<parts> p;
  {
    std::lock_guard l(mu_);  // a close() on another thread may reset parts_
    p = parts_;
  }
  if (!p) return make_error(errc::closed, "node is closed");
  return p->dd->create_topic(name, std::move(tc));
}

BROOK_DECL auto node::make_producer(producer_config cfg) -> handle<producer> {
  return hand_out<producer>([&](parts& p) { return new producer(*p.dd, std::move(cfg)); });
}

BROOK_DECL auto node::make_consumer(consumer_config cfg) -> handle<consumer> {
  return hand_out<consumer>([&](parts& p) { return new consumer(*p.dd, cfg); });
}

BROOK_DECL auto node::make_group_consumer(group_consumer_config cfg) -> handle<group_consumer> {
  return hand_out<group_consumer>([&](parts& p) { return new group_consumer(*p.dd, *p.coordinator, std::move(cfg)); });
}

BROOK_DECL std::optional<error> node::last_housekeeping_error() const {
  std::lock_guard l(mu_);
  return parts_ ? parts_->dd->last_housekeeping_error() : std::nullopt;
}

BROOK_DECL result<void> node::close() {
  std::lock_guard l(mu_);
  if (!parts_) return ok();
  if (const int n = parts_->handles.load(std::memory_order_acquire); n > 0)
    return make_error(errc::invalid_request, "node: {} producer(s)/consumer(s) still open; close them first", n);
  parts_->stop_background();
  auto r = parts_->dd->close();
  parts_.reset();
  return r;
}

BROOK_DECL node::node(std::shared_ptr<parts> p) : parts_(std::move(p)) {}

BROOK_DECL auto node::live() -> parts& {
  std::lock_guard l(mu_);
  BROOK_ASSERT(parts_ != nullptr, "node used after close()");
  return *parts_;
}

}  // namespace brook
