{{/* The release's name for its objects, at most 63 characters. */}}
{{- define "steward.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "steward.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "steward.labels" -}}
{{ include "steward.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "steward.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "steward.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "steward.image" -}}
{{ printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end -}}

{{/* One env var from an inline value or a Secret's key; nothing when neither is set. */}}
{{- define "steward.envFrom" -}}
{{- $v := index . 2 -}}
{{- if $v.existingSecret }}
- name: {{ index . 1 }}
  valueFrom:
    secretKeyRef:
      name: {{ $v.existingSecret }}
      key: {{ $v.secretKey }}
{{- else if $v.url }}
- name: {{ index . 1 }}
  value: {{ $v.url | quote }}
{{- end }}
{{- end -}}

{{/* The environment every Steward container of the release gets. */}}
{{- define "steward.env" -}}
{{- include "steward.envFrom" (list . "STEWARD_DATABASE_URL" .Values.database) }}
{{- include "steward.envFrom" (list . "STEWARD_NATS_URL" .Values.nats) }}
{{- if or .Values.nats.url .Values.nats.existingSecret }}
- name: STEWARD_NATS_STREAM_REPLICAS
  value: {{ .Values.nats.streamReplicas | quote }}
{{- end }}
{{- if .Values.apiToken.existingSecret }}
- name: STEWARD_API_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ .Values.apiToken.existingSecret }}
      key: {{ .Values.apiToken.secretKey }}
{{- end }}
{{- with .Values.server.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* The restricted Pod Security Standard, for pods and containers. */}}
{{- define "steward.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
fsGroup: 65532
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{- define "steward.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
capabilities:
  drop: [ALL]
seccompProfile:
  type: RuntimeDefault
{{- end -}}
