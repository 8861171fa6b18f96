package interpreterconfig

import (
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	"github.com/flotilla-io/flotilla/components/webhook/internal/admissiontest"
	"github.com/flotilla-io/flotilla/lua"
)

const (
	replicas = `function GetReplicas(obj) return obj.spec.replicas, nil end`
	health   = `function InterpretHealth(obj) return true end`
	deps     = `function GetDependencies(obj) return {} end`
)

func customization(name string, mutate ...func(*configv1alpha1.ResourceInterpreterCustomization)) *configv1alpha1.ResourceInterpreterCustomization {
	c := &configv1alpha1.ResourceInterpreterCustomization{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: configv1alpha1.ResourceInterpreterCustomizationSpec{
			Target: configv1alpha1.CustomizationTarget{APIVersion: "example.io/v1", Kind: "Widget"},
		},
	}
	for _, m := range mutate {
		m(c)
	}
	return c
}

func TestValidateCustomization(t *testing.T) {
	existing := customization("existing", func(c *configv1alpha1.ResourceInterpreterCustomization) {
		c.Spec.Customizations.ReplicaResource = &configv1alpha1.ReplicaResourceRequirement{LuaScript: replicas}
		c.Spec.Customizations.DependencyInterpretation = &configv1alpha1.DependencyInterpretation{LuaScript: deps}
	})
	reader := fake.NewClientBuilder().WithScheme(admissiontest.Scheme()).WithObjects(existing).Build()
	vm := lua.New()
	defer vm.Close()
	h := NewCustomizationValidator(admissiontest.Decoder(), reader, vm)
	tests := []struct {
		name string
		obj  *configv1alpha1.ResourceInterpreterCustomization
		want []string
	}{
		{name: "updating the existing one", obj: existing},
		{
			name: "another operation, and dependencies again",
			obj: customization("health", func(c *configv1alpha1.ResourceInterpreterCustomization) {
				c.Spec.Customizations.HealthInterpretation = &configv1alpha1.HealthInterpretation{LuaScript: health}
				c.Spec.Customizations.DependencyInterpretation = &configv1alpha1.DependencyInterpretation{LuaScript: deps}
			}),
		},
		{
			name: "the same operation of another kind",
			obj: customization("gadget", func(c *configv1alpha1.ResourceInterpreterCustomization) {
				c.Spec.Target.Kind = "Gadget"
				c.Spec.Customizations.ReplicaResource = &configv1alpha1.ReplicaResourceRequirement{LuaScript: replicas}
			}),
		},
		{
			name: "the same operation of the same kind",
			obj: customization("again", func(c *configv1alpha1.ResourceInterpreterCustomization) {
				c.Spec.Customizations.ReplicaResource = &configv1alpha1.ReplicaResourceRequirement{LuaScript: replicas}
			}),
			want: []string{"spec.customizations.replicaResource"},
		},
		{
			name: "scripts that do not load or define their function",
			obj: customization("broken", func(c *configv1alpha1.ResourceInterpreterCustomization) {
				c.Spec.Target.Kind = "Gadget"
				c.Spec.Customizations.Retention = &configv1alpha1.LocalValueRetention{LuaScript: "function Retain(desired, observed"}
				c.Spec.Customizations.HealthInterpretation = &configv1alpha1.HealthInterpretation{LuaScript: "function Healthy(obj) return true end"}
				c.Spec.Customizations.StatusReflection = &configv1alpha1.StatusReflection{LuaScript: `os.execute("true")`}
			}),
			want: []string{"spec.customizations.retention.luaScript", "spec.customizations.healthInterpretation.luaScript",
				"spec.customizations.statusReflection.luaScript"},
		},
		{
			name: "target",
			obj: customization("target", func(c *configv1alpha1.ResourceInterpreterCustomization) {
				c.Spec.Target.APIVersion = "a/b/c"
			}),
			want: []string{"spec.target.apiVersion"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			admissiontest.Check(t, h, admissiontest.Create(tc.obj), admissiontest.Want{Denied: tc.want})
		})
	}
}

func interpreterWebhookConfig(mutate ...func(*configv1alpha1.ResourceInterpreterWebhook)) *configv1alpha1.ResourceInterpreterWebhookConfiguration {
	w := configv1alpha1.ResourceInterpreterWebhook{
		Name:         "replicas.widgets.example.io",
		ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://widgets.example.io:443/interpret")},
		Rules: []configv1alpha1.RuleWithOperations{{
			Operations: []configv1alpha1.InterpreterOperation{configv1alpha1.InterpreterOperationInterpretReplica},
			Rule:       configv1alpha1.Rule{APIGroups: []string{"example.io"}, APIVersions: []string{"v1"}, Kinds: []string{"Widget"}},
		}},
		InterpreterContextVersions: []string{"v1alpha1"},
	}
	for _, m := range mutate {
		m(&w)
	}
	return &configv1alpha1.ResourceInterpreterWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets"},
		Webhooks:   []configv1alpha1.ResourceInterpreterWebhook{w},
	}
}

func TestValidateWebhookConfiguration(t *testing.T) {
	h := NewWebhookConfigurationValidator(admissiontest.Decoder())
	tests := []struct {
		name string
		obj  *configv1alpha1.ResourceInterpreterWebhookConfiguration
		want []string
	}{
		{name: "valid", obj: interpreterWebhookConfig()},
		{
			name: "service",
			obj: interpreterWebhookConfig(func(w *configv1alpha1.ResourceInterpreterWebhook) {
				w.ClientConfig = admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{
					Name: "widgets", Namespace: "widgets", Path: ptr.To("/interpret"), Port: ptr.To[int32](443)}}
			}),
		},
		{
			name: "url and service",
			obj: interpreterWebhookConfig(func(w *configv1alpha1.ResourceInterpreterWebhook) {
				w.ClientConfig.Service = &admissionregistrationv1.ServiceReference{Name: "widgets", Namespace: "widgets"}
			}),
			want: []string{"webhooks[0].clientConfig"},
		},
		{
			name: "malformed webhook",
			obj: interpreterWebhookConfig(func(w *configv1alpha1.ResourceInterpreterWebhook) {
				w.Name = "widgets"
				w.ClientConfig.URL = ptr.To("http://widgets.example.io/interpret?x=1")
				w.TimeoutSeconds = ptr.To[int32](60)
				w.InterpreterContextVersions = []string{"v2", "v2"}
				w.Rules[0].Operations = []configv1alpha1.InterpreterOperation{"*", "Explode"}
				w.Rules[0].Kinds = nil
			}),
			want: []string{
				"webhooks[0].name", "webhooks[0].clientConfig.url", "webhooks[0].clientConfig.url", "webhooks[0].timeoutSeconds",
				"webhooks[0].interpreterContextVersions[1]", "webhooks[0].interpreterContextVersions",
				"webhooks[0].rules[0].operations", "webhooks[0].rules[0].operations[1]", "webhooks[0].rules[0].kinds",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			admissiontest.Check(t, h, admissiontest.Create(tc.obj), admissiontest.Want{Denied: tc.want})
		})
	}
}
