// Boost.Beast peer: asynchronous, one io_context run by one thread (or THREADS threads).
//   GET /        -> 200 text/plain "Hello, World!"
//   POST /login  -> 200 application/json, the request body echoed
//   anything else -> 404
//
//   beast PORT [THREADS]   (listens on 127.0.0.1:PORT)

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <thread>
#include <vector>

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

class session : public std::enable_shared_from_this<session> {
public:
    explicit session(tcp::socket socket) : socket_(std::move(socket)) {}

    void start() { read(); }

private:
    void read() {
        req_ = {};
        http::async_read(
            socket_, buffer_, req_,
            [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_read(ec); });
    }

    void on_read(beast::error_code ec) {
        if (ec) {
            beast::error_code ignored;
            socket_.shutdown(tcp::socket::shutdown_send, ignored);
            return;
        }
        res_ = {};
        res_.version(req_.version());
        res_.set(http::field::server, "beast");
        if (req_.method() == http::verb::get && req_.target() == "/") {
            res_.result(http::status::ok);
            res_.set(http::field::content_type, "text/plain");
            res_.body() = "Hello, World!";
        } else if (req_.method() == http::verb::post && req_.target() == "/login") {
            res_.result(http::status::ok);
            res_.set(http::field::content_type, "application/json");
            res_.body() = std::move(req_.body());
        } else {
            res_.result(http::status::not_found);
            res_.set(http::field::content_type, "text/plain");
            res_.body() = "Not Found";
        }
        res_.keep_alive(req_.keep_alive());
        res_.prepare_payload();
        http::async_write(socket_, res_,
                          [self = shared_from_this()](beast::error_code wec, std::size_t) {
                              self->on_write(wec);
                          });
    }

    void on_write(beast::error_code ec) {
        if (ec) return;
        if (!res_.keep_alive()) {
            beast::error_code ignored;
            socket_.shutdown(tcp::socket::shutdown_send, ignored);
            return;
        }
        read();
    }

    tcp::socket socket_;
    beast::flat_buffer buffer_;
    http::request<http::string_body> req_;
    http::response<http::string_body> res_;
};

void accept(tcp::acceptor& acceptor) {
    acceptor.async_accept([&acceptor](beast::error_code ec, tcp::socket socket) {
        if (!ec) {
            socket.set_option(tcp::no_delay(true), ec);
            std::make_shared<session>(std::move(socket))->start();
        }
        accept(acceptor);
    });
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::cerr << "usage: beast PORT [THREADS]\n";
        return 2;
    }
    const auto port = static_cast<unsigned short>(std::atoi(argv[1]));
    const int threads = argc > 2 ? std::max(1, std::atoi(argv[2])) : 1;
    asio::io_context ioc{threads};
    tcp::acceptor acceptor(ioc);
    const tcp::endpoint where(asio::ip::make_address("127.0.0.1"), port);
    acceptor.open(where.protocol());
    acceptor.set_option(asio::socket_base::reuse_address(true));
    acceptor.bind(where);
    acceptor.listen(asio::socket_base::max_listen_connections);
    accept(acceptor);
    // Each session has one operation in flight at a time, so extra threads need no strand.
    std::vector<std::thread> more;
    for (int i = 1; i < threads; ++i) more.emplace_back([&ioc] { ioc.run(); });
    ioc.run();
    for (auto& t : more) t.join();
}
