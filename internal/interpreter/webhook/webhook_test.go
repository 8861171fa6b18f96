package webhook_test

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/interpreter/webhook"
)

func ctx() context.Context { return context.Background() }

type answerFunc func(req *configv1alpha1.ResourceInterpreterRequest) *configv1alpha1.ResourceInterpreterResponse

func server(t *testing.T, answer answerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in configv1alpha1.ResourceInterpreterContext
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Request == nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		resp := answer(in.Request)
		if resp.UID == "" {
			resp.UID = in.Request.UID
		}
		_ = json.NewEncoder(w).Encode(&configv1alpha1.ResourceInterpreterContext{TypeMeta: in.TypeMeta, Response: resp})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func config(name string, srv *httptest.Server, timeoutSeconds int32, rules ...configv1alpha1.RuleWithOperations) *configv1alpha1.ResourceInterpreterWebhookConfiguration {
	url := srv.URL
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	return &configv1alpha1.ResourceInterpreterWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []configv1alpha1.ResourceInterpreterWebhook{{
			Name:                       "interpreter.example.com",
			ClientConfig:               admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: ca},
			Rules:                      rules,
			TimeoutSeconds:             &timeoutSeconds,
			InterpreterContextVersions: []string{"v1alpha1"},
		}},
	}
}

func allOps() configv1alpha1.RuleWithOperations {
	return configv1alpha1.RuleWithOperations{
		Operations: []configv1alpha1.InterpreterOperation{"*"},
		Rule:       configv1alpha1.Rule{APIGroups: []string{"example.com"}, APIVersions: []string{"*"}, Kinds: []string{"Widget"}},
	}
}

func widget() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w", "namespace": "shop"},
		"spec":     map[string]any{"size": int64(3)},
	}}
}

// widgetAnswer answers every operation on a Widget the way a working
// interpreter webhook would.
func widgetAnswer(req *configv1alpha1.ResourceInterpreterRequest) *configv1alpha1.ResourceInterpreterResponse {
	jsonPatch := configv1alpha1.PatchTypeJSONPatch
	switch req.Operation {
	case configv1alpha1.InterpreterOperationReviseReplica:
		patch, _ := json.Marshal([]map[string]any{{"op": "replace", "path": "/spec/size", "value": *req.DesiredReplicas}})
		return &configv1alpha1.ResourceInterpreterResponse{Successful: true, Patch: patch, PatchType: &jsonPatch}
	case configv1alpha1.InterpreterOperationRetain:
		var observed map[string]any
		_ = json.Unmarshal(req.ObservedObject.Raw, &observed)
		patch, _ := json.Marshal([]map[string]any{{"op": "add", "path": "/spec/owner", "value": observed["spec"].(map[string]any)["owner"]}})
		return &configv1alpha1.ResourceInterpreterResponse{Successful: true, Patch: patch, PatchType: &jsonPatch}
	case configv1alpha1.InterpreterOperationAggregateStatus:
		patch, _ := json.Marshal([]map[string]any{{"op": "add", "path": "/status", "value": map[string]any{"clusters": len(req.AggregatedStatus)}}})
		return &configv1alpha1.ResourceInterpreterResponse{Successful: true, Patch: patch, PatchType: &jsonPatch}
	case configv1alpha1.InterpreterOperationInterpretReplica:
		n := int32(9)
		return &configv1alpha1.ResourceInterpreterResponse{Successful: true, Replicas: &n,
			ReplicaRequirements: &workv1alpha2.ReplicaRequirements{PriorityClassName: "high"}}
	case configv1alpha1.InterpreterOperationInterpretHealth:
		healthy := true
		return &configv1alpha1.ResourceInterpreterResponse{Successful: true, Healthy: &healthy}
	case configv1alpha1.InterpreterOperationInterpretStatus:
		return &configv1alpha1.ResourceInterpreterResponse{Successful: true, RawStatus: &runtime.RawExtension{Raw: []byte(`{"ready":true}`)}}
	case configv1alpha1.InterpreterOperationInterpretDependency:
		return &configv1alpha1.ResourceInterpreterResponse{Successful: true, Dependencies: []configv1alpha1.DependentObjectReference{
			{APIVersion: "v1", Kind: "Secret", Name: "creds"}}}
	}
	return &configv1alpha1.ResourceInterpreterResponse{Successful: true}
}

