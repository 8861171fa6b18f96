{{/* flotilla-operator.name is the chart's name unless nameOverride. */}}
{{- define "flotilla-operator.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
flotilla-operator.fullname names the objects: fullnameOverride, else the
release name when it contains the chart's name, else
<release>-<chart name>; at most 63 characters.
*/}}
{{- define "flotilla-operator.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := include "flotilla-operator.name" . }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
flotilla-operator.clusterName names the cluster-scoped objects (ClusterRole
and ClusterRoleBinding): <fullname>-<namespace>, so that releases of one
name in two namespaces (flotillactl init's, for one) do not claim the same
objects.
*/}}
{{- define "flotilla-operator.clusterName" -}}
{{- printf "%s-%s" (include "flotilla-operator.fullname" .) .Release.Namespace | trunc 253 | trimSuffix "-" }}
{{- end }}

{{/* flotilla-operator.selectorLabels select the pods; they never change on upgrade. */}}
{{- define "flotilla-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "flotilla-operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
flotilla-operator.labels are the labels of every object: the user's labels,
then the standard ones, which win.
*/}}
{{- define "flotilla-operator.labels" -}}
{{- $labels := deepCopy (.Values.labels | default dict) }}
{{- $_ := set $labels "app.kubernetes.io/name" (include "flotilla-operator.name" .) }}
{{- $_ = set $labels "app.kubernetes.io/instance" .Release.Name }}
{{- $_ = set $labels "app.kubernetes.io/component" "operator" }}
{{- $_ = set $labels "app.kubernetes.io/part-of" "flotilla" }}
{{- $_ = set $labels "app.kubernetes.io/version" (.Chart.AppVersion | toString) }}
{{- $_ = set $labels "app.kubernetes.io/managed-by" .Release.Service }}
{{- $_ = set $labels "helm.sh/chart" (printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_") }}
{{- toYaml $labels }}
{{- end }}

{{/*
flotilla-operator.podLabels are the labels of the pods: those of every
object but helm.sh/chart and the version, so that a new chart alone restarts
no pod.
*/}}
{{- define "flotilla-operator.podLabels" -}}
{{- omit (include "flotilla-operator.labels" . | fromYaml) "helm.sh/chart" "app.kubernetes.io/version" | toYaml }}
{{- end }}

{{/* flotilla-operator.serviceAccountName is the pod's ServiceAccount. */}}
{{- define "flotilla-operator.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "flotilla-operator.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name: name an existing ServiceAccount when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* flotilla-operator.leaderElectionNamespace is where the Lease lives. */}}
{{- define "flotilla-operator.leaderElectionNamespace" -}}
{{- default .Release.Namespace .Values.leaderElection.namespace }}
{{- end }}

{{/*
flotilla-operator.args are the operator's flags: those of config/manager
with the defaults, then the ones values turn on, then extraArgs.
*/}}
{{- define "flotilla-operator.args" -}}
{{- $args := list }}
{{- if .Values.leaderElection.enabled }}
{{- $args = append $args "--leader-elect" }}
{{- end }}
{{- $listen := ternary "$(POD_IP)" "" (.Values.podIPListeners | default false) }}
{{- $args = append $args (printf "--metrics-bind-address=%s:8080" $listen) }}
{{- $args = append $args (printf "--health-probe-bind-address=%s:8081" $listen) }}
{{- if and .Values.leaderElection.enabled .Values.leaderElection.namespace }}
{{- $args = append $args (printf "--leader-elect-resource-namespace=%s" .Values.leaderElection.namespace) }}
{{- end }}
{{- with .Values.watchNamespace }}
{{- $args = append $args (printf "--watch-namespace=%s" .) }}
{{- end }}
{{- if not (kindIs "invalid" .Values.concurrentKarmadaSyncs) }}
{{- if lt (int .Values.concurrentKarmadaSyncs) 1 }}
{{- fail (printf "concurrentKarmadaSyncs: at least 1, got %v" .Values.concurrentKarmadaSyncs) }}
{{- end }}
{{- $args = append $args (printf "--concurrent-karmada-syncs=%d" (int .Values.concurrentKarmadaSyncs)) }}
{{- end }}
{{- range .Values.extraArgs }}
{{- $args = append $args (toString .) }}
{{- end }}
{{- toYaml $args }}
{{- end }}
