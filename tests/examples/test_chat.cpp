// The chat example's rooms and routes (examples/chat/chat_app.cpp), tested with the public
// test kit as an application's own tests would be: two members of a room see each other's
// joins, messages and leaves, /rooms counts them, a newcomer gets the history, rooms are
// apart, and the upgrade's guard and the message limits hold. The built program on a port
// with Python's websockets and Chromium is tests/examples/chat_smoke.py's and
// chat_browser.py's.

#include "chat_app.hpp"

#include <catch2/catch.hpp>
#include <tern/json.hpp>
#include <tern/testing.hpp>

#include <functional>
#include <string>

namespace {

using tern::json;
using tern::testing::server;
using tern::testing::ws_client;

// Runs `fn` against the chat on a free port, with no rooms yet.
void with_chat(const std::function<void(server&)>& fn) {
    chat::rooms all;
    tern::app app;
    app.threads(2);
    chat::add_routes(app, all);
    server running(app);
    fn(running);
}

// The next event the member receives, parsed.
json next_event(ws_client& member) { return json::parse(member.receive().data); }

json joined(const std::string& name, int members) {
    return {{"type", "join"}, {"room", "lobby"}, {"name", name}, {"members", members}};
}

json said(const std::string& from, const std::string& text) {
    return {{"type", "message"}, {"room", "lobby"}, {"from", from}, {"text", text}};
}

}  // namespace

TEST_CASE("chat: two members of a room see joins, messages and leaves, and /rooms counts them",
          "[chat]") {
    with_chat([](server& s) {
        auto http = s.make_client();
        CHECK(http.get("/rooms").json() == json{{"rooms", json::array()}});

        auto ann = s.ws("/ws/lobby?name=ann");
        CHECK(next_event(ann) == joined("ann", 1));
        auto ben = s.ws("/ws/lobby?name=ben");
        CHECK(next_event(ben) == joined("ben", 2));
        CHECK(next_event(ann) == joined("ben", 2));
        CHECK(http.get("/rooms").json() ==
              json{{"rooms", json::array({{{"name", "lobby"}, {"members", 2}}})}});

        ann.send_text("hi ben");
        CHECK(next_event(ann) == said("ann", "hi ben"));
        CHECK(next_event(ben) == said("ann", "hi ben"));
        ben.send_text("hi ann \xF0\x9F\x91\x8B");
        CHECK(next_event(ann) == said("ben", "hi ann \xF0\x9F\x91\x8B"));
        CHECK(next_event(ben) == said("ben", "hi ann \xF0\x9F\x91\x8B"));

        CHECK(ben.close() == 1000);
        const json leave = {{"type", "leave"}, {"room", "lobby"}, {"name", "ben"}, {"members", 1}};
        CHECK(next_event(ann) == leave);
        CHECK(http.get("/rooms").json()["rooms"][0]["members"] == 1);
    });
}

TEST_CASE("chat: a newcomer gets the room's history first, and rooms are apart", "[chat]") {
    with_chat([](server& s) {
        auto ann = s.ws("/ws/lobby?name=ann");
        CHECK(next_event(ann) == joined("ann", 1));
        for (int i = 0; i < 25; ++i) {
            ann.send_text("message " + std::to_string(i));
            CHECK(next_event(ann)["text"] == "message " + std::to_string(i));
        }
        auto other = s.ws("/ws/kitchen?name=cid");
        CHECK(next_event(other)["room"] == "kitchen");

        auto late = s.ws("/ws/lobby?name=dee");
        for (int i = 5; i < 25; ++i) {  // the last 20
            CHECK(next_event(late) == said("ann", "message " + std::to_string(i)));
        }
        CHECK(next_event(late) == joined("dee", 2));
        CHECK(next_event(ann) == joined("dee", 2));

        ann.send_text("lobby only");
        CHECK(next_event(late)["text"] == "lobby only");
        other.send_text("kitchen only");
        CHECK(next_event(other)["text"] == "kitchen only");  // not the lobby's message
        auto rooms = s.make_client().get("/rooms").json()["rooms"];
        CHECK(rooms.size() == 2);
        CHECK(rooms[0]["name"] == "kitchen");
        CHECK(rooms[1] == json{{"name", "lobby"}, {"members", 2}});
    });
}

TEST_CASE("chat: the upgrade's guard refuses bad rooms and names, and pages of other origins",
          "[chat]") {
    with_chat([](server& s) {
        CHECK_THROWS_WITH(s.ws("/ws/no%20spaces?name=ann"), Catch::Contains("400"));
        CHECK_THROWS_WITH(s.ws("/ws/" + std::string(33, 'r') + "?name=ann"),
                          Catch::Contains("400"));
        CHECK_THROWS_WITH(s.ws("/ws/lobby?name=" + std::string(33, 'n')), Catch::Contains("400"));
        CHECK_THROWS_WITH(s.ws("/ws/lobby?name=%FF"), Catch::Contains("400"));

        tern::testing::ws_options evil;
        evil.headers = {{"Origin", "http://evil.example"}};
        CHECK_THROWS_WITH(s.ws("/ws/lobby?name=ann", evil),
                          Catch::Contains("403") && Catch::Contains("own origin"));
        tern::testing::ws_options own;
        own.headers = {{"Origin", "http://127.0.0.1:" + std::to_string(s.port())}};
        auto page = s.ws("/ws/lobby?name=ann", own);
        CHECK(next_event(page) == joined("ann", 1));
        auto nameless = s.ws("/ws/lobby");
        CHECK(next_event(nameless)["name"] == "anonymous");
    });
}

TEST_CASE("chat: a binary message is closed with 1003, one over 2,000 bytes with 1009", "[chat]") {
    with_chat([](server& s) {
        auto binary = s.ws("/ws/lobby?name=ann");
        next_event(binary);
        binary.send_binary("\x01\x02");
        CHECK(binary.wait_close() == 1003);

        auto wordy = s.ws("/ws/lobby?name=ben");
        next_event(wordy);
        wordy.send_text(std::string(2000, 'w'));
        CHECK(next_event(wordy)["text"].get<std::string>().size() == 2000);
        wordy.send_text(std::string(2001, 'w'));
        CHECK(wordy.wait_close() == 1009);
    });
}
