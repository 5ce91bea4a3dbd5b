// Snippets quoted by docs/*.md that are not whole programs, compiled in CI so the docs cannot
// drift from the API (tests/docs/check_snippets.py checks that the docs' text is here or in
// examples/). Each function holds the snippets of one page; none is called.
// clang-format off
#include <tern/client.hpp>
#include <tern/json.hpp>
#include <tern/openapi.hpp>
#include <tern/tern.hpp>

#include <pthread.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <system_error>
#include <string>
#include <string_view>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

namespace docs_openapi {
void get_user(tern::context& ctx) { ctx.text(std::string(ctx.path_param("id"))); }
void snippets(tern::app& app) {
app.get("/users/{id}", tern::documented(tern::api_doc()
                                            .summary("One user")
                                            .tag("users")
                                            .path_param<int>("id", "The user's id")
                                            .query_param<bool>("full", "With the history")
                                            .response(200, "The user", {{"type", "object"}})
                                            .error_response(404, "No such user"),
                                        get_user));
app.openapi("/openapi.json");
app.swagger_ui("/docs", "/openapi.json");
tern::openapi_info info;
info.title = "Users";
info.version = "2.0.0";
info.extra = {{"components", {{"schemas", {{"User", {{"type", "object"}}}}}}}};
app.openapi("/v2/openapi.json", info);
app.post("/upload", tern::body_limit(std::size_t{1} << 30,
                                     tern::documented(tern::api_doc().summary("Upload"), get_user)));
}
}  // namespace docs_openapi

namespace docs_threading {
std::string run_slow_query(std::string_view id) { return std::string(id); }
void snippets(tern::app& app) {
app.configure([](tern::config& c) { c.blocking.threads = 32; });  // default 16
app.get("/report", tern::blocking([](tern::context& ctx) {
    ctx.text(run_slow_query(ctx.query_param("id", "")));
}));
}
}  // namespace docs_threading

namespace docs_http2 {
void snippets() {
tern::app app;
app.tls("cert.pem", "key.pem");  // h2 by ALPN; h2c with prior knowledge needs no TLS
app.get("/", [](tern::context& ctx) { ctx.text(std::string(ctx.protocol())); });  // "HTTP/2"
app.listen(8443);
}
}  // namespace docs_http2

namespace docs_tls {
void snippets() {
tern::app app;
app.tls("cert.pem", "key.pem");   // the chain (server certificate first) and its key
app.get("/", [](tern::context& ctx) { ctx.text("hello over https"); });
app.listen(8443);                 // HTTPS on 8443; SIGHUP re-reads the two files
}
void more(tern::app& app, const std::string& other_key_password) {
tern::tls_config tls;
tls.certificates.push_back({.cert_file = "example.pem", .key_file = "example.key"});
tls.certificates.push_back({.cert_file = "other.pem", .key_file = "other.key",
                            .password = other_key_password});
app.tls(tls);
}
void mutual(tern::app& app) {
tern::tls_config tls;
tls.certificates.push_back({.cert_file = "server.pem", .key_file = "server.key"});
tls.client_certificates = tern::client_certificates::required;
tls.client_ca_file = "clients-ca.pem";
app.tls(tls);
app.get("/whoami", [](tern::context& ctx) { ctx.text(std::string(ctx.client_certificate())); });
}
void beside(tern::app& app) {
tern::tls_config tls;
tls.certificates.push_back({.cert_file = "cert.pem", .key_file = "key.pem"});
tls.http_port = 80;                       // beside the HTTPS port given to listen()
tls.http = tern::plain_http::redirect;    // the default; plain_http::serve serves the app
app.tls(tls);
app.listen(443);
}
}  // namespace docs_tls

