package writecost

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// kind is one resource under measurement: how to make an object of it, a
// spec change for updates, and a status change for status patches.
type kind struct {
	name string
	gvr  schema.GroupVersionResource
	gvk  schema.GroupVersionKind
	// object is the i-th object of the kind in ns.
	object func(ns string, i int) *unstructured.Unstructured
	// change alters obj's spec (its data, for a ConfigMap), differently
	// for each n.
	change func(obj *unstructured.Unstructured, n int)
	// statusPatch is the n-th merge patch of the status subresource; nil
	// when the kind has none.
	statusPatch func(n int) []byte
	// apply adds server-side apply's create and update to the operations:
	// the execution controller writes member objects that way.
	apply bool
}

var (
	bindingGVR = schema.GroupVersionResource{Group: "work.karmada.io", Version: "v1alpha2", Resource: "resourcebindings"}
	workGVR    = schema.GroupVersionResource{Group: "work.karmada.io", Version: "v1alpha1", Resource: "works"}
	policyGVR  = schema.GroupVersionResource{Group: "policy.karmada.io", Version: "v1alpha1", Resource: "propagationpolicies"}
	configGVR  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	deployGVR  = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
)

var members = []string{"member1", "member2", "member3"}

// deploymentManifest is what a Work carries: a Deployment template as the
// binding controller writes it.
func deploymentManifest(ns, name, workNamespace, workName string, replicas int) map[string]any {
	return map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata": map[string]any{
			"name": name, "namespace": ns,
			"labels": map[string]any{
				"app": name,
				"propagationpolicy.karmada.io/permanent-id": "5d8a3f9e-2c41-4b7e-9a61-0f3c2b8d7e14",
				"resourcebinding.karmada.io/permanent-id":   "a4c7e2d1-6b93-4f08-8e25-3d1f9c7b6a52",
				"work.karmada.io/permanent-id":              "c3f1a9e7-8b24-4d6c-9e05-7a2b1f4d8c36",
				"karmada.io/managed":                        "true",
			},
			"annotations": map[string]any{
				"resourcebinding.karmada.io/name":      name + "-deployment",
				"resourcebinding.karmada.io/namespace": ns,
				"work.karmada.io/name":                 workName,
				"work.karmada.io/namespace":            workNamespace,
			},
		},
		"spec": map[string]any{
			"replicas": int64(replicas),
			"selector": map[string]any{"matchLabels": map[string]any{"app": name}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": name}},
				"spec": map[string]any{
					"containers": []any{map[string]any{
						"name": "app", "image": "registry.example/team/app:v1.2.3",
						"ports":     []any{map[string]any{"containerPort": int64(8080), "protocol": "TCP"}},
						"resources": map[string]any{"requests": map[string]any{"cpu": "100m", "memory": "64Mi"}},
					}},
				},
			},
		},
	}
}

func objectOf(gvk schema.GroupVersionKind, ns, name string, fields map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: fields}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

