// Static files never serve anything outside their root: encoded dots and slashes, NUL,
// backslashes, overlong UTF-8, dot segments, symlinks and dotfiles, each as a real request
// against real files in a temporary directory.

#include "unit/static/test_fixture.hpp"

#if !defined(_WIN32)
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#endif

namespace unit_test_static_traversal {

using namespace static_test;

namespace {

/// base/secret.txt is the prize; base/public is served; base/public-evil sits beside it.
struct traversal_tree : temp_tree {
    traversal_tree() {
        write("secret.txt", "TOP SECRET", true);
        write("public-evil/x.txt", "evil", true);
        write("a.txt", "hello");
        write("a/b.txt", "b");
        write(".env", "KEY=1");
        write(".git/config", "[core]");
        write("a/.hidden/b", "hidden");
        write("%2e%2e/x.txt", "literal");
    }
};

/// The request gets exactly `status` as an error (never a file).
void expect_error(const static_files& files, std::string_view path, int status) {
    INFO("path: " << path);
    const auto r = get(files, path);
    CHECK(r.what == outcome::status_only);
    CHECK(r.res.status == status);
    CHECK_FALSE(r.res.file.file);
    CHECK(r.res.body.empty());
}

/// The request is not served from this directory at all (the caller answers 404).
void expect_absent(const static_files& files, std::string_view path) {
    INFO("path: " << path);
    const auto r = get(files, path);
    CHECK(r.what == outcome::not_handled);
    CHECK_FALSE(r.res.file.file);
    CHECK(r.res.body.empty());
}

}  // namespace

TEST_CASE("literal dot segments that climb above the root are 400", "[static][traversal]") {
    traversal_tree t;
    const static_files files({t.config()});
    expect_error(files, "/../secret.txt", 400);
    expect_error(files, "/../etc/passwd", 400);
    expect_error(files, "/a/../../secret.txt", 400);
    expect_error(files, "/a/b/../../../secret.txt", 400);
    expect_error(files, "/..", 400);
}

TEST_CASE("dot segments that stay inside the root are resolved", "[static][traversal]") {
    traversal_tree t;
    const static_files files({t.config()});
    auto r = get(files, "/a/../a.txt");
    REQUIRE(served(r));
    CHECK(body_of(r) == "hello");
    r = get(files, "/./a.txt");
    REQUIRE(served(r));
    CHECK(body_of(r) == "hello");
}

TEST_CASE("percent-encoded dots forming a dot segment are 400", "[static][traversal]") {
    traversal_tree t;
    const static_files files({t.config()});
    expect_error(files, "/%2e%2e/secret.txt", 400);
    expect_error(files, "/%2E%2e/secret.txt", 400);
    expect_error(files, "/.%2e/secret.txt", 400);
    expect_error(files, "/%2e./secret.txt", 400);
    expect_error(files, "/a/%2e%2e/%2e%2e/secret.txt", 400);
    expect_error(files, "/%2e/a.txt", 400);
}

TEST_CASE("an encoded slash or backslash is 400", "[static][traversal]") {
    traversal_tree t;
    const static_files files({t.config()});
    expect_error(files, "/%2E%2e%2fsecret.txt", 400);
    expect_error(files, "/..%2fsecret.txt", 400);
    expect_error(files, "/..%2Fsecret.txt", 400);
    expect_error(files, "/%2fetc/passwd", 400);
    expect_error(files, "/%5c..%5csecret.txt", 400);
    expect_error(files, "/%2e%2e%5csecret.txt", 400);
    expect_error(files, "/a%2fb.txt", 400);
}

TEST_CASE("a raw backslash is 400", "[static][traversal]") {
    traversal_tree t;
    const static_files files({t.config()});
    expect_error(files, "/..\\secret.txt", 400);
    expect_error(files, "/a\\b.txt", 400);
}

TEST_CASE("NUL and control characters, raw or encoded, are 400", "[static][traversal]") {
    traversal_tree t;
    const static_files files({t.config()});
    expect_error(files, "/%00", 400);
    expect_error(files, "/a.txt%00.png", 400);
    expect_error(files, "/a/..%00/secret.txt", 400);
    expect_error(files, "/a%0d%0aX-Injected:%20yes", 400);
    expect_error(files, "/a.txt%7f", 400);
    expect_error(files, std::string_view("/a.txt\0", 7), 400);
    expect_error(files, "/a b.txt", 400);
}

TEST_CASE("malformed percent escapes are 400", "[static][traversal]") {
    traversal_tree t;
    const static_files files({t.config()});
    expect_error(files, "/a.txt%", 400);
    expect_error(files, "/a.txt%2", 400);
    expect_error(files, "/%zz", 400);
}

TEST_CASE("overlong and invalid UTF-8 is 400", "[static][traversal]") {
    traversal_tree t;
    const static_files files({t.config()});
    expect_error(files, "/%c0%ae%c0%ae/secret.txt", 400);  // overlong '.'
    expect_error(files, "/%c0%af", 400);                   // overlong '/'
    expect_error(files, "/%e0%80%ae", 400);                // 3-byte overlong '.'
    expect_error(files, "/%ed%a0%80", 400);                // surrogate
    expect_error(files, "/%ff.txt", 400);
    expect_error(files, "/%c3", 400);  // truncated sequence
}

TEST_CASE("a double-encoded dot is decoded once and stays a literal name", "[static][traversal]") {
    traversal_tree t;
    const static_files files({t.config()});
    // "%252e%252e" decodes once to the name "%2e%2e", a real directory in this root.
    auto r = get(files, "/%252e%252e/x.txt");
    REQUIRE(served(r));
    CHECK(body_of(r) == "literal");
    expect_absent(files, "/%252e%252e/secret.txt");
    expect_absent(files, "/%25%32%65%25%32%65/secret.txt");
}

TEST_CASE("raw non-ASCII bytes in the path are 400", "[static][traversal]") {
    traversal_tree t;
    const static_files files({t.config()});
    expect_error(files, "/\xc0\xae\xc0\xae/secret.txt", 400);
}

TEST_CASE("empty segments collapse inside the root", "[static][traversal]") {
    traversal_tree t;
    const static_files files({t.config()});
    expect_absent(files, "//etc/passwd");
    expect_absent(files, "///secret.txt");
    auto r = get(files, "//a//b.txt");
    REQUIRE(served(r));
    CHECK(body_of(r) == "b");
}

TEST_CASE("dotfiles and dot-directories are 404 by default", "[static][traversal]") {
    traversal_tree t;
    const static_files files({t.config()});
    expect_absent(files, "/.env");
    expect_absent(files, "/.git/config");
    expect_absent(files, "/.git/");
    expect_absent(files, "/a/.hidden/b");
    expect_absent(files, "/%2eenv");  // decodes to ".env"
    expect_absent(files, "/..;/secret.txt");
}

TEST_CASE("allow_dotfiles serves them, still never above the root", "[static][traversal]") {
    traversal_tree t;
    auto config = t.config();
    config.allow_dotfiles = true;
    const static_files files({config});
    auto r = get(files, "/.env");
    REQUIRE(served(r));
    CHECK(body_of(r) == "KEY=1");
    expect_error(files, "/../secret.txt", 400);
    expect_error(files, "/%2e%2e/secret.txt", 400);
}

TEST_CASE("a symlink to a directory outside the root is not followed", "[static][symlink]") {
    traversal_tree t;
    t.symlink("/etc", "etc");
    t.symlink(t.base / "public-evil", "evil");
    const static_files files({t.config()});
    expect_absent(files, "/etc/passwd");
    expect_absent(files, "/etc/hostname");
    expect_absent(files, "/etc/");
    expect_absent(files, "/evil/x.txt");
}

TEST_CASE("a sibling directory sharing the root's name as a prefix is outside",
          "[static][symlink]") {
    traversal_tree t;
    // "<base>/public-evil/x.txt" starts with "<base>/public" as a string, not by components.
    t.symlink(t.base / "public-evil" / "x.txt", "abs-evil");
    t.symlink("../public-evil/x.txt", "rel-evil");
    const static_files files({t.config()});
    expect_absent(files, "/abs-evil");
    expect_absent(files, "/rel-evil");
}

TEST_CASE("relative symlinks climbing out of the root are not followed", "[static][symlink]") {
    traversal_tree t;
    t.symlink("../secret.txt", "up");
    t.symlink("../../secret.txt", "a/deep");
    t.symlink("../../../../../../../../etc/passwd", "far");
    const static_files files({t.config()});
    expect_absent(files, "/up");
    expect_absent(files, "/a/deep");
    expect_absent(files, "/far");
}

TEST_CASE("symlinks that stay inside the root are followed", "[static][symlink]") {
    traversal_tree t;
    t.symlink("a.txt", "inside");
    t.symlink("../a.txt", "a/back");
    t.symlink(t.root / "a" / "b.txt", "abs-inside");
    t.symlink("a", "dir-link");
    const static_files files({t.config()});
    for (const auto* path : {"/inside", "/a/back"}) {
        INFO(path);
        auto r = get(files, path);
        REQUIRE(served(r));
        CHECK(body_of(r) == "hello");
    }
    auto r = get(files, "/abs-inside");
    REQUIRE(served(r));
    CHECK(body_of(r) == "b");
    r = get(files, "/dir-link/b.txt");
    REQUIRE(served(r));
    CHECK(body_of(r) == "b");
}

TEST_CASE("'..' inside a link target walks the physical path, never above the root",
          "[static][symlink]") {
    traversal_tree t;
    t.symlink("..", "a/up");
    t.symlink("../..", "a/up2");
    t.symlink("../a/../../secret.txt", "a/zigzag");
    const static_files files({t.config()});
    auto r = get(files, "/a/up/a.txt");
    REQUIRE(served(r));
    CHECK(body_of(r) == "hello");
    expect_absent(files, "/a/up2/secret.txt");
    expect_absent(files, "/a/up2/public/a.txt");
    expect_absent(files, "/a/zigzag");
}

TEST_CASE("follow_symlinks = false refuses every symlink", "[static][symlink]") {
    traversal_tree t;
    t.symlink("a.txt", "inside");
    t.symlink("a", "dir-link");
    auto config = t.config();
    config.follow_symlinks = false;
    const static_files files({config});
    expect_absent(files, "/inside");
    expect_absent(files, "/dir-link/b.txt");
    CHECK(served(get(files, "/a.txt")));
}

TEST_CASE("a symlink cannot expose a dotfile", "[static][symlink]") {
    traversal_tree t;
    t.symlink(".env", "env-link");
    t.symlink(".git", "git-link");
    const static_files files({t.config()});
    expect_absent(files, "/env-link");
    expect_absent(files, "/git-link/config");
}

TEST_CASE("symlink loops and dangling symlinks are 404", "[static][symlink]") {
    traversal_tree t;
    t.symlink("loop2", "loop1");
    t.symlink("loop1", "loop2");
    t.symlink("self", "self");
    t.symlink("missing.txt", "dangling");
    const static_files files({t.config()});
    expect_absent(files, "/loop1");
    expect_absent(files, "/self/x");
    expect_absent(files, "/dangling");
}

TEST_CASE("the root given through a symlink is resolved once", "[static][symlink]") {
    traversal_tree t;
    std::filesystem::create_directory_symlink(t.root, t.base / "www");
    auto config = t.config();
    config.directory = (t.base / "www").string();
    const static_files files({config});
    auto r = get(files, "/a.txt");
    REQUIRE(served(r));
    CHECK(body_of(r) == "hello");
    expect_error(files, "/../secret.txt", 400);
}

TEST_CASE("a hosted prefix claims only whole segments", "[static][traversal]") {
    traversal_tree t;
    const static_files files({t.config("/public")});
    expect_absent(files, "/public-evil/x.txt");
    expect_absent(files, "/publicx/a.txt");
    expect_error(files, "/public/../secret.txt", 400);
    expect_error(files, "/public/%2e%2e/secret.txt", 400);
    CHECK(served(get(files, "/public/a.txt")));
}

// Not on Windows (docs/platforms.md): FIFOs, Unix domain socket files and POSIX file modes
// do not exist there (a file Windows would read as something else, a device or a stream, is
// tested by tests/windows/run.sh).
#if !defined(_WIN32)
TEST_CASE("FIFOs and other non-regular files are never opened for serving", "[static][traversal]") {
    traversal_tree t;
    REQUIRE(::mkfifo((t.root / "pipe").c_str(), 0644) == 0);
    const static_files files({t.config()});
    expect_absent(files, "/pipe");  // and does not block on open

    // A socket file in the served directory, bound and never connected to: not a client.
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    REQUIRE(fd >= 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    const std::string sock = (t.root / "sock").string();
    REQUIRE(sock.size() < sizeof addr.sun_path);
    sock.copy(addr.sun_path, sock.size());
    REQUIRE(::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0);
    expect_absent(files, "/sock");
    ::close(fd);
}

TEST_CASE("a file the server may not read is 403", "[static][traversal]") {
    traversal_tree t;
    t.write("private.txt", "no");
    ::chmod((t.root / "private.txt").c_str(), 0);
    const static_files files({t.config()});
    if (::geteuid() == 0) {
        WARN("running as root: file permissions do not apply, 403 not observable");
        return;
    }
    expect_error(files, "/private.txt", 403);
}
#endif

}  // namespace unit_test_static_traversal
