"""The runtime layer: from an LLMService and its InferenceRuntime to a vendor-neutral pod recipe.

Owns: runtime selection (pinned name or vendor selector), argument and env template rendering, engine
family conventions (vllm, sglang, tgi, llamacpp) and the thin accelerator adapters (nvidia, ascend,
amd, intel-gaudi, cpu) that only translate to Kubernetes fields.

May import: ``noctaya.api``. Must not import: cdk8s, constructs, jsii, kopf, a Kubernetes client,
``noctaya.constructs``, ``noctaya.operator``, ``noctaya.gateway``, ``noctaya.scaler``, ``noctaya.dev``.
"""
