#pragma once

#include <asio/steady_timer.hpp>

#include <system_error>

namespace tern::detail {

/// Cancels the waits on `timer`, for the noexcept close and drain paths. asio's cancel()
/// reports failure by exception, but a timer's cancel cannot fail: it unlinks queued waits,
/// no system call (asio dropped the error_code overload for that reason). Said here once.
inline void cancel_waits(asio::steady_timer& timer) noexcept {
    try {
        timer.cancel();
    } catch (const std::system_error&) {
        // Not reached: see above.
    }
}

}  // namespace tern::detail
