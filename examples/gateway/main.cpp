// A small reverse proxy on tern::client (docs/client.md): a request to /api/REST goes to
// /REST (same method, query, headers and body) on the upstreams in turn, with a request id
// and the forwarding fields of its own (the client's are dropped: it is the edge). Bodies pass
// through piece by piece, never held whole nor spooled: the upload is read from the client as
// the upstream takes it (client_request::body_stream), and the answer is relayed into a
// stream paced by the client's reads, whole whatever its size. 502 when no upstream answers,
// 504 past the timeout.
//
//     gateway PORT --upstream http://HOST:PORT [--upstream ...] [--timeout MS]

#include <tern/client.hpp>
#include <tern/tern.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

constexpr const char* usage =
    "usage: gateway PORT --upstream http://HOST:PORT [--upstream ...] [--timeout MS]\n";

bool iequals(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               const auto lower = [](char c) {
                   return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
               };
               return lower(x) == lower(y);
           });
}

// Fields that describe one hop, not the message (RFC 9110 7.6.1), and those tern or the
// client write themselves.
bool hop_by_hop(std::string_view name) {
    static constexpr std::string_view fields[] = {
        "connection", "keep-alive",     "proxy-connection",
        "te",         "trailer",        "transfer-encoding",
        "upgrade",    "content-length", "host",
        "expect",     "date",           "server"};
    return std::any_of(std::begin(fields), std::end(fields),
                       [name](std::string_view f) { return iequals(name, f); });
}

