{{- define "noctaya.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{- define "noctaya.gatewayImage" -}}
{{- if .Values.gatewayImage.repository -}}
{{ .Values.gatewayImage.repository }}:{{ .Values.gatewayImage.tag | default .Chart.AppVersion }}
{{- else -}}
{{ include "noctaya.image" . }}
{{- end }}
{{- end }}
