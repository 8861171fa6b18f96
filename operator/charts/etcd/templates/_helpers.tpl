{{/*
etcd.name is the app.kubernetes.io/name label: the chart's name unless
nameOverride.
*/}}
{{- define "etcd.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
etcd.fullname names the StatefulSet and the headless Service: the release name
unless fullnameOverride. It is never shortened, so that the names the operator
expects stay exact; a name too long for the StatefulSet's revision labels is
refused instead.
*/}}
{{- define "etcd.fullname" -}}
{{- $name := default .Release.Name .Values.fullnameOverride }}
{{- if gt (len $name) 52 }}
{{- fail (printf "fullname %q is %d characters long; a StatefulSet name may have at most 52 (set fullnameOverride or a shorter release name)" $name (len $name)) }}
{{- end }}
{{- $name }}
{{- end }}

{{/* etcd.selectorLabels select the members; they never change on upgrade. */}}
{{- define "etcd.selectorLabels" -}}
app.kubernetes.io/name: {{ include "etcd.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
etcd.labels are the labels of every object: the user's labels, then the
standard ones, which win.
*/}}
{{- define "etcd.labels" -}}
{{- $labels := deepCopy (.Values.labels | default dict) }}
{{- $_ := set $labels "app.kubernetes.io/name" (include "etcd.name" .) }}
{{- $_ = set $labels "app.kubernetes.io/instance" .Release.Name }}
{{- $_ = set $labels "app.kubernetes.io/component" "etcd" }}
{{- $_ = set $labels "app.kubernetes.io/part-of" "flotilla" }}
{{- $_ = set $labels "app.kubernetes.io/managed-by" .Release.Service }}
{{- $_ = set $labels "helm.sh/chart" (printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_") }}
{{- toYaml $labels }}
{{- end }}

{{/*
etcd.podLabels are the labels of the pods: those of every object but
helm.sh/chart, so that a new chart version alone restarts no pod.
*/}}
{{- define "etcd.podLabels" -}}
{{- omit (include "etcd.labels" . | fromYaml) "helm.sh/chart" | toYaml }}
{{- end }}

{{/* etcd.podAnnotations are annotations, then podAnnotations, which win. */}}
{{- define "etcd.podAnnotations" -}}
{{- $annotations := deepCopy (.Values.annotations | default dict) }}
{{- range $k, $v := .Values.podAnnotations }}
{{- $_ := set $annotations $k $v }}
{{- end }}
{{- if $annotations }}
{{- toYaml $annotations }}
{{- end }}
{{- end }}

{{/* etcd.certSecret is the name of the Secret with the TLS material. */}}
{{- define "etcd.certSecret" -}}
{{- default (printf "%s-cert" (include "etcd.fullname" .)) .Values.certSecret }}
{{- end }}

{{/*
etcd.replicas validates replicas and returns it: etcd runs 1 or 3 members
here, never an even count (no gain in fault tolerance) nor a count the
bootstrap flags do not describe.
*/}}
{{- define "etcd.replicas" -}}
{{- $r := toString .Values.replicas }}
{{- if not (has $r (list "1" "3")) }}
{{- fail (printf "replicas: etcd runs 1 or 3 members, got %v" .Values.replicas) }}
{{- end }}
{{- $r }}
{{- end }}

{{/*
etcd.memberURL is the DNS name of member $.pod at port $.port:
https://<pod>.<fullname>.<namespace>.svc.<domain>:<port>.
*/}}
{{- define "etcd.memberURL" -}}
{{- printf "https://%s.%s.%s.svc.%s:%v" .pod .fullname .namespace .domain .port }}
{{- end }}

{{/*
etcd.args renders the container args from $.args, a dict of flag name to
value, with $.extra (extraArgs) set over it: a flag given in extraArgs replaces
the chart's value instead of repeating the flag. Leading dashes of a name are
ignored. The args are sorted by name, each "--name=value".
*/}}
{{- define "etcd.args" -}}
{{- $args := .args }}
{{- range $k, $v := .extra }}
{{- $_ := set $args (trimPrefix "-" (trimPrefix "--" $k)) $v }}
{{- end }}
{{- range $name := keys $args | sortAlpha }}
- {{ printf "--%s=%s" $name (include "etcd.flagValue" (get $args $name)) | quote }}
{{- end }}
{{- end }}

{{/*
etcd.flagValue prints one flag value; whole numbers read from YAML (float64)
print without an exponent.
*/}}
{{- define "etcd.flagValue" -}}
{{- if kindIs "invalid" . }}
{{- else if and (kindIs "float64" .) (eq . (floor .)) }}
{{- . | int64 }}
{{- else }}
{{- . }}
{{- end }}
{{- end }}
