package karmada

import "github.com/flotilla-io/flotilla/operator/internal/certs"

// Component is one Helm release of an instance.
type Component string

// The components, in install order. Each is a chart under operator/charts
// and a release named <instance>-<component>. The descheduler runs only when
// spec.components.karmadaDescheduler is set, as in Karmada's operator.
const (
	Etcd                  Component = "etcd"
	APIServer             Component = "apiserver"
	KubeControllerManager Component = "kube-controller-manager"
	ControllerManager     Component = "controller-manager"
	Scheduler             Component = "scheduler"
	Descheduler           Component = "descheduler"
	Webhook               Component = "webhook"
	AggregatedAPIServer   Component = "aggregated-apiserver"
)

// allComponents are every release an instance can have, in install order.
func allComponents() []Component {
	return []Component{Etcd, APIServer, AggregatedAPIServer, KubeControllerManager, ControllerManager, Scheduler, Descheduler, Webhook}
}

// releaseName is the Helm release of a component; its objects carry the
// same name (chart fullname).
func releaseName(instance string, c Component) string { return instance + "-" + string(c) }

// The operator's Secrets of an instance.
func pkiSecretName(instance string, id certs.ID) string { return instance + "-pki-" + string(id) }

func serviceAccountKeySecretName(instance string) string { return instance + "-pki-sa" }

// adminKubeconfigSecretName is Karmada operator's name for the admin
// kubeconfig Secret, which status.secretRef names.
func adminKubeconfigSecretName(instance string) string { return instance + "-admin-config" }

func kubeconfigSecretName(instance string, c Component) string {
	return releaseName(instance, c) + "-kubeconfig"
}

func certSecretName(instance string, c Component) string { return releaseName(instance, c) + "-cert" }

// etcdClientServiceName is the ClusterIP Service of local etcd.
func etcdClientServiceName(instance string) string { return releaseName(instance, Etcd) + "-client" }

// Keys of the Secrets the operator writes.
const (
	keyKubeconfig = "kubeconfig"
	keyTLSCert    = "tls.crt"
	keyTLSKey     = "tls.key"
	keyCACert     = "ca.crt"
	keyCAKey      = "ca.key"
	keySAKey      = "sa.key"
	keySAPub      = "sa.pub"
)

// defaultEtcdPrefix is kube-apiserver's --etcd-prefix when the spec sets none.
const defaultEtcdPrefix = "/registry"

// aggregatedServicePort is the aggregated API server's Service port, as in
// Karmada.
const aggregatedServicePort = 443

// apiServerPort is the API server's secure port and Service port, as in
// Karmada.
const apiServerPort = 5443
