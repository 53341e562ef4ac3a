from __future__ import annotations

from pkgutil import extend_path
__path__ = extend_path(__path__, __name__)

import abc
import builtins
import datetime
import enum
import typing

import jsii
import publication
import typing_extensions

from jsii._type_checking import cached_type_hints, check_type


from ._jsii import *

class _LazyImport:
    def __init__(self, module_name: str) -> None:
        self._module_name = module_name
        self._module: typing.Any = None
    def __getattr__(self, name: str) -> typing.Any:
        if self._module is None:
            import importlib
            self._module = importlib.import_module(self._module_name)
        return getattr(self._module, name)

if typing.TYPE_CHECKING:

    import cdk8s as _cdk8s_d3d9af27
    import constructs as _constructs_77d1e7e8
else:

    _cdk8s_d3d9af27 = _LazyImport("cdk8s")
    _constructs_77d1e7e8 = _LazyImport("constructs")


class PrometheusRule(
    _cdk8s_d3d9af27.ApiObject,
    metaclass=jsii.JSIIMeta,
    jsii_type="comcoreosmonitoring.PrometheusRule",
):
    '''PrometheusRule holds Prometheus alerting and recording rules.

    :schema: PrometheusRule
    '''

    def __init__(
        self,
        scope: "_constructs_77d1e7e8.Construct",
        id: builtins.str,
        *,
        spec: typing.Union["PrometheusRuleSpec", typing.Dict[builtins.str, typing.Any]],
        metadata: typing.Optional[typing.Union["_cdk8s_d3d9af27.ApiObjectMetadata", typing.Dict[builtins.str, typing.Any]]] = None,
    ) -> None:
        '''Defines a "PrometheusRule" API object.

        :param scope: the scope in which to define this object.
        :param id: a scope-local name for the object.
        :param spec: 
        :param metadata: 
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__ec6724b05d6be8a069ac535d8d8d4461a23782e0a344fbd36d14e78cee59a003)
            check_type(argname="argument scope", value=scope, expected_type=type_hints["scope"])
            check_type(argname="argument id", value=id, expected_type=type_hints["id"])
        props = PrometheusRuleProps(spec=spec, metadata=metadata)

        jsii.create(self.__class__, self, [scope, id, props])

    @jsii.member(jsii_name="manifest")
    @builtins.classmethod
    def manifest(
        cls,
        *,
        spec: typing.Union["PrometheusRuleSpec", typing.Dict[builtins.str, typing.Any]],
        metadata: typing.Optional[typing.Union["_cdk8s_d3d9af27.ApiObjectMetadata", typing.Dict[builtins.str, typing.Any]]] = None,
    ) -> typing.Any:
        '''Renders a Kubernetes manifest for "PrometheusRule".

        This can be used to inline resource manifests inside other objects (e.g. as templates).

        :param spec: 
        :param metadata: 
        '''
        props = PrometheusRuleProps(spec=spec, metadata=metadata)

        return typing.cast(typing.Any, jsii.sinvoke(cls, "manifest", [props]))

    @jsii.member(jsii_name="toJson")
    def to_json(self) -> typing.Any:
        '''Renders the object to Kubernetes JSON.'''
        return typing.cast(typing.Any, jsii.invoke(self, "toJson", []))

    @jsii.python.classproperty
    @jsii.member(jsii_name="GVK")
    def GVK(cls) -> "_cdk8s_d3d9af27.GroupVersionKind":
        '''Returns the apiVersion and kind for "PrometheusRule".'''
        return typing.cast("_cdk8s_d3d9af27.GroupVersionKind", jsii.sget(cls, "GVK"))


@jsii.data_type(
    jsii_type="comcoreosmonitoring.PrometheusRuleProps",
    jsii_struct_bases=[],
    name_mapping={"spec": "spec", "metadata": "metadata"},
)
class PrometheusRuleProps:
    def __init__(
        self,
        *,
        spec: typing.Union["PrometheusRuleSpec", typing.Dict[builtins.str, typing.Any]],
        metadata: typing.Optional[typing.Union["_cdk8s_d3d9af27.ApiObjectMetadata", typing.Dict[builtins.str, typing.Any]]] = None,
    ) -> None:
        '''PrometheusRule holds Prometheus alerting and recording rules.

        :param spec: 
        :param metadata: 

        :schema: PrometheusRule
        '''
        if isinstance(spec, dict):
            spec = PrometheusRuleSpec(**spec)
        if isinstance(metadata, dict):
            metadata = _cdk8s_d3d9af27.ApiObjectMetadata(**metadata)
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__e21b7008853c9699b14d4efcceafa6ff9c975095432e2544845140d3312103bd)
            check_type(argname="argument spec", value=spec, expected_type=type_hints["spec"])
            check_type(argname="argument metadata", value=metadata, expected_type=type_hints["metadata"])
        self._values: typing.Dict[builtins.str, typing.Any] = {
            "spec": spec,
        }
        if metadata is not None:
            self._values["metadata"] = metadata

    @builtins.property
    def spec(self) -> "PrometheusRuleSpec":
        '''
        :schema: PrometheusRule#spec
        '''
        result = self._values.get("spec")
        assert result is not None, "Required property 'spec' is missing"
        return typing.cast("PrometheusRuleSpec", result)

    @builtins.property
    def metadata(self) -> typing.Optional["_cdk8s_d3d9af27.ApiObjectMetadata"]:
        '''
        :schema: PrometheusRule#metadata
        '''
        result = self._values.get("metadata")
        return typing.cast(typing.Optional["_cdk8s_d3d9af27.ApiObjectMetadata"], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "PrometheusRuleProps(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.data_type(
    jsii_type="comcoreosmonitoring.PrometheusRuleSpec",
    jsii_struct_bases=[],
    name_mapping={"groups": "groups"},
)
class PrometheusRuleSpec:
    def __init__(
        self,
        *,
        groups: typing.Optional[typing.Sequence[typing.Union["PrometheusRuleSpecGroups", typing.Dict[builtins.str, typing.Any]]]] = None,
    ) -> None:
        '''
        :param groups: 

        :schema: PrometheusRuleSpec
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__b7d731a17a6145319669c5ad04bbd6037ce4798b1fc1890c11154acc9d5785cc)
            check_type(argname="argument groups", value=groups, expected_type=type_hints["groups"])
        self._values: typing.Dict[builtins.str, typing.Any] = {}
        if groups is not None:
            self._values["groups"] = groups

    @builtins.property
    def groups(self) -> typing.Optional[typing.List["PrometheusRuleSpecGroups"]]:
        '''
        :schema: PrometheusRuleSpec#groups
        '''
        result = self._values.get("groups")
        return typing.cast(typing.Optional[typing.List["PrometheusRuleSpecGroups"]], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "PrometheusRuleSpec(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.data_type(
    jsii_type="comcoreosmonitoring.PrometheusRuleSpecGroups",
    jsii_struct_bases=[],
    name_mapping={
        "name": "name",
        "interval": "interval",
        "limit": "limit",
        "rules": "rules",
    },
)
class PrometheusRuleSpecGroups:
    def __init__(
        self,
        *,
        name: builtins.str,
        interval: typing.Optional[builtins.str] = None,
        limit: typing.Optional[jsii.Number] = None,
        rules: typing.Optional[typing.Sequence[typing.Union["PrometheusRuleSpecGroupsRules", typing.Dict[builtins.str, typing.Any]]]] = None,
    ) -> None:
        '''
        :param name: 
        :param interval: 
        :param limit: 
        :param rules: 

        :schema: PrometheusRuleSpecGroups
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__98e68b7aa3a9e2ab89ed463a5d6f8881ee6f7e42ab4533bfc91fcfee1f79e104)
            check_type(argname="argument name", value=name, expected_type=type_hints["name"])
            check_type(argname="argument interval", value=interval, expected_type=type_hints["interval"])
            check_type(argname="argument limit", value=limit, expected_type=type_hints["limit"])
            check_type(argname="argument rules", value=rules, expected_type=type_hints["rules"])
        self._values: typing.Dict[builtins.str, typing.Any] = {
            "name": name,
        }
        if interval is not None:
            self._values["interval"] = interval
        if limit is not None:
            self._values["limit"] = limit
        if rules is not None:
            self._values["rules"] = rules

    @builtins.property
    def name(self) -> builtins.str:
        '''
        :schema: PrometheusRuleSpecGroups#name
        '''
        result = self._values.get("name")
        assert result is not None, "Required property 'name' is missing"
        return typing.cast(builtins.str, result)

    @builtins.property
    def interval(self) -> typing.Optional[builtins.str]:
        '''
        :schema: PrometheusRuleSpecGroups#interval
        '''
        result = self._values.get("interval")
        return typing.cast(typing.Optional[builtins.str], result)

    @builtins.property
    def limit(self) -> typing.Optional[jsii.Number]:
        '''
        :schema: PrometheusRuleSpecGroups#limit
        '''
        result = self._values.get("limit")
        return typing.cast(typing.Optional[jsii.Number], result)

    @builtins.property
    def rules(self) -> typing.Optional[typing.List["PrometheusRuleSpecGroupsRules"]]:
        '''
        :schema: PrometheusRuleSpecGroups#rules
        '''
        result = self._values.get("rules")
        return typing.cast(typing.Optional[typing.List["PrometheusRuleSpecGroupsRules"]], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "PrometheusRuleSpecGroups(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.data_type(
    jsii_type="comcoreosmonitoring.PrometheusRuleSpecGroupsRules",
    jsii_struct_bases=[],
    name_mapping={
        "expr": "expr",
        "alert": "alert",
        "annotations": "annotations",
        "for_": "for",
        "keep_firing_for": "keepFiringFor",
        "labels": "labels",
        "record": "record",
    },
)
class PrometheusRuleSpecGroupsRules:
    def __init__(
        self,
        *,
        expr: builtins.str,
        alert: typing.Optional[builtins.str] = None,
        annotations: typing.Optional[typing.Mapping[builtins.str, builtins.str]] = None,
        for_: typing.Optional[builtins.str] = None,
        keep_firing_for: typing.Optional[builtins.str] = None,
        labels: typing.Optional[typing.Mapping[builtins.str, builtins.str]] = None,
        record: typing.Optional[builtins.str] = None,
    ) -> None:
        '''
        :param expr: 
        :param alert: 
        :param annotations: 
        :param for_: 
        :param keep_firing_for: 
        :param labels: 
        :param record: 

        :schema: PrometheusRuleSpecGroupsRules
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__0c1781d51e64e7d339630495159adc2c953dc730d79c53f3189530376fc669b9)
            check_type(argname="argument expr", value=expr, expected_type=type_hints["expr"])
            check_type(argname="argument alert", value=alert, expected_type=type_hints["alert"])
            check_type(argname="argument annotations", value=annotations, expected_type=type_hints["annotations"])
            check_type(argname="argument for_", value=for_, expected_type=type_hints["for_"])
            check_type(argname="argument keep_firing_for", value=keep_firing_for, expected_type=type_hints["keep_firing_for"])
            check_type(argname="argument labels", value=labels, expected_type=type_hints["labels"])
            check_type(argname="argument record", value=record, expected_type=type_hints["record"])
        self._values: typing.Dict[builtins.str, typing.Any] = {
            "expr": expr,
        }
        if alert is not None:
            self._values["alert"] = alert
        if annotations is not None:
            self._values["annotations"] = annotations
        if for_ is not None:
            self._values["for_"] = for_
        if keep_firing_for is not None:
            self._values["keep_firing_for"] = keep_firing_for
        if labels is not None:
            self._values["labels"] = labels
        if record is not None:
            self._values["record"] = record

    @builtins.property
    def expr(self) -> builtins.str:
        '''
        :schema: PrometheusRuleSpecGroupsRules#expr
        '''
        result = self._values.get("expr")
        assert result is not None, "Required property 'expr' is missing"
        return typing.cast(builtins.str, result)

    @builtins.property
    def alert(self) -> typing.Optional[builtins.str]:
        '''
        :schema: PrometheusRuleSpecGroupsRules#alert
        '''
        result = self._values.get("alert")
        return typing.cast(typing.Optional[builtins.str], result)

    @builtins.property
    def annotations(
        self,
    ) -> typing.Optional[typing.Mapping[builtins.str, builtins.str]]:
        '''
        :schema: PrometheusRuleSpecGroupsRules#annotations
        '''
        result = self._values.get("annotations")
        return typing.cast(typing.Optional[typing.Mapping[builtins.str, builtins.str]], result)

    @builtins.property
    def for_(self) -> typing.Optional[builtins.str]:
        '''
        :schema: PrometheusRuleSpecGroupsRules#for
        '''
        result = self._values.get("for_")
        return typing.cast(typing.Optional[builtins.str], result)

    @builtins.property
    def keep_firing_for(self) -> typing.Optional[builtins.str]:
        '''
        :schema: PrometheusRuleSpecGroupsRules#keep_firing_for
        '''
        result = self._values.get("keep_firing_for")
        return typing.cast(typing.Optional[builtins.str], result)

    @builtins.property
    def labels(self) -> typing.Optional[typing.Mapping[builtins.str, builtins.str]]:
        '''
        :schema: PrometheusRuleSpecGroupsRules#labels
        '''
        result = self._values.get("labels")
        return typing.cast(typing.Optional[typing.Mapping[builtins.str, builtins.str]], result)

    @builtins.property
    def record(self) -> typing.Optional[builtins.str]:
        '''
        :schema: PrometheusRuleSpecGroupsRules#record
        '''
        result = self._values.get("record")
        return typing.cast(typing.Optional[builtins.str], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "PrometheusRuleSpecGroupsRules(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


class ServiceMonitor(
    _cdk8s_d3d9af27.ApiObject,
    metaclass=jsii.JSIIMeta,
    jsii_type="comcoreosmonitoring.ServiceMonitor",
):
    '''ServiceMonitor selects Services whose endpoints Prometheus scrapes.

    :schema: ServiceMonitor
    '''

    def __init__(
        self,
        scope: "_constructs_77d1e7e8.Construct",
        id: builtins.str,
        *,
        spec: typing.Union["ServiceMonitorSpec", typing.Dict[builtins.str, typing.Any]],
        metadata: typing.Optional[typing.Union["_cdk8s_d3d9af27.ApiObjectMetadata", typing.Dict[builtins.str, typing.Any]]] = None,
    ) -> None:
        '''Defines a "ServiceMonitor" API object.

        :param scope: the scope in which to define this object.
        :param id: a scope-local name for the object.
        :param spec: 
        :param metadata: 
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__ae743b5825b3e6075ede1500d52f893c3c6a63be14f647f9a44d0e722d356470)
            check_type(argname="argument scope", value=scope, expected_type=type_hints["scope"])
            check_type(argname="argument id", value=id, expected_type=type_hints["id"])
        props = ServiceMonitorProps(spec=spec, metadata=metadata)

        jsii.create(self.__class__, self, [scope, id, props])

    @jsii.member(jsii_name="manifest")
    @builtins.classmethod
    def manifest(
        cls,
        *,
        spec: typing.Union["ServiceMonitorSpec", typing.Dict[builtins.str, typing.Any]],
        metadata: typing.Optional[typing.Union["_cdk8s_d3d9af27.ApiObjectMetadata", typing.Dict[builtins.str, typing.Any]]] = None,
    ) -> typing.Any:
        '''Renders a Kubernetes manifest for "ServiceMonitor".

        This can be used to inline resource manifests inside other objects (e.g. as templates).

        :param spec: 
        :param metadata: 
        '''
        props = ServiceMonitorProps(spec=spec, metadata=metadata)

        return typing.cast(typing.Any, jsii.sinvoke(cls, "manifest", [props]))

    @jsii.member(jsii_name="toJson")
    def to_json(self) -> typing.Any:
        '''Renders the object to Kubernetes JSON.'''
        return typing.cast(typing.Any, jsii.invoke(self, "toJson", []))

    @jsii.python.classproperty
    @jsii.member(jsii_name="GVK")
    def GVK(cls) -> "_cdk8s_d3d9af27.GroupVersionKind":
        '''Returns the apiVersion and kind for "ServiceMonitor".'''
        return typing.cast("_cdk8s_d3d9af27.GroupVersionKind", jsii.sget(cls, "GVK"))


@jsii.data_type(
    jsii_type="comcoreosmonitoring.ServiceMonitorProps",
    jsii_struct_bases=[],
    name_mapping={"spec": "spec", "metadata": "metadata"},
)
class ServiceMonitorProps:
    def __init__(
        self,
        *,
        spec: typing.Union["ServiceMonitorSpec", typing.Dict[builtins.str, typing.Any]],
        metadata: typing.Optional[typing.Union["_cdk8s_d3d9af27.ApiObjectMetadata", typing.Dict[builtins.str, typing.Any]]] = None,
    ) -> None:
        '''ServiceMonitor selects Services whose endpoints Prometheus scrapes.

        :param spec: 
        :param metadata: 

        :schema: ServiceMonitor
        '''
        if isinstance(spec, dict):
            spec = ServiceMonitorSpec(**spec)
        if isinstance(metadata, dict):
            metadata = _cdk8s_d3d9af27.ApiObjectMetadata(**metadata)
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__56bca6778cf6036cd0140b25f1a1429742323914ee819ae9276e47c0e290aaf5)
            check_type(argname="argument spec", value=spec, expected_type=type_hints["spec"])
            check_type(argname="argument metadata", value=metadata, expected_type=type_hints["metadata"])
        self._values: typing.Dict[builtins.str, typing.Any] = {
            "spec": spec,
        }
        if metadata is not None:
            self._values["metadata"] = metadata

    @builtins.property
    def spec(self) -> "ServiceMonitorSpec":
        '''
        :schema: ServiceMonitor#spec
        '''
        result = self._values.get("spec")
        assert result is not None, "Required property 'spec' is missing"
        return typing.cast("ServiceMonitorSpec", result)

    @builtins.property
    def metadata(self) -> typing.Optional["_cdk8s_d3d9af27.ApiObjectMetadata"]:
        '''
        :schema: ServiceMonitor#metadata
        '''
        result = self._values.get("metadata")
        return typing.cast(typing.Optional["_cdk8s_d3d9af27.ApiObjectMetadata"], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "ServiceMonitorProps(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.data_type(
    jsii_type="comcoreosmonitoring.ServiceMonitorSpec",
    jsii_struct_bases=[],
    name_mapping={
        "selector": "selector",
        "endpoints": "endpoints",
        "job_label": "jobLabel",
        "namespace_selector": "namespaceSelector",
        "pod_target_labels": "podTargetLabels",
        "sample_limit": "sampleLimit",
        "target_labels": "targetLabels",
    },
)
class ServiceMonitorSpec:
    def __init__(
        self,
        *,
        selector: typing.Union["ServiceMonitorSpecSelector", typing.Dict[builtins.str, typing.Any]],
        endpoints: typing.Optional[typing.Sequence[typing.Union["ServiceMonitorSpecEndpoints", typing.Dict[builtins.str, typing.Any]]]] = None,
        job_label: typing.Optional[builtins.str] = None,
        namespace_selector: typing.Optional[typing.Union["ServiceMonitorSpecNamespaceSelector", typing.Dict[builtins.str, typing.Any]]] = None,
        pod_target_labels: typing.Optional[typing.Sequence[builtins.str]] = None,
        sample_limit: typing.Optional[jsii.Number] = None,
        target_labels: typing.Optional[typing.Sequence[builtins.str]] = None,
    ) -> None:
        '''
        :param selector: Label selector for the Services to scrape.
        :param endpoints: 
        :param job_label: 
        :param namespace_selector: 
        :param pod_target_labels: 
        :param sample_limit: 
        :param target_labels: 

        :schema: ServiceMonitorSpec
        '''
        if isinstance(selector, dict):
            selector = ServiceMonitorSpecSelector(**selector)
        if isinstance(namespace_selector, dict):
            namespace_selector = ServiceMonitorSpecNamespaceSelector(**namespace_selector)
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__77dad9e9e97980d2d9001de098d81faeb424d5144d09285dc28512f29a3815ba)
            check_type(argname="argument selector", value=selector, expected_type=type_hints["selector"])
            check_type(argname="argument endpoints", value=endpoints, expected_type=type_hints["endpoints"])
            check_type(argname="argument job_label", value=job_label, expected_type=type_hints["job_label"])
            check_type(argname="argument namespace_selector", value=namespace_selector, expected_type=type_hints["namespace_selector"])
            check_type(argname="argument pod_target_labels", value=pod_target_labels, expected_type=type_hints["pod_target_labels"])
            check_type(argname="argument sample_limit", value=sample_limit, expected_type=type_hints["sample_limit"])
            check_type(argname="argument target_labels", value=target_labels, expected_type=type_hints["target_labels"])
        self._values: typing.Dict[builtins.str, typing.Any] = {
            "selector": selector,
        }
        if endpoints is not None:
            self._values["endpoints"] = endpoints
        if job_label is not None:
            self._values["job_label"] = job_label
        if namespace_selector is not None:
            self._values["namespace_selector"] = namespace_selector
        if pod_target_labels is not None:
            self._values["pod_target_labels"] = pod_target_labels
        if sample_limit is not None:
            self._values["sample_limit"] = sample_limit
        if target_labels is not None:
            self._values["target_labels"] = target_labels

    @builtins.property
    def selector(self) -> "ServiceMonitorSpecSelector":
        '''Label selector for the Services to scrape.

        :schema: ServiceMonitorSpec#selector
        '''
        result = self._values.get("selector")
        assert result is not None, "Required property 'selector' is missing"
        return typing.cast("ServiceMonitorSpecSelector", result)

    @builtins.property
    def endpoints(self) -> typing.Optional[typing.List["ServiceMonitorSpecEndpoints"]]:
        '''
        :schema: ServiceMonitorSpec#endpoints
        '''
        result = self._values.get("endpoints")
        return typing.cast(typing.Optional[typing.List["ServiceMonitorSpecEndpoints"]], result)

    @builtins.property
    def job_label(self) -> typing.Optional[builtins.str]:
        '''
        :schema: ServiceMonitorSpec#jobLabel
        '''
        result = self._values.get("job_label")
        return typing.cast(typing.Optional[builtins.str], result)

    @builtins.property
    def namespace_selector(
        self,
    ) -> typing.Optional["ServiceMonitorSpecNamespaceSelector"]:
        '''
        :schema: ServiceMonitorSpec#namespaceSelector
        '''
        result = self._values.get("namespace_selector")
        return typing.cast(typing.Optional["ServiceMonitorSpecNamespaceSelector"], result)

    @builtins.property
    def pod_target_labels(self) -> typing.Optional[typing.List[builtins.str]]:
        '''
        :schema: ServiceMonitorSpec#podTargetLabels
        '''
        result = self._values.get("pod_target_labels")
        return typing.cast(typing.Optional[typing.List[builtins.str]], result)

    @builtins.property
    def sample_limit(self) -> typing.Optional[jsii.Number]:
        '''
        :schema: ServiceMonitorSpec#sampleLimit
        '''
        result = self._values.get("sample_limit")
        return typing.cast(typing.Optional[jsii.Number], result)

    @builtins.property
    def target_labels(self) -> typing.Optional[typing.List[builtins.str]]:
        '''
        :schema: ServiceMonitorSpec#targetLabels
        '''
        result = self._values.get("target_labels")
        return typing.cast(typing.Optional[typing.List[builtins.str]], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "ServiceMonitorSpec(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.data_type(
    jsii_type="comcoreosmonitoring.ServiceMonitorSpecEndpoints",
    jsii_struct_bases=[],
    name_mapping={
        "honor_labels": "honorLabels",
        "honor_timestamps": "honorTimestamps",
        "interval": "interval",
        "metric_relabelings": "metricRelabelings",
        "path": "path",
        "port": "port",
        "relabelings": "relabelings",
        "scheme": "scheme",
        "scrape_timeout": "scrapeTimeout",
    },
)
class ServiceMonitorSpecEndpoints:
    def __init__(
        self,
        *,
        honor_labels: typing.Optional[builtins.bool] = None,
        honor_timestamps: typing.Optional[builtins.bool] = None,
        interval: typing.Optional[builtins.str] = None,
        metric_relabelings: typing.Optional[typing.Sequence[typing.Union["ServiceMonitorSpecEndpointsMetricRelabelings", typing.Dict[builtins.str, typing.Any]]]] = None,
        path: typing.Optional[builtins.str] = None,
        port: typing.Optional[builtins.str] = None,
        relabelings: typing.Optional[typing.Sequence[typing.Union["ServiceMonitorSpecEndpointsRelabelings", typing.Dict[builtins.str, typing.Any]]]] = None,
        scheme: typing.Optional["ServiceMonitorSpecEndpointsScheme"] = None,
        scrape_timeout: typing.Optional[builtins.str] = None,
    ) -> None:
        '''
        :param honor_labels: 
        :param honor_timestamps: 
        :param interval: 
        :param metric_relabelings: 
        :param path: 
        :param port: 
        :param relabelings: 
        :param scheme: 
        :param scrape_timeout: 

        :schema: ServiceMonitorSpecEndpoints
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__0387a341502661c257fa633a8de56a63d951087fafafcbad7e1c75709428ef9f)
            check_type(argname="argument honor_labels", value=honor_labels, expected_type=type_hints["honor_labels"])
            check_type(argname="argument honor_timestamps", value=honor_timestamps, expected_type=type_hints["honor_timestamps"])
            check_type(argname="argument interval", value=interval, expected_type=type_hints["interval"])
            check_type(argname="argument metric_relabelings", value=metric_relabelings, expected_type=type_hints["metric_relabelings"])
            check_type(argname="argument path", value=path, expected_type=type_hints["path"])
            check_type(argname="argument port", value=port, expected_type=type_hints["port"])
            check_type(argname="argument relabelings", value=relabelings, expected_type=type_hints["relabelings"])
            check_type(argname="argument scheme", value=scheme, expected_type=type_hints["scheme"])
            check_type(argname="argument scrape_timeout", value=scrape_timeout, expected_type=type_hints["scrape_timeout"])
        self._values: typing.Dict[builtins.str, typing.Any] = {}
        if honor_labels is not None:
            self._values["honor_labels"] = honor_labels
        if honor_timestamps is not None:
            self._values["honor_timestamps"] = honor_timestamps
        if interval is not None:
            self._values["interval"] = interval
        if metric_relabelings is not None:
            self._values["metric_relabelings"] = metric_relabelings
        if path is not None:
            self._values["path"] = path
        if port is not None:
            self._values["port"] = port
        if relabelings is not None:
            self._values["relabelings"] = relabelings
        if scheme is not None:
            self._values["scheme"] = scheme
        if scrape_timeout is not None:
            self._values["scrape_timeout"] = scrape_timeout

    @builtins.property
    def honor_labels(self) -> typing.Optional[builtins.bool]:
        '''
        :schema: ServiceMonitorSpecEndpoints#honorLabels
        '''
        result = self._values.get("honor_labels")
        return typing.cast(typing.Optional[builtins.bool], result)

    @builtins.property
    def honor_timestamps(self) -> typing.Optional[builtins.bool]:
        '''
        :schema: ServiceMonitorSpecEndpoints#honorTimestamps
        '''
        result = self._values.get("honor_timestamps")
        return typing.cast(typing.Optional[builtins.bool], result)

    @builtins.property
    def interval(self) -> typing.Optional[builtins.str]:
        '''
        :schema: ServiceMonitorSpecEndpoints#interval
        '''
        result = self._values.get("interval")
        return typing.cast(typing.Optional[builtins.str], result)

    @builtins.property
    def metric_relabelings(
        self,
    ) -> typing.Optional[typing.List["ServiceMonitorSpecEndpointsMetricRelabelings"]]:
        '''
        :schema: ServiceMonitorSpecEndpoints#metricRelabelings
        '''
        result = self._values.get("metric_relabelings")
        return typing.cast(typing.Optional[typing.List["ServiceMonitorSpecEndpointsMetricRelabelings"]], result)

    @builtins.property
    def path(self) -> typing.Optional[builtins.str]:
        '''
        :schema: ServiceMonitorSpecEndpoints#path
        '''
        result = self._values.get("path")
        return typing.cast(typing.Optional[builtins.str], result)

    @builtins.property
    def port(self) -> typing.Optional[builtins.str]:
        '''
        :schema: ServiceMonitorSpecEndpoints#port
        '''
        result = self._values.get("port")
        return typing.cast(typing.Optional[builtins.str], result)

    @builtins.property
    def relabelings(
        self,
    ) -> typing.Optional[typing.List["ServiceMonitorSpecEndpointsRelabelings"]]:
        '''
        :schema: ServiceMonitorSpecEndpoints#relabelings
        '''
        result = self._values.get("relabelings")
        return typing.cast(typing.Optional[typing.List["ServiceMonitorSpecEndpointsRelabelings"]], result)

    @builtins.property
    def scheme(self) -> typing.Optional["ServiceMonitorSpecEndpointsScheme"]:
        '''
        :schema: ServiceMonitorSpecEndpoints#scheme
        '''
        result = self._values.get("scheme")
        return typing.cast(typing.Optional["ServiceMonitorSpecEndpointsScheme"], result)

    @builtins.property
    def scrape_timeout(self) -> typing.Optional[builtins.str]:
        '''
        :schema: ServiceMonitorSpecEndpoints#scrapeTimeout
        '''
        result = self._values.get("scrape_timeout")
        return typing.cast(typing.Optional[builtins.str], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "ServiceMonitorSpecEndpoints(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.data_type(
    jsii_type="comcoreosmonitoring.ServiceMonitorSpecEndpointsMetricRelabelings",
    jsii_struct_bases=[],
    name_mapping={
        "action": "action",
        "modulus": "modulus",
        "regex": "regex",
        "replacement": "replacement",
        "separator": "separator",
        "source_labels": "sourceLabels",
        "target_label": "targetLabel",
    },
)
class ServiceMonitorSpecEndpointsMetricRelabelings:
    def __init__(
        self,
        *,
        action: typing.Optional[builtins.str] = None,
        modulus: typing.Optional[jsii.Number] = None,
        regex: typing.Optional[builtins.str] = None,
        replacement: typing.Optional[builtins.str] = None,
        separator: typing.Optional[builtins.str] = None,
        source_labels: typing.Optional[typing.Sequence[builtins.str]] = None,
        target_label: typing.Optional[builtins.str] = None,
    ) -> None:
        '''
        :param action: 
        :param modulus: 
        :param regex: 
        :param replacement: 
        :param separator: 
        :param source_labels: 
        :param target_label: 

        :schema: ServiceMonitorSpecEndpointsMetricRelabelings
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__ecdf834c71cee7105eb773035064fc34b431e349772b048e9be974173861c391)
            check_type(argname="argument action", value=action, expected_type=type_hints["action"])
            check_type(argname="argument modulus", value=modulus, expected_type=type_hints["modulus"])
            check_type(argname="argument regex", value=regex, expected_type=type_hints["regex"])
            check_type(argname="argument replacement", value=replacement, expected_type=type_hints["replacement"])
            check_type(argname="argument separator", value=separator, expected_type=type_hints["separator"])
            check_type(argname="argument source_labels", value=source_labels, expected_type=type_hints["source_labels"])
            check_type(argname="argument target_label", value=target_label, expected_type=type_hints["target_label"])
        self._values: typing.Dict[builtins.str, typing.Any] = {}
        if action is not None:
            self._values["action"] = action
        if modulus is not None:
            self._values["modulus"] = modulus
        if regex is not None:
            self._values["regex"] = regex
        if replacement is not None:
            self._values["replacement"] = replacement
        if separator is not None:
            self._values["separator"] = separator
        if source_labels is not None:
            self._values["source_labels"] = source_labels
        if target_label is not None:
            self._values["target_label"] = target_label

    @builtins.property
    def action(self) -> typing.Optional[builtins.str]:
        '''
        :schema: ServiceMonitorSpecEndpointsMetricRelabelings#action
        '''
        result = self._values.get("action")
        return typing.cast(typing.Optional[builtins.str], result)

    @builtins.property
    def modulus(self) -> typing.Optional[jsii.Number]:
        '''
        :schema: ServiceMonitorSpecEndpointsMetricRelabelings#modulus
        '''
        result = self._values.get("modulus")
        return typing.cast(typing.Optional[jsii.Number], result)

    @builtins.property
    def regex(self) -> typing.Optional[builtins.str]:
        '''
        :schema: ServiceMonitorSpecEndpointsMetricRelabelings#regex
        '''
        result = self._values.get("regex")
        return typing.cast(typing.Optional[builtins.str], result)

    @builtins.property
    def replacement(self) -> typing.Optional[builtins.str]:
        '''
        :schema: ServiceMonitorSpecEndpointsMetricRelabelings#replacement
        '''
        result = self._values.get("replacement")
        return typing.cast(typing.Optional[builtins.str], result)

    @builtins.property
    def separator(self) -> typing.Optional[builtins.str]:
        '''
        :schema: ServiceMonitorSpecEndpointsMetricRelabelings#separator
        '''
        result = self._values.get("separator")
        return typing.cast(typing.Optional[builtins.str], result)

    @builtins.property
    def source_labels(self) -> typing.Optional[typing.List[builtins.str]]:
        '''
        :schema: ServiceMonitorSpecEndpointsMetricRelabelings#sourceLabels
        '''
        result = self._values.get("source_labels")
        return typing.cast(typing.Optional[typing.List[builtins.str]], result)

    @builtins.property
    def target_label(self) -> typing.Optional[builtins.str]:
        '''
        :schema: ServiceMonitorSpecEndpointsMetricRelabelings#targetLabel
        '''
        result = self._values.get("target_label")
        return typing.cast(typing.Optional[builtins.str], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "ServiceMonitorSpecEndpointsMetricRelabelings(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.data_type(
    jsii_type="comcoreosmonitoring.ServiceMonitorSpecEndpointsRelabelings",
    jsii_struct_bases=[],
    name_mapping={
        "action": "action",
        "modulus": "modulus",
        "regex": "regex",
        "replacement": "replacement",
        "separator": "separator",
        "source_labels": "sourceLabels",
        "target_label": "targetLabel",
    },
)
class ServiceMonitorSpecEndpointsRelabelings:
    def __init__(
        self,
        *,
        action: typing.Optional[builtins.str] = None,
        modulus: typing.Optional[jsii.Number] = None,
        regex: typing.Optional[builtins.str] = None,
        replacement: typing.Optional[builtins.str] = None,
        separator: typing.Optional[builtins.str] = None,
        source_labels: typing.Optional[typing.Sequence[builtins.str]] = None,
        target_label: typing.Optional[builtins.str] = None,
    ) -> None:
        '''
        :param action: 
        :param modulus: 
        :param regex: 
        :param replacement: 
        :param separator: 
        :param source_labels: 
        :param target_label: 

        :schema: ServiceMonitorSpecEndpointsRelabelings
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__2635c776631324d4d88ad60676fe0b6bf4e435f64f67f6bd98c0af6e1a54b3d7)
            check_type(argname="argument action", value=action, expected_type=type_hints["action"])
            check_type(argname="argument modulus", value=modulus, expected_type=type_hints["modulus"])
            check_type(argname="argument regex", value=regex, expected_type=type_hints["regex"])
            check_type(argname="argument replacement", value=replacement, expected_type=type_hints["replacement"])
            check_type(argname="argument separator", value=separator, expected_type=type_hints["separator"])
            check_type(argname="argument source_labels", value=source_labels, expected_type=type_hints["source_labels"])
            check_type(argname="argument target_label", value=target_label, expected_type=type_hints["target_label"])
        self._values: typing.Dict[builtins.str, typing.Any] = {}
        if action is not None:
            self._values["action"] = action
        if modulus is not None:
            self._values["modulus"] = modulus
        if regex is not None:
            self._values["regex"] = regex
        if replacement is not None:
            self._values["replacement"] = replacement
        if separator is not None:
            self._values["separator"] = separator
        if source_labels is not None:
            self._values["source_labels"] = source_labels
        if target_label is not None:
            self._values["target_label"] = target_label

    @builtins.property
    def action(self) -> typing.Optional[builtins.str]:
        '''
        :schema: ServiceMonitorSpecEndpointsRelabelings#action
        '''
        result = self._values.get("action")
        return typing.cast(typing.Optional[builtins.str], result)

    @builtins.property
    def modulus(self) -> typing.Optional[jsii.Number]:
        '''
        :schema: ServiceMonitorSpecEndpointsRelabelings#modulus
        '''
        result = self._values.get("modulus")
        return typing.cast(typing.Optional[jsii.Number], result)

    @builtins.property
    def regex(self) -> typing.Optional[builtins.str]:
        '''
        :schema: ServiceMonitorSpecEndpointsRelabelings#regex
        '''
        result = self._values.get("regex")
        return typing.cast(typing.Optional[builtins.str], result)

    @builtins.property
    def replacement(self) -> typing.Optional[builtins.str]:
        '''
        :schema: ServiceMonitorSpecEndpointsRelabelings#replacement
        '''
        result = self._values.get("replacement")
        return typing.cast(typing.Optional[builtins.str], result)

    @builtins.property
    def separator(self) -> typing.Optional[builtins.str]:
        '''
        :schema: ServiceMonitorSpecEndpointsRelabelings#separator
        '''
        result = self._values.get("separator")
        return typing.cast(typing.Optional[builtins.str], result)

    @builtins.property
    def source_labels(self) -> typing.Optional[typing.List[builtins.str]]:
        '''
        :schema: ServiceMonitorSpecEndpointsRelabelings#sourceLabels
        '''
        result = self._values.get("source_labels")
        return typing.cast(typing.Optional[typing.List[builtins.str]], result)

    @builtins.property
    def target_label(self) -> typing.Optional[builtins.str]:
        '''
        :schema: ServiceMonitorSpecEndpointsRelabelings#targetLabel
        '''
        result = self._values.get("target_label")
        return typing.cast(typing.Optional[builtins.str], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "ServiceMonitorSpecEndpointsRelabelings(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.enum(jsii_type="comcoreosmonitoring.ServiceMonitorSpecEndpointsScheme")
class ServiceMonitorSpecEndpointsScheme(enum.Enum):
    '''
    :schema: ServiceMonitorSpecEndpointsScheme
    '''

    HTTP = "HTTP"
    '''http.'''
    HTTPS = "HTTPS"
    '''https.'''


@jsii.data_type(
    jsii_type="comcoreosmonitoring.ServiceMonitorSpecNamespaceSelector",
    jsii_struct_bases=[],
    name_mapping={"any": "any", "match_names": "matchNames"},
)
class ServiceMonitorSpecNamespaceSelector:
    def __init__(
        self,
        *,
        any: typing.Optional[builtins.bool] = None,
        match_names: typing.Optional[typing.Sequence[builtins.str]] = None,
    ) -> None:
        '''
        :param any: 
        :param match_names: 

        :schema: ServiceMonitorSpecNamespaceSelector
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__f3777ad0e448bbe33a35bb765a202fa80d5ee3d0645daad234080935f7a1382a)
            check_type(argname="argument any", value=any, expected_type=type_hints["any"])
            check_type(argname="argument match_names", value=match_names, expected_type=type_hints["match_names"])
        self._values: typing.Dict[builtins.str, typing.Any] = {}
        if any is not None:
            self._values["any"] = any
        if match_names is not None:
            self._values["match_names"] = match_names

    @builtins.property
    def any(self) -> typing.Optional[builtins.bool]:
        '''
        :schema: ServiceMonitorSpecNamespaceSelector#any
        '''
        result = self._values.get("any")
        return typing.cast(typing.Optional[builtins.bool], result)

    @builtins.property
    def match_names(self) -> typing.Optional[typing.List[builtins.str]]:
        '''
        :schema: ServiceMonitorSpecNamespaceSelector#matchNames
        '''
        result = self._values.get("match_names")
        return typing.cast(typing.Optional[typing.List[builtins.str]], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "ServiceMonitorSpecNamespaceSelector(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.data_type(
    jsii_type="comcoreosmonitoring.ServiceMonitorSpecSelector",
    jsii_struct_bases=[],
    name_mapping={
        "match_expressions": "matchExpressions",
        "match_labels": "matchLabels",
    },
)
class ServiceMonitorSpecSelector:
    def __init__(
        self,
        *,
        match_expressions: typing.Optional[typing.Sequence[typing.Union["ServiceMonitorSpecSelectorMatchExpressions", typing.Dict[builtins.str, typing.Any]]]] = None,
        match_labels: typing.Optional[typing.Mapping[builtins.str, builtins.str]] = None,
    ) -> None:
        '''Label selector for the Services to scrape.

        :param match_expressions: 
        :param match_labels: 

        :schema: ServiceMonitorSpecSelector
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__75475617ce7ac77ec0e4c501cb7ce5e19effcb4debd314d1f947679b9fcba6e1)
            check_type(argname="argument match_expressions", value=match_expressions, expected_type=type_hints["match_expressions"])
            check_type(argname="argument match_labels", value=match_labels, expected_type=type_hints["match_labels"])
        self._values: typing.Dict[builtins.str, typing.Any] = {}
        if match_expressions is not None:
            self._values["match_expressions"] = match_expressions
        if match_labels is not None:
            self._values["match_labels"] = match_labels

    @builtins.property
    def match_expressions(
        self,
    ) -> typing.Optional[typing.List["ServiceMonitorSpecSelectorMatchExpressions"]]:
        '''
        :schema: ServiceMonitorSpecSelector#matchExpressions
        '''
        result = self._values.get("match_expressions")
        return typing.cast(typing.Optional[typing.List["ServiceMonitorSpecSelectorMatchExpressions"]], result)

    @builtins.property
    def match_labels(
        self,
    ) -> typing.Optional[typing.Mapping[builtins.str, builtins.str]]:
        '''
        :schema: ServiceMonitorSpecSelector#matchLabels
        '''
        result = self._values.get("match_labels")
        return typing.cast(typing.Optional[typing.Mapping[builtins.str, builtins.str]], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "ServiceMonitorSpecSelector(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.data_type(
    jsii_type="comcoreosmonitoring.ServiceMonitorSpecSelectorMatchExpressions",
    jsii_struct_bases=[],
    name_mapping={"key": "key", "operator": "operator", "values": "values"},
)
class ServiceMonitorSpecSelectorMatchExpressions:
    def __init__(
        self,
        *,
        key: builtins.str,
        operator: builtins.str,
        values: typing.Optional[typing.Sequence[builtins.str]] = None,
    ) -> None:
        '''
        :param key: 
        :param operator: 
        :param values: 

        :schema: ServiceMonitorSpecSelectorMatchExpressions
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__8b17baff1becd42b6823f8a48b1b57fa905d0467e143302eafd1d9d0c098db45)
            check_type(argname="argument key", value=key, expected_type=type_hints["key"])
            check_type(argname="argument operator", value=operator, expected_type=type_hints["operator"])
            check_type(argname="argument values", value=values, expected_type=type_hints["values"])
        self._values: typing.Dict[builtins.str, typing.Any] = {
            "key": key,
            "operator": operator,
        }
        if values is not None:
            self._values["values"] = values

    @builtins.property
    def key(self) -> builtins.str:
        '''
        :schema: ServiceMonitorSpecSelectorMatchExpressions#key
        '''
        result = self._values.get("key")
        assert result is not None, "Required property 'key' is missing"
        return typing.cast(builtins.str, result)

    @builtins.property
    def operator(self) -> builtins.str:
        '''
        :schema: ServiceMonitorSpecSelectorMatchExpressions#operator
        '''
        result = self._values.get("operator")
        assert result is not None, "Required property 'operator' is missing"
        return typing.cast(builtins.str, result)

    @builtins.property
    def values(self) -> typing.Optional[typing.List[builtins.str]]:
        '''
        :schema: ServiceMonitorSpecSelectorMatchExpressions#values
        '''
        result = self._values.get("values")
        return typing.cast(typing.Optional[typing.List[builtins.str]], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "ServiceMonitorSpecSelectorMatchExpressions(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


__all__ = [
    "PrometheusRule",
    "PrometheusRuleProps",
    "PrometheusRuleSpec",
    "PrometheusRuleSpecGroups",
    "PrometheusRuleSpecGroupsRules",
    "ServiceMonitor",
    "ServiceMonitorProps",
    "ServiceMonitorSpec",
    "ServiceMonitorSpecEndpoints",
    "ServiceMonitorSpecEndpointsMetricRelabelings",
    "ServiceMonitorSpecEndpointsRelabelings",
    "ServiceMonitorSpecEndpointsScheme",
    "ServiceMonitorSpecNamespaceSelector",
    "ServiceMonitorSpecSelector",
    "ServiceMonitorSpecSelectorMatchExpressions",
]

publication.publish()

def _typecheckingstub__ec6724b05d6be8a069ac535d8d8d4461a23782e0a344fbd36d14e78cee59a003(
    scope: _constructs_77d1e7e8.Construct,
    id: builtins.str,
    *,
    spec: typing.Union[PrometheusRuleSpec, typing.Dict[builtins.str, typing.Any]],
    metadata: typing.Optional[typing.Union[_cdk8s_d3d9af27.ApiObjectMetadata, typing.Dict[builtins.str, typing.Any]]] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__e21b7008853c9699b14d4efcceafa6ff9c975095432e2544845140d3312103bd(
    *,
    spec: typing.Union[PrometheusRuleSpec, typing.Dict[builtins.str, typing.Any]],
    metadata: typing.Optional[typing.Union[_cdk8s_d3d9af27.ApiObjectMetadata, typing.Dict[builtins.str, typing.Any]]] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__b7d731a17a6145319669c5ad04bbd6037ce4798b1fc1890c11154acc9d5785cc(
    *,
    groups: typing.Optional[typing.Sequence[typing.Union[PrometheusRuleSpecGroups, typing.Dict[builtins.str, typing.Any]]]] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__98e68b7aa3a9e2ab89ed463a5d6f8881ee6f7e42ab4533bfc91fcfee1f79e104(
    *,
    name: builtins.str,
    interval: typing.Optional[builtins.str] = None,
    limit: typing.Optional[jsii.Number] = None,
    rules: typing.Optional[typing.Sequence[typing.Union[PrometheusRuleSpecGroupsRules, typing.Dict[builtins.str, typing.Any]]]] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__0c1781d51e64e7d339630495159adc2c953dc730d79c53f3189530376fc669b9(
    *,
    expr: builtins.str,
    alert: typing.Optional[builtins.str] = None,
    annotations: typing.Optional[typing.Mapping[builtins.str, builtins.str]] = None,
    for_: typing.Optional[builtins.str] = None,
    keep_firing_for: typing.Optional[builtins.str] = None,
    labels: typing.Optional[typing.Mapping[builtins.str, builtins.str]] = None,
    record: typing.Optional[builtins.str] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__ae743b5825b3e6075ede1500d52f893c3c6a63be14f647f9a44d0e722d356470(
    scope: _constructs_77d1e7e8.Construct,
    id: builtins.str,
    *,
    spec: typing.Union[ServiceMonitorSpec, typing.Dict[builtins.str, typing.Any]],
    metadata: typing.Optional[typing.Union[_cdk8s_d3d9af27.ApiObjectMetadata, typing.Dict[builtins.str, typing.Any]]] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__56bca6778cf6036cd0140b25f1a1429742323914ee819ae9276e47c0e290aaf5(
    *,
    spec: typing.Union[ServiceMonitorSpec, typing.Dict[builtins.str, typing.Any]],
    metadata: typing.Optional[typing.Union[_cdk8s_d3d9af27.ApiObjectMetadata, typing.Dict[builtins.str, typing.Any]]] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__77dad9e9e97980d2d9001de098d81faeb424d5144d09285dc28512f29a3815ba(
    *,
    selector: typing.Union[ServiceMonitorSpecSelector, typing.Dict[builtins.str, typing.Any]],
    endpoints: typing.Optional[typing.Sequence[typing.Union[ServiceMonitorSpecEndpoints, typing.Dict[builtins.str, typing.Any]]]] = None,
    job_label: typing.Optional[builtins.str] = None,
    namespace_selector: typing.Optional[typing.Union[ServiceMonitorSpecNamespaceSelector, typing.Dict[builtins.str, typing.Any]]] = None,
    pod_target_labels: typing.Optional[typing.Sequence[builtins.str]] = None,
    sample_limit: typing.Optional[jsii.Number] = None,
    target_labels: typing.Optional[typing.Sequence[builtins.str]] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__0387a341502661c257fa633a8de56a63d951087fafafcbad7e1c75709428ef9f(
    *,
    honor_labels: typing.Optional[builtins.bool] = None,
    honor_timestamps: typing.Optional[builtins.bool] = None,
    interval: typing.Optional[builtins.str] = None,
    metric_relabelings: typing.Optional[typing.Sequence[typing.Union[ServiceMonitorSpecEndpointsMetricRelabelings, typing.Dict[builtins.str, typing.Any]]]] = None,
    path: typing.Optional[builtins.str] = None,
    port: typing.Optional[builtins.str] = None,
    relabelings: typing.Optional[typing.Sequence[typing.Union[ServiceMonitorSpecEndpointsRelabelings, typing.Dict[builtins.str, typing.Any]]]] = None,
    scheme: typing.Optional[ServiceMonitorSpecEndpointsScheme] = None,
    scrape_timeout: typing.Optional[builtins.str] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__ecdf834c71cee7105eb773035064fc34b431e349772b048e9be974173861c391(
    *,
    action: typing.Optional[builtins.str] = None,
    modulus: typing.Optional[jsii.Number] = None,
    regex: typing.Optional[builtins.str] = None,
    replacement: typing.Optional[builtins.str] = None,
    separator: typing.Optional[builtins.str] = None,
    source_labels: typing.Optional[typing.Sequence[builtins.str]] = None,
    target_label: typing.Optional[builtins.str] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__2635c776631324d4d88ad60676fe0b6bf4e435f64f67f6bd98c0af6e1a54b3d7(
    *,
    action: typing.Optional[builtins.str] = None,
    modulus: typing.Optional[jsii.Number] = None,
    regex: typing.Optional[builtins.str] = None,
    replacement: typing.Optional[builtins.str] = None,
    separator: typing.Optional[builtins.str] = None,
    source_labels: typing.Optional[typing.Sequence[builtins.str]] = None,
    target_label: typing.Optional[builtins.str] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__f3777ad0e448bbe33a35bb765a202fa80d5ee3d0645daad234080935f7a1382a(
    *,
    any: typing.Optional[builtins.bool] = None,
    match_names: typing.Optional[typing.Sequence[builtins.str]] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__75475617ce7ac77ec0e4c501cb7ce5e19effcb4debd314d1f947679b9fcba6e1(
    *,
    match_expressions: typing.Optional[typing.Sequence[typing.Union[ServiceMonitorSpecSelectorMatchExpressions, typing.Dict[builtins.str, typing.Any]]]] = None,
    match_labels: typing.Optional[typing.Mapping[builtins.str, builtins.str]] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__8b17baff1becd42b6823f8a48b1b57fa905d0467e143302eafd1d9d0c098db45(
    *,
    key: builtins.str,
    operator: builtins.str,
    values: typing.Optional[typing.Sequence[builtins.str]] = None,
) -> None:
    """Type checking stubs"""
    pass
