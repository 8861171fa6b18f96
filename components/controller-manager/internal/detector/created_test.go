package detector

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

func TestCreatedBindings(t *testing.T) {
	now := time.Unix(1000, 0)
	c := newCreatedBindings()
	c.now = func() time.Time { return now }
	key := client.ObjectKey{Namespace: "ns", Name: "web-deployment"}
	rb := &workv1alpha2.ResourceBinding{}
	rb.Name, rb.Namespace, rb.ResourceVersion = key.Name, key.Namespace, "7"

	tests := []struct {
		name   string
		step   func()
		wantRV string // "" when nothing is remembered
	}{
		{name: "nothing created", step: func() {}},
		{name: "created", step: func() { c.add(key, rb) }, wantRV: "7"},
		{name: "a returned copy is the caller's", step: func() {
			got, _ := c.get(key)
			got.SetResourceVersion("8")
		}, wantRV: "7"},
		{name: "within the TTL", step: func() { now = now.Add(createdTTL) }, wantRV: "7"},
		{name: "past the TTL", step: func() { now = now.Add(time.Second) }},
		{name: "created again, then seen in the cache", step: func() {
			c.add(key, rb)
			c.forget(key)
		}},
	}
	for _, tt := range tests {
		tt.step()
		got, ok := c.get(key)
		switch {
		case tt.wantRV == "" && ok:
			t.Errorf("%s: remembered resourceVersion %s, want nothing", tt.name, got.GetResourceVersion())
		case tt.wantRV != "" && !ok:
			t.Errorf("%s: nothing remembered, want resourceVersion %s", tt.name, tt.wantRV)
		case ok && got.GetResourceVersion() != tt.wantRV:
			t.Errorf("%s: resourceVersion %s, want %s", tt.name, got.GetResourceVersion(), tt.wantRV)
		}
	}

	// Entries the cache never shows are swept by later creates.
	c.add(key, rb)
	now = now.Add(2 * createdTTL)
	c.add(client.ObjectKey{Namespace: "ns", Name: "other"}, rb)
	if n := c.len(); n != 1 {
		t.Errorf("%d bindings remembered after the TTL, want 1", n)
	}
}

// TestOneCreatePerBinding: claiming a template reconciles it again before
// its new binding reaches the cache; that pass must not POST the binding a
// second time (an AlreadyExists, then a GET).
func TestOneCreatePerBinding(t *testing.T) {
	needServer(t)
	ctx := context.Background()
	ns := newNamespace(t)
	create(t, newPP(ns, "all", selectDeployment("")))
	before := bindingCreates(t, ctx)

	const templates = 20
	for i := range templates {
		create(t, newDeployment(ns, fmt.Sprintf("web-%d", i), 1, nil))
	}
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, eventually, true, func(ctx context.Context) (bool, error) {
		list := &workv1alpha2.ResourceBindingList{}
		if err := testClient.List(ctx, list, client.InNamespace(ns)); err != nil {
			return false, err
		}
		return len(list.Items) == templates, nil
	})
	if err != nil {
		t.Fatalf("waiting for %d bindings: %v", templates, err)
	}
	// Every pass the claims caused has ended once a pass queued after
	// them has.
	want := claimOfPP(t, ns, "all")
	for i := range templates {
		dep := newDeployment(ns, fmt.Sprintf("web-%d", i), 1, nil)
		claimedBy(t, dep, want)
		if err := resync(t, deploymentKey(dep)); err != nil {
			t.Errorf("reconciling %s: %v", dep.Name, err)
		}
	}

	after := bindingCreates(t, ctx)
	if got := after["201"] - before["201"]; got != templates {
		t.Errorf("%v bindings created, want %d", got, templates)
	}
	if got := after["409"] - before["409"]; got != 0 {
		t.Errorf("%v creates of a binding that existed already, want none", got)
	}
}

// claimOfPP is the claim of the PropagationPolicy ns/name.
func claimOfPP(t *testing.T, ns, name string) claim {
	t.Helper()
	pp := newPP(ns, name)
	return ppClaim(pp, permanentID(t, pp))
}

// bindingCreates counts the API server's POSTs of ResourceBindings by
// response code, from its apiserver_request_total.
func bindingCreates(t *testing.T, ctx context.Context) map[string]float64 {
	t.Helper()
	kube, err := kubernetes.NewForConfig(testConfig)
	if err != nil {
		t.Fatal(err)
	}
	body, err := kube.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		t.Fatalf("reading /metrics: %v", err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	counts := map[string]float64{}
	for _, m := range families["apiserver_request_total"].GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["resource"] == "resourcebindings" && labels["verb"] == "POST" {
			counts[labels["code"]] += m.GetCounter().GetValue()
		}
	}
	return counts
}
