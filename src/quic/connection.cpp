// One QUIC connection on the server: see connection.hpp.

#include "quic/connection.hpp"

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <ngtcp2/ngtcp2.h>
#include <ngtcp2/ngtcp2_crypto.h>
#include <ngtcp2/ngtcp2_crypto_gnutls.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <utility>

// Last: GnuTLS's and ngtcp2's functions through the table that loads them on first use.
#include "quic/calls.hpp"

namespace tern::detail::quic {

namespace {

// TLS 1.3 only, as QUIC requires; no early data is enabled on the session (0-RTT off).
constexpr const char* priorities =
    "NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:+AES-128-GCM:+AES-256-GCM:+CHACHA20-POLY1305:"
    "+AES-128-CCM";
constexpr std::size_t max_udp_payload = 1452;

ngtcp2_cid make_cid(const std::vector<std::uint8_t>& bytes) {
    ngtcp2_cid cid{};
    ngtcp2_cid_init(&cid, bytes.data(), bytes.size());
    return cid;
}

ngtcp2_addr addr_of(address& a) { return {a.get(), a.length}; }

address address_of(const ngtcp2_addr& a) {
    address out;
    std::memcpy(&out.storage, a.addr, a.addrlen);
    out.length = a.addrlen;
    return out;
}

bool same_address(const address& a, const address& b) {
    return a.length == b.length && std::memcmp(&a.storage, &b.storage, a.length) == 0;
}

// How often a connection whose path is being validated is written while it waits (below).
constexpr std::uint64_t validation_poll_ns = 250'000'000;

}  // namespace

struct connection::native {
    ngtcp2_conn* conn = nullptr;
    gnutls_session_t session = nullptr;
    ngtcp2_crypto_conn_ref ref{};
    ngtcp2_connection_close_error last_error{};

    ~native() {
        if (conn != nullptr) ngtcp2_conn_del(conn);
        if (session != nullptr) gnutls_deinit(session);
    }
};

// ngtcp2's callbacks, with `user_data` the connection.
struct connection::callbacks {
    static connection& self(void* user_data) { return *static_cast<connection*>(user_data); }

    static void rand(std::uint8_t* dest, std::size_t size, const ngtcp2_rand_ctx* /*ctx*/) {
        (void)gnutls_rnd(GNUTLS_RND_RANDOM, dest, size);
    }

    static int new_cid(ngtcp2_conn* /*conn*/, ngtcp2_cid* cid, std::uint8_t* token,
                       std::size_t size, void* user_data) {
        auto& c = self(user_data);
        // From the endpoint, so that it names this node as every ID of the connection must
        // (a datagram to it reaching another worker's socket is handed over by its first byte).
        std::vector<std::uint8_t> bytes;
        try {
            bytes = c.endpoint_.new_cid();
        } catch (const std::exception&) {
            return NGTCP2_ERR_CALLBACK_FAILURE;
        }
        if (bytes.size() != size) return NGTCP2_ERR_CALLBACK_FAILURE;
        ngtcp2_cid_init(cid, bytes.data(), size);
        const auto reset = c.endpoint_.reset_token(bytes);
        std::memcpy(token, reset.data(), reset.size());
        c.on_cid_(c, bytes, true);
        return 0;
    }

    static int remove_cid(ngtcp2_conn* /*conn*/, const ngtcp2_cid* cid, void* user_data) {
        auto& c = self(user_data);
        c.on_cid_(c, {cid->data, cid->datalen}, false);
        return 0;
    }

    static int handshake_completed(ngtcp2_conn* /*conn*/, void* user_data) {
        auto& c = self(user_data);
        c.handshake_done_ = true;
        if (c.make_sink_) {
            try {
                c.sink_ = c.make_sink_(c, c.remote_);
                if (c.sink_) c.sink_->on_peer_stream_limit(c.max_streams_bidi_);
            } catch (const std::exception&) {
                return NGTCP2_ERR_CALLBACK_FAILURE;  // the connection is closed
            }
        }
        return 0;
    }

