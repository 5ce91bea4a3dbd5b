// client::relay: an upstream's answer passed on into a deferred response as it arrives. The
// head opens a response stream on the response's loop; body bytes that come before it are
// held (up to relay_options::buffer), and after it the upstream is read only while the
// stream takes more (pace). Every callback here runs on that loop, one at a time.

#include "client/call.hpp"
#include "http/header_values.hpp"
#include "http/request.hpp"
#include "http/token.hpp"

#include <tern/client.hpp>
#include <tern/context.hpp>
#include <tern/stream.hpp>

#include <algorithm>
#include <functional>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tern {

namespace {

struct head_slot;

// What one relay keeps between its callbacks. The call holds it (through its callbacks), so
// it never holds the call's resume: a paused call that held its own resume would own itself
// (gate -> wake -> call -> state -> resume -> gate), and nothing could end it.
struct relay_state {
    response_stream out;
    std::string pending;  // body bytes that arrived before the stream existed
    bool full = false;    // the stream's buffer is full: read no more for now
    bool headed = false;  // the head went to the reply; its completion is on its way
    bool ended = false;   // the call ended before that completion ran...
    bool failed = false;  // ...and failed
    bool lost = false;    // the completion threw or was dropped: no stream will take the body
    std::size_t buffer = 0;
    std::weak_ptr<head_slot> head;  // the completion on its way, while it is
};

// The head on its way to the reply, owned by the reply's completion. The call's resume, when
// it paused before the stream existed, waits here: the completion hands it to the stream, or,
// when it throws or is dropped (the client left), lets it go uncalled, which cancels the call
// and closes its upstream connection (client_call: a dropped resume ends it).
struct head_slot {
    std::shared_ptr<relay_state> state;
    std::function<void()> waiting;  // the upstream's resume, paused until the stream opens
    bool opened = false;
    explicit head_slot(std::shared_ptr<relay_state> s) noexcept : state(std::move(s)) {}
    head_slot(const head_slot&) = delete;
    head_slot& operator=(const head_slot&) = delete;
    ~head_slot() {
        if (!opened) state->lost = true;  // then `waiting` goes, uncalled
    }
};

// Fields a proxy never passes on (RFC 9110 7.6.1), and those tern writes itself.
bool never_relayed(std::string_view name) {
    static constexpr std::string_view fields[] = {
        "connection",        "keep-alive", "proxy-connection", "te",  "trailer",
        "transfer-encoding", "upgrade",    "content-length",   "date"};
    return std::any_of(std::begin(fields), std::end(fields),
                       [name](std::string_view f) { return detail::iequals(name, f); });
}

// The names the response's Connection fields list (RFC 9110 7.6.1).
std::vector<std::string> connection_options(const client_response& head) {
    std::vector<std::string> names;
    for (const auto& [name, value] : head.headers) {
        if (!detail::iequals(name, "connection")) continue;
        detail::for_each_element(value, [&names](std::string_view item) {
            if (!item.empty()) names.emplace_back(item);
            return true;
        });
    }
    return names;
}

bool listed(const std::vector<std::string>& names, std::string_view name) {
    return std::any_of(names.begin(), names.end(),
                       [name](const std::string& n) { return detail::iequals(n, name); });
}

// Opens the stream with the upstream's status and fields, and hands over what came before.
void open_stream(context& cx, head_slot& slot, const client_response& head,
                 const std::vector<std::string>& dropped) {
    auto& state = *slot.state;
    cx.status(head.status);
    const auto named = connection_options(head);
    for (const auto& [name, value] : head.headers) {
        if (never_relayed(name) || listed(named, name) || listed(dropped, name)) continue;
        cx.add_header(name, value);
    }
    state.out = cx.stream();
    slot.opened = true;
    state.full = !state.out.write(state.pending);
    state.pending.clear();
    if (state.ended) {
        if (state.failed) {
            state.out.abort();
        } else {
            state.out.end();
        }
        return;
    }
    if (auto resume = std::exchange(slot.waiting, nullptr)) {
        if (state.full) {
            state.out.on_writable(std::move(resume));
        } else {
            resume();
        }
    }
}

}  // namespace

void client::relay(const deferred& reply, client_request request,
                   std::function<void(const client_result& result, bool relayed)> done,
                   relay_options options) const {
    if (request.on_head || request.on_body || request.pace) {
        throw std::invalid_argument(
            "tern: client::relay sets on_head, on_body and pace itself: leave them empty");
    }
    auto state = std::make_shared<relay_state>();
    state->buffer = std::max<std::size_t>(options.buffer, 1);
    auto dropped =
        std::make_shared<const std::vector<std::string>>(std::move(options.drop_headers));
    request.on_head = [reply, state, dropped](const client_response& head) {
        auto slot = std::make_shared<head_slot>(state);
        state->head = slot;
        state->headed = true;
        // False when the reply cannot take it (the client left): the call ends here.
        return reply.complete([slot = std::move(slot), dropped, head](context& cx) {
            open_stream(cx, *slot, head, *dropped);
        });
    };
    request.on_body = [state](std::string_view bytes) {
        if (state->lost) return false;  // the head never reached the client: read no more
        if (state->out) {
            state->full = !state->out.write(bytes);
        } else {
            state->pending.append(bytes);
        }
        return true;
    };
    request.pace = [state](std::function<void()> resume) {
        if (!state->out) {
            if (state->lost || state->pending.size() < state->buffer) return true;
            const auto slot = state->head.lock();
            if (!slot) return true;  // cannot be: a slot that went unopened set `lost`
            slot->waiting = std::move(resume);
            return false;
        }
        if (!state->full) return true;
        state->out.on_writable([state, resume = std::move(resume)] {
            state->full = false;
            resume();
        });
        return false;
    };
    // The relayed body is bounded by the relay's own limit, not by max_response_body.
    const std::uint64_t max_body =
        options.max_body == 0 ? std::numeric_limits<std::uint64_t>::max() : options.max_body;
    auto call = std::make_shared<detail::client_call>(shared_, std::move(request), max_body);
    detail::run_on_loop(call, reply, [call, state, done = std::move(done)] {
        const client_result& r = call->result;
        if (state->out) {
            // The head went out: the body ends whole, or cut off.
            if (r) {
                state->out.end();
            } else {
                state->out.abort();
            }
        } else if (state->headed) {
            // The head's completion has not run yet: it ends the stream.
            state->ended = true;
            state->failed = !r;
        }
        if (done) done(r, state->headed);
    });
}

}  // namespace tern
