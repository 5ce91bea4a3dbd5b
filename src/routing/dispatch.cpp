#include "routing/dispatch.hpp"

#include "http/status.hpp"
#include "routing/url_decode.hpp"

#include <tern/http_error.hpp>

#include <fmt/core.h>

#include <cstdio>
#include <exception>

namespace tern::detail {

namespace {

void set_error(response& res, int status, std::string_view message) {
    res.clear();
    res.status = status;
    res.content_type = "text/plain; charset=utf-8";
    res.body.assign(message);
}

void decode_params(exchange& ex) {
    if (ex.decoded.size() < ex.params.size()) ex.decoded.resize(ex.params.size());
    for (std::size_t i = 0; i < ex.params.size(); ++i) {
        url_decode(ex.params[i].value, ex.decoded[i], false);
    }
}

void run_handler(const handler& h, exchange& ex) noexcept {
    try {
        context ctx(ex);
        h(ctx);
    } catch (const http_error& e) {
        set_error(ex.res, e.status(), e.what());
    } catch (const std::exception& e) {
        // An escaping exception is a bug in the application: say so on stderr, answer 500
        // with a body that leaks nothing, keep serving.
        fmt::print(stderr, "tern: handler for {} {} threw: {}\n", ex.req.method, ex.req.path,
                   e.what());
        set_error(ex.res, 500, reason_phrase(500));
    } catch (...) {
        fmt::print(stderr, "tern: handler for {} {} threw a non-std exception\n", ex.req.method,
                   ex.req.path);
        set_error(ex.res, 500, reason_phrase(500));
    }
}

// Turns the static layer's answer into the response. False when it did not claim the path.
bool answer_static(const static_files& files, exchange& ex) {
    auto r = files.serve(ex.req.method, ex.req.path, ex.req.headers);
    auto& res = ex.res;
    switch (r.what) {
        case static_result::kind::not_handled:
            return false;
        case static_result::kind::error:
            set_error(res, r.status, reason_phrase(r.status));
            break;
        case static_result::kind::redirect:
            set_error(res, r.status, reason_phrase(r.status));
            break;
        case static_result::kind::not_modified:
        case static_result::kind::file:
            res.status = r.status;
            res.file.file = std::move(r.file);
            res.file.offset = r.offset;
            res.file.length = r.length;
            break;
    }
    for (auto& [name, value] : r.fields) {
        if (name == "Content-Type") {
            // The type of the file, not of an error or redirect body.
            if (r.what == static_result::kind::file) res.content_type = std::move(value);
        } else if (name == "Location" && !ex.req.query.empty()) {
            // The static layer sees the path only; a redirect keeps the query (RFC 9110 10.2.2).
            value.push_back('?');
            value.append(ex.req.query);
            res.fields.emplace_back(std::move(name), std::move(value));
        } else {
            res.fields.emplace_back(std::move(name), std::move(value));
        }
    }
    return true;
}

}  // namespace

void dispatch(const router& routes, const static_files* files, exchange& ex) noexcept {
    auto& res = ex.res;
    res.clear();
    // RFC 9110 9.3.7: "OPTIONS *" asks about the server itself, not a resource. tern has
    // nothing server-wide to announce beyond answering it.
    if (ex.req.path == "*") {
        res.status = 204;
        return;
    }
    const auto found = routes.find(ex.req.method, ex.req.path, ex.params);
    // Static files come after the routes: a route for the path and method wins.
    if (found.result != router::outcome::found && files != nullptr) {
        try {
            if (answer_static(*files, ex)) return;
        } catch (...) {
            set_error(res, 500, reason_phrase(500));
            return;
        }
    }
    switch (found.result) {
        case router::outcome::found:
            decode_params(ex);
            run_handler(*found.target, ex);
            return;
        case router::outcome::method_not_allowed:
            // RFC 9110 9.3.7: OPTIONS describes the resource; 15.5.6: 405 lists Allow.
            if (ex.req.method == "OPTIONS") {
                res.status = 204;
            } else {
                set_error(res, 405, reason_phrase(405));
            }
            try {
                res.fields.emplace_back("Allow", found.allow);
            } catch (...) {
                set_error(res, 500, reason_phrase(500));
            }
            return;
        case router::outcome::not_found:
            set_error(res, 404, reason_phrase(404));
            return;
    }
}

}  // namespace tern::detail
