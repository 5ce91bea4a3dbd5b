// cpp-httplib peer (Debian's libcpp-httplib-dev). cpp-httplib serves each connection on a
// thread of its pool (blocking I/O), so it cannot be made single-threaded without serving one
// connection at a time; its default pool runs, pinned with everything else to the server core.
//   GET /            -> 200 text/plain "Hello, World!"
//   POST /login      -> 200 application/json, the request body echoed
//   GET /static/...  -> files under STATIC_DIR (when given)
//
//   httplib PORT [STATIC_DIR]   (listens on 127.0.0.1:PORT)

#include <httplib.h>

#include <cstdlib>
#include <iostream>

int main(int argc, char** argv) {
    if (argc < 2) {
        std::cerr << "usage: httplib PORT [STATIC_DIR]\n";
        return 2;
    }
    httplib::Server server;
    // Its defaults close a keep-alive connection after 5 requests and leave Nagle on (headers
    // and body go out in two writes, so each answer waits for a delayed ACK); the other
    // peers do neither.
    server.set_keep_alive_max_count(1000000000);
    server.set_tcp_nodelay(true);
    server.Get("/", [](const httplib::Request&, httplib::Response& res) {
        res.set_content("Hello, World!", "text/plain");
    });
    server.Post("/login", [](const httplib::Request& req, httplib::Response& res) {
        res.set_content(req.body, "application/json");
    });
    if (argc > 2 && !server.set_mount_point("/static", argv[2])) {
        std::cerr << "httplib: cannot serve " << argv[2] << "\n";
        return 1;
    }
    if (!server.listen("127.0.0.1", std::atoi(argv[1]))) {
        std::cerr << "httplib: cannot listen on port " << argv[1] << "\n";
        return 1;
    }
}
