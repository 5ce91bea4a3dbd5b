#include <tern/testing.hpp>

#include <utility>

namespace tern::testing {

server::server(tern::app& app) : app_(app) { app_.start("127.0.0.1", 0); }

server::~server() {
    try {
        app_.stop();
    } catch (...) {
        // A destructor must not throw; stop() reports nothing a test could act on here.
    }
}

std::uint16_t server::port() const noexcept { return app_.port(); }

bool server::serves_tls() const noexcept { return app_.settings().tls.has_value(); }

client server::make_client() const { return make_client(client_options{}); }

client server::make_client(client_options options) const {
    options.tls = options.tls || serves_tls();
    return client(port(), options);
}

sse_reader server::sse(std::string target, sse_options options) const {
    options.tls = options.tls || serves_tls();
    return sse_reader(port(), std::move(target), std::move(options));
}

ws_client server::ws(std::string target, ws_options options) const {
    options.tls = options.tls || serves_tls();
    return ws_client(port(), std::move(target), std::move(options));
}

tern::app& server::app() const noexcept { return app_; }

void server::stop() { app_.stop(); }

void test(tern::app& app, const std::function<void(server&, client&)>& fn) {
    server running(app);
    client http = running.make_client();
    fn(running, http);
}

}  // namespace tern::testing
