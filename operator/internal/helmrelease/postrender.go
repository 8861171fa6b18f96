package helmrelease

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// ownerPostRenderer stamps every rendered object with labels and an owner
// reference, so that the operator's watches find what a release made, and
// the host's garbage collector removes it with its owner even if the
// operator is gone.
type ownerPostRenderer struct {
	labels map[string]string
	owner  *metav1.OwnerReference
}

func (p ownerPostRenderer) Run(rendered *bytes.Buffer) (*bytes.Buffer, error) {
	out := &bytes.Buffer{}
	dec := utilyaml.NewYAMLOrJSONDecoder(rendered, 4096)
	for {
		obj := map[string]any{}
		if err := dec.Decode(&obj); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("reading rendered manifests: %w", err)
		}
		if len(obj) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: obj}
		labels := u.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		for k, v := range p.labels {
			labels[k] = v
		}
		u.SetLabels(labels)
		if p.owner != nil {
			u.SetOwnerReferences(append(u.GetOwnerReferences(), *p.owner))
		}
		data, err := yaml.Marshal(u.Object)
		if err != nil {
			return nil, err
		}
		out.WriteString("---\n")
		out.Write(data)
	}
	return out, nil
}
