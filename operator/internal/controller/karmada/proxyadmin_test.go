package karmada

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/flotilla-io/flotilla/operator/internal/certs"
)

// TestProxyAdmin: the contents let the admin kubeconfig's user proxy to
// every member by name, as Karmada's operator does, which the unified-auth
// controller needs to let the members' impersonators impersonate it.
func TestProxyAdmin(t *testing.T) {
	static, err := parseContents()
	if err != nil {
		t.Fatal(err)
	}
	var role *rbacv1.ClusterRole
	var binding *rbacv1.ClusterRoleBinding
	for _, obj := range static.objects("https://fleet-webhook.flotilla-system.svc:443", []byte("ca")) {
		switch o := obj.(type) {
		case *rbacv1.ClusterRole:
			if o.Name == "cluster-proxy-admin" {
				role = o
			}
		case *rbacv1.ClusterRoleBinding:
			if o.Name == "cluster-proxy-admin" {
				binding = o
			}
		}
	}
	if role == nil || binding == nil {
		t.Fatalf("the contents have no cluster-proxy-admin ClusterRole (%v) or binding (%v)", role != nil, binding != nil)
	}
	if !slices.ContainsFunc(role.Rules, func(r rbacv1.PolicyRule) bool {
		return slices.Contains(r.APIGroups, "cluster.karmada.io") && slices.Contains(r.Resources, "clusters/proxy") &&
			slices.Contains(r.Verbs, "*") && len(r.ResourceNames) == 0
	}) {
		t.Errorf("cluster-proxy-admin rules %+v, want every verb on clusters/proxy of every cluster", role.Rules)
	}
	if binding.RoleRef.Name != role.Name {
		t.Errorf("the binding is of %s", binding.RoleRef.Name)
	}
	if diff := cmp.Diff([]rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: certs.AdminUser}}, binding.Subjects); diff != "" {
		t.Errorf("subjects (-want +got):\n%s", diff)
	}
}
