package bootstrap

import (
	"context"
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/agentaccess"
	"github.com/flotilla-io/flotilla/internal/join"
)

// The agent's objects in the member, with karmada-agent's names.
const (
	AgentNamespace      = "karmada-system"
	AgentName           = "karmada-agent"
	AgentServiceAccount = "karmada-agent-sa"
	// AgentKubeconfigSecret holds the agent's kubeconfig of the control
	// plane under AgentKubeconfigKey.
	AgentKubeconfigSecret = "karmada-kubeconfig"
	AgentKubeconfigKey    = "karmada.config"
	agentConfigDir        = "/etc/karmada/config"
)

// RegisterOptions are what `flotillactl register` is given.
type RegisterOptions struct {
	// Endpoint of the control plane's API server.
	Endpoint string
	Token    Token
	CAHashes []string
	// ClusterName is the member's name in the control plane.
	ClusterName string
	// Member writes the agent's objects into the member.
	Member client.Client
	// AgentImage runs the agent in the member.
	AgentImage string
	// AgentArgs are extra flags of the agent.
	AgentArgs []string
	// CertExpiration is the validity asked for the agent's certificate (0:
	// the signer's default).
	CertExpiration time.Duration
	// Timeout bounds the wait for the certificate. Default: 2 minutes.
	Timeout time.Duration
}

// Register obtains the agent's certificate with the token and installs the
// agent into the member: its kubeconfig Secret, its ServiceAccount (bound to
// cluster-admin: it applies whatever the Works hold) and its Deployment. It
// returns the agent's kubeconfig of the control plane.
func Register(ctx context.Context, o RegisterOptions) ([]byte, error) {
	if msgs := validation.IsDNS1123Label(o.ClusterName); len(msgs) > 0 {
		return nil, fmt.Errorf("--cluster-name %q: %v", o.ClusterName, msgs)
	}
	if o.Member == nil {
		return nil, errors.New("the member's client is required")
	}
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Minute
	}
	bootstrapCfg, err := Discover(ctx, o.Endpoint, o.Token, o.CAHashes)
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(bootstrapCfg)
	if err != nil {
		return nil, fmt.Errorf("connecting to the control plane: %w", err)
	}
	cert, err := RequestAgentCertificate(ctx, cs, o.ClusterName, o.CertExpiration, o.Timeout)
	if err != nil {
		return nil, err
	}
	kubeconfig, err := AgentKubeconfig(o.Endpoint, bootstrapCfg.CAData, cert)
	if err != nil {
		return nil, err
	}
	if err := installAgent(ctx, o, kubeconfig); err != nil {
		return nil, err
	}
	return kubeconfig, nil
}

// AgentKubeconfig is the kubeconfig of an agent's certificate.
func AgentKubeconfig(endpoint string, ca []byte, cert Certificate) ([]byte, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["karmada-apiserver"] = &clientcmdapi.Cluster{Server: endpoint, CertificateAuthorityData: ca}
	cfg.AuthInfos["karmada-agent"] = &clientcmdapi.AuthInfo{ClientCertificateData: cert.CertPEM, ClientKeyData: cert.KeyPEM}
	cfg.Contexts["karmada-agent"] = &clientcmdapi.Context{Cluster: "karmada-apiserver", AuthInfo: "karmada-agent"}
	cfg.CurrentContext = "karmada-agent"
	raw, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, fmt.Errorf("encoding the agent's kubeconfig: %w", err)
	}
	return raw, nil
}

// ConfigFromKubeconfig loads a kubeconfig's current context.
func ConfigFromKubeconfig(raw []byte) (*rest.Config, error) {
	cfg, err := clientcmd.RESTConfigFromKubeConfig(raw)
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig: %w", err)
	}
	return cfg, nil
}

func installAgent(ctx context.Context, o RegisterOptions, kubeconfig []byte) error {
	labels := map[string]string{"app": AgentName}
	args := append([]string{
		"--karmada-kubeconfig=" + agentConfigDir + "/" + AgentKubeconfigKey,
		"--cluster-name=" + o.ClusterName,
	}, o.AgentArgs...)
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: AgentNamespace}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: AgentNamespace, Name: AgentKubeconfigSecret},
			Data: map[string][]byte{AgentKubeconfigKey: kubeconfig}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: AgentNamespace, Name: AgentServiceAccount}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: AgentName},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: AgentNamespace, Name: AgentServiceAccount}}},
		&appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: AgentNamespace, Name: AgentName, Labels: labels},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To[int32](1),
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{
						ServiceAccountName: AgentServiceAccount,
						Containers: []corev1.Container{{
							Name: AgentName, Image: o.AgentImage, Args: args,
							VolumeMounts: []corev1.VolumeMount{{Name: "kubeconfig", MountPath: agentConfigDir, ReadOnly: true}},
						}},
						Volumes: []corev1.Volume{{Name: "kubeconfig", VolumeSource: corev1.VolumeSource{
							Secret: &corev1.SecretVolumeSource{SecretName: AgentKubeconfigSecret}}}},
					},
				},
			},
		},
	}
	for _, obj := range objs {
		if err := o.Member.Create(ctx, obj); err != nil {
			if !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("creating %T %s in the member: %w", obj, client.ObjectKeyFromObject(obj), err)
			}
			if _, isNS := obj.(*corev1.Namespace); isNS {
				continue
			}
			existing := obj.DeepCopyObject().(client.Object)
			if err := o.Member.Get(ctx, client.ObjectKeyFromObject(obj), existing); err != nil {
				return fmt.Errorf("reading %T %s in the member: %w", obj, client.ObjectKeyFromObject(obj), err)
			}
			obj.SetResourceVersion(existing.GetResourceVersion())
			if err := o.Member.Update(ctx, obj); err != nil {
				return fmt.Errorf("updating %T %s in the member: %w", obj, client.ObjectKeyFromObject(obj), err)
			}
		}
	}
	return nil
}

// Unregister removes a Pull member: its Cluster (the cluster controller
// deletes its Works, which its agent, still running, removes from the
// member; then its execution namespace), waiting up to timeout for it to
// go; then the agent's rights in the control plane and, with member set,
// the agent's objects in the member.
func Unregister(ctx context.Context, controlPlane, member client.Client, cluster string, timeout time.Duration) error {
	obj := &clusterv1alpha1.Cluster{}
	if err := controlPlane.Get(ctx, client.ObjectKey{Name: cluster}, obj); err != nil {
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("reading Cluster %s: %w", cluster, err)
		}
	} else if obj.Spec.SyncMode != clusterv1alpha1.Pull {
		return fmt.Errorf("cluster %s is in %s mode; unregister removes Pull members only (unjoin removes Push ones)", cluster, obj.Spec.SyncMode)
	}
	// Deleting and awaiting the Cluster is the same as for a Push member,
	// and so are the ServiceAccounts whose tokens the agent reported
	// (--report-secrets); the agent itself is removed here.
	if err := join.Unjoin(ctx, controlPlane, member, cluster, "", timeout); err != nil {
		return err
	}
	if err := agentaccess.Revoke(ctx, controlPlane, cluster); err != nil {
		return err
	}
	if member == nil {
		return nil
	}
	for _, o := range []client.Object{
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: AgentNamespace, Name: AgentName}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: AgentNamespace, Name: AgentKubeconfigSecret}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: AgentNamespace, Name: AgentServiceAccount}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: AgentName}},
	} {
		if err := member.Delete(ctx, o); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting %T %s from the member: %w", o, client.ObjectKeyFromObject(o), err)
		}
	}
	return nil
}
