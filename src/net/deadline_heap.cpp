#include "net/deadline_heap.hpp"

#include <utility>

namespace tern::detail {

void deadline_heap::place(std::size_t i, slot s) noexcept {
    heap_[i] = s;
    s.entry->slot_ = static_cast<std::uint32_t>(i);
}

void deadline_heap::sift_up(std::size_t i) noexcept {
    const slot moving = heap_[i];
    while (i > 0) {
        const std::size_t parent = (i - 1) / 2;
        if (!(moving.at < heap_[parent].at)) break;
        place(i, heap_[parent]);
        i = parent;
    }
    place(i, moving);
}

void deadline_heap::sift_down(std::size_t i) noexcept {
    const slot moving = heap_[i];
    const std::size_t n = heap_.size();
    for (;;) {
        std::size_t child = 2 * i + 1;
        if (child >= n) break;
        if (child + 1 < n && heap_[child + 1].at < heap_[child].at) ++child;
        if (!(heap_[child].at < moving.at)) break;
        place(i, heap_[child]);
        i = child;
    }
    place(i, moving);
}

void deadline_heap::schedule(deadline_entry& e, clock::time_point when) {
    e.at_ = when;
    if (!e.scheduled()) {
        heap_.push_back({when, &e});  // may throw: e is still unscheduled then
        e.slot_ = static_cast<std::uint32_t>(heap_.size() - 1);
        sift_up(e.slot_);
        return;
    }
    const std::size_t i = e.slot_;
    const clock::time_point before = heap_[i].at;
    heap_[i].at = when;
    if (when < before) {
        sift_up(i);
    } else {
        sift_down(i);
    }
}

void deadline_heap::remove_at(std::size_t i) noexcept {
    deadline_entry* gone = heap_[i].entry;
    const slot last = heap_.back();
    heap_.pop_back();
    gone->slot_ = deadline_entry::unscheduled;
    if (i == heap_.size()) return;  // it was the last
    place(i, last);
    if (i > 0 && last.at < heap_[(i - 1) / 2].at) {
        sift_up(i);
    } else {
        sift_down(i);
    }
}

void deadline_heap::unschedule(deadline_entry& e) noexcept {
    if (e.scheduled()) remove_at(e.slot_);
}

deadline_entry* deadline_heap::pop_due(clock::time_point now) noexcept {
    if (heap_.empty() || now < heap_.front().at) return nullptr;
    deadline_entry* due = heap_.front().entry;
    remove_at(0);
    return due;
}

}  // namespace tern::detail
