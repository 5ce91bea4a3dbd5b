#pragma once
// Runs one request through the application: CORS preflight, before filters, the route's
// handler (or a static file, 404, 405), after filters, saving the session, error handlers,
// CORS headers, compression, the request logger. Transport-free: a parsed request in, a
// filled response out.

#include "handling/errors.hpp"
#include "handling/exchange.hpp"
#include "handling/filters.hpp"
#include "routing/router.hpp"
#include "static/static_files.hpp"
#include "web/compressed_source.hpp"
#include "web/cookie_signer.hpp"
#include "web/cors.hpp"
#include "web/forwarded.hpp"
#include "web/session_manager.hpp"

#include <tern/config.hpp>
#include <tern/context.hpp>

#include <chrono>
#include <exception>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

namespace tern::detail {

/// Everything the app registered, fixed while the server runs (read concurrently).
struct handler_chain {
    router routes;
    filter_list before;
    filter_list after;
    exception_mappers exceptions;
    std::unordered_map<int, handler> errors;        ///< app.error(status, h)
    std::unique_ptr<static_files> files;            ///< null: no static files
    std::unique_ptr<cors_policy> cors;              ///< null: no CORS
    std::optional<compression_config> compression;  ///< unset: no compression
    /// Streamed bodies being compressed (compression->max_streams); null: no compression.
    std::shared_ptr<stream_coder_slots> stream_coders;
    std::vector<log_handler> loggers;           ///< in registration order; none: off
    std::unique_ptr<session_manager> sessions;  ///< null: no sessions
    std::unique_ptr<cookie_signer> signer;      ///< null: no cookie secret
    /// The request id header (app.request_ids); empty: request ids off.
    std::string request_id_header;
    /// The Alt-Svc value that tells HTTPS and HTTP/2 clients where HTTP/3 is (app.http3:
    /// `h3=":PORT"; ma=86400`); empty: none.
    std::string alt_svc;
    std::unique_ptr<proxy_list> proxies;  ///< app.trusted_proxies; null: ctx.ip() is the peer
};

/// Answers `ex.req` into `ex.res` through the whole handler chain. The route's handler result;
/// for GET and HEAD without a route, a static file when one matches; 404 for an unknown
/// path; 405 + Allow when the path exists for other methods; 204 + Allow for OPTIONS
/// without an explicit route; a thrown exception mapped by the app's mappers, the status
/// and message of an http_error, else 500. Never throws.
void dispatch(const handler_chain& p, exchange& ex) noexcept;

/// Where a dispatch split in two stands between its halves (a blocking handler).
struct dispatch_state {
    std::chrono::steady_clock::time_point started;  ///< for the request logger and metrics
    router::match found;
    bool proceed = true;  ///< the before filters let the request through
    bool done = false;    ///< the exchange is complete (a preflight, a routing failure)
};

/// dispatch() in three steps, for a route whose handler must run elsewhere:
/// `dispatch_begin` (CORS preflight, routing, before filters), `dispatch_answer` (the
/// handler, a static file, 404 or 405, as dispatch does), `dispatch_end` (after filters,
/// saving the session, error shaping, CORS headers, compression, the request logger). After
/// `dispatch_begin`, `runs_blocking` says whether `dispatch_answer` is a `tern::blocking`
/// handler; when `st.done`, the other two steps do nothing. Each step never throws.
void dispatch_begin(const handler_chain& p, exchange& ex, dispatch_state& st) noexcept;
bool runs_blocking(const dispatch_state& st) noexcept;
void dispatch_answer(const handler_chain& p, exchange& ex, const dispatch_state& st) noexcept;
void dispatch_end(const handler_chain& p, exchange& ex, const dispatch_state& st) noexcept;

/// The rest of a held request's chain (ctx.defer()), on the loop, over the held exchange:
/// `fill` run as the handler would be, or `error` mapped as the handler's exception, or (a
/// handle dropped without completing) 500; then after filters, error shaping, CORS,
/// compression, the request logger. Never throws.
void dispatch_complete(const handler_chain& p, exchange& ex, const dispatch_state& st,
                       const handler& fill, const std::exception_ptr& error, bool dropped) noexcept;

/// Answers a request the network layer refused (`status` 400..599: a limit, a parse error,
/// a timeout) into `ex.res`: tern's error body, the app's error(status) handler, CORS
/// headers, the request logger. `ex.req` holds what was parsed (the head when it was
/// complete, else nothing). Never throws.
void dispatch_failure(const handler_chain& p, exchange& ex, int status,
                      std::string_view message = {}) noexcept;

}  // namespace tern::detail