// Fields that say who the client is and how it came, and the request id: the gateway is the
// first hop it trusts, so what a client wrote there is dropped and the gateway's own sent
// (an upstream that trusts X-Forwarded-For would otherwise take the client's word for its
// address; RFC 7239 8.1).
bool forwarding(std::string_view name) {
    static constexpr std::string_view fields[] = {"x-forwarded-for",  "x-forwarded-proto",
                                                  "x-forwarded-host", "forwarded",
                                                  "x-real-ip",        "x-request-id"};
    return std::any_of(std::begin(fields), std::end(fields),
                       [name](std::string_view f) { return iequals(name, f); });
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

// The field names the client's Connection fields list: a proxy removes those fields before
// forwarding the message (RFC 9110 7.6.1).
std::vector<std::string> connection_options(const tern::context& ctx) {
    std::vector<std::string> names;
    for (const auto& h : ctx.headers()) {
        if (!iequals(h.name, "connection")) continue;
        std::string_view rest = h.value;
        while (!rest.empty()) {
            const auto comma = rest.find(',');
            const auto item = trim(rest.substr(0, comma));
            if (!item.empty()) names.emplace_back(item);
            rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
        }
    }
    return names;
}

bool listed(const std::vector<std::string>& names, std::string_view name) {
    return std::any_of(names.begin(), names.end(),
                       [name](const std::string& n) { return iequals(n, name); });
}

// A quoted-string (RFC 9110 5.6.4), for Forwarded's values: an address with colons and a
// host with a port are not tokens.
std::string quoted(std::string_view value) {
    std::string out = "\"";
    for (const char c : value) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + '"';
}

struct settings {
    std::uint16_t port = 0;
    std::vector<std::string> upstreams;  // "http://host:port", no trailing slash
    std::chrono::milliseconds timeout{30'000};
};

bool parse(int argc, char** argv, settings& s) {
    if (argc < 2) return false;
    const int port = std::atoi(argv[1]);
    if (port <= 0 || port > 65535) return false;
    s.port = static_cast<std::uint16_t>(port);
    for (int i = 2; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (i + 1 >= argc) return false;
        if (arg == "--upstream") {
            std::string u = argv[++i];
            while (!u.empty() && u.back() == '/') u.pop_back();
            if (u.rfind("http://", 0) != 0 && u.rfind("https://", 0) != 0) return false;
            s.upstreams.push_back(u);
        } else if (arg == "--timeout") {
            const long ms = std::atol(argv[++i]);
            if (ms <= 0) return false;
            s.timeout = std::chrono::milliseconds(ms);
        } else {
            return false;
        }
    }
    return !s.upstreams.empty();
}

class gateway {
public:
    explicit gateway(const settings& s) : upstreams_(s.upstreams) {
        tern::client_options o;
        o.response_timeout = s.timeout;
        o.read_timeout = s.timeout;
        client_ = tern::client(o);
    }

    void serve(tern::context& ctx) {
        auto reply = ctx.defer();
        auto request = std::make_shared<tern::client_request>();
        request->method = std::string(ctx.method());
        std::string target(ctx.path().substr(4));  // "/api/x" -> "/x", as sent
        if (target.empty()) target = "/";
        if (!ctx.query_string().empty()) target += "?" + std::string(ctx.query_string());
        const auto named = connection_options(ctx);
        for (const auto& h : ctx.headers()) {
            if (hop_by_hop(h.name) || forwarding(h.name) || listed(named, h.name)) continue;
            request->headers.emplace_back(std::string(h.name), std::string(h.value));
        }
        const std::string client = ctx.peer_ip();
        const std::string proto(ctx.scheme());
        const std::string host(ctx.header("host").value_or(""));
        request->headers.emplace_back("X-Forwarded-For", client);
        request->headers.emplace_back("X-Forwarded-Proto", proto);
        request->headers.emplace_back("X-Real-IP", client);
        // RFC 7239 4: an IPv6 address in brackets, and every value quoted.
        std::string forwarded =
            "for=" + quoted(client.find(':') == std::string::npos ? client : "[" + client + "]") +
            ";proto=" + proto;
        if (!host.empty()) {
            request->headers.emplace_back("X-Forwarded-Host", host);
            forwarded += ";host=" + quoted(host);
        }
        request->headers.emplace_back("Forwarded", forwarded);
        if (!ctx.request_id().empty()) {
            request->headers.emplace_back("X-Request-Id", std::string(ctx.request_id()));
        }
        // The body goes on piece by piece as the upstream takes it: sized as the client sized
        // it, chunked when the client sent it chunked (or without a length over HTTP/2).
        const auto length = ctx.header("content-length");
        if (length) {
            request->body_stream = ctx.body_reader();
            request->body_stream_size = std::strtoull(std::string(*length).c_str(), nullptr, 10);
        } else if (ctx.header("transfer-encoding") || ctx.method() == "POST" ||
                   ctx.method() == "PUT" || ctx.method() == "PATCH") {
            request->body_stream = ctx.body_reader();
        }
        try_upstream(reply, request, std::move(target), next_.fetch_add(1), 0);
    }

private:
    // Sends the request to upstream `first + tried`; on a failure before anything was
    // sent (no connection, so no body byte was taken from the client), the next one, until
    // each was tried once. Any other failure before the head: 502 (504 past the timeout).
    void try_upstream(const tern::deferred& reply,
                      const std::shared_ptr<tern::client_request>& request, std::string target,
                      std::size_t first, std::size_t tried) {
        tern::client_request req = *request;
        req.url = upstreams_[(first + tried) % upstreams_.size()] + target;
        tern::relay_options relayed;
        relayed.drop_headers = {"server"};  // the client talks to this gateway
        // The answer is relayed whole, whatever its size (relay_options::max_body: 0).
        client_.relay(
            reply, std::move(req),
            [this, reply, request, target, first, tried](const tern::client_result& r,
                                                         bool answered) {
                if (answered) return;  // the upstream's head went out: its body ends the answer
                const bool unreachable = r.failure == tern::client_failure::connect_failed ||
                                         r.failure == tern::client_failure::resolve_failed;
                if (unreachable && tried + 1 < upstreams_.size()) {
                    try_upstream(reply, request, target, first, tried + 1);
                    return;
                }
                const int status = r.failure == tern::client_failure::timed_out ? 504 : 502;
                std::fprintf(stderr, "gateway: %s\n", r.message.c_str());
                reply.complete([status](tern::context& cx) {
                    cx.status(status).text(status == 504 ? "gateway timeout\n" : "bad gateway\n");
                });
            },
            relayed);
    }

    std::vector<std::string> upstreams_;
    tern::client client_;
    std::atomic<std::size_t> next_{0};
};

}  // namespace

int main(int argc, char** argv) {
    settings s;
    if (!parse(argc, argv, s)) {
        std::fputs(usage, stderr);
        return 2;
    }
    gateway g(s);
    tern::app app;
    app.request_ids();
    // Uploads up to 64 GiB pass: read as the upstream takes them, they cost no memory or
    // disk by their size.
    app.max_body_size(std::size_t{64} << 30);
    for (const char* method : {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}) {
        app.add(method, "/api/*", tern::streamed_body([&g](tern::context& ctx) { g.serve(ctx); }));
        app.add(method, "/api", tern::streamed_body([&g](tern::context& ctx) { g.serve(ctx); }));
    }
    std::printf("gateway on :%u, %zu upstream(s)\n", static_cast<unsigned>(s.port),
                s.upstreams.size());
    std::fflush(stdout);
    app.listen(s.port);
    return 0;
}
