// The platform seam's file calls (src/platform/files.hpp), whichever implementation this build
// compiled (TERN_IO, docs/platforms.md): both must keep the same promises.

#include "platform/files.hpp"

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace unit_test_platform_files {

namespace fs = std::filesystem;
namespace platform = tern::detail::platform;

namespace {

// A fresh directory, removed at the end of the test case.
struct temp_dir {
    fs::path path;
    temp_dir() {
        std::string pattern = (fs::temp_directory_path() / "tern-platform-XXXXXX").string();
        REQUIRE(::mkdtemp(pattern.data()) != nullptr);
        path = pattern;
    }
    ~temp_dir() {
        std::error_code ignored;
        fs::remove_all(path, ignored);
    }
    temp_dir(const temp_dir&) = delete;
    temp_dir& operator=(const temp_dir&) = delete;
};

}  // namespace

TEST_CASE("a spool file keeps what is written to it and leaves no name in its directory",
          "[platform]") {
    temp_dir dir;
    const int fd = platform::open_spool_file(dir.path.string());
    REQUIRE(fd >= 0);
    CHECK(fs::is_empty(dir.path));
    CHECK((::fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0);
    const std::string body = "a large upload";
    REQUIRE(::write(fd, body.data(), body.size()) == static_cast<ssize_t>(body.size()));
    std::string back(body.size(), '\0');
    CHECK(::pread(fd, back.data(), back.size(), 0) == static_cast<ssize_t>(back.size()));
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
          "[platform]") {
    temp_dir dir;
    fs::create_directory(dir.path / "real");
    fs::create_directory_symlink(dir.path / "real", dir.path / "link");
    std::ofstream(dir.path / "file") << "x";
    const int parent = platform::open_directory(dir.path.c_str());
    REQUIRE(parent >= 0);
    const int real = platform::open_directory_at(parent, "real");
    CHECK(real >= 0);
    errno = 0;
    CHECK(platform::open_directory_at(parent, "link") == -1);
    CHECK((errno == ELOOP || errno == ENOTDIR));
    CHECK(platform::open_directory_at(parent, "file") == -1);
    CHECK(errno == ENOTDIR);
    CHECK(platform::open_directory((dir.path / "link").c_str()) == -1);
    if (real >= 0) ::close(real);
    ::close(parent);
}

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

}  // namespace unit_test_platform_files
