package app

import (
	"context"
	"net/http"
	"slices"
	"testing"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/controllertest"
	"github.com/flotilla-io/flotilla/internal/servedkinds/servedkindstest"
)

func probe(ctx context.Context, url string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	_ = resp.Body.Close()
	return resp.StatusCode, nil
}

// TestWaitsForKarmadasKinds starts the controller-manager against an API
// server that does not serve Karmada's kinds yet: it waits, saying so, alive
// and not ready; once the CRDs are installed it starts and its controllers
// work.
func TestWaitsForKarmadasKinds(t *testing.T) {
	cfg, poll := servedkindstest.WaitsThenStarts(t, func(ctx context.Context, cfg *rest.Config, probeAddr string, logger logr.Logger) error {
		opts, err := ParseOptions("--metrics-bind-address=0", "--health-probe-bind-address="+probeAddr)
		if err != nil {
			return err
		}
		// Other tests of the package run the controllers in this process too.
		opts.Restartable = true
		return Run(ctx, cfg, opts, logger)
	})
	c, err := client.New(cfg, client.Options{Scheme: controllertest.Scheme(t)})
	if err != nil {
		t.Fatal(err)
	}
	cluster := &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "late"},
		Spec:       clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push, APIEndpoint: "https://127.0.0.1:1"},
	}
	if err := c.Create(t.Context(), cluster); err != nil {
		t.Fatal(err)
	}
	poll("the cluster controller takes the Cluster", func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(cluster), cluster); err != nil {
			return false, err
		}
		return slices.Contains(cluster.Finalizers, clusterv1alpha1.ClusterControllerFinalizer), nil
	})
}
