package customization_test

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/fstest"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/interpreter"
	"github.com/flotilla-io/flotilla/lua"
)

func customizationOf(name, script string) *configv1alpha1.ResourceInterpreterCustomization {
	return &configv1alpha1.ResourceInterpreterCustomization{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: configv1alpha1.ResourceInterpreterCustomizationSpec{
			Target: configv1alpha1.CustomizationTarget{APIVersion: "apps/v1", Kind: "Deployment"},
			Customizations: configv1alpha1.CustomizationRules{
				ReplicaResource: &configv1alpha1.ReplicaResourceRequirement{LuaScript: script},
			},
		},
	}
}

func deployment(replicas int64) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "shop"},
		"spec":     map[string]any{"replicas": replicas},
	}}
}

// TestLiveCustomizations: customizations created, updated and deleted in
// the API server change the interpreter's answers without a restart.
func TestLiveCustomizations(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := client.New(restConfig, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	informers, err := cache.New(restConfig, cache.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	vm := lua.New()
	t.Cleanup(vm.Close)
	chain, err := interpreter.New(ctx, interpreter.Options{VM: vm, Informers: informers, Bundled: fstest.MapFS{}})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		if err := informers.Start(ctx); err != nil {
			t.Errorf("cache: %v", err)
		}
	}()
	if err := chain.WaitForSync(ctx); err != nil {
		t.Fatal(err)
	}

	eventually := func(what string, want int32) {
		t.Helper()
		var got int32
		var err error
		for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if got, _, err = chain.GetReplicas(ctx, deployment(3)); err == nil && got == want {
				return
			}
		}
		t.Fatalf("%s: replicas %d (err %v), want %d", what, got, err, want)
	}
	eventually("native rule", 3)

	ric := customizationOf("double", "function GetReplicas(obj)\n  return obj.spec.replicas * 2, nil\nend")
	if err := c.Create(ctx, ric); err != nil {
		t.Fatal(err)
	}
	eventually("after create", 6)

	ric.Spec.Customizations.ReplicaResource.LuaScript = "function GetReplicas(obj)\n  return obj.spec.replicas * 3, nil\nend"
	if err := c.Update(ctx, ric); err != nil {
		t.Fatal(err)
	}
	eventually("after update", 9)

	first := customizationOf("aaa-one", "function GetReplicas(obj) return 1, nil end")
	if err := c.Create(ctx, first); err != nil {
		t.Fatal(err)
	}
	eventually("a second customization, first by name", 1)

	if err := c.Delete(ctx, first); err != nil {
		t.Fatal(err)
	}
	eventually("after deleting it", 9)
	if err := c.Delete(ctx, ric); err != nil {
		t.Fatal(err)
	}
	eventually("after deleting all", 3)
}

// TestLiveWebhooks: a webhook configuration created in the API server
// takes over an operation, and gives it back when deleted.
func TestLiveWebhooks(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in configv1alpha1.ResourceInterpreterContext
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Request == nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		healthy := false
		_ = json.NewEncoder(w).Encode(&configv1alpha1.ResourceInterpreterContext{TypeMeta: in.TypeMeta,
			Response: &configv1alpha1.ResourceInterpreterResponse{UID: in.Request.UID, Successful: true, Healthy: &healthy}})
	}))
	defer srv.Close()
	c, err := client.New(restConfig, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	informers, err := cache.New(restConfig, cache.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	chain, err := interpreter.New(ctx, interpreter.Options{Informers: informers, Bundled: fstest.MapFS{}})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = informers.Start(ctx) }()
	if err := chain.WaitForSync(ctx); err != nil {
		t.Fatal(err)
	}
	eventually := func(what string, want bool) {
		t.Helper()
		var got bool
		var err error
		for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if got, err = chain.InterpretHealth(ctx, deployment(0)); err == nil && got == want {
				return
			}
		}
		t.Fatalf("%s: healthy %v (err %v), want %v", what, got, err, want)
	}
	eventually("native rule", true)
	url := srv.URL
	timeout := int32(5)
	hooks := &configv1alpha1.ResourceInterpreterWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "health"},
		Webhooks: []configv1alpha1.ResourceInterpreterWebhook{{
			Name: "health.example.com",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url,
				CABundle: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})},
			Rules: []configv1alpha1.RuleWithOperations{{
				Operations: []configv1alpha1.InterpreterOperation{configv1alpha1.InterpreterOperationInterpretHealth},
				Rule:       configv1alpha1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Kinds: []string{"Deployment"}},
			}},
			TimeoutSeconds:             &timeout,
			InterpreterContextVersions: []string{"v1alpha1"},
		}},
	}
	if err := c.Create(ctx, hooks); err != nil {
		t.Fatal(err)
	}
	eventually("after creating the webhook", false)
	if err := c.Delete(ctx, hooks); err != nil {
		t.Fatal(err)
	}
	eventually("after deleting it", true)
}
