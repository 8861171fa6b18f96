// Package apiservice registers an aggregated API server with a Kubernetes
// API server: the Service the API server proxies to and one APIService per
// served group-version, and waits until the API server finds them
// available.
package apiservice

import (
	"context"
	"errors"
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
)

// DefaultNamespace is where the Service lives unless told otherwise.
const DefaultNamespace = "karmada-system"

// automanagedLabel marks an APIService the API server made for a CRD; it
// takes such an APIService back unless the label is gone.
const automanagedLabel = "kube-aggregator.kubernetes.io/automanaged"

// GroupVersion is one APIService: a served group-version and its
// priorities.
type GroupVersion struct {
	Group                string
	Version              string
	GroupPriorityMinimum int32
	VersionPriority      int32
}

// Name is the APIService's name, <version>.<group>.
func (gv GroupVersion) Name() string { return gv.Version + "." + gv.Group }

// Registration says what the server serves and where the API server
// reaches it.
type Registration struct {
	// ServiceName names the Service; required.
	ServiceName string
	// Namespace of the Service; DefaultNamespace when empty.
	Namespace string
	// ExternalName, when set, makes the Service an ExternalName Service
	// of that host (a server outside the cluster network, such as the
	// local federation's); otherwise the Service must exist.
	ExternalName string
	// Port is the Service's port: the server's secure port. Default 443.
	Port int32
	// CABundle verifies the server's serving certificate.
	CABundle []byte
	// InsecureSkipTLSVerify has the API server trust any certificate of
	// the server, for a server that makes its own in memory.
	InsecureSkipTLSVerify bool
	// GroupVersions are the APIServices to point at the Service.
	GroupVersions []GroupVersion
}

// Register ensures the Service (when ExternalName is set) and the
// APIServices. An APIService the API server made for a CRD of the same
// group-version is taken over. It returns once every APIService is
// Available.
func Register(ctx context.Context, cfg *rest.Config, reg Registration) error {
	if err := Apply(ctx, cfg, reg); err != nil {
		return err
	}
	for _, gv := range reg.GroupVersions {
		if err := waitAvailable(ctx, cfg, gv.Name()); err != nil {
			return err
		}
	}
	return nil
}

// Apply writes the registration without waiting for the API server to use
// it: Register's first half, for callers that come back later rather than
// block, such as a reconciler. An APIService already as wanted is not
// written again.
func Apply(ctx context.Context, cfg *rest.Config, reg Registration) error {
	if reg.ServiceName == "" {
		return errors.New("registration: the Service's name is empty")
	}
	if len(reg.GroupVersions) == 0 {
		return errors.New("registration: no group-versions to register")
	}
	if reg.Namespace == "" {
		reg.Namespace = DefaultNamespace
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
	for _, gv := range reg.GroupVersions {
		if err := ensureAPIService(ctx, agg, reg, gv); err != nil {
			return err
		}
	}
	return nil
}

func ensureAPIService(ctx context.Context, agg aggregator.Interface, reg Registration, gv GroupVersion) error {
	want := apiregistrationv1.APIServiceSpec{
		Service:               &apiregistrationv1.ServiceReference{Namespace: reg.Namespace, Name: reg.ServiceName, Port: &reg.Port},
		Group:                 gv.Group,
		Version:               gv.Version,
		CABundle:              reg.CABundle,
		InsecureSkipTLSVerify: reg.InsecureSkipTLSVerify,
		GroupPriorityMinimum:  gv.GroupPriorityMinimum,
		VersionPriority:       gv.VersionPriority,
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		got, err := agg.ApiregistrationV1().APIServices().Get(ctx, gv.Name(), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			_, err = agg.ApiregistrationV1().APIServices().Create(ctx, &apiregistrationv1.APIService{
				ObjectMeta: metav1.ObjectMeta{Name: gv.Name()},
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
		return fmt.Errorf("registering APIService %s: %w", gv.Name(), err)
	}
	return nil
}

// Available reports whether the API server sends the APIService name to
// its Service and finds the server answering; when not, the message says
// why (the APIService's Available condition).
func Available(ctx context.Context, cfg *rest.Config, name string) (bool, string, error) {
	agg, err := aggregator.NewForConfig(cfg)
	if err != nil {
		return false, "", fmt.Errorf("creating an aggregator client: %w", err)
	}
	got, err := agg.ApiregistrationV1().APIServices().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return false, "", fmt.Errorf("reading APIService %s: %w", name, err)
	}
	if got.Spec.Service == nil {
		return false, "APIService " + name + " is served locally (by a CRD)", nil
	}
	for _, c := range got.Status.Conditions {
		// Until the API server has checked the new Service, the
		// condition may still be the CRD's (reason Local).
		if c.Type == apiregistrationv1.Available {
			switch {
			case c.Reason == "Local":
				return false, "APIService " + name + " has not been checked against its Service yet", nil
			case c.Status == apiregistrationv1.ConditionTrue:
				return true, "", nil
			}
			return false, fmt.Sprintf("APIService %s is not available: %s: %s", name, c.Reason, c.Message), nil
		}
	}
	return false, "APIService " + name + " has not been checked yet", nil
}

// waitAvailable waits until the API server has checked the APIService's
// Service and found the server answering.
func waitAvailable(ctx context.Context, cfg *rest.Config, name string) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		ok, msg, err := Available(ctx, cfg, name)
		if err != nil {
			last = err.Error()
			return false, nil
		}
		last = msg
		return ok, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for APIService %s to be Available (last seen: %s): %w", name, last, err)
	}
	return nil
}

func ensureService(ctx context.Context, kube kubernetes.Interface, reg Registration) error {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: reg.Namespace, Name: reg.ServiceName},
		Spec: corev1.ServiceSpec{
			Type:         corev1.ServiceTypeExternalName,
			ExternalName: reg.ExternalName,
			Ports:        []corev1.ServicePort{{Name: "https", Port: reg.Port, TargetPort: intstr.FromInt32(reg.Port)}},
		},
	}
	_, err := kube.CoreV1().Services(reg.Namespace).Create(ctx, svc, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
			got, err := kube.CoreV1().Services(reg.Namespace).Get(ctx, reg.ServiceName, metav1.GetOptions{})
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
		return fmt.Errorf("ensuring Service %s/%s: %w", reg.Namespace, reg.ServiceName, err)
	}
	return nil
}
