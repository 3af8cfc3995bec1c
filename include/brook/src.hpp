// The definitions of brook's heavy classes, for a host that compiles them once.
//
// With BROOK_SEPARATE_COMPILATION defined for every TU of the host, the headers of node,
// producer, consumer, group_consumer, group_coordinator, data_dir and partition_log declare
// their member functions and do not define them; exactly one TU includes this file, which
// defines them with external linkage (core/linkage.hpp, docs/design.md "Header-only, or
// compiled once"). Without that macro this file refuses to compile: header-only hosts never
// include it.
#pragma once

#if !defined(BROOK_SEPARATE_COMPILATION)
#error "<brook/src.hpp> is for hosts that define BROOK_SEPARATE_COMPILATION in every TU"
#endif

#include <brook/brook.hpp>

#include <brook/client/impl/consumer.ipp>
#include <brook/client/impl/producer.ipp>
#include <brook/embedded/impl/node.ipp>
#include <brook/group/impl/group_consumer.ipp>
#include <brook/group/impl/group_coordinator.ipp>
#include <brook/storage/impl/data_dir.ipp>
#include <brook/storage/impl/partition_log.ipp>
