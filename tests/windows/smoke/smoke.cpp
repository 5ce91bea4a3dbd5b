// The smoke test of the Windows dependencies (tests/windows/smoke.sh). Uses every library of
// the prefix scripts/windows-deps.sh builds:
//
//   smoke.exe --catch   one Catch2 test case: llhttp parses a request; zlib, zstd and brotli
//                       round-trip a string; OpenSSL makes a SHA-256 and a TLS server context
//                       with a self-signed certificate made at run time; fmt formats;
//                       nlohmann parses
//   smoke.exe PORT      the same, then an asio TCP server on 127.0.0.1:PORT answers one HTTP
//                       request (with a body fmt and nlohmann make) and exits
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <brotli/decode.h>
#include <brotli/encode.h>
#include <fmt/format.h>
#include <llhttp.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <zlib.h>
#include <zstd.h>
#include <asio.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

namespace {

const std::string sample =
    "tern on Windows: the same bytes back, the same bytes back, the same bytes back";

struct parsed_request {
    std::string url;
    bool complete = false;
    bool ok = false;
    bool get = false;
};

parsed_request parse_with_llhttp(const std::string& request) {
    parsed_request out;
    llhttp_settings_t settings;
    llhttp_settings_init(&settings);
    settings.on_url = [](llhttp_t* p, const char* at, size_t length) {
        static_cast<parsed_request*>(p->data)->url.append(at, length);
        return 0;
    };
    settings.on_message_complete = [](llhttp_t* p) {
        static_cast<parsed_request*>(p->data)->complete = true;
        return 0;
    };
    llhttp_t parser;
    llhttp_init(&parser, HTTP_REQUEST, &settings);
    parser.data = &out;
    // Used outside the Catch2 case too (the server): no Catch2 assertion here.
    out.ok = llhttp_execute(&parser, request.data(), request.size()) == HPE_OK;
    out.get = llhttp_get_method(&parser) == HTTP_GET;
    return out;
}

std::string zlib_round_trip(const std::string& in) {
    uLongf packed_size = compressBound(static_cast<uLong>(in.size()));
    std::vector<Bytef> packed(packed_size);
    REQUIRE(compress(packed.data(), &packed_size, reinterpret_cast<const Bytef*>(in.data()),
                     static_cast<uLong>(in.size())) == Z_OK);
    std::string out(in.size(), '\0');
    uLongf out_size = static_cast<uLongf>(out.size());
    REQUIRE(uncompress(reinterpret_cast<Bytef*>(out.data()), &out_size, packed.data(),
                       packed_size) == Z_OK);
    out.resize(out_size);
    return out;
}

std::string zstd_round_trip(const std::string& in) {
    std::vector<char> packed(ZSTD_compressBound(in.size()));
    const size_t packed_size = ZSTD_compress(packed.data(), packed.size(), in.data(), in.size(), 3);
    REQUIRE_FALSE(ZSTD_isError(packed_size));
    std::string out(in.size(), '\0');
    const size_t out_size = ZSTD_decompress(out.data(), out.size(), packed.data(), packed_size);
    REQUIRE_FALSE(ZSTD_isError(out_size));
    out.resize(out_size);
    return out;
}

std::string brotli_round_trip(const std::string& in) {
    size_t packed_size = BrotliEncoderMaxCompressedSize(in.size());
    std::vector<uint8_t> packed(packed_size);
    REQUIRE(BrotliEncoderCompress(BROTLI_DEFAULT_QUALITY, BROTLI_DEFAULT_WINDOW, BROTLI_MODE_TEXT,
                                  in.size(), reinterpret_cast<const uint8_t*>(in.data()),
                                  &packed_size, packed.data()) == BROTLI_TRUE);
    std::string out(in.size(), '\0');
    size_t out_size = out.size();
    REQUIRE(BrotliDecoderDecompress(packed_size, packed.data(), &out_size,
                                    reinterpret_cast<uint8_t*>(out.data())) ==
            BROTLI_DECODER_RESULT_SUCCESS);
    out.resize(out_size);
    return out;
}

std::string sha256_hex(const std::string& in) {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    REQUIRE(EVP_Digest(in.data(), in.size(), digest, &length, EVP_sha256(), nullptr) == 1);
    std::string hex;
    for (unsigned int i = 0; i < length; ++i) {
        hex += fmt::format("{:02x}", digest[i]);
    }
    return hex;
}

// A TLS server context holding a self-signed P-256 certificate made here.
bool tls_server_context_with_self_signed_certificate() {
    EVP_PKEY* key = EVP_EC_gen("P-256");
    REQUIRE(key != nullptr);
    X509* cert = X509_new();
    REQUIRE(cert != nullptr);
    ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
    X509_gmtime_adj(X509_getm_notBefore(cert), 0);
    X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
    X509_NAME* name = X509_get_subject_name(cert);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                               reinterpret_cast<const unsigned char*>("localhost"), -1, -1, 0);
    X509_set_issuer_name(cert, name);
    X509_set_pubkey(cert, key);
    REQUIRE(X509_sign(cert, key, EVP_sha256()) > 0);
    SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
    REQUIRE(ctx != nullptr);
    const bool ok = SSL_CTX_use_certificate(ctx, cert) == 1 &&
                    SSL_CTX_use_PrivateKey(ctx, key) == 1 && SSL_CTX_check_private_key(ctx) == 1;
    SSL_CTX_free(ctx);
    X509_free(cert);
    EVP_PKEY_free(key);
    return ok;
}

