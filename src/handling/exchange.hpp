#pragma once
// What one request/response exchange holds while the handler chain runs: the context's
// backing store.

#include "http/exchange_port.hpp"
#include "http/request.hpp"
#include "http/response.hpp"
#include "routing/router.hpp"
#include "static/root_cache.hpp"

#include <tern/config.hpp>
#include <tern/context.hpp>
#include <tern/session.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <typeinfo>
#include <utility>
#include <vector>

namespace tern::detail {

/// One part of a multipart/form-data body as the context hands it out (see web/multipart).
struct form_part {
    std::string name;
    bool is_file = false;
    std::string filename;  ///< raw, as sent
    std::string content_type;
    std::string_view data;  ///< view into the request body
};

/// Scratch state reused from request to request on one thread, so that the common request
/// allocates nothing once warm. Lazily filled caches say whether they are filled.
struct exchange_scratch {
    std::vector<path_param> params;    ///< raw captures of the matched route
    std::vector<std::string> decoded;  ///< decoded values, parallel to `params`
    /// The captures of the filter running now, when its pattern has parameters (a filter
    /// reads its own pattern's parameters, whether or not a route matched).
    std::vector<path_param> filter_params;
    std::vector<std::string> filter_decoded;  ///< parallel to `filter_params`
    bool parts_parsed = false;                ///< `parts` holds this request's multipart parts
    std::vector<form_part> parts;
    /// Header fields set with `tern::keep_on_error`: put back on a response restarted for an
    /// error (an exception mapper's clean start, tern's 500).
    std::vector<std::pair<std::string, std::string>> kept_fields;
    /// Why the response is an error (`ctx.error_cause()`), the exception's message when one
    /// was thrown, and a tern::validation_error's fields (for the JSON error body).
    tern::error_cause cause = tern::error_cause::none;
    std::string error_message;
    field_errors fields;
    /// `ctx.attribute(name, value)`: values a filter hands to the handler.
    struct attribute {
        std::string name;
        std::shared_ptr<void> value;
        const std::type_info* type = nullptr;
    };
    std::vector<attribute> attributes;
    /// This request's id (app.request_ids); empty when ids are off.
    std::string request_id;
    /// The client's address found behind trusted proxies (app.trusted_proxies); empty when
    /// it is the peer's.
    std::string client_ip;
    /// tern::request_timeout: when the handler's answer is due (the epoch: no limit), and the
    /// status the request gets when it is not there by then.
    std::chrono::steady_clock::time_point deadline{};
    int deadline_status = 503;

    /// Forgets the previous request's caches and state (capacity kept).
    void reset() noexcept {
        parts_parsed = false;
        kept_fields.clear();
        cause = tern::error_cause::none;
        error_message.clear();
        fields.clear();
        attributes.clear();
        deadline = {};
    }
};

class held_exchange;
class whole_body_coders;
class blocking_pool;
class session_manager;
class cookie_signer;
class request_metrics;
class request_id_source;

/// What the requests of one app on one event loop share: its limits and services. Built in
/// one place (the app's loop state, `app::impl::make_loop_state`) and copied whole where an
/// exchange moves on (a held response, a blocking job), so no path leaves a field out.
/// Unit tests leave it default: no sessions, no signer, no loop services.
struct exchange_env {
    std::size_t max_upload_file_size = 0;              ///< config::max_upload_file_size
    std::size_t max_json_size = 0;                     ///< config::max_json_size, for body_as
    std::size_t max_json_depth = 0;                    ///< config::max_json_depth, for body_as
    std::size_t stream_buffer_size = 64 * 1024;        ///< config::stream_buffer_size
    std::size_t max_stream_buffer = 1024 * 1024;       ///< config::max_stream_buffer
    std::chrono::milliseconds sse_keep_alive{15'000};  ///< config::sse_keep_alive
    /// The app's settings, read-only while it runs (null in unit tests): the settings
    /// tern's built-in routes read at the moment they need them (WebSocket upgrades).
    const tern::config* settings = nullptr;
    /// The app's blocking pool, for coroutine handlers' `on_blocking_pool` (null: none).
    blocking_pool* pool = nullptr;
    /// The app's sessions (`app.sessions`); null: off, and `ctx.session()` throws.
    const session_manager* sessions = nullptr;
    /// The app's cookie signer (`app.cookie_secret`); null: none, and signed cookies throw.
    const cookie_signer* signer = nullptr;
    // Owned by the loop, used on it only:
    /// The static roots the event loop keeps open; null where no loop serves the request
    /// (unit tests): the static layer then opens the root per request.
    root_cache* roots = nullptr;
    /// The loop's request counters (app.metrics); null when metrics are off.
    request_metrics* metrics = nullptr;
    /// The loop's request id maker (app.request_ids); null where there is none.
    request_id_source* ids = nullptr;
    /// What the loop keeps for coding whole bodies (zstd's context); null: made per body.
    /// Used where compression runs: on the loop, also for a blocking job's answer.
    whole_body_coders* coders = nullptr;
};

/// Per-request state behind `tern::context`.
struct exchange {
    request& req;
    response& res;
    std::string_view remote_ip;
    exchange_scratch& scratch;
    exchange_env env;
    /// The application set the body (result/text/html/json/redirect): error handlers and
    /// tern's JSON error rendering leave such a response alone.
    bool app_body = false;
    /// The static layer answered with a file (whose bytes may be in `res.body` when the loop
    /// holds them): the answer is never compressed on the fly (docs/static-files.md).
    bool static_file = false;
    /// A before filter asked to skip the rest of the before filters and the handler.
    bool skip = false;
    /// `ctx.path_param` reads `scratch.filter_params` (a filter with parameters is running)
    /// rather than the route's.
    bool filter_params = false;
    /// The transport, for responses that outlive the handler; null where there is none
    /// (unit tests, a blocking handler's pool thread): `ctx.defer()` is refused there.
    exchange_port* port = nullptr;
    /// True while the route's handler runs (the one place `ctx.defer()` is allowed).
    bool in_handler = false;
    /// Set by `ctx.defer()`: the rest of the chain runs when the response is completed.
    std::shared_ptr<held_exchange> held{};
    /// This request's session, made by the first `ctx.session()`; saved when the chain is done.
    std::unique_ptr<tern::session> session{};
};

}  // namespace tern::detail
