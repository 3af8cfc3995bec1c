// BROOK_DECL: how brook's out-of-class member definitions are linked.
//
// brook is header-only by default: every definition in an impl/*.ipp file is `inline`, and
// each header includes its .ipp at its end, so a host includes headers and links nothing.
// The price is that every TU which calls into the heavy classes (node, producer, consumer,
// group_consumer, group_coordinator, data_dir, partition_log) compiles their definitions
// again. A host that wants them compiled once defines BROOK_SEPARATE_COMPILATION for every
// TU (a compile definition on the target) and compiles <brook/src.hpp> in exactly one of
// them: the headers then declare, and that TU defines, with external linkage
// (docs/design.md, "Header-only, or compiled once").
//
// BROOK_ALWAYS_INLINE and BROOK_NOINLINE steer the inliner on the format's hot paths (the
// varint and record decoders a scan runs per field): the common case inlined into the loop,
// the rare long form kept out of it.
//
// Thread-safety: macros only.
#pragma once

#if defined(BROOK_SEPARATE_COMPILATION)
#define BROOK_DECL
#else
#define BROOK_DECL inline
#endif

#if defined(__GNUC__) || defined(__clang__)
#define BROOK_ALWAYS_INLINE [[gnu::always_inline]] inline
#define BROOK_NOINLINE [[gnu::noinline]]
#else
#define BROOK_ALWAYS_INLINE inline
#define BROOK_NOINLINE
#endif
