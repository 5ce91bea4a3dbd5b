#pragma once
// Small calls of the C library that differ between POSIX and Windows's CRT: the calendar
// time, the environment, random bytes from the system, reading a file at an offset. Inline,
// and on POSIX the plain call (the Linux path is the same instructions as without it). The
// lowest layer: no other folder of src/.

#include <cstddef>
#include <cstdint>
#include <ctime>

#if defined(_WIN32)
#include <process.h>
#else
#include <sys/random.h>
#include <unistd.h>
#endif

#include <cstdlib>

namespace tern::detail::platform {

/// `t` as UTC calendar time in `out` (gmtime_r; gmtime_s on Windows): false when `t` has none.
inline bool utc_time(std::time_t t, std::tm& out) noexcept {
#if defined(_WIN32)
    return ::gmtime_s(&out, &t) == 0;
#else
    return ::gmtime_r(&t, &out) != nullptr;
#endif
}

/// This process's id (getpid; _getpid on Windows).
inline long long process_id() noexcept {
#if defined(_WIN32)
    return ::_getpid();
#else
    return ::getpid();
#endif
}

/// Removes the environment variable `name` (unsetenv; _putenv_s with an empty value on
/// Windows, which removes it there).
inline void unset_environment(const char* name) noexcept {
#if defined(_WIN32)
    ::_putenv_s(name, "");
#else
    ::unsetenv(name);
#endif
}

/// Fills `out` with `n` bytes from the system's random source without waiting for it
/// (getrandom(GRND_NONBLOCK)): false when it could not (the caller falls back). Windows:
/// always false (std::random_device is the system's source there).
inline bool system_random(void* out, std::size_t n) noexcept {
#if defined(_WIN32)
    (void)out;
    (void)n;
    return false;
#else
    return ::getrandom(out, n, GRND_NONBLOCK) == static_cast<ssize_t>(n);
#endif
}

}  // namespace tern::detail::platform
