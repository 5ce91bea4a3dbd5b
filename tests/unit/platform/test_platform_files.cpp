// The platform seam's file calls (src/platform/files.hpp), whichever implementation this build
// compiled (TERN_IO, docs/platforms.md): both must keep the same promises.

#include "platform/files.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

#if !defined(_WIN32)
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>
#endif

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace unit_test_platform_files {

namespace fs = std::filesystem;
namespace platform = tern::detail::platform;

// A fresh directory, removed at the end of the test case.
struct temp_dir : tern_test::temp_dir {
    temp_dir() : tern_test::temp_dir("tern-platform-") {}
};

TEST_CASE("a spool file keeps what is written to it and leaves no name in its directory",
          "[platform]") {
    temp_dir dir;
    const int fd = platform::open_spool_file(dir.path.string());
    REQUIRE(fd >= 0);
#if !defined(_WIN32)
    // POSIX: unlinked at once, and never inherited. Windows names the file until it is closed
    // (delete-on-close), and its descriptors are not inherited by default.
    CHECK(fs::is_empty(dir.path));
    CHECK((::fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0);
#endif
    const std::string body = "a large upload";
    REQUIRE(platform::write_file(fd, body.data(), body.size()) ==
            static_cast<ssize_t>(body.size()));
    std::string back(body.size(), '\0');
    CHECK(platform::read_file_at(fd, back.data(), back.size(), 0) ==
          static_cast<ssize_t>(back.size()));
    CHECK(back == body);
    ::close(fd);
    CHECK(fs::is_empty(dir.path));
}

TEST_CASE("a spool file in a directory that does not exist is -1 with errno", "[platform]") {
    temp_dir dir;
    errno = 0;
    CHECK(platform::open_spool_file((dir.path / "missing").string()) == -1);
    CHECK(errno != 0);
}

TEST_CASE("a directory opens beneath its parent, never through a symlink or as a file",
          "[platform][symlink]") {
    temp_dir dir;
    fs::create_directory(dir.path / "real");
    fs::create_directory_symlink(dir.path / "real", dir.path / "link");
    std::ofstream(dir.path / "file") << "x";
    const int parent = platform::open_directory(dir.path.string().c_str());
    REQUIRE(parent >= 0);
    const int real = platform::open_directory_at(parent, "real");
    CHECK(real >= 0);
    errno = 0;
    CHECK(platform::open_directory_at(parent, "link") == -1);
    CHECK((errno == ELOOP || errno == ENOTDIR));
    CHECK(platform::open_directory_at(parent, "file") == -1);
    CHECK(errno == ENOTDIR);
    CHECK(platform::open_directory((dir.path / "link").string().c_str()) == -1);
    if (real >= 0) ::close(real);
    ::close(parent);
}

// Not on Windows (docs/platforms.md): the test's socket pair is a Unix domain one, and
// Windows sends no file piece in the kernel (send_file_piece is ENOSYS there, as on the
// portable path).
#if !defined(_WIN32)
TEST_CASE("a file piece is sent from its offset by the kernel, or refused with ENOSYS",
          "[platform]") {
    temp_dir dir;
    std::ofstream(dir.path / "f") << "0123456789";
    const int file = ::open((dir.path / "f").c_str(), O_RDONLY | O_CLOEXEC);
    REQUIRE(file >= 0);
    int pair[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, pair) == 0);
    const ssize_t sent = platform::send_file_piece(pair[0], file, 3, 4);
    if (sent < 0) {
        CHECK(errno == ENOSYS);  // the portable path: the caller reads and sends the piece
    } else {
        char got[8] = {};
        REQUIRE(sent == 4);
        CHECK(::recv(pair[1], got, sizeof got, 0) == 4);
        CHECK(std::string(got, 4) == "3456");
    }
    ::close(pair[0]);
    ::close(pair[1]);
    ::close(file);
}

#endif

}  // namespace unit_test_platform_files
