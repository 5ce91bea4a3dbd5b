#include "tls/context.hpp"

#include "http/request.hpp"
#include "http/token.hpp"

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ocsp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>

// Last: OpenSSL's functions through the table that loads it on first use.
#include "openssl/calls.hpp"

namespace tern::detail {

namespace {

// Mozilla's "intermediate" configuration (v5.7) for TLS 1.2: forward-secret AEAD suites,
// in the server's order of preference. TLS 1.3 suites are OpenSSL's three, all AEAD.
constexpr const char* intermediate_ciphers =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:"
    "DHE-RSA-AES128-GCM-SHA256:DHE-RSA-AES256-GCM-SHA384:DHE-RSA-CHACHA20-POLY1305";
constexpr const char* tls13_suites =
    "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256";
constexpr const char* key_exchange_groups = "X25519:prime256v1:secp384r1";
constexpr std::string_view http11 = "http/1.1";
constexpr std::string_view h2 = "h2";

// OpenSSL's reason for the last failure, and an empty error queue after it.
std::string openssl_reason() {
    std::string why;
    while (const unsigned long e = ERR_get_error()) {
        if (!why.empty()) why += "; ";
        const char* reason = ERR_reason_error_string(e);
        why += reason != nullptr ? reason : "unknown OpenSSL error";
    }
    return why.empty() ? "no reason given" : why;
}

struct bio_deleter {
    void operator()(BIO* b) const noexcept { BIO_free(b); }
};
using bio_ptr = std::unique_ptr<BIO, bio_deleter>;

struct ctx_deleter {
    void operator()(SSL_CTX* c) const noexcept { SSL_CTX_free(c); }
};
using ctx_ptr = std::unique_ptr<SSL_CTX, ctx_deleter>;

// Where a certificate's problem is, for the message: "tls: certificate 0 (cert.pem)".
std::string where(std::size_t index, const tern::tls_certificate& c) {
    std::string w = "tls: certificate " + std::to_string(index);
    w += c.cert_file.empty() ? " (PEM in memory)" : " (" + c.cert_file + ")";
    return w;
}

[[noreturn]] void refuse(std::size_t index, const tern::tls_certificate& c, std::string_view what) {
    std::string message = where(index, c);
    message.append(": ").append(what).append(": ").append(openssl_reason());
    throw std::invalid_argument(message);
}

// The PEM source of one certificate or key: the file when named, else the text.
bio_ptr open_pem(const std::string& file, const std::string& text) {
    if (!file.empty()) return bio_ptr(BIO_new_file(file.c_str(), "r"));
    return bio_ptr(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
}

int give_password(char* buf, int size, int /*rwflag*/, void* user) {
    const auto* password = static_cast<const std::string*>(user);
    if (password->size() > static_cast<std::size_t>(size)) return 0;
    // OpenSSL takes the length returned, not a terminator.
    std::copy(password->begin(), password->end(), buf);
    return static_cast<int>(password->size());
}

void load_chain(SSL_CTX* ctx, std::size_t index, const tern::tls_certificate& c) {
    if (c.cert_file.empty() && c.cert_pem.empty()) {
        throw std::invalid_argument(where(index, c) + ": no cert_file and no cert_pem");
    }
    const bio_ptr in = open_pem(c.cert_file, c.cert_pem);
    if (!in) refuse(index, c, "cannot open the certificate");
    X509* leaf = PEM_read_bio_X509_AUX(in.get(), nullptr, nullptr, nullptr);
    if (leaf == nullptr) refuse(index, c, "no PEM certificate");
    const int used = SSL_CTX_use_certificate(ctx, leaf);
    X509_free(leaf);
    if (used != 1) refuse(index, c, "the certificate is refused");
    // The rest of the file is the chain, in order.
    while (X509* next = PEM_read_bio_X509(in.get(), nullptr, nullptr, nullptr)) {
        if (SSL_CTX_add0_chain_cert(ctx, next) != 1) {
            X509_free(next);
            refuse(index, c, "a chain certificate is refused");
        }
    }
    const unsigned long end = ERR_peek_last_error();
    if (ERR_GET_LIB(end) == ERR_LIB_PEM && ERR_GET_REASON(end) == PEM_R_NO_START_LINE) {
        ERR_clear_error();  // the end of the file, not an error
    } else if (end != 0) {
        refuse(index, c, "the certificate chain cannot be read");
    }
}

void load_key(SSL_CTX* ctx, std::size_t index, const tern::tls_certificate& c) {
    if (c.key_file.empty() && c.key_pem.empty()) {
        throw std::invalid_argument(where(index, c) + ": no key_file and no key_pem");
    }
    const bio_ptr in = open_pem(c.key_file, c.key_pem);
    if (!in) refuse(index, c, "cannot open the key" + (c.key_file.empty() ? "" : " " + c.key_file));
    std::string password = c.password;
    EVP_PKEY* key = PEM_read_bio_PrivateKey(in.get(), nullptr, give_password, &password);
    OPENSSL_cleanse(password.data(), password.size());
    if (key == nullptr) refuse(index, c, "the key cannot be read (a wrong password?)");
    const int used = SSL_CTX_use_PrivateKey(ctx, key);
    EVP_PKEY_free(key);
    if (used != 1) refuse(index, c, "the key is refused");
    if (SSL_CTX_check_private_key(ctx) != 1)
        refuse(index, c, "the key does not match the certificate");
}

std::string lower(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(), ascii_lower);
    return out;
}

// The DNS names of the certificate in `ctx` (its subject alternative names).
std::vector<std::string> certificate_names(SSL_CTX* ctx) {
    std::vector<std::string> names;
    X509* leaf = SSL_CTX_get0_certificate(ctx);
    auto* sans =
        static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(leaf, NID_subject_alt_name, nullptr, nullptr));
    if (sans == nullptr) return names;
    for (int i = 0; i < sk_GENERAL_NAME_num(sans); ++i) {
        const GENERAL_NAME* n = sk_GENERAL_NAME_value(sans, i);
        if (n->type != GEN_DNS) continue;
        const auto* data = ASN1_STRING_get0_data(n->d.dNSName);
        const auto length = static_cast<std::size_t>(ASN1_STRING_length(n->d.dNSName));
        names.push_back(lower({reinterpret_cast<const char*>(data), length}));
    }
    GENERAL_NAMES_free(sans);
    return names;
}

// The callback's argument is the h2_ready_check (a function, so it outlives every SSL_CTX),
// or null when h2 is never offered. The check runs only when h2 would be chosen: the first
// client that offers it loads libnghttp2 (a missing one is then agreed in http/1.1).
int select_alpn(SSL* /*ssl*/, const unsigned char** out, unsigned char* out_length,
                const unsigned char* in, unsigned int in_length, void* arg) {
    const auto h2_ready = reinterpret_cast<h2_ready_check>(arg);
    const std::string_view offered(reinterpret_cast<const char*>(in), in_length);
    auto chosen = choose_alpn(offered, h2_ready != nullptr);
    if (chosen == h2 && !h2_ready()) chosen = choose_alpn(offered, false);
    // RFC 7301 3.2: a client offering only protocols the server does not speak gets the
    // fatal no_application_protocol alert.
    if (chosen.empty()) return SSL_TLSEXT_ERR_ALERT_FATAL;
    *out = reinterpret_cast<const unsigned char*>(chosen.data());
    *out_length = static_cast<unsigned char>(chosen.size());
    return SSL_TLSEXT_ERR_OK;
}

std::string read_ocsp_response(std::size_t index, const tern::tls_certificate& c) {
    const bio_ptr in(BIO_new_file(c.ocsp_response_file.c_str(), "rb"));
    if (!in) refuse(index, c, "cannot open the OCSP response " + c.ocsp_response_file);
    std::string der;
    char buf[4096];
    int n = 0;
    while ((n = BIO_read(in.get(), buf, sizeof buf)) > 0)
        der.append(buf, static_cast<std::size_t>(n));
    // Checked for shape only: a response OpenSSL cannot parse would be stapled uselessly.
    const auto* p = reinterpret_cast<const unsigned char*>(der.data());
    OCSP_RESPONSE* parsed = d2i_OCSP_RESPONSE(nullptr, &p, static_cast<long>(der.size()));
    if (parsed == nullptr)
        refuse(index, c, "the OCSP response " + c.ocsp_response_file + " is not DER OCSP");
    OCSP_RESPONSE_free(parsed);
    return der;
}

// Where each SSL_CTX keeps its context's ticket keys, for the ticket callback.
int ticket_secret_index() {
    static const int index = SSL_CTX_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
    return index;
}

// Session tickets under keys that change every ticket_key_period (tls/ticket_keys.hpp):
// issued under the current period's key, accepted under it or the previous one (then a new
// ticket is issued; over TLS 1.3 always). Each period's keys are derived once (ticket_keys).
int ticket_key_callback(SSL* ssl, unsigned char* key_name, unsigned char* iv,
                        EVP_CIPHER_CTX* cipher, EVP_MAC_CTX* mac, int encrypt) noexcept {
    auto* keys =
        static_cast<ticket_keys*>(SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), ticket_secret_index()));
    if (keys == nullptr) return -1;
    const std::int64_t now = ticket_period_of(std::chrono::system_clock::now());
    try {
        ticket_key key;
        int outcome = 1;
        if (encrypt == 1) {
            key = keys->key_for(now);
            std::copy(key.name.begin(), key.name.end(), key_name);
            if (RAND_bytes(iv, EVP_CIPHER_get_iv_length(EVP_aes_256_cbc())) != 1) return -1;
            if (EVP_EncryptInit_ex(cipher, EVP_aes_256_cbc(), nullptr, key.aes.data(), iv) != 1) {
                return -1;
            }
        } else {
            outcome = keys->find(now, *reinterpret_cast<const unsigned char(*)[16]>(key_name), key);
            if (outcome == 0) return 0;  // an unknown or expired key: a full handshake
            // TLS 1.3 clients use a ticket once (RFC 8446 C.4: OpenSSL's client, browsers),
            // and OpenSSL sends new tickets after a 1.3 resumption only when told to renew:
            // without it, every other connection of such a client is a full handshake.
            if (SSL_version(ssl) == TLS1_3_VERSION) outcome = 2;
            if (EVP_DecryptInit_ex(cipher, EVP_aes_256_cbc(), nullptr, key.aes.data(), iv) != 1) {
                return -1;
            }
        }
        char digest[] = "SHA256";
        const OSSL_PARAM params[] = {
            OSSL_PARAM_construct_octet_string(OSSL_MAC_PARAM_KEY, key.hmac.data(), key.hmac.size()),
            OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
            OSSL_PARAM_construct_end(),
        };
        const int set = EVP_MAC_CTX_set_params(mac, params);
        OPENSSL_cleanse(&key, sizeof key);
        return set == 1 ? outcome : -1;
    } catch (const std::runtime_error&) {
        return encrypt == 1 ? 0 : -1;  // HKDF failed: no ticket, or no resumption
    }
}

