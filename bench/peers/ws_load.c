/* ws_load: a WebSocket load generator for bench/ws.py. One epoll loop, one thread, C and
 * libc only, so that it costs little beside the server it measures.
 *
 *   ws_load PORT MODE CONNS SECONDS [SIZE [DEPTH]]
 *
 *   echo   CONNS connections to /ws/echo; each keeps DEPTH (default 1) text messages of SIZE
 *          (default 32) bytes in flight and sends the next as an echo arrives. Counts the
 *          echoes in SECONDS, after all connections are open; with DEPTH 1, each round
 *          trip's time too.
 *   idle   CONNS connections to /ws/echo, upgraded, then silent: prints its result line when
 *          all are open and holds them for SECONDS (bench/ws.py reads the server's memory
 *          meanwhile).
 *   feed   CONNS connections to /ws/feed and one to /ws/control. Then, for SECONDS, it
 *          sends "broadcast SIZE" on /ws/control and waits until every /ws/feed connection has received
 *          that broadcast (a message of SIZE bytes), again and again: fan-out times and
 *          deliveries per second.
 *
 * Prints one JSON line: what was connected and failed, the counts, rates, the latencies'
 * median and 99th percentile in microseconds, and this process's CPU seconds.
 *
 * Frames it sends are masked (RFC 6455 5.3) with a fixed key: the server unmasks them all
 * the same, and a fixed key lets the frame be built once. It checks that each upgrade is
 * answered 101 and that each echo has the length sent; nothing else of the payload. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { st_connecting, st_upgrading, st_open, st_dead };

struct conn {
    int fd;
    int state;
    int control;
    /* the handshake's answer, until its blank line */
    char head[512];
    size_t head_len;
    /* the frame being read: header bytes, then payload bytes to skip */
    unsigned char hdr[10];
    size_t hdr_len, hdr_want;
    uint64_t payload_left, payload_len;
    /* bytes that did not fit the socket */
    char *pending;
    size_t pending_len;
    /* echo mode: when the message in flight was sent */
    double sent_at;
    /* feed mode: the broadcast round this connection has seen */
    long seen_round;
};

static const char *mode;
static int port, conns_wanted, depth = 1;
static double seconds;
static size_t size = 32;
static int ep;
static struct conn *conns;
static int total_conns;
static char *frame;  /* one masked text frame of `size` bytes */
static size_t frame_len;
static double *lat; /* latencies, microseconds */
static size_t lat_n, lat_cap;
static long messages, failed, connected;
static int measuring;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void add_latency(double us) {
    if (lat_n == lat_cap) {
        lat_cap = lat_cap ? lat_cap * 2 : 1 << 16;
        lat = realloc(lat, lat_cap * sizeof *lat);
        if (!lat) abort();
    }
    lat[lat_n++] = us;
}

static void feed_conn_lost(void);

static void kill_conn(struct conn *c) {
    if (c->state == st_dead) return;
    if (c->state != st_open) ++failed;
    if (c->state == st_open && measuring && !c->control && strcmp(mode, "feed") == 0) {
        ++failed;
        feed_conn_lost();
    }
    c->state = st_dead;
    close(c->fd);
    free(c->pending);
    c->pending = NULL;
    c->pending_len = 0;
}

static void build_frame(char *out, size_t *len, const char *payload, size_t n) {
    static const unsigned char key[4] = {0x37, 0xfa, 0x21, 0x3d};
    size_t at = 0;
    out[at++] = (char)0x81; /* FIN, text */
    if (n < 126) {
        out[at++] = (char)(0x80 | n);
    } else if (n <= 0xFFFF) {
        out[at++] = (char)(0x80 | 126);
        out[at++] = (char)(n >> 8);
        out[at++] = (char)(n & 0xFF);
    } else {
        out[at++] = (char)(0x80 | 127);
        for (int i = 7; i >= 0; --i) out[at++] = (char)((uint64_t)n >> (8 * i));
    }
    memcpy(out + at, key, 4);
    at += 4;
    for (size_t i = 0; i < n; ++i) out[at + i] = (char)(payload[i] ^ key[i & 3]);
    *len = at + n;
}

