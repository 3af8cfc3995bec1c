// The sticky assignment shared by sticky_assignor and cooperative_sticky_assignor
// (the rules are documented in group/sticky_assignor.hpp).
//
// Partitions are numbered densely: topics in name order, partitions in numeric
// order, so index order is (topic, partition) order.
//
// Thread-safety: pure function.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <brook/core/assert.hpp>
#include <brook/group/assignor.hpp>
#include <brook/group/detail/member_order.hpp>

namespace brook::detail {

/// What the members' owned_partitions say about one partition.
enum class claim_state : std::uint8_t {
  none,       ///< nobody claims it
  owned,      ///< one subscribed member claims it with the highest generation: its previous owner
  contested,  ///< two or more subscribed members claim it in the same, highest generation
  released,   ///< only members no longer subscribed to its topic claim it
};

struct sticky_plan {
  group_assignment target;  ///< the eager (sticky) assignment
  /// Partitions of `target` that a member other than their target owner may still hold:
  /// the previous owner differs, or the claim was contested or released. The
  /// cooperative assignor withholds these for one rebalance.
  std::set<topic_partition> transferring;
};

class sticky_planner {
 public:
  sticky_planner(const std::map<std::string, std::int32_t>& partitions_per_topic,
                 const std::vector<member_subscription>& members)
      : members_(sorted_by_member_id(members)) {
    std::set<std::string> wanted;
    for (const auto* m : members_) wanted.insert(m->topics.begin(), m->topics.end());
    for (const auto& t : wanted) {
      const auto it = partitions_per_topic.find(t);
      if (it == partitions_per_topic.end() || it->second <= 0) continue;
      topic_index_.emplace(t, static_cast<int>(topics_.size()));
      topics_.push_back(t);
      base_.push_back(total_);
      total_ += it->second;
    }
    base_.push_back(total_);
    const std::size_t n = members_.size();
    subs_.assign(n, std::vector<bool>(topics_.size(), false));
    for (std::size_t i = 0; i < n; ++i)
      for (const auto& t : members_[i]->topics)
        if (auto it = topic_index_.find(t); it != topic_index_.end())
          subs_[i][static_cast<std::size_t>(it->second)] = true;
    topic_of_.resize(static_cast<std::size_t>(total_));
    for (std::size_t t = 0; t < topics_.size(); ++t)
      for (auto p = base_[t]; p < base_[t + 1]; ++p) topic_of_[static_cast<std::size_t>(p)] = static_cast<int>(t);
    resolve_claims();
  }

  sticky_plan plan() {
    sticky_plan out;
    for (const auto* m : members_) out.target.emplace(m->member_id, std::vector<topic_partition>{});
    if (members_.empty()) return out;
    assigned_.assign(static_cast<std::size_t>(total_), -1);
    load_.assign(members_.size(), 0);
    kept_.assign(static_cast<std::size_t>(total_), false);
    if (all_subscriptions_equal())
      constrained_assign();
    else
      general_assign();

    std::vector<std::vector<topic_partition>*> lists;
    for (const auto* m : members_) lists.push_back(&out.target[m->member_id]);
    for (std::int32_t p = 0; p < total_; ++p) {
      const auto pi = static_cast<std::size_t>(p);
      const int owner = assigned_[pi];
      if (owner < 0) continue;  // a topic nobody subscribes to cannot reach here; kept for safety
      topic_partition tp = to_tp(p);
      const bool moves = state_[pi] == claim_state::contested || state_[pi] == claim_state::released ||
                         (state_[pi] == claim_state::owned && claimant_[pi] != owner);
      if (moves) out.transferring.insert(tp);
      lists[static_cast<std::size_t>(owner)]->push_back(std::move(tp));  // index order is sorted order
    }
    return out;
  }

 private:
  topic_partition to_tp(std::int32_t p) const {
    const auto t = static_cast<std::size_t>(topic_of_[static_cast<std::size_t>(p)]);
    return topic_partition{topics_[t], partition_id{p - base_[t]}};
  }

