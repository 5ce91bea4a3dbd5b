// libFuzzer harness of tern's HPACK codec (src/h2/hpack*), differential against nghttp2's.
//
// Byte 0 picks the mode (bit 0).
//
// Differential (bit 0 clear): the rest is a sequence of header blocks decoded, in order, on
// one tern decoder without limits, one tern decoder with small limits (bits 1-7 of byte 0
// pick them) and nghttp2's inflater, so that the dynamic table's state carries from block
// to block. Each block is a 3-byte record header, then its bytes: byte 0 of the record, when
// its top bit is set, first advertises a new SETTINGS_HEADER_TABLE_SIZE (its low 3 bits pick
// one of 8 sizes) to all three decoders, and with bit 6 set too, that is all the record does
// (so that sizes can change twice between blocks); bytes 1-2 are the block's length,
// big-endian (cut to what is left). It traps when:
// - tern's decoder and nghttp2's disagree on accepting a block, or on the fields decoded
//   (names, values, never-indexed);
// - the limited decoder delivers other than the unlimited one's first fields, returns a
//   limit when the fields are within it or not when they pass it, or differs on a
//   compression error; past a limit it must stay in step for the next block.
// The first block both refuse ends the input (the connection would end).
//
// Round trip (bit 0 set): the rest, read with FuzzedDataProvider, chooses responses (a
// status, fields with any bytes, never-index flags) and peer table sizes between them;
// tern's encoder writes them and tern's decoder and nghttp2's inflater must read them back
// exactly (authorization fields come back never-indexed, as tern writes them).

#include "h2/hpack.hpp"
#include "support/hpack_oracle.hpp"

#include <fuzzer/FuzzedDataProvider.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

namespace hpack = tern::h2::hpack;
using hpack::decode_status;
using tern_test::hpack_fields;

void check(bool ok) {
    if (!ok) std::abort();
}

constexpr std::array<std::uint32_t, 8> table_sizes = {0, 32, 64, 256, 1024, 4096, 8192, 65536};

bool within(const hpack_fields& fields, const hpack::decode_limits& limits) {
    if (fields.size() > limits.max_field_count) return false;
    std::size_t size = 0;
    for (const auto& f : fields) size += f.name.size() + f.value.size() + hpack::entry_overhead;
    return size <= limits.max_list_size;
}

void differential(std::string_view in, std::uint8_t choice) {
    hpack::decoder whole;
    hpack::decoder limited;
    tern_test::nghttp2_inflater inflater;
    const hpack::decode_limits limits{static_cast<std::size_t>(choice & 0x0fU) * 2 + 1,
                                      static_cast<std::size_t>(choice >> 4U) * 64 + 40};
    while (in.size() >= 3) {
        const auto record = static_cast<std::uint8_t>(in[0]);
        const std::size_t length =
            static_cast<std::size_t>(static_cast<std::uint8_t>(in[1])) * 256 +
            static_cast<std::uint8_t>(in[2]);
        in.remove_prefix(3);
        const std::string_view block = in.substr(0, length);
        in.remove_prefix(block.size());
        if ((record & 0x80U) != 0) {
            const auto size = table_sizes[record & 7U];
            whole.set_max_table_size(size);
            limited.set_max_table_size(size);
            check(inflater.change_table_size(size));
            if ((record & 0x40U) != 0) continue;
        }
        hpack_fields ours;
        const auto status = tern_decode(whole, block, ours);
        check(status == decode_status::ok || status == decode_status::compression_error);
        hpack_fields theirs;
        const bool accepted = inflater.inflate(block, theirs);
        check(accepted == (status == decode_status::ok));
        hpack_fields some;
        const auto limited_status = tern_decode(limited, block, some, limits);
        if (!accepted) {
            check(limited_status == decode_status::compression_error);
            return;
        }
        check(ours == theirs);
        // What the limited decoder delivered is the start of the whole list, within limits.
        check(some.size() <= ours.size());
        for (std::size_t i = 0; i < some.size(); ++i) check(some[i] == ours[i]);
        check(within(some, limits));
        if (within(ours, limits)) {
            check(limited_status == decode_status::ok && some.size() == ours.size());
        } else {
            check(limited_status == decode_status::too_large ||
                  limited_status == decode_status::too_many_fields);
            // The field after the last delivered passes the limit that was named.
            const auto& next = ours[some.size()];
            const std::size_t taken = [&] {
                std::size_t size = 0;
                for (const auto& f : some) size += f.name.size() + f.value.size() + 32;
                return size;
            }();
            if (limited_status == decode_status::too_many_fields) {
                check(some.size() == limits.max_field_count);
            } else {
                check(taken + next.name.size() + next.value.size() + 32 > limits.max_list_size);
            }
        }
    }
}

void round_trip(FuzzedDataProvider& data) {
    hpack::encoder encoder(data.ConsumeBool()
                               ? hpack::encoder_table_size
                               : table_sizes[data.ConsumeIntegralInRange<std::size_t>(0, 7)]);
    hpack::decoder decoder;
    tern_test::nghttp2_inflater inflater;
    std::string block;
    while (data.remaining_bytes() > 0) {
        if (data.ConsumeIntegralInRange(0, 7) == 0) {
            const auto size = table_sizes[data.ConsumeIntegralInRange<std::size_t>(0, 7)];
            encoder.set_peer_max_table_size(size);
            decoder.set_max_table_size(size);
            check(inflater.change_table_size(size));
        }
        block.clear();
        encoder.begin_block(block);
        hpack_fields expected;
        const int status = data.ConsumeIntegralInRange(100, 999);
        encoder.status(status, block);
        expected.push_back({":status", std::to_string(status), false});
        const auto count = data.ConsumeIntegralInRange(0, 12);
        for (int i = 0; i < count; ++i) {
            static constexpr std::array<std::string_view, 10> names = {
                "server",         "content-type", "date",          "set-cookie", "cache-control",
                "content-length", "vary",         "authorization", "etag",       "location"};
            std::string name =
                data.ConsumeBool()
                    ? std::string(
                          names[data.ConsumeIntegralInRange<std::size_t>(0, names.size() - 1)])
                    : data.ConsumeRandomLengthString(40);
            std::string value = data.ConsumeRandomLengthString(300);
            const bool never = data.ConsumeBool() && data.ConsumeBool();
            encoder.field(name, value, block, never);
            const bool credential = name == "authorization" || name == "proxy-authorization";
            expected.push_back({std::move(name), std::move(value), never || credential});
        }
        hpack_fields ours;
        check(tern_decode(decoder, block, ours) == decode_status::ok);
        check(ours == expected);
        hpack_fields theirs;
        check(inflater.inflate(block, theirs));
        check(theirs == expected);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    if ((data[0] & 1U) == 0) {
        differential({reinterpret_cast<const char*>(data) + 1, size - 1},
                     static_cast<std::uint8_t>(data[0] >> 1U));
    } else {
        FuzzedDataProvider provider(data + 1, size - 1);
        round_trip(provider);
    }
    return 0;
}
