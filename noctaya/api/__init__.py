"""The serving.noctaya.io/v1alpha1 API: pydantic models, typed values and the CRDs made from them.

Owns: LLMService and InferenceRuntime models (every field, default, enum, bound and cross-field rule),
Kubernetes durations and quantities, model source URIs, runtime argument templates, CRD generation
and document validation.

Must not import: anything else of ``noctaya``, kopf, cdk8s, constructs, jsii or a Kubernetes client.
Everything else builds on this package, so it stays pure and fast to import.
"""
