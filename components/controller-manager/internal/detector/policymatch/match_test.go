package policymatch

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

func deployment(ns, name string, labels map[string]string) Template {
	return Template{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: name, Labels: labels}
}

func selector(mods ...func(*policyv1alpha1.ResourceSelector)) policyv1alpha1.ResourceSelector {
	s := policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment"}
	for _, m := range mods {
		m(&s)
	}
	return s
}

func named(n string) func(*policyv1alpha1.ResourceSelector) {
	return func(s *policyv1alpha1.ResourceSelector) { s.Name = n }
}

func inNamespace(ns string) func(*policyv1alpha1.ResourceSelector) {
	return func(s *policyv1alpha1.ResourceSelector) { s.Namespace = ns }
}

func appLabel(v string) func(*policyv1alpha1.ResourceSelector) {
	return func(s *policyv1alpha1.ResourceSelector) {
		s.LabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": v}}
	}
}

func TestSelectorPriority(t *testing.T) {
	app := deployment("team", "web", map[string]string{"app": "web"})
	tests := []struct {
		name      string
		policyNS  string
		sel       policyv1alpha1.ResourceSelector
		template  Template
		wantMatch ImplicitPriority
	}{
		{"kind only", "team", selector(), app, MatchAll},
		{"kind only, cluster policy", "", selector(), app, MatchAll},
		{"other apiVersion", "team", selector(func(s *policyv1alpha1.ResourceSelector) { s.APIVersion = "apps/v1beta1" }), app, NoMatch},
		{"other kind", "team", selector(func(s *policyv1alpha1.ResourceSelector) { s.Kind = "StatefulSet" }), app, NoMatch},
		{"policy in another namespace", "other", selector(), app, NoMatch},
		{"selector namespace matches", "", selector(inNamespace("team")), app, MatchAll},
		{"selector namespace differs", "", selector(inNamespace("other")), app, NoMatch},
		{"selector namespace on a cluster-scoped template", "", policyv1alpha1.ResourceSelector{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Namespace: "team"},
			Template{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "view"}, NoMatch},
		{"name matches", "team", selector(named("web")), app, MatchName},
		{"name differs", "team", selector(named("api")), app, NoMatch},
		{"name wins over a label selector that does not match", "team", selector(named("web"), appLabel("api")), app, MatchName},
		{"name differs, label selector matches", "team", selector(named("api"), appLabel("web")), app, NoMatch},
		{"label selector matches", "team", selector(appLabel("web")), app, MatchLabelSelector},
		{"label selector does not match", "team", selector(appLabel("api")), app, NoMatch},
		{"label selector on a template without labels", "team", selector(appLabel("web")), deployment("team", "bare", nil), NoMatch},
		{"empty label selector selects all", "team", selector(func(s *policyv1alpha1.ResourceSelector) { s.LabelSelector = &metav1.LabelSelector{} }), app, MatchLabelSelector},
		{"invalid label selector selects nothing", "team", selector(func(s *policyv1alpha1.ResourceSelector) {
			s.LabelSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bogus"}}}
		}), app, NoMatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SelectorPriority(tt.policyNS, tt.sel, tt.template); got != tt.wantMatch {
				t.Errorf("SelectorPriority = %d, want %d", got, tt.wantMatch)
			}
		})
	}
}

func TestPriorityIsTheBestSelector(t *testing.T) {
	app := deployment("team", "web", map[string]string{"app": "web"})
	sels := []policyv1alpha1.ResourceSelector{selector(named("api")), selector(), selector(appLabel("web"))}
	if got := Priority("team", sels, app); got != MatchLabelSelector {
		t.Errorf("Priority = %d, want %d", got, MatchLabelSelector)
	}
	if got := Priority("team", nil, app); got != NoMatch {
		t.Errorf("Priority of no selectors = %d, want NoMatch", got)
	}
}
