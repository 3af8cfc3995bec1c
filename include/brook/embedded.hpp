// brook embedded in a host process: brook::node (a data directory, its consumer groups and
// housekeeping) and what it hands out: producers, consumers, group consumers.
// Includes less than <brook/brook.hpp> (no replication, no format internals beyond records).
#pragma once

#include <brook/embedded/node.hpp>
#include <brook/version.hpp>
