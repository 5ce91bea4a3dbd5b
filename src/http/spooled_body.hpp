#pragma once
// A request body kept in an unnamed temporary file instead of memory (a large upload):
// written as it arrives, then mapped read-only, so the rest of tern reads it as a string
// view (forms, multipart, JSON) while it stays in the page cache, not in the heap.

#include <cstdint>
#include <memory>
#include <string_view>

namespace tern::detail {

class spool_quota;

class spooled_body {
public:
    /// What became of bytes handed to the file.
    enum class outcome {
        stored,
        full,    ///< the server's spool quota cannot hold them now (503, docs/uploads.md)
        failed,  ///< the file could not take them: no space, an I/O error (500)
    };

    /// An unnamed file in `dir` (empty: $TMPDIR, else /tmp), removed when closed (O_TMPFILE,
    /// or a named file unlinked at once: platform/files.hpp), whose bytes count
    /// against `quota` (null: no bound) until it closes. Null when it cannot be created.
    static std::shared_ptr<spooled_body> create(std::string_view dir, spool_quota* quota);
    ~spooled_body();
    spooled_body(const spooled_body&) = delete;
    spooled_body& operator=(const spooled_body&) = delete;

    /// Takes room in the quota for a body of `total` bytes before they arrive (a declared
    /// length), so a body that cannot fit is refused before its first byte.
    outcome reserve(std::uint64_t total) noexcept;
    /// Appends `data` (taking what the reservation lacks from the quota).
    outcome append(std::string_view data) noexcept;
    /// The body is complete: maps the file read-only. False when it cannot be mapped.
    bool finish() noexcept;
    /// The body (after finish()).
    std::string_view view() const noexcept;
    /// Bytes written so far.
    std::uint64_t size() const noexcept { return size_; }
    /// Bytes the body holds room for: its declared length, or size() when that is more.
    std::uint64_t reserved() const noexcept { return reserved_; }
    /// The open file (read it with pread(2) to stream it without mapping it all).
    int fd() const noexcept { return fd_; }

    spooled_body(int fd, std::shared_ptr<spool_quota> quota) noexcept;

private:
    int fd_;
    std::shared_ptr<spool_quota> quota_;
    std::uint64_t reserved_ = 0;  // bytes taken from quota_ (when there is one)
    std::uint64_t size_ = 0;
    const void* map_ = nullptr;
};

}  // namespace tern::detail
