// Package registration makes the Cluster object of the agent's member in
// the control plane, in Pull mode, as karmada-agent does when it starts.
package registration

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
)

// Spec is what the agent says of its member.
type Spec struct {
	// Name of the Cluster object.
	Name string
	// ID identifies the member: the uid of its kube-system namespace, as
	// Karmada takes it.
	ID string
	// APIEndpoint is where the member's API server can be reached, for
	// whoever can; the control plane never dials a Pull member.
	APIEndpoint string
	Provider    string
	Region      string
	Zones       []string
	// ProxyURL is the proxy through which whoever reaches the member does
	// (karmada-agent's --proxy-server-address), spec.proxyURL.
	ProxyURL string
	// SecretRef and ImpersonatorSecretRef are the member's credentials the
	// agent reported (--report-secrets); nil when it did not.
	SecretRef             *clusterv1alpha1.LocalSecretReference
	ImpersonatorSecretRef *clusterv1alpha1.LocalSecretReference
}

// Ensure creates the Cluster of spec in Pull mode, or brings an existing
// one's fields in line. A Cluster of that name in Push mode, one that is
// being deleted, or one that another member (another id) registered, is
// refused: taking it over would move someone else's workloads here.
func Ensure(ctx context.Context, c client.Client, spec Spec) (*clusterv1alpha1.Cluster, error) {
	cluster := &clusterv1alpha1.Cluster{}
	err := c.Get(ctx, client.ObjectKey{Name: spec.Name}, cluster)
	if apierrors.IsNotFound(err) {
		cluster = &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: spec.Name}}
		apply(cluster, spec)
		if err := c.Create(ctx, cluster); err != nil {
			return nil, fmt.Errorf("registering Cluster %s: %w", spec.Name, err)
		}
		ctrl.LoggerFrom(ctx).Info("Registered the cluster in Pull mode", "cluster", spec.Name, "id", spec.ID)
		return cluster, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading Cluster %s: %w", spec.Name, err)
	}
	if err := Check(cluster, spec); err != nil {
		return nil, err
	}
	base := cluster.DeepCopy()
	apply(cluster, spec)
	if equalSpec(base, cluster) {
		return cluster, nil
	}
	if err := c.Patch(ctx, cluster, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return nil, fmt.Errorf("updating Cluster %s: %w", spec.Name, err)
	}
	ctrl.LoggerFrom(ctx).Info("Updated the registration of the cluster", "cluster", spec.Name)
	return cluster, nil
}

// Precheck refuses, before anything is written for it, a registration
// that Ensure would refuse because of the Cluster already there.
func Precheck(ctx context.Context, c client.Client, spec Spec) error {
	cluster := &clusterv1alpha1.Cluster{}
	err := c.Get(ctx, client.ObjectKey{Name: spec.Name}, cluster)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading Cluster %s: %w", spec.Name, err)
	}
	return Check(cluster, spec)
}

// Check refuses a Cluster the agent may not serve.
func Check(cluster *clusterv1alpha1.Cluster, spec Spec) error {
	switch {
	case !cluster.DeletionTimestamp.IsZero():
		return fmt.Errorf("cluster %s is being deleted; start the agent again once it is gone", cluster.Name)
	case cluster.Spec.SyncMode != clusterv1alpha1.Pull:
		return fmt.Errorf("cluster %s is registered with spec.syncMode %s; unjoin it before registering it in Pull mode", cluster.Name, cluster.Spec.SyncMode)
	case cluster.Spec.ID != "" && spec.ID != "" && cluster.Spec.ID != spec.ID:
		return fmt.Errorf("cluster %s is registered with spec.id %s, but this member's id is %s: another member has that name", cluster.Name, cluster.Spec.ID, spec.ID)
	}
	return nil
}

// apply writes the agent's fields into the Cluster, as its flags say; the
// others (taints, resource models, ...) are the control plane's and users'.
func apply(cluster *clusterv1alpha1.Cluster, spec Spec) {
	cluster.Spec.SyncMode = clusterv1alpha1.Pull
	if cluster.Spec.ID == "" {
		cluster.Spec.ID = spec.ID
	}
	cluster.Spec.APIEndpoint = spec.APIEndpoint
	cluster.Spec.Provider = spec.Provider
	cluster.Spec.Region = spec.Region
	cluster.Spec.Zones = slices.Clone(spec.Zones)
	cluster.Spec.ProxyURL = spec.ProxyURL
	cluster.Spec.SecretRef = spec.SecretRef.DeepCopy()
	cluster.Spec.ImpersonatorSecretRef = spec.ImpersonatorSecretRef.DeepCopy()
}

func equalSpec(a, b *clusterv1alpha1.Cluster) bool {
	return equality.Semantic.DeepEqual(a.Spec, b.Spec)
}
