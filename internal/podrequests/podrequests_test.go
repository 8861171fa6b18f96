package podrequests

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// list builds a ResourceList from name, quantity pairs.
func list(pairs ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i+1 < len(pairs); i += 2 {
		out[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return out
}

func ctr(requests, limits corev1.ResourceList) corev1.Container {
	return corev1.Container{Resources: corev1.ResourceRequirements{Requests: requests, Limits: limits}}
}

func sidecar(requests corev1.ResourceList) corev1.Container {
	always := corev1.ContainerRestartPolicyAlways
	c := ctr(requests, nil)
	c.RestartPolicy = &always
	return c
}

// quantityValues compares quantities by value.
var quantityValues = cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })

func TestEffectiveRequests(t *testing.T) {
	tests := []struct {
		name         string
		spec         corev1.PodSpec
		pod, fromTpl corev1.ResourceList
	}{{
		name: "app containers are summed",
		spec: corev1.PodSpec{Containers: []corev1.Container{ctr(list("cpu", "100m", "memory", "64Mi"), nil), ctr(list("cpu", "250m"), nil)}},
		pod:  list("cpu", "350m", "memory", "64Mi"),
	}, {
		name: "the largest init container raises the sum",
		spec: corev1.PodSpec{
			Containers:     []corev1.Container{ctr(list("cpu", "100m", "memory", "100Mi"), nil)},
			InitContainers: []corev1.Container{ctr(list("cpu", "500m", "memory", "50Mi"), nil), ctr(list("cpu", "200m", "memory", "300Mi"), nil)},
		},
		pod: list("cpu", "500m", "memory", "300Mi"),
	}, {
		name: "sidecars run next to the app and to the init containers after them",
		spec: corev1.PodSpec{
			Containers: []corev1.Container{ctr(list("cpu", "100m", "memory", "100Mi"), nil)},
			InitContainers: []corev1.Container{
				ctr(list("cpu", "500m", "memory", "50Mi"), nil),
				sidecar(list("cpu", "50m", "memory", "20Mi")),
				ctr(list("cpu", "200m", "memory", "300Mi"), nil),
			},
		},
		// app phase 150m/120Mi; init steps 500m/50Mi, then 250m/320Mi
		pod: list("cpu", "500m", "memory", "320Mi"),
	}, {
		name: "an init container before a sidecar runs without it",
		spec: corev1.PodSpec{
			Containers:     []corev1.Container{ctr(list("cpu", "300m"), nil)},
			InitContainers: []corev1.Container{ctr(list("cpu", "600m"), nil), sidecar(list("cpu", "200m"))},
		},
		pod: list("cpu", "600m"),
	}, {
		name: "overhead comes on top",
		spec: corev1.PodSpec{Containers: []corev1.Container{ctr(list("cpu", "1"), nil)}, Overhead: list("cpu", "10m", "memory", "10Mi")},
		pod:  list("cpu", "1010m", "memory", "10Mi"),
	}, {
		name: "pod-level requests replace cpu, memory and huge pages, not the rest",
		spec: corev1.PodSpec{
			Containers: []corev1.Container{ctr(list("cpu", "100m", "memory", "64Mi", "nvidia.com/gpu", "1"), nil)},
			Resources:  &corev1.ResourceRequirements{Requests: list("cpu", "2", "hugepages-2Mi", "4Mi", "ephemeral-storage", "1Gi")},
			Overhead:   list("cpu", "100m"),
		},
		pod: list("cpu", "2100m", "memory", "64Mi", "nvidia.com/gpu", "1", "hugepages-2Mi", "4Mi"),
	}, {
		name:    "limits stand in for missing requests in templates only",
		spec:    corev1.PodSpec{Containers: []corev1.Container{ctr(list("cpu", "100m"), list("cpu", "1", "memory", "256Mi"))}},
		pod:     list("cpu", "100m"),
		fromTpl: list("cpu", "100m", "memory", "256Mi"),
	}, {
		name: "template: a pod-level request left out defaults to the containers' request, else to the pod-level limit",
		spec: corev1.PodSpec{
			Containers:     []corev1.Container{ctr(list("memory", "64Mi"), nil)},
			InitContainers: []corev1.Container{ctr(nil, list("memory", "128Mi"))},
			Resources:      &corev1.ResourceRequirements{Limits: list("cpu", "2", "memory", "4Gi")},
		},
		pod:     list("memory", "64Mi"),
		fromTpl: list("cpu", "2", "memory", "128Mi"),
	}, {
		name: "template: pod-level requests that are set stay",
		spec: corev1.PodSpec{
			Containers: []corev1.Container{ctr(list("cpu", "100m", "memory", "64Mi"), nil)},
			Resources:  &corev1.ResourceRequirements{Requests: list("memory", "1Gi"), Limits: list("memory", "2Gi")},
		},
		pod: list("cpu", "100m", "memory", "1Gi"),
	}, {
		name: "nothing requested",
		spec: corev1.PodSpec{Containers: []corev1.Container{{}}},
		pod:  list(),
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.spec.DeepCopy()
			if d := cmp.Diff(tt.pod, ForPod(&tt.spec), quantityValues); d != "" {
				t.Errorf("ForPod (-want +got):\n%s", d)
			}
			wantTpl := tt.fromTpl
			if wantTpl == nil {
				wantTpl = tt.pod
			}
			if d := cmp.Diff(wantTpl, ForTemplate(&tt.spec), quantityValues); d != "" {
				t.Errorf("ForTemplate (-want +got):\n%s", d)
			}
			if d := cmp.Diff(before, &tt.spec); d != "" {
				t.Errorf("spec modified (-before +after):\n%s", d)
			}
		})
	}
}

