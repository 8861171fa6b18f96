package localfed

import (
	"context"
	"fmt"
	"net"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/flotilla-io/flotilla/internal/estimatorrpc"
)

// EstimatorServiceName is the Service through which the scheduler finds
// member's scheduler estimator, with Karmada's default prefix.
func EstimatorServiceName(member string) string {
	return estimatorrpc.DefaultServicePrefix + "-" + member
}

// RegisterEstimator points member's estimator Service in the control plane
// at addr (host:port), so schedulers and deschedulers with the default
// --scheduler-estimator-* flags reach it. It is an ExternalName Service,
// the one kind Karmada resolves itself: the host is its externalName and
// the port the targetPort of the estimator port, which is how estimators
// of several members share one host here.
func (f *Federation) RegisterEstimator(ctx context.Context, member, addr string) error {
	if f.ControlPlane == nil {
		return fmt.Errorf("registering the estimator of %s: the federation has no control plane", member)
	}
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("estimator address of %s: %w", member, err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port <= 0 || port > 65535 {
		return fmt.Errorf("estimator address of %s: %q is not a port", member, portText)
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: NamespaceSystem, Name: EstimatorServiceName(member)}}
	_, err = controllerutil.CreateOrUpdate(ctx, f.ControlPlane.Client, svc, func() error {
		svc.Labels = map[string]string{"cluster": member}
		svc.Spec = corev1.ServiceSpec{
			Type:         corev1.ServiceTypeExternalName,
			ExternalName: host,
			Ports: []corev1.ServicePort{{
				Name:       "estimator",
				Protocol:   corev1.ProtocolTCP,
				Port:       estimatorrpc.DefaultPort,
				TargetPort: intstr.FromInt32(int32(port)),
			}},
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("writing the estimator Service of %s: %w", member, err)
	}
	return nil
}
