// Package agentaccess says who the agent of a Pull cluster is to the
// control plane and what it may do there, as Karmada has it: the user
// system:karmada:agent:<cluster> in the group system:karmada:agents, with a
// client certificate from the signer kubernetes.io/kube-apiserver-client.
//
// Its rights are cut to its own cluster: its Cluster object and status, its
// Lease karmada-cluster/<cluster> and the Secrets of the credentials it
// reports beside it, the Works of its execution namespace
// karmada-es-<cluster>. What every agent shares (registering a Cluster,
// creating a Lease, reading resource interpreter customizations, writing
// events, asking for its next certificate) is one ClusterRole bound to the
// group.
package agentaccess

import (
	"context"
	"fmt"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/join"
	"github.com/flotilla-io/flotilla/internal/names"
)

// Identity of agents, as Karmada's CSR approver recognizes them.
const (
	// UserPrefix is followed by the cluster's name in the agent's user
	// name (its certificate's common name).
	UserPrefix = "system:karmada:agent:"
	// Group is every agent's group (its certificate's only organization).
	Group = "system:karmada:agents"
	// SignerName signs agents' client certificates.
	SignerName = certificatesv1.KubeAPIServerClientSignerName
	// SharedRoleName is the ClusterRole bound to Group.
	SharedRoleName = "system:karmada:agents"
	// BootstrapGroup is the group of the bootstrap tokens that register
	// members (auth-extra-groups of the token Secret), Karmada's.
	BootstrapGroup = "system:bootstrappers:karmada:default-cluster-token"
	// BootstrapRoleName is the ClusterRole bound to BootstrapGroup.
	BootstrapRoleName = "system:karmada:agent-bootstrap"
	// ClusterInfoName is the ConfigMap in kube-public whose kubeconfig
	// tells a registering member where the control plane is and which CA
	// it has; the member pins that CA by its hash.
	ClusterInfoName = "cluster-info"
)

// User is the user name of the agent of cluster.
func User(cluster string) string { return UserPrefix + cluster }

// ClusterOfUser returns the cluster whose agent user is, if it is one.
func ClusterOfUser(user string) (string, bool) {
	cluster, ok := strings.CutPrefix(user, UserPrefix)
	return cluster, ok && cluster != ""
}

// roleName names the per-cluster ClusterRole, Roles and bindings.
func roleName(cluster string) string { return User(cluster) }

// managedLabel marks the RBAC objects made here, for whoever lists them.
const managedLabel = "agent.karmada.io/cluster"

// Objects are the RBAC objects that give the agent of cluster its rights:
// the shared role and its binding, then those of cluster alone. The Roles
// in karmada-cluster and karmada-es-<cluster> need those namespaces: Grant
// creates them.
func Objects(cluster string) []client.Object {
	return append([]client.Object{
		SharedRole(),
		&rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: SharedRoleName},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: SharedRoleName},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: Group}},
		},
	}, perCluster(cluster)...)
}

// perCluster are the RBAC objects of cluster's agent alone.
func perCluster(cluster string) []client.Object {
	user := User(cluster)
	name := roleName(cluster)
	labels := map[string]string{managedLabel: cluster}
	es := names.ExecutionSpace(cluster)
	subject := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}
	return []client.Object{
		&rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
			Rules: []rbacv1.PolicyRule{
				// list and watch honour resourceNames with a metadata.name
				// field selector, which is how the agent watches its Cluster.
				{APIGroups: []string{clusterv1alpha1.GroupVersion.Group}, Resources: []string{"clusters"}, ResourceNames: []string{cluster},
					Verbs: []string{"get", "list", "watch", "update", "patch"}},
				{APIGroups: []string{clusterv1alpha1.GroupVersion.Group}, Resources: []string{"clusters/status"}, ResourceNames: []string{cluster},
					Verbs: []string{"get", "update", "patch"}},
				// The Secrets it reports are owned by the Cluster, with
				// blockOwnerDeletion.
				{APIGroups: []string{clusterv1alpha1.GroupVersion.Group}, Resources: []string{"clusters/finalizers"}, ResourceNames: []string{cluster},
					Verbs: []string{"update"}},
			},
		},
		&rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
			Subjects:   subject,
		},
		&rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Namespace: clusterv1alpha1.NamespaceClusterLeases, Name: name, Labels: labels},
			Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{coordinationv1.GroupName}, Resources: []string{"leases"}, ResourceNames: []string{cluster},
					Verbs: []string{"get", "update", "patch"}},
				// The member's credentials it reports (--report-secrets):
				// create cannot be limited to a name, but is to the
				// namespace; reading and changing are to its own.
				{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"create"}},
				{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{cluster, join.ImpersonatorSecretName(cluster)},
					Verbs: []string{"get", "update", "patch"}},
			},
		},
		&rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: clusterv1alpha1.NamespaceClusterLeases, Name: name, Labels: labels},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
			Subjects:   subject,
		},
		&rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Namespace: es, Name: name, Labels: labels},
			Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{workv1alpha1.GroupVersion.Group}, Resources: []string{"works"}, Verbs: []string{"get", "list", "watch", "update", "patch"}},
				{APIGroups: []string{workv1alpha1.GroupVersion.Group}, Resources: []string{"works/status"}, Verbs: []string{"get", "update", "patch"}},
			},
		},
		&rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: es, Name: name, Labels: labels},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
			Subjects:   subject,
		},
	}
}

