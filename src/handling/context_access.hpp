#pragma once
// The handling layer's own view of a context's exchange, for tern's built-in handlers (SSE routes,
// coroutine routes); users have only the context's public members.

#include "handling/exchange.hpp"

#include <tern/context.hpp>

namespace tern::detail {

struct context_access {
    static exchange& of(context& ctx) noexcept { return *ctx.ex_; }
};

}  // namespace tern::detail