func TestPatchAnswers(t *testing.T) {
	var seen []*configv1alpha1.ResourceInterpreterRequest
	srv := server(t, func(req *configv1alpha1.ResourceInterpreterRequest) *configv1alpha1.ResourceInterpreterResponse {
		seen = append(seen, req)
		return widgetAnswer(req)
	})
	s := webhook.NewStore(webhook.Options{})
	s.Apply(ctx(), config("widgets", srv, 5, allOps()))

	revised, handled, err := s.ReviseReplica(ctx(), widget(), 5)
	if err != nil || !handled {
		t.Fatalf("ReviseReplica: handled %v, %v", handled, err)
	}
	if got := revised.Object["spec"].(map[string]any)["size"]; got != int64(5) {
		t.Errorf("revised size %v (%T), want int64 5", got, got)
	}

	observed := widget()
	observed.Object["spec"].(map[string]any)["owner"] = "member"
	retained, _, err := s.Retain(ctx(), widget(), observed)
	if err != nil || retained.Object["spec"].(map[string]any)["owner"] != "member" {
		t.Errorf("Retain: %v, %v", retained, err)
	}
	if last := seen[len(seen)-1]; last.ObservedObject == nil || last.Operation != configv1alpha1.InterpreterOperationRetain {
		t.Errorf("Retain request without observed object: %+v", last)
	}

	items := []workv1alpha2.AggregatedStatusItem{{ClusterName: "a"}, {ClusterName: "b"}}
	aggregated, _, err := s.AggregateStatus(ctx(), widget(), items)
	if err != nil || aggregated.Object["status"].(map[string]any)["clusters"] != int64(2) {
		t.Errorf("AggregateStatus: %v, %v", aggregated, err)
	}

	replicas, requires, _, err := s.GetReplicas(ctx(), widget())
	if err != nil || replicas != 9 || requires.PriorityClassName != "high" {
		t.Errorf("GetReplicas: %d, %+v, %v", replicas, requires, err)
	}
	healthy, _, err := s.InterpretHealth(ctx(), widget())
	if err != nil || !healthy {
		t.Errorf("InterpretHealth: %v, %v", healthy, err)
	}
	status, _, err := s.ReflectStatus(ctx(), widget())
	if err != nil || string(status.Raw) != `{"ready":true}` {
		t.Errorf("ReflectStatus: %v, %v", status, err)
	}
	deps, _, err := s.GetDependencies(ctx(), widget())
	if err != nil || len(deps) != 1 || deps[0].Name != "creds" {
		t.Errorf("GetDependencies: %v, %v", deps, err)
	}
	for _, req := range seen {
		if req.Kind.Kind != "Widget" || req.Name != "w" || req.Namespace != "shop" || req.UID == "" {
			t.Errorf("request without identity: %+v", req)
		}
	}
}

func TestErrorAnswer(t *testing.T) {
	srv := server(t, func(*configv1alpha1.ResourceInterpreterRequest) *configv1alpha1.ResourceInterpreterResponse {
		return &configv1alpha1.ResourceInterpreterResponse{Successful: false,
			Status: &configv1alpha1.RequestStatus{Code: 500, Message: "widget controller is on fire"}}
	})
	s := webhook.NewStore(webhook.Options{})
	s.Apply(ctx(), config("widgets", srv, 5, allOps()))
	_, handled, err := s.ReviseReplica(ctx(), widget(), 2)
	if !handled || !errors.Is(err, webhook.ErrWebhook) || !strings.Contains(err.Error(), "widget controller is on fire") {
		t.Errorf("handled %v, err %v", handled, err)
	}
}

