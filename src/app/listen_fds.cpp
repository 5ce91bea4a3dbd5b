// systemd's socket activation protocol (sd_listen_fds(3)), without libsystemd: the launcher
// sets LISTEN_PID to the process it started and LISTEN_FDS to how many sockets it passed,
// starting at file descriptor 3.
#include <tern/listen_fds.hpp>

#include "platform/sockets.hpp"
#include "platform/system.hpp"

#include <charconv>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>

namespace tern {

namespace {

constexpr int first_passed_fd = 3;  // SD_LISTEN_FDS_START

void unset_protocol_variables() noexcept {
    detail::platform::unset_environment("LISTEN_PID");
    detail::platform::unset_environment("LISTEN_FDS");
    detail::platform::unset_environment("LISTEN_FDNAMES");
}

// A decimal variable, or -1 when it is not set.
long long read_number(const char* name) {
    const char* text = std::getenv(name);
    if (text == nullptr) return -1;
    const std::string_view s(text);
    long long value = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (ec != std::errc{} || end != s.data() + s.size() || value < 0) {
        unset_protocol_variables();
        throw std::invalid_argument("tern: listen_fds: " + std::string(name) + "='" +
                                    std::string(s) + "' is not a number");
    }
    return value;
}

}  // namespace

std::vector<int> listen_fds() {
    const long long pid = read_number("LISTEN_PID");
    // Meant for another process (a parent that exec'd without clearing them): not ours.
    if (pid != static_cast<long long>(detail::platform::process_id())) return {};
    const long long count = read_number("LISTEN_FDS");
    unset_protocol_variables();
    std::vector<int> fds;
    for (long long i = 0; i < count; ++i) {
        const int fd = first_passed_fd + static_cast<int>(i);
        // The launcher said n but one is not open: skip it.
        if (detail::platform::keep_passed_socket(fd)) fds.push_back(fd);
    }
    return fds;
}

}  // namespace tern