int select_certificate(SSL* ssl, int* /*alert*/, void* arg) {
    const char* name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
    if (name == nullptr) return SSL_TLSEXT_ERR_NOACK;  // no name: the first certificate
    SSL_CTX* chosen = static_cast<const tls_context*>(arg)->for_server_name(name);
    if (chosen == nullptr) return SSL_TLSEXT_ERR_NOACK;  // unknown name: the first one
    if (chosen != SSL_get_SSL_CTX(ssl)) SSL_set_SSL_CTX(ssl, chosen);
    return SSL_TLSEXT_ERR_OK;
}

// The profile, the same for every certificate's context.
void apply_profile(SSL_CTX* ctx, tern::tls_profile profile, h2_ready_check h2_ready) {
    const int min_version = profile == tern::tls_profile::modern ? TLS1_3_VERSION : TLS1_2_VERSION;
    SSL_CTX_set_min_proto_version(ctx, min_version);
    SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION);
    // No compression (CRIME), no renegotiation at all, the server's cipher order, and a
    // TCP close without close_notify is an end of input like any other (HTTP's own framing
    // tells a truncated message).
    SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION |
                                 SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_IGNORE_UNEXPECTED_EOF);
    SSL_CTX_set_cipher_list(ctx, intermediate_ciphers);
    SSL_CTX_set_ciphersuites(ctx, tls13_suites);
    SSL_CTX_set1_groups_list(ctx, key_exchange_groups);
    SSL_CTX_set_dh_auto(ctx, 1);  // DHE with a group of at least 2048 bits
    // Writes may be partial and retried from a moved buffer (the connection's output
    // buffer grows); an idle connection gives OpenSSL's record buffers back.
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
                              SSL_MODE_RELEASE_BUFFERS);
    // A record is read with one system call, not two (its 5-byte header, then the rest): what
    // the socket holds is taken at once, and records past the first wait in OpenSSL's buffer,
    // which the transport reads before it waits on the socket again (a read is always an
    // SSL_read first: docs/tls.md, "How it is built").
    SSL_CTX_set_read_ahead(ctx, 1);
    // Resumption by tickets only (stateless): no server-side session cache to bound.
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    static constexpr unsigned char session_context[] = {'t', 'e', 'r', 'n'};
    SSL_CTX_set_session_id_context(ctx, session_context, sizeof session_context);
    // A function pointer through OpenSSL's void* (as dlsym's results come back the other
    // way), read back in select_alpn.
    SSL_CTX_set_alpn_select_cb(ctx, select_alpn, reinterpret_cast<void*>(h2_ready));
}

