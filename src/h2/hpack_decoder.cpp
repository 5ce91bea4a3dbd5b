// The HPACK decoder (RFC 7541 3, 6): one representation at a time, counted against the
// block's limits as it goes. A string is copied only when it must be: a Huffman-coded one
// is decoded into the scratch buffer, at most as many bytes as the limits still allow (or
// the dynamic table can hold, when it is to be inserted); a raw one is delivered as a view
// into the block; a table entry as a view into the table.

#include "h2/hpack.hpp"

#include <algorithm>
#include <limits>

namespace tern::h2::hpack {

namespace {

constexpr std::uint32_t no_update_pending = std::numeric_limits<std::uint32_t>::max();

std::string_view view_of(const std::uint8_t* data, std::size_t size) noexcept {
    return {reinterpret_cast<const char*>(data), size};
}

}  // namespace

decoder::decoder(std::uint32_t max_table_size)
    : table_(max_table_size), max_table_size_(max_table_size), smallest_(no_update_pending) {}

void decoder::set_max_table_size(std::uint32_t max_table_size) {
    max_table_size_ = max_table_size;
    if (max_table_size > table_.max_capacity()) {
        table_.set_max_capacity(max_table_size);  // the table's size stays the peer's choice
    } else if (max_table_size < table_.capacity()) {
        // The peer's encoder must tell it has shrunk its table, at the next block's start,
        // with a size no larger than the smallest advertised meanwhile (RFC 7541 4.2).
        table_.set_capacity(max_table_size);
        update_required_ = true;
        smallest_ = std::min(smallest_, max_table_size);
    }
}

void decoder::begin(std::span<const std::uint8_t> block, const decode_limits& limits) noexcept {
    in_ = block.data();
    end_ = in_ + block.size();
    limits_ = limits;
    fields_ = 0;
    list_size_ = 0;
    status_ = decode_status::ok;
    at_start_ = true;
}

bool decoder::fail() noexcept {
    status_ = decode_status::compression_error;
    in_ = end_;
    return false;
}

bool decoder::next(field& out) {
    while (in_ != end_) {
        const std::uint8_t first = *in_;
        if ((first & 0xe0U) == 0x20U) {
            // A dynamic table size update (6.3): only before the block's first field (4.2).
            std::uint32_t size = 0;
            if (!at_start_ || !read_integer(5, size)) return fail();
            if (size > std::min(smallest_, max_table_size_)) return fail();
            smallest_ = no_update_pending;
            update_required_ = false;
            table_.set_capacity(size);
            continue;
        }
        if (update_required_) return fail();
        at_start_ = false;
        bool deliver = false;
        if ((first & 0x80U) != 0) {
            std::uint32_t index = 0;
            if (!read_integer(7, index)) return fail();
            deliver = indexed(index, out);  // 6.1
        } else if ((first & 0x40U) != 0) {
            deliver = literal(6, true, out);  // 6.2.1, with incremental indexing
        } else {
            deliver = literal(4, false, out);  // 6.2.2 without indexing, 6.2.3 never indexed
        }
        if (deliver) return true;
        if (status_ == decode_status::compression_error) return false;
    }
    // An empty block when an update was required: the update is missing.
    if (update_required_) return fail();
    return false;
}

bool decoder::read_integer(unsigned prefix_bits, std::uint32_t& value) noexcept {
    // 5.1. Values past 2^32 - 1, or more than five continuation bytes (zero padding
    // included), are refused, as nghttp2 refuses them: nothing in HPACK needs more.
    const std::uint32_t mask = (1U << prefix_bits) - 1;
    std::uint64_t total = *in_++ & mask;
    if (total < mask) {
        value = static_cast<std::uint32_t>(total);
        return true;
    }
    for (unsigned shift = 0;; shift += 7) {
        if (in_ == end_ || shift > 28) return false;
        const std::uint8_t byte = *in_++;
        total += static_cast<std::uint64_t>(byte & 0x7fU) << shift;
        if (total > std::numeric_limits<std::uint32_t>::max()) return false;
        if ((byte & 0x80U) == 0) break;
    }
    value = static_cast<std::uint32_t>(total);
    return true;
}

bool decoder::read_string(string_ref& out) noexcept {
    if (in_ == end_) return false;
    out.huffman = (*in_ & 0x80U) != 0;
    std::uint32_t size = 0;
    if (!read_integer(7, size)) return false;
    if (size > static_cast<std::size_t>(end_ - in_)) return false;
    out.data = in_;
    out.size = size;
    in_ += size;
    return true;
}

bool decoder::admit(std::size_t name_size, std::size_t value_size) noexcept {
    if (status_ != decode_status::ok) return false;
    if (fields_ >= limits_.max_field_count) {
        status_ = decode_status::too_many_fields;
        return false;
    }
    const std::size_t room = limits_.max_list_size - list_size_;
    if (name_size > room || value_size > room - name_size ||
        entry_overhead > room - name_size - value_size) {
        status_ = decode_status::too_large;
        return false;
    }
    ++fields_;
    list_size_ += name_size + value_size + entry_overhead;
    return true;
}

bool decoder::indexed(std::uint32_t index, field& out) {
    if (index == 0) return fail();
    out.never_indexed = false;
    if (index <= static_table_length) {
        const static_entry& entry = static_table_entry(index);
        if (!admit(entry.name.size(), entry.value.size())) return false;
        out.name = entry.name;
        out.value = entry.value;
        return true;
    }
    const std::size_t i = index - static_table_length - 1;
    if (i >= table_.count()) return fail();
    const std::size_t name_size = table_.name_size(i);
    // Counted before anything is copied: a bomb of references to one large entry stops at
    // the limit, with nothing materialized for the references past it.
    if (!admit(name_size, table_.value_size(i))) return false;
    if (table_.view(i, out.name, out.value)) return true;
    // The entry wraps around the end of the table's ring: a copy, for one contiguous view.
    scratch_.clear();
    table_.append_name(i, scratch_);
    table_.append_value(i, scratch_);
    out.name = std::string_view(scratch_).substr(0, name_size);
    out.value = std::string_view(scratch_).substr(name_size);
    return true;
}

bool decoder::literal(unsigned prefix_bits, bool incremental, field& out) {
    const bool never_indexed = (*in_ & 0xf0U) == 0x10U;
    std::uint32_t name_index = 0;
    if (!read_integer(prefix_bits, name_index)) return fail();
    string_ref name_literal;
    std::size_t table_entry = 0;
    if (name_index == 0) {
        if (!read_string(name_literal)) return fail();
    } else if (name_index > static_table_length) {
        table_entry = name_index - static_table_length - 1;
        if (table_entry >= table_.count()) return fail();
    }
    string_ref value_literal;
    if (!read_string(value_literal)) return fail();

    // What may be copied: the bytes the limits still allow a field to take, or what the
    // dynamic table can hold when the field goes into it; nothing for a field neither
    // delivered nor inserted (its Huffman strings are only checked).
    std::size_t limit = 0;
    if (status_ == decode_status::ok) {
        const std::size_t room = limits_.max_list_size - list_size_;
        limit = room > entry_overhead ? room - entry_overhead : 0;
    }
    if (incremental) limit = std::max<std::size_t>(limit, table_.capacity());
    scratch_.clear();
    bool over = false;  // the name and value are longer than `limit`: not copied whole

    // The name: a view into the block, the static table or the dynamic table, or a copy in
    // the scratch buffer from `name_in_scratch` on.
    std::string_view name;
    std::string_view ignored;
    bool name_in_scratch = false;
    if (name_index == 0) {
        if (!copy_string(name_literal, limit, name, over)) return fail();
        name_in_scratch = name_literal.huffman;
    } else if (name_index <= static_table_length) {
        name = static_table_entry(name_index).name;
    } else if (incremental || !table_.view(table_entry, name, ignored)) {
        // Inserting may evict the entry the name comes from (RFC 7541 4.4), so it is
        // copied first; so is a name that wraps around the end of the table's ring.
        if (table_.name_size(table_entry) <= limit) {
            table_.append_name(table_entry, scratch_);
            name_in_scratch = true;
        } else {
            over = true;
        }
    }
    const std::size_t name_size = name_in_scratch ? scratch_.size() : name.size();

    std::string_view value;
    const std::size_t value_offset = scratch_.size();
    const std::size_t value_limit = limit > value_offset ? limit - value_offset : 0;
    if (!copy_string(value_literal, value_limit, value, over)) return fail();
    // Views into the scratch buffer are taken once it has stopped growing.
    if (name_in_scratch) name = std::string_view(scratch_).substr(0, name_size);
    if (value_literal.huffman) value = std::string_view(scratch_).substr(value_offset);

    if (over) {
        // Longer than the limits allow, and than the table holds.
        if (incremental) table_.clear();
        if (status_ == decode_status::ok) {
            status_ = fields_ >= limits_.max_field_count ? decode_status::too_many_fields
                                                         : decode_status::too_large;
        }
        return false;
    }
    if (incremental) table_.insert(name, value);
    if (!admit(name.size(), value.size())) return false;
    out.name = name;
    out.value = value;
    out.never_indexed = never_indexed;
    return true;
}

bool decoder::copy_string(const string_ref& s, std::size_t limit, std::string_view& out,
                          bool& over) {
    if (!s.huffman) {
        out = view_of(s.data, s.size);
        return true;
    }
    switch (detail::huffman_decode(view_of(s.data, s.size), scratch_, limit)) {
        case detail::huffman_result::ok:
            return true;
        case detail::huffman_result::over:
            over = true;
            return true;
        case detail::huffman_result::invalid:
            break;
    }
    return false;
}

}  // namespace tern::h2::hpack
