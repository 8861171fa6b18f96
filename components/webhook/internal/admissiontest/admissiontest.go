// Package admissiontest builds admission requests for the handlers' table
// tests and checks their answers: allowed, refused with the expected field
// paths, or patched with the expected JSON patch.
package admissiontest

import (
	"context"
	"encoding/json"
	"slices"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"gomodules.xyz/jsonpatch/v2"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/api/autoscaling/v1alpha1"
	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	networkingv1alpha1 "github.com/flotilla-io/flotilla/api/networking/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// Scheme knows client-go's types and every Karmada type the webhook serves.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, clusterv1alpha1.AddToScheme,
		policyv1alpha1.AddToScheme, workv1alpha1.AddToScheme, workv1alpha2.AddToScheme, configv1alpha1.AddToScheme,
		autoscalingv1alpha1.AddToScheme, networkingv1alpha1.AddToScheme} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}

// Decoder decodes with Scheme.
func Decoder() admission.Decoder { return admission.NewDecoder(Scheme()) }

// Create is a CREATE request of obj.
func Create(obj client.Object) admission.Request { return request(admissionv1.Create, obj, nil) }

// Update is an UPDATE request from old to obj.
func Update(obj, old client.Object) admission.Request { return request(admissionv1.Update, obj, old) }

// Delete is a DELETE request of old.
func Delete(old client.Object) admission.Request { return request(admissionv1.Delete, nil, old) }

func request(op admissionv1.Operation, obj, old client.Object) admission.Request {
	req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{UID: "test", Operation: op}}
	some := obj
	if some == nil {
		some = old
	}
	gvk := some.GetObjectKind().GroupVersionKind()
	if gvk.Empty() {
		kinds, _, err := Scheme().ObjectKinds(some)
		if err != nil {
			panic(err)
		}
		gvk = kinds[0]
	}
	req.Kind = metav1.GroupVersionKind{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind}
	req.Name, req.Namespace = some.GetName(), some.GetNamespace()
	if obj != nil {
		req.Object = raw(obj, gvk)
	}
	if old != nil {
		req.OldObject = raw(old, gvk)
	}
	return req
}

func raw(obj client.Object, gvk schema.GroupVersionKind) runtime.RawExtension {
	obj = obj.DeepCopyObject().(client.Object)
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	data, err := json.Marshal(obj)
	if err != nil {
		panic(err)
	}
	return runtime.RawExtension{Raw: data}
}

// Want is the expected answer to a request. The zero value is "allowed,
// unchanged".
type Want struct {
	// Denied fields: the request is refused and its status names exactly
	// these field paths (order does not matter). A refusal without field
	// causes is written as Denied: []string{}.
	Denied []string
	// Patch is the expected JSON patch, compared regardless of order.
	Patch []jsonpatch.Operation
	// IgnorePatchValues lists paths whose patch value is random (ids) and
	// only checked for presence.
	IgnorePatchValues []string
}

// Check compares the answer of handler to req with want.
func Check(t *testing.T, handler admission.Handler, req admission.Request, want Want) admission.Response {
	t.Helper()
	resp := handler.Handle(context.Background(), req)
	if want.Denied != nil {
		if resp.Allowed {
			t.Fatalf("allowed, want denied on %v", want.Denied)
		}
		var got []string
		if resp.Result != nil && resp.Result.Details != nil {
			for _, c := range resp.Result.Details.Causes {
				got = append(got, c.Field)
			}
		}
		sort.Strings(got)
		wantFields := slices.Clone(want.Denied)
		sort.Strings(wantFields)
		if diff := cmp.Diff(wantFields, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("denied fields (-want +got):\n%s\nmessage: %s", diff, resp.Result.Message)
		}
		return resp
	}
	if !resp.Allowed {
		msg := ""
		if resp.Result != nil {
			msg = resp.Result.Message
		}
		t.Fatalf("denied: %s", msg)
	}
	got := slices.Clone(resp.Patches)
	for i := range got {
		got[i].Value = plain(got[i].Value)
		if slices.Contains(want.IgnorePatchValues, got[i].Path) {
			if got[i].Value == nil || got[i].Value == "" {
				t.Errorf("patch of %s has no value", got[i].Path)
			}
			got[i].Value = nil
		}
	}
	less := func(a, b jsonpatch.Operation) int {
		if a.Path != b.Path {
			if a.Path < b.Path {
				return -1
			}
			return 1
		}
		return 0
	}
	slices.SortFunc(got, less)
	wantPatch := slices.Clone(want.Patch)
	slices.SortFunc(wantPatch, less)
	if diff := cmp.Diff(wantPatch, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("patch (-want +got):\n%s", diff)
	}
	return resp
}

// plain turns a decoded patch value (with json.Number) into the values
// encoding/json gives by default, for comparing with JSON.
func plain(v any) any {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		panic(err)
	}
	return out
}

// JSON decodes a JSON literal into the value a patch operation carries.
func JSON(s string) any {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		panic(err)
	}
	return v
}
