// libFuzzer harness for the router (src/routing/router.hpp) and dispatch.
//
// Builds a router from a fixed set of patterns plus up to four patterns taken from the
// input (a bad pattern or a duplicate route throws std::invalid_argument, which is caught),
// then looks up methods and paths taken from the input. Checks that captures view the
// path, that the chosen route's parameters are the ones captured, that find() and allow()
// agree, and that dispatch() runs the handler, which reads every parameter by name.
// Broken invariants call __builtin_trap().

#include "handling/dispatch.hpp"
#include "handling/exchange.hpp"
#include "http/request.hpp"
#include "http/response.hpp"
#include "routing/path_pattern.hpp"
#include "routing/router.hpp"

#include <tern/context.hpp>

#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

using tern::detail::path_param;
using tern::detail::router;
using outcome = router::outcome;

void check(bool ok) {
    if (!ok) __builtin_trap();
}

volatile std::size_t sink;

// A handler that knows the parameter names of its pattern, so a lookup can be checked
// against the route it chose (std::function::target gives it back) and so dispatch can read
// every parameter by name.
struct probe {
    std::vector<std::string> names;

    void operator()(tern::context& ctx) const {
        std::size_t total = ctx.method().size() + ctx.query_string().size();
        for (const auto& name : names) {
            const std::string_view value = ctx.path_param(name);  // throws if missing: a 500
            // Percent-decoding never lengthens a capture, which is part of the path.
            check(value.size() <= ctx.path().size());
            total += value.size();
        }
        total += ctx.query_param("q").value_or(std::string{}).size();
        total += ctx.query_params("a").size();
        sink = total;
        ctx.text("ok");
    }
};

// The names a pattern captures, in order; throws std::invalid_argument for a bad pattern.
std::vector<std::string> names_of(std::string_view pattern) {
    const tern::detail::path_pattern parsed(pattern);
    std::vector<std::string> names;
    for (const auto& segment : parsed.segments()) {
        if (segment.kind == tern::detail::segment_kind::param ||
            segment.kind == tern::detail::segment_kind::tail_param) {
            names.push_back(segment.text);
        }
    }
    return names;
}

constexpr std::array<std::pair<std::string_view, std::string_view>, 22> fixed_routes{{
    {"GET", "/"},
    {"POST", "/"},
    {"PUT", "/"},
    {"GET", "/users"},
    {"POST", "/users/"},
    {"GET", "/users/{id}"},
    {"PUT", "/users/{user_id}"},
    {"DELETE", "/users/{id}"},
    {"GET", "/users/{id}/posts/{post}"},
    {"PATCH", "/users/*/posts/{post}"},
    {"GET", "/users/me"},
    {"GET", "/files/<path>"},
    {"POST", "/files/*"},
    {"GET", "/static/*"},
    {"GET", "/a/*/c"},
    {"GET", "/a/b/c"},
    {"PUT", "/a/{b}/<rest>"},
    {"PROPFIND", "/dav/<rest>"},
    {"HEAD", "/head-only"},
    {"OPTIONS", "/opts/{o}"},
    {"GET", "/x/{a}/y/{b}"},
    {"GET", "/x/*/y/<rest>"},
}};

constexpr std::array<std::string_view, 10> methods{"GET",    "HEAD",    "POST",     "PUT", "PATCH",
                                                   "DELETE", "OPTIONS", "PROPFIND", "get", "BREW"};

std::string pick_method(FuzzedDataProvider& fdp) {
    const auto i = fdp.ConsumeIntegralInRange<std::size_t>(0, methods.size());
    if (i < methods.size()) return std::string(methods[i]);
    return fdp.ConsumeRandomLengthString(12);
}

// The methods of an Allow value ("GET, HEAD, OPTIONS").
std::vector<std::string_view> split_allow(std::string_view allow) {
    std::vector<std::string_view> out;
    while (!allow.empty()) {
        const auto comma = allow.find(", ");
        out.push_back(allow.substr(0, comma));
        if (comma == std::string_view::npos) break;
        allow.remove_prefix(comma + 2);
    }
    return out;
}

