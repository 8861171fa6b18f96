package unifiedauth

import (
	"slices"

	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
)

// proxyResource is the subresource whose rights make a subject
// impersonable in a member.
const proxyResource = "clusters/proxy"

// grantsProxy tells whether rule grants cluster.karmada.io clusters/proxy
// on cluster, as Karmada reads a rule: the group and resource exactly or
// by wildcard, and no resourceNames or cluster among them. Verbs are not
// looked at, as in Karmada: a role that names the proxy at all counts.
func grantsProxy(rule rbacv1.PolicyRule, cluster string) bool {
	return proxyRule(rule) && (len(rule.ResourceNames) == 0 || slices.Contains(rule.ResourceNames, cluster))
}

// proxyRule tells whether rule grants clusters/proxy on some cluster.
func proxyRule(rule rbacv1.PolicyRule) bool {
	return anyOf(rule.APIGroups, clusterv1alpha1.GroupVersion.Group, rbacv1.APIGroupAll) &&
		anyOf(rule.Resources, proxyResource, rbacv1.ResourceAll)
}

func anyOf(list []string, want ...string) bool {
	return slices.ContainsFunc(list, func(s string) bool { return slices.Contains(want, s) })
}

// proxyRoles are the names of the ClusterRoles granting clusters/proxy on
// cluster.
func proxyRoles(roles []rbacv1.ClusterRole, cluster string) sets.Set[string] {
	out := sets.New[string]()
	for i := range roles {
		if slices.ContainsFunc(roles[i].Rules, func(r rbacv1.PolicyRule) bool { return grantsProxy(r, cluster) }) {
			out.Insert(roles[i].Name)
		}
	}
	return out
}

// Subjects are the subjects of the ClusterRoleBindings whose ClusterRole
// grants clusters/proxy on cluster: those the control plane lets proxy to
// it. RoleBindings cannot grant a cluster-scoped resource, so only
// ClusterRoleBindings count, as in Karmada.
func Subjects(roles []rbacv1.ClusterRole, bindings []rbacv1.ClusterRoleBinding, cluster string) []rbacv1.Subject {
	granting := proxyRoles(roles, cluster)
	if granting.Len() == 0 {
		return nil
	}
	var out []rbacv1.Subject
	for i := range bindings {
		b := &bindings[i]
		if b.RoleRef.Kind == "ClusterRole" && granting.Has(b.RoleRef.Name) {
			out = append(out, b.Subjects...)
		}
	}
	return out
}

// ClustersOfRole are the clusters role lets one proxy to: those its proxy
// rules name, or all of them (all true) when one names none.
func ClustersOfRole(role *rbacv1.ClusterRole) (names []string, all bool) {
	set := sets.New[string]()
	for _, r := range role.Rules {
		if !proxyRule(r) {
			continue
		}
		if len(r.ResourceNames) == 0 {
			return nil, true
		}
		set.Insert(r.ResourceNames...)
	}
	if set.Len() == 0 {
		return nil, false
	}
	return sets.List(set), false
}

// ImpersonationRules are what the member's impersonator may impersonate
// for subjects: Karmada's three rules, users, serviceaccounts and groups
// by name (sorted, each name once), none when there is no subject. Two
// additions let the proxy pass on what it does and Karmada's does not:
//   - a ServiceAccount's own groups, system:serviceaccounts and
//     system:serviceaccounts:<namespace>, which the proxy passes on with
//     the rest of the requester's groups;
//   - the requester's UID and extras (authentication.k8s.io, which RBAC
//     can only grant whole, since extras are open-ended keys); they can
//     only be impersonated along with a user, which these rules narrow.
func ImpersonationRules(subjects []rbacv1.Subject) []rbacv1.PolicyRule {
	users, serviceAccounts, groups := sets.New[string](), sets.New[string](), sets.New[string]()
	for _, s := range subjects {
		switch s.Kind {
		case rbacv1.UserKind:
			users.Insert(s.Name)
		case rbacv1.GroupKind:
			groups.Insert(s.Name)
		case rbacv1.ServiceAccountKind:
			serviceAccounts.Insert(s.Name)
			if s.Namespace != "" {
				groups.Insert(serviceaccount.MakeGroupNames(s.Namespace)...)
			}
		}
	}
	rules := []rbacv1.PolicyRule{}
	for _, r := range []struct {
		resource string
		names    sets.Set[string]
	}{{"users", users}, {"serviceaccounts", serviceAccounts}, {"groups", groups}} {
		if r.names.Len() > 0 {
			rules = append(rules, rbacv1.PolicyRule{
				Verbs: []string{"impersonate"}, APIGroups: []string{""}, Resources: []string{r.resource}, ResourceNames: sets.List(r.names),
			})
		}
	}
	if len(rules) > 0 {
		rules = append(rules, rbacv1.PolicyRule{
			Verbs: []string{"impersonate"}, APIGroups: []string{authenticationv1.GroupName}, Resources: []string{rbacv1.ResourceAll},
		})
	}
	return rules
}
