package luarules

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
)

// DecodeCustomizations reads the ResourceInterpreterCustomizations of a
// YAML or JSON stream (several documents allowed). Documents of another
// kind are an error; empty documents are skipped.
func DecodeCustomizations(data []byte) ([]*configv1alpha1.ResourceInterpreterCustomization, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*configv1alpha1.ResourceInterpreterCustomization
	for i := 1; ; i++ {
		c := &configv1alpha1.ResourceInterpreterCustomization{}
		err := dec.Decode(c)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if c.Kind == "" && c.APIVersion == "" && c.Name == "" {
			continue
		}
		if c.Kind != "ResourceInterpreterCustomization" || c.APIVersion != configv1alpha1.GroupVersion.String() {
			return nil, fmt.Errorf("document %d is a %s %s, not a %s ResourceInterpreterCustomization",
				i, c.APIVersion, c.Kind, configv1alpha1.GroupVersion)
		}
		if c.Name == "" {
			return nil, fmt.Errorf("document %d: customization has no metadata.name", i)
		}
		out = append(out, c)
	}
}
