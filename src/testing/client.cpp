#include <tern/testing.hpp>

#include "testing/cookie_jar.hpp"
#include "testing/response_reader.hpp"
#include "testing/socket.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <utility>

namespace tern::testing {

namespace {

// raw() reads at most this much.
constexpr std::size_t max_raw_size = 16 * 1024 * 1024;

bool has_field(const header_list& fields, std::string_view name) {
    return std::any_of(fields.begin(), fields.end(),
                       [name](const testing::header& h) { return detail::iequals(h.name, name); });
}

void append_field(std::string& out, std::string_view name, std::string_view value) {
    out.append(name).append(": ").append(value).append("\r\n");
}

}  // namespace

struct client::impl {
    std::uint16_t port;
    std::chrono::milliseconds timeout{10'000};
    header_list defaults;
    detail::cookie_jar jar;
    std::optional<detail::socket> connection;
    std::string buffer;  // received bytes not yet consumed

    // The request's bytes: request line, Host, defaults, extra fields (which win over the
    // defaults of the same name), cookies, framing, body.
    std::string serialize(std::string_view method, std::string_view target, std::string_view body,
                          const header_list& extra) {
        std::string out;
        out.append(method).append(" ").append(target).append(" HTTP/1.1\r\n");
        if (!has_field(extra, "Host")) {
            append_field(out, "Host", "127.0.0.1:" + std::to_string(port));
        }
        for (const testing::header& h : defaults) {
            if (!has_field(extra, h.name)) append_field(out, h.name, h.value);
        }
        for (const testing::header& h : extra) append_field(out, h.name, h.value);
        if (const std::string cookies = jar.header_for(target); !cookies.empty()) {
            append_field(out, "Cookie", cookies);
        }
        const bool body_method = method == "POST" || method == "PUT" || method == "PATCH";
        if ((!body.empty() || body_method) && !has_field(extra, "Content-Length") &&
            !has_field(extra, "Transfer-Encoding")) {
            append_field(out, "Content-Length", std::to_string(body.size()));
        }
        out += "\r\n";
        out += body;
        return out;
    }

    response call(std::string_view method, std::string_view target, std::string_view body,
                  const header_list& extra) {
        const std::string describe = std::string(method) + " " + std::string(target);
        const std::string bytes = serialize(method, target, body, extra);
        const auto deadline = detail::clock::now() + timeout;
        try {
            // A keep-alive connection the server has closed meanwhile (idle timeout, stop,
            // max_requests_per_connection) is replaced, and a request it dropped unanswered
            // is sent once more on a new connection, as browsers do.
            for (int attempt = 0;; ++attempt) {
                bool reused = connection.has_value();
                // Bytes left over after the last response were sent unasked: not a
                // connection to trust with the next request either.
                if (reused && (!buffer.empty() || !connection->idle_and_open())) {
                    disconnect();
                    reused = false;
                }
                if (!connection) connection.emplace(port, deadline);
                try {
                    if (!connection->send_all(bytes, deadline))
                        throw detail::closed_before_response{};
                    detail::read_result result =
                        detail::read_response(*connection, buffer, method, deadline);
                    if (!result.keep_alive) disconnect();
                    for (const std::string_view cookie :
                         result.response.header_values("Set-Cookie")) {
                        jar.store(cookie, target);
                    }
                    return std::move(result.response);
                } catch (const detail::closed_before_response&) {
                    disconnect();
                    if (!reused || attempt > 0) {
                        throw client_error("the server closed the connection without answering");
                    }
                }
            }
        } catch (const timeout_error& e) {
            disconnect();
            throw timeout_error("tern::testing: " + describe + ": " + e.what() + " (" +
                                std::to_string(timeout.count()) + " ms)");
        } catch (const client_error& e) {
            disconnect();
            throw client_error("tern::testing: " + describe + ": " + e.what());
        }
    }

    void disconnect() noexcept {
        connection.reset();
        buffer.clear();
    }
};

client::client(std::uint16_t port) : impl_(std::make_unique<impl>()) { impl_->port = port; }
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
    return impl_->call("GET", target, {}, extra);
}

response client::head(std::string_view target, const header_list& extra) {
    return impl_->call("HEAD", target, {}, extra);
}

response client::del(std::string_view target, const header_list& extra) {
    return impl_->call("DELETE", target, {}, extra);
}

namespace {

header_list with_content_type(const header_list& extra, std::string content_type) {
    header_list fields;
    fields.reserve(extra.size() + 1);
    if (!has_field(extra, "Content-Type"))
        fields.push_back({"Content-Type", std::move(content_type)});
    fields.insert(fields.end(), extra.begin(), extra.end());
    return fields;
}

}  // namespace

response client::post(std::string_view target, std::string_view body, std::string content_type,
                      const header_list& extra) {
    return impl_->call("POST", target, body, with_content_type(extra, std::move(content_type)));
}

response client::put(std::string_view target, std::string_view body, std::string content_type,
                     const header_list& extra) {
    return impl_->call("PUT", target, body, with_content_type(extra, std::move(content_type)));
}

response client::patch(std::string_view target, std::string_view body, std::string content_type,
                       const header_list& extra) {
    return impl_->call("PATCH", target, body, with_content_type(extra, std::move(content_type)));
}

response client::request(std::string_view method, std::string_view target, std::string_view body,
                         const header_list& extra) {
    return impl_->call(method, target, body, extra);
}

std::string client::raw(std::string_view bytes, std::chrono::milliseconds quiet) {
    const auto deadline = detail::clock::now() + impl_->timeout;
    detail::socket s(impl_->port, deadline);
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
