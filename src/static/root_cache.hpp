#pragma once
// The static roots one event loop keeps open for open_beneath: each root directory is opened
// once and looked at again at most once a second, so a request costs no open and close of
// the root, and a root replaced at its path (deleted and made again, renamed over) is used
// within a second. One per worker (in its loop state): never shared between threads,
// closed with the worker. It also holds the worker's cache of small files (file_cache.hpp),
// the other static state one event loop keeps between requests.

#include "http/file_handle.hpp"
#include "static/file_cache.hpp"

#include <sys/stat.h>

#include <ctime>
#include <string>
#include <vector>

namespace tern::detail {

class root_cache {
public:
    /// The open root directory at `root` (an absolute path), or -1 with errno set. The
    /// descriptor stays valid until the next call.
    int get(const std::string& root);

    /// The loop's cache of small files below these roots.
    file_cache& files() noexcept { return files_; }

private:
    struct entry {
        std::string path;
        file_handle fd;
        dev_t dev;
        ino_t ino;
        std::time_t checked;
    };

    static bool reopen(entry& e);

    static constexpr std::size_t max_entries = 8;  // apps serve a handful of directories
    std::vector<entry> entries_;
    file_cache files_;
};

}  // namespace tern::detail
