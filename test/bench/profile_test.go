package bench

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

var (
	profileDir = flag.String("bench.profile-dir", "",
		"Write CPU profiles of the control-plane kube-apiserver, the controller-manager and the scheduler, and the controller-manager's heap at the end, for each run into this directory.")
	profileDelay  = flag.Duration("bench.profile-delay", 5*time.Second, "How long after a run begins its CPU profiles start.")
	profileLength = flag.Duration("bench.profile-seconds", 30*time.Second, "How long each CPU profile lasts.")
)

// profiling reports whether -bench.profile-dir asks for profiles.
func profiling() bool { return *profileDir != "" }

// freeLocalAddr finds a loopback address nothing listens on.
func freeLocalAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := l.Addr().String()
	return addr, l.Close()
}

// profiler captures profiles of one run in the background; wait returns once
// they are written.
type profiler struct {
	wg   sync.WaitGroup
	errs chan error
}

// startProfiles begins capturing the CPU profiles of run name after the
// configured delay; nil when profiling is off.
func (e *env) startProfiles(ctx context.Context, name string) *profiler {
	if !profiling() {
		return nil
	}
	p := &profiler{errs: make(chan error, 4)}
	seconds := strconv.Itoa(int(profileLength.Seconds()))
	targets := map[string]func(context.Context) (io.ReadCloser, error){
		"cp-apiserver": func(ctx context.Context) (io.ReadCloser, error) {
			return e.cpKube.CoreV1().RESTClient().Get().AbsPath("/debug/pprof/profile").
				Param("seconds", seconds).Timeout(*profileLength + time.Minute).Stream(ctx)
		},
		"controller-manager": httpProfile("http://" + e.cm.pprofAddr + "/debug/pprof/profile?seconds=" + seconds),
		"scheduler":          httpProfile("http://" + e.sched.pprofAddr + "/debug/pprof/profile?seconds=" + seconds),
	}
	for target, fetch := range targets {
		p.wg.Go(func() {
			select {
			case <-time.After(*profileDelay):
			case <-ctx.Done():
				return
			}
			p.errs <- saveProfile(ctx, filepath.Join(*profileDir, name+"-"+target+"-cpu.pprof"), fetch)
		})
	}
	return p
}

// finish waits for the CPU profiles and adds the controller-manager's heap.
func (p *profiler) finish(ctx context.Context, e *env, name string) error {
	if p == nil {
		return nil
	}
	p.wg.Wait()
	close(p.errs)
	for err := range p.errs {
		if err != nil {
			return err
		}
	}
	return saveProfile(ctx, filepath.Join(*profileDir, name+"-controller-manager-heap.pprof"),
		httpProfile("http://"+e.cm.pprofAddr+"/debug/pprof/heap"))
}

func httpProfile(url string) func(context.Context) (io.ReadCloser, error) {
	return func(ctx context.Context) (io.ReadCloser, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return nil, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusOK {
			_ = resp.Body.Close()
			return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
		}
		return resp.Body, nil
	}
}

func saveProfile(ctx context.Context, path string, fetch func(context.Context) (io.ReadCloser, error)) error {
	body, err := fetch(ctx)
	if err != nil {
		return fmt.Errorf("profile %s: %w", filepath.Base(path), err)
	}
	defer func() { _ = body.Close() }()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, body); err != nil {
		_ = f.Close()
		return fmt.Errorf("profile %s: %w", filepath.Base(path), err)
	}
	return f.Close()
}
