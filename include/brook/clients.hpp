// Producers, consumers and consumer groups wired by the host itself, on a data directory
// (brook::node in <brook/embedded.hpp> does that wiring for one process): producer,
// consumer, group_coordinator (with its backends) and group_consumer, with the storage they
// run on. For a cluster add <brook/replication.hpp>. Everything: <brook/brook.hpp>.
#pragma once

#include <brook/client/consumer.hpp>
#include <brook/client/producer.hpp>
#include <brook/group/coordinator_backend.hpp>
#include <brook/group/group_consumer.hpp>
#include <brook/group/group_coordinator.hpp>
#include <brook/storage.hpp>
