{{/*
aggregated-apiserver.name is the app.kubernetes.io/name label: the chart's name unless
nameOverride.
*/}}
{{- define "aggregated-apiserver.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
aggregated-apiserver.fullname names the objects: the release name unless
fullnameOverride. It is never shortened, so that the names the operator
expects stay exact; a name too long for a label or a Service is refused
instead.
*/}}
{{- define "aggregated-apiserver.fullname" -}}
{{- $name := default .Release.Name .Values.fullnameOverride }}
{{- if gt (len $name) 63 }}
{{- fail (printf "fullname %q is %d characters long; names may have at most 63 (set fullnameOverride or a shorter release name)" $name (len $name)) }}
{{- end }}
{{- $name }}
{{- end }}

{{/*
aggregated-apiserver.instance is the name of the Flotilla instance:
instanceName, or the release name without its "-aggregated-apiserver"
suffix, as the operator names releases.
*/}}
{{- define "aggregated-apiserver.instance" -}}
{{- default (trimSuffix "-aggregated-apiserver" .Release.Name) .Values.instanceName }}
{{- end }}

{{/* aggregated-apiserver.selectorLabels select the pods; they never change on upgrade. */}}
{{- define "aggregated-apiserver.selectorLabels" -}}
app.kubernetes.io/name: {{ include "aggregated-apiserver.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
aggregated-apiserver.labels are the labels of every object: the user's labels, then the
standard ones, which win.
*/}}
{{- define "aggregated-apiserver.labels" -}}
{{- $labels := deepCopy (.Values.labels | default dict) }}
{{- $_ := set $labels "app.kubernetes.io/name" (include "aggregated-apiserver.name" .) }}
{{- $_ = set $labels "app.kubernetes.io/instance" .Release.Name }}
{{- $_ = set $labels "app.kubernetes.io/component" "aggregated-apiserver" }}
{{- $_ = set $labels "app.kubernetes.io/part-of" "flotilla" }}
{{- $_ = set $labels "app.kubernetes.io/managed-by" .Release.Service }}
{{- $_ = set $labels "helm.sh/chart" (printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_") }}
{{- toYaml $labels }}
{{- end }}

{{/*
aggregated-apiserver.podLabels are the labels of the pods: those of every object but
helm.sh/chart, so that a new chart version alone restarts no pod.
*/}}
{{- define "aggregated-apiserver.podLabels" -}}
{{- omit (include "aggregated-apiserver.labels" . | fromYaml) "helm.sh/chart" | toYaml }}
{{- end }}

{{/* aggregated-apiserver.podAnnotations are annotations, then podAnnotations, which win. */}}
{{- define "aggregated-apiserver.podAnnotations" -}}
{{- $annotations := deepCopy (.Values.annotations | default dict) }}
{{- range $k, $v := .Values.podAnnotations }}
{{- $_ := set $annotations $k $v }}
{{- end }}
{{- if $annotations }}
{{- toYaml $annotations }}
{{- end }}
{{- end }}

{{/*
aggregated-apiserver.featureGates renders a dict of gate to bool as the value of
--feature-gates: "A=true,B=false", sorted.
*/}}
{{- define "aggregated-apiserver.featureGates" -}}
{{- $gates := list }}
{{- range $name := keys . | sortAlpha }}
{{- $gates = append $gates (printf "%s=%v" $name (get $ $name)) }}
{{- end }}
{{- join "," $gates }}
{{- end }}

{{/*
aggregated-apiserver.args renders the container args from $.args, a dict of flag name to
value, with $.extra (extraArgs) set over it: a flag given in extraArgs replaces
the chart's value instead of repeating the flag. Leading dashes of a name are
ignored. The args are sorted by name, each "--name=value".
*/}}
{{- define "aggregated-apiserver.args" -}}
{{- $args := .args }}
{{- range $k, $v := .extra }}
{{- $_ := set $args (trimPrefix "-" (trimPrefix "--" $k)) $v }}
{{- end }}
{{- range $name := keys $args | sortAlpha }}
- {{ printf "--%s=%s" $name (include "aggregated-apiserver.flagValue" (get $args $name)) | quote }}
{{- end }}
{{- end }}

{{/*
aggregated-apiserver.flagValue prints one flag value; whole numbers read from YAML
(float64) print without an exponent.
*/}}
{{- define "aggregated-apiserver.flagValue" -}}
{{- if kindIs "invalid" . }}
{{- else if and (kindIs "float64" .) (eq . (floor .)) }}
{{- . | int64 }}
{{- else }}
{{- . }}
{{- end }}
{{- end }}

{{/*
aggregated-apiserver.podSpecCommon renders the pod settings every component shares:
scheduling, priority, pull secrets and the pod's securityContext.
*/}}
{{- define "aggregated-apiserver.podSpecCommon" -}}
# Nothing in the pod talks to the host cluster's API server.
automountServiceAccountToken: false
enableServiceLinks: false
{{- with .Values.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- range . }}
  - name: {{ . }}
  {{- end }}
{{- end }}
{{- with .Values.podSecurityContext }}
securityContext:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/*
aggregated-apiserver.podEnv is the downward API the args refer to: every listener binds
$(POD_IP).
*/}}
{{- define "aggregated-apiserver.podEnv" -}}
- name: POD_NAME
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
- name: POD_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
- name: POD_IP
  valueFrom:
    fieldRef:
      fieldPath: status.podIP
{{- end }}

{{/* aggregated-apiserver.kubeconfigSecret is the name of the Secret with the kubeconfig. */}}
{{- define "aggregated-apiserver.kubeconfigSecret" -}}
{{- default (printf "%s-kubeconfig" (include "aggregated-apiserver.fullname" .)) .Values.kubeconfigSecret }}
{{- end }}

{{/* aggregated-apiserver.certSecret is the name of the Secret with the serving certificate. */}}
{{- define "aggregated-apiserver.certSecret" -}}
{{- default (printf "%s-cert" (include "aggregated-apiserver.fullname" .)) .Values.certSecret }}
{{- end }}
