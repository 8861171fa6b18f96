package unifiedauth

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func rule(groups, resources, names []string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: groups, Resources: resources, ResourceNames: names}
}

func role(name string, rules ...rbacv1.PolicyRule) rbacv1.ClusterRole {
	return rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}
}

func binding(name, kind, roleName string, subjects ...rbacv1.Subject) rbacv1.ClusterRoleBinding {
	return rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: roleName}, Subjects: subjects}
}

var (
	cluster = []string{"cluster.karmada.io"}
	proxy   = []string{"clusters/proxy"}
	all     = []string{"*"}
)

func TestGrantsProxy(t *testing.T) {
	for _, tc := range []struct {
		name string
		rule rbacv1.PolicyRule
		want bool
	}{
		{"group and subresource", rule(cluster, proxy, nil), true},
		{"named cluster", rule(cluster, proxy, []string{"member2", "member1"}), true},
		{"another cluster", rule(cluster, proxy, []string{"member2"}), false},
		{"any resource of the group", rule(cluster, all, nil), true},
		{"any group", rule(all, proxy, nil), true},
		{"cluster-admin", rule(all, all, nil), true},
		{"clusters, not their proxy", rule(cluster, []string{"clusters", "clusters/status"}, nil), false},
		{"another group's proxy", rule([]string{"search.karmada.io"}, []string{"proxying/proxy"}, nil), false},
		{"core group", rule([]string{""}, all, nil), false},
		{"non-resource URLs", rbacv1.PolicyRule{Verbs: all, NonResourceURLs: all}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := grantsProxy(tc.rule, "member1"); got != tc.want {
				t.Errorf("grantsProxy(%+v, member1) = %v, want %v", tc.rule, got, tc.want)
			}
		})
	}
}

func TestSubjects(t *testing.T) {
	alice := rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}
	bob := rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "bob"}
	ops := rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "ops"}
	robot := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: "ci", Name: "robot"}
	roles := []rbacv1.ClusterRole{
		role("proxy-all", rule(cluster, proxy, nil)),
		role("proxy-member2", rule(cluster, proxy, []string{"member2"})),
		role("view-clusters", rule(cluster, []string{"clusters"}, nil)),
		role("admin", rule(all, all, nil)),
	}
	for _, tc := range []struct {
		name     string
		bindings []rbacv1.ClusterRoleBinding
		cluster  string
		want     []rbacv1.Subject
	}{
		{name: "no bindings", cluster: "member1"},
		{
			name: "bound to every cluster's proxy",
			bindings: []rbacv1.ClusterRoleBinding{
				binding("a", "ClusterRole", "proxy-all", alice, robot),
				binding("b", "ClusterRole", "view-clusters", bob),
			},
			cluster: "member1",
			want:    []rbacv1.Subject{alice, robot},
		},
		{
			name:     "another cluster's proxy",
			bindings: []rbacv1.ClusterRoleBinding{binding("a", "ClusterRole", "proxy-member2", alice)},
			cluster:  "member1",
		},
		{
			name:     "this cluster by name",
			bindings: []rbacv1.ClusterRoleBinding{binding("a", "ClusterRole", "proxy-member2", alice)},
			cluster:  "member2",
			want:     []rbacv1.Subject{alice},
		},
		{
			name:     "wildcards",
			bindings: []rbacv1.ClusterRoleBinding{binding("a", "ClusterRole", "admin", ops)},
			cluster:  "member1",
			want:     []rbacv1.Subject{ops},
		},
		{
			name:     "a Role of the same name is not the ClusterRole",
			bindings: []rbacv1.ClusterRoleBinding{binding("a", "Role", "proxy-all", alice)},
			cluster:  "member1",
		},
		{
			name:     "a role that does not exist",
			bindings: []rbacv1.ClusterRoleBinding{binding("a", "ClusterRole", "gone", alice)},
			cluster:  "member1",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Subjects(roles, tc.bindings, tc.cluster)); diff != "" {
				t.Errorf("Subjects (-want +got):\n%s", diff)
			}
		})
	}
}

func TestClustersOfRole(t *testing.T) {
	for _, tc := range []struct {
		name    string
		role    rbacv1.ClusterRole
		want    []string
		wantAll bool
	}{
		{"named", role("r", rule(cluster, proxy, []string{"b", "a"}), rule(cluster, proxy, []string{"a", "c"})), []string{"a", "b", "c"}, false},
		{"every cluster", role("r", rule(cluster, proxy, []string{"a"}), rule(all, all, nil)), nil, true},
		{"not the proxy", role("r", rule(cluster, []string{"clusters"}, nil)), nil, false},
		{"no rules", role("r"), nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, gotAll := ClustersOfRole(&tc.role)
			if diff := cmp.Diff(tc.want, got); diff != "" || gotAll != tc.wantAll {
				t.Errorf("ClustersOfRole = %v, all %v; want %v, all %v", got, gotAll, tc.want, tc.wantAll)
			}
		})
	}
}

func TestImpersonationRules(t *testing.T) {
	impersonate := func(resource string, names ...string) rbacv1.PolicyRule {
		return rbacv1.PolicyRule{Verbs: []string{"impersonate"}, APIGroups: []string{""}, Resources: []string{resource}, ResourceNames: names}
	}
	extras := rbacv1.PolicyRule{Verbs: []string{"impersonate"}, APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"*"}}
	for _, tc := range []struct {
		name     string
		subjects []rbacv1.Subject
		want     []rbacv1.PolicyRule
	}{
		{name: "nobody", want: []rbacv1.PolicyRule{}},
		{
			name: "users and groups, sorted, once each",
			subjects: []rbacv1.Subject{
				{Kind: rbacv1.UserKind, Name: "system:admin"}, {Kind: rbacv1.GroupKind, Name: "system:masters"},
				{Kind: rbacv1.UserKind, Name: "alice"}, {Kind: rbacv1.UserKind, Name: "system:admin"},
			},
			want: []rbacv1.PolicyRule{impersonate("users", "alice", "system:admin"), impersonate("groups", "system:masters"), extras},
		},
		{
			name: "service accounts with their own groups",
			subjects: []rbacv1.Subject{
				{Kind: rbacv1.ServiceAccountKind, Namespace: "ci", Name: "robot"},
				{Kind: rbacv1.ServiceAccountKind, Namespace: "default", Name: "reader"},
			},
			want: []rbacv1.PolicyRule{
				impersonate("serviceaccounts", "reader", "robot"),
				impersonate("groups", "system:serviceaccounts", "system:serviceaccounts:ci", "system:serviceaccounts:default"),
				extras,
			},
		},
		{
			name:     "unknown kinds are left out",
			subjects: []rbacv1.Subject{{Kind: "Robot", Name: "r2d2"}},
			want:     []rbacv1.PolicyRule{},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ImpersonationRules(tc.subjects)); diff != "" {
				t.Errorf("ImpersonationRules (-want +got):\n%s", diff)
			}
		})
	}
}
