# Used by add_test when a prerequisite is missing: print why and fail (never skip silently).
message(FATAL_ERROR "compat_kafkajs_record_batch: ${MSG}")
