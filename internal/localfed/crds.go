package localfed

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/flotilla/config/crd"
)

// installCRDs creates Flotilla's CRDs in the control plane and waits until
// every one is Established, so callers can use them as soon as Start returns.
func installCRDs(ctx context.Context, c *Cluster) error {
	crds, err := flotillaCRDs()
	if err != nil {
		return err
	}
	// Every CRD is tried, so that one run names all the broken ones.
	var errs []error
	for _, obj := range crds {
		if err := c.Client.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			errs = append(errs, fmt.Errorf("creating CRD %s: %w", obj.Name, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return waitFor(ctx, "Flotilla CRDs Established", func(ctx context.Context) (bool, error) {
		for _, want := range crds {
			var got apiextensionsv1.CustomResourceDefinition
			if err := c.Client.Get(ctx, client.ObjectKeyFromObject(want), &got); err != nil {
				return false, err
			}
			if !crdEstablished(&got) {
				return false, nil
			}
		}
		return true, nil
	}, c.apiserver)
}

// flotillaCRDs decodes config/crd/bases, one CRD per file.
func flotillaCRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	files, err := fs.Glob(crd.Bases, "bases/*.yaml")
	if err != nil {
		return nil, fmt.Errorf("listing CRDs: %w", err)
	}
	crds := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(files))
	for _, file := range files {
		data, err := fs.ReadFile(crd.Bases, file)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", file, err)
		}
		obj := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(data, obj); err != nil {
			return nil, fmt.Errorf("decoding %s: %w", file, err)
		}
		crds = append(crds, obj)
	}
	return crds, nil
}

func crdEstablished(obj *apiextensionsv1.CustomResourceDefinition) bool {
	for _, cond := range obj.Status.Conditions {
		if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}
