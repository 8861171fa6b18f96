package crd

import (
	"strings"
	"testing"
)

// nest re-indents a YAML fragment written flush-left (after trimming a
// leading newline) so it can be placed under a key at the given depth.
func nest(fragment string, spaces int) string {
	pad := strings.Repeat(" ", spaces)
	lines := strings.Split(strings.Trim(fragment, "\n"), "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = pad + l
		}
	}
	return strings.Join(lines, "\n")
}

// ppWithPlacement is a PropagationPolicy for Deployment nginx with the given
// placement.
func ppWithPlacement(placement string) string {
	return `
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: nginx
spec:
  resourceSelectors:
  - apiVersion: apps/v1
    kind: Deployment
    name: nginx
  placement:
` + nest(placement, 4)
}

// ppWithSpec is a PropagationPolicy for Deployment nginx with extra spec
// fields.
func ppWithSpec(spec string) string {
	return `
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: nginx
spec:
  resourceSelectors:
  - apiVersion: apps/v1
    kind: Deployment
    name: nginx
` + nest(spec, 2)
}

// opWithOverriders is an OverridePolicy for Deployment nginx with one rule
// for member1 carrying the given overriders.
func opWithOverriders(overriders string) string {
	return `
apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata:
  name: nginx
spec:
  resourceSelectors:
  - apiVersion: apps/v1
    kind: Deployment
    name: nginx
  overrideRules:
  - targetCluster:
      clusterNames: [member1]
    overriders:
` + nest(overriders, 6)
}