func TestBadAnswers(t *testing.T) {
	tests := []struct {
		name   string
		answer answerFunc
	}{
		{"wrong uid", func(*configv1alpha1.ResourceInterpreterRequest) *configv1alpha1.ResourceInterpreterResponse {
			return &configv1alpha1.ResourceInterpreterResponse{UID: "someone-else", Successful: true}
		}},
		{"replicas missing", func(*configv1alpha1.ResourceInterpreterRequest) *configv1alpha1.ResourceInterpreterResponse {
			return &configv1alpha1.ResourceInterpreterResponse{Successful: true}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := webhook.NewStore(webhook.Options{})
			s.Apply(ctx(), config("widgets", server(t, tt.answer), 5, allOps()))
			if _, _, _, err := s.GetReplicas(ctx(), widget()); !errors.Is(err, webhook.ErrWebhook) {
				t.Errorf("err = %v, want ErrWebhook", err)
			}
		})
	}
	jsonPatch := configv1alpha1.PatchTypeJSONPatch
	s := webhook.NewStore(webhook.Options{})
	s.Apply(ctx(), config("widgets", server(t, func(*configv1alpha1.ResourceInterpreterRequest) *configv1alpha1.ResourceInterpreterResponse {
		return &configv1alpha1.ResourceInterpreterResponse{Successful: true, Patch: []byte(`[{"op":"remove","path":"/nope"}]`), PatchType: &jsonPatch}
	}), 5, allOps()))
	if _, _, err := s.ReviseReplica(ctx(), widget(), 1); !errors.Is(err, webhook.ErrWebhook) {
		t.Errorf("patch removing a missing field: %v, want ErrWebhook", err)
	}
}

// TestSlowWebhook: a webhook that does not answer within its timeout fails
// the call after the timeout; nothing hangs.
func TestSlowWebhook(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-time.After(10 * time.Second):
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	s := webhook.NewStore(webhook.Options{})
	s.Apply(ctx(), config("slow", srv, 1, allOps()))
	start := time.Now()
	_, handled, err := s.InterpretHealth(ctx(), widget())
	elapsed := time.Since(start)
	if !handled || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("handled %v, err %v; want a deadline error", handled, err)
	}
	if elapsed < 900*time.Millisecond || elapsed > 3*time.Second {
		t.Errorf("failed after %s, want about the 1s timeout", elapsed)
	}
	if !strings.Contains(err.Error(), "slow/interpreter.example.com") {
		t.Errorf("error %q does not name the webhook", err)
	}
}

func TestWebhookDown(t *testing.T) {
	srv := server(t, func(*configv1alpha1.ResourceInterpreterRequest) *configv1alpha1.ResourceInterpreterResponse {
		return &configv1alpha1.ResourceInterpreterResponse{Successful: true}
	})
	s := webhook.NewStore(webhook.Options{})
	s.Apply(ctx(), config("down", srv, 5, allOps()))
	srv.Close()
	start := time.Now()
	if _, _, err := s.InterpretHealth(ctx(), widget()); !errors.Is(err, webhook.ErrWebhook) {
		t.Errorf("err = %v, want ErrWebhook", err)
	}
	if elapsed := time.Since(start); elapsed > 3*time.Second {
		t.Errorf("took %s", elapsed)
	}
}

func TestUntrustedCertificate(t *testing.T) {
	srv := server(t, func(*configv1alpha1.ResourceInterpreterRequest) *configv1alpha1.ResourceInterpreterResponse {
		return &configv1alpha1.ResourceInterpreterResponse{Successful: true}
	})
	other := httptest.NewTLSServer(http.NotFoundHandler())
	defer other.Close()
	c := config("untrusted", srv, 5, allOps())
	c.Webhooks[0].ClientConfig.CABundle = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: other.Certificate().Raw})
	s := webhook.NewStore(webhook.Options{})
	s.Apply(ctx(), c)
	if _, _, err := s.InterpretHealth(ctx(), widget()); !errors.Is(err, webhook.ErrWebhook) {
		t.Errorf("err = %v, want a certificate failure", err)
	}
}

