package localfed

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/klog/v2/textlogger"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	webhookapp "github.com/flotilla-io/flotilla/components/webhook/app"
)

// componentWebhook names the webhook's log, <logs>/karmada-apiserver/webhook.log.
const componentWebhook = "webhook"

// webhookServer is Flotilla's admission webhook, run in this process for
// the control plane the way a deployment runs karmada-webhook next to it:
// served on 127.0.0.1 with a certificate of the control plane's CA, and
// registered as URL webhooks (every path of config/webhook, and the
// bindings' conversion).
type webhookServer struct {
	url    string
	cancel context.CancelFunc
	done   chan error
	log    *os.File
	// process is the webhook's own process when Options.WebhookBinary is
	// set; the supervisor stops it.
	process *process
}

// startWebhook starts the webhook of c, registers it, and returns once the
// API server calls it. It runs until stop, whatever ctx does.
func (f *Federation) startWebhook(ctx context.Context, c *Cluster) (*webhookServer, error) {
	port, err := f.ports.next()
	if err != nil {
		return nil, err
	}
	certDir := filepath.Join(c.dir, componentWebhook)
	serving, err := c.ca.issue(certRequest{
		commonName: "karmada-webhook",
		server:     true,
		ips:        []net.IP{net.IPv4(127, 0, 0, 1)},
		dnsNames:   []string{"localhost", "karmada-webhook.karmada-system.svc"},
	})
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating the webhook's certificate directory: %w", err)
	}
	for name, data := range map[string][]byte{webhookapp.DefaultCertName: serving.certPEM, webhookapp.DefaultKeyName: serving.keyPEM} {
		if err := os.WriteFile(filepath.Join(certDir, name), data, 0o600); err != nil {
			return nil, fmt.Errorf("writing the webhook's %s: %w", name, err)
		}
	}
	args := append([]string{"--bind-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", port),
		"--cert-dir=" + certDir, "--metrics-bind-address=0", "--health-probe-bind-address=0", "--graceful-shutdown-timeout=5s"},
		f.opts.WebhookArgs...)
	if f.opts.WebhookBinary != "" {
		return f.startWebhookProcess(ctx, c, port, args)
	}
	opts, err := webhookapp.ParseOptions(args...)
	if err != nil {
		return nil, err
	}
	logDir := filepath.Join(f.LogDir(), c.Name)
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", logDir, err)
	}
	logFile, err := os.OpenFile(filepath.Join(logDir, componentWebhook+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the webhook's log: %w", err)
	}
	logger := textlogger.NewLogger(textlogger.NewConfig(textlogger.Output(logFile), textlogger.Verbosity(1)))

	// The webhook outlives Start, whose ctx only bounds the start.
	runCtx, cancel := context.WithCancel(log.IntoContext(context.Background(), logger))
	w := &webhookServer{url: fmt.Sprintf("https://127.0.0.1:%d", port), cancel: cancel, done: make(chan error, 1), log: logFile}
	go func() { w.done <- webhookapp.Run(runCtx, c.Config, opts, logger) }()
	if err := w.register(ctx, c); err != nil {
		_ = w.stop()
		return nil, fmt.Errorf("starting the webhook (log: %s): %w", logFile.Name(), err)
	}
	log.FromContext(ctx).V(1).Info("Webhook ready", "cluster", c.Name, "url", w.url)
	return w, nil
}

// startWebhookProcess runs the webhook from Options.WebhookBinary with the
// flags the in-process one takes, and registers it the same way.
func (f *Federation) startWebhookProcess(ctx context.Context, c *Cluster, port int, args []string) (*webhookServer, error) {
	if _, err := webhookapp.ParseOptions(args...); err != nil {
		return nil, err
	}
	if err := c.writeComponentKubeconfigs(componentWebhook); err != nil {
		return nil, err
	}
	proc, err := f.sup.start(ctx, processSpec{
		cluster:   c.Name,
		component: componentWebhook,
		binary:    f.opts.WebhookBinary,
		args:      append(args, "--kubeconfig="+c.componentKubeconfig(componentWebhook)),
		tier:      tierClient,
	})
	if err != nil {
		return nil, err
	}
	// The supervisor stops it with the other clients of the API server; the
	// webhook's own stop only waits for that to have been asked.
	w := &webhookServer{url: fmt.Sprintf("https://127.0.0.1:%d", port), cancel: func() {}, done: make(chan error, 1)}
	go func() {
		<-proc.exited
		// Not exitError: the supervisor reports an early exit at Close.
		w.done <- fmt.Errorf("%s exited; see %s", proc, proc.logPath)
	}()
	w.process = proc
	if err := w.register(ctx, c); err != nil {
		return nil, fmt.Errorf("starting the webhook (log: %s): %w", proc.logPath, err)
	}
	log.FromContext(ctx).V(1).Info("Webhook ready", "cluster", c.Name, "url", w.url, "pid", proc.pid())
	return w, nil
}

// register waits for the server to answer, registers the configurations
// and the conversion, and waits until the API server sends it requests.
func (w *webhookServer) register(ctx context.Context, c *Cluster) error {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(c.CAData)
	httpClient := &http.Client{Timeout: time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	defer httpClient.CloseIdleConnections()
	if err := w.waitFor(ctx, "webhook serving", func(ctx context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, w.url+"/convert", nil)
		if err != nil {
			return false, err
		}
		resp, err := httpClient.Do(req)
		if err != nil {
			return false, nil
		}
		_ = resp.Body.Close()
		return true, nil
	}); err != nil {
		return err
	}
	if err := webhookapp.RegisterConfigurations(ctx, c.Client, w.url, c.CAData); err != nil {
		return err
	}
	if err := webhookapp.RegisterConversion(ctx, c.Client, w.url, c.CAData); err != nil {
		return err
	}
	// The API server picks configurations up asynchronously: once a policy
	// only the webhook refuses is refused, every later request goes through
	// it.
	return w.waitFor(ctx, "API server calling the webhook", func(ctx context.Context) (bool, error) {
		probe := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "policy.karmada.io/v1alpha1",
			"kind":       "PropagationPolicy",
			"metadata":   map[string]any{"name": "webhook-probe", "namespace": NamespaceSystem},
			"spec": map[string]any{
				"preemption":        "Always",
				"resourceSelectors": []any{map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}},
			},
		}}
		err := c.Client.Create(ctx, probe, client.DryRunAll)
		return apierrors.IsInvalid(err), nil
	})
}

// waitFor polls cond until it holds, ctx ends, or the webhook stops.
func (w *webhookServer) waitFor(ctx context.Context, what string, cond func(context.Context) (bool, error)) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, err := cond(ctx)
		if err != nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		case err := <-w.done:
			w.done <- err
			return fmt.Errorf("waiting for %s: the webhook stopped: %w", what, err)
		case <-tick.C:
		}
	}
}

// stop stops the in-process webhook, letting requests in flight finish, and
// reports whether it had failed. Stopping nil does nothing, and so does
// stopping a webhook process, which the supervisor stops with the API
// server's other clients.
func (w *webhookServer) stop() error {
	if w == nil || w.process != nil {
		return nil
	}
	w.cancel()
	err := <-w.done
	w.done <- err
	if closeErr := w.log.Close(); closeErr != nil && !errors.Is(closeErr, os.ErrClosed) {
		err = errors.Join(err, closeErr)
	}
	if err != nil {
		return fmt.Errorf("webhook: %w", err)
	}
	return nil
}