// Mutual TLS: the CAs that client certificates must chain to, their names sent to the
// client as acceptable issuers, and whether a client without one is refused.
void ask_for_client_certificates(SSL_CTX* ctx, const tern::tls_config& settings) {
    const std::string& file = settings.client_ca_file;
    if (SSL_CTX_load_verify_locations(ctx, file.c_str(), nullptr) != 1) {
        throw std::invalid_argument("tls: client_ca_file (" + file +
                                    ") cannot be loaded: " + openssl_reason());
    }
    STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(file.c_str());
    if (names == nullptr) {
        throw std::invalid_argument("tls: client_ca_file (" + file +
                                    ") holds no certificate: " + openssl_reason());
    }
    SSL_CTX_set_client_CA_list(ctx, names);  // takes them
    int mode = SSL_VERIFY_PEER;
    if (settings.client_certificates == tern::client_certificates::required) {
        mode |= SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
    }
    SSL_CTX_set_verify(ctx, mode, nullptr);
}

}  // namespace

int staple_ocsp(SSL* ssl, void* arg);  // below; a friend of tls_context (its entries)

std::shared_ptr<const tls_context> tls_context::build(const tern::tls_config& settings,
                                                      h2_ready_check h2_ready) {
    if (settings.certificates.empty()) {
        throw std::invalid_argument("tls: no certificate (tls_config::certificates is empty)");
    }
    if (settings.max_handshakes == 0) {
        throw std::invalid_argument("tls: max_handshakes is 0 (no connection could start)");
    }
    std::shared_ptr<tls_context> built(new tls_context());
    built->max_handshakes_ = settings.max_handshakes;
    built->entries_.reserve(settings.certificates.size());
    for (std::size_t i = 0; i < settings.certificates.size(); ++i) {
        const auto& c = settings.certificates[i];
        ERR_clear_error();
        ctx_ptr ctx(SSL_CTX_new(TLS_server_method()));
        if (!ctx) throw std::bad_alloc();
        apply_profile(ctx.get(), settings.profile, h2_ready);
        if (settings.client_certificates != tern::client_certificates::none) {
            ask_for_client_certificates(ctx.get(), settings);
        }
        load_chain(ctx.get(), i, c);
        load_key(ctx.get(), i, c);
        entry e;
        if (c.server_names.empty()) {
            e.names = certificate_names(ctx.get());
        } else {
            for (const auto& n : c.server_names) e.names.push_back(lower(n));
        }
        if (!c.ocsp_response_file.empty()) e.ocsp_response = read_ocsp_response(i, c);
        e.ctx = ctx.release();
        built->entries_.push_back(std::move(e));
    }
    built->tickets_ = std::make_unique<ticket_keys>(new_ticket_secret());
    for (auto& e : built->entries_) {
        SSL_CTX_set_ex_data(e.ctx, ticket_secret_index(), built->tickets_.get());
        SSL_CTX_set_tlsext_ticket_key_evp_cb(e.ctx, ticket_key_callback);
    }
    for (auto& e : built->entries_) {
        if (e.ocsp_response.empty()) continue;
        SSL_CTX_set_tlsext_status_cb(e.ctx, staple_ocsp);
        SSL_CTX_set_tlsext_status_arg(e.ctx, &e);
    }
    SSL_CTX_set_tlsext_servername_callback(built->initial(), select_certificate);
    SSL_CTX_set_tlsext_servername_arg(built->initial(), built.get());
    return built;
}

