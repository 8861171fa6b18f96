package clusterstorage

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/proxy"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	genericfilters "k8s.io/apiserver/pkg/server/filters"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/components/aggregated-apiserver/internal/clusterapi"
)

// SecretGetter reads a control-plane Secret: the member's CA and the
// impersonator's token.
type SecretGetter interface {
	GetSecret(ctx context.Context, namespace, name string) (*corev1.Secret, error)
}

// ProxyREST is clusters/{name}/proxy/{path}: the request is passed to the
// member's API server as the impersonator ServiceAccount, impersonating the
// user the control plane authenticated, so the member's own authorization
// decides what that user may do there.
type ProxyREST struct {
	Clusters rest.Getter
	Secrets  SecretGetter
}

var _ rest.Connecter = &ProxyREST{}

// proxyMethods are the verbs passed through: every one an API server serves.
var proxyMethods = []string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"}

// New returns an empty ClusterProxyOptions.
func (r *ProxyREST) New() runtime.Object { return &clusterapi.ClusterProxyOptions{} }

// Destroy is a no-op: there is no storage of its own.
func (r *ProxyREST) Destroy() {}

// ConnectMethods lists the verbs passed through.
func (r *ProxyREST) ConnectMethods() []string { return proxyMethods }

// NewConnectOptions takes the path below proxy/ into ClusterProxyOptions.path.
func (r *ProxyREST) NewConnectOptions() (runtime.Object, bool, string) {
	return &clusterapi.ClusterProxyOptions{}, true, "path"
}

// Connect returns the handler of one proxied request.
func (r *ProxyREST) Connect(ctx context.Context, name string, options runtime.Object, responder rest.Responder) (http.Handler, error) {
	opts, ok := options.(*clusterapi.ClusterProxyOptions)
	if !ok {
		return nil, fmt.Errorf("invalid options object: %T", options)
	}
	obj, err := r.Clusters.Get(ctx, name, &metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	cluster := obj.(*clusterv1alpha1.Cluster)
	requester, ok := request.UserFrom(ctx)
	if !ok {
		return nil, apierrors.NewUnauthorized("no user in the request")
	}
	target, err := r.target(ctx, cluster, opts.Path)
	if err != nil {
		return nil, err
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		// The handler takes the query from the request, except on an
		// upgrade (exec, attach, port-forward), where the location is
		// dialled as it is: it carries the command and the streams.
		location := *target.location
		location.RawQuery = req.URL.RawQuery
		handler := proxy.NewUpgradeAwareHandler(&location, target.transport, false, false, proxy.NewErrorResponder(responder))
		handler.UseLocationHost = true
		impersonate(req, target.token, requester)
		handler.ServeHTTP(w, req)
	}), nil
}

// target is where and how one proxied request goes.
type target struct {
	location  *url.URL
	transport http.RoundTripper
	token     string
}

func (r *ProxyREST) target(ctx context.Context, cluster *clusterv1alpha1.Cluster, proxyPath string) (*target, error) {
	if cluster.Spec.APIEndpoint == "" {
		return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("cluster %s has no spec.apiEndpoint", cluster.Name))
	}
	location, err := url.Parse(cluster.Spec.APIEndpoint)
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("cluster %s: spec.apiEndpoint: %w", cluster.Name, err))
	}
	location.Path = path.Join(location.Path, proxyPath)
	// path.Join drops the trailing slash a client asked for; the member's
	// API server answers some paths only with it.
	if strings.HasSuffix(proxyPath, "/") && !strings.HasSuffix(location.Path, "/") {
		location.Path += "/"
	}
	ref := cluster.Spec.ImpersonatorSecretRef
	if ref == nil {
		return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("cluster %s has no spec.impersonatorSecretRef: it cannot be proxied to", cluster.Name))
	}
	secret, err := r.Secrets.GetSecret(ctx, ref.Namespace, ref.Name)
	if err != nil {
		return nil, fmt.Errorf("reading cluster %s's impersonator secret %s/%s: %w", cluster.Name, ref.Namespace, ref.Name, err)
	}
	token := string(secret.Data[clusterv1alpha1.SecretTokenKey])
	if token == "" {
		return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("cluster %s's impersonator secret %s/%s has no %q", cluster.Name, ref.Namespace, ref.Name, clusterv1alpha1.SecretTokenKey))
	}
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: cluster.Spec.InsecureSkipTLSVerification} //nolint:gosec // the Cluster asks for it
	if !cluster.Spec.InsecureSkipTLSVerification {
		pool, err := r.caPool(ctx, cluster)
		if err != nil {
			return nil, err
		}
		tlsConfig.RootCAs = pool
	}
	transport := &http.Transport{TLSClientConfig: tlsConfig, Proxy: http.ProxyFromEnvironment}
	if cluster.Spec.ProxyURL != "" {
		proxyURL, err := url.Parse(cluster.Spec.ProxyURL)
		if err != nil {
			return nil, apierrors.NewInternalError(fmt.Errorf("cluster %s: spec.proxyURL: %w", cluster.Name, err))
		}
		transport.Proxy = http.ProxyURL(proxyURL)
		header := http.Header{}
		for k, v := range cluster.Spec.ProxyHeader {
			header[http.CanonicalHeaderKey(k)] = strings.Split(v, ",")
		}
		transport.ProxyConnectHeader = header
	}
	return &target{location: location, transport: transport, token: token}, nil
}

