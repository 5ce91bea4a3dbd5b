#pragma once
/// @file version.hpp
/// The one place tern's version is written; CMake parses it from here.

#include <tern/export.hpp>

/// Major version of the headers: a change breaks the API.
#define TERN_VERSION_MAJOR 0
/// Minor version of the headers: additions that keep the API.
#define TERN_VERSION_MINOR 1
/// Patch version of the headers: fixes only.
#define TERN_VERSION_PATCH 0

namespace tern {

/// The library version as "major.minor.patch", taken from the compiled library (not the
/// headers), so a program can tell which libtern it was linked against.
TERN_API const char* version() noexcept;

}  // namespace tern