bool lists(const std::vector<std::string_view>& allowed, std::string_view method) {
    return std::find(allowed.begin(), allowed.end(), method) != allowed.end();
}

bool within(std::string_view inner, std::string_view outer) {
    return inner.data() >= outer.data() &&
           inner.data() + inner.size() <= outer.data() + outer.size();
}

tern::detail::handler_chain build(FuzzedDataProvider& fdp) {
    tern::detail::handler_chain app;
    router& routes = app.routes;
    for (const auto& [method, pattern] : fixed_routes) {
        routes.add(method, pattern, probe{names_of(pattern)});
    }
    const auto extra = fdp.ConsumeIntegralInRange<int>(0, 4);
    for (int i = 0; i < extra; ++i) {
        const std::string method = pick_method(fdp);
        const std::string pattern = fdp.ConsumeRandomLengthString(64);
        try {
            routes.add(method, pattern, probe{names_of(pattern)});
        } catch (const std::invalid_argument&) {
            // A bad pattern, method or a duplicate: refused at registration, as documented.
        }
    }
    return app;
}

void look_up(const tern::detail::handler_chain& app, const std::string& method,
             const std::string& target, tern::detail::exchange_scratch& scratch) {
    const router& routes = app.routes;
    auto& params = scratch.params;
    const std::string_view full(target);
    const auto q = full.find('?');
    const std::string_view path = full.substr(0, q);
    const std::string_view query = q == std::string_view::npos ? "" : full.substr(q + 1);

    const auto m = routes.find(method, path, params);
    const std::string allow = routes.allow(path);
    const auto allowed = split_allow(allow);
    for (const auto& p : params) {
        check(!p.name.empty());
        check(within(p.value, path));
        check(!p.value.empty());
    }
    switch (m.result) {
        case outcome::found: {
            check(m.target != nullptr);
            const probe* chosen = m.target->target<probe>();
            check(chosen != nullptr);
            check(params.size() == chosen->names.size());
            for (std::size_t i = 0; i < params.size(); ++i) {
                check(params[i].name == chosen->names[i]);
            }
            check(!m.head_from_get || method == "HEAD");
            // A path a route answers is one its Allow lists the method for.
            check(lists(allowed, m.head_from_get ? "GET" : method));
            break;
        }
        case outcome::method_not_allowed:
            check(m.target == nullptr && params.empty());
            check(!allow.empty() && m.allow == allow);
            check(method == "OPTIONS" || !lists(allowed, method));
            break;
        case outcome::not_found:
            check(m.target == nullptr && params.empty());
            check(allow.empty() && m.allow.empty());
            break;
    }
    if (!allow.empty()) check(lists(allowed, "OPTIONS"));

    // The whole exchange: the handler reads every parameter; nothing escapes as a 500.
    tern::detail::request req;
    req.method = method;
    req.target = full;
    req.path = path;
    req.query = query;
    tern::detail::response res;
    scratch.reset();
    tern::detail::exchange ex{req, res, "127.0.0.1", scratch, {}};
    tern::detail::dispatch(app, ex);  // no static directories, filters or CORS
    if (path == "*") {
        // "OPTIONS *" asks about the server (RFC 9110 9.3.7); the parser lets "*" through for
        // OPTIONS only, and dispatch answers it 204 whatever the routes.
        check(res.status == 204);
        return;
    }
    switch (m.result) {
        case outcome::found:
            check(res.status == 200 && res.body == "ok");
            break;
        case outcome::method_not_allowed:
            check(res.status == (method == "OPTIONS" ? 204 : 405));
            break;
        case outcome::not_found:
            check(res.status == 404);
            break;
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    FuzzedDataProvider fdp(data, size);
    const tern::detail::handler_chain app = build(fdp);
    tern::detail::exchange_scratch scratch;
    for (int i = 0; i < 64 && fdp.remaining_bytes() > 0; ++i) {
        const std::string method = pick_method(fdp);
        const std::string target = fdp.ConsumeRandomLengthString(256);
        look_up(app, method, target, scratch);
    }
    return 0;
}
