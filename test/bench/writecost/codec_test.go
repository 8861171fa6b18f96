package writecost

import (
	"bytes"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"
)

// codec is a wire encoding of request and response bodies.
type codec struct {
	name        string
	contentType string
	// builtinOnly: the API server speaks it for built-in types only
	// (protobuf).
	builtinOnly bool
	encode      func(*unstructured.Unstructured) ([]byte, error)
	// decode reads a response into an object.
	decode func([]byte) (*unstructured.Unstructured, error)
}

var jsonCodec = codec{
	name: "json", contentType: "application/json",
	encode: func(u *unstructured.Unstructured) ([]byte, error) { return json.Marshal(u.Object) },
	decode: func(b []byte) (*unstructured.Unstructured, error) {
		u := &unstructured.Unstructured{}
		return u, u.UnmarshalJSON(b)
	},
}

var cborSerializer = cbor.NewSerializer(scheme.Scheme, scheme.Scheme)

var cborCodec = codec{
	name: "cbor", contentType: "application/cbor",
	encode: func(u *unstructured.Unstructured) ([]byte, error) {
		var buf bytes.Buffer
		err := cborSerializer.Encode(u, &buf)
		return buf.Bytes(), err
	},
	decode: func(b []byte) (*unstructured.Unstructured, error) {
		u := &unstructured.Unstructured{}
		_, _, err := cborSerializer.Decode(b, nil, u)
		return u, err
	},
}

var protobufSerializer = protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)

// protobufCodec: ConfigMaps only, converted to and from the typed object.
var protobufCodec = codec{
	name: "protobuf", contentType: "application/vnd.kubernetes.protobuf", builtinOnly: true,
	encode: func(u *unstructured.Unstructured) ([]byte, error) {
		cm := &corev1.ConfigMap{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, cm); err != nil {
			return nil, err
		}
		cm.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
		var buf bytes.Buffer
		err := protobufSerializer.Encode(cm, &buf)
		return buf.Bytes(), err
	},
	decode: func(b []byte) (*unstructured.Unstructured, error) {
		cm := &corev1.ConfigMap{}
		if _, _, err := protobufSerializer.Decode(b, nil, cm); err != nil {
			return nil, err
		}
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(cm)
		if err != nil {
			return nil, fmt.Errorf("converting the ConfigMap: %w", err)
		}
		u := &unstructured.Unstructured{Object: obj}
		u.SetAPIVersion("v1")
		u.SetKind("ConfigMap")
		return u, nil
	},
}