  // Highest generation wins; a tie at the highest generation is contested (Kafka
  // 3.x invalidates such a partition for both claimants). Claims by members not
  // subscribed to the topic only count when nobody else claims it.
  void resolve_claims() {
    const auto n = static_cast<std::size_t>(total_);
    state_.assign(n, claim_state::none);
    claimant_.assign(n, -1);
    claim_gen_.assign(n, std::numeric_limits<std::int32_t>::min());
    for (std::size_t i = 0; i < members_.size(); ++i) {
      const auto* m = members_[i];
      for (const auto& tp : m->owned_partitions) {
        const auto it = topic_index_.find(tp.topic);
        if (it == topic_index_.end()) continue;  // topic gone or unsubscribed by everyone: nothing to hand over
        const auto t = static_cast<std::size_t>(it->second);
        const std::int32_t part = tp.partition.value();
        if (part < 0 || part >= base_[t + 1] - base_[t]) continue;  // partition does not exist
        const auto p = static_cast<std::size_t>(base_[t] + part);
        if (!subs_[i][t]) {
          if (state_[p] == claim_state::none) state_[p] = claim_state::released;
          continue;
        }
        const int me = static_cast<int>(i);
        switch (state_[p]) {
          case claim_state::none:
          case claim_state::released:
            state_[p] = claim_state::owned, claimant_[p] = me, claim_gen_[p] = m->generation;
            break;
          case claim_state::owned:
            if (claimant_[p] == me) break;  // listed twice by the same member
            if (m->generation > claim_gen_[p])
              claimant_[p] = me, claim_gen_[p] = m->generation;
            else if (m->generation == claim_gen_[p])
              state_[p] = claim_state::contested, claimant_[p] = -1;
            break;
          case claim_state::contested:
            if (m->generation > claim_gen_[p])
              state_[p] = claim_state::owned, claimant_[p] = me, claim_gen_[p] = m->generation;
            break;
        }
      }
    }
  }

  bool all_subscriptions_equal() const {
    for (std::size_t i = 1; i < subs_.size(); ++i)
      if (subs_[i] != subs_[0]) return false;
    return true;
  }

  void give(std::int32_t p, int member) {
    assigned_[static_cast<std::size_t>(p)] = member;
    ++load_[static_cast<std::size_t>(member)];
  }

  // Partitions nobody keeps, in dealing order: first those nobody claims (free), then
  // the claimed ones that must move (trimmed, contested, released). Dealing the
  // claimed ones last makes the cooperative follow-up round, where exactly those are
  // unowned, reproduce the same placement.
  std::vector<std::int32_t> to_deal() const {
    std::vector<std::int32_t> out;
    for (std::int32_t p = 0; p < total_; ++p)
      if (!kept_[static_cast<std::size_t>(p)] && state_[static_cast<std::size_t>(p)] == claim_state::none)
        out.push_back(p);
    for (std::int32_t p = 0; p < total_; ++p)
      if (!kept_[static_cast<std::size_t>(p)] && state_[static_cast<std::size_t>(p)] != claim_state::none)
        out.push_back(p);
    return out;
  }

  // Equal subscriptions: every member ends with floor(P/N) or ceil(P/N) partitions,
  // exactly P % N of them with the larger count.
  void constrained_assign() {
    const auto n = static_cast<std::int32_t>(members_.size());
    const std::int32_t min_quota = total_ / n;
    const std::int32_t max_quota = min_quota + (total_ % n != 0 ? 1 : 0);
    std::int32_t max_slots = total_ % n;  // members that may still end at max_quota

    // 1. Keep owned partitions up to the quota, members in id order; the first
    //    members owning at least max_quota take the max_quota slots.
    std::vector<std::vector<std::int32_t>> owned(members_.size());
    for (std::int32_t p = 0; p < total_; ++p)
      if (state_[static_cast<std::size_t>(p)] == claim_state::owned)
        owned[static_cast<std::size_t>(claimant_[static_cast<std::size_t>(p)])].push_back(p);
    for (std::size_t i = 0; i < members_.size(); ++i) {
      const auto count = static_cast<std::int32_t>(owned[i].size());
      std::int32_t cap = min_quota;
      if (max_quota > min_quota && max_slots > 0 && count >= max_quota) cap = max_quota, --max_slots;
      for (std::int32_t k = 0; k < std::min(cap, count); ++k) {
        const std::int32_t p = owned[i][static_cast<std::size_t>(k)];
        kept_[static_cast<std::size_t>(p)] = true;
        give(p, static_cast<int>(i));
      }
    }

    // 2. Deal the rest, each partition to the least loaded member (ties: lowest member
    //    id) that is below min_quota, or at min_quota while max_quota slots remain.
    std::set<std::pair<std::int32_t, int>> open;  // (load, member)
    for (std::size_t i = 0; i < members_.size(); ++i)
      if (load_[i] < max_quota) open.emplace(load_[i], static_cast<int>(i));
    for (const std::int32_t p : to_deal()) {
      BROOK_ASSERT(!open.empty(), "sticky: partition {} left over with every member full", p);
      auto [load, member] = *open.begin();
      BROOK_ASSERT(load < min_quota || max_slots > 0, "sticky: no max_quota slot left for partition {}", p);
      open.erase(open.begin());
      give(p, member);
      if (load + 1 == max_quota && max_quota > min_quota) --max_slots;
      if (load + 1 < max_quota) open.emplace(load + 1, member);
    }
  }

