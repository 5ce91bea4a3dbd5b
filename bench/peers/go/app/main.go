// Go net/http peer for bench/'s real-app workloads (bench/lib/apps.py): the same routes as
// tern's examples/jwt_login and examples/todo, standard library plus lib/pq (Debian
// golang-github-lib-pq-dev) for PostgreSQL. Run with GOMAXPROCS=1 for one core.
//
//	POST /login        {"username","password"} -> 200 {"token": HS256 JWT}, 401, 400
//	GET  /me           Authorization: Bearer <token> -> 200 the claims, 401
//	GET  /health       -> 200 {"status":"ok"}
//	GET  /todos/{id}   -> 200 {"id","title","done"}, 404, 400   (with --pg only)
//	POST /todos        {"title","done"} -> 201 the stored to-do, 400 (with --pg only)
//
//	JWT_SECRET=... go-app PORT [--pg CONNINFO]   (listens on 127.0.0.1:PORT)
//
// Passwords are compared plainly (constant time), as the Go-vs-Java page's apps did; tern's
// jwt_login runs with --pbkdf2-iterations 0 beside it. The HS256 token is built by hand with
// crypto/hmac, as the page's Go app did. The PostgreSQL pool holds at most 8 connections,
// like examples/todo's 8 blocking-pool threads.
package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	_ "github.com/lib/pq"
)

var (
	secret    []byte
	users     = map[string]string{"alice": "wonderland", "bob": "builder"}
	jwtHeader = base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
	db        *sql.DB
	insertSQL *sql.Stmt // prepared on each pooled connection by database/sql, as tern's todo does
	selectSQL *sql.Stmt
)

type claims struct {
	Exp int64  `json:"exp"`
	Iat int64  `json:"iat"`
	Sub string `json:"sub"`
}

