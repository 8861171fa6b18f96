package localfed

import (
	"context"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ProxyAdminName names the ClusterRole and ClusterRoleBinding that let the
// control plane's administrator proxy to every member, as Karmada's
// cluster-proxy-admin does for system:admin.
const ProxyAdminName = "cluster-proxy-admin"

// allowProxyAdmin binds the administrator's user to clusters/proxy. Being
// in system:masters lets it proxy in the control plane anyway; the binding
// names the user, so that the unified-auth controller lets the members'
// impersonators impersonate it.
func allowProxyAdmin(ctx context.Context, c *Cluster) error {
	for _, obj := range []client.Object{
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: ProxyAdminName}, Rules: []rbacv1.PolicyRule{{
			Verbs: []string{rbacv1.VerbAll}, APIGroups: []string{"cluster.karmada.io"}, Resources: []string{"clusters/proxy"},
		}}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: ProxyAdminName},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: ProxyAdminName},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: identityAdmin}}},
	} {
		if err := c.Client.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("%s: creating %T %s: %w", c.Name, obj, obj.GetName(), err)
		}
	}
	return nil
}