namespace docs_limits {
void snippets() {
using namespace std::chrono_literals;
tern::app app;
app.timeouts({.header = 5s, .keep_alive = 15s});
app.max_body_size(1024 * 1024);
app.configure([](tern::config& c) {
    c.blocking.threads = 32;
    c.spool.directory = "/var/tmp/uploads";
});
// or, as plain data:
tern::config cfg;
cfg.timeouts.header = std::chrono::seconds(5);
cfg.limits.max_body_size = 1024 * 1024;
tern::app configured(cfg);
}
}  // namespace docs_limits

namespace docs_json {
void snippets(tern::app& app) {
app.configure([](tern::config& c) {
    c.limits.max_json_size = 256 * 1024;  // bytes of a body body_as parses; 413 over it (default 1 MiB)
    c.limits.max_json_depth = 64;         // nesting of arrays and objects; 400 deeper (default 512)
});
}
}  // namespace docs_json

namespace docs_routing {
void snippets(tern::app& app, const tern::handler& h) {
app.get("/", h);                       // exact: hash-table lookup
app.get("/users/{id}", h);             // one segment, ctx.path_param("id")
app.get("/files/<path>", h);           // the rest of the path, slashes included
app.get("/static/*", h);               // the rest of the path, not captured
app.get("/a/*/c", h);                  // * in the middle: exactly one segment
app.post("/users", h);                 // POST; and one setter per common method:
app.put("/users/{id}", h);             // PUT
app.patch("/users/{id}", h);           // PATCH
app.del("/users/{id}", h);             // DELETE (`delete` is a C++ keyword)
app.add("PROPFIND", "/dav/<path>", h); // any RFC 9110 method token
}
}  // namespace docs_routing

