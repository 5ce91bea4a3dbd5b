// Go net/http SSE peer for bench/live.py, standard library only. Run with GOMAXPROCS=1.
//
//	GET  /                      -> 200 text/plain "Hello, World!"
//	GET  /feed                  -> text/event-stream; the client joins the broadcast set
//	POST /broadcast?n=K&size=B  -> K events of B bytes ('x') to every client; one line per
//	                               event: how many clients it was queued for
//
//	go-sse-peer PORT   (listens on 127.0.0.1:PORT)
//
// It does what tern's sse_clients does: the event is formatted once and appended to each
// client's pending bytes, and the client's own goroutine (net/http runs one per connection)
// writes whatever is pending in one write and flushes it. A client with more than 1 MiB
// pending is cut off, as tern's max_stream_buffer does.
package main

import (
	"fmt"
	"log"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
)

const maxPending = 1 << 20

type client struct {
	mu      sync.Mutex
	pending []byte
	cut     bool
	wake    chan struct{} // capacity 1: a wake-up is on its way or not
}

type hub struct {
	mu      sync.Mutex
	clients map[*client]struct{}
}

func (h *hub) feed(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "no flushing", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	flusher.Flush()

	c := &client{wake: make(chan struct{}, 1)}
	h.mu.Lock()
	h.clients[c] = struct{}{}
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.clients, c)
		h.mu.Unlock()
	}()

	var out []byte
	for {
		select {
		case <-c.wake:
		case <-r.Context().Done():
			return
		}
		c.mu.Lock()
		out, c.pending = c.pending, out[:0] // swap: the next events go to the other buffer
		cut := c.cut
		c.mu.Unlock()
		if cut {
			panic(http.ErrAbortHandler) // closes the connection without the last chunk
		}
		if _, err := w.Write(out); err != nil {
			return
		}
		flusher.Flush()
	}
}

func (h *hub) broadcast(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	n, err1 := strconv.Atoi(r.URL.Query().Get("n"))
	size, err2 := strconv.Atoi(r.URL.Query().Get("size"))
	if err1 != nil || err2 != nil || n < 0 || size < 0 || size > 1<<20 {
		http.Error(w, "n and size must be numbers", http.StatusBadRequest)
		return
	}
	event := []byte("data: " + strings.Repeat("x", size) + "\n\n")
	var reached strings.Builder
	for i := 0; i < n; i++ {
		sent := 0
		h.mu.Lock()
		for c := range h.clients {
			c.mu.Lock()
			if len(c.pending)+len(event) > maxPending {
				c.cut = true
				delete(h.clients, c)
			} else {
				c.pending = append(c.pending, event...)
				sent++
			}
			c.mu.Unlock()
			select {
			case c.wake <- struct{}{}:
			default:
			}
		}
		h.mu.Unlock()
		fmt.Fprintf(&reached, "%d\n", sent)
	}
	w.Header().Set("Content-Type", "text/plain")
	w.Write([]byte(reached.String()))
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: go-sse-peer PORT")
		os.Exit(2)
	}
	h := &hub{clients: make(map[*client]struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("Hello, World!"))
	})
	mux.HandleFunc("/feed", h.feed)
	mux.HandleFunc("/broadcast", h.broadcast)
	log.Fatal(http.ListenAndServe("127.0.0.1:"+os.Args[1], mux))
}
