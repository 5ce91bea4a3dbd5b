#pragma once
// nghttp2's HPACK inflater and deflater, the oracle tern's own codec (src/h2/hpack*) is held
// to by the unit tests (tests/unit/h2/test_hpack*.cpp) and the differential fuzzer
// (fuzz/fuzz_hpack.cpp), and a helper that runs tern's decoder into the same field list.

#include "h2/hpack.hpp"

#include <nghttp2/nghttp2.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tern_test {

/// A decoded field, as both decoders report it.
struct hpack_field {
    std::string name;
    std::string value;
    bool never_indexed = false;
    bool operator==(const hpack_field&) const = default;
};
using hpack_fields = std::vector<hpack_field>;

inline std::span<const std::uint8_t> bytes_of(std::string_view s) noexcept {
    return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

/// Decodes `block` with tern's decoder, appending the fields delivered to `out`.
inline tern::h2::hpack::decode_status tern_decode(tern::h2::hpack::decoder& decoder,
                                                  std::string_view block, hpack_fields& out,
                                                  tern::h2::hpack::decode_limits limits = {
                                                      SIZE_MAX, SIZE_MAX}) {
    return decoder.decode(bytes_of(block), limits,
                          [&](std::string_view name, std::string_view value, bool never) {
                              out.push_back({std::string(name), std::string(value), never});
                          });
}

/// nghttp2's decoder (nghttp2_hd_inflate_hd2), one complete block at a time.
class nghttp2_inflater {
public:
    nghttp2_inflater() { nghttp2_hd_inflate_new(&inflater_); }
    ~nghttp2_inflater() { nghttp2_hd_inflate_del(inflater_); }
    nghttp2_inflater(const nghttp2_inflater&) = delete;
    nghttp2_inflater& operator=(const nghttp2_inflater&) = delete;

    /// SETTINGS_HEADER_TABLE_SIZE, acknowledged (nghttp2_hd_inflate_change_table_size).
    bool change_table_size(std::size_t size) {
        return nghttp2_hd_inflate_change_table_size(inflater_, size) == 0;
    }

    /// Decodes `block` as the whole of a header block; false when nghttp2 refuses it.
    bool inflate(std::string_view block, hpack_fields& out) {
        const auto* in = reinterpret_cast<const std::uint8_t*>(block.data());
        std::size_t left = block.size();
        for (;;) {
            nghttp2_nv nv{};
            int flags = 0;
            const auto n = nghttp2_hd_inflate_hd2(inflater_, &nv, &flags, in, left, 1);
            if (n < 0) return false;
            in += n;
            left -= static_cast<std::size_t>(n);
            if ((flags & NGHTTP2_HD_INFLATE_EMIT) != 0) {
                out.push_back({std::string(reinterpret_cast<char*>(nv.name), nv.namelen),
                               std::string(reinterpret_cast<char*>(nv.value), nv.valuelen),
                               (nv.flags & NGHTTP2_NV_FLAG_NO_INDEX) != 0});
            }
            if ((flags & NGHTTP2_HD_INFLATE_FINAL) != 0) {
                nghttp2_hd_inflate_end_headers(inflater_);
                return true;
            }
        }
    }

private:
    nghttp2_hd_inflater* inflater_ = nullptr;
};

/// nghttp2's encoder (nghttp2_hd_deflate_hd), with its own indexing choices.
class nghttp2_deflater {
public:
    explicit nghttp2_deflater(std::size_t max_table_size = 4096) {
        nghttp2_hd_deflate_new(&deflater_, max_table_size);
    }
    ~nghttp2_deflater() { nghttp2_hd_deflate_del(deflater_); }
    nghttp2_deflater(const nghttp2_deflater&) = delete;
    nghttp2_deflater& operator=(const nghttp2_deflater&) = delete;

    /// The peer's SETTINGS_HEADER_TABLE_SIZE.
    void change_table_size(std::size_t size) {
        nghttp2_hd_deflate_change_table_size(deflater_, size);
    }

    std::string deflate(const hpack_fields& fields) {
        std::vector<nghttp2_nv> nva;
        nva.reserve(fields.size());
        for (const auto& f : fields) {
            nva.push_back({reinterpret_cast<std::uint8_t*>(const_cast<char*>(f.name.data())),
                           reinterpret_cast<std::uint8_t*>(const_cast<char*>(f.value.data())),
                           f.name.size(), f.value.size(),
                           static_cast<std::uint8_t>(f.never_indexed ? NGHTTP2_NV_FLAG_NO_INDEX
                                                                     : NGHTTP2_NV_FLAG_NONE)});
        }
        std::string block(nghttp2_hd_deflate_bound(deflater_, nva.data(), nva.size()), '\0');
        const auto n =
            nghttp2_hd_deflate_hd(deflater_, reinterpret_cast<std::uint8_t*>(block.data()),
                                  block.size(), nva.data(), nva.size());
        block.resize(n < 0 ? 0 : static_cast<std::size_t>(n));
        return block;
    }

private:
    nghttp2_hd_deflater* deflater_ = nullptr;
};

}  // namespace tern_test
