// Kafka's replication in one process: brook::cluster (a controller, brokers with their data
// directories, fetchers), with cluster_target, cluster_source and cluster_backend so that
// producers, consumers and consumer groups run on it. Everything: <brook/brook.hpp>.
#pragma once

#include <brook/clients.hpp>
#include <brook/replication/cluster.hpp>