func TestFormat(t *testing.T) {
	got := Format(corev1.ResourceList{
		"cpu":               resource.MustParse("2.048"),
		"memory":            resource.MustParse("1073741824"),
		"ephemeral-storage": resource.MustParse("1G"),
		"hugepages-2Mi":     resource.MustParse("4194304"),
		"nvidia.com/gpu":    resource.MustParse("2"),
		"example.com/zero":  resource.MustParse("0"),
	})
	want := map[string]string{"cpu": "2048m", "memory": "1Gi", "ephemeral-storage": "1000000000", "hugepages-2Mi": "4Mi", "nvidia.com/gpu": "2"}
	gotStrings := map[string]string{}
	for name, q := range got {
		gotStrings[string(name)] = q.String()
	}
	if d := cmp.Diff(want, gotStrings); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if Format(list("cpu", "0")) != nil {
		t.Error("all zero: want nil")
	}
}

func TestTemplateFromUnstructured(t *testing.T) {
	got, err := TemplateFromUnstructured(map[string]any{
		"containers": []any{map[string]any{"name": "a", "resources": map[string]any{
			"requests": map[string]any{"cpu": "250m", "nvidia.com/gpu": int64(1)},
			"limits":   map[string]any{"memory": float64(1024), "cpu": 0.5},
		}}},
		"initContainers": []any{map[string]any{"name": "s", "restartPolicy": "Always", "resources": map[string]any{
			"requests": map[string]any{"cpu": "100m"},
		}}},
		"resources":    map[string]any{"requests": map[string]any{"memory": "1Gi"}},
		"overhead":     map[string]any{"cpu": "10m"},
		"nodeSelector": map[string]any{"ignored": "yes"},
	})
	if err != nil {
		t.Fatal(err)
	}
	always := corev1.ContainerRestartPolicyAlways
	sidecar := ctr(list("cpu", "100m"), nil)
	sidecar.RestartPolicy = &always
	want := ForTemplate(&corev1.PodSpec{
		Containers:     []corev1.Container{ctr(list("cpu", "250m", "nvidia.com/gpu", "1"), list("memory", "1024", "cpu", "500m"))},
		InitContainers: []corev1.Container{sidecar},
		Resources:      &corev1.ResourceRequirements{Requests: list("memory", "1Gi")},
		Overhead:       list("cpu", "10m"),
	})
	if d := cmp.Diff(want, got, quantityValues); d != "" {
		t.Errorf("(-typed +unstructured):\n%s", d)
	}
	if d := cmp.Diff(list("cpu", "360m", "memory", "1Gi", "nvidia.com/gpu", "1"), got, quantityValues); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	formatted, err := FormattedTemplateFromUnstructured(map[string]any{
		"containers": []any{map[string]any{"resources": map[string]any{"requests": map[string]any{"cpu": "2.048", "memory": "1073741824"}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := formatted.Cpu().String() + " " + formatted.Memory().String(); got != "2048m 1Gi" {
		t.Errorf("formatted requests %q, want Karmada's \"2048m 1Gi\"", got)
	}

	for _, tt := range []struct {
		name    string
		spec    map[string]any
		wantErr string
	}{
		{"containers not a list", map[string]any{"containers": "web"}, "containers: expected a list"},
		{"container not an object", map[string]any{"containers": []any{"web"}}, "containers[0]: expected an object"},
		{"resources not an object", map[string]any{"initContainers": []any{map[string]any{"resources": "big"}}}, "initContainers[0].resources: expected an object"},
		{"bad quantity", map[string]any{"containers": []any{map[string]any{"resources": map[string]any{"requests": map[string]any{"cpu": "lots"}}}}}, "containers[0].resources.requests.cpu: "},
		{"bad pod-level limit", map[string]any{"resources": map[string]any{"limits": map[string]any{"memory": true}}}, "resources.limits.memory: expected a quantity, got bool"},
		{"overhead not an object", map[string]any{"overhead": []any{}}, "overhead: expected an object"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := TemplateFromUnstructured(tt.spec)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}