func TestPolicyValidation(t *testing.T) {
	runValidationCases(t, []validationCase{
		// Realistic objects that must be accepted.
		{
			name: "PropagationPolicy divided by static weights with a cluster spread",
			manifest: `
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: nginx-propagation
spec:
  resourceSelectors:
  - apiVersion: apps/v1
    kind: Deployment
    name: nginx
  - apiVersion: v1
    kind: ConfigMap
    labelSelector:
      matchLabels:
        app: nginx
  propagateDeps: true
  priority: 10
  preemption: Always
  conflictResolution: Overwrite
  placement:
    clusterAffinity:
      clusterNames: [member1, member2, member3]
      exclude: [member4]
      labelSelector:
        matchExpressions:
        - {key: env, operator: In, values: [prod]}
      fieldSelector:
        matchExpressions:
        - {key: region, operator: NotIn, values: [cn-north-1]}
    clusterTolerations:
    - key: cluster.karmada.io/not-ready
      operator: Exists
      effect: NoExecute
      tolerationSeconds: 300
    spreadConstraints:
    - spreadByField: cluster
      minGroups: 2
      maxGroups: 3
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticWeightList:
        - targetCluster:
            clusterNames: [member1]
          weight: 2
        - targetCluster:
            clusterNames: [member2, member3]
          weight: 1
`,
		},
		{
			name:     "minimal PropagationPolicy",
			manifest: ppWithSpec(``),
		},
		{
			name: "PropagationPolicy duplicated with region spread and failover",
			manifest: ppWithSpec(`
placement:
  clusterAffinity:
    labelSelector:
      matchLabels: {tier: edge}
  spreadConstraints:
  - spreadByField: region
    minGroups: 1
    maxGroups: 2
  - spreadByField: cluster
    minGroups: 2
  replicaScheduling:
    replicaSchedulingType: Duplicated
failover:
  application:
    decisionConditions:
      tolerationSeconds: 120
    purgeMode: Gracefully
    gracePeriodSeconds: 600
    statePreservation:
      rules:
      - aliasLabelName: failover.example.io/replicas
        jsonPath: "{.replicas}"
  cluster:
    purgeMode: Directly
activationPreference: Lazy
suspension:
  dispatching: false
  dispatchingOnClusters:
    clusterNames: [member2]
preserveResourcesOnDeletion: true
schedulePriority:
  priorityClassSource: KubePriorityClass
  priorityClassName: high
dependentOverrides: [nginx-override]
schedulerName: default-scheduler
`),
		},
		{
			name: "PropagationPolicy aggregated with dynamic weight and spread by label",
			manifest: ppWithPlacement(`
clusterAffinities:
- affinityName: primary
  clusterNames: [member1, member2]
  overflowAffinities:
  - affinityName: burst
    clusterNames: [member3]
- affinityName: backup
  clusterNames: [member4]
spreadConstraints:
- spreadByLabel: topology.example.io/site
  maxGroups: 2
replicaScheduling:
  replicaSchedulingType: Divided
  replicaDivisionPreference: Aggregated
  weightPreference:
    dynamicWeight: AvailableReplicas
workloadAffinity:
  affinity:
    groupByLabelKey: app.example.io/group
  antiAffinity:
    groupByLabelKey: app.example.io/replica-set
`),
		},
		{
			name: "ClusterPropagationPolicy for a CRD and a ClusterRole",
			manifest: `
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterPropagationPolicy
metadata:
  name: foo-crd
spec:
  resourceSelectors:
  - apiVersion: apiextensions.k8s.io/v1
    kind: CustomResourceDefinition
    name: foos.example.io
  - apiVersion: rbac.authorization.k8s.io/v1
    kind: ClusterRole
    name: "system:foo"
  placement:
    clusterAffinity:
      clusterNames: [member1, member2]
`,
		},
		{
			name: "OverridePolicy with image, plaintext, command, labels and field overriders",
			manifest: `
apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata:
  name: nginx-override
spec:
  resourceSelectors:
  - apiVersion: apps/v1
    kind: Deployment
    name: nginx
  overrideRules:
  - targetCluster:
      clusterNames: [member1]
    overriders:
      imageOverrider:
      - component: Registry
        operator: replace
        value: registry.example.io
      - predicate:
          path: /spec/template/spec/containers/0/image
        component: Tag
        operator: replace
        value: "1.25"
      plaintext:
      - path: /spec/replicas
        operator: replace
        value: 3
      - path: /metadata/annotations/debug
        operator: remove
      - path: /spec/template/spec/nodeSelector
        operator: add
        value: {disktype: ssd}
  - targetCluster:
      labelSelector:
        matchLabels: {env: dev}
    overriders:
      commandOverrider:
      - containerName: nginx
        operator: add
        value: ["--debug"]
      argsOverrider:
      - containerName: nginx
        operator: remove
        value: ["--quiet"]
      labelsOverrider:
      - operator: add
        value: {team: web}
      annotationsOverrider:
      - operator: remove
        value: {old: ""}
      fieldOverrider:
      - fieldPath: /data/config.json
        json:
        - subPath: /log/level
          operator: replace
          value: debug
      - fieldPath: /data/config.yaml
        yaml:
        - subPath: /server/port
          operator: add
          value: 8080
        - subPath: /server/tls
          operator: remove
`,
		},
		{
			name: "ClusterOverridePolicy in the deprecated form",
			manifest: `
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterOverridePolicy
metadata:
  name: registry
spec:
  targetCluster:
    clusterNames: [member1]
  overriders:
    imageOverrider:
    - component: Registry
      operator: replace
      value: mirror.example.io
`,
		},
		{
			name: "FederatedResourceQuota with static assignments",
			manifest: `
apiVersion: policy.karmada.io/v1alpha1
kind: FederatedResourceQuota
metadata:
  name: team-a
spec:
  overall:
    cpu: "10"
    memory: 20Gi
    pods: 100
  staticAssignments:
  - clusterName: member1
    hard:
      cpu: "6"
      memory: 12Gi
`,
		},
		{
			name: "ClusterTaintPolicy tainting not-ready clusters",
			manifest: `
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterTaintPolicy
metadata:
  name: not-ready
spec:
  targetClusters:
    clusterNames: [member1, member2]
  addOnConditions:
  - conditionType: Ready
    operator: NotIn
    statusValues: ["True"]
  removeOnConditions:
  - conditionType: Ready
    operator: In
    statusValues: ["True"]
  taints:
  - key: cluster.karmada.io/not-ready
    effect: NoExecute
  - key: example.io/degraded
    value: "yes"
    effect: NoSchedule
`,
		},

		// PropagationSpec schema rules.
		{
			name: "resourceSelectors missing",
			manifest: `
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: nginx
spec:
  placement: {}
`,
			wantErr: []string{"spec.resourceSelectors", "Required value"},
		},
		{
			name: "resourceSelectors empty",
			manifest: `
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: nginx
spec:
  resourceSelectors: []
`,
			wantErr: []string{"spec.resourceSelectors", "at least 1 items"},
		},
		{
			name: "resourceSelector without kind",
			manifest: `
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: nginx
spec:
  resourceSelectors:
  - apiVersion: apps/v1
    name: nginx
`,
			wantErr: []string{"spec.resourceSelectors[0].kind", "Required value"},
		},
		{
			name: "resourceSelector without apiVersion",
			manifest: `
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterPropagationPolicy
metadata:
  name: nginx
spec:
  resourceSelectors:
  - kind: Deployment
`,
			wantErr: []string{"spec.resourceSelectors[0].apiVersion", "Required value"},
		},
		{
			name:     "unknown preemption",
			manifest: ppWithSpec(`preemption: Sometimes`),
			wantErr:  []string{"spec.preemption", "Unsupported value"},
		},
		{
			name:     "unknown conflictResolution",
			manifest: ppWithSpec(`conflictResolution: Merge`),
			wantErr:  []string{"spec.conflictResolution", "Unsupported value"},
		},
		{
			name:     "unknown activationPreference",
			manifest: ppWithSpec(`activationPreference: Eager`),
			wantErr:  []string{"spec.activationPreference", "Unsupported value"},
		},
		{
			name: "schedulePriority without priorityClassName",
			manifest: ppWithSpec(`
schedulePriority:
  priorityClassSource: KubePriorityClass
`),
			wantErr: []string{"spec.schedulePriority.priorityClassName", "Required value"},
		},
		{
			name: "unknown priorityClassSource",
			manifest: ppWithSpec(`
schedulePriority:
  priorityClassSource: FederatedPriorityClass
  priorityClassName: high
`),
			wantErr: []string{"spec.schedulePriority.priorityClassSource", "Unsupported value"},
		},

		// Failover.
		{
			name: "application failover without decisionConditions",
			manifest: ppWithSpec(`
failover:
  application:
    purgeMode: Directly
`),
			wantErr: []string{"spec.failover.application.decisionConditions", "Required value"},
		},
		{
			name: "cluster failover purgeMode Never",
			manifest: ppWithSpec(`
failover:
  cluster:
    purgeMode: Never
`),
			wantErr: []string{"spec.failover.cluster.purgeMode", "Unsupported value"},
		},
		{
			name: "application failover gracePeriodSeconds zero",
			manifest: ppWithSpec(`
failover:
  application:
    decisionConditions: {}
    gracePeriodSeconds: 0
`),
			wantErr: []string{"spec.failover.application.gracePeriodSeconds", "greater than or equal to 1"},
		},
		{
			name: "application failover negative tolerationSeconds",
			manifest: ppWithSpec(`
failover:
  application:
    decisionConditions:
      tolerationSeconds: -1
`),
			wantErr: []string{"spec.failover.application.decisionConditions.tolerationSeconds", "greater than or equal to 0"},
		},
		{
			name: "statePreservation without rules",
			manifest: ppWithSpec(`
failover:
  cluster:
    statePreservation:
      rules: []
`),
			wantErr: []string{"spec.failover.cluster.statePreservation.rules", "at least 1 items"},
		},
		{
			name: "statePreservation rule without jsonPath",
			manifest: ppWithSpec(`
failover:
  cluster:
    statePreservation:
      rules:
      - aliasLabelName: foo
`),
			wantErr: []string{"spec.failover.cluster.statePreservation.rules[0].jsonPath", "Required value"},
		},

		// Placement: replica scheduling.
		{
			name: "Divided without replicaDivisionPreference",
			manifest: ppWithPlacement(`
replicaScheduling:
  replicaSchedulingType: Divided
`),
			wantErr: []string{"spec.placement.replicaScheduling", "replicaDivisionPreference is required when replicaSchedulingType is Divided"},
		},
		{
			name: "replicaSchedulingType defaults to Divided and then needs a preference",
			manifest: ppWithPlacement(`
replicaScheduling: {}
`),
			wantErr: []string{"spec.placement.replicaScheduling", "replicaDivisionPreference is required"},
		},
		{
			name: "unknown replicaSchedulingType",
			manifest: ppWithPlacement(`
replicaScheduling:
  replicaSchedulingType: Split
  replicaDivisionPreference: Weighted
`),
			wantErr: []string{"spec.placement.replicaScheduling.replicaSchedulingType", "Unsupported value"},
		},
		{
			name: "unknown replicaDivisionPreference",
			manifest: ppWithPlacement(`
replicaScheduling:
  replicaDivisionPreference: Balanced
`),
			wantErr: []string{"spec.placement.replicaScheduling.replicaDivisionPreference", "Unsupported value"},
		},
		{
			name: "static weight zero",
			manifest: ppWithPlacement(`
replicaScheduling:
  replicaDivisionPreference: Weighted
  weightPreference:
    staticWeightList:
    - targetCluster:
        clusterNames: [member1]
      weight: 0
`),
			wantErr: []string{"spec.placement.replicaScheduling.weightPreference.staticWeightList[0].weight", "greater than or equal to 1"},
		},
		{
			name: "static weight without targetCluster",
			manifest: ppWithPlacement(`
replicaScheduling:
  replicaDivisionPreference: Weighted
  weightPreference:
    staticWeightList:
    - weight: 1
`),
			wantErr: []string{"spec.placement.replicaScheduling.weightPreference.staticWeightList[0].targetCluster", "Required value"},
		},
		{
			name: "staticWeightList with dynamicWeight",
			manifest: ppWithPlacement(`
replicaScheduling:
  replicaDivisionPreference: Weighted
  weightPreference:
    dynamicWeight: AvailableReplicas
    staticWeightList:
    - targetCluster:
        clusterNames: [member1]
      weight: 1
`),
			wantErr: []string{"spec.placement.replicaScheduling.weightPreference", "staticWeightList and dynamicWeight are exclusive"},
		},
		{
			name: "unknown dynamicWeight",
			manifest: ppWithPlacement(`
replicaScheduling:
  replicaDivisionPreference: Weighted
  weightPreference:
    dynamicWeight: FreeMemory
`),
			wantErr: []string{"spec.placement.replicaScheduling.weightPreference.dynamicWeight", "Unsupported value"},
		},

		// Placement: spread constraints.
		{
			name: "spreadByField with spreadByLabel",
			manifest: ppWithPlacement(`
spreadConstraints:
- spreadByField: cluster
  spreadByLabel: site
`),
			wantErr: []string{"spec.placement.spreadConstraints[0]", "spreadByField and spreadByLabel are exclusive"},
		},
		{
			name: "minGroups above maxGroups",
			manifest: ppWithPlacement(`
spreadConstraints:
- spreadByField: cluster
  minGroups: 3
  maxGroups: 2
`),
			wantErr: []string{"spec.placement.spreadConstraints[0]", "minGroups must be less than or equal to maxGroups"},
		},
		{
			name: "negative minGroups",
			manifest: ppWithPlacement(`
spreadConstraints:
- spreadByField: cluster
  minGroups: -1
`),
			wantErr: []string{"spec.placement.spreadConstraints[0].minGroups", "greater than or equal to 0"},
		},
		{
			name: "unknown spreadByField",
			manifest: ppWithPlacement(`
spreadConstraints:
- spreadByField: rack
`),
			wantErr: []string{"spec.placement.spreadConstraints[0].spreadByField", "Unsupported value"},
		},
		{
			name: "region spread without a cluster spread",
			manifest: ppWithPlacement(`
spreadConstraints:
- spreadByField: region
  minGroups: 2
`),
			wantErr: []string{"spec.placement.spreadConstraints", "spreadByField cluster is required"},
		},

		// Placement: cluster affinity.
		{
			name: "clusterAffinity with clusterAffinities",
			manifest: ppWithPlacement(`
clusterAffinity:
  clusterNames: [member1]
clusterAffinities:
- affinityName: primary
  clusterNames: [member2]
`),
			wantErr: []string{"spec.placement", "clusterAffinity and clusterAffinities are exclusive"},
		},
		{
			name: "duplicate affinityName",
			manifest: ppWithPlacement(`
clusterAffinities:
- affinityName: primary
  clusterNames: [member1]
- affinityName: primary
  clusterNames: [member2]
`),
			wantErr: []string{"spec.placement.clusterAffinities", "affinityName must be unique"},
		},
		{
			name: "clusterAffinities term without affinityName",
			manifest: ppWithPlacement(`
clusterAffinities:
- clusterNames: [member1]
`),
			wantErr: []string{"spec.placement.clusterAffinities[0].affinityName", "Required value"},
		},
		{
			name: "overflowAffinities term without affinityName",
			manifest: ppWithPlacement(`
clusterAffinities:
- affinityName: primary
  overflowAffinities:
  - clusterNames: [member2]
`),
			wantErr: []string{"spec.placement.clusterAffinities[0].overflowAffinities[0].affinityName", "Required value"},
		},
		{
			name: "fieldSelector on an unknown key",
			manifest: ppWithPlacement(`
clusterAffinity:
  fieldSelector:
    matchExpressions:
    - {key: name, operator: In, values: [member1]}
`),
			wantErr: []string{"spec.placement.clusterAffinity.fieldSelector.matchExpressions", "key must be one of provider, region, zone"},
		},
		{
			name: "fieldSelector with Exists",
			manifest: ppWithPlacement(`
clusterAffinity:
  fieldSelector:
    matchExpressions:
    - {key: zone, operator: Exists}
`),
			wantErr: []string{"spec.placement.clusterAffinity.fieldSelector.matchExpressions", "operator must be In or NotIn"},
		},
		{
			name: "workloadAffinity without groupByLabelKey",
			manifest: ppWithPlacement(`
workloadAffinity:
  antiAffinity: {}
`),
			wantErr: []string{"spec.placement.workloadAffinity.antiAffinity.groupByLabelKey", "Required value"},
		},
		{
			name: "ClusterPropagationPolicy shares the placement rules",
			manifest: `
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterPropagationPolicy
metadata:
  name: crds
spec:
  resourceSelectors:
  - apiVersion: apiextensions.k8s.io/v1
    kind: CustomResourceDefinition
  placement:
    replicaScheduling:
      replicaSchedulingType: Divided
`,
			wantErr: []string{"spec.placement.replicaScheduling", "replicaDivisionPreference is required"},
		},

		// Override rules.
		{
			name: "plaintext path without leading slash",
			manifest: opWithOverriders(`
plaintext:
- path: spec/replicas
  operator: replace
  value: 2
`),
			wantErr: []string{"spec.overrideRules[0].overriders.plaintext[0].path", "should match '^/'"},
		},
		{
			name: "plaintext unknown operator",
			manifest: opWithOverriders(`
plaintext:
- path: /spec/replicas
  operator: move
  value: 2
`),
			wantErr: []string{"spec.overrideRules[0].overriders.plaintext[0].operator", "Unsupported value"},
		},
		{
			name: "imageOverrider unknown component",
			manifest: opWithOverriders(`
imageOverrider:
- component: Digest
  operator: replace
  value: sha256:abc
`),
			wantErr: []string{"spec.overrideRules[0].overriders.imageOverrider[0].component", "Unsupported value"},
		},
		{
			name: "imageOverrider predicate path without leading slash",
			manifest: opWithOverriders(`
imageOverrider:
- predicate:
    path: spec/template/spec/containers/0/image
  component: Tag
  operator: replace
  value: v2
`),
			wantErr: []string{"spec.overrideRules[0].overriders.imageOverrider[0].predicate.path", "should match '^/'"},
		},
		{
			name: "commandOverrider replace",
			manifest: opWithOverriders(`
commandOverrider:
- containerName: nginx
  operator: replace
  value: [nginx]
`),
			wantErr: []string{"spec.overrideRules[0].overriders.commandOverrider[0].operator", "Unsupported value"},
		},
		{
			name: "argsOverrider without containerName",
			manifest: opWithOverriders(`
argsOverrider:
- operator: add
  value: [--v=2]
`),
			wantErr: []string{"spec.overrideRules[0].overriders.argsOverrider[0].containerName", "Required value"},
		},
		{
			name: "labelsOverrider without value",
			manifest: opWithOverriders(`
labelsOverrider:
- operator: add
`),
			wantErr: []string{"spec.overrideRules[0].overriders.labelsOverrider[0].value", "Required value"},
		},
		{
			name: "fieldOverrider fieldPath without leading slash",
			manifest: opWithOverriders(`
fieldOverrider:
- fieldPath: data/config.yaml
  yaml:
  - subPath: /a
    operator: remove
`),
			wantErr: []string{"spec.overrideRules[0].overriders.fieldOverrider[0].fieldPath", "should match '^/'"},
		},
		{
			name: "fieldOverrider with json and yaml",
			manifest: opWithOverriders(`
fieldOverrider:
- fieldPath: /data/config
  json:
  - subPath: /a
    operator: remove
  yaml:
  - subPath: /b
    operator: remove
`),
			wantErr: []string{"spec.overrideRules[0].overriders.fieldOverrider[0]", "json and yaml are exclusive"},
		},
		{
			name: "fieldOverrider json subPath without leading slash",
			manifest: opWithOverriders(`
fieldOverrider:
- fieldPath: /data/config.json
  json:
  - subPath: a/b
    operator: remove
`),
			wantErr: []string{"spec.overrideRules[0].overriders.fieldOverrider[0].json[0].subPath", "should match '^/'"},
		},
		{
			name: "fieldOverrider yaml subPath without leading slash",
			manifest: opWithOverriders(`
fieldOverrider:
- fieldPath: /data/config.yaml
  yaml:
  - subPath: a/b
    operator: remove
`),
			wantErr: []string{"spec.overrideRules[0].overriders.fieldOverrider[0].yaml[0].subPath", "should match '^/'"},
		},
		{
			name: "override rule without overriders",
			manifest: `
apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata:
  name: nginx
spec:
  overrideRules:
  - targetCluster:
      clusterNames: [member1]
`,
			wantErr: []string{"spec.overrideRules[0].overriders", "Required value"},
		},
		{
			name: "overrideRules with the deprecated overriders",
			manifest: `
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterOverridePolicy
metadata:
  name: mixed
spec:
  overrideRules:
  - overriders:
      labelsOverrider:
      - operator: add
        value: {a: b}
  overriders:
    labelsOverrider:
    - operator: add
      value: {c: d}
`,
			wantErr: []string{"spec", "overrideRules is exclusive with the deprecated targetCluster and overriders"},
		},
		{
			name: "overrideRules with the deprecated targetCluster",
			manifest: `
apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata:
  name: mixed
spec:
  targetCluster:
    clusterNames: [member1]
  overrideRules:
  - overriders:
      labelsOverrider:
      - operator: add
        value: {a: b}
`,
			wantErr: []string{"spec", "overrideRules is exclusive with the deprecated targetCluster and overriders"},
		},
		{
			name: "override targetCluster fieldSelector on an unknown key",
			manifest: `
apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata:
  name: nginx
spec:
  overrideRules:
  - targetCluster:
      fieldSelector:
        matchExpressions:
        - {key: cloud, operator: In, values: [aws]}
    overriders:
      labelsOverrider:
      - operator: add
        value: {a: b}
`,
			wantErr: []string{"spec.overrideRules[0].targetCluster.fieldSelector.matchExpressions", "key must be one of provider, region, zone"},
		},

		// FederatedResourceQuota.
		{
			name: "FederatedResourceQuota without overall",
			manifest: `
apiVersion: policy.karmada.io/v1alpha1
kind: FederatedResourceQuota
metadata:
  name: team-a
spec:
  staticAssignments:
  - clusterName: member1
    hard: {cpu: "1"}
`,
			wantErr: []string{"spec.overall", "Required value"},
		},
		{
			name: "FederatedResourceQuota static assignment without hard",
			manifest: `
apiVersion: policy.karmada.io/v1alpha1
kind: FederatedResourceQuota
metadata:
  name: team-a
spec:
  overall: {cpu: "1"}
  staticAssignments:
  - clusterName: member1
`,
			wantErr: []string{"spec.staticAssignments[0].hard", "Required value"},
		},
		{
			name: "FederatedResourceQuota with a malformed quantity",
			manifest: `
apiVersion: policy.karmada.io/v1alpha1
kind: FederatedResourceQuota
metadata:
  name: team-a
spec:
  overall: {cpu: "lots"}
`,
			wantErr: []string{"spec.overall.cpu"},
		},

		// ClusterTaintPolicy.
		{
			name: "ClusterTaintPolicy without taints",
			manifest: `
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterTaintPolicy
metadata:
  name: empty
spec:
  addOnConditions:
  - conditionType: Ready
    operator: In
    statusValues: ["False"]
`,
			wantErr: []string{"spec.taints", "Required value"},
		},
		{
			name: "ClusterTaintPolicy with an empty taint list",
			manifest: `
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterTaintPolicy
metadata:
  name: empty
spec:
  taints: []
`,
			wantErr: []string{"spec.taints", "at least 1 items"},
		},
		{
			name: "ClusterTaintPolicy with PreferNoSchedule",
			manifest: `
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterTaintPolicy
metadata:
  name: soft
spec:
  taints:
  - key: example.io/soft
    effect: PreferNoSchedule
`,
			wantErr: []string{"spec.taints[0].effect", "effect must be NoSchedule or NoExecute"},
		},
		{
			name: "ClusterTaintPolicy with an unknown operator",
			manifest: `
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterTaintPolicy
metadata:
  name: exists
spec:
  addOnConditions:
  - conditionType: Ready
    operator: Exists
    statusValues: ["False"]
  taints:
  - key: example.io/x
    effect: NoSchedule
`,
			wantErr: []string{"spec.addOnConditions[0].operator", "operator must be In or NotIn"},
		},
		{
			name: "ClusterTaintPolicy condition without statusValues",
			manifest: `
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterTaintPolicy
metadata:
  name: novalues
spec:
  removeOnConditions:
  - conditionType: Ready
    operator: In
  taints:
  - key: example.io/x
    effect: NoSchedule
`,
			wantErr: []string{"spec.removeOnConditions[0].statusValues", "Required value"},
		},
	})
}
