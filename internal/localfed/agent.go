package localfed

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2/textlogger"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	agentapp "github.com/flotilla-io/flotilla/components/agent/app"
	"github.com/flotilla-io/flotilla/internal/agentaccess"
)

// componentAgent names a Pull member's agent log, <logs>/<member>/agent.log.
const componentAgent = "agent"

// agent is the agent of one Pull member, run in this process as a
// deployment in the member would run karmada-agent: it reaches the control
// plane as system:karmada:agent:<member> with only that agent's rights, and
// its own member as an administrator.
type agent struct {
	member       *Cluster
	controlPlane *rest.Config
	args         []string
	logPath      string

	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan error
}

// newAgent grants the member's agent its rights in the control plane and
// issues its client certificate.
func (f *Federation) newAgent(ctx context.Context, m *Cluster) (*agent, error) {
	cp := f.ControlPlane
	if err := agentaccess.Grant(ctx, cp.Client, m.Name); err != nil {
		return nil, fmt.Errorf("granting the agent of %s its rights: %w", m.Name, err)
	}
	cert, err := cp.ca.issue(certRequest{commonName: agentaccess.User(m.Name), organizations: []string{agentaccess.Group}})
	if err != nil {
		return nil, err
	}
	logDir := filepath.Join(f.LogDir(), m.Name)
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", logDir, err)
	}
	// One agent per member: nothing to elect.
	args := []string{"--cluster-name=" + m.Name, "--metrics-bind-address=0", "--health-probe-bind-address=0", "--leader-elect=false"}
	if f.opts.APIServerOnlyMembers {
		// No token controller runs there to fill the token Secrets of the
		// credentials an agent reports by default.
		args = append(args, "--report-secrets=None")
	}
	args = append(args, f.opts.AgentArgs...)
	return &agent{
		member: m,
		controlPlane: &rest.Config{Host: cp.Endpoint, TLSClientConfig: rest.TLSClientConfig{
			CAData: cp.CAData, CertData: cert.certPEM, KeyData: cert.keyPEM,
		}},
		args:    args,
		logPath: filepath.Join(logDir, componentAgent+".log"),
	}, nil
}

// start runs the agent until stop; it does nothing if it runs.
func (a *agent) start() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cancel != nil {
		return nil
	}
	opts, err := agentapp.ParseOptions(a.args...)
	if err != nil {
		return err
	}
	opts.Restartable = true
	logFile, err := os.OpenFile(a.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("opening the agent's log: %w", err)
	}
	logger := textlogger.NewLogger(textlogger.NewConfig(textlogger.Output(logFile), textlogger.Verbosity(1)))
	// The agent outlives the start of the federation.
	ctx, cancel := context.WithCancel(log.IntoContext(context.Background(), logger))
	done := make(chan error, 1)
	a.cancel, a.done = cancel, done
	go func() {
		err := agentapp.RunWithConfigs(ctx, a.controlPlane, a.member.Config, opts, logger)
		_ = logFile.Close()
		done <- err
	}()
	return nil
}

// stop stops the agent and returns its error; it does nothing if it does
// not run.
func (a *agent) stop() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cancel == nil {
		return nil
	}
	a.cancel()
	err := <-a.done
	a.cancel, a.done = nil, nil
	if err != nil {
		return fmt.Errorf("agent of %s (log: %s): %w", a.member.Name, a.logPath, err)
	}
	return nil
}

// exited reports, without waiting, an agent that stopped on its own.
func (a *agent) exited() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.done == nil {
		return nil
	}
	select {
	case err := <-a.done:
		a.done <- err
		return fmt.Errorf("agent of %s stopped (log: %s): %w", a.member.Name, a.logPath, err)
	default:
		return nil
	}
}

// startAgents starts the agents of the Pull members and waits until each has
// registered its Cluster.
func (f *Federation) startAgents(ctx context.Context) error {
	for _, m := range f.Members {
		if !m.Pull {
			continue
		}
		a, err := f.newAgent(ctx, m)
		if err != nil {
			return err
		}
		f.agents[m.Name] = a
		if err := a.start(); err != nil {
			return err
		}
	}
	for _, m := range f.Members {
		a := f.agents[m.Name]
		if a == nil {
			continue
		}
		err := waitForAgent(ctx, m.Name+" agent registered", a, func(ctx context.Context) (bool, error) {
			err := f.ControlPlane.Client.Get(ctx, client.ObjectKey{Name: m.Name}, &clusterv1alpha1.Cluster{})
			if apierrors.IsNotFound(err) {
				return false, nil
			}
			return err == nil, err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// waitForAgent polls cond until it holds, ctx ends or the agent stops.
func waitForAgent(ctx context.Context, what string, a *agent, cond func(context.Context) (bool, error)) error {
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
		if err := a.exited(); err != nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		case <-tick.C:
		}
	}
}

// StopAgent stops the agent of the Pull member called name, as if its
// deployment went away: the member keeps running, and the control plane
// hears from it no more.
func (f *Federation) StopAgent(ctx context.Context, name string) error {
	a := f.agents[name]
	if a == nil {
		return fmt.Errorf("stopping agent: %q is not a Pull member", name)
	}
	err := a.stop()
	log.FromContext(ctx).Info("Agent stopped", "cluster", name)
	return err
}

// StartAgent starts again the agent StopAgent stopped.
func (f *Federation) StartAgent(ctx context.Context, name string) error {
	a := f.agents[name]
	if a == nil {
		return fmt.Errorf("starting agent: %q is not a Pull member", name)
	}
	if err := a.start(); err != nil {
		return err
	}
	log.FromContext(ctx).Info("Agent started", "cluster", name)
	return nil
}

// stopAgents stops every agent, reporting those that had failed.
func (f *Federation) stopAgents() error {
	var errs []error
	for _, a := range f.agents {
		errs = append(errs, a.stop())
	}
	return errors.Join(errs...)
}