    static int stream_data(ngtcp2_conn* conn, std::uint32_t flags, std::int64_t id,
                           std::uint64_t /*offset*/, const std::uint8_t* data, std::size_t size,
                           void* user_data, void* /*stream_user_data*/) {
        auto& c = self(user_data);
        const bool fin = (flags & NGTCP2_STREAM_DATA_FLAG_FIN) != 0;
        c.receiving_ = id;
        c.held_back_ = 0;
        const bool taken = !c.sink_ || c.sink_->on_stream_data(id, {data, size}, fin);
        c.receiving_ = -1;
        if (!taken) return NGTCP2_ERR_CALLBACK_FAILURE;
        // The credit comes back as the bytes are read, but for request-body bytes the sink
        // keeps past its budget (HTTP/3's http3.max_body_memory), whose stream credit waits
        // for give_window. The connection's credit comes back whole: it is shared, and one
        // stream's held bytes must not stop another that may go on.
        const auto held = std::min<std::uint64_t>(std::exchange(c.held_back_, 0), size);
        ngtcp2_conn_extend_max_stream_offset(conn, id, size - held);
        ngtcp2_conn_extend_max_offset(conn, size);
        return 0;
    }

    static int stream_close(ngtcp2_conn* conn, std::uint32_t flags, std::int64_t id,
                            std::uint64_t code, void* user_data, void* /*stream_user_data*/) {
        auto& c = self(user_data);
        if ((flags & NGTCP2_STREAM_CLOSE_FLAG_APP_ERROR_CODE_SET) == 0)
            code = 0x100;  // H3_NO_ERROR
        // A request stream of the client's is done: it may open another in its place once
        // the work begun for it has ended too, which the sink tells (release_stream); with no
        // sink there is none.
        const bool request =
            ngtcp2_is_bidi_stream(id) != 0 && ngtcp2_conn_is_local_stream(conn, id) == 0;
        if (request) ++c.closed_requests_;
        if (c.sink_) {
            c.sink_->on_stream_close(id, code);
        } else if (request) {
            c.release_stream(id);
        }
        return 0;
    }

    static int stream_reset(ngtcp2_conn* /*conn*/, std::int64_t id, std::uint64_t /*final_size*/,
                            std::uint64_t /*code*/, void* user_data, void* /*stream_user_data*/) {
        auto& c = self(user_data);
        if (c.sink_ && !c.sink_->on_stream_reset(id)) return NGTCP2_ERR_CALLBACK_FAILURE;
        return 0;
    }

    static int stop_sending(ngtcp2_conn* /*conn*/, std::int64_t id, std::uint64_t /*code*/,
                            void* user_data, void* /*stream_user_data*/) {
        auto& c = self(user_data);
        if (c.sink_ && !c.sink_->on_stream_reset(id)) return NGTCP2_ERR_CALLBACK_FAILURE;
        return 0;
    }

    static int acked(ngtcp2_conn* /*conn*/, std::int64_t id, std::uint64_t /*offset*/,
                     std::uint64_t size, void* user_data, void* /*stream_user_data*/) {
        auto& c = self(user_data);
        if (c.sink_ && !c.sink_->on_acked(id, size)) return NGTCP2_ERR_CALLBACK_FAILURE;
        return 0;
    }

    static int window_opened(ngtcp2_conn* /*conn*/, std::int64_t id, std::uint64_t /*max_data*/,
                             void* user_data, void* /*stream_user_data*/) {
        auto& c = self(user_data);
        if (c.sink_ && !c.sink_->on_write_unblocked(id)) return NGTCP2_ERR_CALLBACK_FAILURE;
        return 0;
    }

    static int path_validation(ngtcp2_conn* /*conn*/, std::uint32_t /*flags*/,
                               const ngtcp2_path* /*path*/, ngtcp2_path_validation_result /*res*/,
                               void* user_data) {
        self(user_data).validating_ = false;  // validated, failed (back to the old path) or aborted
        return 0;
    }

    static int peer_streams(ngtcp2_conn* /*conn*/, std::uint64_t max_streams, void* user_data) {
        auto& c = self(user_data);
        if (c.sink_) c.sink_->on_peer_stream_limit(max_streams);
        return 0;
    }

    static ngtcp2_conn* get_conn(ngtcp2_crypto_conn_ref* ref) {
        return static_cast<connection::native*>(ref->user_data)->conn;
    }