namespace docs_static_files {
void snippets(tern::app& app) {
app.static_files("public");                    // GET /css/site.css -> public/css/site.css

tern::static_files_config assets;
assets.hosted_path = "/assets";                // GET /assets/app.js -> build/app.js
assets.directory = "build";
assets.cache_control = "public, max-age=31536000, immutable";
assets.extra_mime_types = {{"glb", "model/gltf-binary"}};
app.static_files(assets);

tern::static_files_config spa;
spa.hosted_path = "/app";
spa.directory = "dist";
spa.spa_fallback = "index.html";   // GET /app/users/42 (a client-side route) -> dist/index.html
app.static_files(spa);
}
}  // namespace docs_static_files
namespace docs_errors {
void snippets(tern::app& app) {
app.before([](tern::context& ctx) { ctx.header("X-All", "yes"); });
app.before("/api/*", [](tern::context& ctx) { ctx.header("X-Api", "yes"); });
app.after([](tern::context& ctx) { ctx.header("X-Content-Type-Options", "nosniff"); });
}
}  // namespace docs_errors
namespace docs_logging {
void snippets(tern::app& app) {
app.request_logger([](const tern::context& ctx, std::chrono::nanoseconds took) {
    std::fprintf(stderr, "%d %s %lld us\n", ctx.status(), std::string(ctx.path()).c_str(),
                 static_cast<long long>(took.count() / 1000));
});
}
void request_ids(tern::app& app) {
app.request_ids();                    // X-Request-Id
app.request_ids("X-Correlation-Id");  // or another header
}
}  // namespace docs_logging
namespace docs_operations {
void metrics(tern::app& app) {
app.metrics("/metrics");  // GET /metrics: Prometheus text format 0.0.4
}
void proxies(tern::app& app) {
app.trusted_proxies({"127.0.0.1", "10.0.0.0/8", "::1", "fd00::/8"});  // they write X-Forwarded-For
app.trusted_proxies({"10.0.0.0/8"}, tern::forwarding_header::forwarded);  // they write Forwarded
}
}  // namespace docs_operations
namespace docs_shutdown {
void signals(tern::app& app) {
// Block SIGINT and SIGTERM before start(): tern's threads inherit the mask, so the
// signals wait for sigwait() below instead of killing the process.
sigset_t stop_signals;
sigemptyset(&stop_signals);
sigaddset(&stop_signals, SIGINT);
sigaddset(&stop_signals, SIGTERM);
pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

app.start("0.0.0.0", 8080);
// ... the program's own work, on this thread or others ...
int signal_number = 0;
sigwait(&stop_signals, &signal_number);
app.stop();  // drains as listen() would, then returns
}
void drain() {
tern::config cfg;
cfg.timeouts.drain = std::chrono::seconds(30);  // e.g. for long uploads
tern::app app(cfg);
}
void from_a_handler(tern::app& app) {
app.post("/admin/shutdown", [&app](tern::context& ctx) {
    app.stop();        // begins the stop and returns at once
    ctx.text("bye\n");  // this response still goes out, with Connection: close
});
}
}  // namespace docs_shutdown
namespace docs_async {
struct job_queue {
    void push(std::function<void()> fn) { fn(); }
};
job_queue queue;
struct row { std::string name; };
void lookup_user_async(std::string_view, std::function<void(std::optional<row>)> done) {
    done(row{"x"});
}
void snippets(tern::app& app) {
app.get("/users/{id}", [](tern::context& ctx) {
    auto reply = ctx.defer();  // the handler returns; the connection waits, no thread does
    lookup_user_async(ctx.path_param("id"), [reply](std::optional<row> user) {
        // Any thread: the fill runs later on the connection's own thread.
        reply.complete([user](tern::context& c) {
            if (!user) throw tern::http_error(404, "no such user");
            c.text(user->name);
        });
    });
});
app.get("/report", [](tern::context& ctx) {
    auto reply = ctx.defer();
    queue.push([reply] {
        try {
            auto text = std::string("expensive result");
            reply.complete([text](tern::context& c) { c.text(text); });
        } catch (...) {
            reply.fail(std::current_exception());  // mapped like a handler's exception
        }
    });
});
app.get("/poll", [](tern::context& ctx) {
    auto reply = ctx.defer();
    reply.on_cancel([] { /* the client left: stop the work */ });
});
app.get("/users/{id}", [](tern::context& ctx) -> tern::task {
    const std::string id(ctx.path_param("id"));
    auto user = co_await tern::callback_result<std::optional<row>>(
        [&](auto done) { lookup_user_async(id, done); });
    if (!user) throw tern::http_error(404, "no such user");
    co_await tern::sleep_for(std::chrono::milliseconds(10));
    const auto report = co_await tern::on_blocking_pool([] { return std::string("slow"); });
    ctx.text(user->name + " " + report);
});
}
}  // namespace docs_async
namespace docs_uploads {
std::string sha256_hex(int, std::string_view) { return {}; }
void snippets(tern::app& app) {
app.post("/upload",
         tern::body_limit(std::size_t{1} << 30, [](tern::context& ctx) -> tern::task {
             const int fd = ctx.body_fd();
             const auto bytes = ctx.body();
             const std::string digest =
                 co_await tern::on_blocking_pool([fd, bytes] { return sha256_hex(fd, bytes); });
             ctx.json_text("{\"bytes\": " + std::to_string(bytes.size()) + ", \"sha256\": \"" +
                           digest + "\"}");
         }));
}
struct sha256 {
    void update(std::string_view) {}
    std::string hex() const { return {}; }
};
bool authorised(const tern::context&) { return true; }
void streamed(tern::app& app) {
app.post("/hash", tern::streamed_body([](tern::context& ctx) -> tern::task {
    tern::body_reader body = ctx.body_reader();
    sha256 digest;
    while (std::optional<std::string_view> piece = co_await body.next()) {
        digest.update(*piece);  // valid until the next call of next()
    }
    ctx.text(digest.hex());
}));
app.post("/private", tern::streamed_body([](tern::context& ctx) -> tern::task {
    if (!authorised(ctx)) {
        ctx.status(401).text("who are you?");  // the body is never invited
        co_return;
    }
    tern::body_reader body = ctx.body_reader();
    try {
        std::size_t bytes = 0;
        while (auto piece = co_await body.next()) bytes += piece->size();
        ctx.text(std::to_string(bytes));
    } catch (const tern::body_error& e) {
        // e.reason(): client_left, too_large (tern answers 413), idle (408), stopped
        ctx.status(500).text(e.what());
    }
}));
app.post("/count", tern::streamed_body([](tern::context& ctx) {
    auto reply = ctx.defer();
    auto body = std::make_shared<tern::body_reader>(ctx.body_reader());
    auto bytes = std::make_shared<std::size_t>(0);
    auto step = std::make_shared<tern::body_reader::piece_fn>();
    *step = [reply, body, bytes, step](std::optional<std::string_view> piece, std::error_code ec) {
        if (piece) {
            *bytes += piece->size();
            body->next(*step);  // asking lets the next piece in
            return;
        }
        reply.complete([n = *bytes, ec](tern::context& c) {
            if (ec) c.status(500);  // ec == tern::body_failure::client_left, ...
            c.text(ec ? ec.message() : std::to_string(n));
        });
        *step = nullptr;  // the callback held itself: let it go
    };
    body->next(*step);
}));
app.post("/upload-stream", tern::body_limit(std::size_t{1} << 34, tern::streamed_body(
    [](tern::context& ctx) -> tern::task {
        tern::body_reader body = ctx.body_reader();
        std::size_t bytes = 0;
        while (auto piece = co_await body.next()) bytes += piece->size();
        ctx.text(std::to_string(bytes));
    })));
}
void multipart(tern::app& app) {
app.post("/files", tern::body_limit(std::size_t{1} << 32, tern::streamed_body(
    [](tern::context& ctx) -> tern::task {
        tern::multipart_reader parts(ctx, {.max_file_size = std::size_t{1} << 31});
        std::string report;
        while (std::optional<tern::multipart_part> part = co_await parts.next_part()) {
            sha256 digest;  // or a file, a socket, an upstream: any sink
            while (auto piece = co_await parts.next_data()) {
                digest.update(*piece);  // valid until the next call on parts
            }
            report += part->field + " " + part->filename + " " + digest.hex() + "\n";
        }
        ctx.text(report);  // a malformed body was answered 400, a limit passed 413
    })));
app.post("/avatar", tern::streamed_body([](tern::context& ctx) -> tern::task {
    tern::multipart_reader parts(ctx, {.max_file_size = 1 << 20, .max_parts = 4});
    try {
        std::size_t bytes = 0;
        while (auto part = co_await parts.next_part()) {
            if (!part->is_file) continue;  // next_part() skips what is left of a part
            while (auto piece = co_await parts.next_data()) bytes += piece->size();
        }
        ctx.text(std::to_string(bytes));
    } catch (const tern::multipart_error& e) {
        // e.reason(): malformed (e.status() 400), too_many_parts, header_too_large,
        // file_too_large (413); e.what() says what was wrong
        ctx.status(e.status()).text(std::string("upload refused: ") + e.what());
    }
}));
}
}  // namespace docs_uploads
namespace docs_streaming {
void snippets(tern::app& app) {
app.get("/log", [](tern::context& ctx) {
    ctx.content_type("text/plain; charset=utf-8");
    auto out = ctx.stream();
    std::thread([out] {
        for (int i = 0; i < 10 && !out.closed(); ++i) {
            out.write("line " + std::to_string(i) + "\n");
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        out.end();
    }).detach();
});
}
}  // namespace docs_streaming
namespace docs_sse {
void snippets(tern::app& app) {
tern::sse_clients everyone;
app.sse("/events", [&everyone](tern::context&, tern::sse_client client) {
    client.send("welcome");
    everyone.add(client);  // kept: the stream stays open
});
// Any thread, any time:
everyone.broadcast("{\"price\": 42}", "quote");
app.configure([](tern::config& c) { c.streams.sse_keep_alive = std::chrono::seconds(15); });  // the default
}
}  // namespace docs_sse
namespace docs_websocket {
void snippets(tern::app& app) {
tern::ws_clients lobby;
app.ws("/chat/{room}", [&lobby](tern::ws_handlers& ws) {
    ws.on_connect([&lobby](tern::ws_connection& c) {
        lobby.add(c);
        c.send("welcome to " + std::string(c.path_param("room")));
    });
    ws.on_message([&lobby](tern::ws_connection&, std::string_view text) {
        lobby.broadcast(text);
    });
    ws.on_close([](tern::ws_connection& c, int code, std::string_view reason) {
        std::printf("%llu left: %d %.*s\n", static_cast<unsigned long long>(c.id()), code,
                    static_cast<int>(reason.size()), reason.data());
    });
    ws.allowed_origins({"https://chat.example"});
});
}
}  // namespace docs_websocket
namespace docs_deploy {
void snippets(tern::app& app) {
tern::health_config health;
health.grace = std::chrono::seconds(5);  // the balancer's check interval × its threshold
app.health(health);                      // GET /ready and GET /live
}
void activation(tern::app& app) {
if (const auto fds = tern::listen_fds(); !fds.empty()) {
    app.listen_fd(fds[0]);  // the socket systemd passed (LISTEN_FDS, fd 3)
} else {
    app.listen(8080);
}
}
void proxied(tern::app& app) {
app.proxy_protocol(true);  // every connection starts with a PROXY v1 or v2 header
}
}  // namespace docs_deploy


namespace docs_validation {
struct todo {
    std::string title;
    int priority = 0;
};
void from_json(const tern::json& j, todo& t) {
    j.at("title").get_to(t.title);
    j.at("priority").get_to(t.priority);
}
struct todo_store {
    void add(const todo&) {}
};
void snippets(tern::context& ctx, todo_store& store) {
const int n = ctx.query_param_as<int>("n")
                  .check([](int v) { return v > 0; }, "must be positive")
                  .get();
(void)n;
auto body = ctx.body_validator<todo>()
                .check("title", [](const todo& t) { return !t.title.empty(); }, "must not be empty")
                .check("priority", [](const todo& t) { return t.priority <= 5; }, "must be at most 5");
tern::require_valid(body);
store.add(body.get());
}
void mapper(tern::app& app) {
app.exception<tern::validation_error>([](tern::validation_error& e, tern::context& ctx) {
    std::string out;
    for (const auto& [field, messages] : e.errors()) {
        out += field + "=" + std::to_string(messages.size()) + ";";
    }
    ctx.status(422).text(out);
});
}
}  // namespace docs_validation

namespace docs_errors_cause {
void snippets(tern::app& app) {
app.error(404, [](tern::context& ctx) {
    if (ctx.error_cause() == tern::error_cause::no_route) {
        ctx.json({{"error", "no route for " + std::string(ctx.path())}});
    }
});
}
}  // namespace docs_errors_cause
namespace docs_sessions {
void snippets(tern::app& app) {
app.sessions();  // the safe defaults below

app.post("/login", [](tern::context& ctx) {
    const auto user = ctx.form_param("user", "");
    if (user.empty()) throw tern::http_error(401, "who are you?");
    auto& session = ctx.session();
    session.regenerate();  // a new id at log-in: an id planted before it is useless
    session.set("user", user);
    ctx.text("welcome");
});
app.get("/me", [](tern::context& ctx) {
    ctx.text(ctx.session().get("user", "anonymous"));
});
app.post("/logout", [](tern::context& ctx) {
    ctx.session().invalidate();  // data gone, id dead, cookie cleared (Max-Age=0)
    ctx.text("bye");
});
}
void settings(tern::app& app) {
tern::session_config sessions;
sessions.idle_timeout = std::chrono::minutes(15);
sessions.absolute_timeout = std::chrono::hours(8);
sessions.secure = true;  // TLS ends at the proxy in front of this server
app.sessions(sessions);
}
class my_store final : public tern::session_store {
public:
    std::optional<tern::session_data> load(std::string_view id) override {
        std::lock_guard lock(mutex_);
        auto it = sessions_.find(std::string(id));
        if (it == sessions_.end()) return std::nullopt;
        return it->second;
    }
    void save(std::string_view id, const tern::session_data& data,
              std::chrono::system_clock::time_point /*expires: a TTL for Redis*/) override {
        std::lock_guard lock(mutex_);
        sessions_[std::string(id)] = data;
    }
    void erase(std::string_view id) override {
        std::lock_guard lock(mutex_);
        sessions_.erase(std::string(id));
    }

private:
    std::mutex mutex_;
    std::map<std::string, tern::session_data> sessions_;
};
void store(tern::app& app) {
tern::session_config with_store;
with_store.store = std::make_shared<my_store>();
app.sessions(with_store);
}
void signed_cookies(tern::app& app, const std::string& secret_from_environment) {
app.cookie_secret(secret_from_environment);  // >= 32 random bytes: openssl rand -base64 32

app.get("/theme", [](tern::context& ctx) {
    ctx.set_signed_cookie("theme", ctx.query_param("v", "light"));
    ctx.text("saved");
});
app.get("/page", [](tern::context& ctx) {
    const auto theme = ctx.signed_cookie("theme");  // std::nullopt when absent or forged
    ctx.text(theme.value_or("light"));
});
}
}  // namespace docs_sessions
namespace docs_client {
void snippets(tern::app& app) {
tern::client upstream;  // copies share its connections; keep one per app
app.get("/weather", [upstream](tern::context& ctx) -> tern::task {
    auto res = co_await upstream.get("http://127.0.0.1:9000/today");
    ctx.status(res.status).text(res.body);
});
app.get("/weather-callback", [upstream](tern::context& ctx) {
    auto reply = ctx.defer();
    upstream.fetch(reply, {.url = "http://127.0.0.1:9000/today"}, [reply](tern::client_result r) {
        reply.complete([r = std::move(r)](tern::context& c) {
            if (r) {
                c.text(r.response.body);
            } else {
                // r.failure says why (a tern::client_failure): a timeout is a 504.
                c.status(r.failure == tern::client_failure::timed_out ? 504 : 502).text(r.message);
            }
        });
    });
});
app.get("/weather-blocking", tern::blocking([upstream](tern::context& ctx) {
    ctx.text(upstream.fetch_blocking({.url = "http://127.0.0.1:9000/today"}).body);
}));
app.post("/orders", [upstream](tern::context& ctx) -> tern::task {
    tern::client_request order{.method = "POST",
                               .url = "https://orders.internal/v1/orders",
                               .headers = {{"Content-Type", "application/json"}},
                               .body = std::string(ctx.body())};
    try {
        auto res = co_await upstream.fetch(order);
        ctx.status(res.status).text(res.body);
    } catch (const tern::client_error& e) {
        ctx.status(e.why() == tern::client_failure::timed_out ? 504 : 502).text(e.what());
    }
});
app.put("/files/*", tern::streamed_body([upstream](tern::context& ctx) {
    auto reply = ctx.defer();
    tern::client_request put{.method = "PUT", .url = "http://127.0.0.1:9000/store"};
    put.body_stream = ctx.body_reader();  // read as the upstream takes it
    if (auto length = ctx.header("content-length")) {
        put.body_stream_size = std::stoull(std::string(*length));  // else: sent chunked
    }
    upstream.fetch(reply, put, [reply](tern::client_result r) {
        reply.complete([r = std::move(r)](tern::context& c) {
            c.status(r ? r.response.status : 502).text(r ? r.response.body : r.message);
        });
    });
}));
}
void options() {
tern::relay_options bounded;
bounded.max_body = std::uint64_t{1} << 30;  // 1 GiB; 0 (the default): no limit

tern::client_options o;
o.connect_timeout = std::chrono::seconds(2);
o.response_timeout = std::chrono::seconds(10);
o.max_response_body = 1024 * 1024;
o.ca_file = "/etc/myorg/internal-ca.pem";  // HTTPS to services signed by your own CA
o.max_redirects = 3;                       // off (0) by default
tern::client upstream(o);
}
}  // namespace docs_client
namespace docs_rate_limits {
void snippets(tern::app& app) {
using namespace std::chrono_literals;
app.before("/limited/*", tern::rate_limit({.requests = 3, .per = 1h}));
app.before("/by-key", tern::rate_limit({.requests = 1,
                                        .per = 1h,
                                        .key = [](tern::context& ctx) {
                                            return std::string(
                                                ctx.header("x-api-key").value_or(""));
                                        },
                                        .name = "keys"}));
}
}  // namespace docs_rate_limits

namespace docs_request_timeouts {
void snippets(tern::app& app) {
app.before("/reports/*", tern::request_timeout(std::chrono::seconds(2)));
app.before("/upstream/*", tern::request_timeout(std::chrono::milliseconds(500), 504));
app.error(504, [](tern::context& ctx) { ctx.text("the upstream took too long"); });
}
}  // namespace docs_request_timeouts

namespace docs_trailers {
void snippets(tern::app& app) {
app.post("/upload-checked", [](tern::context& ctx) {
    // Read with the body, before the handler runs: complete by now.
    const auto sum = ctx.trailer("x-checksum");
    std::string names;
    for (const auto& field : ctx.trailers()) names += std::string(field.name) + " ";
    ctx.text(sum ? "checksum " + std::string(*sum) + ", trailers: " + names : "no checksum");
});
app.get("/report", [](tern::context& ctx) {
    ctx.text("the report");
    ctx.trailer("x-rows", "42");  // replaces an earlier x-rows
});
app.get("/report/stream", [](tern::context& ctx) {
    auto out = ctx.stream();
    out.write("row 1\n");
    out.trailer("x-rows", "1");   // set any time before end(), from any thread
    out.end();                    // the trailers go out after the last byte
});
}
}  // namespace docs_trailers

namespace docs_loop_work {
std::string current_prices_json() { return "{}"; }
std::string build_report() { return "report"; }
std::string fetch_rates_json() { return "{}"; }
thread_local std::shared_ptr<const std::string> loop_rates;  // one per loop thread
void snippets(tern::app& app) {
tern::sse_clients watchers;
app.sse("/prices", [&watchers](tern::context&, tern::sse_client client) {
    watchers.add(std::move(client));
});
// Every second, on one of the app's loops, from one interval after the start until the stop.
tern::repeating_task ticker = app.every(std::chrono::seconds(1), [&watchers] {
    watchers.broadcast(current_prices_json());
});
// From any thread: runs soon on one of the loops (false once the app has begun to stop).
std::thread([&app] {
    const std::string report = build_report();  // slow: on this thread, not on a loop
    app.post([report] { std::printf("report ready: %zu bytes\n", report.size()); });
}).detach();
}
void handle(tern::app& app) {
tern::repeating_task refresh = app.every(std::chrono::minutes(1), [] { /* ... */ });
// ...
refresh.cancel();       // any thread; idempotent
if (!refresh.active()) std::puts("no more refreshes");
}
void per_loop(tern::app& app) {
app.get("/rates", [](tern::context& ctx) {
    ctx.json_text(loop_rates ? *loop_rates : std::string("{}"));
});
std::thread([&app] {
    auto fresh = std::make_shared<const std::string>(fetch_rates_json());  // on this thread
    app.post_all([fresh] { loop_rates = fresh; });  // each loop takes the new value
}).detach();
}
}  // namespace docs_loop_work

// clang-format on
