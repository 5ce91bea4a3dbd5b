// The small-file cache one event loop keeps (static/file_cache.hpp): a hot file answered
// from memory, seen anew a second later (replaced, changed, deleted), bounded by entries
// and bytes, and giving exactly the answers the uncached path gives.

#include "unit/static/test_fixture.hpp"

#include "static/file_cache.hpp"
#include "static/open_beneath.hpp"

#include <chrono>
#include <ctime>
#include <optional>
#include <thread>

namespace unit_test_static_file_cache {

using namespace static_test;
using tern::detail::cached_file;
using tern::detail::file_cache;
using tern::detail::root_cache;

namespace {

/// An entry is trusted during the second it was read in. Runs `attempt` until it ran inside
/// one second of the clock (so nothing it stored can have expired on the way), at most 20
/// times; false when it never did.
template <class F>
bool within_one_second(F&& attempt) {
    for (int i = 0; i < 20; ++i) {
        const std::time_t start = std::time(nullptr);
        attempt();
        if (std::time(nullptr) == start) return true;
    }
    return false;
}

/// Long enough for every entry read before it to be read again.
void wait_past_validity() { std::this_thread::sleep_for(std::chrono::milliseconds(1100)); }

/// `files` asked for GET `target` with a loop state of its own (`roots`).
answer get_with(const static_files& files, root_cache& roots, std::string_view target,
                const fields& headers = {}, std::string_view method = "GET") {
    tern::detail::request req;
    req.method = method;
    req.target = target;
    req.path = target;
    req.headers = headers;
    req.is_head = method == "HEAD";
    answer a;
    a.what = files.serve(req, a.res, roots);
    return a;
}

/// Replaces `rel` below the root by a new file with `content`, the way a deploy does: a
/// new inode renamed over the old path.
void replace_file(const temp_tree& t, const fs::path& rel, std::string_view content) {
    t.write(fs::path(rel.string() + ".new"), content);
    fs::rename(t.root / (rel.string() + ".new"), t.root / rel);
}

cached_file file_of(std::size_t bytes) {
    cached_file f;
    f.identity.present = true;
    f.identity.bytes.assign(bytes, 'x');
    return f;
}

}  // namespace

TEST_CASE("a small file is answered from the loop's memory during the second it was read",
          "[static][file_cache]") {
    temp_tree t;
    const std::string kib(1024, 'k');
    const static_files files({t.config()});
    answer first;
    answer second;
    std::size_t held = 0;
    std::size_t held_bytes = 0;
    const bool in_time = within_one_second([&] {
        t.write("small.bin", kib);
        root_cache roots;
        first = get_with(files, roots, "/small.bin");
        // A new file at the path: a request that walked the path again would see it.
        replace_file(t, "small.bin", "changed");
        second = get_with(files, roots, "/small.bin");
        held = roots.files().size();
        held_bytes = roots.files().bytes();
    });
    REQUIRE(in_time);
    REQUIRE(served(first));
    CHECK_FALSE(first.res.file.file);  // the bytes are in the answer: no descriptor to read
    CHECK(first.res.body == kib);
    REQUIRE(served(second));
    CHECK(second.res.body == kib);
    CHECK(second.field("ETag") == first.field("ETag"));
    CHECK(second.field("Last-Modified") == first.field("Last-Modified"));
    CHECK(held == 1);
    CHECK(held_bytes == kib.size());
}

TEST_CASE("a file renamed over is served with its new bytes and ETag after a second",
          "[static][file_cache]") {
    temp_tree t;
    t.write("app.css", "old bytes");
    const static_files files({t.config()});
    root_cache roots;
    const auto before = get_with(files, roots, "/app.css");
    REQUIRE(served(before));
    REQUIRE(body_of(before) == "old bytes");

    replace_file(t, "app.css", "the new, longer bytes");
    wait_past_validity();
    const auto after = get_with(files, roots, "/app.css");
    REQUIRE(served(after));
    CHECK(body_of(after) == "the new, longer bytes");
    CHECK(length_of(after) == std::string_view("the new, longer bytes").size());
    CHECK(after.field("ETag") != before.field("ETag"));
    CHECK(roots.files().size() == 1);
    CHECK(roots.files().bytes() == std::string_view("the new, longer bytes").size());

    // Changed in place (same inode, same size, a new modification time) is seen too.
    t.write("app.css", "the NEW, longer bytes");
    t.set_mtime("app.css", 1'000'000'000);
    wait_past_validity();
    const auto edited = get_with(files, roots, "/app.css");
    CHECK(body_of(edited) == "the NEW, longer bytes");
    CHECK(edited.field("Last-Modified") == "Sun, 09 Sep 2001 01:46:40 GMT");
    CHECK(edited.field("ETag") != after.field("ETag"));
}

TEST_CASE("a deleted file is not found after a second and leaves the cache",
          "[static][file_cache]") {
    temp_tree t;
    t.write("gone.txt", "here");
    const static_files files({t.config()});
    root_cache roots;
    REQUIRE(served(get_with(files, roots, "/gone.txt")));
    REQUIRE(roots.files().size() == 1);
    fs::remove(t.root / "gone.txt");
    wait_past_validity();
    const auto r = get_with(files, roots, "/gone.txt");
    CHECK(r.what == outcome::not_handled);
    CHECK(r.res.body.empty());
    CHECK(roots.files().size() == 0);
    CHECK(roots.files().bytes() == 0);
}

TEST_CASE("the cache holds at most its entry count, the least recently used leaving first",
          "[static][file_cache]") {
    bool one = false;
    bool two = false;
    bool three = false;
    bool four = false;
    std::size_t size = 0;
    const bool in_time = within_one_second([&] {
        file_cache cache(file_cache::limits{.max_entries = 3, .max_bytes = 1024 * 1024});
        const std::string root = "/srv";
        cache.store(root, 0, "1", file_of(10));
        cache.store(root, 0, "2", file_of(10));
        cache.store(root, 0, "3", file_of(10));
        cache.find(root, 0, "1");  // now "2" is the least recently used
        cache.store(root, 0, "4", file_of(10));
        size = cache.size();
        one = cache.find(root, 0, "1") != nullptr;
        two = cache.find(root, 0, "2") != nullptr;
        three = cache.find(root, 0, "3") != nullptr;
        four = cache.find(root, 0, "4") != nullptr;
    });
    REQUIRE(in_time);
    CHECK(size == 3);
    CHECK(one);
    CHECK_FALSE(two);
    CHECK(three);
    CHECK(four);
}

TEST_CASE("the cache holds at most its byte budget, the least recently used leaving first",
          "[static][file_cache]") {
    bool first = false;
    bool second = false;
    bool third = false;
    bool too_big_stored = true;
    std::size_t bytes = 0;
    std::size_t bytes_after_too_big = 0;
    const bool in_time = within_one_second([&] {
        file_cache cache(file_cache::limits{.max_entries = 64, .max_bytes = 2500});
        const std::string root = "/srv";
        cache.store(root, 0, "a", file_of(1000));
        cache.store(root, 0, "b", file_of(1000));
        cache.find(root, 0, "a");
        cache.store(root, 0, "c", file_of(1000));  // 3000 > 2500: "b" leaves
        bytes = cache.bytes();
        first = cache.find(root, 0, "a") != nullptr;
        second = cache.find(root, 0, "b") != nullptr;
        third = cache.find(root, 0, "c") != nullptr;
        // A file over the whole budget is not stored, and pushes nothing out.
        too_big_stored = cache.store(root, 0, "d", file_of(3000)) != nullptr;
        bytes_after_too_big = cache.bytes();
    });
    REQUIRE(in_time);
    CHECK(bytes == 2000);
    CHECK(first);
    CHECK_FALSE(second);
    CHECK(third);
    CHECK_FALSE(too_big_stored);
    CHECK(bytes_after_too_big == 2000);
}

TEST_CASE("the same path under other rules or another root is another entry",
          "[static][file_cache]") {
    bool other_rules = true;
    bool other_root = true;
    bool same = false;
    const bool in_time = within_one_second([&] {
        file_cache cache;
        cache.store("/srv/a", 2, "x.txt", file_of(3));
        other_rules = cache.find("/srv/a", 0, "x.txt") != nullptr;
        other_root = cache.find("/srv/b", 2, "x.txt") != nullptr;
        same = cache.find("/srv/a", 2, "x.txt") != nullptr;
    });
    REQUIRE(in_time);
    CHECK_FALSE(other_rules);
    CHECK_FALSE(other_root);
    CHECK(same);
}

TEST_CASE("a file larger than 16 KiB is answered from its descriptor and not held",
          "[static][file_cache]") {
    temp_tree t;
    const std::string big(tern::detail::max_cached_file_bytes + 1, 'b');
    const std::string limit(tern::detail::max_cached_file_bytes, 'l');
    t.write("big.bin", big);
    t.write("limit.bin", limit);
    const static_files files({t.config()});
    root_cache roots;
    const auto r = get_with(files, roots, "/big.bin");
    REQUIRE(served(r));
    CHECK(r.res.file.file);
    CHECK(r.res.body.empty());
    CHECK(body_of(r) == big);
    CHECK(roots.files().size() == 0);
    // Exactly 16 KiB is held.
    const auto at_limit = get_with(files, roots, "/limit.bin");
    CHECK_FALSE(at_limit.res.file.file);
    CHECK(body_of(at_limit) == limit);
    CHECK(roots.files().size() == 1);
    // A small file whose precompressed sibling is large is not held either.
    t.write("app.js", "small");
    t.write("app.js.gz", big);
    const auto sibling = get_with(files, roots, "/app.js", {{"Accept-Encoding", "gzip"}});
    CHECK(sibling.res.file.file);
    CHECK(body_of(sibling) == big);
    CHECK(roots.files().size() == 1);
}

TEST_CASE("a missing precompressed sibling is remembered with the file for its second",
          "[static][file_cache]") {
    temp_tree t;
    const static_files files({t.config()});
    const fields br{{"Accept-Encoding", "br"}};
    answer first;
    answer second;
    std::optional<root_cache> roots;
    const bool in_time = within_one_second([&] {
        fs::remove(t.root / "app.js.br");
        t.write("app.js", "plain");
        roots.emplace();
        first = get_with(files, *roots, "/app.js", br);
        // Looked for once with the file: a sibling made now is not looked for again.
        t.write("app.js.br", "BR");
        second = get_with(files, *roots, "/app.js", br);
    });
    REQUIRE(in_time);
    CHECK(body_of(first) == "plain");
    CHECK(body_of(second) == "plain");
    CHECK(second.field("Content-Encoding").empty());

    wait_past_validity();
    const auto later = get_with(files, *roots, "/app.js", br);
    CHECK(body_of(later) == "BR");
    CHECK(later.field("Content-Encoding") == "br");
}

TEST_CASE("a path open_beneath refuses is never held, and a directory's rules stay its own",
          "[static][file_cache][symlink]") {
    temp_tree t;
    t.write("secret.txt", "outside the root", true);
    t.write("real/inside.txt", "inside");
    t.symlink("../secret.txt", "out.txt");
    t.symlink(t.base / "secret.txt", "abs-out.txt");
    t.symlink("real/inside.txt", "link.txt");
    auto following = t.config("/follow");
    auto strict = t.config("/strict");
    strict.follow_symlinks = false;
    const static_files files({following, strict});
    bool leaked = false;
    bool strict_served = true;
    bool follow_served = false;
    const bool in_time = within_one_second([&] {
        root_cache roots;
        for (int i = 0; i < 2; ++i) {
            for (const char* path : {"/follow/out.txt", "/follow/abs-out.txt",
                                     "/follow/real/../../secret.txt", "/strict/out.txt"}) {
                const auto r = get_with(files, roots, path);
                if (served(r) || !r.res.body.empty()) leaked = true;
            }
        }
        // The link inside the root is served where links are followed, and held there;
        // the directory that follows no link still refuses it.
        follow_served = body_of(get_with(files, roots, "/follow/link.txt")) == "inside";
        strict_served = served(get_with(files, roots, "/strict/link.txt"));
    });
    REQUIRE(in_time);
    CHECK_FALSE(leaked);
    CHECK(follow_served);
    CHECK_FALSE(strict_served);
}

TEST_CASE("cache_small_files = false opens the file for every request", "[static][file_cache]") {
    temp_tree t;
    t.write("a.txt", "abc");
    auto config = t.config();
    config.cache_small_files = false;
    const static_files files({config});
    root_cache roots;
    const auto r = get_with(files, roots, "/a.txt");
    REQUIRE(served(r));
    CHECK(r.res.file.file);
    CHECK(body_of(r) == "abc");
    CHECK(roots.files().size() == 0);
}

TEST_CASE("held files get exactly the answers the uncached path gives",
          "[static][file_cache][symlink]") {
    temp_tree t;
    t.write("index.html", "<h1>home</h1>");
    t.write("docs/index.html", "<h1>docs</h1>");
    t.write("app.js", "console.log('plain')");
    t.write("app.js.br", "BROTLI");
    t.write("app.js.gz", "GZIP");
    t.write("data.txt", "0123456789");
    t.write("empty.txt", "");
    t.write(".env", "SECRET=1");
    t.symlink("data.txt", "alias.txt");
    auto cached = t.config();
    cached.cache_control = "max-age=60";
    cached.spa_fallback = "index.html";
    auto uncached = cached;
    uncached.cache_small_files = false;
    const static_files with_cache({cached});
    const static_files without_cache({uncached});

    const std::string etag(get(without_cache, "/data.txt").field("ETag"));
    const std::string modified(get(without_cache, "/data.txt").field("Last-Modified"));
    const fields browser{{"Accept", "text/html"}};
    struct ask {
        std::string_view method;
        std::string_view target;
        fields headers;
    };
    const std::vector<ask> asks = {
        {"GET", "/data.txt", {}},
        {"HEAD", "/data.txt", {}},
        {"GET", "/alias.txt", {}},
        {"GET", "/", {}},
        {"GET", "/docs/", {}},
        {"GET", "/docs", {}},
        {"GET", "/docs/index.html", {}},
        {"GET", "/data.txt", {{"Range", "bytes=2-4"}}},
        {"HEAD", "/data.txt", {{"Range", "bytes=-3"}}},
        {"GET", "/data.txt", {{"Range", "bytes=10-"}}},
        {"GET", "/empty.txt", {{"Range", "bytes=0-"}}},
        {"GET", "/empty.txt", {}},
        {"GET", "/data.txt", {{"Range", "bytes=2-4"}, {"If-Range", etag}}},
        {"GET", "/data.txt", {{"Range", "bytes=2-4"}, {"If-Range", "\"stale\""}}},
        {"GET", "/data.txt", {{"If-None-Match", etag}}},
        {"GET", "/data.txt", {{"If-Modified-Since", modified}}},
        {"GET", "/data.txt", {{"If-Match", "\"other\""}}},
        {"GET", "/app.js", {}},
        {"GET", "/app.js", {{"Accept-Encoding", "br, gzip"}}},
        {"GET", "/app.js", {{"Accept-Encoding", "gzip"}}},
        {"GET", "/app.js", {{"Accept-Encoding", "br;q=0.5, gzip"}}},
        {"HEAD", "/app.js", {{"Accept-Encoding", "br"}, {"Range", "bytes=0-1"}}},
        {"GET", "/client/route", browser},
        {"GET", "/client/route", {}},
        {"GET", "/missing.txt", browser},
        {"GET", "/.env", {}},
        {"GET", "/data.txt/", {}},
        {"GET", "/a/%2e%2e/%2e%2e/data.txt", {}},
    };
    for (int round = 0; round < 2; ++round) {  // the second round is answered from memory
        for (const auto& a : asks) {
            INFO("round " << round << ": " << a.method << " " << a.target);
            const auto want = serve(without_cache, a.method, a.target, a.headers);
            const auto got = serve(with_cache, a.method, a.target, a.headers);
            CHECK(got.what == want.what);
            CHECK(got.res.status == want.res.status);
            CHECK(got.res.content_type == want.res.content_type);
            CHECK(got.res.fields == want.res.fields);
            if (want.res.file.file) {
                CHECK(length_of(got) == length_of(want));
                CHECK(body_of(got) == body_of(want));
            } else {
                CHECK(got.res.body == want.res.body);
                CHECK_FALSE(got.res.file.file);
            }
        }
    }
}

}  // namespace unit_test_static_file_cache
