package clusterapi

import (
	"fmt"
	"net/url"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
)

// GroupVersion is the one group-version served.
var GroupVersion = clusterv1alpha1.GroupVersion

// ClusterProxyOptions is the query of a clusters/{name}/proxy/{path}
// request: the path below the member's API server root.
type ClusterProxyOptions struct {
	metav1.TypeMeta `json:",inline"`

	// path is the URL path to call in the member.
	// +optional
	Path string `json:"path,omitempty"`
}

// DeepCopyObject implements runtime.Object; written by hand because the
// type is one string and lives outside api/, where controller-gen runs.
func (o *ClusterProxyOptions) DeepCopyObject() runtime.Object {
	if o == nil {
		return nil
	}
	out := *o
	return &out
}

// NewScheme returns a scheme with the served types in their version and in
// the internal version the generic API server converts through. The two are
// the same Go types: Cluster has one version, so there is nothing to convert
// and the scheme only re-labels the kind.
func NewScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	internal := schema.GroupVersion{Group: GroupVersion.Group, Version: runtime.APIVersionInternal}
	for _, gv := range []schema.GroupVersion{GroupVersion, internal} {
		s.AddKnownTypes(gv, &clusterv1alpha1.Cluster{}, &clusterv1alpha1.ClusterList{}, &ClusterProxyOptions{})
	}
	metav1.AddToGroupVersion(s, GroupVersion)
	// The generic API server decodes list and delete options of every
	// group through v1 meta types.
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	s.AddUnversionedTypes(schema.GroupVersion{Version: "v1"},
		&metav1.Status{}, &metav1.APIVersions{}, &metav1.APIGroupList{}, &metav1.APIGroup{}, &metav1.APIResourceList{})
	if err := s.AddConversionFunc((*url.Values)(nil), (*ClusterProxyOptions)(nil), func(a, b any, _ conversion.Scope) error {
		return convertURLValues(a.(*url.Values), b.(*ClusterProxyOptions))
	}); err != nil {
		return nil, fmt.Errorf("registering the proxy options' conversion: %w", err)
	}
	if err := s.AddFieldLabelConversionFunc(GroupVersion.WithKind("Cluster"), func(label, value string) (string, string, error) {
		switch label {
		case "metadata.name":
			return label, value, nil
		}
		return "", "", fmt.Errorf("field label not supported: %s", label)
	}); err != nil {
		return nil, fmt.Errorf("registering the Cluster's field labels: %w", err)
	}
	return s, nil
}

// NewCodecs returns the codec factory of a scheme from NewScheme.
func NewCodecs(s *runtime.Scheme) serializer.CodecFactory {
	return serializer.NewCodecFactory(s)
}

// convertURLValues reads the path query parameter, which the API server
// sets from the URL below clusters/{name}/proxy.
func convertURLValues(in *url.Values, out *ClusterProxyOptions) error {
	out.TypeMeta = metav1.TypeMeta{}
	if v, ok := (*in)["path"]; ok && len(v) > 0 {
		out.Path = v[0]
	} else {
		out.Path = ""
	}
	return nil
}