// SharedRole is what every agent may do: register a Cluster and create its
// Lease (create cannot be limited to a name; the agent's own rights then
// cover only its own), read the resource interpreter's customizations,
// record events on Works and templates, and ask for and read its
// certificates.
func SharedRole() *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: SharedRoleName},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{clusterv1alpha1.GroupVersion.Group}, Resources: []string{"clusters"}, Verbs: []string{"create"}},
			{APIGroups: []string{coordinationv1.GroupName}, Resources: []string{"leases"}, Verbs: []string{"create"}},
			{APIGroups: []string{configv1alpha1.GroupVersion.Group}, Resources: []string{"resourceinterpretercustomizations", "resourceinterpreterwebhookconfigurations"},
				Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{"events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "update", "patch"}},
			{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create", "update", "patch"}},
			{APIGroups: []string{certificatesv1.GroupName}, Resources: []string{"certificatesigningrequests"}, Verbs: []string{"create", "get", "list", "watch"}},
			// What the CSR approver checks before approving an agent's
			// renewal of its own certificate.
			{APIGroups: []string{certificatesv1.GroupName}, Resources: []string{"certificatesigningrequests/selfclusteragent"}, Verbs: []string{"create"}},
		},
	}
}

// BootstrapObjects let bootstrap tokens of BootstrapGroup read cluster-info
// and ask for agent certificates (certificatesigningrequests/clusteragent,
// which the CSR approver checks), nothing more.
func BootstrapObjects() []client.Object {
	group := []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: BootstrapGroup}}
	return []client.Object{
		&rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: BootstrapRoleName},
			Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{certificatesv1.GroupName}, Resources: []string{"certificatesigningrequests"}, Verbs: []string{"create", "get", "list", "watch"}},
				{APIGroups: []string{certificatesv1.GroupName}, Resources: []string{"certificatesigningrequests/clusteragent"}, Verbs: []string{"create"}},
			},
		},
		&rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: BootstrapRoleName},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: BootstrapRoleName},
			Subjects:   group,
		},
		&rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespacePublic, Name: BootstrapRoleName},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{ClusterInfoName}, Verbs: []string{"get"}}},
		},
		&rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespacePublic, Name: BootstrapRoleName},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: BootstrapRoleName},
			Subjects:   group,
		},
	}
}

// EnsureBootstrap creates or brings in line BootstrapObjects.
func EnsureBootstrap(ctx context.Context, c client.Client) error {
	for _, obj := range BootstrapObjects() {
		if err := upsert(ctx, c, obj); err != nil {
			return err
		}
	}
	return nil
}

// Grant creates, or brings back in line, the RBAC of cluster's agent, with
// the namespaces its Roles live in (the cluster controller later finds the
// execution namespace already there).
func Grant(ctx context.Context, c client.Client, cluster string) error {
	for _, ns := range []string{clusterv1alpha1.NamespaceClusterLeases, names.ExecutionSpace(cluster)} {
		obj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
		if ns != clusterv1alpha1.NamespaceClusterLeases {
			obj.Labels = map[string]string{workv1alpha1.KarmadaSystemLabel: workv1alpha1.KarmadaSystemLabelValue}
		}
		if err := c.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating namespace %s: %w", ns, err)
		}
	}
	for _, obj := range Objects(cluster) {
		if err := upsert(ctx, c, obj); err != nil {
			return err
		}
	}
	return nil
}

// Revoke deletes the per-cluster RBAC of cluster's agent; the shared role
// stays for the other agents.
func Revoke(ctx context.Context, c client.Client, cluster string) error {
	for _, obj := range perCluster(cluster) {
		if err := c.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting %T %s: %w", obj, client.ObjectKeyFromObject(obj), err)
		}
	}
	return nil
}

// upsert creates obj or overwrites its rules, subjects and labels.
func upsert(ctx context.Context, c client.Client, obj client.Object) error {
	err := c.Create(ctx, obj)
	if err == nil {
		return nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating %T %s: %w", obj, client.ObjectKeyFromObject(obj), err)
	}
	existing := obj.DeepCopyObject().(client.Object)
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), existing); err != nil {
		return fmt.Errorf("reading %T %s: %w", obj, client.ObjectKeyFromObject(obj), err)
	}
	obj.SetResourceVersion(existing.GetResourceVersion())
	if err := c.Update(ctx, obj); err != nil {
		return fmt.Errorf("updating %T %s: %w", obj, client.ObjectKeyFromObject(obj), err)
	}
	return nil
}