/* Sends what is pending, then `data`; keeps what the socket does not take. */
static void send_bytes(struct conn *c, const char *data, size_t n) {
    if (c->state == st_dead) return;
    if (c->pending_len == 0) {
        ssize_t w = send(c->fd, data, n, MSG_NOSIGNAL);
        if (w < 0 && errno != EAGAIN) {
            kill_conn(c);
            return;
        }
        if (w < 0) w = 0;
        data += w;
        n -= (size_t)w;
        if (n == 0) return;
    }
    c->pending = realloc(c->pending, c->pending_len + n);
    if (!c->pending) abort();
    memcpy(c->pending + c->pending_len, data, n);
    c->pending_len += n;
    struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT, .data.ptr = c};
    epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
}

static void flush_pending(struct conn *c) {
    while (c->pending_len > 0) {
        ssize_t w = send(c->fd, c->pending, c->pending_len, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno != EAGAIN) kill_conn(c);
            return;
        }
        memmove(c->pending, c->pending + w, c->pending_len - (size_t)w);
        c->pending_len -= (size_t)w;
    }
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
    epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
}

static const char *path_of(const struct conn *c) {
    if (c->control) return "/ws/control";
    return strcmp(mode, "feed") == 0 ? "/ws/feed" : "/ws/echo";
}

static void send_handshake(struct conn *c) {
    char req[256];
    int n = snprintf(req, sizeof req,
                     "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\n"
                     "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                     "Sec-WebSocket-Version: 13\r\n\r\n",
                     path_of(c), port);
    c->state = st_upgrading;
    send_bytes(c, req, (size_t)n);
}

static void on_message(struct conn *c, uint64_t len);

/* Feeds bytes read after the handshake through the frame reader. */
static void read_frames(struct conn *c, const unsigned char *p, size_t n) {
    while (n > 0 && c->state == st_open) {
        if (c->payload_left == 0 && c->hdr_want == 0) {
            c->hdr_len = 0;
            c->hdr_want = 2;
        }
        if (c->hdr_want > 0) {
            while (n > 0 && c->hdr_len < c->hdr_want) {
                c->hdr[c->hdr_len++] = *p++;
                --n;
                if (c->hdr_len == 2) {
                    unsigned l7 = c->hdr[1] & 0x7F;
                    c->hdr_want = l7 == 126 ? 4 : l7 == 127 ? 10 : 2;
                }
            }
            if (c->hdr_len < c->hdr_want) return;
            unsigned l7 = c->hdr[1] & 0x7F;
            uint64_t len = l7;
            if (l7 == 126) len = ((uint64_t)c->hdr[2] << 8) | c->hdr[3];
            if (l7 == 127) {
                len = 0;
                for (int i = 2; i < 10; ++i) len = (len << 8) | c->hdr[i];
            }
            c->hdr_want = 0;
            c->payload_len = c->payload_left = len;
            if ((c->hdr[0] & 0x0F) == 0x8) { /* the server closes */
                kill_conn(c);
                return;
            }
            if (len == 0) {
                on_message(c, 0);
                continue;
            }
        }
        size_t take = n < c->payload_left ? n : (size_t)c->payload_left;
        p += take;
        n -= take;
        c->payload_left -= take;
        if (c->payload_left == 0) on_message(c, c->payload_len);
    }
}

static long round_no;          /* feed: the broadcast being delivered */
static long round_seen;        /* feed: connections that have it */
static double round_started;
static long rounds_done;
static struct conn *control;

static void start_round(void) {
    char text[64];
    int n = snprintf(text, sizeof text, "broadcast %zu", size);
    char f[96];
    size_t fl;
    build_frame(f, &fl, text, (size_t)n);
    ++round_no;
    round_seen = 0;
    round_started = now();
    send_bytes(control, f, fl);
}

