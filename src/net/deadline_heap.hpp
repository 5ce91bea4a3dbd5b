#pragma once
// The deadlines of one loop's connections, earliest first, so that the loop needs one timer
// for all of them instead of one per connection (docs/architecture.md, "Deadlines"). An idle
// keep-alive connection then holds a place in a vector (16 bytes) instead of a timer and a
// pending wait (about 430 bytes, 2026-12-04). Transport-free: the worker arms its timer at
// earliest() and pops what is due when it fires.

#include <chrono>
#include <cstdint>
#include <vector>

namespace tern::detail {

class deadline_heap;

/// What a deadline_heap orders: a connection embeds one (as a base) for its one deadline.
class deadline_entry {
public:
    using clock = std::chrono::steady_clock;

    /// Whether it is in a heap now.
    bool scheduled() const noexcept { return slot_ != unscheduled; }
    /// The time it was scheduled for (meaningful while scheduled()).
    clock::time_point scheduled_at() const noexcept { return at_; }

protected:
    deadline_entry() = default;
    ~deadline_entry() = default;
    deadline_entry(const deadline_entry&) = delete;
    deadline_entry& operator=(const deadline_entry&) = delete;

private:
    friend class deadline_heap;
    static constexpr std::uint32_t unscheduled = UINT32_MAX;
    clock::time_point at_{};
    std::uint32_t slot_ = unscheduled;
};

/// A binary min-heap of entries by time, each knowing its own slot, so that moving or
/// removing one costs O(log n). Entries are not owned: an entry must be unscheduled (or
/// popped) before it is destroyed. One thread.
class deadline_heap {
public:
    using clock = deadline_entry::clock;

    /// Puts `e` at `when`, or moves it there when it is scheduled already.
    void schedule(deadline_entry& e, clock::time_point when);
    /// Takes `e` out; nothing when it is not scheduled.
    void unschedule(deadline_entry& e) noexcept;
    /// The earliest time scheduled; time_point::max() when empty.
    clock::time_point earliest() const noexcept {
        return heap_.empty() ? clock::time_point::max() : heap_.front().at;
    }
    /// The earliest entry when it is due at `now` (taken out of the heap), else null.
    deadline_entry* pop_due(clock::time_point now) noexcept;
    bool empty() const noexcept { return heap_.empty(); }
    std::size_t size() const noexcept { return heap_.size(); }

private:
    struct slot {
        clock::time_point at;
        deadline_entry* entry;
    };
    void place(std::size_t i, slot s) noexcept;
    void sift_up(std::size_t i) noexcept;
    void sift_down(std::size_t i) noexcept;
    void remove_at(std::size_t i) noexcept;

    std::vector<slot> heap_;
};

}  // namespace tern::detail
