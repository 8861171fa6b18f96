// Package clusterstorage is the storage of cluster.karmada.io/v1alpha1
// clusters: the Cluster object and its status and proxy subresources,
// kept in etcd where a CRD-served Cluster is kept.
package clusterstorage

import (
	"context"
	"fmt"

	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource/tableconvertor"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	apistorage "k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/names"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/yaml"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/config/crd"
)

// crdStrategy is what the apiextensions strategies of a custom resource
// offer; their concrete types are unexported.
type crdStrategy interface {
	rest.RESTCreateStrategy
	rest.RESTUpdateStrategy
	rest.ResetFieldsStrategy
}

// rules are the Cluster CRD's semantics: its OpenAPI schema, CEL rules,
// status subresource and printer columns, read from the CRD this project
// generates. Serving Clusters here answers every write exactly as the CRD
// did, so moving from one to the other changes nothing for clients.
type rules struct {
	main   crdStrategy
	status crdStrategy
	table  rest.TableConvertor
}

// clusterCRDFile is the generated CRD in config/crd/bases.
const clusterCRDFile = "cluster.karmada.io_clusters.yaml"

func newRules(typer runtime.ObjectTyper) (*rules, error) {
	raw, err := crd.Bases.ReadFile("bases/" + clusterCRDFile)
	if err != nil {
		return nil, fmt.Errorf("reading the Cluster CRD: %w", err)
	}
	var def apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(raw, &def); err != nil {
		return nil, fmt.Errorf("decoding the Cluster CRD: %w", err)
	}
	var version *apiextensionsv1.CustomResourceDefinitionVersion
	for i := range def.Spec.Versions {
		if def.Spec.Versions[i].Name == clusterv1alpha1.GroupVersion.Version {
			version = &def.Spec.Versions[i]
		}
	}
	if version == nil || version.Schema == nil || version.Schema.OpenAPIV3Schema == nil {
		return nil, fmt.Errorf("the Cluster CRD has no schema for %s", clusterv1alpha1.GroupVersion.Version)
	}
	var schema apiextensionsinternal.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(version.Schema.OpenAPIV3Schema, &schema, nil); err != nil {
		return nil, fmt.Errorf("converting the Cluster schema: %w", err)
	}
	validator, _, err := validation.NewSchemaValidator(&schema)
	if err != nil {
		return nil, fmt.Errorf("compiling the Cluster schema: %w", err)
	}
	statusSchema, ok := schema.Properties["status"]
	if !ok {
		return nil, fmt.Errorf("the Cluster schema has no status")
	}
	statusValidator, _, err := validation.NewSchemaValidator(&statusSchema)
	if err != nil {
		return nil, fmt.Errorf("compiling the Cluster status schema: %w", err)
	}
	structural, err := structuralschema.NewStructural(&schema)
	if err != nil {
		return nil, fmt.Errorf("the Cluster schema is not structural: %w", err)
	}
	table, err := tableconvertor.New(version.AdditionalPrinterColumns)
	if err != nil {
		return nil, fmt.Errorf("the Cluster printer columns: %w", err)
	}
	main := customresource.NewStrategy(typer, false, clusterv1alpha1.GroupVersion.WithKind("Cluster"),
		validator, statusValidator, structural, &apiextensionsinternal.CustomResourceSubresourceStatus{}, nil, nil)
	return &rules{main: main, status: customresource.NewStatusStrategy(main), table: table}, nil
}

// strategy applies a CRD strategy to typed Clusters by way of their
// unstructured form.
type strategy struct {
	runtime.ObjectTyper
	names.NameGenerator
	crd crdStrategy
}

func (s strategy) NamespaceScoped() bool                         { return false }
func (s strategy) AllowCreateOnUpdate(context.Context) bool      { return false }
func (s strategy) AllowUnconditionalUpdate(context.Context) bool { return false }
func (s strategy) Canonicalize(runtime.Object)                   {}

func (s strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return s.crd.GetResetFields()
}

func (s strategy) PrepareForCreate(ctx context.Context, obj runtime.Object) {
	u := mustUnstructured(obj)
	s.crd.PrepareForCreate(ctx, u)
	fromUnstructured(u, obj)
}

func (s strategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	u := mustUnstructured(obj)
	s.crd.PrepareForUpdate(ctx, u, mustUnstructured(old))
	fromUnstructured(u, obj)
}

func (s strategy) Validate(ctx context.Context, obj runtime.Object) field.ErrorList {
	u, err := toUnstructured(obj)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	return s.crd.Validate(ctx, u)
}

func (s strategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	u, err := toUnstructured(obj)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	o, err := toUnstructured(old)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	return s.crd.ValidateUpdate(ctx, u, o)
}

func (s strategy) WarningsOnCreate(ctx context.Context, obj runtime.Object) []string {
	u, err := toUnstructured(obj)
	if err != nil {
		return nil
	}
	return s.crd.WarningsOnCreate(ctx, u)
}

func (s strategy) WarningsOnUpdate(ctx context.Context, obj, old runtime.Object) []string {
	u, err := toUnstructured(obj)
	if err != nil {
		return nil
	}
	o, err := toUnstructured(old)
	if err != nil {
		return nil
	}
	return s.crd.WarningsOnUpdate(ctx, u, o)
}

// toUnstructured gives the CRD strategy what the CRD handler would have
// decoded: the object with its apiVersion and kind.
func toUnstructured(obj runtime.Object) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("converting %T: %w", obj, err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(clusterv1alpha1.GroupVersion.WithKind("Cluster"))
	return u, nil
}

// mustUnstructured is toUnstructured where the interface has no error to
// return: a Cluster always converts, so a failure is a bug.
func mustUnstructured(obj runtime.Object) *unstructured.Unstructured {
	u, err := toUnstructured(obj)
	if err != nil {
		panic(err)
	}
	return u
}

// fromUnstructured writes the strategy's changes back into the typed
// object, keeping its type meta (empty inside the registry).
func fromUnstructured(u *unstructured.Unstructured, obj runtime.Object) {
	c := obj.(*clusterv1alpha1.Cluster)
	tm := c.TypeMeta
	*c = clusterv1alpha1.Cluster{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, c); err != nil {
		panic(fmt.Errorf("converting the Cluster back: %w", err))
	}
	c.TypeMeta = tm
}

// getAttrs gives the labels and the fields a Cluster is selected by: those
// of its metadata, as for a cluster-scoped custom resource.
func getAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	c, ok := obj.(*clusterv1alpha1.Cluster)
	if !ok {
		return nil, nil, fmt.Errorf("not a Cluster: %T", obj)
	}
	return labels.Set(c.Labels), generic.ObjectMetaFieldsSet(&c.ObjectMeta, false), nil
}

func matchCluster(label labels.Selector, field fields.Selector) apistorage.SelectionPredicate {
	return apistorage.SelectionPredicate{Label: label, Field: field, GetAttrs: getAttrs}
}
