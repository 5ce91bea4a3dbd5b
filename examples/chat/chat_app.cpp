// The chat example's rooms and routes (chat_app.hpp); main.cpp has the list of the routes
// and the command line.

#include "chat_app.hpp"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace {

constexpr std::size_t max_text_bytes = 2000;
constexpr std::size_t history_size = 20;

bool valid_room(std::string_view room) {
    return !room.empty() && room.size() <= 32 && std::all_of(room.begin(), room.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_' || c == '-';
    });
}

// Valid UTF-8 (nlohmann_json refuses to write anything else) without control characters.
bool valid_name(std::string_view name) {
    if (name.empty() || name.size() > 32) return false;
    if (std::any_of(name.begin(), name.end(),
                    [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7F; })) {
        return false;
    }
    try {
        (void)tern::json(std::string(name)).dump();
        return true;
    } catch (const tern::json::exception&) {
        return false;
    }
}

std::string member_name(const tern::ws_connection& c) {
    return c.query_param("name").value_or("anonymous");
}

}  // namespace

namespace chat {

// One room: its members (a ws_clients set broadcasts across every event loop) and its last
// messages. Members are counted here: ws_clients keeps a closed connection until a
// broadcast finds it.
class room {
public:
    explicit room(std::string name) : name_(std::move(name)) {}

    void join(const tern::ws_connection& c, const std::string& who) {
        std::deque<std::string> past;
        int members = 0;
        {
            std::lock_guard lock(mutex_);
            past = history_;
            members = ++members_;
        }
        for (const auto& m : past) c.send(m);
        clients_.add(c);
        clients_.broadcast(presence("join", who, members));
    }

    void leave(const tern::ws_connection& c, const std::string& who) {
        clients_.remove(c);
        int members = 0;
        {
            std::lock_guard lock(mutex_);
            members = --members_;
        }
        clients_.broadcast(presence("leave", who, members));
    }

    void say(const std::string& who, std::string_view text) {
        const std::string event =
            tern::json{{"type", "message"}, {"room", name_}, {"from", who}, {"text", text}}.dump();
        {
            std::lock_guard lock(mutex_);
            history_.push_back(event);
            if (history_.size() > history_size) history_.pop_front();
        }
        clients_.broadcast(event);
    }

    int members() const {
        std::lock_guard lock(mutex_);
        return members_;
    }

private:
    std::string presence(const char* type, const std::string& who, int members) const {
        return tern::json{{"type", type}, {"room", name_}, {"name", who}, {"members", members}}
            .dump();
    }

    const std::string name_;
    mutable std::mutex mutex_;
    int members_ = 0;
    std::deque<std::string> history_;
    tern::ws_clients clients_;
};

std::shared_ptr<room> rooms::get(const std::string& name) {
    std::lock_guard lock(mutex_);
    auto& r = rooms_[name];
    if (!r) r = std::make_shared<room>(name);
    return r;
}

tern::json rooms::list() const {
    std::lock_guard lock(mutex_);
    auto out = tern::json::array();
    for (const auto& [name, r] : rooms_) {
        out.push_back({{"name", name}, {"members", r->members()}});
    }
    return out;
}

void add_routes(tern::app& app, rooms& all) {
    app.static_files(CHAT_PUBLIC_DIR);
    app.configure([](tern::config& c) { c.websocket.max_message_size = max_text_bytes; });

    // The upgrade's guard: runs before the handshake, and a throw answers the HTTP request.
    app.before("/ws/{room}", [](tern::context& ctx) {
        if (!valid_room(ctx.path_param("room"))) {
            throw tern::http_error(400, "a room is 1-32 of A-Z a-z 0-9 _ -");
        }
        const auto name = ctx.query_param("name");
        if (name && !valid_name(*name)) {
            throw tern::http_error(400, "a name is 1-32 bytes of UTF-8 text");
        }
        const auto origin = ctx.header("Origin");
        const auto host = ctx.header("Host");
        if (origin && (!host || *origin != "http://" + std::string(*host))) {
            throw tern::http_error(403, "this chat takes pages of its own origin only");
        }
    });

    app.ws("/ws/{room}", [&all](tern::ws_handlers& ws) {
        ws.on_connect([&all](tern::ws_connection& c) {
            all.get(std::string(c.path_param("room")))->join(c, member_name(c));
        });
        ws.on_message([&all](tern::ws_connection& c, std::string_view text) {
            all.get(std::string(c.path_param("room")))->say(member_name(c), text);
        });
        ws.on_binary([](tern::ws_connection& c, std::string_view) {
            c.close(1003, "this chat takes text only");
        });
        ws.on_close([&all](tern::ws_connection& c, int, std::string_view) {
            all.get(std::string(c.path_param("room")))->leave(c, member_name(c));
        });
    });

    app.get("/rooms", [&all](tern::context& ctx) { ctx.json({{"rooms", all.list()}}); });
}

}  // namespace chat
