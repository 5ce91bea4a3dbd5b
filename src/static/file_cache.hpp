#pragma once
// The small static files one event loop keeps in memory: a hot file of up to 16 KiB (and
// its precompressed siblings) is answered from its bytes and its stat, with no open, stat,
// read or close. An entry is trusted during the second it was read in; the first request
// after that walks the path again with open_beneath (every rule of the walk applied anew)
// and reads the file again, so a file replaced, changed or deleted is seen within a second.
// One per worker (kept by its root_cache): never shared between threads, no locks.

#include "platform/file_status.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <string>
#include <string_view>
#include <vector>

namespace tern::detail {

struct opened_file;  // static/open_beneath.hpp, which needs the root_cache that holds this

/// One representation held whole: the file itself or a precompressed sibling.
struct cached_variant {
    bool present = false;         ///< false: no such sibling (the answer to "is there a .br?")
    platform::file_status st{};   ///< the stat its ETag and Last-Modified come from
    std::string bytes;            ///< all `st.st_size` bytes, read after that stat
    std::string etag;             ///< its ETag, made once when it is read in
    char last_modified[29] = {};  ///< its Last-Modified (an HTTP date), likewise
};

class mime_types;

/// A regular file as read in: the file itself and, for a directory that serves them, its
/// `.br` and `.gz` siblings (each present or known absent).
struct cached_file {
    cached_variant identity;
    cached_variant br;
    cached_variant gzip;
    /// The Content-Type chosen for it when it was stored, and the table that chose it (a
    /// static directory's mime_types, which outlives the cache): a hit through the same
    /// table takes the type from here instead of looking the name up again.
    const mime_types* typed_by = nullptr;
    std::string_view content_type;

    /// The bytes held by all three.
    std::size_t bytes() const noexcept {
        return identity.bytes.size() + br.bytes.size() + gzip.bytes.size();
    }
};

/// Reads `opened` (a regular file) whole into `out.identity`, and with `siblings` its
/// `.br` and `.gz` siblings beside it. False when one of them is larger than
/// `max_cached_file_bytes` or cannot be read whole (an I/O error, or it changed size since
/// its stat): such a file is answered from its descriptor as before, uncached.
bool read_cacheable(const opened_file& opened, bool siblings, cached_file& out);

/// The largest file (or sibling) a cache entry holds: the size the connection would read
/// into its output buffer anyway (src/http1/connection.cpp, inline_file_bytes).
inline constexpr std::uint64_t max_cached_file_bytes = std::uint64_t{16} * 1024;

class file_cache {
public:
    /// How much one loop keeps.
    struct limits {
        std::size_t max_entries = 64;         ///< files (a file and its siblings are one)
        std::size_t max_bytes = 1024 * 1024;  ///< bytes of content over all entries
    };

    file_cache() = default;
    /// A cache bounded by `bounds` (tests use small ones).
    explicit file_cache(limits bounds) : limits_(bounds) {}

    /// The file `relative` (as open_beneath was given it) below `root`, walked with the
    /// rules `rules` (a directory's options as bits: the same path under other rules is
    /// another entry), when it was read in during the current second; null otherwise (an
    /// older entry is dropped then). The pointer stays valid until the next call.
    const cached_file* find(const std::string& root, unsigned rules, std::string_view relative);

    /// Stores `file` for the key (replacing an entry with that key), read in now; the least
    /// recently used entries leave to keep within the limits. Returns the stored file, or
    /// null when it alone is over `max_bytes` (then nothing is stored).
    const cached_file* store(const std::string& root, unsigned rules, std::string_view relative,
                             cached_file&& file);

    /// Entries held (for tests and docs).
    std::size_t size() const noexcept { return entries_.size(); }
    /// Bytes of content held.
    std::size_t bytes() const noexcept { return bytes_; }

private:
    struct entry {
        std::string root;
        unsigned rules = 0;
        std::string relative;
        std::size_t hash = 0;  ///< of `relative`, compared first
        std::time_t loaded = 0;
        std::uint64_t used = 0;  ///< the tick of its last find or store: least is evicted
        cached_file file;
    };

    std::vector<entry>::iterator locate(const std::string& root, unsigned rules,
                                        std::string_view relative, std::size_t hash);
    void erase(std::vector<entry>::iterator it);

    limits limits_;
    std::vector<entry> entries_;
    std::size_t bytes_ = 0;
    std::uint64_t tick_ = 0;
};

}  // namespace tern::detail
