package nodeagent

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// probe runs the container's startup probe until it succeeds (killing the
// container when it fails), then its readiness and liveness probes until ctx
// ends; a failed liveness probe sends a reason on killed.
func (c *container) probe(ctx context.Context, killed chan<- string) {
	if p := c.spec.StartupProbe; p != nil {
		var ok bool
		var msg string
		c.watchProbe(ctx, p, func(success bool, m string) bool {
			ok, msg = success, m
			return false
		})
		if ctx.Err() != nil {
			return
		}
		if !ok {
			killed <- "Startup probe failed: " + msg
			return
		}
	}
	c.setStarted()
	var wg sync.WaitGroup
	if p := c.spec.ReadinessProbe; p != nil {
		wg.Go(func() {
			c.watchProbe(ctx, p, func(ok bool, msg string) bool {
				if !ok {
					c.w.log.V(1).Info("Readiness probe failed", "container", c.spec.Name, "error", msg)
				}
				c.setReady(ok)
				return true
			})
		})
	} else {
		c.setReady(true)
	}
	if p := c.spec.LivenessProbe; p != nil {
		wg.Go(func() {
			c.watchProbe(ctx, p, func(ok bool, msg string) bool {
				if !ok {
					killed <- "Liveness probe failed: " + msg
				}
				return ok
			})
		})
	}
	wg.Wait()
}

// watchProbe runs p after its initial delay, every period, until ctx ends.
// Each time successThreshold successes or failureThreshold failures in a
// row are reached it calls report, which returns whether to go on.
func (c *container) watchProbe(ctx context.Context, p *corev1.Probe, report func(ok bool, msg string) bool) {
	if !sleep(ctx, seconds(p.InitialDelaySeconds, 0)) {
		return
	}
	period := seconds(p.PeriodSeconds, 10)
	timeout := seconds(p.TimeoutSeconds, 1)
	successes, failures := 0, 0
	for {
		err := c.check(ctx, p.ProbeHandler, timeout)
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			successes, failures = successes+1, 0
			if successes >= int(max(p.SuccessThreshold, 1)) && !report(true, "") {
				return
			}
		} else {
			successes, failures = 0, failures+1
			threshold := p.FailureThreshold
			if threshold <= 0 {
				threshold = 3
			}
			if failures >= int(threshold) && !report(false, err.Error()) {
				return
			}
		}
		if !sleep(ctx, period) {
			return
		}
	}
}

func seconds(n int32, def int32) time.Duration {
	if n <= 0 {
		n = def
	}
	return time.Duration(n) * time.Second
}

// check runs a probe's handler once.
func (c *container) check(ctx context.Context, h corev1.ProbeHandler, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	switch {
	case h.HTTPGet != nil:
		return c.checkHTTP(ctx, h.HTTPGet)
	case h.TCPSocket != nil:
		addr, err := c.probeAddress(h.TCPSocket.Host, h.TCPSocket.Port)
		if err != nil {
			return err
		}
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return err
		}
		return conn.Close()
	case h.Exec != nil:
		return c.checkExec(ctx, h.Exec.Command)
	case h.GRPC != nil:
		return errors.New("gRPC probes are not supported by the node agent")
	}
	return errors.New("probe has no handler")
}

// probeClient skips certificate verification, as the kubelet's probes do,
// and follows no redirect: a 3xx counts as success.
var probeClient = &http.Client{
	Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{InsecureSkipVerify: true},
		DisableKeepAlives: true,
	},
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

func (c *container) checkHTTP(ctx context.Context, g *corev1.HTTPGetAction) error {
	addr, err := c.probeAddress(g.Host, g.Port)
	if err != nil {
		return err
	}
	scheme := strings.ToLower(string(g.Scheme))
	if scheme == "" {
		scheme = "http"
	}
	path := g.Path
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	u, err := url.Parse(scheme + "://" + addr + path)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return err
	}
	req.Header.Set("User-Agent", "kube-probe/nodeagent")
	req.Header.Set("Accept", "*/*")
	for _, h := range g.HTTPHeaders {
		if strings.EqualFold(h.Name, "Host") {
			req.Host = h.Value
		} else {
			req.Header.Add(h.Name, h.Value)
		}
	}
	resp, err := probeClient.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	if resp.StatusCode < 200 || resp.StatusCode >= 400 {
		return fmt.Errorf("HTTP probe failed with statuscode: %d: %s", resp.StatusCode, strings.TrimSpace(string(body)))
	}
	return nil
}

// probeAddress is host:port of a probe: the pod's IP unless host is given
// (which must resolve within 127.0.0.0/8), the port by number or by the
// name of one of the container's ports.
func (c *container) probeAddress(host string, port intstr.IntOrString) (string, error) {
	if host == "" {
		c.w.mu.Lock()
		host = c.w.ip
		c.w.mu.Unlock()
	} else {
		ip, ok := c.w.a.Resolve(host)
		if parsed := net.ParseIP(ip); !ok || parsed == nil || !parsed.IsLoopback() {
			return "", fmt.Errorf("probe host %q is not an address in 127.0.0.0/8", host)
		}
		host = ip
	}
	n := port.IntVal
	if port.StrVal != "" {
		if v, err := strconv.Atoi(port.StrVal); err == nil {
			n = int32(v)
		} else {
			found := false
			for _, p := range c.spec.Ports {
				if p.Name == port.StrVal {
					n, found = p.ContainerPort, true
				}
			}
			if !found {
				return "", fmt.Errorf("probe port %q is not a port of container %s", port.StrVal, c.spec.Name)
			}
		}
	}
	return net.JoinHostPort(host, strconv.Itoa(int(n))), nil
}

// checkExec runs an exec probe's command in the container's namespaces,
// with its env and volumes. Its first word must name a binary the agent
// knows: the container's own or one of Images, by path or base name.
func (c *container) checkExec(ctx context.Context, command []string) error {
	if len(command) == 0 {
		return errors.New("exec probe has no command")
	}
	binary, ok := c.execBinary(command[0])
	if !ok {
		return fmt.Errorf("exec probe: %q is not a binary the node agent knows; it runs only the binaries of its Images map (%v)", command[0], imageNames(c.w.a.opts.Images))
	}
	spec, err := c.w.processSpec(c.spec, binary, command[1:], false, c.w.logPath(c.spec.Name+".probe"))
	if err != nil {
		return err
	}
	proc, err := launch(spec)
	_ = spec.output.Close()
	if err != nil {
		return err
	}
	select {
	case <-proc.done:
	case <-ctx.Done():
		proc.stop(0)
		return fmt.Errorf("exec probe %q timed out", command[0])
	}
	if code := proc.exitCode(); code != 0 {
		return fmt.Errorf("exec probe %q exited with %d", command[0], code)
	}
	return nil
}

func (c *container) execBinary(name string) (string, bool) {
	images := imageNames(c.w.a.opts.Images)
	candidates := make([]string, 0, 1+len(images))
	candidates = append(candidates, c.w.a.opts.Images[c.spec.Image])
	for _, image := range images {
		candidates = append(candidates, c.w.a.opts.Images[image])
	}
	for _, b := range candidates {
		if b != "" && (name == b || filepath.Base(name) == filepath.Base(b)) {
			return b, true
		}
	}
	return "", false
}