// OpenSSL asks the context the handshake ended up with (after SNI): its certificate's
// response goes out when the client asked for one (status_request).
int staple_ocsp(SSL* ssl, void* arg) {
    const auto* e = static_cast<const tls_context::entry*>(arg);
    if (SSL_get_tlsext_status_type(ssl) != TLSEXT_STATUSTYPE_ocsp) return SSL_TLSEXT_ERR_NOACK;
    auto* copy = static_cast<unsigned char*>(OPENSSL_malloc(e->ocsp_response.size()));
    if (copy == nullptr) return SSL_TLSEXT_ERR_NOACK;
    std::copy(e->ocsp_response.begin(), e->ocsp_response.end(), copy);
    // OpenSSL takes the copy and frees it with the connection.
    SSL_set_tlsext_status_ocsp_resp(ssl, copy, static_cast<long>(e->ocsp_response.size()));
    return SSL_TLSEXT_ERR_OK;
}

tls_context::~tls_context() {
    for (auto& e : entries_) SSL_CTX_free(e.ctx);
}

SSL_CTX* tls_context::for_server_name(std::string_view server_name) const noexcept {
    for (const auto& e : entries_) {
        for (const auto& n : e.names) {
            if (!n.starts_with("*.") && server_name_matches(n, server_name)) return e.ctx;
        }
    }
    for (const auto& e : entries_) {
        for (const auto& n : e.names) {
            if (n.starts_with("*.") && server_name_matches(n, server_name)) return e.ctx;
        }
    }
    return nullptr;
}

std::string_view choose_alpn(std::string_view client_list, bool offer_h2) noexcept {
    // The server's preference, whatever the client's order: h2, then http/1.1.
    std::string_view chosen;
    while (!client_list.empty()) {
        const auto length = static_cast<unsigned char>(client_list.front());
        if (length == 0 || length + std::size_t{1} > client_list.size()) return {};  // malformed
        const std::string_view protocol = client_list.substr(1, length);
        if (offer_h2 && protocol == h2) return protocol;
        if (protocol == http11) chosen = protocol;
        client_list.remove_prefix(length + std::size_t{1});
    }
    return chosen;
}

bool server_name_matches(std::string_view pattern, std::string_view name) noexcept {
    if (!pattern.starts_with("*.")) return iequals(pattern, name);
    const std::string_view rest = pattern.substr(1);  // ".example.com"
    if (name.size() <= rest.size()) return false;
    const std::string_view label = name.substr(0, name.size() - rest.size());
    return label.find('.') == std::string_view::npos &&
           iequals(rest, name.substr(name.size() - rest.size()));
}

}  // namespace tern::detail