func bindingKind() kind {
	gvk := schema.GroupVersionKind{Group: "work.karmada.io", Version: "v1alpha2", Kind: "ResourceBinding"}
	return kind{
		name: "ResourceBinding", gvr: bindingGVR, gvk: gvk,
		object: func(ns string, i int) *unstructured.Unstructured {
			name := fmt.Sprintf("app-%06d", i)
			clusters := make([]any, 0, len(members))
			for _, m := range members {
				clusters = append(clusters, map[string]any{"name": m, "replicas": int64(1)})
			}
			return objectOf(gvk, ns, name+"-deployment", map[string]any{
				"metadata": map[string]any{
					"labels": map[string]any{
						"propagationpolicy.karmada.io/permanent-id": "5d8a3f9e-2c41-4b7e-9a61-0f3c2b8d7e14",
						"resourcebinding.karmada.io/permanent-id":   "a4c7e2d1-6b93-4f08-8e25-3d1f9c7b6a52",
					},
					"annotations": map[string]any{
						"propagationpolicy.karmada.io/name":      "all",
						"propagationpolicy.karmada.io/namespace": ns,
					},
					"finalizers": []any{"karmada.io/binding-controller"},
				},
				"spec": map[string]any{
					"resource": map[string]any{
						"apiVersion": "apps/v1", "kind": "Deployment", "namespace": ns, "name": name,
						"uid": "0b9e1f3c-7d2a-4c85-b6e9-2f4a8d1c3e57", "resourceVersion": "12345",
					},
					"replicas": int64(3),
					"replicaRequirements": map[string]any{
						"resourceRequest": map[string]any{"cpu": "100m", "memory": "64Mi"},
						"namespace":       ns,
					},
					"clusters": clusters,
					"placement": map[string]any{
						"clusterAffinity": map[string]any{"clusterNames": []any{"member1", "member2", "member3"}},
						"replicaScheduling": map[string]any{
							"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted",
						},
					},
					"schedulerName":      "default-scheduler",
					"conflictResolution": "Abort",
				},
			})
		},
		change: func(obj *unstructured.Unstructured, n int) {
			_ = unstructured.SetNestedField(obj.Object, int64(3+n%5), "spec", "replicas")
		},
		statusPatch: func(n int) []byte {
			aggregated := make([]any, 0, len(members))
			for _, m := range members {
				aggregated = append(aggregated, map[string]any{
					"clusterName": m, "applied": true, "health": "Healthy",
					"status": map[string]any{"replicas": 1, "readyReplicas": n % 2, "availableReplicas": n % 2, "updatedReplicas": 1, "observedGeneration": 1},
				})
			}
			return mustJSON(map[string]any{"status": map[string]any{
				"schedulerObservedGeneration": n,
				"conditions": []any{
					condition("Scheduled", "Success", "Binding has been scheduled successfully.", n),
					condition("FullyApplied", "FullyAppliedSuccess", "All works have been successfully applied", n),
				},
				"aggregatedStatus": aggregated,
			}})
		},
	}
}

func workKind() kind {
	gvk := schema.GroupVersionKind{Group: "work.karmada.io", Version: "v1alpha1", Kind: "Work"}
	return kind{
		name: "Work", gvr: workGVR, gvk: gvk,
		object: func(ns string, i int) *unstructured.Unstructured {
			name := fmt.Sprintf("app-%06d", i)
			// As the binding controller writes it: the manifest names its
			// Work, and both carry the Work's permanent id.
			return objectOf(gvk, ns, name+"-6c9f8d7b5", map[string]any{
				"metadata": map[string]any{
					"labels": map[string]any{
						"resourcebinding.karmada.io/permanent-id": "a4c7e2d1-6b93-4f08-8e25-3d1f9c7b6a52",
						"work.karmada.io/permanent-id":            "c3f1a9e7-8b24-4d6c-9e05-7a2b1f4d8c36",
					},
					"annotations": map[string]any{
						"resourcebinding.karmada.io/name":      name + "-deployment",
						"resourcebinding.karmada.io/namespace": "bench",
					},
					"finalizers": []any{"karmada.io/execution-controller"},
				},
				"spec": map[string]any{
					"workload": map[string]any{"manifests": []any{deploymentManifest("bench", name, ns, name+"-6c9f8d7b5", 1)}},
				},
			})
		},
		change: func(obj *unstructured.Unstructured, n int) {
			manifests, _, _ := unstructured.NestedSlice(obj.Object, "spec", "workload", "manifests")
			_ = unstructured.SetNestedField(manifests[0].(map[string]any), int64(1+n%5), "spec", "replicas")
			_ = unstructured.SetNestedSlice(obj.Object, manifests, "spec", "workload", "manifests")
		},
		statusPatch: func(n int) []byte {
			return mustJSON(map[string]any{"status": map[string]any{
				"conditions": []any{condition("Applied", "AppliedSuccessful", "Manifest has been successfully applied", n)},
				"manifestStatuses": []any{map[string]any{
					"identifier": map[string]any{"ordinal": 0, "group": "apps", "version": "v1", "kind": "Deployment", "resource": "", "namespace": "bench", "name": "app"},
					"status":     map[string]any{"replicas": 1, "readyReplicas": n % 2, "availableReplicas": n % 2, "updatedReplicas": 1, "observedGeneration": 1},
					"health":     "Healthy",
				}},
			}})
		},
	}
}

