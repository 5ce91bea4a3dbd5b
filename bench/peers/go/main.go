// Go net/http peer, standard library only. Run with GOMAXPROCS=1 for one core.
//
//	GET /            -> 200 text/plain "Hello, World!"
//	POST /login      -> 200 application/json, the request body echoed
//	GET /static/...  -> files under STATIC_DIR (when given)
//
//	go-peer PORT [STATIC_DIR]   (listens on 127.0.0.1:PORT)
package main

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
)

var hello = []byte("Hello, World!")

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: go-peer PORT [STATIC_DIR]")
		os.Exit(2)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		w.Write(hello)
	})
	mux.HandleFunc("/login", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.NotFound(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	})
	if len(os.Args) > 2 {
		mux.Handle("/static/", http.StripPrefix("/static/", http.FileServer(http.Dir(os.Args[2]))))
	}
	log.Fatal(http.ListenAndServe("127.0.0.1:"+os.Args[1], mux))
}
