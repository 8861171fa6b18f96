package binding

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPrune(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{
			name: "deployment: server metadata, status and revision annotation go; policy labels stay",
			in:   deploymentYAML,
			want: `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: nginx
  namespace: apps
  labels:
    app: nginx
    propagationpolicy.karmada.io/permanent-id: pp-id
  annotations:
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
`,
		},
		{
			name: "job: generated selector and pod labels, ttl go",
			in: `
apiVersion: batch/v1
kind: Job
metadata: {name: pi, namespace: apps, uid: u1}
spec:
  ttlSecondsAfterFinished: 100
  selector:
    matchLabels:
      batch.kubernetes.io/controller-uid: u1
  template:
    metadata:
      labels:
        app: pi
        batch.kubernetes.io/controller-uid: u1
        batch.kubernetes.io/job-name: pi
        controller-uid: u1
        job-name: pi
    spec:
      restartPolicy: Never
`,
			want: `
apiVersion: batch/v1
kind: Job
metadata: {name: pi, namespace: apps}
spec:
  template:
    metadata:
      labels: {app: pi}
    spec:
      restartPolicy: Never
`,
		},
		{
			name: "job with a manual selector keeps it",
			in: `
apiVersion: batch/v1
kind: Job
metadata: {name: pi}
spec:
  manualSelector: true
  selector: {matchLabels: {controller-uid: mine}}
  template: {metadata: {labels: {controller-uid: mine}}}
`,
			want: `
apiVersion: batch/v1
kind: Job
metadata: {name: pi}
spec:
  manualSelector: true
  selector: {matchLabels: {controller-uid: mine}}
  template: {metadata: {labels: {controller-uid: mine}}}
`,
		},
		{
			name: "service: allocated cluster IPs go",
			in: `
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {clusterIP: 10.0.0.1, clusterIPs: [10.0.0.1], ports: [{port: 80}]}
`,
			want: `
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {ports: [{port: 80}]}
`,
		},
		{
			name: "headless service keeps clusterIP None",
			in: `
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {clusterIP: None, clusterIPs: [None]}
`,
			want: `
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {clusterIP: None, clusterIPs: [None]}
`,
		},
		{
			name: "service account: generated token secrets go",
			in: `
apiVersion: v1
kind: ServiceAccount
metadata: {name: bot}
secrets: [{name: bot-token-abcde}, {name: registry}]
`,
			want: `
apiVersion: v1
kind: ServiceAccount
metadata: {name: bot}
secrets: [{name: registry}]
`,
		},
		{
			name: "service account token secret: token and account uid go",
			in: `
apiVersion: v1
kind: Secret
type: kubernetes.io/service-account-token
metadata:
  name: bot-token
  annotations: {kubernetes.io/service-account.name: bot, kubernetes.io/service-account.uid: u1}
data: {token: dG9rZW4=}
`,
			want: `
apiVersion: v1
kind: Secret
type: kubernetes.io/service-account-token
metadata:
  name: bot-token
  annotations: {kubernetes.io/service-account.name: bot}
`,
		},
		{
			name: "opaque secret keeps its data",
			in: `
apiVersion: v1
kind: Secret
type: Opaque
metadata: {name: s, resourceVersion: "1"}
data: {k: dg==}
`,
			want: `
apiVersion: v1
kind: Secret
type: Opaque
metadata: {name: s}
data: {k: dg==}
`,
		},
		{
			name: "pvc: selected node goes",
			in: `
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
  annotations: {volume.kubernetes.io/selected-node: node-1}
spec: {resources: {requests: {storage: 1Gi}}}
`,
			want: `
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
spec: {resources: {requests: {storage: 1Gi}}}
`,
		},
		{
			name: "custom resource: only server fields go",
			in: `
apiVersion: example.com/v1
kind: Widget
metadata: {name: w, uid: u, generation: 2}
spec: {size: 3, clusterIP: 10.0.0.1}
status: {ready: true}
`,
			want: `
apiVersion: example.com/v1
kind: Widget
metadata: {name: w}
spec: {size: 3, clusterIP: 10.0.0.1}
`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := obj(t, tt.in)
			prune(got)
			if diff := cmp.Diff(obj(t, tt.want).Object, got.Object); diff != "" {
				t.Errorf("prune (-want +got):\n%s", diff)
			}
		})
	}
}
