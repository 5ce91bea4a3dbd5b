#include <tern/testing.hpp>

#include "testing/cookie_jar.hpp"
#include "testing/h2_connection.hpp"
#include "testing/http1_connection.hpp"
#include "testing/outgoing.hpp"
#include "testing/response_reader.hpp"
#include "testing/stream.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <stdexcept>
#include <utility>
#include <variant>

namespace tern::testing {

namespace {

// raw() reads at most this much.
constexpr std::size_t max_raw_size = 16 * 1024 * 1024;

// One call as the public API gives it: views into the caller's arguments.
struct call {
    std::string_view method;
    std::string_view target;
    std::string_view body;
    const header_list& extra;
};

std::string describe(const call& c) { return std::string(c.method) + " " + std::string(c.target); }

}  // namespace

struct client::impl {
    std::uint16_t port;
    client_options options;
    std::chrono::milliseconds timeout{10'000};
    header_list defaults;
    detail::cookie_jar jar;
    std::variant<detail::http1_connection, detail::h2_connection> connection;

    impl(std::uint16_t p, client_options o)
        : port(p), options(o), connection(std::in_place_type<detail::http1_connection>, p, o.tls) {
        if (o.http2) connection.emplace<detail::h2_connection>(p, o.tls);
    }

    // The request with the client's fields: the defaults (unless the call's extra fields
    // name the same), the extra fields, the jar's Cookie.
    detail::outgoing_request prepare(const call& c) {
        detail::outgoing_request out{c.method, c.target, c.body, {}};
        out.fields.reserve(defaults.size() + c.extra.size() + 1);
        for (const testing::header& h : defaults) {
            if (!detail::has_field(c.extra, h.name)) out.fields.push_back(h);
        }
        out.fields.insert(out.fields.end(), c.extra.begin(), c.extra.end());
        if (std::string cookies = jar.header_for(c.target); !cookies.empty()) {
            out.fields.push_back({"Cookie", std::move(cookies)});
        }
        return out;
    }

    void keep_cookies(const response& r, std::string_view target) {
        for (const std::string_view cookie : r.header_values("Set-Cookie"))
            jar.store(cookie, target);
    }

    std::vector<response> send(const std::vector<call>& calls) {
        const auto deadline = detail::clock::now() + timeout;
        std::vector<response> out;
        out.reserve(calls.size());
        if (auto* h1 = std::get_if<detail::http1_connection>(&connection)) {
            // One after another: each request carries the cookies the ones before it set.
            for (const call& c : calls) {
                guarded(describe(c), [&] { out.push_back(h1->exchange(prepare(c), deadline)); });
                keep_cookies(out.back(), c.target);
            }
            return out;
        }
        std::vector<detail::outgoing_request> requests;
        requests.reserve(calls.size());
        for (const call& c : calls) requests.push_back(prepare(c));
        const std::string what = calls.size() == 1 ? describe(calls.front())
                                                   : "send_all of " + std::to_string(calls.size()) +
                                                         " requests over HTTP/2";
        guarded(what, [&] {
            try {
                out = std::get<detail::h2_connection>(connection).exchange(requests, deadline);
            } catch (const detail::h2_stream_error& e) {
                throw client_error(calls.size() == 1
                                       ? e.what()
                                       : describe(calls[e.index()]) + " (request " +
                                             std::to_string(e.index() + 1) + "): " + e.what());
            }
        });
        for (std::size_t i = 0; i < calls.size(); ++i) keep_cookies(out[i], calls[i].target);
        return out;
    }

    // Runs `fn`, naming `what` in the errors it throws; a failed call drops the connection
    // (HTTP/2: unless only its stream failed).
    template <class Fn>
    void guarded(const std::string& what, Fn&& fn) {
        try {
            fn();
        } catch (const timeout_error& e) {
            disconnect();
            throw timeout_error("tern::testing: " + what + ": " + e.what() + " (" +
                                std::to_string(timeout.count()) + " ms)");
        } catch (const client_error& e) {
            throw client_error("tern::testing: " + what + ": " + e.what());
        }
    }

    response send_one(const call& c) { return std::move(send({c}).front()); }

    void disconnect() noexcept {
        if (auto* h1 = std::get_if<detail::http1_connection>(&connection)) h1->disconnect();
        if (auto* h2 = std::get_if<detail::h2_connection>(&connection)) h2->disconnect();
    }
};

client::client(std::uint16_t port) : client(port, client_options{}) {}
client::client(std::uint16_t port, client_options options)
    : impl_(std::make_unique<impl>(port, options)) {}
client::~client() = default;
client::client(client&& other) noexcept = default;
client& client::operator=(client&& other) noexcept = default;

client& client::header(std::string name, std::string value) {
    auto& defaults = impl_->defaults;
    const auto same = std::find_if(defaults.begin(), defaults.end(), [&](const testing::header& h) {
        return detail::iequals(h.name, name);
    });
    if (same != defaults.end()) {
        same->value = std::move(value);
    } else {
        defaults.push_back({std::move(name), std::move(value)});
    }
    return *this;
}

client& client::timeout(std::chrono::milliseconds limit) {
    impl_->timeout = limit;
    return *this;
}

client& client::cookie(std::string name, std::string value) {
    impl_->jar.put(std::move(name), std::move(value));
    return *this;
}

std::optional<std::string> client::cookie(std::string_view name) const {
    return impl_->jar.find(name);
}

client& client::clear_cookies() {
    impl_->jar.clear();
    return *this;
}

response client::get(std::string_view target, const header_list& extra) {
    return impl_->send_one({"GET", target, {}, extra});
}

response client::head(std::string_view target, const header_list& extra) {
    return impl_->send_one({"HEAD", target, {}, extra});
}

response client::del(std::string_view target, const header_list& extra) {
    return impl_->send_one({"DELETE", target, {}, extra});
}

namespace {

header_list with_content_type(const header_list& extra, std::string content_type) {
    header_list fields;
    fields.reserve(extra.size() + 1);
    if (!detail::has_field(extra, "Content-Type"))
        fields.push_back({"Content-Type", std::move(content_type)});
    fields.insert(fields.end(), extra.begin(), extra.end());
    return fields;
}

}  // namespace

response client::post(std::string_view target, std::string_view body, std::string content_type,
                      const header_list& extra) {
    return impl_->send_one(
        {"POST", target, body, with_content_type(extra, std::move(content_type))});
}

response client::put(std::string_view target, std::string_view body, std::string content_type,
                     const header_list& extra) {
    return impl_->send_one(
        {"PUT", target, body, with_content_type(extra, std::move(content_type))});
}

response client::patch(std::string_view target, std::string_view body, std::string content_type,
                       const header_list& extra) {
    return impl_->send_one(
        {"PATCH", target, body, with_content_type(extra, std::move(content_type))});
}

response client::request(std::string_view method, std::string_view target, std::string_view body,
                         const header_list& extra) {
    return impl_->send_one({method, target, body, extra});
}

std::vector<response> client::send_all(const std::vector<testing::request>& requests) {
    if (requests.empty()) return {};
    std::vector<call> calls;
    calls.reserve(requests.size());
    for (const testing::request& r : requests)
        calls.push_back({r.method, r.target, r.body, r.headers});
    return impl_->send(calls);
}

std::string client::raw(std::string_view bytes, std::chrono::milliseconds quiet) {
    if (impl_->options.http2) {
        throw std::logic_error("tern::testing: raw() speaks HTTP/1.1: not on an HTTP/2 client");
    }
    const auto deadline = detail::clock::now() + impl_->timeout;
    detail::stream s(impl_->port, detail::http1_stream(impl_->options.tls), deadline);
    // A server that answers and closes before taking every byte (e.g. 400 at a malformed
    // request line) makes the rest of the send fail: what it answered is still read.
    s.send_all(bytes, deadline);
    std::string out;
    std::array<char, 16384> chunk{};
    for (;;) {
        const auto until = std::min(deadline, detail::clock::now() + quiet);
        const std::ptrdiff_t n = s.receive_until(chunk.data(), chunk.size(), until);
        if (n <= 0) return out;  // closed, or quiet for `quiet`, or the overall timeout
        out.append(chunk.data(), static_cast<std::size_t>(n));
        if (out.size() > max_raw_size) {
            throw client_error("tern::testing: raw(): the server sent more than 16 MiB");
        }
    }
}

std::uint16_t client::port() const noexcept { return impl_->port; }

void client::disconnect() noexcept { impl_->disconnect(); }

}  // namespace tern::testing
