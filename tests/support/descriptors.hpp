#pragma once
// The descriptors this process holds open now (the server under test runs in it), for the
// tests that check a bound on descriptors or that nothing leaks.

#include <cstddef>
#include <filesystem>

namespace tern_test {

/// Entries of /proc/self/fd (the iteration's own descriptor included, the same in every call).
inline std::size_t open_descriptors() {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) {
        ++n;
    }
    return n;
}

}  // namespace tern_test
