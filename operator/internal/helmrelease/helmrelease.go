// Package helmrelease installs, upgrades and removes the operator's Helm
// releases with the Helm v3 SDK: one release per component of an instance,
// stored as Helm stores them (Secrets in the release's namespace), so that
// `helm list`, `helm history` and `helm get values` show what the operator
// did.
package helmrelease

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/go-logr/logr"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// LabelDigest on a release (and so on its storage Secret) is a digest of the
// chart and values it was made from: the operator upgrades only when the
// digest of what it wants differs, instead of adding a revision per
// reconcile.
const LabelDigest = "operator.karmada.io/release-digest"

// maxHistory bounds the revisions kept per release, as `helm upgrade
// --history-max` does.
const maxHistory = 5

// Release is what one component of an instance should be.
type Release struct {
	Name      string
	Namespace string
	Chart     *chart.Chart
	Values    map[string]any
	// Labels are stamped on every object of the release and on the
	// release's own storage Secret.
	Labels map[string]string
	// Owner, when set, becomes an owner reference of every object.
	Owner *metav1.OwnerReference
	// Force upgrades even when the digest is unchanged: someone changed or
	// deleted an object of the release and it is to be put back.
	Force bool
}

// Outcome says what Apply did.
type Outcome string

// Outcomes of Apply.
const (
	Installed Outcome = "Installed"
	Upgraded  Outcome = "Upgraded"
	Unchanged Outcome = "Unchanged"
)

// Client runs Helm actions against one cluster.
type Client struct {
	config *rest.Config
	log    logr.Logger

	mu      sync.Mutex
	configs map[string]*action.Configuration // by namespace
	// locks serialise actions on one release: Helm refuses concurrent
	// operations on a release and would leave it pending.
	locks map[string]*sync.Mutex
}

// New returns a Client for the cluster of config.
func New(config *rest.Config, log logr.Logger) *Client {
	return &Client{config: config, log: log, configs: map[string]*action.Configuration{}, locks: map[string]*sync.Mutex{}}
}

func (c *Client) actionConfig(namespace string) (*action.Configuration, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cfg, ok := c.configs[namespace]; ok {
		return cfg, nil
	}
	getter, err := newRESTGetter(c.config, namespace)
	if err != nil {
		return nil, err
	}
	cfg := &action.Configuration{}
	log := c.log.WithValues("namespace", namespace)
	if err := cfg.Init(getter, namespace, "secret", func(format string, v ...any) {
		log.V(2).Info(fmt.Sprintf(format, v...))
	}); err != nil {
		return nil, fmt.Errorf("initialising Helm for namespace %s: %w", namespace, err)
	}
	c.configs[namespace] = cfg
	return cfg, nil
}

func (c *Client) lock(namespace, name string) func() {
	c.mu.Lock()
	key := namespace + "/" + name
	l, ok := c.locks[key]
	if !ok {
		l = &sync.Mutex{}
		c.locks[key] = l
	}
	c.mu.Unlock()
	l.Lock()
	return l.Unlock
}

// Digest is a short digest of a chart's files and the values, stable across
// map orders.
func Digest(ch *chart.Chart, values map[string]any) (string, error) {
	h := sha256.New()
	files := append([]*chart.File{}, ch.Raw...)
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	for _, f := range files {
		_, _ = fmt.Fprintf(h, "%s\x00%d\x00", f.Name, len(f.Data))
		h.Write(f.Data)
	}
	// encoding/json writes map keys sorted, so equal values hash equally.
	v, err := json.Marshal(values)
	if err != nil {
		return "", fmt.Errorf("encoding values: %w", err)
	}
	h.Write(v)
	return hex.EncodeToString(h.Sum(nil))[:32], nil
}

