#pragma once
// The mark `tern::blocking` puts on a route handler: a callable type of its own inside the
// std::function, so dispatch can tell a blocking handler from the others without a flag
// beside every route.

#include <tern/context.hpp>

#include <utility>

namespace tern::detail {

/// A handler to run on the blocking pool; called, it just runs the handler it wraps.
struct blocking_handler {
    handler inner;
    void operator()(context& ctx) const { inner(ctx); }
};

/// Whether `h` was made by `tern::blocking`.
inline bool is_blocking(const handler& h) noexcept {
    return h.target<blocking_handler>() != nullptr;
}

}  // namespace tern::detail