/* A feed connection closed while measuring: the round no longer waits for it. */
static void feed_conn_lost(void) {
    --connected;
    if (connected > 0 && round_seen >= connected) {
        add_latency((now() - round_started) * 1e6);
        ++rounds_done;
        start_round();
    }
}

static void on_message(struct conn *c, uint64_t len) {
    if (strcmp(mode, "echo") == 0) {
        if (len != size) {
            fprintf(stderr, "ws_load: an echo of %llu bytes, not %zu\n", (unsigned long long)len,
                    size);
            exit(1);
        }
        if (measuring) {
            ++messages;
            if (depth == 1) add_latency((now() - c->sent_at) * 1e6);
        }
        c->sent_at = now();
        send_bytes(c, frame, frame_len);
    } else if (strcmp(mode, "feed") == 0 && !c->control) {
        if (!measuring || c->seen_round == round_no) return;
        c->seen_round = round_no;
        ++messages;
        if (++round_seen == connected) {
            add_latency((now() - round_started) * 1e6);
            ++rounds_done;
            start_round();
        }
    }
}

/* One read per readiness event (epoll is level-triggered): a connection whose echoes keep
 * arriving must not keep the loop from the others. */
static void on_readable(struct conn *c) {
    static unsigned char buf[1 << 18];
    {
        ssize_t r = recv(c->fd, buf, sizeof buf, 0);
        if (r == 0 || (r < 0 && errno != EAGAIN)) {
            kill_conn(c);
            return;
        }
        if (r < 0) return;
        size_t n = (size_t)r;
        const unsigned char *p = buf;
        if (c->state == st_upgrading) {
            size_t room = sizeof c->head - 1 - c->head_len;
            size_t take = n < room ? n : room;
            memcpy(c->head + c->head_len, p, take);
            c->head_len += take;
            c->head[c->head_len] = 0;
            char *end = strstr(c->head, "\r\n\r\n");
            if (!end) {
                if (c->head_len == sizeof c->head - 1) kill_conn(c);
                return;
            }
            if (strncmp(c->head, "HTTP/1.1 101", 12) != 0) {
                kill_conn(c);
                return;
            }
            size_t head_bytes = (size_t)(end + 4 - c->head) - (c->head_len - take);
            c->state = st_open;
            ++connected;
            p += head_bytes;
            n -= head_bytes;
        }
        read_frames(c, p, n);
    }
}

static int open_conn(struct conn *c) {
    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (c->fd < 0) return -1;
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    c->state = st_connecting;
    c->seen_round = 0;
    if (connect(c->fd, (struct sockaddr *)&a, sizeof a) < 0 && errno != EINPROGRESS) {
        close(c->fd);
        c->state = st_dead;
        ++failed;
        return -1;
    }
    struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT, .data.ptr = c};
    epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev);
    return 0;
}

static void on_event(struct conn *c, uint32_t events) {
    if (c->state == st_dead) return;
    if (c->state == st_connecting) {
        int err = 0;
        socklen_t l = sizeof err;
        getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &l);
        if (err || (events & (EPOLLERR | EPOLLHUP))) {
            kill_conn(c);
            return;
        }
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
        epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
        send_handshake(c);
        return;
    }
    if (events & EPOLLOUT) flush_pending(c);
    if (events & (EPOLLIN | EPOLLERR | EPOLLHUP)) on_readable(c);
}

static void loop_until(double until, int (*done)(void)) {
    struct epoll_event evs[512];
    while (now() < until && !(done && done())) {
        int ms = (int)((until - now()) * 1000) + 1;
        int n = epoll_wait(ep, evs, 512, ms > 100 ? 100 : ms);
        for (int i = 0; i < n; ++i) on_event(evs[i].data.ptr, evs[i].events);
    }
}

