# The one image behind every in-cluster role: `noctaya operator`, `noctaya gateway`, `noctaya scaler`,
# and the hub download of prewarm Jobs (the `hub` extra: huggingface_hub and modelscope, so a Job never
# installs anything at run time); every dependency at the version of constraints.txt.
# Node.js is needed by the operator only (jsii runs cdk8s on it); the data-plane roles never load it.
#   docker build -t ghcr.io/noctaya/noctaya:0.1.0 .
FROM docker.io/library/python:3.11-slim-bookworm AS build
WORKDIR /src
COPY . .
RUN pip install --no-cache-dir build==1.2.2 && python -m build --wheel --outdir /wheels .

FROM docker.io/library/python:3.11-slim-bookworm
RUN apt-get update \
 && apt-get install -y --no-install-recommends nodejs \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /wheels /wheels
COPY constraints.txt /wheels/
RUN pip install --no-cache-dir -c /wheels/constraints.txt "$(ls /wheels/noctaya-*.whl)[all,hub]" && rm -rf /wheels
ENV JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20 \
    JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION=1 \
    JSII_SILENCE_WARNING_UNTESTED_NODE_VERSION=1 \
    PYTHONUNBUFFERED=1
# non-root (matches the runAsUser the manifests set)
USER 65532:65532
ENTRYPOINT ["noctaya"]
