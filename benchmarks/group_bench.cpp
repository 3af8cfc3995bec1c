// Consumer-group assignors: one assignment for 100 members x 1,000 partitions
// (10 topics x 100 partitions, every member subscribed to every topic).
//   BM_Assign/<assignor>            fresh group, nobody owns anything
//   BM_AssignOneLeaves/<assignor>   sticky / cooperative-sticky: previous balanced
//                                   assignment, one member has left
// Items processed = partitions assigned.
#include <memory>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <brook/group/cooperative_sticky_assignor.hpp>
#include <brook/group/range_assignor.hpp>
#include <brook/group/round_robin_assignor.hpp>
#include <brook/group/sticky_assignor.hpp>

namespace {

constexpr int kMembers = 100;
constexpr int kTopics = 10;
constexpr int kPartitionsPerTopic = 100;

std::map<std::string, std::int32_t> bench_topics() {
  std::map<std::string, std::int32_t> out;
  for (int t = 0; t < kTopics; ++t) out[fmt::format("topic-{}", t)] = kPartitionsPerTopic;
  return out;
}

std::vector<brook::member_subscription> bench_members(const std::map<std::string, std::int32_t>& topics) {
  std::vector<brook::member_subscription> out(kMembers);
  for (int i = 0; i < kMembers; ++i) {
    out[static_cast<std::size_t>(i)].member_id = fmt::format("consumer-{}-{:08x}", i, static_cast<unsigned>(i) * 2654435761u);
    for (const auto& [t, n] : topics) out[static_cast<std::size_t>(i)].topics.push_back(t);
  }
  return out;
}

std::unique_ptr<brook::assignor> make(int which) {
  switch (which) {
    case 0: return std::make_unique<brook::range_assignor>();
    case 1: return std::make_unique<brook::round_robin_assignor>();
    case 2: return std::make_unique<brook::sticky_assignor>();
    default: return std::make_unique<brook::cooperative_sticky_assignor>();
  }
}

void BM_Assign(benchmark::State& state) {
  auto a = make(static_cast<int>(state.range(0)));
  state.SetLabel(std::string(a->name()));
  const auto topics = bench_topics();
  const auto members = bench_members(topics);
  for (auto _ : state) benchmark::DoNotOptimize(a->assign(topics, members));
  state.SetItemsProcessed(state.iterations() * kTopics * kPartitionsPerTopic);
}
BENCHMARK(BM_Assign)->DenseRange(0, 3)->Unit(benchmark::kMicrosecond);

void BM_AssignOneLeaves(benchmark::State& state) {
  auto a = make(static_cast<int>(state.range(0)));
  state.SetLabel(std::string(a->name()));
  const auto topics = bench_topics();
  auto members = bench_members(topics);
  const auto previous = brook::sticky_assignor{}.assign(topics, members);
  for (auto& m : members) m.owned_partitions = previous.at(m.member_id), m.generation = 1;
  members.erase(members.begin() + kMembers / 2);
  for (auto _ : state) benchmark::DoNotOptimize(a->assign(topics, members));
  state.SetItemsProcessed(state.iterations() * kTopics * kPartitionsPerTopic);
}
BENCHMARK(BM_AssignOneLeaves)->DenseRange(2, 3)->Unit(benchmark::kMicrosecond);

}  // namespace