// caPool is the member's CA from spec.secretRef; none means the system's.
func (r *ProxyREST) caPool(ctx context.Context, cluster *clusterv1alpha1.Cluster) (*x509.CertPool, error) {
	ref := cluster.Spec.SecretRef
	if ref == nil {
		return nil, nil
	}
	secret, err := r.Secrets.GetSecret(ctx, ref.Namespace, ref.Name)
	if err != nil {
		return nil, fmt.Errorf("reading cluster %s's secret %s/%s: %w", cluster.Name, ref.Namespace, ref.Name, err)
	}
	ca := secret.Data[clusterv1alpha1.SecretCADataKey]
	if len(ca) == 0 {
		return nil, nil
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, apierrors.NewInternalError(fmt.Errorf("cluster %s's secret %s/%s: %q holds no PEM certificate", cluster.Name, ref.Namespace, ref.Name, clusterv1alpha1.SecretCADataKey))
	}
	return pool, nil
}

// impersonate replaces whatever identity the request carries with the
// impersonator's token and the requester as the one impersonated.
func impersonate(req *http.Request, token string, requester user.Info) {
	for k := range req.Header {
		if strings.HasPrefix(k, "Impersonate-") || strings.HasPrefix(k, "X-Remote-") {
			req.Header.Del(k)
		}
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set(authenticationv1.ImpersonateUserHeader, requester.GetName())
	if uid := requester.GetUID(); uid != "" {
		req.Header.Set(authenticationv1.ImpersonateUIDHeader, uid)
	}
	for _, group := range requester.GetGroups() {
		// The member adds system:authenticated itself.
		if group == user.AllAuthenticated {
			continue
		}
		req.Header.Add(authenticationv1.ImpersonateGroupHeader, group)
	}
	for key, values := range requester.GetExtra() {
		for _, v := range values {
			req.Header.Add(authenticationv1.ImpersonateUserExtraHeaderPrefix+url.PathEscape(key), v)
		}
	}
}

// longRunning is kube-apiserver's own check: watches and proxies, and the
// streaming subresources.
var longRunning = genericfilters.BasicLongRunningRequestCheck(
	sets.NewString("watch", "proxy"),                                //nolint:staticcheck // the filter takes sets.String
	sets.NewString("attach", "exec", "proxy", "log", "portforward"), //nolint:staticcheck // the filter takes sets.String
)

// memberRequestInfo resolves the request a cluster proxy request makes of
// the member, as the member's API server will.
var memberRequestInfo = &request.RequestInfoFactory{
	APIPrefixes:          sets.NewString("api", "apis"), //nolint:staticcheck // the factory takes sets.String
	GrouplessAPIPrefixes: sets.NewString("api"),         //nolint:staticcheck // the factory takes sets.String
}

// IsLongRunning tells the server which requests its request timeout and
// in-flight limit leave alone: a cluster proxy request when what it asks
// of the member is long-running there (a watch, logs that follow, exec,
// attach, port-forward), so that such a stream lasts as long as it does
// against the member itself; other requests as kube-apiserver decides.
func IsLongRunning(r *http.Request, info *request.RequestInfo) bool {
	if info.APIGroup == clusterv1alpha1.GroupVersion.Group && info.Resource == "clusters" && info.Subresource == "proxy" {
		// Parts are clusters, the name, proxy, then the member's path.
		inner := r.Clone(r.Context())
		inner.URL.Path = "/" + path.Join(info.Parts[min(3, len(info.Parts)):]...)
		memberInfo, err := memberRequestInfo.NewRequestInfo(inner)
		if err != nil {
			return false
		}
		info = memberInfo
	}
	return longRunning(r, info)
}
