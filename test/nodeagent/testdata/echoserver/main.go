// Command echoserver is the container of the node agent's tests: an HTTP
// server that tells what its process sees (argv, env, files, names) and can
// be made unhealthy.
//
//	/healthz        200, or 500 once /fail was called
//	/readyz         200 while --ready-file exists (always without the flag)
//	/info           JSON: args, env, hostname
//	/file           the content of --file
//	/read?path=P    the content of P, as this process sees it
//	/fetch?url=U    GET U from here (names resolve through /etc/hosts)
//	/kube           GET /version of the API server with the in-cluster
//	                ServiceAccount credentials, as client-go's in-cluster
//	                config would
//	/fail           makes /healthz fail
//
// With --exit-code it exits at once instead, for init containers and pods
// that end.
package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"
)

const serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

func main() {
	listen := flag.String("listen", ":8080", "address to listen on")
	file := flag.String("file", "", "file served at /file")
	readyFile := flag.String("ready-file", "", "file whose existence makes /readyz succeed")
	flag.String("name", "", "a name, only echoed")
	exitCode := flag.Int("exit-code", -1, "exit at once with this code instead of serving")
	flag.Parse()
	if *exitCode >= 0 {
		log.Printf("exiting with %d as asked", *exitCode)
		os.Exit(*exitCode)
	}

	var failing atomic.Bool
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		if failing.Load() {
			http.Error(w, "failing on request", http.StatusInternalServerError)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/fail", func(w http.ResponseWriter, _ *http.Request) {
		failing.Store(true)
		fmt.Fprintln(w, "failing from now on")
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if *readyFile != "" {
			if _, err := os.Stat(*readyFile); err != nil {
				http.Error(w, err.Error(), http.StatusServiceUnavailable)
				return
			}
		}
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/info", func(w http.ResponseWriter, _ *http.Request) {
		hostname, _ := os.Hostname()
		env := map[string]string{}
		for _, kv := range os.Environ() {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"args": os.Args, "env": env, "hostname": hostname})
	})
	mux.HandleFunc("/file", func(w http.ResponseWriter, _ *http.Request) { serveFile(w, *file) })
	mux.HandleFunc("/read", func(w http.ResponseWriter, r *http.Request) { serveFile(w, r.URL.Query().Get("path")) })
	mux.HandleFunc("/fetch", func(w http.ResponseWriter, r *http.Request) {
		client := &http.Client{Timeout: 5 * time.Second}
		relay(w, client, r.URL.Query().Get("url"), "")
	})
	mux.HandleFunc("/kube", func(w http.ResponseWriter, _ *http.Request) {
		token, err := os.ReadFile(serviceAccountDir + "/token")
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		ca, err := os.ReadFile(serviceAccountDir + "/ca.crt")
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(ca)
		client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
		host := net.JoinHostPort(os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT"))
		relay(w, client, "https://"+host+"/version", "Bearer "+strings.TrimSpace(string(token)))
	})

	l, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("echoserver listening on %s, args %q", l.Addr(), os.Args[1:])
	log.Fatal(http.Serve(l, mux))
}

func serveFile(w http.ResponseWriter, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	_, _ = w.Write(data)
}

// relay answers with what GET url answered.
func relay(w http.ResponseWriter, client *http.Client, url, authorization string) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	resp, err := client.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer func() { _ = resp.Body.Close() }()
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}