func policyKind() kind {
	gvk := schema.GroupVersionKind{Group: "policy.karmada.io", Version: "v1alpha1", Kind: "PropagationPolicy"}
	return kind{
		name: "PropagationPolicy", gvr: policyGVR, gvk: gvk,
		object: func(ns string, i int) *unstructured.Unstructured {
			name := fmt.Sprintf("app-%06d", i)
			return objectOf(gvk, ns, name, map[string]any{
				"spec": map[string]any{
					"resourceSelectors": []any{map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": name}},
					"placement": map[string]any{
						"clusterAffinity": map[string]any{"clusterNames": []any{"member1", "member2", "member3"}},
						"replicaScheduling": map[string]any{
							"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted",
						},
					},
					"priority": int64(0),
				},
			})
		},
		change: func(obj *unstructured.Unstructured, n int) {
			_ = unstructured.SetNestedField(obj.Object, int64(n%100), "spec", "priority")
		},
	}
}

// memberDeploymentKind is a Work's manifest as a member receives it: the
// same object written by POST and PUT or by server-side apply, to weigh what
// apply's field tracking costs the member's API server. As a template on
// the control plane, it is also created by the user, claimed by the
// detector and given its aggregated status.
func memberDeploymentKind() kind {
	gvk := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	return kind{
		name: "Deployment", gvr: deployGVR, gvk: gvk, apply: true,
		object: func(ns string, i int) *unstructured.Unstructured {
			name := fmt.Sprintf("app-%06d", i)
			u := &unstructured.Unstructured{Object: deploymentManifest(ns, name, "karmada-es-member1", name+"-6c9f8d7b5", 1)}
			u.SetGroupVersionKind(gvk)
			return u
		},
		change: func(obj *unstructured.Unstructured, n int) {
			_ = unstructured.SetNestedField(obj.Object, int64(1+n%5), "spec", "replicas")
		},
		// The template's status as the binding status controller
		// aggregates it from the members.
		statusPatch: func(n int) []byte {
			return mustJSON(map[string]any{"status": map[string]any{
				"observedGeneration": 1, "replicas": 3, "updatedReplicas": 3,
				"readyReplicas": n % 4, "availableReplicas": n % 4,
			}})
		},
	}
}

// configMapTwin is a ConfigMap whose JSON is as long as twin's objects, and
// whose data patches are as long as twin's status patches: the cheapest
// object of that size, to compare with.
func configMapTwin(twin kind) kind {
	gvk := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	size := len(mustJSON(twin.object("bench", 0).Object))
	object := func(ns string, i int) *unstructured.Unstructured {
		u := objectOf(gvk, ns, fmt.Sprintf("cm-%06d", i), map[string]any{"data": map[string]any{"payload": ""}})
		pad := max(0, size-len(mustJSON(u.Object)))
		_ = unstructured.SetNestedField(u.Object, strings.Repeat("x", pad), "data", "payload")
		return u
	}
	k := kind{
		name: "ConfigMap~" + twin.name, gvr: configGVR, gvk: gvk, object: object,
		change: func(obj *unstructured.Unstructured, n int) {
			payload, _, _ := unstructured.NestedString(obj.Object, "data", "payload")
			if payload != "" {
				payload = string(rune('a'+n%26)) + payload[1:]
			}
			_ = unstructured.SetNestedField(obj.Object, payload, "data", "payload")
		},
	}
	if twin.statusPatch != nil {
		patchSize := len(twin.statusPatch(0))
		k.statusPatch = func(n int) []byte {
			p := mustJSON(map[string]any{"data": map[string]any{"status": ""}})
			return mustJSON(map[string]any{"data": map[string]any{
				"status": strings.Repeat(string(rune('a'+n%26)), max(1, patchSize-len(p))),
			}})
		}
	}
	return k
}

func condition(typ, reason, message string, n int) map[string]any {
	return map[string]any{
		"type": typ, "status": "True", "reason": reason, "message": message,
		"lastTransitionTime": time.Unix(1_800_000_000+int64(n), 0).UTC().Format(time.RFC3339),
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// kinds are the cases: each CRD, then its ConfigMap of the same size.
func kinds() []kind {
	var out []kind
	for _, k := range []kind{bindingKind(), workKind(), policyKind()} {
		out = append(out, k, configMapTwin(k))
	}
	return append(out, memberDeploymentKind())
}
