// The route table: which handler a method and a path reach, what they capture, and the
// 404 / 405 / HEAD / OPTIONS decisions the app builds its responses from.

#include <catch2/catch.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "routing/router.hpp"
#include "support/allocation_counter.hpp"

namespace unit_test_routing_router {

using tern::detail::path_param;
using tern::detail::router;
using outcome = router::outcome;

using tern_test::allocation_count;

namespace {

// A handler that knows which route it is, so tests can tell handlers apart without running
// them (running one would need a live request).
struct tagged {
    int id;
    void operator()(tern::context&) const {}
};

// The id of the handler a lookup reached, or -1 when it reached none.
int id_of(const router::match& m) {
    const tagged* t = m.target != nullptr ? m.target->target<tagged>() : nullptr;
    return t != nullptr ? t->id : -1;
}

// Looks up and keeps the captures, as the server does with its per-connection vector.
struct lookup {
    const router& table;
    std::vector<path_param> params;

    router::match operator()(std::string_view method, std::string_view path) {
        return table.find(method, path, params);
    }
    // The value captured under `name`, or "<none>" when there is no such capture.
    std::string_view param(std::string_view name) const {
        const auto it = std::find_if(params.begin(), params.end(),
                                     [&](const path_param& p) { return p.name == name; });
        return it != params.end() ? it->value : "<none>";
    }
};

// The message of the std::invalid_argument `add` throws, or "" when it throws none.
std::string rejection(router& r, std::string_view method, std::string_view pattern) {
    try {
        r.add(method, pattern, tagged{0});
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "";
}

}  // namespace

// ---- static routes and the fast path -------------------------------------------------

TEST_CASE("a static route, the root included, is found by its exact path", "[router]") {
    router r;
    r.add("GET", "/users", tagged{1});
    r.add("GET", "/users/list", tagged{2});
    r.add("GET", "/", tagged{3});
    lookup find{r, {}};
    CHECK(id_of(find("GET", "/")) == 3);
    CHECK(id_of(find("GET", "/users")) == 1);
    CHECK(id_of(find("GET", "/users/list")) == 2);
    CHECK(find("GET", "/users").result == outcome::found);
    CHECK(find.params.empty());
}

TEST_CASE("a path longer, shorter or different from every route is not found", "[router]") {
    router r;
    r.add("GET", "/users/list", tagged{1});
    lookup find{r, {}};
    const router::match m = find("GET", "/users/list/all");
    CHECK(m.result == outcome::not_found);
    CHECK(m.target == nullptr);
    CHECK(m.allow.empty());
    CHECK(find("GET", "/users").result == outcome::not_found);
    CHECK(find("GET", "/users/lis").result == outcome::not_found);
    CHECK(find("GET", "/").result == outcome::not_found);
}

TEST_CASE("a path that does not begin with a slash is not found", "[router]") {
    router r;
    r.add("GET", "/", tagged{1});
    r.add("GET", "/*", tagged{2});
    lookup find{r, {}};
    CHECK(find("GET", "").result == outcome::not_found);
    CHECK(find("GET", "*").result == outcome::not_found);
    CHECK(find("GET", "users").result == outcome::not_found);
    CHECK(r.allow("users").empty());
}

TEST_CASE("a route hit allocates nothing once the params vector has capacity", "[router]") {
    router r;
    r.add("GET", "/plain/text", tagged{1});
    r.add("GET", "/users/{id}/posts/{post}", tagged{2});
    r.add("GET", "/files/*/<rest>", tagged{3});
    std::vector<path_param> params;
    params.reserve(8);

    const long before = allocation_count();
    const router::match a = r.find("GET", "/plain/text/", params);
    const router::match b = r.find("GET", "/users/7/posts/9", params);
    const router::match c = r.find("HEAD", "/files/x/a/b/c", params);
    const long after = allocation_count();

    CHECK(after == before);
    CHECK(id_of(a) == 1);
    CHECK(id_of(b) == 2);
    CHECK(id_of(c) == 3);
}

// ---- trailing slashes and empty segments -------------------------------------------------

TEST_CASE("a trailing slash on the request path still matches the route", "[router]") {
    router r;
    r.add("GET", "/users", tagged{1});
    r.add("GET", "/users/{id}", tagged{2});
    r.add("GET", "/items/", tagged{3});  // ...and one on the pattern is ignored too.
    r.add("GET", "/items/{id}/", tagged{4});
    lookup find{r, {}};
    CHECK(id_of(find("GET", "/users/")) == 1);
    CHECK(id_of(find("GET", "/users/42/")) == 2);
    CHECK(find.param("id") == "42");
    CHECK(id_of(find("GET", "/items")) == 3);
    CHECK(id_of(find("GET", "/items/")) == 3);
    CHECK(id_of(find("GET", "/items/5")) == 4);
}

TEST_CASE("only one trailing slash is ignored, a doubled one leaves an empty segment", "[router]") {
    router r;
    r.add("GET", "/users", tagged{1});
    r.add("GET", "/items/{id}", tagged{2});
    lookup find{r, {}};
    CHECK(find("GET", "/users//").result == outcome::not_found);
    CHECK(find("GET", "/items//").result == outcome::not_found);
    r.add("GET", "/", tagged{3});
    r.add("GET", "/*", tagged{4});
    CHECK(find("GET", "//").result == outcome::not_found);  // An empty segment, not the root.
}

TEST_CASE("an empty path segment never matches a parameter, a one-segment star or a literal",
          "[router]") {
    router r;
    r.add("GET", "/a/{x}/b", tagged{1});
    r.add("GET", "/c/*/d", tagged{2});
    r.add("GET", "/e/f", tagged{3});
    lookup find{r, {}};
    CHECK(find("GET", "/a//b").result == outcome::not_found);
    CHECK(find("GET", "/c//d").result == outcome::not_found);
    CHECK(find("GET", "//e/f").result == outcome::not_found);
    CHECK(find("GET", "/e//f").result == outcome::not_found);
    CHECK(id_of(find("GET", "/a/x/b")) == 1);
}

// ---- captures ---------------------------------------------------------------------------

TEST_CASE("a parameter captures its segment as a view into the request path", "[router]") {
    router r;
    r.add("GET", "/users/{id}", tagged{1});
    lookup find{r, {}};
    const std::string path = "/users/abc-123";
    REQUIRE(id_of(find("GET", path)) == 1);
    REQUIRE(find.params.size() == 1);
    CHECK(find.params[0].name == "id");
    CHECK(find.params[0].value == "abc-123");
    CHECK(find.params[0].value.data() == path.data() + 7);
}

TEST_CASE("several parameters are captured in pattern order", "[router]") {
    router r;
    r.add("GET", "/orgs/{org}/repos/{repo}/issues/{n}", tagged{1});
    lookup find{r, {}};
    REQUIRE(id_of(find("GET", "/orgs/acme/repos/tern/issues/17")) == 1);
    REQUIRE(find.params.size() == 3);
    CHECK(find.params[0].name == "org");
    CHECK(find.params[0].value == "acme");
    CHECK(find.params[1].name == "repo");
    CHECK(find.params[1].value == "tern");
    CHECK(find.params[2].name == "n");
    CHECK(find.params[2].value == "17");
}

TEST_CASE("a parameter never spans a slash", "[router]") {
    router r;
    r.add("GET", "/users/{id}", tagged{1});
    lookup find{r, {}};
    CHECK(find("GET", "/users/1/2").result == outcome::not_found);
    CHECK(find("GET", "/users").result == outcome::not_found);
}

TEST_CASE("each route names its own captures even when patterns share a shape", "[router]") {
    router r;
    r.add("GET", "/items/{id}", tagged{1});
    r.add("DELETE", "/items/{item_id}", tagged{2});
    lookup find{r, {}};
    REQUIRE(id_of(find("DELETE", "/items/5")) == 2);
    CHECK(find.param("item_id") == "5");
    CHECK(find.param("id") == "<none>");
    REQUIRE(id_of(find("GET", "/items/6")) == 1);
    CHECK(find.param("id") == "6");
}

TEST_CASE("a rest parameter captures the rest of the path, slashes included", "[router]") {
    router r;
    r.add("GET", "/files/<path>", tagged{1});
    lookup find{r, {}};
    const std::string path = "/files/docs/2024/report.pdf";
    REQUIRE(id_of(find("GET", path)) == 1);
    REQUIRE(find.params.size() == 1);
    CHECK(find.params[0].name == "path");
    CHECK(find.params[0].value == "docs/2024/report.pdf");
    CHECK(find.params[0].value.data() == path.data() + 7);
    REQUIRE(id_of(find("GET", "/files/one")) == 1);
    CHECK(find.param("path") == "one");
}

TEST_CASE("a rest parameter needs at least one character", "[router]") {
    router r;
    r.add("GET", "/files/<path>", tagged{1});
    lookup find{r, {}};
    CHECK(find("GET", "/files").result == outcome::not_found);
    CHECK(find("GET", "/files/").result == outcome::not_found);
    CHECK(find("GET", "/files//").result == outcome::not_found);  // Trimmed to "/files/".
    REQUIRE(id_of(find("GET", "/files/a/")) == 1);
    CHECK(find.param("path") == "a");  // The trailing slash is ignored here too.
}

TEST_CASE("a trailing star matches the rest of the path and captures nothing", "[router]") {
    router r;
    r.add("GET", "/assets/*", tagged{1});
    lookup find{r, {}};
    CHECK(id_of(find("GET", "/assets/css/site.css")) == 1);
    CHECK(find.params.empty());
    CHECK(id_of(find("GET", "/assets/x")) == 1);
    CHECK(find("GET", "/assets").result == outcome::not_found);
}

TEST_CASE("a star inside a pattern matches exactly one segment and captures nothing", "[router]") {
    router r;
    r.add("GET", "/a/*/b/{id}", tagged{1});
    lookup find{r, {}};
    REQUIRE(id_of(find("GET", "/a/anything/b/9")) == 1);
    REQUIRE(find.params.size() == 1);
    CHECK(find.params[0].name == "id");
    CHECK(find.params[0].value == "9");
    CHECK(find("GET", "/a/x/y/b/9").result == outcome::not_found);
}

TEST_CASE("a percent-encoded slash stays inside one segment and is not decoded", "[router]") {
    router r;
    r.add("GET", "/items/{x}", tagged{1});
    r.add("GET", "/a/b", tagged{2});
    lookup find{r, {}};
    REQUIRE(id_of(find("GET", "/items/a%2Fb")) == 1);
    CHECK(find.param("x") == "a%2Fb");
    CHECK(find("GET", "/a%2Fb").result == outcome::not_found);
}

TEST_CASE("literal segments compare encoded bytes, not decoded text", "[router]") {
    router r;
    r.add("GET", "/caf%C3%A9", tagged{1});
    lookup find{r, {}};
    CHECK(id_of(find("GET", "/caf%C3%A9")) == 1);
    CHECK(find("GET", "/caf\xc3\xa9").result == outcome::not_found);
    CHECK(find("GET", "/caf%c3%a9").result == outcome::not_found);
}

TEST_CASE("paths are matched case-sensitively", "[router]") {
    router r;
    r.add("GET", "/Users/{id}", tagged{1});
    r.add("GET", "/about", tagged{2});
    lookup find{r, {}};
    CHECK(id_of(find("GET", "/Users/1")) == 1);
    CHECK(find("GET", "/users/1").result == outcome::not_found);
    CHECK(find("GET", "/About").result == outcome::not_found);
}

TEST_CASE("a miss leaves the params vector empty with its capacity kept", "[router]") {
    router r;
    r.add("GET", "/users/{id}", tagged{1});
    r.add("POST", "/posts/{id}", tagged{2});
    std::vector<path_param> params;
    params.reserve(16);
    params.push_back({"stale", "value"});
    const std::size_t capacity = params.capacity();

    CHECK(r.find("GET", "/nothing/here", params).result == outcome::not_found);
    CHECK(params.empty());
    params.push_back({"stale", "value"});
    CHECK(r.find("GET", "/posts/3", params).result == outcome::method_not_allowed);
    CHECK(params.empty());
    CHECK(params.capacity() == capacity);
}

// ---- priority and backtracking ----------------------------------------------------------

TEST_CASE("a literal segment beats a parameter at the same level", "[router]") {
    router r;
    r.add("GET", "/users/{id}", tagged{1});
    r.add("GET", "/users/me", tagged{2});
    r.add("GET", "/v/{a}/x", tagged{3});
    r.add("GET", "/v/b/{c}", tagged{4});
    lookup find{r, {}};
    CHECK(id_of(find("GET", "/users/me")) == 2);
    CHECK(id_of(find("GET", "/users/you")) == 1);
    CHECK(id_of(find("GET", "/v/b/x")) == 4);
    CHECK(find.param("c") == "x");
}

TEST_CASE("a one-segment parameter beats a rest-of-path match at the same level", "[router]") {
    router r;
    r.add("GET", "/docs/<rest>", tagged{1});
    r.add("GET", "/docs/{page}", tagged{2});
    r.add("GET", "/docs/*/end", tagged{3});
    lookup find{r, {}};
    CHECK(id_of(find("GET", "/docs/intro")) == 2);
    CHECK(id_of(find("GET", "/docs/a/end")) == 3);
    REQUIRE(id_of(find("GET", "/docs/a/b")) == 1);
    CHECK(find.param("rest") == "a/b");
}

TEST_CASE("a deeper failure backtracks to a lower-priority branch", "[router]") {
    router r;
    r.add("GET", "/a/b", tagged{1});
    r.add("GET", "/a/{x}/c", tagged{2});
    lookup find{r, {}};
    REQUIRE(id_of(find("GET", "/a/b/c")) == 2);
    CHECK(find.param("x") == "b");
    CHECK(id_of(find("GET", "/a/b")) == 1);
}

TEST_CASE("backtracking drops the captures of the abandoned branch", "[router]") {
    router r;
    r.add("GET", "/a/b/{x}/z", tagged{1});
    r.add("GET", "/a/{y}/c/d", tagged{2});
    r.add("GET", "/a/{p}/{q}/<rest>", tagged{3});
    lookup find{r, {}};
    REQUIRE(id_of(find("GET", "/a/b/c/d")) == 2);
    REQUIRE(find.params.size() == 1);
    CHECK(find.params[0].name == "y");
    CHECK(find.params[0].value == "b");

    REQUIRE(id_of(find("GET", "/a/b/c/d/e")) == 3);
    REQUIRE(find.params.size() == 3);
    CHECK(find.param("p") == "b");
    CHECK(find.param("q") == "c");
    CHECK(find.param("rest") == "d/e");
}

TEST_CASE("a static route beats a dynamic route matching the same path", "[router]") {
    router r;
    r.add("GET", "/{a}/{b}", tagged{1});
    r.add("GET", "/*", tagged{2});
    r.add("GET", "/x/y", tagged{3});
    lookup find{r, {}};
    CHECK(id_of(find("GET", "/x/y")) == 3);
    CHECK(find.params.empty());
    CHECK(id_of(find("GET", "/x/z")) == 1);
    CHECK(id_of(find("GET", "/x")) == 2);
}

TEST_CASE("a lower-priority pattern answers a method the higher-priority one lacks", "[router]") {
    router r;
    r.add("GET", "/users/me", tagged{1});
    r.add("POST", "/users/{id}", tagged{2});
    r.add("DELETE", "/users/<rest>", tagged{3});
    lookup find{r, {}};
    CHECK(id_of(find("GET", "/users/me")) == 1);
    REQUIRE(id_of(find("POST", "/users/me")) == 2);
    CHECK(find.param("id") == "me");
    REQUIRE(id_of(find("DELETE", "/users/me")) == 3);
    CHECK(find.param("rest") == "me");
}

// ---- methods, 405 and Allow ----------------------------------------------------------------

TEST_CASE("a path with routes only for other methods is 405 with an Allow list", "[router]") {
    router r;
    r.add("GET", "/users", tagged{1});
    r.add("POST", "/users", tagged{2});
    lookup find{r, {}};
    const router::match m = find("DELETE", "/users");
    CHECK(m.result == outcome::method_not_allowed);
    CHECK(m.target == nullptr);
    CHECK(m.allow == "GET, HEAD, POST, OPTIONS");
}

TEST_CASE("the Allow list has a fixed order whatever the registration order", "[router]") {
    router r;
    for (const char* method :
         {"PROPFIND", "OPTIONS", "DELETE", "PATCH", "MKCOL", "PUT", "POST", "HEAD", "GET"}) {
        r.add(method, "/res", tagged{1});
    }
    CHECK(r.allow("/res") == "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS, MKCOL, PROPFIND");
}

TEST_CASE("the Allow list is the union over every pattern matching the path", "[router]") {
    router r;
    r.add("GET", "/users/me", tagged{1});
    r.add("DELETE", "/users/{id}", tagged{2});
    r.add("PUT", "/users/<rest>", tagged{3});
    r.add("PATCH", "/users/*", tagged{4});
    r.add("POST", "/users/{id}/avatar", tagged{5});
    lookup find{r, {}};
    const router::match m = find("TRACE", "/users/me");
    CHECK(m.result == outcome::method_not_allowed);
    CHECK(m.allow == "GET, HEAD, PUT, PATCH, DELETE, OPTIONS");
    CHECK(r.allow("/users/you") == "PUT, PATCH, DELETE, OPTIONS");
    CHECK(r.allow("/users/you/avatar") == "POST, PUT, PATCH, OPTIONS");
}

TEST_CASE("a path no pattern matches has an empty Allow and is not found, even for OPTIONS",
          "[router]") {
    router r;
    r.add("GET", "/users/{id}", tagged{1});
    lookup find{r, {}};
    const router::match m = find("OPTIONS", "/posts/1");
    CHECK(m.result == outcome::not_found);
    CHECK(m.allow.empty());
    CHECK(r.allow("/posts/1").empty());
    CHECK(r.allow("/users").empty());
    CHECK(r.allow("/users/1") == "GET, HEAD, OPTIONS");
    CHECK(r.allow("/users/1/") == "GET, HEAD, OPTIONS");
}

TEST_CASE("a custom method such as PROPFIND routes like any other", "[router]") {
    router r;
    r.add("PROPFIND", "/dav/<path>", tagged{1});
    lookup find{r, {}};
    REQUIRE(id_of(find("PROPFIND", "/dav/a/b")) == 1);
    CHECK(find.param("path") == "a/b");
    const router::match m = find("GET", "/dav/a/b");
    CHECK(m.result == outcome::method_not_allowed);
    CHECK(m.allow == "OPTIONS, PROPFIND");
}

TEST_CASE("methods are compared case-sensitively", "[router]") {
    router r;
    r.add("GET", "/x", tagged{1});
    r.add("get", "/x", tagged{2});  // A different token, so not a duplicate.
    lookup find{r, {}};
    CHECK(id_of(find("GET", "/x")) == 1);
    CHECK(id_of(find("get", "/x")) == 2);
    const router::match m = find("Get", "/x");
    CHECK(m.result == outcome::method_not_allowed);
    CHECK(m.allow == "GET, HEAD, OPTIONS, get");
}

// ---- HEAD and OPTIONS -----------------------------------------------------------------------

TEST_CASE("HEAD without its own route is answered by the GET route", "[router]") {
    router r;
    r.add("GET", "/users/{id}", tagged{1});
    lookup find{r, {}};
    const router::match m = find("HEAD", "/users/3");
    CHECK(m.result == outcome::found);
    CHECK(id_of(m) == 1);
    CHECK(m.head_from_get);
    CHECK(find.param("id") == "3");
    CHECK_FALSE(find("GET", "/users/3").head_from_get);
}

TEST_CASE("an explicit HEAD route overrides the GET route for HEAD", "[router]") {
    router r;
    r.add("GET", "/file", tagged{1});
    r.add("HEAD", "/file", tagged{2});
    lookup find{r, {}};
    const router::match m = find("HEAD", "/file");
    CHECK(id_of(m) == 2);
    CHECK_FALSE(m.head_from_get);
    CHECK(id_of(find("GET", "/file")) == 1);
    CHECK(r.allow("/file") == "GET, HEAD, OPTIONS");  // HEAD is listed once.
}

TEST_CASE("HEAD on a path without GET is 405 and Allow does not offer HEAD", "[router]") {
    router r;
    r.add("POST", "/submit", tagged{1});
    lookup find{r, {}};
    const router::match m = find("HEAD", "/submit");
    CHECK(m.result == outcome::method_not_allowed);
    CHECK_FALSE(m.head_from_get);
    CHECK(m.allow == "POST, OPTIONS");
}

TEST_CASE("OPTIONS without its own route is method_not_allowed with the Allow list", "[router]") {
    router r;
    r.add("GET", "/users", tagged{1});
    r.add("PUT", "/users", tagged{2});
    lookup find{r, {}};
    const router::match m = find("OPTIONS", "/users");
    CHECK(m.result == outcome::method_not_allowed);
    CHECK(m.target == nullptr);
    CHECK(m.allow == "GET, HEAD, PUT, OPTIONS");
}

TEST_CASE("an explicit OPTIONS route is found and listed once in Allow", "[router]") {
    router r;
    r.add("GET", "/users", tagged{1});
    r.add("OPTIONS", "/users", tagged{2});
    lookup find{r, {}};
    const router::match m = find("OPTIONS", "/users");
    CHECK(m.result == outcome::found);
    CHECK(id_of(m) == 2);
    CHECK(r.allow("/users") == "GET, HEAD, OPTIONS");
}

// ---- registration errors ----------------------------------------------------------------

TEST_CASE("registering the same method and pattern twice is refused", "[router]") {
    router r;
    r.add("GET", "/users", tagged{1});
    r.add("GET", "/users/{id}", tagged{2});
    CHECK_THROWS_AS(r.add("GET", "/users", tagged{3}), std::invalid_argument);
    CHECK_THROWS_AS(r.add("GET", "/users/", tagged{3}), std::invalid_argument);
    CHECK_THROWS_AS(r.add("GET", "/users/{id}/", tagged{3}), std::invalid_argument);
    CHECK_NOTHROW(r.add("POST", "/users", tagged{4}));
    lookup find{r, {}};
    CHECK(id_of(find("GET", "/users")) == 1);  // The first registration still stands.
}

TEST_CASE("patterns differing only in parameter names are duplicates", "[router]") {
    router r;
    r.add("GET", "/a/{x}/b/<rest>", tagged{1});
    const std::string message = rejection(r, "GET", "/a/{y}/b/<tail>");
    CHECK_THAT(message, Catch::Contains("duplicate") && Catch::Contains("/a/{y}/b/<tail>") &&
                            Catch::Contains("/a/{x}/b/<rest>"));
}

TEST_CASE("a star has the same shape as the parameter in its position", "[router]") {
    router r;
    r.add("GET", "/a/{x}/b", tagged{1});
    r.add("GET", "/files/<rest>", tagged{2});
    CHECK_THROWS_AS(r.add("GET", "/a/*/b", tagged{3}), std::invalid_argument);
    CHECK_THROWS_AS(r.add("GET", "/files/*", tagged{3}), std::invalid_argument);
    CHECK_NOTHROW(r.add("GET", "/a/*", tagged{4}));  // One segment vs the rest: different.
    CHECK_NOTHROW(r.add("GET", "/files/{name}", tagged{5}));
}

TEST_CASE("a bad pattern is refused at registration and leaves no route behind", "[router]") {
    router r;
    CHECK_THROWS_AS(r.add("GET", "users", tagged{1}), std::invalid_argument);
    CHECK_THROWS_AS(r.add("GET", "/a/{b", tagged{1}), std::invalid_argument);
    CHECK_THROWS_AS(r.add("GET", "/a//b", tagged{1}), std::invalid_argument);
    CHECK_THAT(rejection(r, "GET", "/x*/y"), Catch::Contains("\"/x*/y\""));
    CHECK(r.allow("/a/b").empty());
    CHECK(r.allow("/users").empty());
}

TEST_CASE("a method that is not an RFC 9110 token is refused", "[router]") {
    router r;
    CHECK_THROWS_AS(r.add("", "/x", tagged{1}), std::invalid_argument);
    CHECK_THROWS_AS(r.add("GE T", "/x", tagged{1}), std::invalid_argument);
    CHECK_THROWS_AS(r.add("GET\r\n", "/x", tagged{1}), std::invalid_argument);
    CHECK_THROWS_AS(r.add("(GET)", "/x", tagged{1}), std::invalid_argument);
    CHECK_THROWS_AS(r.add("G\xc3\x89T", "/x", tagged{1}), std::invalid_argument);
    CHECK_THAT(rejection(r, "GE:T", "/x"), Catch::Contains("GE:T") && Catch::Contains("/x"));
    CHECK_NOTHROW(r.add("X-CUSTOM.1!~", "/x", tagged{2}));
    CHECK(r.allow("/x") == "OPTIONS, X-CUSTOM.1!~");
}

}  // namespace unit_test_routing_router
