#!/usr/bin/env bash
# Regenerate every typed L1 binding in imports/ (shipped as noctaya.imports) with `cdk8s import`, offline,
# from local CRD files only:
#
#   imports/keda        <- scripts/crds/keda-*.yaml        (ScaledObject, TriggerAuthentication; keda.sh/v1alpha1)
#   imports/monitoring  <- scripts/crds/monitoring-*.yaml  (ServiceMonitor, PrometheusRule; monitoring.coreos.com/v1)
#   imports/serving     <- `noctaya crds`                  (LLMService, InferenceRuntime; serving.noctaya.io/v1alpha1)
#
# scripts/crds/ holds the KEDA and Prometheus Operator CRD subsets we write ourselves (the fields Noctaya
# renders, typed as in those projects' references); they are inputs here and schemas for the manifest tests.
# The Kubernetes L1 classes are not generated: cdk8s_plus_28.k8s bundles them.
#
# cdk8s writes `<out>/<reversed group>/`; each module is moved to a short name (the generated code only
# uses relative imports, so it can live anywhere). The CLI is installed into .tools/ (git-ignored through
# node_modules/) at a pinned version on first use. Usage: scripts/imports.sh [keda|monitoring|serving ...]
# (no argument: all of them).
set -euo pipefail
cd "$(dirname "$0")/.."

CDK8S_CLI_VERSION=2.207.60
cli=.tools/node_modules/.bin/cdk8s
if [ ! -x "$cli" ] || ! grep -q "\"version\": \"$CDK8S_CLI_VERSION\"" .tools/node_modules/cdk8s-cli/package.json; then
  npm install --prefix .tools --no-audit --no-fund --silent "cdk8s-cli@$CDK8S_CLI_VERSION"
fi
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20 JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION=1

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

modules=("$@")
[ ${#modules[@]} -gt 0 ] || modules=(keda monitoring serving)

# one multi-document file per API group: cdk8s import makes one module per group and file
join() { for f in "$@"; do echo '---'; cat "$f"; done; }

generate() {  # generate <crd file> <reversed group path> <module name>
  local file=$1 group_path=$2 module=$3
  (cd "$work" && "$OLDPWD/$cli" import "$file" --language python --no-check-upgrade --no-save -o "out-$module" >/dev/null)
  [ -f "$work/out-$module/$group_path/__init__.py" ] || { echo "imports: nothing generated for $module" >&2; exit 1; }
  rm -rf "imports/$module"
  mv "$work/out-$module/$group_path" "imports/$module"
  echo "imports: imports/$module ($(grep -c '^class [A-Z]' "imports/$module/__init__.py") classes)"
}
for module in "${modules[@]}"; do
  case $module in
    keda)
      join scripts/crds/keda-*.yaml > "$work/keda.yaml"
      generate keda.yaml sh/keda keda ;;
    monitoring)
      join scripts/crds/monitoring-*.yaml > "$work/monitoring.yaml"
      generate monitoring.yaml com/coreos/monitoring monitoring ;;
    serving)
      mkdir -p "$work/serving"
      .venv/bin/noctaya crds -o "$work/serving" >/dev/null
      join "$work"/serving/*.yaml > "$work/serving.yaml"
      generate serving.yaml io/noctaya/serving serving ;;
    *) echo "imports: unknown module $module (keda, monitoring, serving)" >&2; exit 2 ;;
  esac
  # import check: the module loads through the package, next to the jsii libraries it extends
  .venv/bin/python -c "import noctaya.imports.$module"
done