static int opened;
static int all_settled(void) {
    int settled = 0;
    for (int i = 0; i < opened; ++i) settled += conns[i].state == st_open || conns[i].state == st_dead;
    return opened == total_conns && settled == total_conns;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double pct(double p) {
    if (lat_n == 0) return 0;
    size_t i = (size_t)(p * (double)(lat_n - 1));
    return lat[i];
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: ws_load PORT echo|idle|feed CONNS SECONDS [SIZE [DEPTH]]\n");
        return 2;
    }
    port = atoi(argv[1]);
    mode = argv[2];
    conns_wanted = atoi(argv[3]);
    seconds = atof(argv[4]);
    if (argc > 5) size = (size_t)atol(argv[5]);
    if (argc > 6) depth = atoi(argv[6]);
    if (strcmp(mode, "echo") && strcmp(mode, "idle") && strcmp(mode, "feed")) {
        fprintf(stderr, "ws_load: unknown mode %s\n", mode);
        return 2;
    }
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);

    ep = epoll_create1(0);
    total_conns = conns_wanted + (strcmp(mode, "feed") == 0 ? 1 : 0);
    conns = calloc((size_t)total_conns, sizeof *conns);
    char *payload = malloc(size + 1);
    frame = malloc(size + 14);
    if (!conns || !payload || !frame) return 1;
    for (size_t i = 0; i < size; ++i) payload[i] = (char)('a' + i % 26);
    build_frame(frame, &frame_len, payload, size);
    if (strcmp(mode, "feed") == 0) {
        conns[conns_wanted].control = 1;
        control = &conns[conns_wanted];
    }

    /* Connect at most 256 at a time, within 60 s. */
    const double connect_until = now() + 60;
    while (opened < total_conns && now() < connect_until) {
        int in_progress = 0;
        for (int i = 0; i < opened; ++i) {
            in_progress += conns[i].state == st_connecting || conns[i].state == st_upgrading;
        }
        while (opened < total_conns && in_progress < 256) {
            open_conn(&conns[opened++]);
            ++in_progress;
        }
        loop_until(now() + 0.01, NULL);
    }
    loop_until(connect_until, all_settled);
    const double cpu0 = (double)clock() / CLOCKS_PER_SEC;
    long feed_conns = connected - (control && control->state == st_open ? 1 : 0);

    double elapsed = 0;
    if (strcmp(mode, "idle") == 0) {
        printf("{\"mode\":\"idle\",\"connected\":%ld,\"failed\":%ld}\n", connected, failed);
        fflush(stdout);
        loop_until(now() + seconds, NULL);
    } else if (strcmp(mode, "echo") == 0) {
        measuring = 1;
        const double t0 = now();
        for (int i = 0; i < total_conns; ++i) {
            if (conns[i].state != st_open) continue;
            conns[i].sent_at = t0;
            for (int d = 0; d < depth; ++d) send_bytes(&conns[i], frame, frame_len);
        }
        loop_until(t0 + seconds, NULL);
        elapsed = now() - t0;
    } else {
        if (!control || control->state != st_open) {
            fprintf(stderr, "ws_load: /ws/control did not open\n");
            return 1;
        }
        connected = feed_conns; /* a round is done when every feed connection has it */
        measuring = 1;
        const double t0 = now();
        start_round();
        loop_until(t0 + seconds, NULL);
        elapsed = now() - t0;
    }
    const double cpu = (double)clock() / CLOCKS_PER_SEC - cpu0;
    qsort(lat, lat_n, sizeof *lat, cmp_double);
    if (strcmp(mode, "idle") != 0) {
        printf("{\"mode\":\"%s\",\"connected\":%ld,\"failed\":%ld,\"size\":%zu,\"depth\":%d,"
               "\"seconds\":%.3f,\"messages\":%ld,\"per_s\":%.1f,\"rounds\":%ld,"
               "\"p50_us\":%.1f,\"p99_us\":%.1f,\"client_cpu_s\":%.3f}\n",
               mode, connected, failed, size, depth, elapsed, messages,
               elapsed > 0 ? (double)messages / elapsed : 0.0, rounds_done, pct(0.5), pct(0.99),
               cpu);
    }
    return 0;
}
