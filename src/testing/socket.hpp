#pragma once
// One TCP connection to 127.0.0.1 for the test client: blocking calls bounded by a deadline
// (poll(2) before each send and receive, WSAPoll on Windows), so a test never hangs on a
// silent server. The socket calls are libtern's inline platform ones (platform/socket_api.hpp),
// which link no private symbol of libtern.

#include "platform/socket_api.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tern::testing::detail {

using clock = std::chrono::steady_clock;

/// An open socket connected to 127.0.0.1:port; closed by the destructor.
class socket {
public:
    /// Connects; throws client_error when the port refuses (or timeout_error past
    /// `deadline`).
    socket(std::uint16_t port, clock::time_point deadline);
    ~socket();
    socket(socket&& other) noexcept;
    socket& operator=(socket&& other) noexcept;
    socket(const socket&) = delete;
    socket& operator=(const socket&) = delete;

    /// Sends all of `bytes`. False when the peer has closed or reset the connection;
    /// timeout_error past `deadline`.
    bool send_all(std::string_view bytes, clock::time_point deadline);
    /// Receives up to `size` bytes into `out`: the count, 0 at the peer's close (or reset).
    /// timeout_error past `deadline`.
    std::size_t receive(char* out, std::size_t size, clock::time_point deadline);
    /// Like `receive`, but returns -1 instead of throwing when nothing arrived by
    /// `deadline`.
    std::ptrdiff_t receive_until(char* out, std::size_t size, clock::time_point deadline);
    /// True when the connection can take a new request: the peer has neither closed it nor
    /// sent anything unasked (both read as "readable" on an idle keep-alive connection).
    bool idle_and_open() const;

private:
    // Waits until the socket is writable (`write`) or readable, until `deadline`: false when
    // the time ran out.
    bool wait(bool write, clock::time_point deadline) const;

    tern::detail::platform::native_socket fd_ = tern::detail::platform::invalid_socket;
};

}  // namespace tern::testing::detail