  // Different subscriptions: keep every valid owned partition, deal the rest to the
  // least loaded eligible member (partitions with fewer eligible members first), then
  // move partitions from a member to an eligible one with at least two fewer until no
  // such move exists (Kafka's isBalanced criterion). Moves prefer partitions dealt in
  // this round over kept ones.
  void general_assign() {
    std::vector<std::vector<int>> eligible(topics_.size());
    for (std::size_t t = 0; t < topics_.size(); ++t)
      for (std::size_t i = 0; i < members_.size(); ++i)
        if (subs_[i][t]) eligible[t].push_back(static_cast<int>(i));

    for (std::int32_t p = 0; p < total_; ++p)
      if (state_[static_cast<std::size_t>(p)] == claim_state::owned) {
        kept_[static_cast<std::size_t>(p)] = true;
        give(p, claimant_[static_cast<std::size_t>(p)]);
      }

    auto deal = to_deal();
    const auto n_eligible = [&](std::int32_t p) {
      return eligible[static_cast<std::size_t>(topic_of_[static_cast<std::size_t>(p)])].size();
    };
    std::stable_sort(deal.begin(), deal.end(),
                     [&](std::int32_t a, std::int32_t b) { return n_eligible(a) < n_eligible(b); });
    for (const std::int32_t p : deal) give(p, least_loaded(eligible, p));

    std::vector<std::vector<std::int32_t>> held(members_.size());
    while (true) {
      for (auto& h : held) h.clear();
      for (std::int32_t p = 0; p < total_; ++p)
        held[static_cast<std::size_t>(assigned_[static_cast<std::size_t>(p)])].push_back(p);
      std::vector<int> by_load(members_.size());
      for (std::size_t i = 0; i < by_load.size(); ++i) by_load[i] = static_cast<int>(i);
      std::stable_sort(by_load.begin(), by_load.end(), [&](int a, int b) {
        return load_[static_cast<std::size_t>(a)] > load_[static_cast<std::size_t>(b)];
      });
      bool moved = false;
      for (const int from : by_load) {
        auto& mine = held[static_cast<std::size_t>(from)];
        std::stable_partition(mine.begin(), mine.end(),
                              [&](std::int32_t p) { return !kept_[static_cast<std::size_t>(p)]; });
        for (const std::int32_t p : mine) {
          const int to = least_loaded(eligible, p);
          if (load_[static_cast<std::size_t>(to)] < load_[static_cast<std::size_t>(from)] - 1) {
            --load_[static_cast<std::size_t>(from)];
            give(p, to);
            moved = true;
            break;
          }
        }
        if (moved) break;
      }
      if (!moved) break;
    }
  }

  int least_loaded(const std::vector<std::vector<int>>& eligible, std::int32_t p) const {
    const auto& cands = eligible[static_cast<std::size_t>(topic_of_[static_cast<std::size_t>(p)])];
    BROOK_ASSERT(!cands.empty(), "sticky: partition {} has no subscriber", p);
    int best = cands.front();
    for (const int c : cands)
      if (load_[static_cast<std::size_t>(c)] < load_[static_cast<std::size_t>(best)]) best = c;
    return best;
  }

  std::vector<const member_subscription*> members_;  // sorted by member id (Java order)
  std::vector<std::string> topics_;                  // subscribed topics that exist, sorted (ASCII: as Java)
  std::map<std::string, int> topic_index_;
  std::vector<std::int32_t> base_;  // first partition index of each topic; back() = total_
  std::int32_t total_ = 0;
  std::vector<int> topic_of_;            // partition index -> topic index
  std::vector<std::vector<bool>> subs_;  // member -> topic -> subscribed
  std::vector<claim_state> state_;       // per partition
  std::vector<int> claimant_;            // previous owner when state_ == owned
  std::vector<std::int32_t> claim_gen_;
  std::vector<int> assigned_;       // partition -> member
  std::vector<std::int32_t> load_;  // member -> partition count
  std::vector<bool> kept_;          // partition stays with its previous owner
};

/// The sticky target for a group, with the partitions changing hands.
inline sticky_plan plan_sticky(const std::map<std::string, std::int32_t>& partitions_per_topic,
                               const std::vector<member_subscription>& members) {
  return sticky_planner(partitions_per_topic, members).plan();
}

}  // namespace brook::detail
