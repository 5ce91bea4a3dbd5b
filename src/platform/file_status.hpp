#pragma once
// What the static layer knows of a file it opened: its stat, and on Windows its last write
// time in the file system's 100 ns steps, which the C runtime's stat rounds to whole seconds
// (an ETag made of size and time would then not change when a file is rewritten at the same
// size within a second). The lowest layer: no other folder of src/.

#include <sys/types.h>

#include <sys/stat.h>

#include <cstdint>

namespace tern::detail::platform {

#if defined(_WIN32)
/// The C runtime's stat of a file, and when it was last written in nanoseconds since 1970
/// (from the handle's last write time, 100 ns steps; the stat's whole seconds when the handle
/// cannot tell). Filled by stat_descriptor (platform/files.hpp).
struct file_status : ::stat {
    std::uint64_t written_ns = 0;  ///< the last write time, nanoseconds since 1970
};
#else
/// A file's stat(2): st_mtim has the file system's nanoseconds.
using file_status = struct stat;
#endif

/// When `st`'s file was last modified, in nanoseconds since 1970 (st_mtim; on Windows the
/// handle's last write time, 100 ns steps).
inline std::uint64_t modified_ns(const file_status& st) noexcept {
#if defined(_WIN32)
    return st.written_ns;
#else
#if defined(__APPLE__)
    const auto& ts = st.st_mtimespec;
#else
    const auto& ts = st.st_mtim;
#endif
    return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000U +
           static_cast<std::uint64_t>(ts.tv_nsec);
#endif
}

}  // namespace tern::detail::platform
