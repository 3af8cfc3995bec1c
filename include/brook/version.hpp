// brook version. CMake parses these three macros; keep them on their own lines.
#pragma once

#define BROOK_VERSION_MAJOR 0
#define BROOK_VERSION_MINOR 1
#define BROOK_VERSION_PATCH 0

#define BROOK_VERSION (BROOK_VERSION_MAJOR * 10000 + BROOK_VERSION_MINOR * 100 + BROOK_VERSION_PATCH)
