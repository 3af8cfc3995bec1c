// The states of a consumer group under Kafka's classic rebalance protocol
// (ClassicGroupState), with the transitions the coordinator makes:
//
//   Empty ──join──▶ PreparingRebalance ──all joined / rebalance timeout──▶ CompletingRebalance
//     ▲                  ▲      │                                               │
//     │                  │      └──every member gone──▶ Empty                   │ leader's sync
//     │                  └──join, leave, expiry, subscription or topic change── Stable ◀┘
//     └──last member leaves or expires (via PreparingRebalance)
//   Empty ──offsets expired / group deleted──▶ Dead (forgotten)
//
// Thread-safety: values and pure functions.
#pragma once

#include <string_view>

namespace brook {

enum class group_state { empty, preparing_rebalance, completing_rebalance, stable, dead };

/// Kafka's name of the state ("Empty", "PreparingRebalance", ...).
constexpr std::string_view group_state_name(group_state s) noexcept {
  switch (s) {
    case group_state::empty: return "Empty";
    case group_state::preparing_rebalance: return "PreparingRebalance";
    case group_state::completing_rebalance: return "CompletingRebalance";
    case group_state::stable: return "Stable";
    case group_state::dead: return "Dead";
  }
  return "Unknown";
}

}  // namespace brook
