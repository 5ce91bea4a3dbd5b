#pragma once
// Shared by the tests in unit/static/: a fresh temporary directory per test case with
// a served root inside it, and short ways to ask the static-files layer for a path.

#include "platform/files.hpp"
#include "static/static_files.hpp"

#include <catch2/catch.hpp>

#include "support/temp_dir.hpp"

#if defined(_WIN32)
#include <windows.h>
#else
#include <fcntl.h>
#include <sys/stat.h>
#endif

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace static_test {

namespace fs = std::filesystem;
using tern::detail::static_files;
using outcome = tern::detail::static_outcome;

/// `base/` is a fresh directory removed at the end of the test; `base/public` is served.
struct temp_tree {
    tern_test::temp_dir made{"tern-static-"};
    fs::path base = made.path;
    fs::path root = base / "public";

    temp_tree() { fs::create_directory(root); }
    ~temp_tree() {
        std::error_code ec;
        // Make every directory searchable again so permission tests do not leak files (made's
        // destructor removes them).
        for (auto it = fs::recursive_directory_iterator(base, ec);
             !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
            if (it->is_directory(ec) && !it->is_symlink(ec)) {
                fs::permissions(it->path(),
                                fs::perms::owner_all | fs::perms::group_read |
                                    fs::perms::group_exec | fs::perms::others_read |
                                    fs::perms::others_exec,
                                ec);
            }
        }
    }
    temp_tree(const temp_tree&) = delete;
    temp_tree& operator=(const temp_tree&) = delete;

    /// Writes `content` to `rel` below the root (or below `base` with `in_base`).
    void write(const fs::path& rel, std::string_view content, bool in_base = false) const {
        const fs::path p = (in_base ? base : root) / rel;
        fs::create_directories(p.parent_path());
        std::ofstream(p, std::ios::binary)
            .write(content.data(), static_cast<std::streamsize>(content.size()));
    }
    void mkdir(const fs::path& rel) const { fs::create_directories(root / rel); }
    /// Creates a symlink at `rel` below the root, pointing at `target` as written.
    void symlink(const fs::path& target, const fs::path& rel) const {
        fs::create_directories((root / rel).parent_path());
        fs::create_symlink(target, root / rel);
    }
    /// Sets the modification time of `rel` below the root.
    void set_mtime(const fs::path& rel, std::time_t seconds, long nanoseconds = 0) const {
#if defined(_WIN32)
        // Windows: no utimensat; the file's own time (never a link's: links are not used
        // there) through its handle, in the file system's 100 ns steps since 1601
        // (std::filesystem::last_write_time of mingw-w64's libstdc++ sets whole seconds).
        const HANDLE h = ::CreateFileW((root / rel).wstring().c_str(), FILE_WRITE_ATTRIBUTES,
                                       FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                                       nullptr, OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, nullptr);
        REQUIRE(h != INVALID_HANDLE_VALUE);
        const std::uint64_t ticks =
            (static_cast<std::uint64_t>(seconds) + 11'644'473'600U) * 10'000'000U +
            static_cast<std::uint64_t>(nanoseconds) / 100U;
        FILETIME at{static_cast<DWORD>(ticks), static_cast<DWORD>(ticks >> 32U)};
        const bool set = ::SetFileTime(h, nullptr, &at, &at) != 0;
        ::CloseHandle(h);
        REQUIRE(set);
#else
        const timespec times[2] = {{seconds, nanoseconds}, {seconds, nanoseconds}};
        REQUIRE(::utimensat(AT_FDCWD, (root / rel).c_str(), times, AT_SYMLINK_NOFOLLOW) == 0);
#endif
    }

    tern::static_files_config config(std::string hosted_path = "/") const {
        tern::static_files_config c;
        c.hosted_path = std::move(hosted_path);
        c.directory = root.string();
        return c;
    }
};

using fields = std::vector<tern::header_field>;

/// What the static layer made of one request: its outcome and the response it filled.
struct answer {
    outcome what = outcome::not_handled;
    tern::detail::response res;

    /// The value of the first field named `name` (exact case, as the layer sets it), or empty.
    std::string_view field(std::string_view name) const {
        for (const auto& [n, v] : res.fields) {
            if (n == name) return v;
        }
        return {};
    }
};

/// The static roots these tests keep open, as one event loop keeps them (the unit tests run
/// on one thread).
inline tern::detail::root_cache& test_roots() {
    static tern::detail::root_cache roots;
    return roots;
}

/// Asks `files` for `method` `target` (a path, with a "?query" or not) with `headers`.
inline answer serve(const static_files& files, std::string_view method, std::string_view target,
                    const fields& headers = {}) {
    tern::detail::request req;
    req.method = method;
    req.target = target;
    const std::size_t query = target.find('?');
    req.path = target.substr(0, query);
    if (query != std::string_view::npos) req.query = target.substr(query + 1);
    req.headers = headers;
    req.is_head = method == "HEAD";
    answer a;
    a.what = files.serve(req, a.res, test_roots());
    return a;
}

inline answer get(const static_files& files, std::string_view target, const fields& headers = {}) {
    return serve(files, "GET", target, headers);
}

/// The bytes the connection would send for a file answer: read from its open file, or the
/// bytes a loop's file cache held (`res.body`).
inline std::string body_of(const answer& a) {
    const auto& f = a.res.file;
    if (!f.file) return a.res.body;
    std::string out(static_cast<std::size_t>(f.length), '\0');
    const ssize_t n =
        tern::detail::platform::read_file_at(f.file.get(), out.data(), out.size(), f.offset);
    REQUIRE(n == static_cast<ssize_t>(out.size()));
    return out;
}

/// The Content-Length of a file answer.
inline std::uint64_t length_of(const answer& a) {
    return a.res.file.file ? a.res.file.length : a.res.body.size();
}

/// Never a file outside the rules: anything but a 200/206 with a body (from an open file, or
/// from the loop's file cache).
inline bool served(const answer& a) {
    return a.what == outcome::answered &&
           (a.res.file.file || a.res.status == 200 || a.res.status == 206);
}

}  // namespace static_test
