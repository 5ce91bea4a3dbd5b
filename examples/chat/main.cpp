// A chat server: rooms over WebSocket, each message broadcast to the room's members.
//
//   chat [port] [--cert FILE --key FILE]     (default 8080; with the PEM files: HTTPS, wss://)
//
//   GET /                        the page (public/index.html): pick a name and a room, chat
//   GET /rooms                   {"rooms": [{"name": "lobby", "members": 2}, ...]}, by name
//   GET /ws/{room}?name=NAME     WebSocket. On connect the member gets the room's last 20
//                                messages, then every event of the room, each one JSON text:
//                                  {"type": "message", "room": R, "from": NAME, "text": T}
//                                  {"type": "join" | "leave", "room": R, "name": NAME,
//                                   "members": N}
//                                Each text message the member sends (at most 2,000 bytes)
//                                is broadcast to the room as a "message" event.
//
// A before filter guards the upgrade, as an app's authentication would: a room name that is
// not 1-32 of [A-Za-z0-9_-] or a name that is not 1-32 bytes of UTF-8 gets 400, and a browser
// page of another origin (Origin is not this server's own http://Host) gets 403, so a page
// on another site cannot open a chat as the user (cross-site WebSocket hijacking;
// docs/websocket.md). SIGINT/SIGTERM stop it: members get close 1001.
//
// The rooms and routes are in chat_app.cpp, so that tests/examples/test_chat.cpp runs them
// under the test kit (tern::testing); this file runs them on a port.

#include "chat_app.hpp"

#include <tern/tern.hpp>

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

int main(int argc, char** argv) {
    std::uint16_t port = 8080;
    std::string cert_file;
    std::string key_file;
    bool port_given = false;
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if ((arg == "--cert" || arg == "--key") && i + 1 < argc) {
            (arg == "--cert" ? cert_file : key_file) = argv[++i];
            continue;
        }
        const auto [end, ec] = std::from_chars(arg.data(), arg.data() + arg.size(), port);
        if (port_given || ec != std::errc{} || end != arg.data() + arg.size()) {
            std::fprintf(stderr, "usage: chat [port] [--cert FILE --key FILE]\n");
            return 2;
        }
        port_given = true;
    }
    if (cert_file.empty() != key_file.empty()) {
        std::fprintf(stderr, "chat: --cert and --key go together\n");
        return 2;
    }

    chat::rooms all;
    tern::app app;
    chat::add_routes(app, all);

    if (!cert_file.empty()) app.tls(cert_file, key_file);
    std::printf("chat on %s://127.0.0.1:%u/\n", cert_file.empty() ? "http" : "https",
                static_cast<unsigned>(port));
    std::fflush(stdout);
    app.listen(port);
}
