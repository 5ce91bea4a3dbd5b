#include "handling/sse_route.hpp"

#include "handling/context_access.hpp"
#include "handling/streamed_body.hpp"

#include <tern/context.hpp>

#include <memory>
#include <string>
#include <utility>

namespace tern::detail {

handler sse_route(sse_handler h) {
    return [h = std::move(h)](context& ctx) {
        auto& ex = context_access::of(ctx);
        // The stream is UTF-8 by definition (no charset parameter); caches and proxies must
        // neither store nor buffer it (X-Accel-Buffering: nginx's per-response switch).
        ctx.content_type("text/event-stream");
        ctx.header("Cache-Control", "no-store");
        ctx.header("X-Accel-Buffering", "no");
        auto source =
            std::make_shared<streamed_body>(ex.env.stream_buffer_size, ex.env.max_stream_buffer);
        source->make_event_stream(ex.env.sse_keep_alive, ":\n\n");
        ex.res.source = streamed_body::tap(source);
        ex.res.body.clear();
        ex.app_body = true;
        std::string last_id(ctx.header("Last-Event-ID").value_or(std::string_view{}));
        h(ctx, sse_client(response_stream(std::move(source)), std::move(last_id)));
    };
}

}  // namespace tern::detail
