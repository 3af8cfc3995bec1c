# Used by add_test when a prerequisite is missing: print which check and why, and fail (never
# skip silently).
message(FATAL_ERROR "${CHECK}: ${MSG}")
