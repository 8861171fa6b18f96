package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/flotilla/internal/localfed"
	"github.com/flotilla-io/flotilla/internal/names"
)

// showSample applies the manifests in path to the control plane, waits for
// every template among them to be fully applied in its members and prints
// where each landed and its aggregated status: a new user's first look at
// propagation.
func showSample(ctx context.Context, out io.Writer, fed *localfed.Federation, path string) error {
	objs, err := readManifests(path)
	if err != nil {
		return err
	}
	cp := fed.ControlPlane.Client
	var templates []*unstructured.Unstructured
	for _, obj := range objs {
		if err := cp.Create(ctx, obj); err != nil {
			return fmt.Errorf("creating %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
		if !strings.HasSuffix(obj.GroupVersionKind().Group, "karmada.io") {
			templates = append(templates, obj)
		}
	}
	printf(out, "\nApplied %s; waiting for it to reach the members...\n", path)
	for _, tpl := range templates {
		binding := &unstructured.Unstructured{}
		binding.SetAPIVersion("work.karmada.io/v1alpha2")
		binding.SetKind("ResourceBinding")
		key := client.ObjectKey{Namespace: tpl.GetNamespace(), Name: names.Binding(tpl.GetName(), tpl.GetKind())}
		if tpl.GetNamespace() == "" {
			binding.SetKind("ClusterResourceBinding")
		}
		err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
			if err := cp.Get(ctx, key, binding); err != nil {
				return false, client.IgnoreNotFound(err)
			}
			return fullyApplied(binding), nil
		})
		if err != nil {
			return fmt.Errorf("%s %s was not fully applied: %w", tpl.GetKind(), key, err)
		}
		// Workloads take a moment more to become available; wait for that
		// briefly, but kinds without a health rule never report Healthy.
		_ = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			if err := cp.Get(ctx, key, binding); err != nil {
				return false, client.IgnoreNotFound(err)
			}
			return allHealthy(binding), nil
		})
		if err := cp.Get(ctx, client.ObjectKeyFromObject(tpl), tpl); err != nil {
			return err
		}
		printf(out, "\n%s %s\n", tpl.GetKind(), client.ObjectKeyFromObject(tpl))
		clusters, _, _ := unstructured.NestedSlice(binding.Object, "spec", "clusters")
		for _, c := range clusters {
			target, _ := c.(map[string]any)
			printf(out, "  in %v: %v replicas\n", target["name"], target["replicas"])
		}
		if status, ok, _ := unstructured.NestedMap(tpl.Object, "status"); ok {
			data, _ := yaml.Marshal(map[string]any{"status": status})
			printf(out, "  aggregated in the template:\n    %s\n", strings.ReplaceAll(strings.TrimSpace(string(data)), "\n", "\n    "))
		}
	}
	return nil
}

// fullyApplied reports whether a binding's FullyApplied condition is True.
func fullyApplied(binding *unstructured.Unstructured) bool {
	conditions, _, _ := unstructured.NestedSlice(binding.Object, "status", "conditions")
	for _, c := range conditions {
		cond, _ := c.(map[string]any)
		if cond["type"] == "FullyApplied" && cond["status"] == "True" {
			return true
		}
	}
	return false
}

// allHealthy reports whether every member reported the object Healthy.
func allHealthy(binding *unstructured.Unstructured) bool {
	items, _, _ := unstructured.NestedSlice(binding.Object, "status", "aggregatedStatus")
	for _, i := range items {
		if item, _ := i.(map[string]any); item["health"] != "Healthy" {
			return false
		}
	}
	return len(items) > 0
}

// readManifests decodes every document of a multi-document YAML file.
func readManifests(path string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var objs []*unstructured.Unstructured
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &obj.Object); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(obj.Object) > 0 {
			objs = append(objs, obj)
		}
	}
}