type todo struct {
	ID    int64  `json:"id"`
	Title string `json:"title"`
	Done  bool   `json:"done"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}

func sign(c claims) string {
	payload, _ := json.Marshal(c)
	unsigned := jwtHeader + "." + base64.RawURLEncoding.EncodeToString(payload)
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(unsigned))
	return unsigned + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

func verify(token string) (claims, error) {
	var c claims
	parts := strings.Split(token, ".")
	if len(parts) != 3 || parts[0] != jwtHeader {
		return c, errors.New("not an HS256 token")
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return c, errors.New("bad signature encoding")
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(parts[0] + "." + parts[1]))
	if !hmac.Equal(sig, mac.Sum(nil)) {
		return c, errors.New("the token's signature does not match")
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil || json.Unmarshal(payload, &c) != nil {
		return c, errors.New("bad claims")
	}
	if c.Exp <= time.Now().Unix() {
		return c, errors.New("the token has expired")
	}
	return c, nil
}

func login(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	var body struct {
		Username *string `json:"username"`
		Password *string `json:"password"`
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, 4096))
	if err != nil || json.Unmarshal(raw, &body) != nil || body.Username == nil || body.Password == nil {
		http.Error(w, "the body must be a JSON object with the fields 'username' and 'password'", http.StatusBadRequest)
		return
	}
	want, known := users[*body.Username]
	if !known || subtle.ConstantTimeCompare([]byte(want), []byte(*body.Password)) != 1 {
		http.Error(w, "wrong username or password", http.StatusUnauthorized)
		return
	}
	now := time.Now().Unix()
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, map[string]string{"token": sign(claims{Exp: now + 3600, Iat: now, Sub: *body.Username})})
}

func me(w http.ResponseWriter, r *http.Request) {
	auth := r.Header.Get("Authorization")
	if !strings.HasPrefix(auth, "Bearer ") {
		w.Header().Set("WWW-Authenticate", `Bearer realm="jwt_login"`)
		http.Error(w, "no bearer token", http.StatusUnauthorized)
		return
	}
	c, err := verify(auth[len("Bearer "):])
	if err != nil {
		w.Header().Set("WWW-Authenticate", `Bearer realm="jwt_login", error="invalid_token"`)
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	writeJSON(w, http.StatusOK, c)
}

func fieldError(w http.ResponseWriter, field, msg string) {
	writeJSON(w, http.StatusBadRequest, map[string]string{"error": msg, "field": field})
}

func dbError(w http.ResponseWriter, err error) {
	log.Print("database: ", err)
	w.Header().Set("Retry-After", "1")
	writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "the database did not answer"})
}

func createTodo(w http.ResponseWriter, r *http.Request) {
	var body map[string]json.RawMessage
	raw, err := io.ReadAll(io.LimitReader(r.Body, 16384))
	if err != nil || json.Unmarshal(raw, &body) != nil || body == nil {
		fieldError(w, "body", "the body must be a JSON object")
		return
	}
	var t todo
	if json.Unmarshal(body["title"], &t.Title) != nil {
		fieldError(w, "title", "field 'title' must be a string")
		return
	}
	if n := utf8.RuneCountInString(t.Title); n == 0 || n > 200 || strings.ContainsRune(t.Title, 0) {
		fieldError(w, "title", "field 'title' must be 1 to 200 characters")
		return
	}
	if d, ok := body["done"]; ok && json.Unmarshal(d, &t.Done) != nil {
		fieldError(w, "done", "field 'done' must be true or false")
		return
	}
	err = insertSQL.QueryRow(t.Title, t.Done).Scan(&t.ID)
	if err != nil {
		dbError(w, err)
		return
	}
	w.Header().Set("Location", "/todos/"+strconv.FormatInt(t.ID, 10))
	writeJSON(w, http.StatusCreated, t)
}

func getTodo(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(strings.TrimPrefix(r.URL.Path, "/todos/"), 10, 64)
	if err != nil {
		fieldError(w, "id", "path parameter 'id' must be an integer")
		return
	}
	t := todo{ID: id}
	err = selectSQL.QueryRow(id).Scan(&t.Title, &t.Done)
	if errors.Is(err, sql.ErrNoRows) {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": fmt.Sprintf("no to-do with id %d", id)})
		return
	}
	if err != nil {
		dbError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, t)
}

func main() {
	if len(os.Args) != 2 && !(len(os.Args) == 4 && os.Args[2] == "--pg") {
		fmt.Fprintln(os.Stderr, "usage: go-app PORT [--pg CONNINFO]")
		os.Exit(2)
	}
	secret = []byte(os.Getenv("JWT_SECRET"))
	if len(secret) == 0 {
		fmt.Fprintln(os.Stderr, "go-app: set JWT_SECRET")
		os.Exit(2)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/login", login)
	mux.HandleFunc("/me", me)
	healthBody := []byte(`{"status":"ok"}`) // constant bytes, as tern's bench_app and nginx send
	mux.HandleFunc("/health", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(healthBody)))
		w.Write(healthBody)
	})
	if len(os.Args) == 4 {
		var err error
		if db, err = sql.Open("postgres", os.Args[3]); err != nil {
			log.Fatal(err)
		}
		db.SetMaxOpenConns(8)
		db.SetMaxIdleConns(8)
		if _, err = db.Exec("CREATE TABLE IF NOT EXISTS todos (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, title TEXT NOT NULL, done BOOLEAN NOT NULL)"); err != nil {
			log.Fatal(err)
		}
		if insertSQL, err = db.Prepare("INSERT INTO todos (title, done) VALUES ($1, $2) RETURNING id"); err != nil {
			log.Fatal(err)
		}
		if selectSQL, err = db.Prepare("SELECT title, done FROM todos WHERE id = $1"); err != nil {
			log.Fatal(err)
		}
		mux.HandleFunc("/todos", func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodPost {
				http.NotFound(w, r)
				return
			}
			createTodo(w, r)
		})
		mux.HandleFunc("/todos/", func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodGet {
				http.NotFound(w, r)
				return
			}
			getTodo(w, r)
		})
	}
	log.Fatal(http.ListenAndServe("127.0.0.1:"+os.Args[1], mux))
}