    static ngtcp2_callbacks table() {
        ngtcp2_callbacks cb{};
        cb.recv_client_initial = ngtcp2_crypto_recv_client_initial_cb;
        cb.recv_crypto_data = ngtcp2_crypto_recv_crypto_data_cb;
        cb.encrypt = ngtcp2_crypto_encrypt_cb;
        cb.decrypt = ngtcp2_crypto_decrypt_cb;
        cb.hp_mask = ngtcp2_crypto_hp_mask_cb;
        cb.update_key = ngtcp2_crypto_update_key_cb;
        cb.delete_crypto_aead_ctx = ngtcp2_crypto_delete_crypto_aead_ctx_cb;
        cb.delete_crypto_cipher_ctx = ngtcp2_crypto_delete_crypto_cipher_ctx_cb;
        cb.get_path_challenge_data = ngtcp2_crypto_get_path_challenge_data_cb;
        cb.version_negotiation = ngtcp2_crypto_version_negotiation_cb;
        cb.rand = rand;
        cb.get_new_connection_id = new_cid;
        cb.remove_connection_id = remove_cid;
        cb.handshake_completed = handshake_completed;
        cb.recv_stream_data = stream_data;
        cb.stream_close = stream_close;
        cb.stream_reset = stream_reset;
        cb.stream_stop_sending = stop_sending;
        cb.acked_stream_data_offset = acked;
        cb.extend_max_stream_data = window_opened;
        cb.extend_max_remote_streams_bidi = peer_streams;
        cb.path_validation = path_validation;
        return cb;
    }
};

connection::connection(endpoint& ep, const tls_credentials& credentials, const address& local,
                       const address& remote, const connection_settings& settings,
                       std::uint64_t now, cid_fn on_cid, wake_fn on_wake)
    : endpoint_(ep),
      on_cid_(std::move(on_cid)),
      on_wake_(std::move(on_wake)),
      max_streams_bidi_(settings.max_streams_bidi),
      local_(local),
      remote_(remote),
      native_(std::make_unique<native>()) {
    const auto& ids = ep.last_accepted();
    ngtcp2_settings s;
    ngtcp2_settings_default(&s);
    s.initial_ts = now;
    s.max_tx_udp_payload_size = max_udp_payload;
    s.handshake_timeout = static_cast<ngtcp2_duration>(settings.handshake_timeout.count());
    s.token = {const_cast<std::uint8_t*>(ids.token.data()), ids.token.size()};
    ngtcp2_transport_params p;
    ngtcp2_transport_params_default(&p);
    p.initial_max_streams_bidi = settings.max_streams_bidi;
    p.initial_max_streams_uni = 3;  // HTTP/3's control and QPACK streams
    p.initial_max_stream_data_bidi_remote = settings.max_stream_data;
    p.initial_max_stream_data_uni = settings.max_stream_data;
    p.initial_max_data = settings.max_data;
    p.max_idle_timeout = static_cast<ngtcp2_duration>(settings.idle_timeout.count());
    p.original_dcid = make_cid(ids.original);
    p.retry_scid = make_cid(ids.retry);
    p.retry_scid_present = 1;
    const auto scid_bytes = ep.new_cid();
    const auto reset = ep.reset_token(scid_bytes);
    std::memcpy(p.stateless_reset_token, reset.data(), reset.size());
    p.stateless_reset_token_present = 1;

    const auto dcid = make_cid(ids.client);
    const auto scid = make_cid(scid_bytes);
    ngtcp2_path path{addr_of(local_), addr_of(remote_), nullptr};
    const auto cb = callbacks::table();
    if (ngtcp2_conn_server_new(&native_->conn, &dcid, &scid, &path, ids.version, &cb, &s, &p,
                               nullptr, this) != 0) {
        throw std::runtime_error("tern: http3: ngtcp2 cannot make a connection");
    }
    on_cid_(*this, scid_bytes, true);
    // Until the client hears from the connection it keeps sending to the ID the Retry gave
    // it: a ClientHello over two datagrams, or an Initial sent again because the answer was
    // lost, must reach this connection, not let a second one in on the same token.
    on_cid_(*this, ids.retry, true);
    auto& n = *native_;
    n.ref.get_conn = callbacks::get_conn;
    n.ref.user_data = native_.get();
    static const gnutls_datum_t alpn{
        const_cast<unsigned char*>(reinterpret_cast<const unsigned char*>("h3")), 2};
    if (gnutls_init(&n.session, GNUTLS_SERVER | GNUTLS_NO_AUTO_SEND_TICKET) != 0 ||
        gnutls_priority_set_direct(n.session, priorities, nullptr) != 0 ||
        ngtcp2_crypto_gnutls_configure_server_session(n.session) != 0 ||
        gnutls_credentials_set(n.session, GNUTLS_CRD_CERTIFICATE, credentials.get()) != 0 ||
        gnutls_alpn_set_protocols(n.session, &alpn, 1, GNUTLS_ALPN_MANDATORY) != 0) {
        throw std::runtime_error("tern: http3: GnuTLS cannot make a session");
    }
    gnutls_session_set_ptr(n.session, &n.ref);
    ngtcp2_conn_set_tls_native_handle(n.conn, n.session);
}

connection::~connection() = default;

bool connection::receive(std::span<const std::uint8_t> bytes, const address& remote,
                         std::uint64_t now, datagram_batch& out) {
    busy_ = true;
    const bool alive = read(bytes, remote, now, out);
    busy_ = false;
    return alive;
}

bool connection::read(std::span<const std::uint8_t> bytes, const address& remote, std::uint64_t now,
                      datagram_batch& out) {
    // The datagram's own path, which ngtcp2 adopts only for a packet that decrypts, and
    // then validates (PATH_CHALLENGE) while sending at most 3x what came from it (RFC 9000
    // 8.1, 9.3). The connection's peer is ngtcp2's current path, never a datagram's source.
    address from = remote;
    ngtcp2_path path{addr_of(local_), addr_of(from), nullptr};
    ngtcp2_pkt_info pi{};
    const int rv = ngtcp2_conn_read_pkt(native_->conn, &path, &pi, bytes.data(), bytes.size(), now);
    if (rv == NGTCP2_ERR_DRAINING || rv == NGTCP2_ERR_CLOSING) return false;
    if (rv != 0) return fail(rv, now, out);
    // Moved (a new address's packet decrypted): ngtcp2 validates the new path.
    if (follow_path()) validating_ = true;
    return flush(now, out);
}

bool connection::flush(std::uint64_t now, datagram_batch& out) {
    woken_ = false;
    constexpr std::size_t max_vecs = 16;
    std::array<stream_vec, max_vecs> vecs{};
    static_assert(sizeof(stream_vec) == sizeof(ngtcp2_vec) &&
                  offsetof(stream_vec, len) == offsetof(ngtcp2_vec, len));
    // One packet's buffer: with NGTCP2_WRITE_STREAM_FLAG_MORE, ngtcp2 goes on filling the
    // packet it began (NGTCP2_ERR_WRITE_MORE) in the same buffer, so it changes only once a
    // packet is complete.
    auto room = out.room(max_udp_payload);
    for (;;) {
        std::int64_t id = -1;
        bool fin = false;
        long count = 0;
        if (sink_ && ngtcp2_conn_get_max_data_left(native_->conn) != 0) {
            count = sink_->next_write(id, fin, vecs);
            if (count < 0) return fail(NGTCP2_ERR_CALLBACK_FAILURE, now, out);
        }
        ngtcp2_path_storage ps;
        ngtcp2_path_storage_zero(&ps);
        ngtcp2_pkt_info pi{};
        ngtcp2_ssize taken = -1;
        std::uint32_t flags = NGTCP2_WRITE_STREAM_FLAG_MORE;
        if (fin) flags |= NGTCP2_WRITE_STREAM_FLAG_FIN;
        const auto n = ngtcp2_conn_writev_stream(
            native_->conn, &ps.path, &pi, room.data(), room.size(), &taken, flags, id,
            reinterpret_cast<const ngtcp2_vec*>(vecs.data()), static_cast<std::size_t>(count), now);
        if (n < 0) {
            switch (n) {
                case NGTCP2_ERR_STREAM_DATA_BLOCKED:
                    sink_->on_write_blocked(id);
                    continue;
                case NGTCP2_ERR_STREAM_SHUT_WR:
                    sink_->on_write_shut(id);
                    continue;
                case NGTCP2_ERR_WRITE_MORE:
                    // The packet has room for more: the bytes taken count, and it is filled on.
                    if (!sink_->on_written(id, static_cast<std::size_t>(taken))) {
                        return fail(NGTCP2_ERR_CALLBACK_FAILURE, now, out);
                    }
                    continue;
                default:
                    return fail(static_cast<int>(n), now, out);
            }
        }
        if (taken >= 0 && id >= 0 && !sink_->on_written(id, static_cast<std::size_t>(taken))) {
            return fail(NGTCP2_ERR_CALLBACK_FAILURE, now, out);
        }
        if (n == 0) {
            follow_path();  // a validation that failed went back to the old path
            return true;
        }
        // To the path ngtcp2 wrote the packet for: the current one, or a path being
        // validated (a PATH_CHALLENGE, within its amplification limit).
        out.commit(address_of(ps.path.remote), static_cast<std::size_t>(n));
        room = out.room(max_udp_payload);
    }
}

bool connection::follow_path() {
    const auto current = address_of(ngtcp2_conn_get_path(native_->conn)->remote);
    if (same_address(current, remote_)) return false;
    remote_ = current;
    return true;
}

bool connection::fail(int error, std::uint64_t now, datagram_batch& out) {
    // Tell the peer why (a CONNECTION_CLOSE), then forget the connection: with the layer
    // above's own code when it refused what came (HTTP/3's), else with QUIC's for `error`.
    if (error == NGTCP2_ERR_CALLBACK_FAILURE && sink_ && sink_->failure() != 0) {
        ngtcp2_connection_close_error_set_application_error(&native_->last_error, sink_->failure(),
                                                            nullptr, 0);
    } else {
        ngtcp2_connection_close_error_set_transport_error_liberr(&native_->last_error, error,
                                                                 nullptr, 0);
    }
    send_close(now, out);
    return false;
}

void connection::send_close(std::uint64_t now, datagram_batch& out) {
    remote_ = address_of(ngtcp2_conn_get_path(native_->conn)->remote);
    ngtcp2_path path{addr_of(local_), addr_of(remote_), nullptr};
    ngtcp2_pkt_info pi{};
    const auto room = out.room(max_udp_payload);
    const auto n = ngtcp2_conn_write_connection_close(native_->conn, &path, &pi, room.data(),
                                                      room.size(), &native_->last_error, now);
    if (n > 0) out.commit(remote_, static_cast<std::size_t>(n));
}

void connection::close(std::uint64_t code, std::uint64_t now, datagram_batch& out) {
    ngtcp2_connection_close_error_set_application_error(&native_->last_error, code, nullptr, 0);
    send_close(now, out);
}

bool connection::write(std::uint64_t now, datagram_batch& out) {
    busy_ = true;
    const bool alive = flush(now, out);
    busy_ = false;
    return alive;
}

std::int64_t connection::open_uni_stream() {
    std::int64_t id = -1;
    if (ngtcp2_conn_open_uni_stream(native_->conn, &id, nullptr) != 0) return -1;
    return id;
}

void connection::shutdown_write(std::int64_t id, std::uint64_t code) {
    ngtcp2_conn_shutdown_stream_write(native_->conn, id, code);
    want_write();
}

void connection::shutdown_read(std::int64_t id, std::uint64_t code) {
    ngtcp2_conn_shutdown_stream_read(native_->conn, id, code);
    want_write();
}

void connection::release_stream(std::int64_t /*id*/) {
    // No more places than request streams have closed: a sink that told one twice cannot
    // raise the peer's limit past max_streams_bidi open at once.
    if (released_requests_ == closed_requests_) return;
    ++released_requests_;
    ngtcp2_conn_extend_max_streams_bidi(native_->conn, 1);
    want_write();  // the MAX_STREAMS (inside a call of the connection's, the flush after it)
}

void connection::hold_window(std::int64_t id, std::uint64_t n) {
    if (id == receiving_) held_back_ += n;
}

void connection::give_window(std::int64_t id, std::uint64_t n) {
    if (ngtcp2_conn_extend_max_stream_offset(native_->conn, id, n) == 0) want_write();
}

void connection::want_write() {
    if (busy_ || woken_) return;
    woken_ = true;
    if (on_wake_) on_wake_(*this);
}

std::uint64_t connection::expiry() const noexcept {
    const auto at = ngtcp2_conn_get_expiry(native_->conn);
    // ngtcp2 0.12 notices that a path validation timed out (and goes back to the old path)
    // only when it writes, and sets no timer for it once the new path's amplification limit
    // stops its probes: a client that only acknowledges (a download) would then wait for the
    // idle timeout. So such a connection is written every 250 ms until the validation ends.
    return validating_ ? std::min(at, last_poll_ + validation_poll_ns) : at;
}

bool connection::on_expiry(std::uint64_t now, datagram_batch& out) {
    last_poll_ = now;
    busy_ = true;
    const bool alive = ngtcp2_conn_handle_expiry(native_->conn, now) == 0 && flush(now, out);
    busy_ = false;
    return alive;
}

std::vector<std::vector<std::uint8_t>> connection::cids() const {
    std::vector<ngtcp2_cid> ids(ngtcp2_conn_get_num_scid(native_->conn));
    ngtcp2_conn_get_scid(native_->conn, ids.data());
    std::vector<std::vector<std::uint8_t>> out;
    out.reserve(ids.size());
    for (const auto& id : ids) out.emplace_back(id.data, id.data + id.datalen);
    return out;
}

}  // namespace tern::detail::quic
