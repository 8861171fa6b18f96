// Package apiservice registers the aggregated API server in the control
// plane: the APIService v1alpha1.cluster.karmada.io and, when asked, its
// Service. It imports nothing of the server itself, so that the operator
// and the local federation register it without linking the server's
// generated code.
package apiservice

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	aggregator "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
)

// Karmada's names and priorities for the served group-version.
const (
	APIServiceName       = "v1alpha1.cluster.karmada.io"
	ServiceName          = "karmada-aggregated-apiserver"
	GroupPriorityMinimum = 2000
	VersionPriority      = 10
)

// automanagedLabel marks an APIService the API server made for a CRD; it
// takes such an APIService back unless the label is gone.
const automanagedLabel = "kube-aggregator.kubernetes.io/automanaged"

// Registration says where the control plane reaches the server.
type Registration struct {
	// Namespace of the Service; karmada-system by default.
	Namespace string
	// ExternalName, when set, makes the Service an ExternalName Service
	// of that host (a server outside the control plane's cluster network,
	// such as the local federation's); otherwise the Service must exist.
	ExternalName string
	// Port is the Service's port: the server's secure port.
	Port int32
	// CABundle verifies the server's serving certificate.
	CABundle []byte
}

// Register points cluster.karmada.io/v1alpha1 at the server: its Service
// when asked, and the APIService. An APIService the API server made for
// the Cluster CRD is taken over, which is the whole migration: Clusters
// stay where they are in etcd and are served from here from then on.
// It returns once the API server finds the server available.
func Register(ctx context.Context, cfg *rest.Config, reg Registration) error {
	if err := Apply(ctx, cfg, reg); err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		ok, _, err := Available(ctx, cfg)
		return ok && err == nil, nil
	})
}

// Apply writes the registration (the Service when asked, and the
// APIService) without waiting for the API server to use it: Register's
// first half, for callers that come back later rather than block, such as
// a reconciler.
func Apply(ctx context.Context, cfg *rest.Config, reg Registration) error {
	if reg.Namespace == "" {
		reg.Namespace = "karmada-system"
	}
	if reg.Port == 0 {
		reg.Port = 443
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("creating a client: %w", err)
	}
	agg, err := aggregator.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("creating an aggregator client: %w", err)
	}
	if reg.ExternalName != "" {
		if err := ensureService(ctx, kube, reg); err != nil {
			return err
		}
	}
	want := apiregistrationv1.APIServiceSpec{
		Service:              &apiregistrationv1.ServiceReference{Namespace: reg.Namespace, Name: ServiceName, Port: &reg.Port},
		Group:                clusterv1alpha1.GroupVersion.Group,
		Version:              clusterv1alpha1.GroupVersion.Version,
		CABundle:             reg.CABundle,
		GroupPriorityMinimum: GroupPriorityMinimum,
		VersionPriority:      VersionPriority,
	}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		got, err := agg.ApiregistrationV1().APIServices().Get(ctx, APIServiceName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			_, err = agg.ApiregistrationV1().APIServices().Create(ctx, &apiregistrationv1.APIService{
				ObjectMeta: metav1.ObjectMeta{Name: APIServiceName},
				Spec:       want,
			}, metav1.CreateOptions{})
			return err
		}
		if err != nil {
			return err
		}
		if _, automanaged := got.Labels[automanagedLabel]; !automanaged && equality.Semantic.DeepEqual(got.Spec, want) {
			return nil
		}
		delete(got.Labels, automanagedLabel)
		got.Spec = want
		_, err = agg.ApiregistrationV1().APIServices().Update(ctx, got, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("registering APIService %s: %w", APIServiceName, err)
	}
	return nil
}

// Available reports whether the API server sends
// cluster.karmada.io/v1alpha1 to the server and finds it answering; when
// not, the message says why (the APIService's Available condition).
func Available(ctx context.Context, cfg *rest.Config) (bool, string, error) {
	agg, err := aggregator.NewForConfig(cfg)
	if err != nil {
		return false, "", fmt.Errorf("creating an aggregator client: %w", err)
	}
	got, err := agg.ApiregistrationV1().APIServices().Get(ctx, APIServiceName, metav1.GetOptions{})
	if err != nil {
		return false, "", fmt.Errorf("reading APIService %s: %w", APIServiceName, err)
	}
	if got.Spec.Service == nil {
		return false, "APIService " + APIServiceName + " is served locally (by the Cluster CRD)", nil
	}
	for _, c := range got.Status.Conditions {
		// Until the API server has checked the new Service, the
		// condition may still be the CRD's (reason Local).
		if c.Type == apiregistrationv1.Available {
			switch {
			case c.Reason == "Local":
				return false, "APIService " + APIServiceName + " has not been checked against its Service yet", nil
			case c.Status == apiregistrationv1.ConditionTrue:
				return true, "", nil
			}
			return false, fmt.Sprintf("APIService %s is not available: %s: %s", APIServiceName, c.Reason, c.Message), nil
		}
	}
	return false, "APIService " + APIServiceName + " has not been checked yet", nil
}

func ensureService(ctx context.Context, kube kubernetes.Interface, reg Registration) error {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: reg.Namespace, Name: ServiceName},
		Spec: corev1.ServiceSpec{
			Type:         corev1.ServiceTypeExternalName,
			ExternalName: reg.ExternalName,
			Ports:        []corev1.ServicePort{{Name: "https", Port: reg.Port, TargetPort: intstr.FromInt32(reg.Port)}},
		},
	}
	_, err := kube.CoreV1().Services(reg.Namespace).Create(ctx, svc, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
			got, err := kube.CoreV1().Services(reg.Namespace).Get(ctx, ServiceName, metav1.GetOptions{})
			if err != nil {
				return err
			}
			got.Spec.Type = svc.Spec.Type
			got.Spec.ExternalName = svc.Spec.ExternalName
			got.Spec.Ports = svc.Spec.Ports
			_, err = kube.CoreV1().Services(reg.Namespace).Update(ctx, got, metav1.UpdateOptions{})
			return err
		})
	}
	if err != nil {
		return fmt.Errorf("ensuring Service %s/%s: %w", reg.Namespace, ServiceName, err)
	}
	return nil
}
