#pragma once
// The chat example's rooms and the routes, filter and settings that serve them. main.cpp
// runs them on a port (with its command line's TLS); tests/examples/test_chat.cpp runs them
// under the test kit (tern::testing). What the routes do is in main.cpp's header comment.

#include <tern/json.hpp>
#include <tern/tern.hpp>

#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace chat {

class room;  // one room's members and last messages (chat_app.cpp)

// Every room by name; a room is made by its first member and kept (with its history).
class rooms {
public:
    std::shared_ptr<room> get(const std::string& name);
    // [{"name": ..., "members": N}, ...], by name.
    tern::json list() const;

private:
    mutable std::mutex mutex_;
    std::map<std::string, std::shared_ptr<room>> rooms_;
};

/// Sets `app` up as the chat over `all` (which must outlive the app's serving): the page
/// (public/), the upgrade's guard, GET /ws/{room}, GET /rooms, and messages of at most 2,000
/// bytes.
void add_routes(tern::app& app, rooms& all);

}  // namespace chat