// Apply installs the release, or upgrades it when the chart or values
// changed, when the last operation did not complete, or when Force is set.
// It never waits for the release's workloads: the caller gates on their
// rollout itself.
func (c *Client) Apply(ctx context.Context, r Release) (*release.Release, Outcome, error) {
	defer c.lock(r.Namespace, r.Name)()
	cfg, err := c.actionConfig(r.Namespace)
	if err != nil {
		return nil, "", err
	}
	digest, err := Digest(r.Chart, r.Values)
	if err != nil {
		return nil, "", err
	}
	labels := map[string]string{LabelDigest: digest}
	for k, v := range r.Labels {
		labels[k] = v
	}
	post := ownerPostRenderer{labels: r.Labels, owner: r.Owner}

	last, err := cfg.Releases.Last(r.Name)
	switch {
	case errors.Is(err, driver.ErrReleaseNotFound):
		last = nil
	case err != nil:
		return nil, "", fmt.Errorf("reading release %s: %w", r.Name, err)
	}

	if last != nil && last.Info.Status.IsPending() {
		// Only the operator acts on its releases, under the lock above; a
		// pending one is an operation the operator did not live to finish.
		// Helm refuses to act on it until it is marked failed.
		last.SetStatus(release.StatusFailed, "operation interrupted; superseded by the operator")
		if err := cfg.Releases.Update(last); err != nil {
			return nil, "", fmt.Errorf("marking interrupted release %s failed: %w", r.Name, err)
		}
	}

	if last == nil || (last.Info.Status != release.StatusDeployed && !hasDeployed(cfg, r.Name)) {
		install := action.NewInstall(cfg)
		install.ReleaseName = r.Name
		install.Namespace = r.Namespace
		install.Labels = labels
		install.PostRenderer = post
		// A failed first install leaves a record; replacing it is what
		// `helm install --replace` does.
		install.Replace = last != nil
		// Objects left by an earlier instance of the same name (its release
		// records deleted by hand) are adopted rather than refused.
		install.TakeOwnership = true
		rel, err := install.RunWithContext(ctx, r.Chart, r.Values)
		if err != nil {
			return rel, "", fmt.Errorf("installing release %s: %w", r.Name, err)
		}
		return rel, Installed, nil
	}

	if !r.Force && last.Info.Status == release.StatusDeployed && last.Labels[LabelDigest] == digest {
		return last, Unchanged, nil
	}
	upgrade := action.NewUpgrade(cfg)
	upgrade.Namespace = r.Namespace
	upgrade.Labels = labels
	upgrade.PostRenderer = post
	upgrade.MaxHistory = maxHistory
	// Values are the whole desired state each time, never merged with what
	// a person may have set through `helm upgrade`.
	upgrade.ResetValues = true
	upgrade.TakeOwnership = true
	rel, err := upgrade.RunWithContext(ctx, r.Name, r.Chart, r.Values)
	if err != nil {
		return rel, "", fmt.Errorf("upgrading release %s: %w", r.Name, err)
	}
	return rel, Upgraded, nil
}

func hasDeployed(cfg *action.Configuration, name string) bool {
	_, err := cfg.Releases.Deployed(name)
	return err == nil
}

// Get returns the last revision of a release, or nil when there is none.
func (c *Client) Get(namespace, name string) (*release.Release, error) {
	cfg, err := c.actionConfig(namespace)
	if err != nil {
		return nil, err
	}
	rel, err := cfg.Releases.Last(name)
	if errors.Is(err, driver.ErrReleaseNotFound) {
		return nil, nil
	}
	return rel, err
}

// Uninstall removes a release and everything it made, and its history. A
// release that does not exist is not an error.
func (c *Client) Uninstall(ctx context.Context, namespace, name string) error {
	defer c.lock(namespace, name)()
	cfg, err := c.actionConfig(namespace)
	if err != nil {
		return err
	}
	uninstall := action.NewUninstall(cfg)
	uninstall.IgnoreNotFound = true
	uninstall.DeletionPropagation = "background"
	if _, err := uninstall.Run(name); err != nil && !errors.Is(err, driver.ErrReleaseNotFound) {
		return fmt.Errorf("uninstalling release %s: %w", name, err)
	}
	return nil
}
