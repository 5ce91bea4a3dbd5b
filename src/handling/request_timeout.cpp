// tern::request_timeout (include/tern/request_timeout.hpp): the filter sets the exchange's
// deadline; dispatch.cpp keeps it (a late synchronous answer replaced, a held one timed out by
// held_exchange::time_out).

#include "handling/context_access.hpp"

#include <tern/request_timeout.hpp>

#include <chrono>
#include <stdexcept>
#include <string>

namespace tern {

handler request_timeout(std::chrono::milliseconds limit, int status) {
    if (limit <= std::chrono::milliseconds::zero()) {
        throw std::invalid_argument("tern: request_timeout needs a positive limit");
    }
    if (status < 500 || status > 599) {
        throw std::invalid_argument("tern: request_timeout status " + std::to_string(status) +
                                    " is outside 500..599");
    }
    return [limit, status](context& ctx) {
        auto& scratch = detail::context_access::of(ctx).scratch;
        const auto due = std::chrono::steady_clock::now() + limit;
        if (scratch.deadline == std::chrono::steady_clock::time_point{} || due < scratch.deadline) {
            scratch.deadline = due;
            scratch.deadline_status = status;
        }
    };
}

}  // namespace tern
