// The no-parsing ceiling: the fastest thing that can answer wrk's hello-world requests on one
// core, so that `server / ceiling` measures a server's own overhead.
//
// One thread, one level-triggered epoll loop. It parses nothing: every "\r\n\r\n" seen on a
// connection (tracked across reads) is taken as the end of one request and answered with the
// same canned response; all responses owed after one read go out in one write. A request body
// is not framed, so it only works for bodies without "\r\n\r\n" (true of bench/'s workloads).
//
//   ceiling PORT        (listens on 127.0.0.1:PORT)

#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

static const char canned[] =
    "HTTP/1.1 200 OK\r\n"
    "Server: ceiling\r\n"
    "Content-Type: text/plain\r\n"
    "Content-Length: 13\r\n"
    "\r\n"
    "Hello, World!";
#define CANNED_LEN (sizeof canned - 1)

struct conn {
    int fd;
    int matched;     // how much of "\r\n\r\n" ended the bytes seen so far (0..3)
    char* out;       // responses not yet written
    size_t out_len;  // bytes in out
    size_t out_off;  // bytes of out already written
    size_t out_cap;
};

static int listen_fd;
static int ep;

static void die(const char* what) {
    perror(what);
    exit(1);
}

static void conn_close(struct conn* c) {
    close(c->fd);  // also removes it from the epoll set
    free(c->out);
    free(c);
}

// Counts request ends in buf, continuing the match state of the previous read.
static size_t count_ends(struct conn* c, const char* buf, size_t n) {
    static const char end[] = "\r\n\r\n";
    size_t found = 0;
    int m = c->matched;
    const char* p = buf;
    const char* stop = buf + n;
    while (p < stop) {
        if (m == 0) {
            const char* cr = memchr(p, '\r', (size_t)(stop - p));
            if (!cr) break;
            p = cr + 1;
            m = 1;
            continue;
        }
        if (*p == end[m]) {
            if (++m == 4) {
                ++found;
                m = 0;
            }
        } else {
            m = (*p == '\r') ? 1 : 0;
        }
        ++p;
    }
    c->matched = m;
    return found;
}

static int set_events(struct conn* c, unsigned events) {
    struct epoll_event ev = {.events = events, .data.ptr = c};
    return epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
}

// Writes what is pending; returns -1 when the connection must close.
static int flush_out(struct conn* c) {
    while (c->out_off < c->out_len) {
        ssize_t w = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);
        if (w > 0) {
            c->out_off += (size_t)w;
        } else if (w < 0 && errno == EINTR) {
            continue;
        } else if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            // Stop reading until the client takes what it is owed.
            return set_events(c, EPOLLOUT);
        } else {
            return -1;
        }
    }
    c->out_len = c->out_off = 0;
    return 0;
}

static void on_readable(struct conn* c) {
    static char buf[64 * 1024];
    ssize_t n = recv(c->fd, buf, sizeof buf, 0);
    if (n <= 0) {
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
        conn_close(c);
        return;
    }
    size_t owed = count_ends(c, buf, (size_t)n);
    if (owed == 0) return;
    size_t need = c->out_len + owed * CANNED_LEN;
    if (need > c->out_cap) {
        size_t cap = c->out_cap ? c->out_cap : 4096;
        while (cap < need) cap *= 2;
        char* grown = realloc(c->out, cap);
        if (!grown) die("realloc");
        c->out = grown;
        c->out_cap = cap;
    }
    for (size_t i = 0; i < owed; ++i) {
        memcpy(c->out + c->out_len, canned, CANNED_LEN);
        c->out_len += CANNED_LEN;
    }
    if (flush_out(c) < 0) conn_close(c);
}

static void on_writable(struct conn* c) {
    if (flush_out(c) < 0) {
        conn_close(c);
        return;
    }
    if (c->out_len == 0 && set_events(c, EPOLLIN) < 0) conn_close(c);
}

static void on_accept(void) {
    for (;;) {
        int fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) return;  // EAGAIN, or a transient error: epoll says again
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        struct conn* c = calloc(1, sizeof *c);
        if (!c) die("calloc");
        c->fd = fd;
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
        if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0) conn_close(c);
    }
}

int main(int argc, char** argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: ceiling PORT\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (listen_fd < 0) die("socket");
    int one = 1;
    setsockopt(listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in addr = {.sin_family = AF_INET,
                               .sin_port = htons((unsigned short)atoi(argv[1])),
                               .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (bind(listen_fd, (struct sockaddr*)&addr, sizeof addr) < 0) die("bind");
    if (listen(listen_fd, 4096) < 0) die("listen");

    ep = epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0) die("epoll_create1");
    struct epoll_event lev = {.events = EPOLLIN, .data.ptr = NULL};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, listen_fd, &lev) < 0) die("epoll_ctl");

    struct epoll_event events[256];
    for (;;) {
        int n = epoll_wait(ep, events, 256, -1);
        if (n < 0) {
            if (errno == EINTR) continue;
            die("epoll_wait");
        }
        for (int i = 0; i < n; ++i) {
            struct conn* c = events[i].data.ptr;
            if (!c) {
                on_accept();
            } else if (events[i].events & EPOLLOUT) {
                on_writable(c);
            } else {
                on_readable(c);  // also sees EOF and errors (EPOLLHUP/EPOLLERR) as n <= 0
            }
        }
    }
}
