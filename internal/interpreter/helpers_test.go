package interpreter_test

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/fstest"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
)

func ctx() context.Context { return context.Background() }

// ric builds a customization of apps/v1 Deployment (or the kind given)
// with the given rules.
func ric(name string, rules configv1alpha1.CustomizationRules, target ...string) *configv1alpha1.ResourceInterpreterCustomization {
	apiVersion, kind := "apps/v1", "Deployment"
	if len(target) == 2 {
		apiVersion, kind = target[0], target[1]
	}
	return &configv1alpha1.ResourceInterpreterCustomization{
		TypeMeta:   metav1.TypeMeta{APIVersion: "config.karmada.io/v1alpha1", Kind: "ResourceInterpreterCustomization"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: configv1alpha1.ResourceInterpreterCustomizationSpec{
			Target:         configv1alpha1.CustomizationTarget{APIVersion: apiVersion, Kind: kind},
			Customizations: rules,
		},
	}
}

func replicasScript(n string) *configv1alpha1.ReplicaResourceRequirement {
	return &configv1alpha1.ReplicaResourceRequirement{LuaScript: "function GetReplicas(obj)\n  return " + n + ", nil\nend\n"}
}

func deployment(replicas int64) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "shop", "generation": int64(1)},
		"spec": map[string]any{
			"replicas": replicas,
			"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{
				"name": "web", "image": "nginx",
				"resources": map[string]any{"requests": map[string]any{"cpu": "100m", "memory": "64Mi"}},
			}}}},
		},
	}}
}

// bundledFS holds one bundled customization of Deployments answering
// GetReplicas with 13.
func bundledFS() fstest.MapFS {
	return fstest.MapFS{"apps/v1/Deployment/customizations.yaml": {Data: []byte(`
apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata:
  name: bundled-deployment
spec:
  target:
    apiVersion: apps/v1
    kind: Deployment
  customizations:
    replicaResource:
      luaScript: |
        function GetReplicas(obj)
          return 13, nil
        end
`)}}
}

// interpreterWebhook serves answers made by answer on a TLS test server.
func interpreterWebhook(t *testing.T, answer func(req *configv1alpha1.ResourceInterpreterRequest) *configv1alpha1.ResourceInterpreterResponse) *httptest.Server {
	t.Helper()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in configv1alpha1.ResourceInterpreterContext
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Request == nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		resp := answer(in.Request)
		resp.UID = in.Request.UID
		_ = json.NewEncoder(w).Encode(&configv1alpha1.ResourceInterpreterContext{TypeMeta: in.TypeMeta, Response: resp})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func webhookConfig(name string, srv *httptest.Server, timeoutSeconds int32, rules ...configv1alpha1.RuleWithOperations) *configv1alpha1.ResourceInterpreterWebhookConfiguration {
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

func rule(ops []configv1alpha1.InterpreterOperation, groups, versions, kinds []string) configv1alpha1.RuleWithOperations {
	return configv1alpha1.RuleWithOperations{Operations: ops, Rule: configv1alpha1.Rule{APIGroups: groups, APIVersions: versions, Kinds: kinds}}
}

func rawJSON(v any) *runtime.RawExtension {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return &runtime.RawExtension{Raw: data}
}

// runtimeObject holds the object a call is given, to check it afterwards.
type runtimeObject struct{ u *unstructured.Unstructured }
