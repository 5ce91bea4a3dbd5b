// The parts of tern::context for sessions and signed cookies, and the step that saves a
// request's session when its chain is done.

#include "handling/context_session.hpp"

#include "handling/errors.hpp"
#include "http/status.hpp"
#include "http/token.hpp"
#include "web/cookie_signer.hpp"
#include "web/cookies.hpp"
#include "web/session_manager.hpp"

#include <tern/context.hpp>

#include <cstdio>
#include <stdexcept>
#include <vector>

namespace tern {

namespace {

const detail::cookie_signer& signer_of(const detail::exchange& ex) {
    if (ex.env.signer == nullptr) {
        throw std::logic_error(
            "tern: signed cookies need a secret: call app.cookie_secret(...) before start()");
    }
    return *ex.env.signer;
}

}  // namespace

std::optional<std::string> context::signed_cookie(std::string_view name) const {
    const auto& signer = signer_of(*ex_);
    std::vector<detail::cookie_pair> pairs;
    for (const auto& h : ex_->req.headers) {
        if (detail::iequals(h.name, "cookie")) detail::parse_cookie_header(h.value, pairs);
    }
    // The first cookie of that name whose signature holds: a forged one beside it (set by
    // a sibling subdomain, say) neither wins nor hides the real one.
    for (const auto& c : pairs) {
        if (c.name != name) continue;
        if (auto value = signer.verify(name, c.value)) return value;
    }
    return std::nullopt;
}

context& context::set_signed_cookie(std::string_view name, std::string_view value,
                                    const cookie_options& options) {
    return cookie(name, signer_of(*ex_).sign(name, value), options);
}

tern::session& context::session() {
    if (ex_->session) return *ex_->session;
    if (ex_->env.sessions == nullptr) {
        throw std::logic_error(
            "tern: ctx.session() needs sessions turned on: call app.sessions(...) before "
            "start()");
    }
    ex_->session = ex_->env.sessions->open(ex_->req.headers);
    return *ex_->session;
}

}  // namespace tern

namespace tern::detail {

void commit_session(exchange& ex) noexcept {
    if (!ex.session || ex.env.sessions == nullptr) return;
    auto s = std::move(ex.session);  // saved once: later uses (error handlers) start over
    try {
        if (auto set_cookie = ex.env.sessions->commit(*s, ex.req.secure)) {
            ex.res.fields.emplace_back("Set-Cookie", std::move(*set_cookie));
        }
        return;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "tern: saving the session for %.*s %.*s failed: %s\n",
                     static_cast<int>(ex.req.method.size()), ex.req.method.data(),
                     static_cast<int>(ex.req.path.size()), ex.req.path.data(), e.what());
    } catch (...) {
        std::fprintf(stderr, "tern: saving the session for %.*s %.*s failed\n",
                     static_cast<int>(ex.req.method.size()), ex.req.method.data(),
                     static_cast<int>(ex.req.path.size()), ex.req.path.data());
    }
    // The answer assumed a saved session (a log-in): it must not go out as a success.
    ex.res.clear();
    ex.app_body = false;
    set_error(ex.res, 500, reason_phrase(500));
}

}  // namespace tern::detail
