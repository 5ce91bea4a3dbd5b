#include "handling/ws_route.hpp"

#include "handling/context_access.hpp"
#include "handling/errors.hpp"
#include "handling/ws_connection.hpp"
#include "ws/handshake.hpp"

#include <tern/config.hpp>
#include <tern/context.hpp>
#include <tern/http_error.hpp>

#include <algorithm>
#include <string>
#include <utility>

namespace tern::detail {

namespace {

ws_settings settings_of(const tern::config& c) {
    ws_settings s;
    s.max_message = c.websocket.max_message_size;
    s.ping_interval = c.websocket.ping_interval;
    s.mark = c.streams.buffer_size;
    s.limit = c.streams.max_buffer;
    return s;
}

}  // namespace

handler ws_route(std::shared_ptr<const ws_handlers::parts> route) {
    return [route = std::move(route)](context& ctx) {
        auto& ex = context_access::of(ctx);
        // Cross-site WebSocket hijacking: a page on another site may open a WebSocket to
        // this one with the user's cookies; the browser's Origin field says who asks.
        if (!route->origins.empty()) {
            const auto origin = ex.req.header("Origin");
            if (origin && std::find(route->origins.begin(), route->origins.end(), *origin) ==
                              route->origins.end()) {
                throw http_error(403, "origin not allowed");
            }
        }
        const bool compression =
            ex.env.settings != nullptr && ex.env.settings->websocket.compression;
        const auto hs = ws::check_upgrade(ex.req, {route->subprotocols, compression, false});
        if (hs.status != 101) {
            // Answered as tern's own errors are (app.error(status), JSON for JSON clients),
            // with the fields the refusal needs; not thrown, which would drop them.
            set_error(ex.res, hs.status, hs.why);
            if (hs.status == 426) {
                // RFC 9110 15.5.22 and RFC 6455 4.2.2: what the server would switch to.
                ex.res.fields.emplace_back("Upgrade", "websocket");
                ex.res.fields.emplace_back("Sec-WebSocket-Version", "13");
            } else if (hs.status == 405) {
                ex.res.fields.emplace_back("Allow", "GET");
            }
            return;
        }
        ws_request_info info;
        copy_request(ex.req, info.req);
        const auto& s = ex.scratch;
        for (std::size_t i = 0; i < s.params.size(); ++i) {
            info.params.emplace_back(std::string(s.params[i].name), s.decoded[i]);
        }
        // The client's, as ctx.ip(): behind a trusted proxy, the one the proxy names.
        info.remote_ip.assign(ex.scratch.client_ip.empty() ? ex.remote_ip : ex.scratch.client_ip);
        info.subprotocol = hs.subprotocol;
        const ws_settings settings =
            ex.env.settings ? settings_of(*ex.env.settings) : ws_settings{};
        auto connection =
            std::make_shared<ws_connection>(route, std::move(info), settings, hs.deflate);

        ex.res.status = 101;
        ex.res.fields.emplace_back("Upgrade", "websocket");
        ex.res.fields.emplace_back("Connection", "Upgrade");
        ex.res.fields.emplace_back("Sec-WebSocket-Accept", hs.accept);
        if (!hs.subprotocol.empty()) {
            ex.res.fields.emplace_back("Sec-WebSocket-Protocol", hs.subprotocol);
        }
        if (hs.deflate) {
            ex.res.fields.emplace_back("Sec-WebSocket-Extensions",
                                       ws::format_deflate_answer(*hs.deflate));
        }
        ex.res.body.clear();
        ex.res.content_type.clear();
        ex.res.upgrade = std::move(connection);
        ex.app_body = true;
    };
}

}  // namespace tern::detail
