package detector

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/detector/policymatch"
)

// A ClusterPropagationPolicy naming a namespaced kind without a namespace
// selects the name in every namespace, also templates that existed before
// the policy.
func TestClusterPolicyByNameClaimsExistingTemplatesInEveryNamespace(t *testing.T) {
	needServer(t)
	const name = "cpp-by-name-web"
	deps := make([]*appsv1.Deployment, 0, 2)
	for range 2 {
		ns := newNamespace(t)
		dep := newDeployment(ns, name, 1, nil)
		create(t, dep)
		// Reconciled while no policy selects it: only the policy's
		// arrival can claim it.
		if err := resync(t, deploymentKey(dep)); err != nil {
			t.Fatal(err)
		}
		deps = append(deps, dep)
	}
	cpp := newCPP("by-name-without-namespace", selectDeployment(name))
	create(t, cpp)
	t.Cleanup(func() { _ = testClient.Delete(context.Background(), cpp) })
	id := permanentID(t, cpp)
	want := claim{Kind: policymatch.ClusterPropagationPolicy, ID: id, Name: cpp.Name}
	for _, dep := range deps {
		claimedBy(t, dep, want)
	}
}

// Karmada leaves out exactly its own groups: a user's CRD in a group that
// merely ends in .karmada.io is propagated, and so are the MCS API's
// ServiceExports.
func TestCustomResourcesOfUserGroupsArePropagated(t *testing.T) {
	needServer(t)
	for _, tt := range []struct{ group, kind, plural string }{
		{"example-abc.karmada.io", "Widget", "widgets"},
		{"multicluster.x-k8s.io", "ServiceExport", "serviceexports"},
	} {
		t.Run(tt.kind, func(t *testing.T) {
			crd := &apiextensionsv1.CustomResourceDefinition{
				ObjectMeta: metav1.ObjectMeta{Name: tt.plural + "." + tt.group},
				Spec: apiextensionsv1.CustomResourceDefinitionSpec{
					Group: tt.group,
					Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: tt.plural, Kind: tt.kind, ListKind: tt.kind + "List"},
					Scope: apiextensionsv1.NamespaceScoped,
					Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
						Name: "v1alpha1", Served: true, Storage: true,
						Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
							Type: "object", XPreserveUnknownFields: ptr.To(true),
						}},
					}},
				},
			}
			// The MCS API's CRDs are Flotilla's own now, served from the
			// start; a user's are created here.
			switch err := testClient.Create(t.Context(), crd); {
			case apierrors.IsAlreadyExists(err):
			case err != nil:
				t.Fatalf("creating CRD %s: %v", crd.Name, err)
			default:
				t.Cleanup(func() { _ = testClient.Delete(context.Background(), crd) })
			}
			gvr := schema.GroupVersionResource{Group: tt.group, Version: "v1alpha1", Resource: tt.plural}
			waitFor(t, "the detector watches "+gvr.String(), func(context.Context) (bool, error) {
				return testDetector.informers.get(gvr) != nil, nil
			})

			ns := newNamespace(t)
			apiVersion := tt.group + "/v1alpha1"
			pp := newPP(ns, "user-group", policyv1alpha1.ResourceSelector{APIVersion: apiVersion, Kind: tt.kind})
			create(t, pp)
			id := permanentID(t, pp)
			obj := &unstructured.Unstructured{}
			obj.SetAPIVersion(apiVersion)
			obj.SetKind(tt.kind)
			obj.SetNamespace(ns)
			obj.SetName("o1")
			create(t, obj)
			claimedBy(t, obj, ppClaim(pp, id))
			waitRB(t, ns, "o1-"+tt.plural[:len(tt.plural)-1], "refers to the template", func(rb *workv1alpha2.ResourceBinding) bool {
				return rb.Spec.Resource.APIVersion == apiVersion && rb.Spec.Resource.UID == obj.GetUID()
			})
		})
	}
}

// Releasing a template that was deleted meanwhile (its policy and it going
// together, as when their namespace is deleted) is the end of its life,
// not a failure.
func TestReleasingADeletedTemplateIsNoError(t *testing.T) {
	needServer(t)
	ctx := context.Background()
	ns := newNamespace(t)
	pp := newPP(ns, "gone", selectDeployment("gone"))
	create(t, pp)
	id := permanentID(t, pp)
	dep := newDeployment(ns, "gone", 1, nil)
	create(t, dep)
	claimedBy(t, dep, ppClaim(pp, id))
	var tmpl *unstructured.Unstructured
	waitFor(t, "the detector's cache has the claimed template", func(context.Context) (bool, error) {
		cached, _ := testDetector.Template(appsv1.SchemeGroupVersion.WithKind("Deployment"), ns, "gone")
		if cached == nil || cached.GetLabels()[policyv1alpha1.PropagationPolicyPermanentIDLabel] != id {
			return false, nil
		}
		tmpl = cached.DeepCopy()
		return true, nil
	})
	if err := testClient.Delete(ctx, dep); err != nil {
		t.Fatal(err)
	}
	ti := testDetector.informers.get(deploymentsGVR)
	if err := testDetector.release(ctx, ti.resourceType, tmpl, tmpl.GetLabels(), tmpl.GetAnnotations()); err != nil {
		t.Errorf("releasing a deleted template: %v, want no error", err)
	}
}
