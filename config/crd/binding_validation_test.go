package crd

import "testing"

// rbWithSpec is a ResourceBinding for Deployment default/nginx with extra
// spec fields.
func rbWithSpec(spec string) string {
	return `
apiVersion: work.karmada.io/v1alpha2
kind: ResourceBinding
metadata:
  name: nginx-deployment
spec:
  resource:
    apiVersion: apps/v1
    kind: Deployment
    namespace: default
    name: nginx
` + nest(spec, 2)
}

func TestBindingValidation(t *testing.T) {
	runValidationCases(t, []validationCase{
		// Realistic objects that must be accepted.
		{
			name: "scheduled ResourceBinding of a Deployment",
			manifest: `
apiVersion: work.karmada.io/v1alpha2
kind: ResourceBinding
metadata:
  name: nginx-deployment
  labels:
    propagationpolicy.karmada.io/permanent-id: 9c1a3d4e-0000-4000-8000-000000000001
    resourcebinding.karmada.io/permanent-id: 9c1a3d4e-0000-4000-8000-000000000002
  annotations:
    propagationpolicy.karmada.io/namespace: default
    propagationpolicy.karmada.io/name: nginx-propagation
spec:
  resource:
    apiVersion: apps/v1
    kind: Deployment
    namespace: default
    name: nginx
    uid: 2f0c5a7e-1111-4111-8111-111111111111
    resourceVersion: "1234"
  replicas: 5
  replicaRequirements:
    namespace: default
    priorityClassName: high
    resourceRequest:
      cpu: 250m
      memory: 64Mi
    nodeClaim:
      nodeSelector: {disktype: ssd}
      tolerations:
      - key: dedicated
        operator: Equal
        value: web
        effect: NoSchedule
      hardNodeAffinity:
        nodeSelectorTerms:
        - matchExpressions:
          - {key: kubernetes.io/arch, operator: In, values: [amd64]}
  placement:
    clusterAffinity:
      clusterNames: [member1, member2]
    spreadConstraints:
    - spreadByField: cluster
      maxGroups: 2
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticWeightList:
        - targetCluster: {clusterNames: [member1]}
          weight: 3
        - targetCluster: {clusterNames: [member2]}
          weight: 2
  clusters:
  - name: member1
    replicas: 3
  - name: member2
    replicas: 2
  schedulerName: default-scheduler
  conflictResolution: Abort
  propagateDeps: true
  failover:
    cluster:
      purgeMode: Gracefully
`,
		},
		{
			name: "ClusterResourceBinding of a ClusterRole",
			manifest: `
apiVersion: work.karmada.io/v1alpha2
kind: ClusterResourceBinding
metadata:
  name: system.foo-clusterrole
spec:
  resource:
    apiVersion: rbac.authorization.k8s.io/v1
    kind: ClusterRole
    name: "system:foo"
  placement:
    clusterAffinity:
      clusterNames: [member1, member2]
  clusters:
  - name: member1
  - name: member2
`,
		},
		{
			name: "ResourceBinding of a multi-component job during failover",
			manifest: rbWithSpec(`
components:
- name: leader
  replicas: 1
  replicaRequirements:
    resourceRequest: {cpu: "1"}
- name: worker
  replicas: 4
  replicaRequirements:
    priorityClassName: batch
    resourceRequest: {cpu: "2", nvidia.com/gpu: 1}
    nodeClaim:
      nodeSelector: {gpu: "true"}
clusters:
- name: member1
  components:
  - {name: leader, replicas: 1}
  - {name: worker, replicas: 2}
- name: member2
  components:
  - {name: worker, replicas: 2}
gracefulEvictionTasks:
- fromCluster: member3
  purgeMode: Gracefully
  replicas: 2
  reason: TaintUntolerated
  message: cluster member3 is not ready
  producer: TaintManager
  gracePeriodSeconds: 600
  suppressDeletion: false
  preservedLabelState: {failover.example.io/replicas: "2"}
  clustersBeforeFailover: [member1, member3]
  creationTimestamp: "2026-01-02T03:04:05Z"
requiredBy:
- namespace: default
  name: app-deployment
  clusters:
  - name: member1
    replicas: 1
suspension:
  dispatching: true
  dispatchingOnClusters:
    clusterNames: [member2]
  scheduling: false
schedulePriority:
  priority: 1000
workloadAffinityGroups:
  affinityGroup: training-1
  antiAffinityGroup: shard-a
rescheduleTriggeredAt: "2026-01-02T03:04:05Z"
preserveResourcesOnDeletion: true
`),
		},

		// Resource reference.
		{
			name: "ResourceBinding without resource",
			manifest: `
apiVersion: work.karmada.io/v1alpha2
kind: ResourceBinding
metadata:
  name: nothing
spec:
  replicas: 1
`,
			wantErr: []string{"spec.resource", "Required value"},
		},
		{
			name: "resource without name",
			manifest: `
apiVersion: work.karmada.io/v1alpha2
kind: ResourceBinding
metadata:
  name: unnamed
spec:
  resource:
    apiVersion: apps/v1
    kind: Deployment
`,
			wantErr: []string{"spec.resource.name", "Required value"},
		},
		{
			name: "ClusterResourceBinding resource without kind",
			manifest: `
apiVersion: work.karmada.io/v1alpha2
kind: ClusterResourceBinding
metadata:
  name: kindless
spec:
  resource:
    apiVersion: v1
    name: foo
`,
			wantErr: []string{"spec.resource.kind", "Required value"},
		},

		// Replicas and the scheduling result.
		{
			name:     "negative replicas",
			manifest: rbWithSpec(`replicas: -1`),
			wantErr:  []string{"spec.replicas", "greater than or equal to 0"},
		},
		{
			name: "target cluster without name",
			manifest: rbWithSpec(`
clusters:
- replicas: 2
`),
			wantErr: []string{"spec.clusters[0].name", "Required value"},
		},
		{
			name: "target cluster with negative replicas",
			manifest: rbWithSpec(`
clusters:
- name: member1
  replicas: -2
`),
			wantErr: []string{"spec.clusters[0].replicas", "greater than or equal to 0"},
		},
		{
			name: "target cluster component without replicas",
			manifest: rbWithSpec(`
clusters:
- name: member1
  components:
  - name: worker
`),
			wantErr: []string{"spec.clusters[0].components[0].replicas", "Required value"},
		},
		{
			name: "component without replicas",
			manifest: rbWithSpec(`
components:
- name: worker
`),
			wantErr: []string{"spec.components[0].replicas", "Required value"},
		},
		{
			name: "duplicate component names",
			manifest: rbWithSpec(`
components:
- name: worker
  replicas: 1
- name: worker
  replicas: 2
`),
			wantErr: []string{"spec.components", "name must be unique"},
		},
		{
			name: "malformed resource request",
			manifest: rbWithSpec(`
replicaRequirements:
  resourceRequest: {cpu: "one"}
`),
			wantErr: []string{"spec.replicaRequirements.resourceRequest.cpu"},
		},
		{
			name: "requiredBy without name",
			manifest: rbWithSpec(`
requiredBy:
- namespace: default
`),
			wantErr: []string{"spec.requiredBy[0].name", "Required value"},
		},

		// Graceful eviction tasks.
		{
			name: "eviction task without producer",
			manifest: rbWithSpec(`
gracefulEvictionTasks:
- fromCluster: member1
  reason: TaintUntolerated
`),
			wantErr: []string{"spec.gracefulEvictionTasks[0].producer", "Required value"},
		},
		{
			name: "eviction task without fromCluster",
			manifest: rbWithSpec(`
gracefulEvictionTasks:
- reason: TaintUntolerated
  producer: TaintManager
`),
			wantErr: []string{"spec.gracefulEvictionTasks[0].fromCluster", "Required value"},
		},
		{
			name: "eviction task reason that is not CamelCase",
			manifest: rbWithSpec(`
gracefulEvictionTasks:
- fromCluster: member1
  reason: taint untolerated!
  producer: TaintManager
`),
			wantErr: []string{"spec.gracefulEvictionTasks[0].reason", "should match"},
		},
		{
			name: "eviction task reason too long",
			manifest: rbWithSpec(`
gracefulEvictionTasks:
- fromCluster: member1
  reason: ApplicationFailureAfterAVeryLongTimeIndeed
  producer: TaintManager
`),
			wantErr: []string{"spec.gracefulEvictionTasks[0].reason", "Too long"},
		},
		{
			name: "eviction task unknown purgeMode",
			manifest: rbWithSpec(`
gracefulEvictionTasks:
- fromCluster: member1
  reason: ApplicationFailure
  producer: ApplicationFailover
  purgeMode: Immediately
`),
			wantErr: []string{"spec.gracefulEvictionTasks[0].purgeMode", "Unsupported value"},
		},

		// Copied policy fields keep the policy's rules.
		{
			name: "unknown conflictResolution",
			manifest: rbWithSpec(`
conflictResolution: Ignore
`),
			wantErr: []string{"spec.conflictResolution", "Unsupported value"},
		},
		{
			name: "placement Divided without replicaDivisionPreference",
			manifest: rbWithSpec(`
placement:
  replicaScheduling:
    replicaSchedulingType: Divided
`),
			wantErr: []string{"spec.placement.replicaScheduling", "replicaDivisionPreference is required when replicaSchedulingType is Divided"},
		},
		{
			name: "placement spread constraints by label and field",
			manifest: `
apiVersion: work.karmada.io/v1alpha2
kind: ClusterResourceBinding
metadata:
  name: foo-clusterrole
spec:
  resource:
    apiVersion: rbac.authorization.k8s.io/v1
    kind: ClusterRole
    name: foo
  placement:
    spreadConstraints:
    - spreadByField: zone
      spreadByLabel: site
`,
			wantErr: []string{"spec.placement.spreadConstraints[0]", "spreadByField and spreadByLabel are exclusive"},
		},
		{
			name: "failover application purgeMode unknown",
			manifest: rbWithSpec(`
failover:
  application:
    decisionConditions: {}
    purgeMode: Graciously
`),
			wantErr: []string{"spec.failover.application.purgeMode", "Unsupported value"},
		},
	})
}
