package binding

import (
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/interpreter"
	"github.com/flotilla-io/flotilla/lua"
)

// obj parses a YAML object.
func obj(t testing.TB, doc string) *unstructured.Unstructured {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatalf("parsing test object: %v", err)
	}
	// As from the API server: integers are int64.
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(j); err != nil {
		t.Fatalf("decoding test object: %v", err)
	}
	return u
}

// staticInterpreter is the bundled and native rules, as the controller has
// them without customizations.
func staticInterpreter(t testing.TB) interpreter.Interpreter {
	t.Helper()
	vm := lua.New()
	t.Cleanup(vm.Close)
	in, err := interpreter.NewStatic(vm, nil)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

const deploymentYAML = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: nginx
  namespace: apps
  uid: 5b1f6b6e-0000-4000-8000-000000000001
  resourceVersion: "1234"
  generation: 3
  creationTimestamp: "2026-01-01T00:00:00Z"
  managedFields:
  - manager: kubectl
    operation: Update
  ownerReferences:
  - apiVersion: v1
    kind: ConfigMap
    name: owner
    uid: 5b1f6b6e-0000-4000-8000-000000000002
  finalizers: [example.com/keep]
  labels:
    app: nginx
    propagationpolicy.karmada.io/permanent-id: pp-id
  annotations:
    deployment.kubernetes.io/revision: "2"
    propagationpolicy.karmada.io/name: nginx-pp
    propagationpolicy.karmada.io/namespace: apps
spec:
  replicas: 6
  selector:
    matchLabels: {app: nginx}
  template:
    metadata:
      labels: {app: nginx}
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
status:
  replicas: 6
  readyReplicas: 6
`

func errorsAs(err error, target any) bool { return errors.As(err, target) }

func newTestWork(namespace string, deleting bool) *workv1alpha1.Work {
	w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "w"}}
	if deleting {
		now := metav1.Now()
		w.DeletionTimestamp = &now
	}
	return w
}
