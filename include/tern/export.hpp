#pragma once
/// @file export.hpp
/// `TERN_API` marks the declarations a shared libtern exports; everything else in the
/// library is hidden. CMake defines `TERN_SHARED` for a shared libtern and its users and
/// `TERN_BUILDING` while compiling libtern itself; with a static libtern the macro is empty.

#if defined(TERN_SHARED) && defined(_WIN32)
#if defined(TERN_BUILDING)
#define TERN_API __declspec(dllexport)
#else
#define TERN_API __declspec(dllimport)
#endif
#elif defined(TERN_SHARED)
#define TERN_API __attribute__((visibility("default")))
#else
#define TERN_API
#endif
