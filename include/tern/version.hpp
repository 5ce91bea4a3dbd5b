#pragma once
/// @file version.hpp
/// The one place tern's version is written; CMake parses it from here.

#include <tern/export.hpp>

/// Major version of the headers. While it is 0, the minor version carries the promise instead
/// (docs/versioning.md): a change that breaks source or ABI moves the minor version.
#define TERN_VERSION_MAJOR 0
/// Minor version of the headers: moves with every change that breaks source or ABI (0.x).
#define TERN_VERSION_MINOR 3
/// Patch version of the headers: fixes and additions that keep source and ABI.
#define TERN_VERSION_PATCH 0

namespace tern {

/// The library version as "major.minor.patch", taken from the compiled library (not the
/// headers), so a program can tell which libtern it was linked against.
TERN_API const char* version() noexcept;

}  // namespace tern