func TestRuleMatching(t *testing.T) {
	srv := server(t, func(*configv1alpha1.ResourceInterpreterRequest) *configv1alpha1.ResourceInterpreterResponse {
		return &configv1alpha1.ResourceInterpreterResponse{Successful: true}
	})
	s := webhook.NewStore(webhook.Options{})
	s.Apply(ctx(), config("apps", srv, 5, configv1alpha1.RuleWithOperations{
		Operations: []configv1alpha1.InterpreterOperation{"InterpretReplica", "ReviseReplica"},
		Rule:       configv1alpha1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Kinds: []string{"*"}},
	}))
	s.Apply(ctx(), config("core", srv, 5, configv1alpha1.RuleWithOperations{
		Operations: []configv1alpha1.InterpreterOperation{"*"},
		Rule:       configv1alpha1.Rule{APIGroups: []string{""}, APIVersions: []string{"*"}, Kinds: []string{"Pod"}},
	}))
	tests := []struct {
		gvk  schema.GroupVersionKind
		op   configv1alpha1.InterpreterOperation
		want bool
	}{
		{schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, "InterpretReplica", true},
		{schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "StatefulSet"}, "ReviseReplica", true},
		{schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, "InterpretHealth", false},
		{schema.GroupVersionKind{Group: "apps", Version: "v1beta1", Kind: "Deployment"}, "InterpretReplica", false},
		{schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, "Retain", true},
		{schema.GroupVersionKind{Version: "v1", Kind: "Service"}, "Retain", false},
	}
	for _, tt := range tests {
		if got := s.HookEnabled(tt.gvk, tt.op); got != tt.want {
			t.Errorf("HookEnabled(%s, %s) = %v, want %v", tt.gvk, tt.op, got, tt.want)
		}
	}
	s.Delete(ctx(), "core")
	if s.HookEnabled(schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, "Retain") {
		t.Error("deleted configuration still matches")
	}
}

// TestFirstWebhookByName: when several webhooks match, the first by
// "<configuration>/<webhook>" answers.
func TestFirstWebhookByName(t *testing.T) {
	answer := func(n int32) answerFunc {
		return func(*configv1alpha1.ResourceInterpreterRequest) *configv1alpha1.ResourceInterpreterResponse {
			return &configv1alpha1.ResourceInterpreterResponse{Successful: true, Replicas: &n}
		}
	}
	s := webhook.NewStore(webhook.Options{})
	s.Apply(ctx(), config("zz", server(t, answer(2)), 5, allOps()))
	s.Apply(ctx(), config("aa", server(t, answer(1)), 5, allOps()))
	got, _, _, err := s.GetReplicas(ctx(), widget())
	if err != nil || got != 1 {
		t.Errorf("GetReplicas = %d, %v; want 1 from aa", got, err)
	}
}

func TestBadClientConfig(t *testing.T) {
	url := "http://insecure.example.com"
	c := &configv1alpha1.ResourceInterpreterWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "bad"},
		Webhooks: []configv1alpha1.ResourceInterpreterWebhook{{
			Name: "plain.example.com", ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url},
			Rules: []configv1alpha1.RuleWithOperations{allOps()}, InterpreterContextVersions: []string{"v1alpha1"},
		}},
	}
	s := webhook.NewStore(webhook.Options{})
	s.Apply(ctx(), c)
	_, handled, err := s.InterpretHealth(ctx(), widget())
	if !handled || err == nil || !strings.Contains(err.Error(), "not https") {
		t.Errorf("handled %v, err %v", handled, err)
	}
	if diff := cmp.Diff(true, s.HookEnabled(widget().GroupVersionKind(), "InterpretHealth")); diff != "" {
		t.Error("a broken webhook must still claim its kinds, so calls fail instead of falling through")
	}
}