std::string response_body() {
    const auto doc = nlohmann::json::parse(R"({"libraries": 9, "platform": "windows"})");
    return fmt::format("hello from {} with {} libraries\n", doc.at("platform").get<std::string>(),
                       doc.at("libraries").get<int>());
}

// Accepts one connection on 127.0.0.1:port, reads a request and answers it.
int serve_one_request(unsigned short port) {
    asio::io_context io;
    asio::ip::tcp::acceptor acceptor(io, {asio::ip::make_address("127.0.0.1"), port});
    std::cout << "listening on 127.0.0.1:" << port << std::endl;
    asio::ip::tcp::socket socket(io);
    acceptor.accept(socket);
    std::string request;
    asio::error_code ec;
    asio::read_until(socket, asio::dynamic_buffer(request), "\r\n\r\n", ec);
    if (ec) {
        std::cerr << "read: " << ec.message() << "\n";
        return 1;
    }
    const parsed_request parsed = parse_with_llhttp(request);
    const bool found = parsed.ok && parsed.get && parsed.url == "/hello";
    const std::string body = found ? response_body() : "not found\n";
    const std::string response = fmt::format(
        "HTTP/1.1 {}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: "
        "close\r\n\r\n{}",
        found ? "200 OK" : "404 Not Found", body.size(), body);
    asio::write(socket, asio::buffer(response), ec);
    socket.shutdown(asio::ip::tcp::socket::shutdown_both, ec);
    std::cout << "answered " << parsed.url << std::endl;
    return ec ? 1 : 0;
}

}  // namespace

TEST_CASE("Every library of the Windows prefix works in a Windows program") {
    const parsed_request parsed = parse_with_llhttp("GET /hello HTTP/1.1\r\nHost: a\r\n\r\n");
    CHECK(parsed.ok);
    CHECK(parsed.get);
    CHECK(parsed.url == "/hello");
    CHECK(parsed.complete);
    CHECK(zlib_round_trip(sample) == sample);
    CHECK(zstd_round_trip(sample) == sample);
    CHECK(brotli_round_trip(sample) == sample);
    CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    CHECK(tls_server_context_with_self_signed_certificate());
    CHECK(response_body() == "hello from windows with 9 libraries\n");
    CHECK(fmt::format("{:>6}|{:.2f}", "tern", 3.14159) == "  tern|3.14");
}

int main(int argc, char** argv) {
    if (argc != 2) {
        std::cerr << "usage: smoke --catch | smoke PORT\n";
        return 2;
    }
    char program[] = "smoke";
    char* catch_argv[] = {program, nullptr};
    const int failed = Catch::Session().run(1, catch_argv);
    if (failed != 0 || std::strcmp(argv[1], "--catch") == 0) {
        return failed;
    }
    return serve_one_request(static_cast<unsigned short>(std::stoi(argv[1])));
}
