#pragma once
// HPACK's two tables (RFC 7541 2.3): the static table of Appendix A, and the dynamic table,
// a first-in first-out list of fields bounded by a size in bytes. Both halves of the codec
// keep a dynamic table: the decoder's mirrors the peer's encoder, the encoder's the peer's
// decoder. Transport-free.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tern::h2::hpack {

/// What an entry counts against a dynamic table beside its name and value (RFC 7541 4.1),
/// and a field against a header list (RFC 9113 6.5.2).
inline constexpr std::size_t entry_overhead = 32;

/// Entries in the static table: indices 1 to 61; the dynamic table's start at 62.
inline constexpr std::size_t static_table_length = 61;

/// A field of the static table.
struct static_entry {
    std::string_view name;
    std::string_view value;
};

/// The static table's entry `index` (1 to 61; the caller checks the range).
const static_entry& static_table_entry(std::size_t index) noexcept;

/// Where a field stands in the static table.
struct static_match {
    std::uint8_t index = 0;  ///< the first entry with the field's name; 0 when none has it
    bool full = false;       ///< `index` has the value too
};

/// Looks `name` (lower case) and `value` up in the static table.
static_match find_static(std::string_view name, std::string_view value) noexcept;

/// The dynamic table (RFC 7541 2.3.2, 4): entries counted as name + value + 32 bytes,
/// evicted oldest first when an insertion or a smaller capacity needs the room (4.3, 4.4).
/// Names and values lie in one ring of bytes allocated when the table is made (or grown),
/// so inserting allocates nothing; an entry may wrap around the ring's end, which `view`
/// reports so the caller can copy it instead.
class dynamic_table {
public:
    /// A table whose capacity may go up to `max_capacity` bytes; it starts at that capacity.
    explicit dynamic_table(std::uint32_t max_capacity);

    /// Raises the highest capacity to `max_capacity` (reallocating, entries kept); a lower
    /// value only lowers the capacity as `set_capacity` does.
    void set_max_capacity(std::uint32_t max_capacity);
    /// Sets the capacity (at most the highest capacity), evicting what no longer fits.
    void set_capacity(std::uint32_t capacity) noexcept;
    /// Adds a field as the newest entry, evicting what it needs; one larger than the
    /// capacity empties the table and is not added (RFC 7541 4.4). Returns whether it was
    /// added. `name` and `value` must not point into this table.
    bool insert(std::string_view name, std::string_view value) noexcept;
    /// Evicts every entry.
    void clear() noexcept;

    std::size_t count() const noexcept { return count_; }                  ///< entries
    std::uint32_t size() const noexcept { return size_; }                  ///< bytes counted
    std::uint32_t capacity() const noexcept { return capacity_; }          ///< bytes allowed
    std::uint32_t max_capacity() const noexcept { return max_capacity_; }  ///< the most allowed

    /// Entry `i` (0 the newest, HPACK index 62 + i; i < count()) as two views into the
    /// table; false, with nothing set, when the entry wraps around the ring's end.
    bool view(std::size_t i, std::string_view& name, std::string_view& value) const noexcept;
    /// Appends entry `i`'s name, then its value, to `out` (whether it wraps or not).
    void append_name(std::size_t i, std::string& out) const;
    void append_value(std::size_t i, std::string& out) const;
    std::size_t name_size(std::size_t i) const noexcept { return at(i).name_size; }
    std::size_t value_size(std::size_t i) const noexcept { return at(i).value_size; }
    /// Whether entry `i` holds this name (and value), or this value.
    bool name_equals(std::size_t i, std::string_view name) const noexcept;
    bool equals(std::size_t i, std::string_view name, std::string_view value) const noexcept;
    bool value_equals(std::size_t i, std::string_view value) const noexcept;
    /// How many entries were ever added (evicted ones too): the entry added as the n-th
    /// (from 1) is entry `inserted() - n` while that is below count(). The numbering goes on
    /// across evictions and capacity changes, so an encoder can find an entry it added
    /// without searching.
    std::uint64_t inserted() const noexcept { return inserted_; }

private:
    struct entry {
        std::uint32_t offset;  // of the name in bytes_; the value follows it
        std::uint32_t name_size;
        std::uint32_t value_size;
    };
    const entry& at(std::size_t i) const noexcept {
        // oldest_ < size and count_ <= size: one subtraction wraps it (no division).
        const std::size_t k = oldest_ + count_ - 1 - i;
        return entries_[k >= entries_.size() ? k - entries_.size() : k];
    }
    /// Where entry `e`'s value begins in the ring.
    std::uint32_t value_offset(const entry& e) const noexcept {
        const std::size_t k = std::size_t{e.offset} + e.name_size;
        return static_cast<std::uint32_t>(k >= bytes_.size() ? k - bytes_.size() : k);
    }
    void evict_oldest() noexcept;
    void write(std::uint32_t offset, std::string_view bytes) noexcept;
    void append(std::uint32_t offset, std::uint32_t size, std::string& out) const;
    bool bytes_equal(std::uint32_t offset, std::string_view bytes) const noexcept;

    std::vector<char> bytes_;     // the ring of names and values, max_capacity_ bytes
    std::vector<entry> entries_;  // the ring of entries, room for max_capacity_ / 32 + 1
    std::size_t oldest_ = 0;      // entries_ index of the oldest entry
    std::size_t count_ = 0;
    std::uint32_t next_ = 0;  // bytes_ offset where the next entry's name goes
    std::uint32_t size_ = 0;
    std::uint32_t capacity_ = 0;
    std::uint32_t max_capacity_ = 0;
    std::uint64_t inserted_ = 0;
};

}  // namespace tern::h2::hpack
